/**
 * Property: for random Well documents and random queries over their values, the store's page and
 * total equal the reference evaluator's (README "Semantics"), on every backend (SQLite, PostgreSQL).
 * FUZZ_RUNS sets the number of runs (per backend).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DataStore } from '../src/index.js';
import { normalizeDate } from '../src/catalogue/dates.js';
import { backends, type StoreBackend } from './helpers/backends.js';
import { WELL_DATE_FIELDS } from './helpers/cases.js';
import { evaluate, parsePath, testedValues, type Doc, type EvalOptions } from './helpers/reference.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
/** 2,000 runs on PostgreSQL take 20-45 s on two busy cores: the default 60 s leaves too little room (a bound, not a target). */
const PROPERTY_TIMEOUT_MS = 180_000;
const QUERIES_PER_RUN = 4;

// ---- documents

// Byte-order traps: é and ｚ (BMP) vs 😀 (astral: UTF-16 puts it below ｚ, UTF-8 above); escapes in JSON text.
const smallString = fc.constantFrom('', 'a', 'b', 'ab', 'B', 'é', 'a\nb', 'x1', 'Z', '10', 'ｚ', '😀', 'a"b', 'a\\', '\u0001', '\u2028', 'b\r');
const scalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 12 }),
  fc.constantFrom(0.5, -1.25, 1e-7, 2.0000000000000004, 1e21, -0, 2 ** 53, 1e300, -5e-324, 0.1 + 0.2),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  smallString,
  fc.boolean(),
  fc.constant(null),
);
const key = fc.constantFrom('a', 'b', 'c');
const { value: untyped } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 3 })),
}));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(fc.option(arb, { nil: null }), { nil: undefined });

const DAYS = ['2019-01-01', '2020-06-30', '2021-03-14', '2022-03-01'];
/** A date in one of the accepted input forms, near a few fixed days so equality hits. */
const dateInput = fc.tuple(fc.constantFrom(...DAYS), fc.constantFrom(0, 1, 2, 3, 4), fc.constantFrom(0, 12, 23)).map(([day, form, hour]) => {
  const [y, m, d] = day.split('-');
  switch (form) {
    case 0: return `${Number(m)}/${Number(d)}/${y}`;
    case 1: return day;
    case 2: return `${day}T${String(hour).padStart(2, '0')}:00:00`;
    case 3: return `${day}T${String(hour).padStart(2, '0')}:00:00.000Z`;
    default: return `${day}T${String(hour).padStart(2, '0')}:30:00-06:00`;
  }
});

const wellArb = fc.record(
  {
    pwi: fc.string({ unit: fc.constantFrom('P', 'p', 'Q', '-', '0', '1', 'é', 'ｚ', '😀'), minLength: 1, maxLength: 4 }),
    fracStages: optional(fc.integer({ min: -2, max: 40 })),
    lateralLength: optional(fc.oneof(fc.integer({ min: 0, max: 10 }), fc.double({ min: -1e4, max: 1e4, noNaN: true }))),
    isVirtual: optional(fc.boolean()),
    basinName: optional(fc.constantFrom('Permian', 'Bakken', 'permian', 'Eagle Ford', 'Ébène')),
    spudDate: optional(dateInput),
    groups: optional(fc.array(fc.constantFrom('a', 'b', 'north', 'gas', 'B'), { maxLength: 3 })),
    extra: optional(fc.dictionary(key, untyped, { maxKeys: 3 })),
  },
  { requiredKeys: ['pwi'] },
);
const docsArb = fc.uniqueArray(wellArb, { selector: (d) => d.pwi, minLength: 2, maxLength: 12 });
/** With strict: false, an unknown top-level field `u` holding any JSON value. */
const looseDocsArb = fc.uniqueArray(
  fc.tuple(wellArb, optional(untyped)).map(([d, u]) => (u === undefined ? d : { ...d, u })),
  { selector: (d) => d.pwi, minLength: 2, maxLength: 12 },
);

// ---- queries

type Kind = 'string' | 'number' | 'boolean' | 'date' | 'untyped';
const PATHS: readonly [string, Kind][] = [
  ['pwi', 'string'], ['basinName', 'string'], ['fracStages', 'number'], ['lateralLength', 'number'],
  ['isVirtual', 'boolean'], ['spudDate', 'date'], ['groups', 'untyped'], ['groups.0', 'untyped'],
  ['extra', 'untyped'], ['extra.a', 'untyped'], ['extra.b', 'untyped'], ['extra.a.b', 'untyped'],
  ['extra.a.0', 'untyped'], ['extra.b.a', 'untyped'], ['extra.a.b.c', 'untyped'], ['extra.c.0.a', 'untyped'],
];
const LOOSE_PATHS: readonly [string, Kind][] = [...PATHS, ['u', 'untyped'], ['u', 'untyped'], ['u.a', 'untyped'], ['u.0', 'untyped'], ['u.b.0', 'untyped']];
// Anchored literals (the store may narrow by prefix), alternations, flags, classes.
const PATTERNS = ['^P', 'e', '/^p/i', 'n$', '^$', '.', '/a.b/s', '/^b$/m', '/É/i', '^[0-9]+$', 'a|b', '^a|b', '^P|é', '^Pé', '^p-', '^ab*', '^P{2}', '^😀', '^ｚ', '^B$', '^a\\nb'];

