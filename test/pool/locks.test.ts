/**
 * Writes through the pool: a lock held by another process delays only them (reads and the event loop go on), and
 * under concurrent writers — in this process and another — each write stays serialised and atomic.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { createPool } from '../../src/pool/pool.js';
import { startWorker } from '../helpers/spawn.js';
import { tempDir } from '../helpers/store.js';
import { removeBundles, until, workerScript } from './helpers.js';

const dir = tempDir();
let script: string;
beforeAll(async () => {
  script = await workerScript();
});
afterAll(() => {
  dir.cleanup();
  removeBundles();
});

/** Another process that takes the file's write lock (BEGIN IMMEDIATE) and holds it until told to commit. */
async function lockHolder(file: string): Promise<{ release: () => void; exited: Promise<number | null> }> {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const Database = require(process.argv[1]);
       const db = new Database(process.argv[2]);
       db.exec('BEGIN IMMEDIATE');
       db.prepare("INSERT INTO docs_Well (id, doc) VALUES ('held', jsonb('{\\"id\\":\\"held\\",\\"pwi\\":\\"HELD\\"}'))").run();
       process.stdout.write('locked\\n');
       process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });`,
      sqlite,
      file,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    void exited.then((code) => reject(new Error(`the lock holder exited with ${code}`)));
  });
  return { release: () => child.stdin.write('go\n'), exited };
}

describe('another process holds the write lock', () => {
  it('delays only writes: reads are answered and the event loop turns meanwhile, and the write completes once the lock is released', async () => {
    const file = dir.file('locked.db');
    const store = DynamicStore.open(file);
    await store.insert('Well', Array.from({ length: 2000 }, (_, i) => ({ pwi: `P${i}`, fracStages: i % 40 })));
    await store.close();
    const pool = await createPool(file, { readers: 1, workerScript: script });
    const holder = await lockHolder(file);
    try {
      let written = false;
      const write = pool.insert('Well', [{ pwi: 'NEW' }]).then((r) => ((written = true), r));
      await until(() => pool.stats().workers.busy > 0, 5000, 'the write to wait for the lock');
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      const reads = [];
      for (let i = 0; i < 20; i++) {
        reads.push(await pool.query('Well', { pwi: `P${i * 7}` }));
        reads.push(await pool.query('Well', { fracStages: { gte: 39 } }, { sortBy: 'pwi', limit: 5 }));
      }
      let streamed = '';
      for await (const chunk of await pool.queryStream('Well', {})) streamed += chunk;
      await new Promise((r) => setTimeout(r, 300));
      clearInterval(timer);
      // All answered while the write still waited; the event loop was never blocked by the wait.
      expect(written).toBe(false);
      expect(reads.every((r) => r.success && r.count > 0)).toBe(true);
      expect(JSON.parse(streamed).count).toBe(2000);
      expect(ticks).toBeGreaterThan(10);
      holder.release();
      const w = await write;
      expect(w.success).toBe(true);
      expect(w.count).toBe(1);
      expect(await holder.exited).toBe(0);
      expect((await pool.query('Well', { pwi: { in: ['NEW', 'HELD'] } })).count).toBe(2);
    } finally {
      holder.release();
      await pool.close();
    }
  });
});

describe('concurrent writers', () => {
  it('writes stay serialised and atomic: batches whole or absent, updates whole, another process writing too', async () => {
    const file = dir.file('concurrent.db');
    DynamicStore.open(file).close();
    const pool = await createPool(file, { readers: 2, workerScript: script, busyTimeoutMs: 10_000 });
    const other = await startWorker([file, 'writer', 'x', '60', '20']);
    const BATCHES = 60;
    const SIZE = 25;
    const partial: string[] = [];
    let reading = true;
    // Readers through the pool: every batch is seen whole or not at all, and an update is seen on all of it or none.
    const readers = Array.from({ length: 3 }, async () => {
      while (reading) {
        const r = await pool.query('Well', { wellId: { regex: '^t-' } });
        expect(r.success).toBe(true);
        const perBatch = new Map<string, Set<unknown>>();
        const counts = new Map<string, number>();
        for (const d of r.data) {
          const b = d.wellId as string;
          counts.set(b, (counts.get(b) ?? 0) + 1);
          if (!perBatch.has(b)) perBatch.set(b, new Set());
          perBatch.get(b)!.add(d.statusCurrent ?? null);
        }
        for (const [b, n] of counts) if (n !== SIZE) partial.push(`${b} seen with ${n} documents`);
        for (const [b, s] of perBatch) if (s.size !== 1) partial.push(`${b} seen half updated`);
      }
    });
    const writes = Array.from({ length: BATCHES }, (_, b) => {
      // Every fifth batch reuses a pwi of batch 0: atomic, so none of it goes in.
      const docs = Array.from({ length: SIZE }, (_, i) => ({ pwi: b % 5 === 4 && i === SIZE - 1 ? 't-0-0' : `t-${b}-${i}`, wellId: `t-${b}` }));
      return pool.insert('Well', docs, { atomic: true });
    });
    const updates = Array.from({ length: BATCHES }, (_, b) => pool.withUser(`u${b}`).update('Well', { wellId: `t-${b}` }, { statusCurrent: `s${b}` }));
    const inserted = await Promise.all(writes);
    const updated = await Promise.all(updates);
    await other.exited;
    reading = false;
    await Promise.all(readers);
    expect(partial).toEqual([]);
    for (const [b, r] of inserted.entries()) {
      if (b % 5 === 4) {
        expect(r.errors[0]!.code, `batch ${b}`).toBe('DUPLICATE_KEY');
        expect(r.count).toBe(0);
      } else expect(r.count, `batch ${b}`).toBe(SIZE);
    }
    // One writer, in the order the writes came: each update found its whole batch (or none, for the refused ones).
    for (const [b, r] of updated.entries()) expect(r.count, `update ${b}`).toBe(b % 5 === 4 ? 0 : SIZE);
    const final = DynamicStore.open(file);
    try {
      const ours = await final.query('Well', { wellId: { regex: '^t-' } });
      expect(ours.count).toBe((BATCHES - BATCHES / 5) * SIZE);
      for (const [b, r] of updated.entries()) {
        if (r.count === 0) continue;
        const docs = ours.data.filter((d) => d.wellId === `t-${b}`);
        expect(docs.every((d) => d.statusCurrent === `s${b}` && d.updatedBy === `u${b}`)).toBe(true);
      }
      expect(other.lines.filter((l) => l.startsWith('stderr') || l.startsWith('bad'))).toEqual([]);
      expect((await final.query('Well', { wellId: { regex: '^x-' } }, { limit: 1 })).total).toBe(60 * 20);
      expect(final.database.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      await final.close();
      await pool.close();
    }
  });
});
