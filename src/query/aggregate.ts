/**
 * Aggregate, count and distinct requests → frozen summary plans: the options checked against the catalogue (group
 * keys, date buckets, metrics and the kinds they take, sort keys, paging), the query's conditions the parser's own.
 */
import { didYouMean } from '../catalogue/index.js';
import type { Category } from '../catalogue/kinds.js';
import { describe, isPlainObject } from '../catalogue/validate.js';
import { collect, requestError, RequestError, type EnvelopeError } from '../envelope.js';
import { LIMITS, shown } from '../limits.js';
import type { Condition, FieldPath } from './ast.js';
import { decodeCursor, shapeOf } from './cursor.js';
import { includeDeletedOf, nonNegativeInt, optionsOf, parseFieldPath, parseQuery, type ParseContext } from './parse.js';

export const INTERVALS = ['day', 'week', 'month', 'quarter', 'year'] as const;
/** A date bucket's width (UTC; weeks start on Monday). */
export type Interval = (typeof INTERVALS)[number];

export const METRICS = ['sum', 'avg', 'min', 'max', 'count', 'countDistinct'] as const;
export type MetricFn = (typeof METRICS)[number];

/** One group key: a field path's value, or the bucket of a date field; `name` is its key in every row. */
export interface GroupKey {
  readonly name: string;
  readonly path: FieldPath;
  readonly interval: Interval | null;
}

/** One metric: a function over a field path's values (null: `count: '*'`, every document of the group). */
export interface Metric {
  readonly name: string;
  readonly fn: MetricFn;
  readonly path: FieldPath | null;
}

/** One sort key of the rows: a group key or a metric, by its name. */
export interface SummarySort {
  readonly name: string;
  readonly order: 1 | -1;
}

/** The conditions every summary runs on (the query's, scoped to live documents by the façade). */
interface Scoped {
  readonly conditions: readonly Condition[];
  readonly includeDeleted: boolean;
  readonly issues: readonly string[];
}

/** `store.aggregate`: rows of group keys and metrics, sorted and paged; `total` counts the groups. */
export interface AggregatePlan extends Scoped {
  readonly kind: 'aggregate';
  readonly groups: readonly GroupKey[];
  readonly metrics: readonly Metric[];
  /** The rows' order: these keys, then every group key ascending (groups are unique by their keys). */
  readonly sort: readonly SummarySort[];
  readonly limit: number;
  readonly skip: number;
  /** The digest of the request a cursor of its answer continues (see cursor.ts). */
  readonly shape: string;
}

/** `store.count`: the number of matches. */
export interface CountPlan extends Scoped {
  readonly kind: 'count';
}

/** `store.distinct`: the values of a path over the matches, arrays unwound, in sort order. */
export interface DistinctPlan extends Scoped {
  readonly kind: 'distinct';
  readonly path: FieldPath;
}

export type SummaryPlan = AggregatePlan | CountPlan | DistinctPlan;

const OPTION_KEYS = ['groupBy', 'metrics', 'sortBy', 'sortOrder', 'limit', 'skip', 'cursor', 'includeDeleted'];
const NUMERIC: ReadonlySet<Category> = new Set(['int32', 'int64', 'number']);
const ORDERED: ReadonlySet<Category> = new Set(['int32', 'int64', 'number', 'date', 'string']);

function bad(field: string, message: string): RequestError {
  return requestError('INVALID_REQUEST', `${field}: ${message}`, { field });
}

/** A top-level field of one of `categories`, exactly (no deeper path): what a typed metric or a bucket needs. */
function typedField(path: FieldPath, categories: ReadonlySet<Category>): boolean {
  return path.scalar && categories.has(path.field!.category);
}

