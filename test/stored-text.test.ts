// Every write path stores a document's text exactly as JSON.stringify renders it: the read path of queries may then
// send the stored text as it is (src/core/slices.ts), with the bytes `JSON.stringify(await store.query(…))` makes.
import { afterEach, describe, expect, it } from 'vitest';
import { DataStore, type SqliteDataStore } from '../src/index.js';
import { tempDir } from './helpers/store.js';

/** Values whose text JSON.stringify and SQLite might render otherwise: numbers, escapes, surrogates, nesting. */
const AWKWARD: Record<string, unknown> = {
  sum: 0.1 + 0.2,
  big: 1e21,
  small: 1e-7,
  tiny: 5e-324,
  negZero: -0,
  unsafe: 2 ** 53 + 2,
  half: 1.5,
  whole: 3,
  huge: Number.MAX_VALUE,
  neg: -123.456e-20,
  escapes: 'quote " backslash \\ slash / tab \t newline \n return \r bs \b ff \f',
  control: '\u0000\u0001\u001f\u007f',
  separators: 'line\u2028para\u2029',
  lone: 'high \ud800 low \udc00 end',
  pair: 'pair \ud83d\ude00',
  unicode: 'café ñ 日本 Ω',
  nested: [[1, [2.5, [3e-9]]], { a: { b: [{}, [], { c: null }] } }],
  empty: {},
  emptyArray: [],
  bools: [true, false, null],
};

const WELL = { pwi: 'W-1', wellName: 'Awkward', fracStages: 12, surfaceLoc: { type: 'Point', coordinates: [-101.5, 31.25] } };

const rawTexts = (store: SqliteDataStore, type = 'Well'): string[] =>
  store.database.prepare(`SELECT json(doc) FROM "docs_${type}" ORDER BY rowid`).pluck(true).all() as string[];

/** Asserts each stored document's text is the canonical JSON.stringify text of what it holds. */
function expectCanonical(store: SqliteDataStore, atLeast = 1, type = 'Well'): void {
  const texts = rawTexts(store, type);
  expect(texts.length).toBeGreaterThanOrEqual(atLeast);
  for (const text of texts) expect(text).toBe(JSON.stringify(JSON.parse(text)));
}

describe('stored document text (SQLite)', () => {
  let cleanup: (() => void) | undefined;
  let store: SqliteDataStore;
  afterEach(async () => {
    await store?.close();
    cleanup?.();
  });

  const open = (options: Record<string, unknown> = {}) => {
    const tmp = tempDir();
    cleanup = tmp.cleanup;
    store = DataStore.open(tmp.file(), { strict: false, ...options }) as SqliteDataStore;
    return store.dynamic;
  };

  it('is canonical after an insert of one document and of many', async () => {
    const s = open();
    const one = await s.insert('Well', [{ ...WELL, ...AWKWARD }]);
    expect(one.success, JSON.stringify(one.errors)).toBe(true);
    expect((await s.insert('Well', [2, 3, 4].map((i) => ({ ...WELL, pwi: `W-${i}`, ...AWKWARD, n: i / 10 })))).success).toBe(true);
    expectCanonical(store, 4);
  });

  it('is canonical after a replace', async () => {
    const s = open();
    const id = (await s.insert('Well', [WELL])).insertedIds[0]!;
    expect((await s.replace('Well', [{ ...WELL, id, ...AWKWARD }])).success).toBe(true);
    expectCanonical(store, 1);
    expect(JSON.parse(rawTexts(store)[0]!).separators).toBe(AWKWARD.separators);
  });

  it('is canonical after an update of fields and dotted paths', async () => {
    const s = open();
    expect((await s.insert('Well', [{ ...WELL, obj: { inner: 1 } }])).success).toBe(true);
    const r = await s.update('Well', { pwi: 'W-1' }, { ...AWKWARD, 'obj.sum': 0.1 + 0.2, 'obj.deep.lone': '\udfff', 'obj.deep.big': 1e21, fracStages: 7 });
    expect(r.success, r.message).toBe(true);
    expectCanonical(store, 1);
    expect(JSON.parse(rawTexts(store)[0]!).obj).toEqual({ inner: 1, sum: 0.1 + 0.2, deep: { lone: '\udfff', big: 1e21 } });
  });

  it('is canonical after stamps kept as given and a soft delete', async () => {
    const s = open({ softDelete: ['Well'], clock: () => 1_700_000_000_123.5 });
    const kept = { ...WELL, ...AWKWARD, createdAt: '2024-05-01T00:00:00.000Z', modifiedTimestamp: 1714521600000 };
    const loaded = await s.load('Well', [kept], { keepStamps: true });
    expect(loaded.success, loaded.message).toBe(true);
    expect((await s.delete('Well', { pwi: 'W-1' })).success).toBe(true);
    expectCanonical(store, 1);
    expect(JSON.parse(rawTexts(store)[0]!).deletedTimestamp).toEqual(expect.any(Number));
  });

  it('is canonical in the versions history writes (a trigger builds them in SQL)', async () => {
    const s = open({ history: ['Well'], activityLog: true, clock: () => 1_700_000_000_123 });
    const id = (await s.insert('Well', [{ ...WELL, ...AWKWARD }])).insertedIds[0]!;
    expect((await s.update('Well', { id }, { sum: 0.7 + 0.1, fracStages: 9 })).success).toBe(true);
    expect((await s.delete('Well', { id })).success).toBe(true);
    expectCanonical(store, 3, 'VersionDocument');
    expectCanonical(store, 3, 'ActivityLog');
    const versions = await s.query('VersionDocument', {});
    expect(versions.data.map((v) => (v.body as { sum: number }).sum)).toEqual([0.1 + 0.2, 0.7 + 0.1, 0.7 + 0.1]);
  });

  it('is canonical after a bulk load (atomic, the bulk path) and a batched load', async () => {
    const s = open();
    const docs = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ ...WELL, pwi: `W-${from + i}`, ...AWKWARD, n: (from + i) * 0.1 }));
    expect((await s.load('Well', docs(0, 20_000), { atomic: true })).success).toBe(true);
    expect((await s.load('Well', docs(20_000, 50), { batchSize: 10 })).success).toBe(true);
    expectCanonical(store, 20_050);
  });
});
