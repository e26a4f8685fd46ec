/**
 * Checked conditions → one SQL WHERE clause over the JSONB `doc` column, with bound values.
 * JSON paths come only from checked path steps (see parse.ts) and are quoted here, in one place.
 */
import { widen } from '../geo/boxes.js';
import { polygonHandle } from '../geo/polygons.js';
import type { Category } from '../catalogue/kinds.js';
import type { Condition, FieldPath, Keyset, QueryPlan, Sort, Step } from '../query/ast.js';
import type { Settings } from '../settings.js';
import { literalPrefix, prefixEnd } from '../sql/prefix.js';
import { docsTable, ident, rtreeTable } from './names.js';

export interface Compiled {
  readonly sql: string;
  readonly params: unknown[];
}

/** SQL string literal of a JSON path such as `$."surfaceLoc"."coordinates"[0]`. */
export function jsonPath(steps: readonly Step[]): string {
  return `'$${steps.map((s) => `."${s.name}"${s.indexes.map((i) => `[${i}]`).join('')}`).join('')}'`;
}

/** The canonical expression of a top-level field: indexes are declared on exactly this text. */
export function fieldExpr(field: string): string {
  let expr = fieldExprs.get(field);
  if (expr === undefined) {
    expr = `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }])})`;
    // Field names come from catalogues, a bounded set: memoised, they cost nothing per query.
    if (fieldExprs.size < 10_000) fieldExprs.set(field, expr);
  }
  return expr;
}
const fieldExprs = new Map<string, string>();

