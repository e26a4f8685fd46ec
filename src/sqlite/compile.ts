/**
 * Checked plans → the SQLite statements the store runs for a query: which form finds the matches (index, rowid list,
 * a walk from a cursor), the page, its count and the projection. Conditions and sorts are the one compiler's
 * (src/sql/compile.ts) with SQLite's dialect.
 */
import type { Category } from '../catalogue/kinds.js';
import type { Condition, FieldPath, QueryPlan, Sort } from '../query/ast.js';
import type { Settings } from '../settings.js';
import { compileCondition, compileWhere as whereOf, pageConditions, scalarPart, sortShape, withDistance, type Select } from '../sql/compile.js';
import { bound, join, sql, type Compiled, type Sql } from '../sql/fragment.js';
import { literalPrefix } from '../sql/prefix.js';
import { fieldExpr, jsonPath, sqlite, toSqlite } from './dialect.js';
import { docsTable, ident } from './names.js';

/**
 * The WHERE clause of conditions on a `doc` column. `tree: false` tests points on the documents alone, without the
 * type's R*Trees: for rows of another table (the change feed's).
 * @example toSqlite(compileWhere(plan.conditions, 'Well')) // { sql: `json_extract(doc, '$."pwi"') = ?`, params: ['W1'] }
 */
export function compileWhere(conditions: readonly Condition[], type: string, tree = true): Sql | string {
  return whereOf(sqlite, conditions, { type, tree });
}

/**
 * ORDER BY for a sort, ties by insertion order. Scalar fields sort on their canonical expression
 * (SQLite's NULL < numbers < text matches MongoDB's order for them); other paths rank types first.
 * @example compileOrder(null) // 'ORDER BY rowid'
 */
export function compileOrder(sort: Sort | null): Sql | string {
  if (!sort) return 'ORDER BY rowid';
  return sql`ORDER BY ${join(sortShape(sqlite, sort).keys.map((k) => sql`${k.expr} ${k.direction}`), ', ')}`;
}

/** Categories json_extract answers as one SQL type each (text, integer or real; 1/0 for booleans): read from an index. */
const INDEXABLE: ReadonlySet<Category> = new Set(['string', 'date', 'int32', 'int64', 'number', 'enum', 'duration', 'boolean']);

/**
 * The JSON text of a projected document (options.fields): `{"id":…` then each field the document has, in the
 * order requested; a missing field is left out and a null one answered null. Scalar fields (the store keeps their
 * values to their kind) are read through their canonical expression, the text indexes are declared on, and only
 * where SQLite may take its value from an index: SQLite evaluates a direct argument of a JSON function (json_quote)
 * on the document itself, to keep JSON subtypes, so strings are quoted from a CAST of it (a JSON string's value has
 * no subtype: the CAST changes nothing). So an index holding the projected fields and `id` answers the projection
 * alone (a covering index). Telling a null from a missing field, where the value is NULL, needs the document: a
 * subquery reads it by rowid, for those rows only. Reals print with 17 significant digits: they read back as the
 * same double. Other fields are copied as their exact JSON text (`->`). `id` is the id column, or its expression
 * when an index holds it with every projected field (`idFromIndex`).
 */
export function projection(fields: readonly FieldPath[], idFromIndex: boolean, table: string): string {
  const quoted = (x: string) => `json_quote(CAST(${x} AS TEXT))`;
  const parts = [`'{"id":' || ${idFromIndex ? quoted(fieldExpr('id')) : 'json_quote(id)'}`];
  for (const f of fields) {
    const name = f.steps[0]!.name;
    if (name === 'id') continue;
    const label = `',"${name}":'`;
    const p = jsonPath(f.steps);
    const absentOrNull = `(SELECT CASE WHEN json_type(cd_row.doc, ${p}) IS NULL THEN '' ELSE ${label} || 'null' END FROM ${table} AS cd_row WHERE cd_row.rowid = ${table}.rowid)`;
    const category = f.field?.category;
    if (category === 'boolean') {
      const x = fieldExpr(name);
      parts.push(`CASE ${x} WHEN 1 THEN ${label} || 'true' WHEN 0 THEN ${label} || 'false' ELSE ${absentOrNull} END`);
    } else if (category && INDEXABLE.has(category)) {
      const x = fieldExpr(name);
      parts.push(
        `CASE typeof(${x}) WHEN 'text' THEN ${label} || ${quoted(x)} WHEN 'integer' THEN ${label} || ${x} ` +
          `WHEN 'real' THEN ${label} || printf('%!.17g', ${x}) ELSE ${absentOrNull} END`,
      );
    } else {
      parts.push(`COALESCE(${label} || (doc -> ${p}), '')`);
    }
  }
  return `${parts.join(' || ')} || '}'`;
}

/**
 * A query as the store runs it. A limited page's rows are { d: document JSON, s: rowid, r: sort rank, k: sort key };
 * `countSql` runs in the same read transaction as `sql` when the query is paged.
 */
