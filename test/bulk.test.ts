/**
 * The bulk path: a transaction that inserts more documents of a type than the table held (and at least BULK_MIN)
 * drops the plain indexes and R*Tree insert triggers and rebuilds them before it commits. What must hold: the
 * schema after is the schema before (same objects, same DDL text), queries by index and by geo answer the same as
 * a store filled row by row, duplicates are still found with their positions, and a rollback leaves nothing.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DataStore, type SqliteDataStore } from '../src/index.js';
import { BULK_MIN } from '../src/sqlite/bulk.js';
import { tempDir } from './helpers/store.js';

const N = BULK_MIN + 5_000;
const dir = tempDir();
afterAll(() => dir.cleanup());

function well(i: number) {
  return {
    pwi: `B${String(i).padStart(6, '0')}`,
    name: `Well ${i % 997}`,
    basinName: ['Permian', 'Bakken', 'DJ'][i % 3],
    fracStages: i % 50,
    surfaceLoc: { type: 'Point' as const, coordinates: [-104 + (i % 200) / 50, 29 + Math.floor(i / 200) / 50] },
  };
}

function schemaOf(store: SqliteDataStore): string[] {
  return (store.dynamic.database.prepare(`SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY name`).pluck().all() as string[]);
}

async function answers(store: DataStore) {
  const q = async (query: object, options: object = {}) => {
    const r = await store.dynamic.query('Well', query, { sortBy: 'pwi', ...options });
    return [r.total, r.data.map((d) => d.pwi)];
  };
  return [
    await q({ pwi: 'B012345' }),
    await q({ fracStages: 7 }, { limit: 5 }),
    await q({ surfaceLoc: { bounds: [-103.5, 29.5, -103, 30] } }, { limit: 1000 }),
    await q({ surfaceLoc: { polygon: [[-104, 29], [-101, 29], [-101, 29.2], [-104, 29.2], [-104, 29]] } }, { limit: 10 }),
    await q({ basinName: 'DJ', fracStages: { gte: 45 } }, { limit: 3 }),
    await q({ name: 'Well 12' }, { limit: 4 }),
  ];
}

describe('bulk path', () => {
  it('an insert past the threshold rebuilds indexes and R*Trees: the same schema and the same answers as row by row', async () => {
    const docs = Array.from({ length: N }, (_, i) => well(i));
    // Row by row: the same documents in batches below the threshold, into a table that is never smaller than the batch.
    const slow = DataStore.open(dir.file('rows.db'));
    const seed = await slow.insert('Well', docs.slice(0, 1_000));
    expect(seed.count).toBe(1_000);
    for (let at = 1_000; at < N; at += 1_000) expect((await slow.insert('Well', docs.slice(at, at + 1_000))).count).toBe(Math.min(1_000, N - at));
    const fast = DataStore.open(dir.file('bulk.db'));
    const before = schemaOf(fast);
    const plan = fast.dynamic.database.prepare(`EXPLAIN QUERY PLAN SELECT 1 FROM "docs_Well" WHERE json_extract(doc, '$."name"') = 'x'`);
    const exec = vi.spyOn(fast.dynamic.database, 'exec');
    expect((await fast.insert('Well', docs)).count).toBe(N);
    // The bulk path was taken: the plain indexes and the insert trigger were dropped, and made again.
    const ran = exec.mock.calls.map((c) => c[0]);
    expect(ran.filter((sql) => /^DROP (INDEX|TRIGGER)/.test(sql))).toEqual(expect.arrayContaining(['DROP INDEX "ix._well.name"', 'DROP TRIGGER "rtree._well.surface_loc:ai"']));
    expect(ran.some((sql) => sql.startsWith('CREATE INDEX "ix._well.name"'))).toBe(true);
    expect(schemaOf(fast)).toEqual(before);
    expect(schemaOf(fast)).toEqual(schemaOf(slow));
    expect(await answers(fast)).toEqual(await answers(slow));
    // The rebuilt index is used, and the tree holds every point.
    expect(JSON.stringify(plan.all())).toMatch(/USING (COVERING )?INDEX ix\._well\.name/);
    expect(fast.dynamic.database.prepare(`SELECT count(*) FROM "rtree._well.surface_loc"`).pluck().get()).toBe(N);
    // The triggers are back: later writes keep the tree.
    await fast.insert('Well', [{ ...well(N + 2), surfaceLoc: { type: 'Point', coordinates: [10, 10] } }]);
    expect((await fast.query('Well', { surfaceLoc: { bounds: [9, 9, 11, 11] } })).total).toBe(1);
    // An insert past BULK_MIN into a table that holds more than it inserts keeps its indexes live.
    const small = vi.spyOn(slow.dynamic.database, 'exec');
    expect((await slow.insert('Well', Array.from({ length: BULK_MIN }, (_, i) => well(N + 10 + i)))).count).toBe(BULK_MIN);
    expect(small.mock.calls.filter((c) => c[0].startsWith('DROP'))).toEqual([]);
    await fast.close();
    await slow.close();
  }, 120_000);

  it('a duplicate key is found at the document that brings it, on the bulk path too', async () => {
    const store = DataStore.open(dir.file('dup.db'));
    const docs = Array.from({ length: N }, (_, i) => well(i));
    docs[N - 3] = { ...well(N - 3), pwi: 'B000007' };
    const r = await store.insert('Well', docs);
    expect(r.count).toBe(N - 1);
    expect(r.errors.map((e) => [e.code, e.index])).toEqual([['DUPLICATE_KEY', N - 3]]);
    const atomic = DataStore.open(dir.file('dup-atomic.db'));
    const before = schemaOf(atomic);
    const refused = await atomic.insert('Well', docs, { atomic: true });
    expect(refused).toMatchObject({ success: false, count: 0 });
    expect(refused.errors[0]).toMatchObject({ code: 'DUPLICATE_KEY', index: N - 3 });
    // Rolled back with everything else: the dropped indexes and triggers are there again.
    expect(schemaOf(atomic)).toEqual(before);
    expect((await atomic.query('Well', {}, { limit: 1 })).total).toBe(0);
    await store.close();
    await atomic.close();
  }, 120_000);

  it('an invalid document at the end of a bulk insert writes nothing and names every problem', async () => {
    const store = DataStore.open(dir.file('invalid.db'));
    const before = schemaOf(store);
    const docs: Record<string, unknown>[] = Array.from({ length: N }, (_, i) => well(i));
    docs[N - 1] = { pwi: 'LAST', fracStages: 'many' };
    docs[N - 2] = { pwi: 'NEXT', nope: 1 };
    const r = await store.dynamic.insert('Well', docs);
    expect(r.success).toBe(false);
    expect(r.errors.map((e) => [e.code, e.index])).toEqual([
      ['UNKNOWN_FIELD', N - 2],
      ['VALIDATION', N - 1],
    ]);
    expect(schemaOf(store)).toEqual(before);
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(0);
    await store.close();
  }, 120_000);

  it('an atomic load takes the bulk path; a source that fails after it rolls the rebuild back with the rest', async () => {
    const store = DataStore.open(dir.file('load.db'));
    const before = schemaOf(store);
    function* source(fail: boolean) {
      for (let i = 0; i < N; i++) yield well(i);
      if (fail) throw new Error('cut off');
    }
    await expect(store.load('Well', source(true), { atomic: true, batchSize: 5_000 })).rejects.toThrow('cut off');
    expect(schemaOf(store)).toEqual(before);
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(0);
    const r = await store.load('Well', source(false), { atomic: true, batchSize: 5_000 });
    expect(r).toMatchObject({ success: true, count: N });
    expect(schemaOf(store)).toEqual(before);
    expect((await store.query('Well', { surfaceLoc: { bounds: [-104, 29, -103.98, 29.01] } })).total).toBe(2);
    await store.close();
  }, 120_000);
});