function parseGroupBy(ctx: ParseContext, v: unknown): GroupKey[] {
  if (v === undefined || v === null) return [];
  const items = Array.isArray(v) ? v : [v];
  if (items.length > LIMITS.groupKeys) throw bad('options.groupBy', `at most ${LIMITS.groupKeys} group keys, got ${items.length}`);
  const out: GroupKey[] = [];
  items.forEach((item: unknown, i) => {
    const label = `options.groupBy[${i}]`;
    if (typeof item === 'string') {
      out.push({ name: item, path: parseFieldPath(ctx, item, label), interval: null });
      return;
    }
    if (!isPlainObject(item)) throw bad(label, `expected a field path or { field, interval }, got ${describe(item)}`);
    for (const key of Object.keys(item)) {
      if (key !== 'field' && key !== 'interval') throw bad(label, `unknown key ${shown(key)}${didYouMean(key, ['field', 'interval'])}; a bucket is { field, interval }`);
    }
    const path = parseFieldPath(ctx, item.field as string, `${label}.field`);
    if (!(INTERVALS as readonly unknown[]).includes(item.interval)) {
      throw bad(`${label}.interval`, `expected one of ${INTERVALS.join(', ')}, got ${describe(item.interval)}`);
    }
    if (!typedField(path, new Set(['date']))) throw bad(`${label}.field`, `date buckets need a DateTime field; "${path.text}" is ${path.field ? `a ${path.field.kind}` : 'not a field of the type'}`);
    out.push({ name: path.text, path, interval: item.interval as Interval });
  });
  return out;
}

function parseMetrics(ctx: ParseContext, v: unknown): Metric[] {
  if (v === undefined || v === null) return [];
  if (!isPlainObject(v)) throw bad('options.metrics', `expected an object of named metrics such as { oil: { sum: 'oilVol' } }, got ${describe(v)}`);
  const entries = Object.entries(v);
  if (entries.length > LIMITS.metrics) throw bad('options.metrics', `at most ${LIMITS.metrics} metrics, got ${entries.length}`);
  return entries.map(([name, spec]) => {
    const label = `options.metrics.${name.length > 64 ? `${name.slice(0, 61)}...` : name}`;
    if (name === '' || name.length > LIMITS.nameLength) throw bad(label, `a metric name has 1 to ${LIMITS.nameLength} characters`);
    const keys = isPlainObject(spec) ? Object.keys(spec) : [];
    if (!isPlainObject(spec) || keys.length !== 1) throw bad(label, `expected one function and its field, such as { sum: 'oilVol' } or { count: '*' }, got ${describe(spec)}`);
    const fn = keys[0]!;
    if (!(METRICS as readonly string[]).includes(fn)) throw bad(label, `unknown function ${shown(fn)}${didYouMean(fn, METRICS)} (functions: ${METRICS.join(', ')})`);
    const operand = spec[fn];
    if (fn === 'count' && operand === '*') return { name, fn, path: null };
    const path = parseFieldPath(ctx, operand as string, `${label}.${fn}`);
    const kind = path.field ? `a ${path.field.kind}` : 'not a field of the type';
    if ((fn === 'sum' || fn === 'avg') && !typedField(path, NUMERIC)) throw bad(`${label}.${fn}`, `${fn} takes a numeric field (numbers and quantities); "${path.text}" is ${kind}`);
    if ((fn === 'min' || fn === 'max') && !typedField(path, ORDERED)) throw bad(`${label}.${fn}`, `${fn} takes a numeric, date or string field; "${path.text}" is ${kind}`);
    return { name, fn: fn as MetricFn, path };
  });
}

function parseSort(v: unknown, order: unknown, names: readonly string[]): SummarySort[] {
  if (v === undefined || v === null || v === '') return [];
  const keys = Array.isArray(v) ? v : [v];
  const orders = Array.isArray(order) ? order : keys.map(() => order ?? 1);
  if (orders.length !== keys.length) throw bad('options.sortOrder', `expected one order per sort key (${keys.length}), got ${orders.length}`);
  return keys.map((k: unknown, i) => {
    if (typeof k !== 'string' || !names.includes(k)) {
      const hint = typeof k === 'string' && k.length <= LIMITS.nameLength ? didYouMean(k, names) : '';
      throw bad('options.sortBy', `sorts by a group key or a metric (${names.map((n) => JSON.stringify(n)).join(', ')}), got ${describe(k)}${hint}`);
    }
    const o = orders[i];
    if (o !== 1 && o !== -1) throw bad('options.sortOrder', `expected 1 or -1, got ${describe(o)}`);
    return { name: k, order: o };
  });
}