/** Value of an operand as SQLite sees JSON values: booleans become 1/0 (json_extract's form). */
function bind(v: string | number | boolean): string | number {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

/**
 * SQL that is true when an array index of `step` (read from `base`, below the steps `prefix`) lands past the end
 * of an array, an empty one included: the step then yields no value at all, as in MongoDB (not a missing one).
 * Indexes come from checked paths (digits only), like every JSON path here.
 */
function pastEnd(base: string, prefix: readonly Step[], step: Step): string {
  return step.indexes
    .map((i, k) => {
      const p = jsonPath([...prefix, { name: step.name, indexes: step.indexes.slice(0, k) }]);
      // IS, not =: a missing member must give false, never NULL (NOT NULL would drop the row).
      return `(json_type(${base}, ${p}) IS 'array' AND json_array_length(${base}, ${p}) <= ${i})`;
    })
    .join(' OR ');
}

/**
 * Rows (t, v) of every value a condition tests (see README "Values along a path"):
 * arrays on the way are fanned out, the leaf and, when it is an array, its elements.
 */
function candidates(steps: readonly Step[]): string {
  const none = (base: string, step: Step, prefix: readonly Step[] = []) => (step.indexes.length ? pastEnd(base, prefix, step) : '0');
  if (steps.length === 1) {
    const p = jsonPath(steps);
    return (
      `SELECT json_type(doc, ${p}) AS t, json_extract(doc, ${p}) AS v WHERE NOT (${none('doc', steps[0]!)}) ` +
      `UNION ALL SELECT e.type, e.value FROM json_each(doc, ${p}) AS e WHERE json_type(doc, ${p}) = 'array'`
    );
  }
  // Intermediate steps: a JSON array of the nodes reached, each element followed in turn.
  const first = jsonPath(steps.slice(0, 1));
  let from =
    `json_each(CASE WHEN ${none('doc', steps[0]!)} THEN '[]' ` +
    `WHEN json_type(doc, ${first}) = 'array' THEN json_extract(doc, ${first}) ELSE json_array(doc -> ${first}) END) AS n1`;
  for (let i = 1; i < steps.length - 1; i++) {
    const p = jsonPath(steps.slice(i, i + 1));
    const n = `n${i}`;
    from +=
      `, json_each(CASE WHEN ${n}.type <> 'object' THEN '[null]' ` +
      `WHEN ${none(`${n}.value`, steps[i]!)} THEN '[]' ` +
      `WHEN json_type(${n}.value, ${p}) = 'array' THEN json_extract(${n}.value, ${p}) ` +
      `ELSE json_array(${n}.value -> ${p}) END) AS n${i + 1}`;
  }
  const n = `n${steps.length - 1}`;
  const last = steps[steps.length - 1]!;
  const p = jsonPath([last]);
  return (
    `SELECT CASE WHEN ${n}.type = 'object' THEN json_type(${n}.value, ${p}) END AS t, ` +
    `CASE WHEN ${n}.type = 'object' THEN json_extract(${n}.value, ${p}) END AS v FROM ${from} ` +
    `WHERE NOT (${n}.type = 'object' AND (${none(`${n}.value`, last)})) ` +
    `UNION ALL SELECT e.type, e.value FROM ${from}, json_each(CASE WHEN ${n}.type = 'object' AND json_type(${n}.value, ${p}) = 'array' ` +
    `THEN json_extract(${n}.value, ${p}) ELSE '[]' END) AS e`
  );
}

/** A tested value (t, v) equals one operand; each call binds its own values. */
function equals(t: string, v: string, value: unknown, params: unknown[]): string {
  if (value === null) return `(${t} IS NULL OR ${t} = 'null')`;
  if (typeof value === 'boolean') return `${t} = '${value}'`;
  if (typeof value === 'number') {
    params.push(value);
    return `(${t} IN ('integer', 'real') AND ${v} = ?)`;
  }
  if (typeof value === 'string') {
    params.push(value);
    return `(${t} = 'text' AND ${v} = ?)`;
  }
  // Arrays and objects compare whole, as SQLite renders them (minified, key order kept).
  params.push(JSON.stringify(value));
  return `(${t} = '${Array.isArray(value) ? 'array' : 'object'}' AND ${v} = json(?))`;
}

/** The type class of a json_type for equality: integers and reals are one class (1 = 1.0). */
function eqClass(t: string): string {
  return `CASE ${t} WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number' ELSE ${t} END`;
}

/**
 * A tested value equals any of the operands: a short OR, or, for long lists, one probe of the bound list as a set
 * of (class, value) pairs. The subquery is not correlated, so SQLite builds its index once per statement and each
 * value costs a lookup: the cost is one pass over the documents, not documents × values.
 */
function equalsAny(t: string, v: string, values: readonly unknown[], params: unknown[]): string {
  if (values.length <= 8) return `(${values.map((x) => equals(t, v, x, params)).join(' OR ')})`;
  const present = values.filter((x) => x !== null);
  params.push(JSON.stringify(present));
  const probe = `(${eqClass(t)}, ${v}) IN (SELECT ${eqClass('o.type')}, o.value FROM json_each(?) AS o)`;
  return present.length < values.length ? `(${probe} OR ${t} IS NULL OR ${t} = 'null')` : probe;
}

function typeClass(v: string | number | boolean): string {
  if (typeof v === 'number') return `('integer', 'real')`;
  if (typeof v === 'boolean') return `('true', 'false')`;
  return `('text')`;
}

const COMPARE = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/**
 * Some value along an untyped path satisfies `test(t, v)`. When no array lies on the path (the common
 * case) only the leaf is tested, without the correlated fan-out subquery.
 */
function someValue(path: FieldPath, params: unknown[], test: (t: string, v: string, params: unknown[]) => string): string {
  const full = jsonPath(path.steps);
  const plain = path.steps.map((_, i) => `json_type(doc, ${jsonPath(path.steps.slice(0, i + 1))}) IS NOT 'array'`).join(' AND ');
  const direct = test(`json_type(doc, ${full})`, `json_extract(doc, ${full})`, params);
  const fanned = test('c.t', 'c.v', params);
  // An index past an array's end: no value to test (checked before the plain path reads it as missing).
  const gone = path.steps.filter((s) => s.indexes.length).length
    ? path.steps.map((s, i) => (s.indexes.length ? pastEnd('doc', path.steps.slice(0, i), s) : '')).filter(Boolean).join(' OR ')
    : '';
  // IFNULL: a missing leaf makes the direct test NULL, which `NOT` would keep NULL rather than true.
  return `(CASE ${gone ? `WHEN ${gone} THEN 0 ` : ''}WHEN ${plain} THEN IFNULL(${direct}, 0) ELSE EXISTS (SELECT 1 FROM (${candidates(path.steps)}) AS c WHERE ${fanned}) END)`;
}

/**
 * A condition on a scalar-typed top-level field, in two halves: its SQL, which depends only on `shape` (the operator
 * and what of the operand changes the statement: null or not, how many values, a regex's literal prefix), and its
 * bound values. Queries of one shape share one statement (see selectShape), their values bound anew.
 */
export interface ScalarPart {
  readonly shape: string;
  readonly params: readonly unknown[];
  sql(): string;
}

/** A scalar-field condition → its ScalarPart; the field's canonical expression is compared directly so indexes apply. */
function scalarPart(c: Condition): ScalarPart {
  const x = () => fieldExpr(c.path.steps[0]!.name);
  switch (c.op) {
    case 'eq':
    case 'ne':
      // IS / IS NOT are NULL-safe: `ne` keeps null and missing values, exactly `not eq`.
      if (c.value === null) return { shape: `${c.op}0`, params: [], sql: () => `${x()} ${c.op === 'eq' ? 'IS NULL' : 'IS NOT NULL'}` };
      return { shape: c.op, params: [bind(c.value as string | number | boolean)], sql: () => `${x()} ${c.op === 'eq' ? '=' : 'IS NOT'} ?` };
    case 'in': {
      if (c.values.length === 0) return { shape: 'in0', params: [], sql: () => '0' };
      const nonNull = c.values.filter((v) => v !== null) as (string | number | boolean)[];
      const nulls = nonNull.length < c.values.length;
      const many = nonNull.length > 1;
      const params = nonNull.length === 1 ? [bind(nonNull[0]!)] : many ? [JSON.stringify(nonNull)] : [];
      // The count of values also decides whether the equality pinpoints rows (compileSelect): at most 100.
      const shape = `in${Math.min(nonNull.length, 2)}${nulls ? 'z' : ''}${c.values.length <= 100 ? 'p' : ''}`;
      return {
        shape,
        params,
        sql() {
          const parts: string[] = [];
          if (nonNull.length === 1) parts.push(`${x()} = ?`);
          else if (many) parts.push(`${x()} IN (SELECT value FROM json_each(?))`);
          if (nulls) parts.push(`${x()} IS NULL`);
          return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
        },
      };
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return { shape: c.op, params: [bind(c.value)], sql: () => `${x()} ${COMPARE[c.op as keyof typeof COMPARE]} ?` };
    case 'regex': {
      // An anchored literal prefix becomes a range, so an index (or a cheap comparison) narrows before RE2 runs.
      const prefix = literalPrefix(c.source, c.flags);
      const end = prefix ? prefixEnd(prefix) : null;
      // `^literal` alone: the range is the whole answer (strings only: a date field holds strings too).
      const whole = !!prefix && c.source === `^${prefix}`;
      const params: unknown[] = prefix ? (end !== null ? [prefix, end] : [prefix]) : [];
      if (!whole) params.push(c.source, c.flags);
      return {
        shape: `re${prefix ? (end !== null ? 2 : 1) : 0}${whole ? 'w' : ''}`,
        params,
        sql() {
          const range = prefix ? `${x()} >= ? AND ${end !== null ? `${x()} < ? AND ` : ''}` : '';
          return whole ? `${range}${x()} IS NOT NULL` : `${range}cd_regexp(?, ?, ${x()})`;
        },
      };
    }
    default:
      throw new TypeError(`${c.op} is not a condition on a scalar field`);
  }
}

/** One condition → SQL; scalar-typed fields compare their canonical expression directly so indexes apply. */
function compileCondition(c: Condition, type: string, params: unknown[], tree = true): string {
  if (c.path.scalar && c.op !== 'bounds' && c.op !== 'polygon') {
    const part = scalarPart(c);
    params.push(...part.params);
    return part.sql();
  }
  switch (c.op) {
    case 'eq':
    case 'ne': {
      const sql = someValue(c.path, params, (t, v, p) => equals(t, v, c.value, p));
      return c.op === 'eq' ? sql : `NOT ${sql}`;
    }
    case 'in':
      if (c.values.length === 0) return '0';
      return someValue(c.path, params, (t, v, p) => equalsAny(t, v, c.values, p));
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return someValue(c.path, params, (t, v, p) => {
        p.push(bind(c.value));
        return `(${t} IN ${typeClass(c.value)} AND ${v} ${COMPARE[c.op]} ?)`;
      });
    case 'regex':
      return someValue(c.path, params, (t, v, p) => {
        p.push(c.source, c.flags);
        return `(${t} = 'text' AND cd_regexp(?, ?, ${v}))`;
      });
    case 'bounds':
    case 'polygon': {
      const field = c.path.steps[0]!.name;
      const [minX, minY, maxX, maxY] = c.box;
      const px = `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }, { name: 'coordinates', indexes: [0] }])})`;
      const py = `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }, { name: 'coordinates', indexes: [1] }])})`;
      // The R*Tree holds float32 boxes rounded outward: it only finds candidates; the exact test is on the stored doubles.
      // A polygon's candidates are first tested on the tree's own boxes: only those that may lie inside are read.
      const handle = c.op === 'polygon' ? polygonHandle(c.rings) : 0;
      if (tree) params.push(widen(maxX, 1), widen(minX, -1), widen(maxY, 1), widen(minY, -1));
      if (tree && c.op === 'polygon') params.push(handle);
      const boxTest = c.op === 'polygon' ? ' AND cd_polygon_box(?, minX, maxX, minY, maxY)' : '';
      const prefilter = tree ? `${ident(docsTable(type))}.rowid IN (SELECT id FROM ${ident(rtreeTable(type, field))} WHERE minX <= ? AND maxX >= ? AND minY <= ? AND maxY >= ?${boxTest})` : '1';
      if (c.op === 'bounds') {
        params.push(minX, maxX, minY, maxY);
        return `${prefilter} AND ${px} BETWEEN ? AND ? AND ${py} BETWEEN ? AND ?`;
      }
      params.push(minX, maxX, minY, maxY, handle);
      return `${prefilter} AND ${px} BETWEEN ? AND ? AND ${py} BETWEEN ? AND ? AND cd_in_polygon(?, ${px}, ${py})`;
    }
  }
}

/**
 * The WHERE clause of conditions on a `doc` column. `tree: false` tests points on the documents alone, without the
 * type's R*Trees: for rows of another table (the change feed's).
 */
export function compileWhere(conditions: readonly Condition[], type: string, tree = true): Compiled {
  const params: unknown[] = [];
  const parts = conditions.map((c) => compileCondition(c, type, params, tree));
  return { sql: parts.length ? parts.join(' AND ') : '1', params };
}

/**
 * ORDER BY for a sort, ties by insertion order. Scalar fields sort on their canonical expression
 * (SQLite's NULL < numbers < text matches MongoDB's order for them); other paths rank types first.
 */
export function compileOrder(sort: Sort | null): string {
  if (!sort) return 'ORDER BY rowid';
  const dir = sort.order === 1 ? 'ASC' : 'DESC';
  const { rank, key } = sortKey(sort);
  if (sort.path.scalar) return `ORDER BY ${key} ${dir}, rowid ASC`;
  return `ORDER BY ${rank} ${dir}, ${key} ${dir}, rowid ASC`;
}

/**
 * The expressions a sort orders by: a rank of the value's type (MongoDB's order across types: null/missing,
 * numbers, strings, objects, arrays, booleans) and the value. A scalar field holds one type, so its rank is only
 * null-or-not and the ORDER BY uses the field's own expression (its index).
 */
function sortKey(sort: Sort): { rank: string; key: string } {
  if (sort.path.scalar) {
    const x = fieldExpr(sort.path.steps[0]!.name);
    return { rank: `(${x} IS NOT NULL)`, key: x };
  }
  const p = jsonPath(sort.path.steps);
  const rank =
    `CASE json_type(doc, ${p}) WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 ` +
    `WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'false' THEN 5 WHEN 'true' THEN 5 ELSE 0 END`;
  return { rank, key: `json_extract(doc, ${p})` };
}

/**
 * The matches after a keyset position, in the sort's order (ties by rowid, ascending in both directions). For a
 * scalar field the condition opens with a range on the field itself, so its index seeks to the position instead
 * of reading every earlier match: paging a million documents costs each page only its own rows.
 */
function afterKeyset(sort: Sort | null, at: Keyset, params: unknown[]): string {
  if (!sort) {
    params.push(at.seq);
    return 'rowid > ?';
  }
  const { rank, key } = sortKey(sort);
  if (sort.path.scalar) {
    if (at.key === null) {
      params.push(at.seq);
      return sort.order === 1 ? `(${key} IS NOT NULL OR rowid > ?)` : `(${key} IS NULL AND rowid > ?)`;
    }
    params.push(at.key, at.key, at.seq);
    return sort.order === 1 ? `(${key} >= ? AND (${key} > ? OR rowid > ?))` : `((${key} <= ? AND (${key} < ? OR rowid > ?)) OR ${key} IS NULL)`;
  }
  const cmp = sort.order === 1 ? '>' : '<';
  params.push(at.rank, at.rank, at.key, at.key, at.seq);
  return `(${rank} ${cmp} ? OR (${rank} = ? AND (${key} ${cmp} ? OR (${key} IS ? AND rowid > ?))))`;
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

/** A query as the store runs it: the page's statement and, for a paged query, the statement counting every match. */
export interface CompiledSelect {
  readonly sql: string;
  readonly params: unknown[];
  /** Counts every match (`total`); run in the same read transaction as `sql` when the query is paged. */
  readonly countSql: string;
  readonly countParams: unknown[];
  /** True when `limit` or `skip` cut the page, so `total` needs `countSql` (or the cursor carries it). */
  readonly paged: boolean;
  /**
   * True when the page is limited: rows are then { d: document JSON, s: rowid, r: sort rank, k: sort key } and one
   * row past the limit is read, to tell whether a cursor should continue.
   */
  readonly keyed: boolean;
  /**
   * A limited first page with conditions, as one statement: the matches' rowids and sort keys are found once
   * (materialized), counted, and only the page's documents read. Rows as `sql`'s plus `n`, every match (none when the
   * page is past the end). The backend runs it instead of `sql` and `countSql` where both would evaluate every match.
   */
  readonly onePass: OnePass | null;
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
    if (c.op === 'bounds' || c.op === 'polygon') return true;
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
 * finds its matches.
 * @example const { sql, params } = compileSelect(plan, { type: 'Well', keyed: new Set(['pwi']) });
 */
export function compileSelect(plan: QueryPlan, target: SelectTarget, rows?: number): CompiledSelect {
  const table = ident(docsTable(target.type));
  const where = compileWhere(plan.conditions, target.type);
  const paged = plan.limit > 0 || plan.skip > 0;
  const keyed = plan.limit > 0;
  // In insertion order, the matches are found first as a set of rowids, then read in rowid order: the
  // planner then picks the best index for the conditions, and no sorter carries whole documents.
  // An equality on an indexed field finds a handful of rows: there the plain form is cheaper.
  const pinpoint = plan.conditions.some(
    (c) => c.path.scalar && ((c.op === 'eq' && c.value !== null) || (c.op === 'in' && c.values.length <= 100)) && target.keyed.has(c.path.steps[0]!.name),
  );
  const params = [...where.params];
  const listed = plan.conditions.length > 0 && !plan.sort && !pinpoint;
  let filter = listed ? `rowid IN (SELECT rowid FROM ${table} WHERE ${where.sql})` : where.sql;
  let from = table;
  if (plan.after && listed) {
    // A later page in insertion order. Listing the matches again would read every one of them on every page (an
    // export of 100k matches in pages of 1,000: quadratic). Dense matches, or conditions no index serves, are found
    // by walking the table on from the cursor's rowid, which reads each row once over the whole paging; sparse
    // matches an index finds are listed from the cursor on (the index range, without the rows).
    const walk = !indexServed(plan.conditions, target) || plan.after.total * plan.after.total >= 2 * Math.max(plan.limit, 1) * (rows ?? Infinity);
    if (walk) {
      from = `${table} NOT INDEXED`;
      filter = `${where.sql} AND ${afterKeyset(null, plan.after, params)}`;
    } else {
      filter = `rowid IN (SELECT rowid FROM ${table} WHERE ${where.sql} AND ${afterKeyset(null, plan.after, params)})`;
    }
  } else if (plan.after) filter = `${filter} AND ${afterKeyset(plan.sort, plan.after, params)}`;
  const doc = plan.fields ? projection(plan.fields, idFromIndex(plan.fields, target), table) : 'json(doc)';
  let columns = doc;
  let onePass: OnePass | null = null;
  if (keyed) {
    const { rank, key } = plan.sort ? sortKey(plan.sort) : { rank: '0', key: 'NULL' };
    columns = `${doc} AS d, rowid AS s, ${rank} AS r, ${key} AS k`;
    if (!plan.after && plan.conditions.length) {
      const dir = plan.sort?.order === -1 ? 'DESC' : 'ASC';
      const order = (t: string) => (!plan.sort ? `${t}s ASC` : plan.sort.path.scalar ? `${t}k ${dir}, ${t}s ASC` : `${t}r ${dir}, ${t}k ${dir}, ${t}s ASC`);
      onePass = {
        sql:
          `WITH m AS MATERIALIZED (SELECT rowid AS s, ${rank} AS r, ${key} AS k FROM ${table} WHERE ${where.sql}), ` +
          `p AS (SELECT s, r, k FROM m ORDER BY ${order('')} LIMIT ? OFFSET ?) ` +
          `SELECT ${doc} AS d, p.s AS s, p.r AS r, p.k AS k, (SELECT count(*) FROM m) AS n FROM p JOIN ${table} ON ${table}.rowid = p.s ORDER BY ${order('p.')}`,
        params: [...where.params, plan.limit + 1, plan.skip],
        always: listed,
      };
    }
  }
  const sql = `SELECT ${columns} FROM ${from} WHERE ${filter} ${compileOrder(plan.sort)}${paged ? ' LIMIT ? OFFSET ?' : ''}`;
  if (paged) params.push(keyed ? plan.limit + 1 : -1, plan.skip);
  return { sql, params, countSql: `SELECT count(*) FROM ${table} WHERE ${where.sql}`, countParams: where.params, paged, keyed, onePass };
}

/**
 * The shape of a plan whose conditions are all on scalar fields (the common queries) and that continues no cursor:
 * `key` is the same for two such plans of one type exactly when compileSelect gives them the same statements, and
 * `where` holds the values their WHERE clause binds (see rebind). Null for any other plan: it is compiled each time.
 * @example selectShape(parsePlan(ctx, { pwi: 'W1' }, null))?.key // 'eq pwi\u0000|||'
 */
export function selectShape(plan: QueryPlan): { key: string; where: unknown[] } | null {
  if (plan.after) return null;
  let key = '';
  const where: unknown[] = [];
  for (const c of plan.conditions) {
    if (!c.path.scalar || c.op === 'bounds' || c.op === 'polygon') return null;
    const part = scalarPart(c);
    key += `${part.shape} ${c.path.text}\u0000`;
    for (const p of part.params) where.push(p);
  }
  const sort = plan.sort ? `${plan.sort.path.text} ${plan.sort.order}` : '';
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
