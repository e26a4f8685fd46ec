/**
 * An atomic load into a file no other connection has open runs with a rollback journal and goes back to WAL after;
 * with another connection on the file it stays in WAL. Either way a crash midway leaves the file as it was.
 */
import { existsSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';
import { BULK_MIN } from '../src/sqlite/bulk.js';
import { startWorker } from './helpers/spawn.js';
import { tempDir } from './helpers/store.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

/** Wells with points, and the journal mode of `db` seen while the load reads its document `at`. */
function* wells(n: number, db: Database.Database, seen: string[], at = BULK_MIN + 10) {
  for (let i = 0; i < n; i++) {
    if (i === at) seen.push(db.pragma('journal_mode', { simple: true }) as string);
    yield { pwi: `J${i}`, surfaceLoc: { type: 'Point' as const, coordinates: [-100 + (i % 100) / 10, 30 + Math.floor(i / 100) / 100] } };
  }
}

describe('bulk load journal', () => {
  it('alone on the file: a rollback journal during the load, WAL again after it', async () => {
    const store = DataStore.open(dir.file('alone.db'));
    const db = store.dynamic.database;
    const seen: string[] = [];
    const r = await store.load('Well', wells(BULK_MIN + 100, db, seen), { atomic: true, batchSize: 5_000 });
    expect(r).toMatchObject({ success: true, count: BULK_MIN + 100 });
    expect(seen).toEqual(['delete']);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare(`SELECT rtreecheck('rtree._well.surface_loc')`).pluck().get()).toBe('ok');
    // A refused load rolls back and goes back to WAL too.
    const bad = await store.load('Well', [{ pwi: 'J1' }], { atomic: true });
    expect(bad.errors[0]).toMatchObject({ code: 'DUPLICATE_KEY' });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    await store.close();
  });

  it('another connection on the file: the load stays in WAL, and that connection reads the file as it was meanwhile', async () => {
    const file = dir.file('shared.db');
    const store = DataStore.open(file);
    await store.insert('Well', [{ pwi: 'before' }]);
    const other = new Database(file, { readonly: true });
    const count = other.prepare('SELECT count(*) FROM "docs_Well"').pluck();
    expect(count.get()).toBe(1);
    const db = store.dynamic.database;
    const seen: string[] = [];
    const reads: unknown[] = [];
    function* source() {
      for (const d of wells(BULK_MIN + 100, db, seen)) {
        if (d.pwi === `J${BULK_MIN + 50}`) reads.push(count.get());
        yield d;
      }
    }
    const r = await store.load('Well', source(), { atomic: true, batchSize: 5_000 });
    expect(r).toMatchObject({ success: true, count: BULK_MIN + 100 });
    expect(seen).toEqual(['wal']);
    expect(reads).toEqual([1]);
    expect(count.get()).toBe(BULK_MIN + 101);
    other.close();
    await store.close();
  });

  it('a crash in the middle of a load on a rollback journal leaves the file as it was', async () => {
    const file = dir.file('crash.db');
    const seed = DataStore.open(file);
    await seed.insert('Well', [{ pwi: 'kept', surfaceLoc: { type: 'Point', coordinates: [1, 2] } }]);
    await seed.close();
    const size = statSync(file).size;
    const w = await startWorker([file, 'bulk', 'c', '0', '0']);
    // Killed once the load has spilled pages into the file itself, its rollback journal beside it.
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (w.child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`the loader exited early: ${w.lines.join('\n')}`));
        } else if (existsSync(`${file}-journal`) && statSync(file).size > size + 32 * 2 ** 20) {
          clearInterval(timer);
          w.child.kill('SIGKILL');
          resolve();
        }
      }, 20);
    });
    await w.exited;
    expect(existsSync(`${file}-journal`)).toBe(true);
    const store = DataStore.open(file);
    const db = store.dynamic.database;
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect((await store.query('Well', {})).data.map((d) => d.pwi)).toEqual(['kept']);
    expect(db.prepare(`SELECT rtreecheck('rtree._well.surface_loc')`).pluck().get()).toBe('ok');
    expect((await store.query('Well', { surfaceLoc: { bounds: [0, 1, 2, 3] } })).count).toBe(1);
    await store.close();
  }, 120_000);
});