/** The query's conditions, and `includeDeleted`. */
function scoped(ctx: ParseContext, query: unknown, includeDeleted: unknown): Scoped {
  const deleted = includeDeletedOf(includeDeleted);
  const { conditions, issues } = parseQuery(ctx, query);
  return { conditions, issues, includeDeleted: deleted };
}

/**
 * Checks an aggregate request: groupBy (paths and date buckets), metrics (functions over fields of the kinds they
 * take), sortBy/sortOrder (group keys and metrics), limit, skip and cursor. Every error of the request is reported.
 * @example parseAggregate(ctx, { prodDate: { gte: '2024-01-01' } }, { groupBy: ['pwi'], metrics: { oil: { sum: 'oilVol' } } })
 */
export function parseAggregate(ctx: ParseContext, query: unknown, options: unknown): AggregatePlan {
  const o = optionsOf(options, OPTION_KEYS);
  const errors: EnvelopeError[] = [];
  const base = collect(errors, () => scoped(ctx, query, o.includeDeleted));
  const groups = collect(errors, () => parseGroupBy(ctx, o.groupBy)) ?? [];
  const metrics = collect(errors, () => parseMetrics(ctx, o.metrics)) ?? [];
  const paging = collect(errors, () => ({ limit: nonNegativeInt('options.limit', o.limit), skip: nonNegativeInt('options.skip', o.skip) }));
  if (errors.length) throw new RequestError(errors);
  const names = [...groups.map((g) => g.name), ...metrics.map((m) => m.name)];
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw bad('options', `${shown(twice)} names two group keys or metrics; every row holds each name once`);
  if (!names.length) throw bad('options', 'name a group key (groupBy) or a metric (metrics); store.count counts the matches');
  const sort = parseSort(o.sortBy, o.sortOrder, names);
  let skip = paging!.skip;
  const continues = o.cursor !== undefined && o.cursor !== null;
  const shape = paging!.limit > 0 || continues ? shapeOf(ctx.type.name, query, [o.groupBy ?? null, o.metrics ?? null, o.sortBy ?? null], o.sortOrder) : '';
  if (continues) {
    if (skip > 0) throw bad('options.cursor', 'a cursor continues where the last page ended; it takes no skip');
    // An aggregate's cursor holds the position of the next group (its groups have no insertion order to key on).
    skip = decodeCursor(o.cursor, shape, ctx.cursorKey).seq;
  }
  return Object.freeze({ kind: 'aggregate', ...base!, groups, metrics, sort, limit: paging!.limit, skip, shape });
}

/**
 * Checks a count request: a query, and `options.includeDeleted` only.
 * @example parseCount(ctx, { basinName: 'Permian' }, undefined)
 */
export function parseCount(ctx: ParseContext, query: unknown, options: unknown): CountPlan {
  const o = optionsOf(options, ['includeDeleted']);
  return Object.freeze({ kind: 'count', ...scoped(ctx, query, o.includeDeleted) });
}

/**
 * Checks a distinct request: the field path whose values are answered, a query, and `options.includeDeleted`.
 * @example parseDistinct(ctx, 'basinName', { stateName: 'Texas' }, undefined)
 */
export function parseDistinct(ctx: ParseContext, field: unknown, query: unknown, options: unknown): DistinctPlan {
  const o = optionsOf(options, ['includeDeleted']);
  const errors: EnvelopeError[] = [];
  const path = collect(errors, () => {
    if (typeof field !== 'string' || field === '') throw bad('field', `expected a field path, got ${describe(field)}`);
    return parseFieldPath(ctx, field, 'field');
  });
  const base = collect(errors, () => scoped(ctx, query, o.includeDeleted));
  if (errors.length) throw new RequestError(errors);
  return Object.freeze({ kind: 'distinct', ...base!, path: path! });
}

