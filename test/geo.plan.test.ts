/**
 * The compiled SQL of a geo query goes through the R*Tree: EXPLAIN QUERY PLAN names the virtual table
 * the field's R*Tree (`rtree.<type>.<field>`, src/sqlite/names.ts) (VIRTUAL TABLE INDEX) and reaches the documents by rowid, not by scanning the table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore, type SqliteDataStore } from '../src/index.js';
import { rtreeTable } from '../src/sqlite/names.js';
import { point, SQUARE } from './helpers/geo.js';

const HOLE = [
  [-101.6, 31.4],
  [-101.4, 31.4],
  [-101.4, 31.6],
  [-101.6, 31.6],
  [-101.6, 31.4],
];

let store: SqliteDataStore;
beforeAll(async () => {
  store = DataStore.open();
  const docs = Array.from({ length: 3000 }, (_, i) => ({
    pwi: `W${i}`,
    basinName: ['Permian', 'Bakken', 'Eagle Ford'][i % 3]!,
    fracStages: i % 40,
    surfaceLoc: point(-110 + (i % 200) * 0.1, 25 + ((i * 7) % 150) * 0.1),
    ...(i % 2 ? { midPointLoc: point(-101.5, 31.5) } : {}),
  }));
  const r = await store.insert('Well', docs);
  expect(r.success, r.message).toBe(true);
});
afterAll(() => store.close());

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

/** The statements the store runs for a query (page and count), from the store itself, and their query plans. */
async function plans(query: unknown, options?: unknown): Promise<{ page: PlanRow[]; count: PlanRow[]; params: unknown[] }> {
  const x = await store.dynamic.explain('Well', query, options);
  const page = store.database.prepare(`EXPLAIN QUERY PLAN ${x.sql}`).all(...x.params) as PlanRow[];
  const count = store.database.prepare(`EXPLAIN QUERY PLAN ${x.countSql}`).all(...x.countParams) as PlanRow[];
  expect(page.map((r) => r.detail)).toEqual(x.plan);
  return { page, count, params: x.countParams };
}

const details = (rows: PlanRow[]) => rows.map((r) => r.detail);

function expectRtree(rows: PlanRow[], field = 'surfaceLoc'): void {
  const text = details(rows).join('\n');
  expect(text).toContain(`${rtreeTable('Well', field)} VIRTUAL TABLE INDEX`);
}

/** The documents table is reached by rowid (the R*Tree's hits), never scanned whole. */
function expectDocsByRowid(rows: PlanRow[]): void {
  const docs = details(rows).filter((d) => /\bdocs_Well\b/.test(d));
  expect(docs.length).toBeGreaterThan(0);
  for (const d of docs) expect(d).toMatch(/^SEARCH docs_Well USING INTEGER PRIMARY KEY \(rowid=\?\)/);
}

describe('EXPLAIN QUERY PLAN of geo queries', () => {
  it('bounds: the R*Tree of surfaceLoc is used, documents are fetched by rowid', async () => {
    const { page, count } = await plans({ surfaceLoc: { bounds: [-102, 31, -101, 32] } });
    expectRtree(page);
    expectDocsByRowid(page);
    expectRtree(count);
    expectDocsByRowid(count);
  });

  it('bounds with the corners given in the other order', async () => {
    const { page, params } = await plans({ surfaceLoc: { bounds: [-101, 32, -102, 31] } });
    expectRtree(page);
    expectDocsByRowid(page);
    // The R*Tree constraints (maxX, minX, maxY, minY) cover the normalised box (possibly widened outward);
    // the exact test then gets the normalised box itself (minX, maxX, minY, maxY).
    const [qMaxX, qMinX, qMaxY, qMinY] = params.slice(0, 4) as number[];
    expect(qMaxX).toBeGreaterThanOrEqual(-101);
    expect(qMinX).toBeLessThanOrEqual(-102);
    expect(qMaxY).toBeGreaterThanOrEqual(32);
    expect(qMinY).toBeLessThanOrEqual(31);
    expect(params.slice(4, 8)).toEqual([-102, -101, 31, 32]);
  });

  it('polygon (with a hole, as GeoJSON too): the R*Tree is used as the prefilter', async () => {
    for (const polygon of [[SQUARE, HOLE], { type: 'Polygon', coordinates: [SQUARE, HOLE] }]) {
      const { page, count } = await plans({ surfaceLoc: { polygon } });
      expectRtree(page);
      expectDocsByRowid(page);
      expectRtree(count);
    }
  });

  it('bounds combined with other conditions, a sort and a page', async () => {
    const { page, count } = await plans(
      { surfaceLoc: { bounds: [-102, 31, -101, 32] }, basinName: 'Permian', fracStages: { gt: 10 } },
      { sortBy: 'fracStages', sortOrder: -1, limit: 10, skip: 5 },
    );
    expectRtree(page);
    expectDocsByRowid(page);
    expectRtree(count);
    expectDocsByRowid(count);
  });

  it('the other GeoPoint fields use their own R*Tree', async () => {
    expectRtree((await plans({ midPointLoc: { bounds: [-102, 31, -101, 32] } })).page, 'midPointLoc');
    expectRtree((await plans({ bottomHoleLoc: { polygon: [SQUARE] } })).page, 'bottomHoleLoc');
  });

  it('two geo conditions on two fields mention both trees', async () => {
    const { page } = await plans({ surfaceLoc: { bounds: [-102, 31, -101, 32] }, midPointLoc: { polygon: [SQUARE] } });
    expectRtree(page, 'surfaceLoc');
    expectRtree(page, 'midPointLoc');
  });

  it('a bounds query on a non-GeoPoint field (ignored) does not touch any R*Tree', async () => {
    const { page } = await plans({ pwi: { bounds: [-102, 31, -101, 32] } });
    expect(details(page).join('\n')).not.toMatch(/rtree\./);
  });

  it('the plan is the one the store runs: the same SQL answers like store.query', async () => {
    const query = { surfaceLoc: { bounds: [-102, 31, -101, 32] }, basinName: 'Permian' };
    const options = { sortBy: 'fracStages', sortOrder: 1, limit: 7, skip: 2 };
    const x = await store.dynamic.explain('Well', query, options);
    // A limited page reads one row past the limit (to know whether a cursor continues it).
    const rows = store.database.prepare(x.sql).all(...x.params) as { d: string }[];
    const direct = rows.slice(0, options.limit).map((r) => JSON.parse(r.d).pwi);
    const viaStore = await store.dynamic.query('Well', query, options);
    expect(viaStore.success, viaStore.message).toBe(true);
    expect(direct.length).toBeGreaterThan(0);
    expect(viaStore.data.map((d) => d.pwi)).toEqual(direct);
    expect(viaStore.total).toBe(store.database.prepare(x.countSql).pluck().get(...x.countParams));
  });
});