export interface CompiledSelect extends Select {
  /**
   * A limited first page with conditions, as one statement: the matches' rowids and sort keys are found once
   * (materialized), counted, and only the page's documents read. Rows as `sql`'s plus `n`, every match (none when the
   * page is past the end). The backend runs it instead of `sql` and `countSql` where both would evaluate every match.
   */
  readonly onePass: OnePass | null;
  /** True when the page answers each match's rowid where it would answer its document (see compileSelect's `rowids`). */
  readonly rowids: boolean;
}

/** The one-statement form of a limited first page (CompiledSelect.onePass). */
export interface OnePass extends Compiled {
  /** True when the page statement evaluates every match before its first row anyway (it finds them as a rowid list). */
  readonly always: boolean;
}

/** How a type is stored: its table and the fields that lead an index (an equality on them finds few rows). */
export interface SelectTarget {
  readonly type: string;
  readonly keyed: ReadonlySet<string>;
  /** The fields of each index of the type (unique keys included), when known: a projection may then read `id` from one. */
  readonly indexes?: readonly (readonly string[])[];
}

/**
 * The SelectTarget of a type under a store's settings: the fields leading an index, and every index's fields.
 * @example compileSelect(plan, selectTarget(settings, 'Well'))
 */
export function selectTarget(settings: Pick<Settings, 'keyed' | 'uniqueKeys' | 'indexes'>, type: string): SelectTarget {
  return {
    type,
    keyed: settings.keyed.get(type) ?? new Set(),
    indexes: [...(settings.uniqueKeys[type] ?? []), ...(settings.indexes[type] ?? []).map((i) => i.fields)],
  };
}

/** True when some index holds `id` and every projected field, so that a projection can be answered from it alone. */
function idFromIndex(fields: readonly FieldPath[], target: SelectTarget): boolean {
  return !!target.indexes?.some((ix) => ix.includes('id') && fields.every((f) => ix.includes(f.steps[0]!.name)));
}

/** True when an index or an R*Tree finds the matches of some condition, so that they need not be found by a scan. */
function indexServed(conditions: readonly Condition[], target: SelectTarget): boolean {
  return conditions.some((c) => {
    if (c.op === 'bounds' || c.op === 'polygon' || c.op === 'near') return true;
    if (!c.path.scalar || !target.keyed.has(c.path.steps[0]!.name)) return false;
    if (c.op === 'eq') return c.value !== null;
    // Only a literal prefix becomes an index range (scalarPart): `^(a|b)` is tested on every row.
    if (c.op === 'regex') return literalPrefix(c.source, c.flags) !== '';
    return c.op !== 'ne';
  });
}

/**
 * The whole SELECT of a checked plan: the one function that decides what the store runs for a query. `rows`, the
 * table's row count (an estimate will do; unknown: treated as huge), decides how a later page in insertion order
 * finds its matches. `rowids`: the page answers each match's rowid instead of its whole document (same matches,
 * order, page and count), for the document cache to fill in; a projection or a distance is still read as text.
 * @example const { sql, params } = compileSelect(plan, { type: 'Well', keyed: new Set(['pwi']) });
 */
