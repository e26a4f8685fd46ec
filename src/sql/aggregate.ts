/**
 * Summary plans (query/aggregate.ts) → one SQL statement each, for every engine: GROUP BY with the engine's own
 * aggregates, DISTINCT over unwound arrays, count(*). What differs between engines (date buckets, how a JSON value
 * groups and orders, how a sum never overflows) is a SummaryHooks of the engine (src/sqlite/aggregate.ts,
 * src/postgres/aggregate.ts). Rows come back as arrays; `decode` turns them into the answer's rows.
 */
import type { Category } from '../catalogue/kinds.js';
import type { FieldPath } from '../query/ast.js';
import type { AggregatePlan, DistinctPlan, Interval, SummaryPlan } from '../query/aggregate.js';
import type { SummaryAnswer } from '../backend.js';
import type { Dialect } from './dialect.js';
import { bound, sql, type Sql } from './fragment.js';

/**
 * How a value groups: one SQL expression per row (`group`, NULL for null and missing, so that GROUP BY, DISTINCT and
 * count skip them as SQL does), and, over a grouped row's column `g`, what the answer reads (`out`, decoded by
 * `decode`) and how the rows order (`order`). What is read per group costs nothing per document.
 */
export interface GroupKey {
  readonly group: string;
  out(g: string): readonly string[];
  order(g: string): readonly string[];
  decode(values: readonly unknown[]): unknown;
}

/** What an engine answers for summaries beyond its Dialect. */
export interface SummaryHooks {
  /** The first instant of `interval` holding the canonical ISO text `x`, as the same ISO text (UTC; weeks start Monday). */
  bucket(x: string, interval: Interval): string;
  /** The JSON value at `steps` of the document, as the engine's `key` takes it. */
  json(steps: FieldPath['steps']): string;
  /** The key of a JSON value (`json` or an element's): grouped by the value, ordered as MongoDB orders types. */
  key(json: string): GroupKey;
  /**
   * A FROM item of the values at `steps` of `m.doc`, as MongoDB's distinct reads a path: an array at any step fans out
   * into its elements (one level: an element that is itself an array is one value at the leaf, and reaches no member
   * before it), non-objects end the path before the leaf.
   */
  elements(steps: FieldPath['steps']): { from: string; json: string };
  /** A sum that never overflows (SQLite's integer sum throws past 2^63). */
  sum(x: string): string;
}

/** A bucket's first instant, as the store writes dates: its date part, then `rest` (one constant, one concatenation); for `bucket`. */
export const instant = (date: string, rest: string) => `(${date} || '${rest}T00:00:00.000Z')`;

/** A summary as the backend runs it: one statement, and how its rows become the answer. */
export interface CompiledSummary {
  readonly sql: Sql;
  /** The answer of the rows (arrays, in the statement's column order). */
  answer(rows: readonly (readonly unknown[])[]): SummaryAnswer;
}

/** A typed scalar as the engine answers it → its JSON value (numbers may come as text, booleans as 1/0). */
function typed(category: Category | undefined): (v: unknown) => unknown {
  switch (category) {
    case 'int32':
    case 'int64':
    case 'number':
      return (v) => (v === null ? null : Number(v));
    case 'boolean':
      return (v) => (v === null ? null : v === true || v === 1);
    default:
      return (v) => v;
  }
}

const number = (v: unknown) => (v === null ? null : Number(v));

/** A typed key: its canonical expression, read back as it is grouped. */
function plain(x: string, decode: (v: unknown) => unknown): GroupKey {
  return { group: x, out: (g) => [g], order: (g) => [g], decode: (v) => decode(v[0]) };
}

/** A group key or a distinct path: a bucket, a typed field (its canonical expression, indexed), or a JSON value. */
function keyOf(d: Dialect, h: SummaryHooks, path: FieldPath, interval: Interval | null): GroupKey {
  if (interval) return plain(h.bucket(d.scalar(path), interval), (v) => v);
  if (path.scalar) return plain(d.scalar(path), typed(path.field!.category));
  return h.key(h.json(path.steps));
}

/** The WHERE clause, left out without conditions: SQLite counts a whole table from its smallest index only then. */
function filtered(where: Sql | string, plan: SummaryPlan): Sql | string {
  return plan.conditions.length ? sql` WHERE ${where}` : '';
}

/** A metric's aggregate over its field's canonical expression (a JSON value's key for count and countDistinct). */
function metricSql(d: Dialect, h: SummaryHooks, m: AggregatePlan['metrics'][number]): { expr: string; decode: (v: unknown) => unknown } {
  if (!m.path) return { expr: 'count(*)', decode: number };
  const x = m.path.scalar ? d.scalar(m.path) : null;
  switch (m.fn) {
    case 'count':
      return { expr: `count(${x ?? keyOf(d, h, m.path, null).group})`, decode: number };
    case 'countDistinct':
      return { expr: `count(DISTINCT ${x ?? keyOf(d, h, m.path, null).group})`, decode: number };
    case 'sum':
      return { expr: h.sum(x!), decode: number };
    case 'avg':
      return { expr: `avg(${x!})`, decode: number };
    case 'min':
    case 'max':
      return { expr: `${m.fn}(${x!})`, decode: typed(m.path.field!.category) };
  }
}

/** Columns of a SELECT list, each expression once, by alias. */
class Columns {
  readonly exprs: string[] = [];
  constructor(readonly prefix: string) {}
  add(expr: string): string {
    const at = this.exprs.indexOf(expr);
    return `${this.prefix}${at >= 0 ? at : this.exprs.push(expr) - 1}`;
  }
  list(): string {
    return this.exprs.map((e, i) => `${e} AS ${this.prefix}${i}`).join(', ');
  }
}

