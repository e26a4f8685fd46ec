/** A database that cannot grow: STORE_FULL, nothing written; and new in-memory stores grow as far as memory allows. */
import { describe, expect, it } from 'vitest';
import { createFetchHandler } from '../src/http/index.js';
import { DataStore } from '../src/index.js';
import { requestErrorOf as pgRequestErrorOf } from '../src/postgres/backend.js';
import { tempDir } from './helpers/store.js';

const FULL = { code: 'STORE_FULL', message: 'the database is full (no room left on its disk, or at its size limit); nothing was written' };

describe('a file store that cannot grow', () => {
  it('answers STORE_FULL to every write (HTTP 507), writes nothing, keeps its documents, and writes again once it can', async () => {
    const t = tempDir();
    const errors: unknown[] = [];
    const store = DataStore.open(t.file(), { onError: (e) => errors.push(e) });
    try {
      await store.insert('Well', [{ id: 'w1', pwi: 'P1' }, { id: 'w2', pwi: 'P2' }]);
      const before = (await store.query('Well', {})).data;
      const db = store.database;
      // A disk with no room left, as SQLite sees it: the file may not gain a page.
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      const big = 'x'.repeat(1024 * 1024);
      let code: unknown;
      try {
        db.prepare(`INSERT INTO docs_Well (id, doc) VALUES ('raw', jsonb(?))`).run(JSON.stringify({ name: big }));
      } catch (e) {
        code = (e as { code?: unknown }).code;
      }
      expect(code).toBe('SQLITE_FULL');

      // Every write path: one statement, a transaction, an update, the bulk writer of an atomic load and the HTTP adapter.
      expect((await store.insert('Well', [{ id: 'w3', name: big }])).errors).toEqual([FULL]);
      expect((await store.insert('Well', [{ id: 'w4' }, { id: 'w5', name: big }])).errors).toEqual([FULL]);
      expect((await store.replace('Well', [{ id: 'w1', pwi: 'P1', name: big }])).errors).toEqual([FULL]);
      expect((await store.update('Well', { id: 'w2' }, { name: big })).errors).toEqual([FULL]);
      const loaded = await store.load('Well', [{ id: 'w6' }, { id: 'w7', name: big }], { atomic: true });
      expect([loaded.errors, loaded.count]).toEqual([[FULL], 0]);
      const res = await createFetchHandler(store)(
        new Request('http://x/api/data', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', data: [{ id: 'w8', name: big }] }) }),
      );
      expect([res.status, ((await res.json()) as { errors: unknown[] }).errors]).toEqual([507, [FULL]]);

      expect(errors).toEqual([]);
      expect(db.inTransaction).toBe(false);
      expect((await store.query('Well', {})).data).toEqual(before);

      db.pragma('max_page_count = 4294967294');
      expect((await store.insert('Well', [{ id: 'w3', name: big }])).insertedIds).toEqual(['w3']);
      expect((await store.query('Well', {}, { fields: ['id'] })).data).toEqual([{ id: 'w1' }, { id: 'w2' }, { id: 'w3' }]);
    } finally {
      store.close();
      t.cleanup();
    }
  });
});

describe('PostgreSQL errors', () => {
  it('disk_full (53100) is STORE_FULL, a lost connection UNAVAILABLE; out_of_memory (53200) and others stay unexpected', () => {
    expect(pgRequestErrorOf(Object.assign(new Error('could not extend file'), { code: '53100' }))?.errors).toEqual([FULL]);
    expect(pgRequestErrorOf(Object.assign(new Error('out of memory'), { code: '53200' }))).toBeUndefined();
    expect(pgRequestErrorOf(Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }))?.errors[0]?.code).toBe('UNAVAILABLE');
    expect(pgRequestErrorOf(Object.assign(new Error('syntax error'), { code: '42601' }))).toBeUndefined();
    expect(pgRequestErrorOf(Object.assign(new Error('regex too complex'), { code: '2201B' }))?.errors[0]?.code).toBe('INVALID_QUERY');
  });
});

describe('a new in-memory store', () => {
  it('after a first one of its schema grows past 1 GiB: Wells of 10 MiB inserted over 1,000 MiB of data', async () => {
    DataStore.open().close();
    const errors: unknown[] = [];
    const store = DataStore.open(':memory:', { onError: (e) => errors.push(e) });
    try {
      const db = store.database;
      // 1,000 MiB written in one statement (seconds, where as many documents through insert take tens of them).
      db.exec(`CREATE TABLE filler (b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO filler SELECT zeroblob(10485760) FROM n`);
      // One string shared by the documents: each costs its row and its entry in the default name index (~20 MiB).
      const big = 'x'.repeat(10 * 1024 * 1024);
      for (let i = 0; i < 3; i++) {
        const env = await store.insert('Well', [{ id: `w${i}`, name: `${i}${big}` }]);
        expect(env.errors).toEqual([]);
      }
      expect(errors).toEqual([]);
      const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
      expect(bytes).toBeGreaterThan(2 ** 30);
      expect((await store.query('Well', { name: `2${big}` }, { fields: ['id'] })).data).toEqual([{ id: 'w2' }]);
    } finally {
      store.close();
    }
  });
});
