/**
 * options.fields, the projection: on both backends the answer's documents hold `id` (first, always) and then the named
 * top-level fields in the order requested, each exactly as stored (a missing field absent, a null one null, numbers,
 * strings and nested key order unchanged), with sort, paging, totals, cursors and geo filters unchanged; bad lists are
 * refused. On SQLite the projection is built in SQL from the fields' index expressions, so an index holding them
 * answers it; through the worker pool it streams byte for byte as the store answers.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataStore, Envelope } from '../src/index.js';
import { LIMITS } from '../src/limits.js';
import { createPool } from '../src/pool/pool.js';
import { DynamicStore } from '../src/store.js';
import { backends } from './helpers/backends.js';
import { tempDir } from './helpers/store.js';
import { removeBundles, workerScript } from './pool/helpers.js';
import { typecheck } from './types.compile.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

type Doc = Record<string, unknown>;

/** The document as a projection of `fields` answers it: id, then each named field the document has, in that order. */
function picked(doc: Doc, fields: readonly string[]): Doc {
  const out: Doc = { id: doc.id };
  for (const f of fields) if (f !== 'id' && Object.hasOwn(doc, f)) out[f] = doc[f];
  return out;
}

/** Values as JSON text: equal texts mean the same values, and the same key order inside objects. */
const text = (v: unknown) => JSON.stringify(v);

const WELLS: Doc[] = [
  { id: 'w1', pwi: 'A', name: 'Hawk 1H', fracStages: 30, lateralLength: 0.30000000000000004, isVirtual: true, spudDate: '2021-03-14', basinName: 'Permian', surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] }, extra: { b: 1, a: [2, { z: null, y: 'é' }] } },
  { id: 'w2', pwi: 'B', name: null, fracStages: null, lateralLength: 1e21, isVirtual: false, basinName: 'Permian', surfaceLoc: { coordinates: [-102.5, 31.5], type: 'Point' } },
  { id: 'w3', pwi: 'C', name: 'quote " backslash \\ tab \t nul-free \u0001 emoji 🛢️', lateralLength: 5e-324, basinName: 'Bakken', extra: {} },
  { id: 'w4', pwi: 'D', lateralLength: -2.5e-300, fracStages: 0, basinName: 'Bakken', extra: { n: 12345678901234567890 } },
  { id: 'w5', pwi: 'E', basinName: 'Permian', lateralLength: 1.7976931348623157e308, isVirtual: null },
];