/** GROUP BY of the keys with the metrics, ordered and paged, the groups counted in the same statement when paged. */
function compileAggregate(d: Dialect, h: SummaryHooks, plan: AggregatePlan, table: string, where: Sql | string): CompiledSummary {
  // g: one row per group, computed per document; v: what the answer reads and sorts on, computed per group.
  const g = new Columns('g');
  const v = new Columns('c');
  const keys = plan.groups.map((k) => {
    const key = keyOf(d, h, k.path, k.interval);
    const at = g.add(key.group);
    return { name: k.name, group: key.group, out: key.out(at).map((e) => v.add(e)), order: key.order(at).map((e) => v.add(e)), decode: key.decode };
  });
  const metrics = plan.metrics.map((m) => {
    const { expr, decode } = metricSql(d, h, m);
    const at = v.add(g.add(expr));
    return { name: m.name, out: [at], order: [at], decode: (values: readonly unknown[]) => decode(values[0]) };
  });
  const named = new Map<string, { order: string[] }>([...keys, ...metrics].map((k) => [k.name, k]));
  const order = [
    ...plan.sort.flatMap((s) => named.get(s.name)!.order.map((a) => `${a} ${d.direction(s.order === 1)}`)),
    // Groups are unique by their keys: ordered by them last, every row has one place.
    ...keys.flatMap((k) => k.order.map((a) => `${a} ${d.direction(true)}`)),
  ];
  const groupBy = keys.length ? ` GROUP BY ${keys.map((k) => k.group).join(', ')}` : '';
  const grouped = sql`SELECT ${g.list()} FROM ${table}${filtered(where, plan)}${groupBy}`;
  const view = `SELECT 1 AS cd_row, ${v.list()} FROM g`;
  const orderBy = (p: string) => (order.length ? ` ORDER BY ${order.map((o) => p + o).join(', ')}` : '');
  const paged = plan.limit > 0 || plan.skip > 0;
  // Paged: the groups are counted in the same statement (one snapshot); a page past the end is one row of NULLs.
  const statement = paged
    ? sql`WITH g AS (${grouped}), v AS (${view}) SELECT c.n, p.* FROM (SELECT count(*) AS n FROM g) AS c LEFT JOIN (SELECT * FROM v${orderBy('')} LIMIT ${bound(plan.limit || Number.MAX_SAFE_INTEGER, d.seqCast)} OFFSET ${bound(plan.skip, d.seqCast)}) AS p ON ${d.true}${orderBy('p.')}`
    : sql`WITH g AS (${grouped}) SELECT NULL AS n, v.* FROM (${view}) AS v${orderBy('v.')}`;
  const parts = [...keys, ...metrics];
  return {
    sql: statement,
    answer(rows) {
      const live = rows.filter((r) => r[1] !== null);
      // Own properties whatever the names (a metric may be named `__proto__`).
      const data = live.map((r) => Object.fromEntries(parts.map((p) => [p.name, p.decode(p.out.map((a) => r[2 + Number(a.slice(1))]))])));
      return { data, total: paged ? Number(rows[0]?.[0] ?? 0) : data.length };
    },
  };
}

/** DISTINCT values of a path: a typed field's canonical expression, or any other path's values, arrays unwound. */
function compileDistinct(d: Dialect, h: SummaryHooks, plan: DistinctPlan, table: string, where: Sql | string): CompiledSummary {
  if (plan.path.scalar) {
    const x = d.scalar(plan.path);
    const decode = typed(plan.path.field!.category);
    return {
      sql: sql`SELECT DISTINCT ${x} FROM ${table} WHERE ${plan.conditions.length ? sql`(${where}) AND ` : ''}${x} IS NOT NULL ORDER BY ${x} ${d.direction(true)}`,
      answer: (rows) => ({ data: rows.map((r) => decode(r[0])), total: rows.length }),
    };
  }
  // Filtered first, then unwound: the conditions see the documents' own columns only.
  const { from, json } = h.elements(plan.path.steps);
  const k = h.key(json);
  const out = k.out('g.k');
  const order = k.order('g.k').map((o) => `${o} ${d.direction(true)}`);
  return {
    sql: sql`SELECT ${out.join(', ')} FROM (SELECT DISTINCT ${k.group} AS k FROM (SELECT doc FROM ${table}${filtered(where, plan)}) AS m, ${from}) AS g WHERE g.k IS NOT NULL ORDER BY ${order.join(', ')}`,
    answer: (rows) => ({ data: rows.map((r) => k.decode(r)), total: rows.length }),
  };
}

/**
 * The statement of a summary plan over `table` (its WHERE clause `where`, compiled by the caller with the engine's
 * conditions), and how its rows become the answer.
 * @example const s = compileSummary(sqlite, SQLITE_SUMMARY, plan, '"docs_Well"', where); db.prepare(toSqlite(s.sql).sql).raw().all(...)
 */
export function compileSummary(d: Dialect, h: SummaryHooks, plan: SummaryPlan, table: string, where: Sql | string): CompiledSummary {
  switch (plan.kind) {
    case 'count':
      return { sql: sql`SELECT count(*) FROM ${table}${filtered(where, plan)}`, answer: (rows) => ({ data: [], total: Number(rows[0]![0]) }) };
    case 'distinct':
      return compileDistinct(d, h, plan, table, where);
    case 'aggregate':
      return compileAggregate(d, h, plan, table, where);
  }
}
