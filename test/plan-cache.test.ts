/**
 * The SQLite backend compiles a query shape once (compile.ts selectShape / rebind, backend #select): for every plan a
 * shape covers, the cached statements with the plan's values bound are exactly what compiling the plan gives, and a
 * store answering many shapes and values in turn answers each as a fresh store does. The caches are bounded.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';
import { encodeCursor } from '../src/query/cursor.js';
import { parsePlan } from '../src/query/parse.js';
import { resolveSettings } from '../src/settings.js';
import { compileSelect, rebind, selectShape, selectTarget, type CompiledSelect } from '../src/sqlite/compile.js';
import { BoundedCache } from '../src/cache.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const settings = resolveSettings({ indexes: { Well: [{ fields: ['name', 'pwi', 'id'] }] } }, 'test');
const info = settings.catalogue.resolve('Well')!;
const ctx = { type: info, strict: true, cursorKey: Buffer.alloc(32, 7) };
const target = selectTarget(settings, 'Well');

/** Operands per scalar field of Well, few enough that shapes repeat with other values. */
const VALUES: Record<string, fc.Arbitrary<unknown>> = {
  pwi: fc.constantFrom('A', 'B', 'Smith 1'),
  name: fc.constantFrom('a', 'Hawk', ''),
  fracStages: fc.constantFrom(0, 3, 30),
  lateralLength: fc.constantFrom(0.5, 1e21, -2),
  isVirtual: fc.boolean(),
  spudDate: fc.constantFrom('2020-01-01', '3/14/2021'),
};
const FIELDS = Object.keys(VALUES);
const PATTERNS = ['^ab', '^Smith 1', 'ab', '^a.b', '^a|b', '^ab*', '/^ab/i', `^${String.fromCodePoint(0x10ffff)}`, '^'];

/** A condition on one of `fields`: a value (or null), a list (short, or past 100 values), ne, a range, a regex. */
const conditionOn = (fields: string[]) => fc.constantFrom(...fields).chain((field) => {
  const v = VALUES[field]!;
  const list = fc.oneof(fc.array(fc.option(v, { nil: null }), { maxLength: 3 }), fc.array(v, { minLength: 101, maxLength: 102 }));
  const strings = field === 'pwi' || field === 'name';
  return fc.tuple(
    fc.constant(field),
    fc.oneof(
      fc.option(v, { nil: null }),
      list,
      fc.record({ ne: fc.option(v, { nil: null }) }),
      fc.record({ lt: v, lte: v, gt: v, gte: fc.option(v, { nil: null }) }, { requiredKeys: [] }).filter((o) => Object.keys(o).length > 0),
      ...(strings ? [fc.record({ regex: fc.constantFrom(...PATTERNS) })] : []),
    ),
  );
});
const options = fc.record(
  {
    sortBy: fc.constantFrom('pwi', 'fracStages', 'extra.a', 'name'),
    sortOrder: fc.constantFrom(1, -1),
    limit: fc.constantFrom(0, 1, 5),
    skip: fc.constantFrom(0, 3),
    fields: fc.constantFrom(['pwi'], ['name', 'fracStages'], ['pwi', 'name'], ['surfaceLoc', 'isVirtual']),
  },
  { requiredKeys: [] },
);
const queryOn = (fields: string[]) => fc.array(conditionOn(fields), { maxLength: 2 }).map((cs) => Object.fromEntries(cs));
const request = fc.record({ query: queryOn(FIELDS), options });
/** Queries of one run: on one or two fields, so that shapes repeat with other values. */
const queries = fc.shuffledSubarray(FIELDS, { minLength: 1, maxLength: 2 }).chain((fields) => fc.array(queryOn(fields), { minLength: 10, maxLength: 40 }));

/** What a compiled select is, as plain data (statements and their values). */
const shown = (s: CompiledSelect) => JSON.stringify(s);