describe.each(backends())('options.fields: $name', (backend) => {
  let store: DataStore;
  let full: Doc[];

  beforeAll(async () => {
    store = await backend.open({ strict: false });
    const r = await store.dynamic.insert('Well', WELLS);
    expect(r.success, r.message).toBe(true);
    full = (await store.dynamic.query('Well', {})).data;
  });
  afterAll(() => store.close());

  async function ok(query: unknown, options: unknown): Promise<Envelope<Doc>> {
    const r = await store.dynamic.query('Well', query, options);
    expect(r.success, r.message).toBe(true);
    return r;
  }

  it('answers id first and then the named fields in the order asked; a missing field is absent, a null one null', async () => {
    const r = await ok({}, { fields: ['name', 'pwi', 'fracStages'] });
    expect(r.data.map((d) => Object.keys(d))).toEqual([
      ['id', 'name', 'pwi', 'fracStages'],
      ['id', 'name', 'pwi', 'fracStages'],
      ['id', 'name', 'pwi'],
      ['id', 'pwi', 'fracStages'],
      ['id', 'pwi'],
    ]);
    expect(r.data[1]).toEqual({ id: 'w2', name: null, pwi: 'B', fracStages: null });
    expect(r.data[3]).toEqual({ id: 'w4', pwi: 'D', fracStages: 0 });
    // `id` is always answered, first, named or not.
    expect((await ok({}, { fields: ['pwi', 'id'] })).data[0]).toEqual({ id: 'w1', pwi: 'A' });
    expect((await ok({ pwi: 'C' }, { fields: ['id'] })).data).toEqual([{ id: 'w3' }]);
  });

  it('answers every value exactly as the whole document holds it: numbers, strings, booleans, dates, nested key order', async () => {
    const fields = ['lateralLength', 'name', 'isVirtual', 'spudDate', 'surfaceLoc', 'extra', 'fracStages'];
    const r = await ok({}, { fields });
    expect(r.data.map(text)).toEqual(full.map((d) => text(picked(d, fields))));
    expect(r.data[0]!.lateralLength).toBe(0.30000000000000004);
    expect(r.data[1]!.surfaceLoc).toEqual({ coordinates: [-102.5, 31.5], type: 'Point' });
    expect(Object.keys(r.data[1]!.surfaceLoc as object)).toEqual(['coordinates', 'type']);
  });

  it('fields outside the catalogue (strict: false) are answered as stored when present', async () => {
    const other = await backend.open({ strict: false });
    try {
      await other.dynamic.insert('Well', [{ id: 'x1', pwi: 'X', custom: { k: [1, 'two'] }, flag: true }, { id: 'x2', pwi: 'Y' }]);
      const r = await other.dynamic.query('Well', {}, { fields: ['flag', 'custom'] });
      expect(r.data).toEqual([{ id: 'x1', flag: true, custom: { k: [1, 'two'] } }, { id: 'x2' }]);
    } finally {
      await other.close();
    }
  });

  it('projects the documents of random stores exactly, with any sort and page', async () => {
    const value = fc.oneof(fc.constant(null), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), fc.boolean(), fc.constant({ b: 1, a: 2 }), fc.constant([3, [4]]));
    const doc = fc.record(
      {
        // Characters JSON escapes, and ones it does not.
        name: fc.option(fc.string({ maxLength: 6, unit: fc.constantFrom('a', 'Z', ' ', '"', '\\', '\n', '\t', '\u0001', '\u001f', '\u007f', 'é', '🛢', '\u2028') }), { nil: null }),
        fracStages: fc.option(fc.integer({ min: 0, max: 50 }), { nil: null }),
        lateralLength: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
        isVirtual: fc.option(fc.boolean(), { nil: null }),
        spudDate: fc.option(fc.constantFrom('2020-01-01', '2021-06-30T12:00:00.000Z'), { nil: null }),
        surfaceLoc: fc.option(fc.constantFrom({ type: 'Point', coordinates: [1, 2] }, { coordinates: [-3.5, 4], type: 'Point' }), { nil: null }),
        extra: fc.dictionary(fc.constantFrom('z', 'a', 'm'), value, { maxKeys: 3 }),
      },
      { requiredKeys: [] },
    );
    const names = ['pwi', 'name', 'fracStages', 'lateralLength', 'isVirtual', 'spudDate', 'surfaceLoc', 'extra', 'id', 'basinName'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(doc, { maxLength: 12 }),
        fc.shuffledSubarray(names, { minLength: 1 }),
        fc.constantFrom(undefined, 'fracStages', 'name', 'extra.a'),
        fc.integer({ min: 0, max: 5 }),
        fc.constantFrom({}, { fracStages: { gte: 10 } }, { isVirtual: { ne: true } }),
        async (docs, fields, sortBy, limit, query) => {
          const s = await backend.open();
          try {
            // pwi is a unique key: one each.
            expect((await s.dynamic.insert('Well', docs.map((d, i) => ({ ...d, pwi: `P${i}` })))).success).toBe(true);
            const options = { sortBy, limit };
            const whole = await s.dynamic.query('Well', query, options);
            const projected = await s.dynamic.query('Well', query, { ...options, fields });
            expect(projected.success, projected.message).toBe(true);
            expect(projected.total).toBe(whole.total);
            expect(projected.data.map(text)).toEqual(whole.data.map((d) => text(picked(d, fields))));
          } finally {
            await s.close();
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('keeps sort, skip, limit and total, and pages by cursor with the same projection or another one', async () => {
    const page1 = await ok({ basinName: 'Permian' }, { sortBy: 'lateralLength', sortOrder: -1, limit: 2, fields: ['pwi'] });
    expect(page1.data).toEqual([{ id: 'w5', pwi: 'E' }, { id: 'w2', pwi: 'B' }]);
    expect(page1.total).toBe(3);
    expect(page1.hasCursor).toBe(true);
    // The cursor names a position, not a projection: the next page may ask for other fields.
    const page2 = await ok({ basinName: 'Permian' }, { sortBy: 'lateralLength', sortOrder: -1, limit: 2, fields: ['name', 'pwi'], cursor: page1.cursor });
    expect(page2.data).toEqual([{ id: 'w1', name: 'Hawk 1H', pwi: 'A' }]);
    expect(page2.total).toBe(3);
    expect(page2.hasCursor).toBe(false);
    const skipped = await ok({}, { sortBy: 'pwi', skip: 3, fields: ['pwi'] });
    expect(skipped.data).toEqual([{ id: 'w4', pwi: 'D' }, { id: 'w5', pwi: 'E' }]);
    expect(skipped.total).toBe(5);
    const iterated: Doc[] = [];
    for await (const d of store.dynamic.iterate('Well', {}, { sortBy: 'pwi', batchSize: 2, fields: ['basinName'] })) iterated.push(d);
    expect(iterated).toEqual(full.map((d) => picked(d, ['basinName'])));
  });

  it('projects the matches of bounds and polygon filters', async () => {
    const bounds = await ok({ surfaceLoc: { bounds: [-103, 31, -101, 32] } }, { fields: ['pwi'] });
    expect(bounds.data).toEqual([{ id: 'w1', pwi: 'A' }, { id: 'w2', pwi: 'B' }]);
    const polygon = await ok({ surfaceLoc: { polygon: [[[-102, 31], [-101, 31], [-101, 32], [-102, 32], [-102, 31]]] } }, { fields: ['surfaceLoc'], limit: 5 });
    expect(polygon.data).toEqual([{ id: 'w1', surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] } }]);
    expect(polygon.total).toBe(1);
  });

  it('refuses a field the type lacks as a query does (UNKNOWN_FIELD, with a hint); other bad lists are INVALID_REQUEST on options.fields', async () => {
    const strict = await backend.open();
    try {
      const unknown = await strict.dynamic.query('Well', {}, { fields: ['pwi', 'basinNme'] });
      expect(unknown.success).toBe(false);
      expect(unknown.errors).toEqual([{ code: 'UNKNOWN_FIELD', field: 'basinNme', message: 'options.fields[1]: Well has no field "basinNme" (did you mean "basinName"?)' }]);
      const query = await strict.dynamic.query('Well', { basinNme: 'x' });
      expect(query.errors[0]!.code).toBe('UNKNOWN_FIELD');
      expect(query.errors[0]!.message).toContain('(did you mean "basinName"?)');
      const bad: [unknown, string][] = [
        ['pwi', 'expected an array of top-level field names, got "pwi"'],
        [{ pwi: 1 }, 'not a MongoDB projection object'],
        [[], 'name at least one field'],
        [['pwi', 3], '[1]: expected a non-empty field name, got 3'],
        [[''], '[0]: expected a non-empty field name'],
        [['pwi', 'name', 'pwi'], '[2]: "pwi" is named twice'],
        [['surfaceLoc.coordinates'], '[0]: "surfaceLoc.coordinates" is a dotted path'],
        [['1abc'], 'is not a field name'],
        [['a b'], 'is not a field name'],
        [['x'.repeat(LIMITS.nameLength + 1)], `at most ${LIMITS.nameLength} characters`],
        [Array.from({ length: LIMITS.fields + 1 }, (_, i) => `f${i}`), `at most ${LIMITS.fields} fields, got ${LIMITS.fields + 1}`],
      ];
      for (const [fields, message] of bad) {
        const r = await strict.dynamic.query('Well', {}, { fields });
        expect(r.success, JSON.stringify(fields).slice(0, 60)).toBe(false);
        expect(r.errors).toHaveLength(1);
        expect(r.errors[0]!.code).toBe('INVALID_REQUEST');
        expect(r.errors[0]!.field).toBe('options.fields');
        expect(r.errors[0]!.message).toContain(message);
      }
      // null or absent: whole documents.
      await strict.dynamic.insert('Well', [{ pwi: 'P', name: 'n' }]);
      expect(Object.keys((await strict.dynamic.query('Well', {}, { fields: null })).data[0]!)).toContain('createdAt');
    } finally {
      await strict.close();
    }
  });

  it('answers durations and enumerations (strings or numbers) as stored', async () => {
    const s = await backend.open();
    try {
      await s.dynamic.insert('DailyProduction', [
        { pwi: 'A', prodDate: '2024-01-01', uptime: '1.02:03:04', oilVol: 1.5 },
        { pwi: 'A', prodDate: '2024-01-02', uptime: 86400 },
      ]);
      const r = await s.dynamic.query('DailyProduction', {}, { fields: ['uptime', 'oilVol'] });
      expect(r.data.map((d) => [d.uptime, d.oilVol])).toEqual([['1.02:03:04', 1.5], [86400, undefined]]);
      await s.dynamic.insert('UnitsDefinition', [{ name: 'u1', AngleUnit: 'Degree' }, { name: 'u2', AngleUnit: 2 }, { name: 'u3', AngleUnit: null }]);
      const u = await s.dynamic.query('UnitsDefinition', {}, { fields: ['AngleUnit'] });
      expect(u.data.map((d) => d.AngleUnit)).toEqual(['Degree', 2, null]);
    } finally {
      await s.close();
    }
  });
});

describe('options.fields on SQLite: read from the fields\' indexes', () => {
  it('reads a projection from an index holding its fields and id alone: a document only where a value is null or missing', async () => {
    const { DataStore } = await import('../src/index.js');
    const store = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['basinName', 'pwi', 'name', 'id'] }] } });
    try {
      await store.insert('Well', [
        { pwi: 'A', name: 'a', basinName: 'Permian' },
        { pwi: 'B', basinName: 'Permian', name: null },
        { pwi: 'C', basinName: 'Permian' },
        { pwi: 'D', basinName: 'Bakken', name: 'd' },
        { pwi: 'E "quoted"', basinName: 'Permian', name: 'line\nbreak\u0000\\' },
        { id: 'id "q" \\', pwi: 'F', basinName: 'Permian', name: 'f' },
      ]);
      const x = await store.dynamic.explain('Well', { basinName: 'Permian' }, { fields: ['pwi', 'name'] });
      expect(x.sql).not.toContain('json(doc)');
      const plan = x.plan.join('\n');
      expect(plan).toMatch(/^SEARCH docs_Well USING COVERING INDEX ix\._well\.basin_name\.pwi\.name\.id \(<expr>=\?\)/);
      // Anything else reads one document by rowid, in a subquery run only for the rows that need it.
      for (const line of x.plan.slice(1)) expect(line).toMatch(/^(CORRELATED SCALAR SUBQUERY \d+|SEARCH cd_row USING INTEGER PRIMARY KEY \(rowid=\?\)|USE TEMP B-TREE FOR ORDER BY)$/);
      const r = await store.query('Well', { basinName: 'Permian' }, { fields: ['pwi', 'name'] });
      expect(r.data.map(({ id, ...rest }) => (expect(typeof id).toBe('string'), rest))).toEqual([
        { pwi: 'A', name: 'a' },
        { pwi: 'B', name: null },
        { pwi: 'C' },
        { pwi: 'E "quoted"', name: 'line\nbreak\u0000\\' },
        { pwi: 'F', name: 'f' },
      ]);
      expect(r.data[4]!.id).toBe('id "q" \\');
    } finally {
      store.close();
    }
  });

  it('reads id from its column when no index holds it with the projected fields', async () => {
    const { DataStore } = await import('../src/index.js');
    const store = DataStore.open();
    try {
      const x = await store.dynamic.explain('Well', { pwi: 'A' }, { fields: ['pwi'] });
      expect(x.sql).toMatch(/^SELECT '\{"id":' \|\| json_quote\(id\)/);
    } finally {
      store.close();
    }
  });
});

