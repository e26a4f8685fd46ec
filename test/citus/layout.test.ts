/**
 * What only the Citus layout has to get right, on a local cluster (a coordinator and two workers): opening distributes
 * every table itself (idempotent on reopen), dk is filled from pwi and fixes single-shard reads, and a document
 * cannot move to another shard.
 */
import { describe, expect, it } from 'vitest';
import { citusStatements, openPostgres } from '../../src/postgres/index.js';
import { pgCluster, postgresBackend } from '../helpers/backends.js';

postgresBackend();

let schemas = 0;
/** A schema of its own for each test. */
const fresh = () => `c${++schemas}`;

/** Tables of a schema as Citus has them: name → (distribution column, co-location group). */
async function distributed(schema: string): Promise<Map<string, { column: string; group: number }>> {
  const { rows } = await pgCluster().pool.query<{ t: string; col: string; g: number }>(
    `SELECT c.relname AS t, column_to_column_name(p.logicalrelid, p.partkey) AS col, p.colocationid AS g FROM pg_dist_partition p ` +
      `JOIN pg_class c ON c.oid = p.logicalrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`,
    [schema],
  );
  return new Map(rows.map((r) => [r.t, { column: r.col, group: r.g }]));
}

describe('opening with citus: true', () => {
  it('distributes every table by dk, Well-centric types co-located with Well, and opening again changes nothing', async () => {
    const schema = fresh();
    const { pool } = pgCluster();
    const store = await openPostgres(pool, { schema, citus: true });
    await store.close();
    const tables = await distributed(schema);
    expect(tables.size).toBe(citusStatements(schema).length);
    expect([...tables.values()].every((t) => t.column === 'dk')).toBe(true);
    expect(tables.get('docs_DailyProduction')!.group).toBe(tables.get('docs_Well')!.group);
    const again = await openPostgres(pool, { schema, citus: true });
    expect((await again.insert('Well', [{ pwi: 'A' }])).success).toBe(true);
    await again.close();
    expect(await distributed(schema)).toEqual(tables);
  });

  it('two stores opening one new schema at once both open it, distributed once', async () => {
    const schema = fresh();
    const { cluster } = pgCluster();
    const [a, b] = await Promise.all([openPostgres(cluster.url, { schema, citus: true, pool: { max: 1 } }), openPostgres(cluster.url, { schema, citus: true, pool: { max: 1 } })]);
    await Promise.all([a.close(), b.close()]);
    expect((await distributed(schema)).size).toBe(citusStatements(schema).length);
  });

  it('fills dk from pwi, fixes it in queries on pwi, refuses moving a document to another shard, and answers as before', async () => {
    const store = await openPostgres(pgCluster().pool, { schema: fresh(), citus: true });
    try {
      await store.insert('Well', [{ id: 'w1', pwi: 'A' }, { id: 'w2' }]);
      await store.insert('DailyProduction', [{ pwi: 'A', prodDate: '1/1/2024', oilVol: 5 }]);
      const dup = await store.insert('DailyProduction', [{ pwi: 'A', prodDate: '2024-01-01' }]);
      expect(dup.errors).toMatchObject([{ code: 'DUPLICATE_KEY', key: { pwi: 'A', prodDate: '2024-01-01T00:00:00.000Z' } }]);
      const explained = await store.dynamic.explain('DailyProduction', { pwi: 'A' });
      expect(explained.sql).toMatch(/dk = \$\d+::text AND/);
      // One shard: Citus's router plan names a single task.
      expect(explained.plan.join('\n')).toContain('Task Count: 1');
      expect((await store.query('DailyProduction', { pwi: 'A' })).total).toBe(1);
      expect((await store.query('Well', { pwi: { in: ['A', 'B'] } })).data.map((d) => d.id)).toEqual(['w1']);
      const moved = await store.update('Well', { id: 'w1' }, { pwi: 'B' });
      expect(moved.errors[0]).toMatchObject({ code: 'VALIDATION', field: 'pwi' });
      const kept = await store.update('Well', { pwi: 'A' }, { statusCurrent: 'Producing' });
      expect(kept.count).toBe(1);
      const replaced = await store.replace('Well', [{ id: 'w2', pwi: 'C' }]);
      expect(replaced.errors[0]).toMatchObject({ code: 'VALIDATION', field: 'pwi', index: 0 });
    } finally {
      await store.close();
    }
  });
});

describe('writes across shards', () => {
  it('refuses an id that an earlier document of the request took, even for another well (ids are unique per shard only)', async () => {
    const store = await openPostgres(pgCluster().pool, { schema: fresh(), citus: true });
    try {
      const r = await store.insert('Well', [{ id: 'x', pwi: 'A' }, { id: 'x', pwi: 'B' }, { id: 'y', pwi: 'C' }]);
      expect(r.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 1, key: { id: 'x' } }]);
      expect(r.insertedIds).toEqual(['x', 'y']);
      expect((await store.query('Well', {})).data.map((d) => [d.id, d.pwi])).toEqual([
        ['x', 'A'],
        ['y', 'C'],
      ]);
    } finally {
      await store.close();
    }
  });

  it('a load in batches keeps every good document of a batch that met a duplicate, and names its key', async () => {
    const store = await openPostgres(pgCluster().pool, { schema: fresh(), citus: true });
    try {
      await store.insert('Well', [{ pwi: 'W5' }]);
      const wells = Array.from({ length: 40 }, (_, i) => ({ pwi: `W${i}` }));
      const r = await store.load('Well', wells, { batchSize: 16 });
      expect(r.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 5, key: { pwi: 'W5' } }]);
      expect((await store.query('Well', {})).total).toBe(40);
    } finally {
      await store.close();
    }
  });

  it('updates and deletes by a dotted path, across shards and by polygon, and replaces documents of several wells', async () => {
    const store = await openPostgres(pgCluster().pool, { schema: fresh(), citus: true });
    try {
      const at = (x: number, y: number) => ({ type: 'Point' as const, coordinates: [x, y] as [number, number] });
      const { insertedIds } = await store.insert('Well', [
        { pwi: 'A', basinName: 'P', surfaceLoc: at(1, 1) },
        { pwi: 'B', basinName: 'P', surfaceLoc: at(5, 5) },
        { pwi: 'C', basinName: 'Q', surfaceLoc: at(1.5, 1.5) },
      ]);
      expect((await store.update('Well', { basinName: 'P' }, { 'extra.k': 1, statusCurrent: 'Producing' })).count).toBe(2);
      expect((await store.query('Well', { 'extra.k': 1 })).data.map((d) => d.pwi)).toEqual(['A', 'B']);
      const square = [[[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]];
      expect((await store.update('Well', { surfaceLoc: { polygon: square } }, { name: 'in' })).count).toBe(2);
      const replaced = await store.replace('Well', [{ id: insertedIds[0], pwi: 'A', name: 'a', surfaceLoc: at(1, 1) }, { id: insertedIds[1], pwi: 'B', name: 'b' }]);
      expect([replaced.success, replaced.count, replaced.insertedIds]).toEqual([true, 2, []]);
      expect((await store.query('Well', {}, { sortBy: 'pwi' })).data.map((d) => d.name)).toEqual(['a', 'b', 'in']);
      expect((await store.delete('Well', { surfaceLoc: { polygon: square } })).count).toBe(2);
      expect((await store.query('Well', {})).data.map((d) => d.pwi)).toEqual(['B']);
    } finally {
      await store.close();
    }
  });
});
