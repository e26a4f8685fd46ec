/**
 * Aggregates, counts and distinct values on both backends: a case table of groups, buckets and metrics; the same
 * groups by hand-written SQL over a plain table of the rows `query()` answers (an independent engine); a property
 * test against a JavaScript reduce over `query()`; paging by cursor; soft delete and geo; refusals by code.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DataStore, DynamicStore } from '../src/index.js';
import { compileSummary } from '../src/sql/aggregate.js';
import { render } from '../src/sql/fragment.js';
import { SQLITE_SUMMARY } from '../src/sqlite/aggregate.js';
import { sqlite as sqliteDialect } from '../src/sqlite/dialect.js';
import { parseCount } from '../src/query/aggregate.js';
import { catalogueOf } from '../src/catalogue/index.js';
import { backends } from './helpers/backends.js';
import { distinctOf } from './helpers/reference.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

/** Daily rows of three wells over a quarter boundary, one soft-deleted later, one row without oil. */
const DAILY = [
  { pwi: 'A', prodDate: '2024-03-30', oilVol: 10, wellCount: 1, extra: { basin: 'Permian' } },
  { pwi: 'A', prodDate: '2024-03-31', oilVol: 12.5, wellCount: 1, extra: { basin: 'Permian' } },
  { pwi: 'A', prodDate: '2024-04-01', oilVol: 11, wellCount: 1, extra: { basin: 'Permian' } },
  { pwi: 'B', prodDate: '2024-03-31', oilVol: 20, wellCount: 2, extra: { basin: 'Bakken' } },
  { pwi: 'B', prodDate: '2024-04-02', oilVol: null, wellCount: 2, extra: { basin: 'Bakken' } },
  { pwi: 'C', prodDate: '2023-12-31', oilVol: 5, extra: { basin: 'Permian' } },
];

/** `extra` of documents whose paths cross arrays at every step: of objects, of scalars, of arrays, empty, missing. */
const NESTED: unknown[] = [
  { a: [{ b: 1 }, { b: [2, 3] }, { b: [[6], 'x'] }, [{ b: 99 }], 7] },
  { a: { b: [4, { c: 1 }, true] } },
  { a: [{ b: null }, { c: 2 }, {}, { b: [] }] },
  { a: [{ b: 5 }, { b: [[7, 8]] }], k: [{ m: [{ n: 1 }, { n: [2] }] }, { m: { n: 3 } }] },
  { a: 'scalar', k: [[{ m: 1 }]] },
  { a: [] },
  {},
];
const NESTED_PATHS = ['extra.a', 'extra.a.b', 'extra.a.b.c', 'extra.k.m.n', 'extra.k.m', 'extra.a.0.b', 'extra.a.b.0', 'extra.k.0.m.n'];

/** Small JSON values with arrays and objects along the members of NESTED_PATHS. */
const NESTED_VALUE: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constantFrom(1, 2, 'x', 'y', true, null), fc.array(tie('value'), { maxLength: 3 }), tie('object')),
  object: fc.record({ a: tie('value'), b: tie('value'), c: tie('value'), k: tie('value'), m: tie('value'), n: tie('value') }, { requiredKeys: [] }),
})).object;

async function seeded(open: () => Promise<DataStore>): Promise<DynamicStore> {
  const store = await open();
  const r = await store.dynamic.insert('DailyProduction', DAILY);
  expect(r.success, r.message).toBe(true);
  return store.dynamic;
}