/** Operands for a path: values present in the documents (as given), and near misses and fixed values of the same kinds. */
function operandsFor(docs: readonly Doc[], path: string, kind: Kind): { present: unknown[]; other: unknown[] } {
  const found = docs.flatMap((d) => testedValues(d, parsePath(path))).filter((v) => v !== undefined);
  const near = found.flatMap((v): unknown[] =>
    typeof v === 'number' ? [v + 1, v - 0.5, Math.trunc(v)] : typeof v === 'string' ? [v.slice(0, -1), `${v}a`, v.toUpperCase()] : typeof v === 'boolean' ? [!v] : [],
  );
  const split = (keep: (v: unknown) => boolean, fixed: unknown[]) => ({ present: found.filter(keep), other: [...near.filter(keep), ...fixed, null] });
  switch (kind) {
    case 'string': return split((v) => typeof v === 'string', ['Permian', 'P', 'p-']);
    case 'number': return split((v) => typeof v === 'number', [0, 10, -1.5]);
    case 'boolean': return split((v) => typeof v === 'boolean', [true, false]);
    case 'date': {
      const fixed = [...DAYS, '3/14/2021', '2021-03-14T00:00:00', '2022-02-28T18:30:00-06:00', '2020-06-30T12:00:00.000Z', new Date('2021-03-14T12:00:00Z')];
      return { present: found.filter((v) => normalizeDate(v) !== null), other: [...fixed, null] };
    }
    case 'untyped': return split(() => true, [1, 'a', true, false, ['a', 'b'], { a: 1 }, [], {}]);
  }
}

/** Mostly values present in the documents, so conditions hit; sometimes the others. */
function pick(values: { present: unknown[]; other: unknown[] }, keep: (v: unknown) => boolean = () => true): fc.Arbitrary<unknown> | null {
  const present = values.present.filter(keep);
  const other = values.other.filter(keep);
  const arbs = [
    ...(present.length ? [{ arbitrary: fc.constantFrom(...present), weight: 3 }] : []),
    ...(other.length ? [{ arbitrary: fc.constantFrom(...other), weight: 1 }] : []),
  ];
  return arbs.length ? fc.oneof(...arbs) : null;
}

const caseOf = (name: string) => fc.constantFrom(name, name.toUpperCase(), name[0]!.toUpperCase() + name.slice(1));
// null compares too (lt/gt null match nothing, lte/gte null are eq null), as in MongoDB.
const comparable = (kind: Kind, v: unknown) => (kind === 'untyped' ? v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' : true);

/** One field's condition: a plain value (eq), an array (in), or 1–2 operators. */
function conditionArb(docs: readonly Doc[], path: string, kind: Kind): fc.Arbitrary<unknown> {
  const values = operandsFor(docs, path, kind);
  const value = pick(values)!;
  const ordered = pick(values, (v) => comparable(kind, v));
  const operator: fc.Arbitrary<[string, unknown]>[] = [
    fc.tuple(caseOf('eq'), value),
    fc.tuple(caseOf('ne'), value),
    fc.tuple(caseOf('in'), fc.oneof(fc.array(value, { maxLength: 3 }), fc.array(value, { minLength: 9, maxLength: 12 }))),
  ];
  if (ordered) operator.push(fc.tuple(fc.oneof(caseOf('lt'), caseOf('lte'), caseOf('gt'), caseOf('gte')), ordered));
  if (kind === 'string' || kind === 'date' || kind === 'untyped') operator.push(fc.tuple(caseOf('regex'), fc.constantFrom(...PATTERNS)));
  const ops = fc.uniqueArray(fc.oneof(...operator), { minLength: 1, maxLength: 2, selector: ([name]) => name }).map((list) => Object.fromEntries(list));
  // A plain object value would be read as operators; objects go through { eq }.
  const plain = value.filter((v) => !(v !== null && typeof v === 'object' && !Array.isArray(v)));
  return fc.oneof(plain, fc.array(value, { minLength: 1, maxLength: 3 }), ops, ops);
}

function queryArb(docs: readonly Doc[], paths: readonly [string, Kind][]): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .oneof(fc.constant(1), fc.constant(1), fc.constant(2), fc.constant(3))
    .chain((n) => fc.uniqueArray(fc.constantFrom(...paths), { minLength: n, maxLength: n, selector: ([p]) => p }))
    .chain((paths) => fc.tuple(...paths.map(([p, kind]) => conditionArb(docs, p, kind).map((c) => [p, c] as const))))
    .map((entries) => Object.fromEntries(entries));
}

const optionsArb = (paths: readonly [string, Kind][]): fc.Arbitrary<EvalOptions> => fc.record(
  {
    sortBy: fc.constantFrom(...paths.map(([p]) => p)),
    sortOrder: fc.constantFrom(1 as const, -1 as const, 0 as const),
    limit: fc.integer({ min: 0, max: 5 }),
    skip: fc.integer({ min: 0, max: 5 }),
  },
  { requiredKeys: [] },
);

