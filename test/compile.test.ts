/** compileSelect: the SQL text and parameters the store runs for the key shapes of a query (via explain). */
import { afterAll, describe, expect, it } from 'vitest';
import { DataStore, DataStoreError } from '../src/index.js';

const store = DataStore.open();
afterAll(() => store.close());
const T = '"docs_Well"';
const x = (f: string) => `json_extract(doc, '$."${f}"')`;

describe('compileSelect, as explain shows it', () => {
  it('an equality on an indexed field reads the index directly, in insertion order', async () => {
    const q = await store.dynamic.explain('Well', { pwi: 'W1' });
    expect(q.sql).toBe(`SELECT json(doc) FROM ${T} WHERE ${x('pwi')} = ? ORDER BY rowid`);
    expect(q.params).toEqual(['W1']);
    expect(q.paged).toBe(false);
    expect(q.plan.join('\n')).toMatch(/SEARCH docs_Well USING INDEX ux\._well\.pwi/);
  });

  it('other filters find rowids first, then read documents in rowid order', async () => {
    const q = await store.dynamic.explain('Well', { basinName: 'Permian', fracStages: { gte: 3 } });
    expect(q.sql).toBe(`SELECT json(doc) FROM ${T} WHERE rowid IN (SELECT rowid FROM ${T} WHERE ${x('basinName')} = ? AND ${x('fracStages')} >= ?) ORDER BY rowid`);
    expect(q.params).toEqual(['Permian', 3]);
  });

  it('a later page of a regex with no literal prefix walks the table from the cursor, on an indexed field too', async () => {
    const s = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['name'] }] } });
    await s.insert('Well', [{ name: 'ab' }, { name: 'ac' }, { name: 'b' }]);
    for (const [regex, walks] of [['^(ab|ac)', true], ['^a', false]] as const) {
      const first = await s.dynamic.query('Well', { name: { regex } }, { limit: 1 });
      const q = await s.dynamic.explain('Well', { name: { regex } }, { limit: 1, cursor: first.cursor! });
      // Listing the matches from the cursor on would test every later row on every page: quadratic over a paging.
      expect(q.sql.includes(`FROM ${T} NOT INDEXED WHERE`), regex).toBe(walks);
    }
    s.close();
  });

  it('sorted and paged: ORDER BY the field then rowid, LIMIT/OFFSET bound, and a count statement for total', async () => {
    const q = await store.dynamic.explain('Well', { fracStages: { gt: 3 } }, { sortBy: 'fracStages', sortOrder: -1, limit: 10, skip: 5 });
    // A limited page also reads each row's position (rowid, sort rank and key) and one row more, for the cursor.
    expect(q.sql).toBe(
      `SELECT json(doc) AS d, rowid AS s, (${x('fracStages')} IS NOT NULL) AS r, ${x('fracStages')} AS k FROM ${T} WHERE ${x('fracStages')} > ? ` +
        `ORDER BY ${x('fracStages')} DESC, rowid ASC LIMIT ? OFFSET ?`,
    );
    expect(q.params).toEqual([3, 11, 5]);
    expect(q.paged).toBe(true);
    expect(q.countSql).toBe(`SELECT count(*) FROM ${T} WHERE ${x('fracStages')} > ?`);
    expect(q.countParams).toEqual([3]);
  });

  it('a count without conditions has no WHERE clause, so SQLite takes its fast count path', async () => {
    const q = await store.dynamic.explain('Well', {}, { limit: 10 });
    expect(q.countSql).toBe(`SELECT count(*) FROM ${T}`);
    expect(q.countParams).toEqual([]);
    // SQLite's plan of the count: the smallest index, read whole (no per-row test of a WHERE term).
    const plan = (store.dynamic.database.prepare(`EXPLAIN ${q.countSql}`).all() as { opcode: string }[]).map((r) => r.opcode);
    expect(plan).toContain('Count');
  });

  it('null on a typed field is IS NULL; ne is NULL-safe IS NOT; booleans bind as 1/0', async () => {
    expect((await store.dynamic.explain('Well', { fracStages: null })).sql).toContain(`${x('fracStages')} IS NULL`);
    const ne = await store.dynamic.explain('Well', { basinName: { ne: 'Bakken' }, isVirtual: true });
    expect(ne.sql).toContain(`${x('basinName')} IS NOT ? AND ${x('isVirtual')} = ?`);
    expect(ne.params).toEqual(['Bakken', 1]);
  });

  it('lt/gt null compile to nothing-matches; lte/gte null to IS NULL', async () => {
    expect((await store.dynamic.explain('Well', { fracStages: { gt: null } })).sql).toContain('WHERE 0');
    expect((await store.dynamic.explain('Well', { fracStages: { lte: null } })).sql).toContain(`${x('fracStages')} IS NULL`);
  });

  it('bounds: an R*Tree prefilter widened past float32, then the exact test on the stored doubles', async () => {
    const q = await store.dynamic.explain('Well', { surfaceLoc: { bounds: [-102, 31, -101, 32] } });
    expect(q.sql).toContain(`"docs_Well".rowid IN (SELECT id FROM "rtree._well.surface_loc" WHERE minX <= ? AND maxX >= ? AND minY <= ? AND maxY >= ?)`);
    expect(q.sql).toContain(`json_extract(doc, '$."surfaceLoc"."coordinates"[0]') BETWEEN ? AND ?`);
    const [maxX, minX, maxY, minY, ...exact] = q.params as number[];
    expect(maxX).toBeGreaterThan(-101);
    expect(minX).toBeLessThan(-102);
    expect(maxY).toBeGreaterThan(32);
    expect(minY).toBeLessThan(31);
    expect(exact).toEqual([-102, -101, 31, 32]);
  });

  it('polygon: the R*Tree entries are tested against the polygon on their own boxes before a document is read', async () => {
    const q = await store.dynamic.explain('Well', { surfaceLoc: { polygon: [[[-102, 31], [-101, 31], [-101.5, 32], [-102, 31]]] } });
    expect(q.sql).toContain(`"docs_Well".rowid IN (SELECT id FROM "rtree._well.surface_loc" WHERE minX <= ? AND maxX >= ? AND minY <= ? AND maxY >= ? AND cd_polygon_box(?, minX, maxX, minY, maxY))`);
    expect(q.sql).toContain(`cd_in_polygon(?, json_extract(doc, '$."surfaceLoc"."coordinates"[0]'), json_extract(doc, '$."surfaceLoc"."coordinates"[1]'))`);
    const params = q.params as number[];
    // The same prepared polygon (one handle) serves both tests.
    expect(params[4]).toBe(params[params.length - 1]);
  });

  it('an invalid query throws the DataStoreError of the envelope a query would answer', async () => {
    const error = await store.dynamic.explain('Well', { fracStages: { gt: 'x' } }).catch((e: unknown) => e);
    expect(DataStoreError.is(error)).toBe(true);
    expect((error as DataStoreError).code).toBe('INVALID_QUERY');
  });
});