describe('compiling a query shape once', () => {
  it(`a shape's statements with another plan's values are that plan's own statements (${RUNS} runs)`, () => {
    let reused = 0;
    fc.assert(
      // One set of options per run and many queries of few conditions: shapes repeat, with other values.
      fc.property(options, queries, (opts, list) => {
        const templates = new Map<string, CompiledSelect>();
        for (const q of list) {
          const plan = parsePlan(ctx, q, opts);
          const own = compileSelect(plan, target);
          const shape = selectShape(plan);
          expect(shape).not.toBeNull();
          const template = templates.get(shape!.key);
          if (!template) templates.set(shape!.key, own);
          else {
            reused++;
            expect(shown(rebind(template, plan, shape!.where))).toBe(shown(own));
          }
        }
      }),
      { numRuns: RUNS },
    );
    // The property means something only if shapes do repeat.
    expect(reused).toBeGreaterThan(RUNS * 5);
  });

  it('tells apart the values that change a statement: null or not, how many in a list, a regex\'s literal prefix', () => {
    const keys = (queries: unknown[]) => new Set(queries.map((q) => selectShape(parsePlan(ctx, q, null))!.key)).size;
    const many = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`);
    expect(keys([{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'Smith' }])).toBe(1);
    expect(keys([{ pwi: 'A' }, { pwi: null }, { pwi: { ne: 'A' } }, { pwi: { ne: null } }])).toBe(4);
    expect(keys([{ pwi: [] }, { pwi: ['A'] }, { pwi: ['A', 'B'] }, { pwi: ['A', null] }, { pwi: [null] }, { pwi: many(101) }])).toBe(6);
    expect(keys([{ pwi: many(3) }, { pwi: many(100) }])).toBe(1);
    expect(keys([{ name: { regex: '^ab' } }, { name: { regex: '^cd' } }])).toBe(1);
    expect(keys([{ name: { regex: '^ab' } }, { name: { regex: '^ab.' } }, { name: { regex: 'ab' } }, { name: { regex: `^${String.fromCodePoint(0x10ffff)}` } }])).toBe(4);
    expect(keys([{ fracStages: { gt: 1 } }, { fracStages: { gte: 1 } }, { fracStages: { gt: null } }])).toBe(3);
  });

  it('covers no plan whose statement depends on more than its shape: paths into values, geo, cursors', () => {
    expect(selectShape(parsePlan(ctx, { 'extra.a': 1 }, null))).toBeNull();
    expect(selectShape(parsePlan(ctx, { surfaceLoc: { bounds: [0, 0, 1, 1] } }, null))).toBeNull();
    const first = parsePlan(ctx, {}, { sortBy: 'pwi', limit: 1 });
    const cursor = encodeCursor(first.shape, { rank: 1, key: 'A', seq: 1, total: 2 }, ctx.cursorKey);
    expect(selectShape(parsePlan(ctx, {}, { sortBy: 'pwi', limit: 1, cursor }))).toBeNull();
    expect(selectShape(parsePlan(ctx, { pwi: 'A' }, null))).toEqual({ key: expect.any(String), where: ['A'] });
  });
});

describe('a store answering shapes over and over', () => {
  it('answers every query as a fresh store does, whatever it answered before', async () => {
    const docs = [
      { pwi: 'A', name: 'a', fracStages: 3, isVirtual: true, spudDate: '2020-01-01' },
      { pwi: 'B', name: 'ab', fracStages: 0, isVirtual: false },
      { pwi: 'Smith 1', name: 'Hawk', fracStages: 30, lateralLength: 1e21 },
      { pwi: 'C', name: null, lateralLength: 0.5, spudDate: '2021-03-14' },
    ];
    const warm = DataStore.open();
    await warm.insert('Well', docs);
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 8 }), async (requests) => {
          for (const r of requests) {
            const fresh = DataStore.open();
            try {
              await fresh.insert('Well', docs);
              const expected = await fresh.dynamic.query('Well', r.query, r.options);
              const got = await warm.dynamic.query('Well', r.query, r.options);
              expect({ ...got, data: got.data.map(({ createdAt, updatedAt, modifiedTimestamp, id, createdActivityId, lastUpdatedActivityId, ...d }) => d) }).toEqual({
                ...expected,
                data: expected.data.map(({ createdAt, updatedAt, modifiedTimestamp, id, createdActivityId, lastUpdatedActivityId, ...d }) => d),
                cursor: got.cursor,
              });
            } finally {
              fresh.close();
            }
          }
        }),
        { numRuns: Math.ceil(RUNS / 5) },
      );
    } finally {
      warm.close();
    }
  });
});

describe('BoundedCache', () => {
  it('holds at most its entries and size, dropping the least recently used first; an entry over the budget is not kept', () => {
    const cache = new BoundedCache<number>(3, 100);
    for (let i = 0; i < 5; i++) cache.set(`k${i}`, i);
    expect(cache.size).toEqual({ entries: 3, held: 6 });
    expect([0, 1, 2, 3, 4].map((i) => cache.get(`k${i}`))).toEqual([undefined, undefined, 2, 3, 4]);
    cache.set('big', 5, 90);
    expect(cache.size).toEqual({ entries: 3, held: 94 });
    expect([cache.get('k2'), cache.get('k3'), cache.get('big')]).toEqual([undefined, 3, 5]);
    // Past the size: the least recently used go until the new entry fits.
    cache.set('more', 6, 10);
    expect(cache.size).toEqual({ entries: 2, held: 100 });
    expect([cache.get('k3'), cache.get('k4'), cache.get('big'), cache.get('more')]).toEqual([undefined, undefined, 5, 6]);
    cache.set('huge', 7, 101);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size.held).toBeLessThanOrEqual(100);
    // Used recently, an older entry outlives a newer one that was not.
    const lru = new BoundedCache<number>(2, 100);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3]);
  });

  it('tells dispose of every entry that leaves, by the entry bound or by size, and never of the one just set', () => {
    const gone: string[] = [];
    const cache = new BoundedCache<number>(2, 100, (_value, key) => gone.push(key));
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(gone).toEqual(['a']);
    // 1 + 1 + 99 is past the size of 100: the least recently used goes.
    cache.set('big', 4, 99);
    expect(gone).toEqual(['a', 'b']);
    expect(cache.size).toEqual({ entries: 2, held: 100 });
    expect([cache.get('c'), cache.get('big')]).toEqual([3, 4]);
  });

  it('refuses a bound of no entries', () => {
    expect(() => new BoundedCache<number>(0)).toThrow(new RangeError('BoundedCache: max must be a positive integer'));
  });
});
