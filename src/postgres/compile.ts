/**
 * Checked plans → the PostgreSQL statements the backend runs for a query: the page, its count and the projection.
 * Conditions and sorts are the one compiler's (src/sql/compile.ts) with PostgreSQL's dialect (dialect.ts).
 */
import type { Category } from '../catalogue/kinds.js';
import type { Condition, FieldPath, QueryPlan } from '../query/ast.js';
import { compileCondition, compileWhere as whereOf, reachedNear, sortShape, withDistance, type Select } from '../sql/compile.js';
import { bound, join, sql, type Sql } from '../sql/fragment.js';
import { postgres, toPostgres, unordered } from './dialect.js';
import { key } from './names.js';

/**
 * Every condition ANDed (`true` for none). `indexed`: the fields that lead an index (Settings.keyed); numbers and
 * booleans no index leads compare as jsonb. Without it every scalar field compares on its canonical expression.
 * `inJs`: the conditions the backend decides in JS, of which SQL states a necessary condition only (a polygon its
 * box, an equality jsonb's, `ne` nothing): the WHERE clause then finds their candidates.
 * @example toPostgres(compileWhere(plan.conditions, new Set(['pwi'])))
 */
export function compileWhere(conditions: readonly Condition[], indexed?: ReadonlySet<string>, inJs?: (c: Condition) => boolean): Sql | string {
  // No type name: PostgreSQL's spatial prefilter is an index on the table itself, not a table per type.
  const target = { type: '', tree: true, indexed };
  if (!inJs || !conditions.some(inJs)) return whereOf(postgres, conditions, target);
  // `ne` is `not eq`: the negation of a necessary condition is none, so such a `ne` has no SQL half.
  const parts = conditions.filter((c) => !(c.op === 'ne' && inJs(c))).map((c) => compileCondition(inJs(c) ? unordered : postgres, c, target));
  return parts.length ? join(parts, ' AND ') : postgres.true;
}

// ---- the statements of a query ---------------------------------------------------------------------------------

/** Categories whose values are JSON scalars: their jsonb text is the stored value (jsonb keeps no key order to lose). */
const SCALAR_TEXT: ReadonlySet<Category> = new Set(['string', 'date', 'int32', 'int64', 'number', 'boolean', 'enum', 'duration']);

/**
 * The JSON text of a projected document (options.fields), as SQLite's compile.ts `projection` answers it: `{"id":…`
 * then each field the document has, in the order requested; a missing field is left out, a null one is null.
 * Scalars are read from `doc`; objects and arrays (and fields outside the catalogue) from `body`, the exact text,
 * so their key order is the stored one.
 * @example projection(plan.fields) // `('{"id":' || to_json(id)::text || COALESCE(',"pwi":' || ((doc -> 'pwi'))::text, '') || '}')`
 */
export function projection(fields: readonly FieldPath[]): string {
  const parts = [`'{"id":' || to_json(id)::text`];
  for (const f of fields) {
    const name = f.steps[0]!.name;
    if (name === 'id') continue;
    const category = f.field?.category;
    const value = category && SCALAR_TEXT.has(category) ? `(doc -> ${key(name)})` : `((body::json) -> ${key(name)})`;
    // `->` answers SQL NULL for a missing member (a JSON null is the text 'null'): the part is then empty.
    parts.push(`COALESCE(',"${name}":' || ${value}::text, '')`);
  }
  return `(${parts.join(' || ')} || '}')`;
}

/**
 * A query as the backend runs it. Limited (`keyed`): rows (total, body, rank, key, seq), one past the limit, the total
 * on every row (NULL when the page continues a cursor, whose total it carries) and a row of NULLs for an empty page.
 * Skip without limit (`paged`): one row (total, page: the page's JSON texts joined by commas). Otherwise: rows of `body`.
 */
export type PgSelect = Select;

/**
 * The statement of a query over `table` with the WHERE clause `where`. A paged query counts `total` and reads the page
 * in one statement, so both come from one snapshot in one round trip; a limited one also answers each row's sort rank
 * and key, for the cursor of the next page.
 * @example selectStatement('"public"."docs_Well"', 'true', plan)
 */
export function selectStatement(table: string, where: Sql | string, plan: Pick<QueryPlan, 'sort' | 'limit' | 'skip' | 'after' | 'fields' | 'distance' | 'reach' | 'counted'>): PgSelect {
  const shape = sortShape(postgres, plan.sort);
  // The answer's text: the stored document, or its projection (options.fields), with its distance (options.distance).
  const body = sql`${withDistance(postgres, plan.fields ? projection(plan.fields) : 'body', plan)} AS body`;
  // A value a key binds is bound once however often the statement reads the key (and only where it is read:
  // PostgreSQL refuses a statement with a value it does not use).
  const order = join(shape.keys.map((k) => sql`${k.expr} ${k.direction}`), ', ');
  const count = toPostgres(sql`SELECT count(*) FROM ${table} WHERE ${where}`);
  const paged = plan.limit > 0 || plan.skip > 0;
  const statement = (s: Sql, keyed: boolean): PgSelect => {
    const { sql: text, params } = toPostgres(s);
    return { sql: text, params, countSql: count.sql, countParams: count.params, paged, keyed };
  };
  if (!paged) return statement(sql`SELECT ${body} FROM ${table} WHERE ${where} ORDER BY ${order}`, false);
  const columns = join(shape.keys.map((k, i) => sql`${k.expr} AS k${i}`), ', ');
  const again = shape.keys.map((k, i) => `p.k${i} ${k.direction}`).join(', ');
  if (plan.limit > 0) {
    // A k-nearest page reads its neighbourhood only (reachedNear): the smaller cap's GiST boxes, ANDed.
    const cut = reachedNear(plan);
    const near = cut ? sql`(${where}) AND ${compileCondition(postgres, cut, { type: '', tree: true })}` : where;
    const filter = plan.after ? sql`${near} AND ${shape.after(plan.after)}` : near;
    // One row past the limit tells whether a cursor should continue.
    const page = sql`SELECT ${body}, ${shape.rank} AS r, (${shape.key})::text AS k, seq AS s, ${columns} FROM ${table} WHERE ${filter} ORDER BY ${order} LIMIT ${bound(plan.limit + 1, 'bigint')} OFFSET ${bound(plan.skip, 'bigint')}`;
    // A page after a cursor is not counted again: its total is the one the cursor carries.
    const counted = plan.after || plan.counted !== undefined ? `(SELECT NULL::bigint AS total)` : sql`(SELECT count(*) AS total FROM ${table} WHERE ${where})`;
    return statement(sql`SELECT c.total, p.body, p.r, p.k, p.s FROM ${counted} AS c LEFT JOIN LATERAL (${page}) AS p ON true ORDER BY ${again}`, true);
  }
  const rows = sql`SELECT ${body}, ${columns} FROM ${table} WHERE ${where} ORDER BY ${order} OFFSET ${bound(plan.skip, 'bigint')}`;
  return statement(sql`SELECT (SELECT count(*) FROM ${table} WHERE ${where}) AS total, (SELECT string_agg(p.body, ',' ORDER BY ${again}) FROM (${rows}) AS p) AS page`, false);
}