/** Expression indexes on the typed fields and two untyped ones: the planner then uses them, and answers must not change. */
const INDEXES = { Well: ['basinName', 'fracStages', 'lateralLength', 'isVirtual', 'spudDate', 'groups', 'extra'].map((f) => ({ fields: [f] })) };

async function open(backend: StoreBackend, docs: readonly Doc[], indexed: boolean, strict: boolean): Promise<{ store: DataStore; stored: Doc[] }> {
  const store = await backend.open({ strict, ...(indexed ? { indexes: INDEXES } : {}) });
  const ins = await store.dynamic.insert('Well', docs.map((d, i) => ({ id: `d${i}`, ...d })));
  if (!ins.success) throw new Error(`insert failed: ${JSON.stringify(ins.errors)}`);
  const stored = (await store.query('Well', {})).data as Doc[];
  return { store, stored };
}

/** Random documents × several random queries each (one store serves them), store against evaluator. */
function agreement(backend: StoreBackend, docsArb: fc.Arbitrary<Doc[]>, paths: readonly [string, Kind][], strict: boolean) {
  // Queries are drawn from the documents' values (and near misses), so conditions hit.
  const request = (docs: Doc[]) => fc.tuple(queryArb(docs, paths), fc.option(optionsArb(paths), { nil: undefined }));
  const scenario = docsArb.chain((docs) => fc.tuple(fc.constant(docs), fc.array(request(docs), { minLength: 1, maxLength: QUERIES_PER_RUN }), fc.boolean()));
  return fc.asyncProperty(scenario, async ([docs, requests, indexed]) => {
    const { store, stored } = await open(backend, docs, indexed, strict);
    try {
      for (const [query, options] of requests) {
        const r = await store.dynamic.query('Well', query, options);
        expect(r.errors, JSON.stringify({ query, options })).toEqual([]);
        const ref = evaluate(stored, query, options, { dateFields: WELL_DATE_FIELDS });
        expect({ ids: r.data.map((d) => d.id), total: r.total }, JSON.stringify({ query, options })).toEqual(ref);
        expect(r.count).toBe(r.data.length);
      }
    } finally {
      await store.close();
    }
  });
}

describe.each(backends())('$name', (backend) => {
describe('query property: store = reference evaluator', () => {
  it(`page ids and total agree for random documents × queries (${RUNS} runs)`, async () => {
    await fc.assert(agreement(backend, docsArb as fc.Arbitrary<Doc[]>, PATHS, true), { numRuns: RUNS });
  }, PROPERTY_TIMEOUT_MS);

  it(`strict: false — an unknown field of any JSON type agrees too (${Math.ceil(RUNS / 4)} runs)`, async () => {
    await fc.assert(agreement(backend, looseDocsArb as fc.Arbitrary<Doc[]>, LOOSE_PATHS, false), { numRuns: Math.ceil(RUNS / 4) });
  }, PROPERTY_TIMEOUT_MS);

  it(`an operand of the wrong kind on a typed field is INVALID_QUERY naming the path (${Math.ceil(RUNS / 4)} runs)`, async () => {
    const store = await backend.open();
    await store.insert('Well', [{ pwi: 'W1', fracStages: 3, isVirtual: true, spudDate: '2021-03-14', basinName: 'Permian' }]);
    // Per field: operands of another kind, which every operator refuses (null is allowed for eq/ne/in, so not drawn).
    const wrong: Record<string, fc.Arbitrary<unknown>> = {
      pwi: fc.oneof(fc.integer(), fc.boolean(), fc.constant({ a: 1 }), fc.constant(['x'])),
      basinName: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean()),
      fracStages: fc.oneof(fc.string(), fc.boolean(), fc.constant([1]), fc.constant({})),
      lateralLength: fc.oneof(fc.string(), fc.boolean()),
      isVirtual: fc.oneof(fc.integer(), fc.string(), fc.constant({ eq: true })),
      spudDate: fc.oneof(fc.constantFrom('yesterday', '2/30/2024', '2024-13-01', '13/1/2024', '2024-02-30T00:00:00Z'), fc.integer(), fc.boolean()),
    };
    const op = fc.constantFrom('eq', 'ne', 'gt', 'Lte', 'IN');
    const bad = fc.tuple(fc.constantFrom(...Object.keys(wrong)), op).chain(([field, name]) => fc.tuple(fc.constant(field), fc.constant(name), wrong[field]!));
    try {
      await fc.assert(
        fc.asyncProperty(bad, async ([field, name, operand]) => {
          const r = await store.query('Well', { [field]: { [name]: name === 'IN' ? [operand] : operand } });
          expect(r.success).toBe(false);
          expect(r.data).toEqual([]);
          const at = name === 'IN' ? `${field}.${name}[0]` : `${field}.${name}`;
          expect(r.errors.map((e) => [e.code, e.field])).toEqual([['INVALID_QUERY', at]]);
          expect(r.errors[0]!.message).toContain(`query.${at}:`);
        }),
        { numRuns: Math.ceil(RUNS / 4) },
      );
    } finally {
      await store.close();
    }
  });
});
});
