/** A database that cannot grow: STORE_FULL, nothing written; and new in-memory stores grow as far as memory allows. */
import { describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';

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
