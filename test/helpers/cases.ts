/**
 * One case table of (documents, query, options, expected ids in order), written by hand from the
 * README "Semantics", run against the store and the reference evaluator (and mingo where MongoDB's
 * answer is unambiguous).
 */
import { BASE_FIELDS, catalogue } from '../../src/index.js';
import type { EvalOptions } from './reference.js';

type Doc = Record<string, unknown>;

export interface QueryCase {
  name: string;
  docs: readonly Doc[];
  query: Record<string, unknown>;
  options?: EvalOptions;
  /** Ids of the page, in order. */
  expected: readonly string[];
  /** Every match; defaults to `expected.length`. */
  total?: number;
  /** Store option `strict` (default true). */
  strict?: boolean;
  /**
   * 'agrees': MongoDB's semantics are unambiguous here and mingo must give the same ids.
   * { differs }: mingo answers otherwise (the reason says why MongoDB sides with the expected ids); not asserted.
   * Absent: mingo not consulted (sorting across types, regex flags, README-only rules).
   */
  mingo?: 'agrees' | { differs: string };
}

export interface ErrorCase {
  name: string;
  query: unknown;
  options?: unknown;
  strict?: boolean;
  code: string;
  /** The envelope error's `field` (undefined: the error is about the whole query). */
  field: string | undefined;
  /** Fragments the error message must contain. */
  message: readonly string[];
}

/** Top-level DateTime fields of Well: the evaluator normalises their operands as the store does. */
export const WELL_DATE_FIELDS: readonly string[] = Object.entries({ ...BASE_FIELDS, ...catalogue.Well })
  .filter(([, kind]) => kind === 'DateTime')
  .map(([name]) => name);

/** Wells with typed fields, an untyped `extra`, missing and null values. */
export const WELLS: readonly Doc[] = [
  {
    id: 'w1', pwi: 'P-001', basinName: 'Permian', fracStages: 20, lateralLength: 7500.5, isVirtual: false, spudDate: '3/14/2021',
    groups: ['north', 'gas'], extra: { source: 'ihs', score: 3, tags: ['a', 'b'], meta: { k: 1 } },
  },
  {
    id: 'w2', pwi: 'P-002', basinName: 'Bakken', fracStages: 10, lateralLength: 9000, isVirtual: true, spudDate: '2019-01-01',
    groups: ['south'], extra: { source: 'manual', score: '3', tags: ['b'], meta: { k: 2 } },
  },
  {
    id: 'w3', pwi: 'p-003', basinName: 'Permian', fracStages: null, lateralLength: 5000, spudDate: '2020-06-30T12:00:00Z',
    groups: [], extra: { score: true, tags: [], meta: { k: 1, j: 0 } },
  },
  {
    // -06:00 puts this spud on 2022-03-01T00:30Z.
    id: 'w4', pwi: 'Q-004', basinName: 'Eagle Ford', fracStages: 35, isVirtual: false, spudDate: '2022-02-28T18:30:00-06:00',
    extra: { score: 1, tags: 'a', meta: null },
  },
  { id: 'w5', pwi: 'W-005', extra: { score: null } },
];

/** Arrays of objects under an untyped field, with the odd shapes traversal must survive. */
export const ITEMS: readonly Doc[] = [
  { id: 'i1', extra: { items: [{ sku: 'x', qty: 1 }, { sku: 'y', qty: 5 }] } },
  { id: 'i2', extra: { items: [{ sku: 'y', qty: 2 }] } },
  { id: 'i3', extra: { items: { sku: 'x', qty: 9 } } },
  { id: 'i4', extra: { items: [{ sku: 'z' }, 7, [{ sku: 'x', qty: 9 }]] } },
  { id: 'i5', extra: { items: [] } },
  { id: 'i6', extra: { items: [{ sku: 'x', qty: [3, 4] }] } },
];

/** One unknown (strict: false) field `u` holding every JSON type. */
export const MIXED: readonly Doc[] = [
  { id: 'm1', u: 1 },
  { id: 'm2', u: 1.5 },
  { id: 'm3', u: '1' },
  { id: 'm4', u: true },
  { id: 'm5', u: false },
  { id: 'm6', u: null },
  { id: 'm7' },
  { id: 'm8', u: [1, 'b'] },
  { id: 'm9', u: { a: 1 } },
  { id: 'm10', u: 'abc' },
  { id: 'm11', u: 0 },
  { id: 'm12', u: 'é' },
  { id: 'm13', u: [] },
  { id: 'm14', u: {} },
  { id: 'm15', u: 'Z' },
];

/** Strings for anchored patterns, whose literal prefix the store may turn into a range. */
export const PWIS: readonly Doc[] = [
  { id: 'a', pwi: 'ax' },
  { id: 'b', pwi: 'xb' },
  { id: 'c', pwi: 'Pé' },
  { id: 'd', pwi: 'PP' },
  { id: 'e', pwi: '😀1' },
  { id: 'f', pwi: 'ｚ' },
];

