/** A SIGKILL of the serving process while writes go through the pool: every acknowledged write is there, whole. */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
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

/** Integrity, acknowledged batches whole, every batch whole or absent, and the R*Tree exactly the documents' points. */
function check(file: string, acked: number[]): void {
  const db = new Database(file);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const perBatch = new Map<string, number>();
    for (const row of db.prepare(`SELECT json_extract(doc, '$.wellId') AS b, count(*) AS n FROM docs_Well GROUP BY b`).all() as { b: string; n: number }[]) {
      perBatch.set(row.b, row.n);
    }
    for (const b of acked) expect(perBatch.get(`w-${b}`), `acknowledged batch ${b}`).toBe(BATCH);
    for (const [b, n] of perBatch) expect(n, `batch ${b} is whole or absent`).toBe(BATCH);
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
      check(file, acked);
      const store = DynamicStore.open(file);
      expect((await store.query('Well', { wellId: `w-${acked[0]}` })).count).toBe(BATCH);
      await store.close();
    }
  });
});
