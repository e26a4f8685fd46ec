/**
 * A page and its total: on both backends every page (limit, skip, both, none, past the end) answers the slice of the
 * unpaged answer and every match as `total`. On SQLite a limited first page runs as one statement (the matches found
 * once, counted, only the page's documents read) where the page would evaluate every match anyway and the count would
 * read documents too; a page that walks an index in order, or a count an index answers alone, keeps two statements; and
 * a page ending before its limit needs no count at all.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DataStore, type SqliteDataStore } from '../src/index.js';
import { onePassPays } from '../src/sqlite/plans.js';
import { backends } from './helpers/backends.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

const doc = fc.record(
  {
    fracStages: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
    basinName: fc.constantFrom('Permian', 'Bakken', 'Delaware'),
    name: fc.constantFrom('a', 'b', 'c'),
    surfaceLoc: fc.constantFrom({ type: 'Point', coordinates: [0, 0] }, { type: 'Point', coordinates: [1, 1] }, { type: 'Point', coordinates: [5, 5] }),
    extra: fc.record({ v: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant('s'), fc.constant(null)) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const request = fc.record({
  query: fc.constantFrom({}, { basinName: { ne: 'Bakken' } }, { fracStages: { gte: 1 } }, { surfaceLoc: { bounds: [-1, -1, 2, 2] } }, { name: 'a', basinName: ['Permian', 'Delaware'] }),
  sortBy: fc.constantFrom(undefined, 'fracStages', 'basinName', 'name', 'extra.v'),
  sortOrder: fc.constantFrom(1, -1),
  limit: fc.integer({ min: 0, max: 6 }),
  skip: fc.integer({ min: 0, max: 30 }),
});

describe.each(backends())('pages and totals: $name', (backend) => {
  it(`every page is the slice of the unpaged answer, and total every match (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { maxLength: 25 }), request, async (docs, r) => {
        const store = await backend.open({ indexes: { Well: [{ fields: ['name'] }, { fields: ['basinName'] }] } });
        try {
          expect((await store.dynamic.insert('Well', docs)).success).toBe(true);
          const order = { sortBy: r.sortBy, sortOrder: r.sortOrder };
          const all = await store.dynamic.query('Well', r.query, order);
          const page = await store.dynamic.query('Well', r.query, { ...order, limit: r.limit, skip: r.skip });
          expect(page.success, page.message).toBe(true);
          const ids = all.data.map((d) => d.id);
          expect(page.data.map((d) => d.id)).toEqual(ids.slice(r.skip, r.limit ? r.skip + r.limit : undefined));
          expect(page.total).toBe(ids.length);
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe('one statement for a page and its total (SQLite)', () => {
  const wells = Array.from({ length: 40 }, (_, i) => ({
    pwi: `W${String(i).padStart(2, '0')}`,
    name: `n${i % 7}`,
    basinName: ['Permian', 'Bakken'][i % 2],
    spudDate: new Date(Date.UTC(2020, 0, 1 + i)).toISOString(),
    statusCurrent: i % 3 ? 'Producing' : 'Shut-in',
    fracStages: i % 5,
    surfaceLoc: { type: 'Point' as const, coordinates: [(i % 10) / 10, Math.floor(i / 10) / 10] },
  }));

  async function open(): Promise<SqliteDataStore> {
    const store = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['spudDate'] }, { fields: ['basinName'] }] } });
    await store.insert('Well', wells);
    return store;
  }

  it('runs where both statements would evaluate every match: the same page and total as the two', async () => {
    const store = await open();
    try {
      const cases: [unknown, Record<string, unknown>][] = [
        // The bench's "combined": a box, an equality, a sort the box's order is not: a sorter either way.
        [{ surfaceLoc: { bounds: [0, 0, 0.55, 0.25] }, statusCurrent: 'Producing' }, { sortBy: 'spudDate', sortOrder: -1, limit: 3 }],
        // No sort: the matches are found as a rowid list before the first row.
        [{ fracStages: { gte: 2 } }, { limit: 4, skip: 2 }],
        // A sort on a path into values, no index at all.
        [{ statusCurrent: 'Producing' }, { sortBy: 'extra.v', limit: 5 }],
      ];
      for (const [query, options] of cases) {
        const x = await store.dynamic.explain('Well', query, options);
        const one = (x as { onePass?: { sql: string; params: unknown[] } | null }).onePass;
        expect(one, JSON.stringify(options)).toBeTruthy();
        const rows = store.database.prepare(one!.sql).all(...one!.params) as { d: string; n: number }[];
        const page = store.database.prepare(x.sql).all(...x.params) as { d: string }[];
        expect(rows.map((r) => r.d)).toEqual(page.map((r) => r.d));
        expect(rows[0]!.n).toBe(store.database.prepare(x.countSql).pluck().get(...x.countParams));
        const answer = await store.dynamic.query('Well', query, options);
        expect(answer.data.map((d) => JSON.stringify(d))).toEqual(page.slice(0, options.limit as number).map((r) => JSON.stringify(JSON.parse(r.d))));
        expect(answer.total).toBe(rows[0]!.n);
      }
    } finally {
      store.close();
    }
  });

  it('keeps two statements where the page stops early or an index counts alone, and for pages after a cursor', async () => {
    const store = await open();
    try {
      const onePass = async (query: unknown, options: unknown) => (await store.dynamic.explain('Well', query, options) as unknown as { onePass: unknown }).onePass;
      // The spudDate index walks in order and stops at the limit.
      expect(await onePass({ statusCurrent: 'Producing' }, { sortBy: 'spudDate', limit: 3 })).toBeNull();
      // The basinName index counts its equality alone.
      expect(await onePass({ basinName: 'Permian' }, { sortBy: 'fracStages', limit: 3 })).toBeNull();
      // The name index (a default one) walks in order.
      expect(await onePass({ fracStages: { gte: 2 } }, { sortBy: 'name', limit: 3 })).toBeNull();
      // No condition: the count is the table's.
      expect(await onePass({}, { sortBy: 'fracStages', limit: 3 })).toBeNull();
      // Unlimited: no page to cut.
      expect(await onePass({ fracStages: 1 }, { skip: 3 })).toBeNull();
      const first = await store.query('Well', { fracStages: { gte: 2 } }, { sortBy: 'fracStages', limit: 4 });
      expect(await onePass({ fracStages: { gte: 2 } }, { sortBy: 'fracStages', limit: 4 })).not.toBeNull();
      expect(await onePass({ fracStages: { gte: 2 } }, { sortBy: 'fracStages', limit: 4, cursor: first.cursor })).toBeNull();
    } finally {
      store.close();
    }
  });

  it('answers the total of a page past the end, and of the last page, without the page holding it', async () => {
    const store = await open();
    try {
      const pages: { limit?: number; skip?: number; sortBy?: 'extra.v' }[] = [{ limit: 5, skip: 100 }, { limit: 5, skip: 38 }, { limit: 50 }, { skip: 100 }, { skip: 39 }, { limit: 5, skip: 100, sortBy: 'extra.v' }];
      for (const options of pages) {
        for (const query of [{ fracStages: { gte: 2 } }, { basinName: 'Permian' }, {}]) {
          const all = await store.query('Well', query);
          const page = await store.query('Well', query, options);
          expect(page.total, JSON.stringify([query, options])).toBe(all.total);
          expect(page.data.map((d) => d.id)).toEqual(all.data.map((d) => d.id).slice(options.skip ?? 0, options.limit ? (options.skip ?? 0) + options.limit : undefined).slice(0, page.data.length));
        }
      }
      expect((await store.query('Well', { pwi: 'nope' }, { limit: 5 })).total).toBe(0);
    } finally {
      store.close();
    }
  });

  it('decides from SQLite\'s plans of the page and the count', () => {
    const sorted = ['SEARCH docs_Well USING INTEGER PRIMARY KEY (rowid=?)', 'LIST SUBQUERY 1', 'SCAN rtree._well.surface_loc VIRTUAL TABLE INDEX 2:B0D1B2D3', 'USE TEMP B-TREE FOR ORDER BY'];
    const countReads = ['SEARCH docs_Well USING INTEGER PRIMARY KEY (rowid=?)', 'LIST SUBQUERY 1', 'SCAN rtree._well.surface_loc VIRTUAL TABLE INDEX 2:B0D1B2D3'];
    expect(onePassPays(sorted, countReads, 'docs_Well', false)).toBe(true);
    expect(onePassPays(['SCAN docs_Well USING INDEX ix._well.spud_date'], ['SCAN docs_Well'], 'docs_Well', false)).toBe(false);
    expect(onePassPays(['SCAN docs_Well USING INDEX ix._well.spud_date'], ['SCAN docs_Well'], 'docs_Well', true)).toBe(true);
    expect(onePassPays(sorted, ['SEARCH docs_Well USING COVERING INDEX ix._well.basin_name (<expr>=?)'], 'docs_Well', false)).toBe(false);
    expect(onePassPays(sorted, ['SCAN docs_Well'], 'docs_Well', false)).toBe(true);
    // Another table's scan is not this one's.
    expect(onePassPays(sorted, ['SCAN docs_Wellbore'], 'docs_Well', false)).toBe(false);
  });
});