/** Line separators other than \n: RE2 (the store's engine) treats them as ordinary characters, JS RegExp does not. */
export const LINES: readonly Doc[] = [
  { id: 'l1', extra: { note: 'x\u2028y' } },
  { id: 'l2', extra: { note: 'x\ry' } },
  { id: 'l3', extra: { note: 'x\ny' } },
];

/** Strings for regex flags. */
export const TEXTS: readonly Doc[] = [
  { id: 't1', extra: { note: 'a\nb' } },
  { id: 't2', extra: { note: 'axb' } },
  { id: 't3', extra: { note: 'first\nx\nlast' } },
  { id: 't4', extra: { note: ['zzz', 'x'] } },
  { id: 't5', extra: { note: 42 } },
  { id: 't6', extra: { note: 'X' } },
  { id: 't7', extra: { note: 'whale' } },
  { id: 't8', extra: { note: 'Wren' } },
];

const MIXED_ASC = ['m6', 'm7', 'm11', 'm1', 'm2', 'm3', 'm15', 'm10', 'm12', 'm9', 'm14', 'm8', 'm13', 'm5', 'm4'];

export const CASES: readonly QueryCase[] = [
  // ---- equality on typed fields
  { name: 'empty query: every document in insertion order', docs: WELLS, query: {}, expected: ['w1', 'w2', 'w3', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'plain string value is eq', docs: WELLS, query: { basinName: 'Permian' }, expected: ['w1', 'w3'], mingo: 'agrees' },
  { name: 'operator name EQ (upper case)', docs: WELLS, query: { basinName: { EQ: 'Permian' } }, expected: ['w1', 'w3'], mingo: 'agrees' },
  { name: 'operator name Eq (v1 style)', docs: WELLS, query: { basinName: { Eq: 'Bakken' } }, expected: ['w2'], mingo: 'agrees' },
  { name: 'eq on Int32', docs: WELLS, query: { fracStages: 20 }, expected: ['w1'], mingo: 'agrees' },
  { name: 'eq on a quantity: 9000.0 equals stored 9000', docs: WELLS, query: { lateralLength: { eq: 9000.0 } }, expected: ['w2'], mingo: 'agrees' },
  { name: 'eq null matches null and missing', docs: WELLS, query: { fracStages: null }, expected: ['w3', 'w5'], mingo: 'agrees' },
  { name: 'ne null matches present values', docs: WELLS, query: { fracStages: { ne: null } }, expected: ['w1', 'w2', 'w4'], mingo: 'agrees' },
  { name: 'ne matches missing fields', docs: WELLS, query: { basinName: { ne: 'Permian' } }, expected: ['w2', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'plain array is in', docs: WELLS, query: { basinName: ['Bakken', 'Eagle Ford'] }, expected: ['w2', 'w4'], mingo: 'agrees' },
  { name: 'in with null matches missing', docs: WELLS, query: { basinName: { in: ['Bakken', null] } }, expected: ['w2', 'w5'], mingo: 'agrees' },
  { name: 'in [] matches nothing', docs: WELLS, query: { basinName: { in: [] } }, expected: [], mingo: 'agrees' },
  { name: 'fields are ANDed; In (v1 style)', docs: WELLS, query: { basinName: { In: ['Permian'] }, fracStages: { gte: 20 } }, expected: ['w1'], mingo: 'agrees' },
  { name: 'eq and ne on one field together', docs: WELLS, query: { basinName: { ne: 'Bakken', in: ['Bakken', 'Permian'] } }, expected: ['w1', 'w3'], mingo: 'agrees' },

  // ---- comparisons on typed fields
  { name: 'gt skips null and missing', docs: WELLS, query: { fracStages: { gt: 10 } }, expected: ['w1', 'w4'], mingo: 'agrees' },
  { name: 'gt null matches nothing', docs: WELLS, query: { fracStages: { gt: null } }, expected: [] },
  { name: 'lt null matches nothing, on an untyped path too', docs: WELLS, query: { 'extra.score': { lt: null } }, expected: [] },
  { name: 'gte null is eq null: null and missing', docs: WELLS, query: { fracStages: { gte: null } }, expected: ['w3', 'w5'] },
  { name: 'lte null on an untyped path: null and missing', docs: WELLS, query: { 'extra.score': { lte: null } }, expected: ['w5'] },
  { name: 'Gt and lte together', docs: WELLS, query: { fracStages: { Gt: 10, lte: 20 } }, expected: ['w1'], mingo: 'agrees' },
  { name: 'lt', docs: WELLS, query: { fracStages: { lt: 20 } }, expected: ['w2'], mingo: 'agrees' },
  { name: 'gte with LT (upper case)', docs: WELLS, query: { fracStages: { gte: 10, LT: 35 } }, expected: ['w1', 'w2'], mingo: 'agrees' },
  { name: 'gt on a double', docs: WELLS, query: { lateralLength: { gt: 7500 } }, expected: ['w1', 'w2'], mingo: 'agrees' },
  { name: 'gt on strings: UTF-8 byte order (p > Q > P)', docs: WELLS, query: { pwi: { gt: 'P-002' } }, expected: ['w3', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'lt on strings: lower case sorts after upper case', docs: WELLS, query: { pwi: { lt: 'Q' } }, expected: ['w1', 'w2'], mingo: 'agrees' },

  // ---- booleans
  { name: 'eq true on Boolean', docs: WELLS, query: { isVirtual: true }, expected: ['w2'], mingo: 'agrees' },
  { name: 'eq false on Boolean', docs: WELLS, query: { isVirtual: false }, expected: ['w1', 'w4'], mingo: 'agrees' },
  { name: 'ne true matches false and missing', docs: WELLS, query: { isVirtual: { ne: true } }, expected: ['w1', 'w3', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'gt false on booleans', docs: WELLS, query: { isVirtual: { gt: false } }, expected: ['w2'], mingo: 'agrees' },
  { name: 'untyped: 1 does not match true', docs: WELLS, query: { 'extra.score': 1 }, expected: ['w4'], mingo: 'agrees' },
  { name: 'untyped: true does not match 1', docs: WELLS, query: { 'extra.score': true }, expected: ['w3'], mingo: 'agrees' },
  { name: 'untyped: 3 does not match "3"', docs: WELLS, query: { 'extra.score': 3 }, expected: ['w1'], mingo: 'agrees' },
  { name: 'untyped: "3" does not match 3', docs: WELLS, query: { 'extra.score': '3' }, expected: ['w2'], mingo: 'agrees' },
  { name: 'untyped: gte 1 compares numbers only', docs: WELLS, query: { 'extra.score': { gte: 1 } }, expected: ['w1', 'w4'], mingo: 'agrees' },
  { name: 'untyped: gt "" compares strings only', docs: WELLS, query: { 'extra.score': { gt: '' } }, expected: ['w2'], mingo: 'agrees' },
  { name: 'untyped: gte false compares booleans only', docs: WELLS, query: { 'extra.score': { gte: false } }, expected: ['w3'], mingo: 'agrees' },
  { name: 'untyped: eq null matches a null value', docs: WELLS, query: { 'extra.score': null }, expected: ['w5'], mingo: 'agrees' },
  { name: 'untyped: eq null matches missing keys', docs: WELLS, query: { 'extra.source': null }, expected: ['w3', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'untyped: ne 3 keeps "3", true, 1, null', docs: WELLS, query: { 'extra.score': { ne: 3 } }, expected: ['w2', 'w3', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'untyped: ne keeps documents missing the key', docs: WELLS, query: { 'extra.source': { ne: 'ihs' } }, expected: ['w2', 'w3', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'untyped: ne a number keeps documents missing the key', docs: WELLS, query: { 'extra.meta.j': { ne: 0 } }, expected: ['w1', 'w2', 'w4', 'w5'], mingo: 'agrees' },
  {
    name: 'untyped: in with many values (bound list)',
    docs: WELLS,
    query: { 'extra.score': { in: [100, 101, 102, 103, 104, 105, 106, 107, '3', true, null, [1], { k: 1 }] } },
    expected: ['w2', 'w3', 'w5'],
    mingo: 'agrees',
  },
  { name: 'untyped: ne with many-valued in on one path', docs: WELLS, query: { 'extra.tags': { in: ['z1', 'z2', 'z3', 'z4', 'z5', 'z6', 'z7', 'z8', 'b', 'a'], ne: 'b' } }, expected: ['w4'], mingo: 'agrees' },
  { name: 'untyped: in mixes types exactly', docs: WELLS, query: { 'extra.score': { in: [3, true] } }, expected: ['w1', 'w3'], mingo: 'agrees' },

  // ---- arrays
  { name: 'array field: eq matches an element', docs: WELLS, query: { groups: 'south' }, expected: ['w2'], mingo: 'agrees' },
  { name: 'array field: eq with an array matches the whole array', docs: WELLS, query: { groups: { eq: ['north', 'gas'] } }, expected: ['w1'], mingo: 'agrees' },
  { name: 'array field: whole-array eq is order-sensitive', docs: WELLS, query: { groups: { eq: ['gas', 'north'] } }, expected: [], mingo: 'agrees' },
  { name: 'array field: in matches any element', docs: WELLS, query: { groups: { in: ['gas', 'south'] } }, expected: ['w1', 'w2'], mingo: 'agrees' },
  { name: 'array field: in with an array operand matches the whole array', docs: WELLS, query: { groups: { in: [['south'], 'x'] } }, expected: ['w2'], mingo: { differs: 'mingo $in does not match a whole-array element; MongoDB does' } },
  { name: 'array field: eq [] matches the empty array', docs: WELLS, query: { groups: { eq: [] } }, expected: ['w3'], mingo: 'agrees' },
  { name: 'array field: eq null matches missing, not []', docs: WELLS, query: { groups: null }, expected: ['w4', 'w5'], mingo: 'agrees' },
  { name: 'array field: ne an element excludes arrays holding it', docs: WELLS, query: { groups: { ne: 'north' } }, expected: ['w2', 'w3', 'w4', 'w5'], mingo: 'agrees' },
  { name: 'untyped: eq matches an element or the scalar', docs: WELLS, query: { 'extra.tags': 'a' }, expected: ['w1', 'w4'], mingo: 'agrees' },
  {
    name: 'eq null matches arrays holding null, and missing; not [] or arrays without null',
    docs: [{ id: 'n1', extra: { v: [1, null] } }, { id: 'n2', extra: { v: [1] } }, { id: 'n3', extra: { v: [] } }, { id: 'n4', extra: {} }],
    query: { 'extra.v': null },
    expected: ['n1', 'n4'],
    mingo: 'agrees',
  },
  { name: 'untyped: regex tests array elements', docs: WELLS, query: { 'extra.tags': { regex: '^b$' } }, expected: ['w1', 'w2'], mingo: 'agrees' },
  { name: 'numeric segment indexes an array', docs: WELLS, query: { 'groups.0': 'north' }, expected: ['w1'], mingo: 'agrees' },
  { name: 'numeric segment then regex', docs: WELLS, query: { 'groups.1': { regex: 'a' } }, expected: ['w1'], mingo: 'agrees' },
  { name: 'numeric segment inside an untyped value', docs: WELLS, query: { 'extra.tags.1': 'b' }, expected: ['w1'], mingo: 'agrees' },
  { name: 'numeric segment past the end (an empty array included) yields no value: eq null', docs: WELLS, query: { 'groups.0': null }, expected: ['w4', 'w5'] },
  { name: 'numeric segment far past the end: eq null', docs: WELLS, query: { 'groups.7': null }, expected: ['w4', 'w5'] },
  { name: 'numeric segment past the end: ne null keeps it', docs: WELLS, query: { 'groups.0': { ne: null } }, expected: ['w1', 'w2', 'w3'] },
  { name: 'numeric segment past the end inside an untyped value', docs: ITEMS, query: { 'extra.items.5.sku': null }, expected: ['i3'] },

  // ---- nested objects
  { name: 'nested path through objects', docs: WELLS, query: { 'extra.meta.k': 1 }, expected: ['w1', 'w3'], mingo: 'agrees' },
  { name: 'whole-object eq', docs: WELLS, query: { 'extra.meta': { eq: { k: 1 } } }, expected: ['w1'], mingo: 'agrees' },
  { name: 'whole-object eq: key order matters (no match)', docs: WELLS, query: { 'extra.meta': { eq: { j: 0, k: 1 } } }, expected: [], mingo: { differs: 'mingo ignores key order in object equality; MongoDB does not' } },
  { name: 'whole-object eq: same key order matches', docs: WELLS, query: { 'extra.meta': { eq: { k: 1, j: 0 } } }, expected: ['w3'], mingo: 'agrees' },
  { name: 'path under a null object is missing', docs: WELLS, query: { 'extra.meta.k': null }, expected: ['w4', 'w5'], mingo: 'agrees' },
  { name: 'eq null on an object path', docs: WELLS, query: { 'extra.meta': null }, expected: ['w4', 'w5'], mingo: 'agrees' },

  // ---- arrays of objects
  { name: 'path through an array of objects (and a plain object)', docs: ITEMS, query: { 'extra.items.sku': 'x' }, expected: ['i1', 'i3', 'i6'], mingo: 'agrees' },
  { name: 'gt through an array of objects', docs: ITEMS, query: { 'extra.items.qty': { gt: 4 } }, expected: ['i1', 'i3'], mingo: 'agrees' },
  { name: 'leaf array elements are tested after traversal', docs: ITEMS, query: { 'extra.items.qty': 4 }, expected: ['i6'], mingo: 'agrees' },
  { name: 'eq null: an element lacking the key, or a scalar element; not an empty array', docs: ITEMS, query: { 'extra.items.qty': null }, expected: ['i4'], mingo: { differs: 'mingo: no match for an element lacking the key' } },
  { name: 'ne null through arrays of objects', docs: ITEMS, query: { 'extra.items.qty': { ne: null } }, expected: ['i1', 'i2', 'i3', 'i5', 'i6'], mingo: { differs: 'mingo: i4 matches (see eq null)' } },
  { name: 'numeric segment then field', docs: ITEMS, query: { 'extra.items.0.sku': 'y' }, expected: ['i2'], mingo: 'agrees' },
  { name: 'eq an object matches an element', docs: ITEMS, query: { 'extra.items': { eq: { sku: 'y', qty: 2 } } }, expected: ['i2'], mingo: 'agrees' },
  { name: 'in through arrays of objects', docs: ITEMS, query: { 'extra.items.qty': { in: [2, 9] } }, expected: ['i2', 'i3'], mingo: 'agrees' },
  { name: 'two paths into one array need not hit the same element', docs: ITEMS, query: { 'extra.items.sku': 'x', 'extra.items.qty': 5 }, expected: ['i1'], mingo: 'agrees' },

  // ---- mixed types in one untyped field (strict: false)
  { name: 'unknown field: 1 matches numbers and array elements only', docs: MIXED, strict: false, query: { u: 1 }, expected: ['m1', 'm8'], mingo: 'agrees' },
  { name: 'unknown field: eq 1.0 equals 1', docs: MIXED, strict: false, query: { u: { eq: 1.0 } }, expected: ['m1', 'm8'], mingo: 'agrees' },
  { name: 'unknown field: lt 2 compares numbers only', docs: MIXED, strict: false, query: { u: { lt: 2 } }, expected: ['m1', 'm2', 'm8', 'm11'], mingo: 'agrees' },
  { name: 'unknown field: gte "a" by UTF-8 bytes', docs: MIXED, strict: false, query: { u: { gte: 'a' } }, expected: ['m8', 'm10', 'm12'], mingo: 'agrees' },
  { name: 'unknown field: lt "a" by UTF-8 bytes', docs: MIXED, strict: false, query: { u: { lt: 'a' } }, expected: ['m3', 'm15'], mingo: 'agrees' },
  { name: 'unknown field: false is not 0', docs: MIXED, strict: false, query: { u: false }, expected: ['m5'], mingo: 'agrees' },
  { name: 'unknown field: 0 is not false', docs: MIXED, strict: false, query: { u: 0 }, expected: ['m11'], mingo: 'agrees' },
  { name: 'unknown field: eq null matches null and missing only', docs: MIXED, strict: false, query: { u: null }, expected: ['m6', 'm7'], mingo: 'agrees' },
  { name: 'unknown field: eq {} matches the empty object', docs: MIXED, strict: false, query: { u: { eq: {} } }, expected: ['m14'], mingo: 'agrees' },
  { name: 'unknown field: eq [] matches the empty array', docs: MIXED, strict: false, query: { u: { eq: [] } }, expected: ['m13'], mingo: 'agrees' },
  { name: 'unknown field: gt false', docs: MIXED, strict: false, query: { u: { gt: false } }, expected: ['m4'], mingo: 'agrees' },

  // ---- sorting
  { name: 'sort across types ascending', docs: MIXED, strict: false, query: {}, options: { sortBy: 'u', sortOrder: 1 }, expected: MIXED_ASC },
  {
    name: 'sort across types descending, null/missing last in insertion order',
    docs: MIXED, strict: false, query: {}, options: { sortBy: 'u', sortOrder: -1 },
    expected: ['m4', 'm5', 'm13', 'm8', 'm14', 'm9', 'm12', 'm10', 'm15', 'm3', 'm2', 'm1', 'm11', 'm6', 'm7'],
  },
  { name: 'sortOrder defaults to 1', docs: MIXED, strict: false, query: {}, options: { sortBy: 'u' }, expected: MIXED_ASC },
  { name: 'sorted page with total', docs: MIXED, strict: false, query: {}, options: { sortBy: 'u', limit: 3, skip: 2 }, expected: ['m11', 'm1', 'm2'], total: 15 },
  { name: 'sort string field ascending: missing first, ties by insertion', docs: WELLS, query: {}, options: { sortBy: 'basinName', sortOrder: 1 }, expected: ['w5', 'w2', 'w4', 'w1', 'w3'] },
  { name: 'sort string field descending: ties still ascending, missing last', docs: WELLS, query: {}, options: { sortBy: 'basinName', sortOrder: -1 }, expected: ['w1', 'w3', 'w4', 'w2', 'w5'] },
  { name: 'sort Int32 descending: null and missing last', docs: WELLS, query: {}, options: { sortBy: 'fracStages', sortOrder: -1 }, expected: ['w4', 'w1', 'w2', 'w3', 'w5'] },
  { name: 'sort Int32 ascending: null and missing first, tied', docs: WELLS, query: {}, options: { sortBy: 'fracStages', sortOrder: 1 }, expected: ['w3', 'w5', 'w2', 'w1', 'w4'] },
  { name: 'sort DateTime ascending', docs: WELLS, query: {}, options: { sortBy: 'spudDate' }, expected: ['w5', 'w2', 'w3', 'w1', 'w4'] },
  { name: 'sort Boolean descending', docs: WELLS, query: {}, options: { sortBy: 'isVirtual', sortOrder: -1 }, expected: ['w2', 'w1', 'w4', 'w3', 'w5'] },
  { name: 'sortOrder 0: insertion order', docs: WELLS, query: {}, options: { sortBy: 'fracStages', sortOrder: 0 }, expected: ['w1', 'w2', 'w3', 'w4', 'w5'] },
  { name: 'sort an untyped path across types', docs: WELLS, query: {}, options: { sortBy: 'extra.score' }, expected: ['w5', 'w4', 'w1', 'w2', 'w3'] },
  { name: 'sort an array field by JSON text', docs: WELLS, query: {}, options: { sortBy: 'groups' }, expected: ['w4', 'w5', 'w1', 'w2', 'w3'] },
  { name: 'sort by a numeric-segment path', docs: WELLS, query: {}, options: { sortBy: 'extra.tags.0', sortOrder: -1 }, expected: ['w2', 'w1', 'w3', 'w4', 'w5'] },
  { name: 'filter, sort and limit: total counts every match', docs: WELLS, query: { basinName: 'Permian' }, options: { sortBy: 'fracStages', sortOrder: -1, limit: 1 }, expected: ['w1'], total: 2 },

  // ---- paging
  { name: 'limit and skip without sort', docs: WELLS, query: {}, options: { limit: 2, skip: 1 }, expected: ['w2', 'w3'], total: 5, mingo: 'agrees' },
  { name: 'skip past the end: empty page, full total', docs: WELLS, query: {}, options: { skip: 9 }, expected: [], total: 5, mingo: 'agrees' },
  { name: 'limit 0 means no limit', docs: WELLS, query: { fracStages: { gte: 0 } }, options: { limit: 0 }, expected: ['w1', 'w2', 'w4'], mingo: 'agrees' },

  // ---- dates (operands normalised: M/D/YYYY, YYYY-MM-DD, ISO with and without zone, Date)
  { name: 'date M/D/YYYY', docs: WELLS, query: { spudDate: '3/14/2021' }, expected: ['w1'], mingo: 'agrees' },
  { name: 'date YYYY-MM-DD', docs: WELLS, query: { spudDate: '2021-03-14' }, expected: ['w1'], mingo: 'agrees' },
  { name: 'date ISO without zone is UTC', docs: WELLS, query: { spudDate: '2021-03-14T00:00:00' }, expected: ['w1'], mingo: 'agrees' },
  { name: 'date ISO with Z and ms', docs: WELLS, query: { spudDate: '2021-03-14T00:00:00.000Z' }, expected: ['w1'], mingo: 'agrees' },
  { name: 'date ISO with offset', docs: WELLS, query: { spudDate: '2021-03-13T19:00:00-05:00' }, expected: ['w1'], mingo: 'agrees' },
  { name: 'date range in two forms', docs: WELLS, query: { spudDate: { gte: '1/1/2020', lt: '2022-03-01' } }, expected: ['w1', 'w3'], mingo: 'agrees' },
  { name: 'date stored with an offset crosses into March', docs: WELLS, query: { spudDate: { gte: '2022-03-01' } }, expected: ['w4'], mingo: 'agrees' },
  { name: 'date operand with an offset', docs: WELLS, query: { spudDate: { lt: '2022-02-28T19:00:00-06:00' } }, expected: ['w1', 'w2', 'w3', 'w4'], mingo: 'agrees' },
  { name: 'date in with mixed forms', docs: WELLS, query: { spudDate: { in: ['1/1/2019', '2020-06-30T12:00:00.000Z'] } }, expected: ['w2', 'w3'], mingo: 'agrees' },
  { name: 'date as a Date object', docs: WELLS, query: { spudDate: new Date('2019-01-01T00:00:00Z') }, expected: ['w2'], mingo: 'agrees' },
  { name: 'date eq null', docs: WELLS, query: { spudDate: null }, expected: ['w5'], mingo: 'agrees' },
  { name: 'date ne matches missing', docs: WELLS, query: { spudDate: { ne: '2019-01-01' } }, expected: ['w1', 'w3', 'w4', 'w5'], mingo: 'agrees' },

  // ---- regex
  { name: 'regex pattern string', docs: WELLS, query: { pwi: { regex: '^P' } }, expected: ['w1', 'w2'], mingo: 'agrees' },
  { name: 'regex /^p/i', docs: WELLS, query: { pwi: { regex: '/^p/i' } }, expected: ['w1', 'w2', 'w3'] },
  { name: 'regex RegExp object with i', docs: WELLS, query: { pwi: { regex: /^p-00[13]$/i } }, expected: ['w1', 'w3'] },
  { name: 'Regex (capitalised) operator', docs: WELLS, query: { pwi: { Regex: '00' } }, expected: ['w1', 'w2', 'w3', 'w4', 'w5'] },
  { name: 'regex on a DateTime field tests its ISO text', docs: WELLS, query: { spudDate: { regex: '^2022-03-01T00:30' } }, expected: ['w4'] },
  { name: 'regex alternation on a String field: ^a|b', docs: PWIS, query: { pwi: { regex: '^a|b' } }, expected: ['a', 'b'], mingo: 'agrees' },
  { name: 'regex alternation on a String field: ^a$|xb', docs: PWIS, query: { pwi: { regex: '^a$|xb' } }, expected: ['b'], mingo: 'agrees' },
  { name: 'regex anchored literal prefix with a quantifier', docs: PWIS, query: { pwi: { regex: '^P{2}' } }, expected: ['d'], mingo: 'agrees' },
  { name: 'regex anchored non-ASCII prefix', docs: PWIS, query: { pwi: { regex: '^Pé' } }, expected: ['c'], mingo: 'agrees' },
  { name: 'regex anchored astral prefix', docs: PWIS, query: { pwi: { regex: '^😀' } }, expected: ['e'], mingo: 'agrees' },
  { name: 'strings compare by UTF-8 bytes: astral above ｚ (UTF-16 says below)', docs: PWIS, query: { pwi: { gt: 'ｚ' } }, expected: ['e'] },
  { name: 'sort strings by UTF-8 bytes', docs: PWIS, query: {}, options: { sortBy: 'pwi' }, expected: ['d', 'c', 'a', 'b', 'f', 'e'] },
  { name: 'regex /a.b/s: dot matches newline', docs: TEXTS, query: { 'extra.note': { regex: '/a.b/s' } }, expected: ['t1', 't2'] },
  { name: 'regex a.b without s: dot does not match newline', docs: TEXTS, query: { 'extra.note': { regex: 'a.b' } }, expected: ['t2'] },
  { name: 'regex /^x$/m: anchors at lines', docs: TEXTS, query: { 'extra.note': { regex: '/^x$/m' } }, expected: ['t3', 't4'] },
  { name: 'regex ^x$ without m', docs: TEXTS, query: { 'extra.note': { regex: '^x$' } }, expected: ['t4'] },
  { name: 'regex /^x$/im', docs: TEXTS, query: { 'extra.note': { regex: '/^x$/im' } }, expected: ['t3', 't4', 't6'] },
  { name: 'regex /^w/i', docs: TEXTS, query: { 'extra.note': { regex: '/^w/i' } }, expected: ['t7', 't8'] },
  { name: 'regex RegExp /^w/i', docs: TEXTS, query: { 'extra.note': { regex: /^w/i } }, expected: ['t7', 't8'] },
  { name: 'regex RegExp: g flag dropped', docs: TEXTS, query: { 'extra.note': { regex: /^W/g } }, expected: ['t8'] },
  { name: 'RE2: . matches \\r and U+2028 (only \\n needs s)', docs: LINES, query: { 'extra.note': { regex: '^x.y$' } }, expected: ['l1', 'l2'] },
  { name: 'RE2: /^x$/m breaks lines only at \\n', docs: LINES, query: { 'extra.note': { regex: '/^x$/m' } }, expected: ['l3'] },
  { name: 'regex never matches numbers', docs: TEXTS, query: { 'extra.note': { regex: '4' } }, expected: [] },
  { name: 'regex and ne on one path', docs: TEXTS, query: { 'extra.note': { regex: '/a.b/s', ne: 'axb' } }, expected: ['t1'] },

  // ---- regressions: shrunk counterexamples of test/query.property.test.ts
  {
    name: 'regression: ne a whole array keeps documents missing the field',
    docs: [{ id: 'd0', pwi: 'éP-', groups: ['gas', 'B'] }, { id: 'd1', pwi: '-p1P', groups: ['B', 'B', 'north'] }, { id: 'd2', pwi: 'Q' }],
    query: { groups: { ne: ['gas', 'B'] } },
    expected: ['d1', 'd2'],
    mingo: 'agrees',
  },
  {
    // Shrunk by hand from a strict:false property counterexample: the evaluator's JS `.` refused U+2028, RE2's does not.
    name: 'regression: regex . on an array element holding U+2028, ANDed with whole-object in',
    docs: [
      { id: 'd0', pwi: 'A', extra: { a: { c: 0, a: {} }, b: { a: ['\u2028', {}, true] } } },
      { id: 'd1', pwi: 'B', extra: { a: { c: 0, a: {} }, b: { a: [{}, true] } } },
    ],
    query: { 'extra.a': [{ c: 0, a: {} }], 'extra.b.a': { regex: '.' } },
    expected: ['d0'],
  },
];

export const ERROR_CASES: readonly ErrorCase[] = [
  { name: 'string operand to gt on Int32', query: { fracStages: { gt: 'abc' } }, code: 'INVALID_QUERY', field: 'fracStages.gt', message: ['query.fracStages.gt', 'expected a number', '"abc"'] },
  { name: 'boolean operand to gt on Int32', query: { fracStages: { gt: true } }, code: 'INVALID_QUERY', field: 'fracStages.gt', message: ['query.fracStages.gt', 'expected a number'] },
  { name: 'string eq on Int32', query: { fracStages: 'abc' }, code: 'INVALID_QUERY', field: 'fracStages', message: ['query.fracStages', 'expected a number'] },
  { name: 'number eq on Boolean', query: { isVirtual: 1 }, code: 'INVALID_QUERY', field: 'isVirtual', message: ['query.isVirtual', 'expected a boolean'] },
  { name: 'number eq on String', query: { pwi: 5 }, code: 'INVALID_QUERY', field: 'pwi', message: ['query.pwi', 'expected a string'] },
  { name: 'in element of the wrong kind', query: { fracStages: { in: [1, 'two'] } }, code: 'INVALID_QUERY', field: 'fracStages.in[1]', message: ['query.fracStages.in[1]', 'expected a number'] },
  { name: 'not a date', query: { spudDate: { gte: 'yesterday' } }, code: 'INVALID_QUERY', field: 'spudDate.gte', message: ['query.spudDate.gte', '"yesterday"'] },
  { name: 'impossible date', query: { spudDate: '2/30/2024' }, code: 'INVALID_QUERY', field: 'spudDate', message: ['query.spudDate: 2/30/2024 is not a date: February 2024 has 29 days'] },
  { name: 'impossible ISO date in an operand', query: { spudDate: { lt: '2023-02-29T10:00:00Z' } }, code: 'INVALID_QUERY', field: 'spudDate.lt', message: ['query.spudDate.lt: 2023-02-29T10:00:00Z is not a date: February 2023 has 28 days'] },
  { name: 'unknown field with a hint', query: { basinNme: 'Permian' }, code: 'UNKNOWN_FIELD', field: 'basinNme', message: ['basinNme', 'did you mean', 'basinName'] },
  { name: 'unknown operator', query: { fracStages: { greater: 1 } }, code: 'INVALID_QUERY', field: 'fracStages.greater', message: ['unknown operator "greater"'] },
  { name: 'undefined as a value', query: { pwi: undefined }, code: 'INVALID_QUERY', field: 'pwi', message: ['query.pwi', 'use null'] },
  { name: 'undefined as an operand', query: { fracStages: { gt: undefined } }, code: 'INVALID_QUERY', field: 'fracStages.gt', message: ['query.fracStages.gt', 'use null'] },
  { name: 'undefined in an in list', query: { pwi: { in: ['a', undefined] } }, code: 'INVALID_QUERY', field: 'pwi.in[1]', message: ['query.pwi.in[1]', 'use null'] },
  { name: 'Mongo $gt', query: { fracStages: { $gt: 1 } }, code: 'INVALID_QUERY', field: 'fracStages.$gt', message: ['"$gt"', 'use gt'] },
  { name: 'Mongo $or', query: { $or: [{ pwi: 'a' }, { pwi: 'b' }] }, code: 'INVALID_QUERY', field: '$or', message: ['OR is not supported', 'run two queries'] },
  { name: 'Mongo $and', query: { $and: [{ pwi: 'a' }] }, code: 'INVALID_QUERY', field: '$and', message: ['ANDed already'] },
  { name: 'path longer than the bound', query: { [`extra.${'a'.repeat(300)}`]: 1 }, code: 'INVALID_QUERY', field: `extra.${'a'.repeat(55)}...`, message: ['at most 256 characters'] },
  { name: 'too many conditions', query: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`extra.k${i}`, i])), code: 'INVALID_QUERY', field: undefined, message: ['at most 256 conditions, got 257'] },
  { name: 'polygon with too many positions', query: { surfaceLoc: { polygon: [[...Array.from({ length: 10_001 }, (_, i) => [i / 1e4, Math.sin(i) / 10]), [0, Math.sin(0) / 10]]] } }, code: 'INVALID_QUERY', field: 'surfaceLoc.polygon', message: ['at most 10000 positions, got 10002'] },
  { name: 'regex longer than the bound', query: { pwi: { regex: 'a'.repeat(5000) } }, code: 'INVALID_QUERY', field: 'pwi.regex', message: ['at most 4096 characters'] },
  { name: 'array operand to lt', query: { 'extra.x': { lt: [1] } }, code: 'INVALID_QUERY', field: 'extra.x.lt', message: ['query.extra.x.lt', 'an array'] },
  { name: 'object operand to gte', query: { 'extra.x': { gte: { a: 1 } } }, code: 'INVALID_QUERY', field: 'extra.x.gte', message: ['query.extra.x.gte', 'an object'] },
  { name: 'empty operator object', query: { fracStages: {} }, code: 'INVALID_QUERY', field: 'fracStages', message: ['query.fracStages', 'empty condition'] },
  { name: 'dotted path under a scalar field', query: { 'pwi.x': 'a' }, code: 'INVALID_QUERY', field: 'pwi.x', message: ['query.pwi.x', '"pwi" is a String'] },
  { name: 'regex with a backreference (not RE2)', query: { pwi: { regex: '(a)\\1' } }, code: 'INVALID_QUERY', field: 'pwi.regex', message: ['query.pwi.regex', 'invalid regex'] },
  { name: 'regex with lookahead (not RE2)', query: { 'extra.note': { regex: 'a(?=b)' } }, code: 'INVALID_QUERY', field: 'extra.note.regex', message: ['query.extra.note.regex', 'invalid regex'] },
  { name: 'regex with an unsupported flag', query: { pwi: { regex: '/a/g' } }, code: 'INVALID_QUERY', field: 'pwi.regex', message: ['unsupported regex flag "g"'] },
  { name: 'regex on a Boolean field', query: { isVirtual: { regex: 'x' } }, code: 'INVALID_QUERY', field: 'isVirtual.regex', message: ['regex tests strings'] },
  { name: 'in without an array', query: { fracStages: { in: 5 } }, code: 'INVALID_QUERY', field: 'fracStages.in', message: ['in takes an array'] },
  { name: 'negative limit', query: {}, options: { limit: -1 }, code: 'INVALID_REQUEST', field: 'options.limit', message: ['options.limit', 'non-negative integer'] },
  { name: 'non-integer skip', query: {}, options: { skip: 1.5 }, code: 'INVALID_REQUEST', field: 'options.skip', message: ['options.skip'] },
  { name: 'bad sortOrder', query: {}, options: { sortBy: 'pwi', sortOrder: 2 }, code: 'INVALID_REQUEST', field: 'options.sortOrder', message: ['options.sortOrder'] },
  { name: 'unknown sortBy field', query: {}, options: { sortBy: 'basinNam' }, code: 'UNKNOWN_FIELD', field: 'basinNam', message: ['options.sortBy', 'did you mean', 'basinName'] },
];
