/**
 * SQLite's hooks for the one SQL compiler (src/sql/compile.ts): JSON read with json_type/json_extract over a JSON path,
 * arrays fanned out with json_each, regexes by the RE2 function cd_regexp, points found by the type's R*Trees.
 */
import type { FieldPath, SortKey, Step } from '../query/ast.js';
import { widen } from '../geo/boxes.js';
import { polygonHandle } from '../geo/polygons.js';
import { pastEnd } from '../sql/compile.js';
import { COMPARE, type Dialect, type JsonSource, type JsonValue, type Target } from '../sql/dialect.js';
import { bound, join, literal, render, sql, type Compiled, type Sql } from '../sql/fragment.js';
import { docsTable, ident, rtreeTable } from './names.js';
import { CLEAR_CONTEXT, setContext } from './journal.js';

/**
 * SQL string literal of a JSON path.
 * @example jsonPath([{ name: 'surfaceLoc', indexes: [] }, { name: 'coordinates', indexes: [0] }]) // `'$."surfaceLoc"."coordinates"[0]'`
 */
export function jsonPath(steps: readonly Step[]): string {
  return `'$${steps.map((s) => `."${s.name}"${s.indexes.map((i) => `[${i}]`).join('')}`).join('')}'`;
}

/**
 * The canonical expression of a top-level field: indexes are declared on exactly this text.
 * @example fieldExpr('pwi') // `json_extract(doc, '$."pwi"')`
 */
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
function bind(v: unknown): unknown {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

/** The type class of a json_type for equality: integers and reals are one class (1 = 1.0). */
function eqClass(t: string): string {
  return `CASE ${t} WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number' ELSE ${t} END`;
}

/** A tested value equals one operand. */
function equals(v: JsonValue, value: unknown): Sql | string {
  const t = v.type;
  if (value === null) return `(${t} IS NULL OR ${t} = 'null')`;
  if (typeof value === 'boolean') return `${t} = '${value}'`;
  if (typeof value === 'number') return sql`(${t} IN ('integer', 'real') AND ${v.value} = ${bound(value)})`;
  if (typeof value === 'string') return sql`(${t} = 'text' AND ${v.value} = ${bound(value)})`;
  // Arrays and objects compare whole, as SQLite renders them (minified, key order kept).
  return sql`(${t} = '${Array.isArray(value) ? 'array' : 'object'}' AND ${v.value} = json(${bound(JSON.stringify(value))}))`;
}

/**
 * A tested value equals any of the operands: a short OR, or, for long lists, one probe of the bound list as a set
 * of (class, value) pairs. The subquery is not correlated, so SQLite builds its index once per statement and each
 * value costs a lookup: the cost is one pass over the documents, not documents × values.
 */
function equalsAny(v: JsonValue, values: readonly unknown[]): Sql | string {
  if (values.length === 1) return equals(v, values[0]);
  if (values.length <= 8) return sql`(${join(values.map((x) => equals(v, x)), ' OR ')})`;
  const present = values.filter((x) => x !== null);
  const probe = sql`(${eqClass(v.type)}, ${v.value}) IN (SELECT ${eqClass('o.type')}, o.value FROM json_each(${bound(JSON.stringify(present))}) AS o)`;
  return present.length < values.length ? sql`(${probe} OR ${v.type} IS NULL OR ${v.type} = 'null')` : probe;
}

/** The JSON documents of a `doc` column: a value is read by its base and JSON path, arrays fan out with json_each. */
const doc: JsonSource = {
  root: 'doc',
  at: (base, steps) => ({ type: `json_type(${base}, ${jsonPath(steps)})`, value: `json_extract(${base}, ${jsonPath(steps)})` }),
  length: (base, steps) => `json_array_length(${base}, ${jsonPath(steps)})`,
  candidate: { type: 'c.t', value: 'c.v' },
  /** Rows (t, v) of every value a condition tests: arrays on the way fanned out, the leaf and, when an array, its elements. */
  candidates(steps) {
    const none = (base: string, step: Step) => pastEnd(sqlite, doc, base, [], step);
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
  },
};

/** SQLite's hooks: `?` placeholders bound once per use, 1/0 for truth, rowid for insertion order. */
export const sqlite: Dialect = {
  listHas: (list, item) => `EXISTS (SELECT 1 FROM json_each(${list}) AS e WHERE e.value = ${literal(item)})`,
  text: () => '?',
  reuse: false,
  true: '1',
  false: '0',
  distinct: 'IS NOT',
  seq: 'rowid',
  seqCast: '',
  doc,
  direction: (asc) => (asc ? 'ASC' : 'DESC'),
  rank: (test) => test,
  coordinates: (field) => [0, 1].map((i) => `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }, { name: 'coordinates', indexes: [i] }])})`) as [string, string],
  atMostOne: (x) => sql`min(1, ${x})`,
  // SQLite's JSON functions print reals with 15 digits: 17 read back as the same double.
  floatText: (x) => sql`printf('%!.17g', ${x})`,
  tuple(items) {
    // Reals as 17 digits (as floatText); `|| ''` drops the JSON subtype of an object or array key, kept as its text.
    const item = (x: Sql | string) => sql`CASE typeof(${x}) WHEN 'real' THEN json(printf('%!.17g', ${x})) WHEN 'text' THEN ${x} || '' ELSE ${x} END`;
    return sql`json_array(${join(items.map(item), ', ')})`;
  },
  scalar: (path) => fieldExpr(path.steps[0]!.name),
  scalarValue: (value) => bound(bind(value)),
  anyOf(values) {
    const param = bound(JSON.stringify(values));
    return { param, test: (x) => sql`${x} IN (SELECT value FROM json_each(${param}))` };
  },
  regex(c) {
    const source = bound(c.source);
    const flags = bound(c.flags);
    return { params: [source, flags], test: (text) => sql`cd_regexp(${source}, ${flags}, ${text})` };
  },
  string: (v) => ({ is: `${v.type} = 'text'`, text: v.value }),
  compare(op, value) {
    const p = bound(bind(value));
    const types = typeof value === 'number' ? `('integer', 'real')` : `('true', 'false')`;
    return (v) => sql`(${v.type} IN ${types} AND ${v.value} ${COMPARE[op]} ${p})`;
  },
  equalsAny: (path: FieldPath, values, some) => some(path, (v) => equalsAny(v, values)),
  geo(c, target) {
    const field = c.path.steps[0]!.name;
    if (c.op === 'near') return nearBoxes(c.boxes, field, target);
    const [minX, minY, maxX, maxY] = c.box;
    const px = `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }, { name: 'coordinates', indexes: [0] }])})`;
    const py = `json_extract(doc, ${jsonPath([{ name: field, indexes: [] }, { name: 'coordinates', indexes: [1] }])})`;
    // One prepared polygon (one handle) serves the tree's boxes and the points.
    const handle = c.op === 'polygon' ? bound(polygonHandle(c.rings)) : null;
    // The R*Tree holds float32 boxes rounded outward: it only finds candidates; the exact test is on the stored doubles.
    // A polygon's candidates are first tested on the tree's own boxes: only those that may lie inside are read.
    const boxTest = handle ? sql` AND cd_polygon_box(${handle}, minX, maxX, minY, maxY)` : '';
    const prefilter = target.tree
      ? sql`${ident(docsTable(target.type))}.rowid IN (SELECT id FROM ${ident(rtreeTable(target.type, field))} WHERE minX <= ${bound(widen(maxX, 1))} AND maxX >= ${bound(widen(minX, -1))} AND minY <= ${bound(widen(maxY, 1))} AND maxY >= ${bound(widen(minY, -1))}${boxTest})`
      : '1';
    const exact = sql`${prefilter} AND ${px} BETWEEN ${bound(minX)} AND ${bound(maxX)} AND ${py} BETWEEN ${bound(minY)} AND ${bound(maxY)}`;
    return handle ? sql`${exact} AND cd_in_polygon(${handle}, ${px}, ${py})` : exact;
  },
  stored: (json) => [['doc', sql`jsonb(${json})`]],
  docText: 'json(doc)',
  // One connection writes at a time (BEGIN IMMEDIATE): rows read in a write transaction need no lock.
  lock: '',
  skipConflicts: 'ON CONFLICT DO NOTHING RETURNING id',
  elements: (array) => ({ from: sql`json_each(${array}) AS e`, item: 'e.value', at: 'e.key', member: (name) => `(e.value ->> ${jsonPath([{ name, indexes: [] }])})` }),
  anyText: (column, values) => sql`${column} IN (SELECT value FROM json_each(${bound(JSON.stringify(values))}))`,
  setFields(sets, stamps) {
    // Stamps go in as JSON text like the fields set: a JS number bound alone would be stored as a real (1.7e12 → 1.7e12.0).
    const args = [
      ...sets.map((s) => sql`${jsonPath(s.steps)}, json(${bound(JSON.stringify(s.value))})`),
      ...Object.entries(stamps).map(([k, v]) => sql`${jsonPath([{ name: k, indexes: [] }])}, json(${bound(JSON.stringify(v))})`),
    ];
    return sql`doc = jsonb_set(doc, ${join(args, ', ')})`;
  },
  context: (ctx) => ({ set: setContext(ctx), clear: CLEAR_CONTEXT }),
  /** Types ranked as MongoDB orders them (null/missing, numbers, strings, objects, arrays, booleans), then json_extract's value. */
  pathSort(sort: SortKey) {
    const p = jsonPath(sort.path.steps);
    const rank =
      `CASE json_type(doc, ${p}) WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 ` +
      `WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'false' THEN 5 WHEN 'true' THEN 5 ELSE 0 END`;
    const key = `json_extract(doc, ${p})`;
    const dir = sort.order === 1 ? 'ASC' : 'DESC';
    const cmp = sort.order === 1 ? '>' : '<';
    return {
      keys: [{ expr: rank, direction: dir }, { expr: key, direction: dir }],
      rank,
      key,
      beyond(at, atKey) {
        const r = bound(at);
        return sql`(${rank} ${cmp} ${r} OR (${rank} = ${r} AND ${key} ${cmp} ${bound(atKey)}))`;
      },
      same: (at, atKey) => sql`(${rank} = ${bound(at)} AND ${key} IS ${bound(atKey)})`,
    };
  },
};

/**
 * The R*Tree's candidates for a `near` condition's boxes (widened past float32) where `target.tree`; no test
 * otherwise. The distance alone decides (the boxes hold the whole cap), so the stored doubles are not boxed again.
 */
function nearBoxes(boxes: readonly (readonly [number, number, number, number])[], field: string, target: Target): Sql | string {
  if (!target.tree) return '1';
  const tree = ident(rtreeTable(target.type, field));
  const found = boxes.map(
    ([minX, minY, maxX, maxY]) =>
      sql`SELECT id FROM ${tree} WHERE minX <= ${bound(widen(maxX, 1))} AND maxX >= ${bound(widen(minX, -1))} AND minY <= ${bound(widen(maxY, 1))} AND maxY >= ${bound(widen(minY, -1))}`,
  );
  return sql`${ident(docsTable(target.type))}.rowid IN (${join(found, ' UNION ALL ')})`;
}

/**
 * Renders a fragment as SQLite runs it: `?` placeholders, values in order.
 * @example toSqlite(sql`id = ${bound('W1')}`) // { sql: 'id = ?', params: ['W1'] }
 */
export function toSqlite(fragment: Sql | string): Compiled {
  return render(fragment, sqlite);
}
