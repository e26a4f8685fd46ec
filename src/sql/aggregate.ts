/**
 * Summary plans (query/aggregate.ts) → one SQL statement each, for every engine: GROUP BY with the engine's own
 * aggregates, DISTINCT over unwound arrays, count(*). What differs between engines (date buckets, how a JSON value
 * groups and orders, how a sum never overflows) is a SummaryHooks of the engine (src/sqlite/aggregate.ts,
 * src/postgres/aggregate.ts). Rows come back as arrays; `decode` turns them into the answer's rows.
 */
import type { Category } from '../catalogue/kinds.js';
import type { FieldPath } from '../query/ast.js';
import type { AggregatePlan, DistinctPlan, Interval, SummaryPlan } from '../query/aggregate.js';
import type { Dialect, JsonValue } from './dialect.js';
import { bound, join, sql, type Sql } from './fragment.js';

/** How a JSON value (not a typed field) groups, orders and is read back: SQL lists, and the decoder of `out`'s columns. */
export interface JsonKey {
  readonly group: readonly string[];
  readonly order: readonly string[];
  readonly out: readonly string[];
  decode(values: readonly unknown[]): unknown;
  /** One SQL value equal for equal JSON values, NULL for null and missing: what countDistinct counts. */
  readonly distinct: string;
}

/** What an engine answers for summaries beyond its Dialect. */
export interface SummaryHooks {
  /** The first instant of `interval` holding the canonical ISO text `x`, as the same ISO text (UTC; weeks start Monday). */
  bucket(x: string, interval: Interval): string;
  /** A JSON value's key. */
  key(v: JsonValue): JsonKey;
  /** A FROM item of the values at `steps` of `doc`: the leaf's elements when it is an array, else the leaf itself. */
  elements(steps: FieldPath['steps']): { from: string; element: JsonValue };
  /** A sum that never overflows (SQLite's integer sum throws past 2^63). */
  sum(x: string): string;
}

/** A summary as the backend runs it: one statement, and how its rows become the answer. */
export interface CompiledSummary {
  readonly sql: Sql;
  /** The answer of the rows (arrays, in the statement's column order). */
  answer(rows: readonly (readonly unknown[])[]): SummaryAnswer;
}

