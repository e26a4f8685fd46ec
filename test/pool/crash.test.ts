/** A SIGKILL of the serving process while writes go through the pool: every acknowledged write is there, whole. */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { expectWholeBatches } from '../helpers/crash.js';
import { tempDir } from '../helpers/store.js';
import { bundle, removeBundles, workerScript } from './helpers.js';

const TRIALS = Number(process.env.CRASH_TRIALS ?? 4);
const BATCH = 50;
const dir = tempDir();
let script: string;
let writer: string;
beforeAll(async () => {
  [script, writer] = await Promise.all([workerScript(), bundle('test/pool/fixtures/pool-writer.ts', 'pool-writer')]);
});
afterAll(() => {
  dir.cleanup();
  removeBundles();
});

describe('crash safety through the pool', () => {
  it(`keeps every acknowledged write whole after SIGKILL of the serving process at random moments (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const file = dir.file(`crash-${trial}.db`);
      const child = spawn(process.execPath, [writer, file, script, '100000', String(BATCH)], { stdio: ['ignore', 'pipe', 'pipe'] });
      const lines: string[] = [];
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const parts = buf.split('\n');
        buf = parts.pop()!;
        lines.push(...parts);
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      // Killed a random moment after its first acknowledgement, so the kill lands among writes in flight.
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (lines.some((l) => l.startsWith('ack'))) {
            clearInterval(timer);
            setTimeout(resolve, Math.floor(Math.random() * 600));
          }
        }, 5);
        void exited.then(() => reject(new Error(`the writer exited early:\n${err}`)));
      });
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const acked = lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)));
      expect(acked.length).toBeGreaterThan(0);
      expect(lines.filter((l) => l.startsWith('bad'))).toEqual([]);
      expect(err).toBe('');
      expectWholeBatches(file, acked, BATCH);
      const store = DynamicStore.open(file);
      expect((await store.query('Well', { wellId: `w-${acked[0]}` })).count).toBe(BATCH);
      await store.close();
    }
  });
});
