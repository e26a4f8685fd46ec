import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';
import { tempDir } from './helpers/store.js';
import { killAfterFirstAck, startWorker } from './helpers/spawn.js';

const TRIALS = Number(process.env.CRASH_TRIALS ?? 4);
const BATCH = 50;
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

function check(file: string, acked: number[]) {
  const db = new Database(file, { readonly: false });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const perBatch = new Map<string, number>();
    for (const row of db.prepare(`SELECT json_extract(doc, '$.wellId') AS b, count(*) AS n FROM docs_Well GROUP BY b`).all() as { b: string; n: number }[]) {
      perBatch.set(row.b, row.n);
    }
    for (const b of acked) expect(perBatch.get(`w-${b}`), `acknowledged batch ${b}`).toBe(BATCH);
    for (const [b, n] of perBatch) expect(n, `batch ${b} is whole or absent`).toBe(BATCH);
    // The R*Tree holds exactly the documents' points, at their coordinates (float32, rounded outward).
    const docs = db.prepare(`SELECT rowid AS id, json_extract(doc, '$.surfaceLoc.coordinates[0]') AS x, json_extract(doc, '$.surfaceLoc.coordinates[1]') AS y FROM docs_Well`).all() as { id: number; x: number; y: number }[];
    const tree = new Map((db.prepare('SELECT id, minX, maxX, minY, maxY FROM "rtree._well.surface_loc"').all() as { id: number; minX: number; maxX: number; minY: number; maxY: number }[]).map((r) => [r.id, r]));
    expect(tree.size).toBe(docs.length);
    for (const d of docs) {
      const r = tree.get(d.id)!;
      expect(r.minX <= d.x && d.x <= r.maxX && r.minY <= d.y && d.y <= r.maxY).toBe(true);
    }
  } finally {
    db.close();
  }
}

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
      check(file, acked);
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