describe.each(backends())('$name', (backend) => {
  const open = () => backend.open();

  it('groups by a field and a month bucket, with every metric; rows ordered by their keys', async () => {
    const store = await seeded(open);
    const r = await store.aggregate('DailyProduction', {}, {
      groupBy: ['pwi', { field: 'prodDate', interval: 'month' }],
      metrics: { oil: { sum: 'oilVol' }, avg: { avg: 'oilVol' }, lo: { min: 'oilVol' }, last: { max: 'prodDate' }, days: { count: '*' }, withOil: { count: 'oilVol' } },
    });
    expect(r.success, r.message).toBe(true);
    expect(r.data).toEqual([
      { pwi: 'A', prodDate: '2024-03-01T00:00:00.000Z', oil: 22.5, avg: 11.25, lo: 10, last: '2024-03-31T00:00:00.000Z', days: 2, withOil: 2 },
      { pwi: 'A', prodDate: '2024-04-01T00:00:00.000Z', oil: 11, avg: 11, lo: 11, last: '2024-04-01T00:00:00.000Z', days: 1, withOil: 1 },
      { pwi: 'B', prodDate: '2024-03-01T00:00:00.000Z', oil: 20, avg: 20, lo: 20, last: '2024-03-31T00:00:00.000Z', days: 1, withOil: 1 },
      // A group whose values are all null: sum, avg and min are null, as in SQL.
      { pwi: 'B', prodDate: '2024-04-01T00:00:00.000Z', oil: null, avg: null, lo: null, last: '2024-04-02T00:00:00.000Z', days: 1, withOil: 0 },
      { pwi: 'C', prodDate: '2023-12-01T00:00:00.000Z', oil: 5, avg: 5, lo: 5, last: '2023-12-31T00:00:00.000Z', days: 1, withOil: 1 },
    ]);
    expect(r.total).toBe(5);
    expect(r.hasCursor).toBe(false);
  });

  it('buckets by day, week (Monday), quarter and year as the store writes dates', async () => {
    const store = await seeded(open);
    const keys = async (interval: string) =>
      (await store.aggregate('DailyProduction', {}, { groupBy: [{ field: 'prodDate', interval }], metrics: { n: { count: '*' } } })).data.map((d) => [d.prodDate, d.n]);
    expect(await keys('day')).toEqual([
      ['2023-12-31T00:00:00.000Z', 1], ['2024-03-30T00:00:00.000Z', 1], ['2024-03-31T00:00:00.000Z', 2], ['2024-04-01T00:00:00.000Z', 1], ['2024-04-02T00:00:00.000Z', 1],
    ]);
    // 2023-12-31 and 2024-03-31 are Sundays: they close the weeks of Monday 12-25 and Monday 03-25.
    expect(await keys('week')).toEqual([['2023-12-25T00:00:00.000Z', 1], ['2024-03-25T00:00:00.000Z', 3], ['2024-04-01T00:00:00.000Z', 2]]);
    expect(await keys('quarter')).toEqual([['2023-10-01T00:00:00.000Z', 1], ['2024-01-01T00:00:00.000Z', 3], ['2024-04-01T00:00:00.000Z', 2]]);
    expect(await keys('year')).toEqual([['2023-01-01T00:00:00.000Z', 1], ['2024-01-01T00:00:00.000Z', 5]]);
  });

  it('groups by a dotted path, sorts by a metric descending, pages by cursor with the groups as total', async () => {
    const store = await seeded(open);
    const options = { groupBy: ['extra.basin'], metrics: { oil: { sum: 'oilVol' }, wells: { countDistinct: 'pwi' } }, sortBy: 'oil', sortOrder: -1 };
    const all = await store.aggregate('DailyProduction', {}, options);
    expect(all.data).toEqual([
      { 'extra.basin': 'Permian', oil: 38.5, wells: 2 },
      { 'extra.basin': 'Bakken', oil: 20, wells: 1 },
    ]);
    const first = await store.aggregate('DailyProduction', {}, { ...options, limit: 1 });
    expect(first.data).toEqual(all.data.slice(0, 1));
    expect(first.total).toBe(2);
    expect(first.hasCursor).toBe(true);
    const second = await store.aggregate('DailyProduction', {}, { ...options, limit: 1, cursor: first.cursor });
    expect(second.data).toEqual(all.data.slice(1));
    expect(second.hasCursor).toBe(false);
    // Past the end: no rows, the groups still counted.
    const past = await store.aggregate('DailyProduction', {}, { ...options, limit: 5, skip: 9 });
    expect([past.data, past.total]).toEqual([[], 2]);
  });

  it('a cursor of another aggregate is refused, naming the cursor', async () => {
    const store = await seeded(open);
    const first = await store.aggregate('DailyProduction', {}, { groupBy: ['pwi'], limit: 1 });
    const other = await store.aggregate('DailyProduction', {}, { groupBy: ['pwi'], metrics: { n: { count: '*' } }, limit: 1, cursor: first.cursor });
    expect(other.errors.map((e) => [e.code, e.field])).toEqual([['INVALID_REQUEST', 'options.cursor']]);
  });

  it('metrics alone answer one row over every match (SQL without GROUP BY), the query filtering first', async () => {
    const store = await seeded(open);
    const r = await store.aggregate('DailyProduction', { pwi: { in: ['A', 'B'] }, prodDate: { gte: '2024-04-01' } }, { metrics: { oil: { sum: 'oilVol' }, n: { count: '*' } } });
    expect(r.data).toEqual([{ oil: 11, n: 2 }]);
    const none = await store.aggregate('DailyProduction', { pwi: 'Z' }, { metrics: { oil: { sum: 'oilVol' }, n: { count: '*' } } });
    expect(none.data).toEqual([{ oil: null, n: 0 }]);
  });

  it('count and distinct: matches counted; values once each in order, arrays unwound, null and missing left out', async () => {
    const store = await open();
    const inserted = await store.dynamic.insert('Well', [
      { pwi: 'W1', basinName: 'Permian', groups: ['north', 'gas'], lateralLength: 20 },
      { pwi: 'W2', basinName: 'Bakken', groups: ['gas', 'oil'], lateralLength: 12.5 },
      { pwi: 'W3', basinName: null, groups: [], extra: { tier: 2 } },
      { pwi: 'W4', extra: { tier: [1, 'a', true, { k: 1 }] } },
    ]);
    expect(inserted.success, inserted.message).toBe(true);
    const d = store.dynamic;
    expect((await d.count('Well')).total).toBe(4);
    expect((await d.count('Well', { lateralLength: { gte: 15 } })).count).toBe(1);
    expect((await d.distinct('Well', 'basinName')).data).toEqual(['Bakken', 'Permian']);
    expect((await d.distinct('Well', 'lateralLength', { pwi: { ne: 'W1' } })).data).toEqual([12.5]);
    expect((await d.distinct('Well', 'groups')).data).toEqual(['gas', 'north', 'oil']);
    // MongoDB's order of types: numbers, strings, objects, arrays, booleans.
    expect((await d.distinct('Well', 'extra.tier')).data).toEqual([1, 2, 'a', { k: 1 }, true]);
  });

  it('distinct unwinds arrays at every step of the path as MongoDB does; a nested array is one value', async () => {
    const store = await open();
    const r = await store.dynamic.insert('Well', NESTED.map((extra, i) => ({ pwi: `N${i}`, extra })));
    expect(r.success, r.message).toBe(true);
    // The rule itself, stated once by hand: arrays of objects at `extra.a` give each element's `b`, arrays at `b` their
    // elements, an array inside an array one value (leaf) or nothing (before the leaf).
    expect(distinctOf(NESTED.map((extra) => ({ extra })), 'extra.a.b')).toEqual([1, 2, 3, 4, 5, 'x', { c: 1 }, [6], [7, 8], true]);
    for (const path of NESTED_PATHS) {
      const got = await store.dynamic.distinct('Well', path, { pwi: { ne: 'none' } });
      expect(got.success, got.message).toBe(true);
      expect([path, got.data]).toEqual([path, distinctOf(NESTED.map((extra) => ({ extra })), path)]);
    }
  });

  it('property: distinct equals the reference over random nested documents', async () => {
    const store = await open();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(NESTED_VALUE, { maxLength: 6 }), fc.constantFrom(...NESTED_PATHS), async (extras, path) => {
        const type = 'Well';
        await store.dynamic.delete(type, { pwi: { regex: '^P' } });
        if (extras.length) {
          const r = await store.dynamic.insert(type, extras.map((extra) => ({ pwi: `P${n++}`, extra })));
          expect(r.success, r.message).toBe(true);
        }
        const got = await store.dynamic.distinct(type, path);
        expect(got.data).toEqual(distinctOf(extras.map((extra) => ({ extra })), path));
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });

  it('soft-deleted documents count nowhere unless includeDeleted', async () => {
    const store = await backend.open({ softDelete: ['DailyProduction'] });
    await store.dynamic.insert('DailyProduction', DAILY);
    await store.dynamic.delete('DailyProduction', { pwi: 'C' });
    const d = store.dynamic;
    expect((await d.count('DailyProduction')).total).toBe(5);
    expect((await d.count('DailyProduction', {}, { includeDeleted: true })).total).toBe(6);
    expect((await d.distinct('DailyProduction', 'pwi')).data).toEqual(['A', 'B']);
    expect((await d.aggregate('DailyProduction', {}, { groupBy: ['pwi'] })).data).toEqual([{ pwi: 'A' }, { pwi: 'B' }]);
    expect((await d.aggregate('DailyProduction', {}, { groupBy: ['pwi'], includeDeleted: true })).total).toBe(3);
  });

  it('reads includeDeleted as a query does: null is false, anything but a boolean is refused', async () => {
    const store = await backend.open({ softDelete: ['DailyProduction'] });
    await store.dynamic.insert('DailyProduction', DAILY);
    await store.dynamic.delete('DailyProduction', { pwi: 'C' });
    const d = store.dynamic;
    expect((await d.query('DailyProduction', {}, { includeDeleted: null })).total).toBe(5);
    expect((await d.count('DailyProduction', {}, { includeDeleted: null })).total).toBe(5);
    expect((await d.distinct('DailyProduction', 'pwi', {}, { includeDeleted: null })).data).toEqual(['A', 'B']);
    expect((await d.aggregate('DailyProduction', {}, { groupBy: ['pwi'], includeDeleted: null })).data).toEqual([{ pwi: 'A' }, { pwi: 'B' }]);
    for (const answer of [
      await d.query('DailyProduction', {}, { includeDeleted: 1 }),
      await d.count('DailyProduction', {}, { includeDeleted: 1 }),
      await d.distinct('DailyProduction', 'pwi', {}, { includeDeleted: 1 }),
      await d.aggregate('DailyProduction', {}, { groupBy: ['pwi'], includeDeleted: 1 }),
    ]) {
      expect(answer.errors).toEqual([{ code: 'INVALID_REQUEST', field: 'options.includeDeleted', message: 'options.includeDeleted: expected true or false, got 1' }]);
    }
  });

  it('geo queries filter an aggregate: bounds and polygon', async () => {
    const store = await open();
    await store.dynamic.insert('Well', [
      { pwi: 'W1', basinName: 'Permian', fracStages: 10, surfaceLoc: { type: 'Point', coordinates: [-102, 32] } },
      { pwi: 'W2', basinName: 'Permian', fracStages: 30, surfaceLoc: { type: 'Point', coordinates: [-101, 31] } },
      { pwi: 'W3', basinName: 'Bakken', fracStages: 50, surfaceLoc: { type: 'Point', coordinates: [-103, 48] } },
    ]);
    const options = { groupBy: ['basinName'], metrics: { stages: { sum: 'fracStages' } } };
    const box = await store.dynamic.aggregate('Well', { surfaceLoc: { bounds: [-104, 30, -100, 33] } }, options);
    expect(box.data).toEqual([{ basinName: 'Permian', stages: 40 }]);
    const polygon = await store.dynamic.aggregate('Well', { surfaceLoc: { polygon: [[[-102.5, 31.5], [-101.5, 31.5], [-101.5, 32.5], [-102.5, 32.5], [-102.5, 31.5]]] } }, options);
    expect(polygon.data).toEqual([{ basinName: 'Permian', stages: 10 }]);
    expect((await store.dynamic.count('Well', { surfaceLoc: { bounds: [-104, 47, -100, 49] } })).total).toBe(1);
  });

  it('a metric named __proto__ is a key of its row like any other', async () => {
    const store = await seeded(open);
    const r = await store.aggregate('DailyProduction', { pwi: 'C' }, JSON.parse('{"metrics":{"__proto__":{"count":"*"}}}'));
    expect(Object.getPrototypeOf(r.data[0])).toBe(Object.prototype);
    expect(Object.entries(r.data[0]!)).toEqual([['__proto__', 1]]);
  });

  it('refuses bad requests by code, naming the option, and reads nothing', async () => {
    const store = await seeded(open);
    const code = async (p: Promise<{ errors: { code: string; field?: string }[] }>) => (await p).errors.map((e) => [e.code, e.field]);
    const agg = (options: unknown) => code(store.aggregate('DailyProduction', {}, options));
    expect(await agg({ groupBy: ['pwi'], metrics: { x: { sum: 'pwi' } } })).toEqual([['INVALID_REQUEST', 'options.metrics.x.sum']]);
    expect(await agg({ metrics: { x: { sum: 'extra.basin' } } })).toEqual([['INVALID_REQUEST', 'options.metrics.x.sum']]);
    expect(await agg({ metrics: { x: { median: 'oilVol' } } })).toEqual([['INVALID_REQUEST', 'options.metrics.x']]);
    expect(await agg({ groupBy: [{ field: 'pwi', interval: 'month' }] })).toEqual([['INVALID_REQUEST', 'options.groupBy[0].field']]);
    expect(await agg({ groupBy: [{ field: 'prodDate', interval: 'hour' }] })).toEqual([['INVALID_REQUEST', 'options.groupBy[0].interval']]);
    expect(await agg({ groupBy: ['pwi'], sortBy: 'oil' })).toEqual([['INVALID_REQUEST', 'options.sortBy']]);
    expect(await agg({ groupBy: ['pwi'], metrics: { pwi: { count: '*' } } })).toEqual([['INVALID_REQUEST', 'options']]);
    expect(await agg({ groupBy: ['pwi'], limt: 3 })).toEqual([['INVALID_REQUEST', 'options.limt']]);
    expect(await agg({})).toEqual([['INVALID_REQUEST', 'options']]);
    expect(await agg({ groupBy: ['wellz'] })).toEqual([['UNKNOWN_FIELD', 'wellz']]);
    expect(await agg({ groupBy: Array.from({ length: 17 }, () => 'pwi') })).toEqual([['INVALID_REQUEST', 'options.groupBy']]);
    expect(await code(store.aggregate('DailyProduction', { oilVol: { gte: 'x' } }, { groupBy: ['pwi'] }))).toEqual([['INVALID_QUERY', 'oilVol.gte']]);
    expect(await code(store.distinct('DailyProduction', '', {}))).toEqual([['INVALID_REQUEST', 'field']]);
    expect(await code(store.count('Nope'))).toEqual([['UNKNOWN_TYPE', 'type']]);
  });

  it('the same groups as hand-written SQL over a plain table of the rows query() answers', async () => {
    const store = await open();
    const rows = Array.from({ length: 400 }, (_, i) => ({
      pwi: `W${i % 7}`,
      prodDate: new Date(Date.UTC(2023, 10, 1) + ((i * 37) % 200) * 86_400_000).toISOString(),
      oilVol: i % 11 === 0 ? null : ((i * 7919) % 1000) / 8,
      extra: { basin: ['Permian', 'Bakken', 'DJ'][i % 3] },
    }));
    await store.dynamic.insert('DailyProduction', rows);
    const got = await store.dynamic.aggregate('DailyProduction', { oilVol: { ne: 0 } }, {
      groupBy: ['extra.basin', 'pwi', { field: 'prodDate', interval: 'month' }],
      metrics: { oil: { sum: 'oilVol' }, n: { count: 'oilVol' }, hi: { max: 'oilVol' } },
    });
    const plain = new Database(':memory:');
    plain.exec('CREATE TABLE daily (basin TEXT, pwi TEXT, prod_date TEXT, oil REAL)');
    const insert = plain.prepare('INSERT INTO daily VALUES (?, ?, ?, ?)');
    for (const d of (await store.dynamic.query('DailyProduction')).data as typeof rows) insert.run(d.extra.basin, d.pwi, d.prodDate, d.oilVol ?? null);
    const want = plain
      .prepare(
        `SELECT basin AS "extra.basin", pwi, substr(prod_date, 1, 7) || '-01T00:00:00.000Z' AS prodDate, sum(oil) AS oil, count(oil) AS n, max(oil) AS hi
         FROM daily WHERE oil IS NOT 0 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      )
      .all();
    plain.close();
    expect(got.data.length).toBe(want.length);
    got.data.forEach((row, i) => {
      const w = want[i] as Record<string, number>;
      expect({ ...row, oil: null }).toEqual({ ...w, oil: null });
      expect(row.oil as number).toBeCloseTo(w.oil!, 9);
    });
  });

  it('property: rows equal a JavaScript reduce over query()', async () => {
    const store = await open();
    await fc.assert(
      fc.asyncProperty(wellsArb, requestArb, async (wells, request) => {
        await store.dynamic.delete('Well', { pwi: { ne: null } });
        await store.dynamic.insert('Well', wells);
        const got = await store.dynamic.aggregate('Well', request.query, request.options);
        expect(got.success, got.message).toBe(true);
        const docs = (await store.dynamic.query('Well', request.query)).data;
        const want = reduce(docs, request.options);
        expect(got.data.length).toBe(want.length);
        got.data.forEach((row, i) => {
          for (const [k, v] of Object.entries(want[i]!)) {
            if (typeof v === 'number' && !Number.isInteger(v)) expect(row[k] as number).toBeCloseTo(v, 6);
            else expect(row[k]).toEqual(v);
          }
        });
        expect(got.total).toBe(want.length);
      }),
      { numRuns: RUNS },
    );
  });
});

it('count without conditions runs the engine fast count path: no WHERE clause', () => {
  const info = catalogueOf().require('Well');
  const plan = parseCount({ type: info, strict: true }, {}, undefined);
  expect(render(compileSummary(sqliteDialect, SQLITE_SUMMARY, plan, '"docs_Well"', '1').sql, sqliteDialect).sql).toBe('SELECT count(*) FROM "docs_Well"');
});

// ---- the property's documents, requests and reference

const wellsArb = fc.uniqueArray(
  fc.record(
    {
      pwi: fc.constantFrom('P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8'),
      basinName: fc.option(fc.constantFrom('Permian', 'Bakken', 'permian', 'Ébène', 'ｚ', '😀'), { nil: null }),
      fracStages: fc.option(fc.integer({ min: -3, max: 40 }), { nil: null }),
      lateralLength: fc.option(fc.oneof(fc.integer({ min: 0, max: 9 }), fc.double({ min: -1e4, max: 1e4, noNaN: true, noDefaultInfinity: true })), { nil: null }),
      isVirtual: fc.option(fc.boolean(), { nil: null }),
      spudDate: fc.option(fc.integer({ min: Date.UTC(2019, 0, 1), max: Date.UTC(2022, 11, 31) }).map((t) => new Date(t).toISOString()), { nil: null }),
    },
    { requiredKeys: ['pwi'] },
  ),
  { selector: (d) => d.pwi, maxLength: 8 },
);

type Interval = 'day' | 'week' | 'month' | 'quarter' | 'year';
const groupArb = fc.oneof(
  fc.constantFrom('basinName', 'fracStages', 'isVirtual', 'spudDate'),
  fc.constantFrom<Interval>('day', 'week', 'month', 'quarter', 'year').map((interval) => ({ field: 'spudDate', interval })),
);
const metricArb = fc.oneof(
  fc.tuple(fc.constantFrom('sum', 'avg', 'min', 'max', 'count', 'countDistinct'), fc.constantFrom('fracStages', 'lateralLength')),
  fc.tuple(fc.constantFrom('min', 'max', 'count', 'countDistinct'), fc.constantFrom('basinName', 'spudDate')),
  fc.constant(['count', '*'] as [string, string]),
);
const requestArb = fc
  .record({
    groups: fc.uniqueArray(groupArb, { maxLength: 2, selector: (g) => (typeof g === 'string' ? g : g.field) }),
    metrics: fc.array(metricArb, { minLength: 1, maxLength: 3 }),
    query: fc.constantFrom({}, { fracStages: { gte: 0 } }, { basinName: { ne: 'Bakken' } }),
  })
  .map(({ groups, metrics, query }) => ({ query, options: { groupBy: groups, metrics: Object.fromEntries(metrics.map(([fn, f], i) => [`m${i}`, { [fn]: f }])) } }));

type Row = Record<string, unknown>;
type Options = { groupBy: (string | { field: string; interval: Interval })[]; metrics: Record<string, Record<string, string>> };

/** The first instant of a bucket, as the store writes dates. */
function bucket(iso: string, interval: Interval): string {
  const d = new Date(iso);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const at = (yy: number, mm: number, dd: number) => new Date(Date.UTC(yy, mm, dd)).toISOString();
  switch (interval) {
    case 'day': return at(y, m, d.getUTCDate());
    case 'week': return at(y, m, d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
    case 'month': return at(y, m, 1);
    case 'quarter': return at(y, m - (m % 3), 1);
    case 'year': return at(y, 0, 1);
  }
}

/** SQL's order of a key: null first, then numbers, strings by UTF-8 bytes, false before true. */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b as string));
  return (a as number) < (b as number) ? -1 : 1;
}

/** The reference: groups by key, metrics over the non-null values, rows ordered by their keys. */
function reduce(docs: Row[], options: Options): Row[] {
  const keys = options.groupBy.map((g) => (typeof g === 'string' ? { name: g, of: (d: Row) => d[g] ?? null } : { name: g.field, of: (d: Row) => (d[g.field] == null ? null : bucket(d[g.field] as string, g.interval)) }));
  const groups = new Map<string, Row[]>();
  for (const d of docs) {
    const k = JSON.stringify(keys.map((key) => key.of(d)));
    groups.set(k, [...(groups.get(k) ?? []), d]);
  }
  if (!keys.length && !groups.size) groups.set('[]', []);
  const rows = [...groups].map(([k, members]) => {
    const row: Row = {};
    keys.forEach((key, i) => (row[key.name] = (JSON.parse(k) as unknown[])[i]));
    for (const [name, spec] of Object.entries(options.metrics)) {
      const [fn, field] = Object.entries(spec)[0]!;
      const values = field === '*' ? members.map(() => 1) : members.map((d) => d[field]).filter((v) => v !== null && v !== undefined);
      const sorted = [...values].sort(compare);
      row[name] =
        fn === 'count' ? values.length
        : fn === 'countDistinct' ? new Set(values).size
        : !values.length ? null
        : fn === 'sum' ? (values as number[]).reduce((a, b) => a + b, 0)
        : fn === 'avg' ? (values as number[]).reduce((a, b) => a + b, 0) / values.length
        : fn === 'min' ? sorted[0]
        : sorted[sorted.length - 1];
    }
    return row;
  });
  return rows.sort((a, b) => {
    for (const key of keys) {
      const c = compare(a[key.name], b[key.name]);
      if (c) return c;
    }
    return 0;
  });
}