/** A summary's answer: rows (aggregate), values (distinct) or the count alone, and `total`. */
export interface SummaryAnswer {
  readonly data: unknown[];
  /** Groups (aggregate), values (distinct) or matches (count). */
  readonly total: number;
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

/** A group key or a distinct path as SQL: GROUP BY, ORDER BY and SELECT lists, and its decoder. */
function keyOf(d: Dialect, h: SummaryHooks, path: FieldPath, interval: Interval | null): JsonKey {
  if (interval) {
    const b = h.bucket(d.scalar(path), interval);
    return { group: [b], order: [b], out: [b], decode: (v) => v[0], distinct: b };
  }
  if (path.scalar) {
    const x = d.scalar(path);
    const decode = typed(path.field!.category);
    return { group: [x], order: [x], out: [x], decode: (v) => decode(v[0]), distinct: x };
  }
  return h.key(d.doc.at(d.doc.root, path.steps));
}

/** The WHERE clause, left out without conditions: SQLite counts a whole table from its smallest index only then. */
function filtered(where: Sql | string, plan: SummaryPlan): Sql | string {
  return plan.conditions.length ? sql` WHERE ${where}` : '';
}

function metricSql(d: Dialect, h: SummaryHooks, m: AggregatePlan['metrics'][number]): { expr: string; decode: (v: unknown) => unknown } {
  if (!m.path) return { expr: 'count(*)', decode: number };
  const x = m.path.scalar ? d.scalar(m.path) : null;
  switch (m.fn) {
    case 'count': {
      // A JSON null is not a value, as SQL's NULL is not.
      const v = x ?? `CASE WHEN ${d.doc.at(d.doc.root, m.path.steps).type} <> 'null' THEN 1 END`;
      return { expr: `count(${v})`, decode: number };
    }
    case 'countDistinct':
      return { expr: `count(DISTINCT ${x ?? h.key(d.doc.at(d.doc.root, m.path.steps)).distinct})`, decode: number };
    case 'sum':
      return { expr: h.sum(x!), decode: number };
    case 'avg':
      return { expr: `avg(${x!})`, decode: number };
    case 'min':
    case 'max':
      return { expr: `${m.fn}(${x!})`, decode: typed(m.path.field!.category) };
  }
}

function compileAggregate(d: Dialect, h: SummaryHooks, plan: AggregatePlan, table: string, where: Sql | string): CompiledSummary {
  const columns: string[] = [];
  const alias = (expr: string) => `c${columns.push(expr) - 1}`;
  const keys = plan.groups.map((g) => {
    const k = keyOf(d, h, g.path, g.interval);
    return { name: g.name, group: k.group, order: k.order.map(alias), out: k.out.map(alias), decode: k.decode };
  });
  const metrics = plan.metrics.map((m) => {
    const { expr, decode } = metricSql(d, h, m);
    const a = alias(expr);
    return { name: m.name, order: [a], out: [a], decode: (v: readonly unknown[]) => decode(v[0]) };
  });
  const named = new Map<string, { order: string[] }>([...keys, ...metrics].map((k) => [k.name, k]));
  const order = [
    ...plan.sort.flatMap((s) => named.get(s.name)!.order.map((a) => `${a} ${d.direction(s.order === 1)}`)),
    // Groups are unique by their keys: ordered by them last, every row has one place.
    ...keys.flatMap((k) => k.order.map((a) => `${a} ${d.direction(true)}`)),
  ];
  const groupBy = keys.length ? ` GROUP BY ${keys.flatMap((k) => k.group).join(', ')}` : '';
  const select = columns.map((c, i) => `${c} AS c${i}`).join(', ');
  const g = sql`SELECT 1 AS cd_row, ${select} FROM ${table}${filtered(where, plan)}${groupBy}`;
  const orderBy = (p: string) => (order.length ? ` ORDER BY ${order.map((o) => p + o).join(', ')}` : '');
  const paged = plan.limit > 0 || plan.skip > 0;
  // Paged: the groups are counted in the same statement (one snapshot); a page past the end is one row of NULLs.
  const statement = paged
    ? sql`WITH g AS (${g}) SELECT c.n, p.* FROM (SELECT count(*) AS n FROM g) AS c LEFT JOIN (SELECT * FROM g${orderBy('')} LIMIT ${bound(plan.limit || Number.MAX_SAFE_INTEGER, d.seqCast)} OFFSET ${bound(plan.skip, d.seqCast)}) AS p ON ${d.true}${orderBy('p.')}`
    : sql`SELECT NULL AS n, g.* FROM (${g}) AS g${orderBy('g.')}`;
  const parts = [...keys, ...metrics];
  return {
    sql: statement,
    answer(rows) {
      const live = rows.filter((r) => r[1] !== null);
      const data = live.map((r) => {
        const row: Record<string, unknown> = {};
        for (const p of parts) row[p.name] = p.decode(p.out.map((a) => r[2 + Number(a.slice(1))]));
        return row;
      });
      return { data, total: paged ? Number(rows[0]?.[0] ?? 0) : data.length };
    },
  };
}

function compileDistinct(d: Dialect, h: SummaryHooks, plan: DistinctPlan, table: string, where: Sql | string): CompiledSummary {
  if (plan.path.scalar) {
    const k = keyOf(d, h, plan.path, null);
    const x = k.out[0]!;
    return {
      sql: sql`SELECT DISTINCT ${x} FROM ${table} WHERE ${plan.conditions.length ? sql`(${where}) AND ` : ''}${x} IS NOT NULL ORDER BY ${x} ${d.direction(true)}`,
      answer: (rows) => ({ data: rows.map((r) => k.decode(r)), total: rows.length }),
    };
  }
  // Filtered first, then unwound: the conditions see the documents' own columns only.
  const { from, element } = h.elements(plan.path.steps);
  const k = h.key(element);
  const columns = [...k.out, ...k.order.filter((o) => !k.out.includes(o))];
  return {
    sql: sql`SELECT DISTINCT ${columns.join(', ')} FROM (SELECT doc FROM ${table}${filtered(where, plan)}) AS m, ${from} WHERE ${element.type} <> 'null' ORDER BY ${join(
      k.order.map((o) => `${o} ${d.direction(true)}`),
      ', ',
    )}`,
    answer: (rows) => ({ data: rows.map((r) => k.decode(r.slice(0, k.out.length))), total: rows.length }),
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