export function compileSelect(plan: QueryPlan, target: SelectTarget, rows?: number, rowids = false): CompiledSelect {
  const table = ident(docsTable(target.type));
  const where = whereOf(sqlite, plan.conditions, { type: target.type, tree: true });
  // A k-nearest page reads its neighbourhood only (pageConditions); the count reads every match.
  const reached = plan.reach === undefined ? where : whereOf(sqlite, pageConditions(plan), { type: target.type, tree: true });
  const paged = plan.limit > 0 || plan.skip > 0;
  const keyed = plan.limit > 0;
  // In insertion order, the matches are found first as a set of rowids, then read in rowid order: the
  // planner then picks the best index for the conditions, and no sorter carries whole documents.
  // An equality on an indexed field finds a handful of rows: there the plain form is cheaper.
  const pinpoint = plan.conditions.some(
    (c) => c.path.scalar && ((c.op === 'eq' && c.value !== null) || (c.op === 'in' && c.values.length <= 100)) && target.keyed.has(c.path.steps[0]!.name),
  );
  const listed = plan.conditions.length > 0 && !plan.sort && !pinpoint;
  let filter: Sql | string = listed ? sql`rowid IN (SELECT rowid FROM ${table} WHERE ${where})` : reached;
  let from = table;
  if (plan.after && listed) {
    // A later page in insertion order. Listing the matches again would read every one of them on every page (an
    // export of 100k matches in pages of 1,000: quadratic). Dense matches, or conditions no index serves, are found
    // by walking the table on from the cursor's rowid, which reads each row once over the whole paging; sparse
    // matches an index finds are listed from the cursor on (the index range, without the rows).
    const walk = !indexServed(plan.conditions, target) || plan.after.total * plan.after.total >= 2 * Math.max(plan.limit, 1) * (rows ?? Infinity);
    const after = sortShape(sqlite, null).after(plan.after);
    if (walk) {
      from = `${table} NOT INDEXED`;
      filter = sql`${where} AND ${after}`;
    } else {
      filter = sql`rowid IN (SELECT rowid FROM ${table} WHERE ${where} AND ${after})`;
    }
  } else if (plan.after) filter = sql`${filter} AND ${sortShape(sqlite, plan.sort).after(plan.after)}`;
  const byRowid = rowids && !plan.fields && !plan.distance;
  const doc = byRowid ? `${table}.rowid` : withDistance(sqlite, plan.fields ? projection(plan.fields, idFromIndex(plan.fields, target), table) : 'json(doc)', plan);
  let columns: Sql | string = doc;
  let onePass: OnePass | null = null;
  if (keyed) {
    const { rank, key } = sortShape(sqlite, plan.sort);
    columns = sql`${doc} AS d, rowid AS s, ${rank} AS r, ${key} AS k`;
    // Several sort keys: their JSON array (k) does not sort as they do, so the page is read by its own statement.
    const lead = plan.sort?.keys.length === 1 ? plan.sort.keys[0]! : null;
    if (!plan.after && plan.reach === undefined && plan.conditions.length && (!plan.sort || lead)) {
      const dir = lead?.order === -1 ? 'DESC' : 'ASC';
      const order = (t: string) => (!lead ? `${t}s ASC` : lead.path.scalar || lead.near ? `${t}k ${dir}, ${t}s ASC` : `${t}r ${dir}, ${t}k ${dir}, ${t}s ASC`);
      onePass = {
        ...toSqlite(
          join(
            [
              sql`WITH m AS MATERIALIZED (SELECT rowid AS s, ${rank} AS r, ${key} AS k FROM ${table} WHERE ${where}), `,
              sql`p AS (SELECT s, r, k FROM m ORDER BY ${order('')} LIMIT ${bound(plan.limit + 1)} OFFSET ${bound(plan.skip)}) `,
              sql`SELECT ${doc} AS d, p.s AS s, p.r AS r, p.k AS k, (SELECT count(*) FROM m) AS n FROM p JOIN ${table} ON ${table}.rowid = p.s ORDER BY ${order('p.')}`,
            ],
            '',
          ),
        ),
        always: listed,
      };
    }
  }
  const limit = paged ? sql` LIMIT ${bound(keyed ? plan.limit + 1 : -1)} OFFSET ${bound(plan.skip)}` : '';
  const page = toSqlite(sql`SELECT ${columns} FROM ${from} WHERE ${filter} ${compileOrder(plan.sort)}${limit}`);
  // Without a WHERE clause SQLite counts from the table's smallest index (its fast count path): `WHERE 1` keeps it
  // off that path (0.81 ms against 0.015 ms a count at 100k Wells).
  const count = toSqlite(plan.conditions.length ? sql`SELECT count(*) FROM ${table} WHERE ${where}` : `SELECT count(*) FROM ${table}`);
  return { sql: page.sql, params: page.params, countSql: count.sql, countParams: count.params, paged, keyed, onePass, rowids: byRowid };
}

/**
 * The shape of a plan whose conditions are all on scalar fields or `near` (the common queries) and that continues no cursor:
 * `key` is the same for two such plans of one type exactly when compileSelect gives them the same statements, and
 * `where` holds the values their WHERE clause binds (see rebind). Null for any other plan: it is compiled each time.
 * @example selectShape(parsePlan(ctx, { pwi: 'W1' }, null))?.key // 'eq pwi\u0000|||'
 */
export function selectShape(plan: QueryPlan): { key: string; where: unknown[] } | null {
  if (plan.after) return null;
  let key = '';
  const where: unknown[] = [];
  for (const c of plan.conditions) {
    if (c.op === 'near') {
      // A near condition's statement depends on its box count and whether it has a minimum; its values are the same for every type.
      key += `near${c.boxes.length}${c.min > 0 ? 'm' : ''} ${c.path.text}\u0000`;
      where.push(...toSqlite(compileCondition(sqlite, c, { type: '', tree: true })).params);
      continue;
    }
    if (!c.path.scalar || c.op === 'bounds' || c.op === 'polygon') return null;
    const part = scalarPart(sqlite, c);
    key += `${part.shape} ${c.path.text}\u0000`;
    for (const p of part.params) where.push(p.value);
  }
  if (plan.distance || plan.sort?.keys.some((k) => k.near)) return null;
  const sort = plan.sort ? plan.sort.keys.map((k) => `${k.path.text} ${k.order}`).join(' ') : '';
  const fields = plan.fields ? plan.fields.map((f) => f.text).join(',') : '';
  return { key: `${key}|${sort}|${plan.limit > 0 ? 'l' : ''}${plan.skip > 0 ? 's' : ''}|${fields}`, where };
}

/**
 * The statements of `template`, compiled for a plan of the same shape (selectShape's key), with `plan`'s values:
 * `where` from selectShape, then the limit and skip, in the order compileSelect binds them.
 */
export function rebind(template: CompiledSelect, plan: QueryPlan, where: unknown[]): CompiledSelect {
  return {
    ...template,
    params: template.paged ? [...where, template.keyed ? plan.limit + 1 : -1, plan.skip] : where,
    countParams: where,
    onePass: template.onePass && { ...template.onePass, params: [...where, plan.limit + 1, plan.skip] },
  };
}
