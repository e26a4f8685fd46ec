import { afterEach, describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';
import { tempDir } from './helpers/store.js';
import { killAfterFirstAck, startWorker } from './helpers/spawn.js';
import { expectWholeBatches } from './helpers/crash.js';

const TRIALS = Number(process.env.CRASH_TRIALS ?? 4);
const BATCH = 50;
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

describe('crash safety', () => {
  it(`keeps every acknowledged batch whole after SIGKILL at random moments (${TRIALS} trials)`, async () => {
    const t = tempDir();
    cleanup.push(t.cleanup);
    for (let trial = 0; trial < TRIALS; trial++) {
      const file = t.file(`crash-${trial}.db`);
      const w = await startWorker([file, 'writer', 'w', '100000', String(BATCH)]);
      await killAfterFirstAck(w, 400);
      const acked = w.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)));
      expect(acked.length).toBeGreaterThan(0);
      expectWholeBatches(file, acked, BATCH);
      // And the library opens it and answers at once.
      const s = DataStore.open(file);
      expect((await s.query('Well', { wellId: 'w-0' })).count).toBe(BATCH);
      s.close();
    }
  });
});

describe('concurrency', () => {
  it('two processes write and read one file at once: no lost write, no busy error, no half-seen request', async () => {
    const t = tempDir();
    cleanup.push(t.cleanup);
    const file = t.file();
    DataStore.open(file).close();
    const batches = 60;
    const size = 20;
    const workers = await Promise.all([
      startWorker([file, 'writer', 'a', String(batches), String(size)]),
      startWorker([file, 'writer', 'b', String(batches), String(size)]),
      startWorker([file, 'reader', 'a', String(batches), String(size)]),
    ]);
    const codes = await Promise.all(workers.map((w) => w.exited));
    expect(codes).toEqual([0, 0, 0]);
    for (const w of workers) {
      expect(w.lines.filter((l) => l.startsWith('stderr') || l.startsWith('bad'))).toEqual([]);
      expect(w.lines.at(-1)).toMatch(/^done \d+ 0$/);
    }
    const s = DataStore.open(file);
    expect((await s.query('Well', {}, { limit: 1 })).total).toBe(2 * batches * size);
    s.close();
  });
});