describe('options.fields through the worker pool', () => {
  const dir = tempDir();
  let script: string;
  beforeAll(async () => {
    script = await workerScript();
  }, 120_000);
  afterAll(() => {
    dir.cleanup();
    removeBundles();
  });

  it('answers and streams projections byte for byte as the store does', async () => {
    const file = dir.file('fields.db');
    const store = DynamicStore.open(file, { strict: false });
    await store.insert('Well', WELLS);
    const pool = await createPool(file, { readers: 1, workerScript: script, strict: false });
    try {
      for (const options of [{ fields: ['name', 'extra'] }, { fields: ['pwi'], skip: 2 }, { fields: ['surfaceLoc'], limit: 2, sortBy: 'pwi' }]) {
        const expected = JSON.stringify(await store.query('Well', {}, options));
        expect(JSON.stringify(await pool.query('Well', {}, options))).toBe(expected);
        let streamed = '';
        for await (const chunk of await pool.queryStream('Well', {}, options)) streamed += chunk;
        expect(streamed).toBe(expected);
      }
    } finally {
      await pool.close();
      await store.close();
    }
  }, 60_000);
});

describe('options.fields, typed', () => {
  it('takes the top-level fields of the type, and nothing else', () => {
    const code = [
      "import { DataStore } from 'consolidata';",
      'const store = DataStore.open();',
      "await store.query('Well', {}, { fields: ['pwi', 'name', 'id', 'surfaceLoc'] });",
      "for await (const w of store.iterate('Well', {}, { fields: ['pwi'] })) w.pwi;",
      "// @ts-expect-error a field Well lacks",
      "await store.query('Well', {}, { fields: ['basinNme'] });",
      "// @ts-expect-error fields is a list",
      "await store.query('Well', {}, { fields: 'pwi' });",
    ].join('\n');
    expect(typecheck(code)).toEqual([]);
  }, 60_000);
});
