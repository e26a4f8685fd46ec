/**
 * Checked plans → PostgreSQL SQL over a documents table (`seq`, `id`, `doc jsonb`, `body text`), every value bound.
 *
 * `doc` answers conditions, indexes and sorts; `body` is the document's exact JSON text (key order kept, which jsonb
 * drops), read for answers and for the two rules that need the text: whole objects compare with key order, and
 * objects and arrays sort by their JSON text (README "Semantics"). Values along a path follow MongoDB's array
 * traversal with jsonb_array_elements, as src/sqlite/compile.ts does with json_each: jsonpath's lax mode unwraps
 * nested arrays and has no "missing counts as null", so it cannot state the rules. Strings compare under
 * COLLATE "C" (UTF-8 byte order in a UTF8 database), numbers as numeric (exact for every double).
 */
import type { FieldInfo } from '../catalogue/index.js';
import type { Category } from '../catalogue/kinds.js';
import { requestError } from '../envelope.js';
import { shown } from '../limits.js';
import type { Condition, FieldPath, Keyset, QueryPlan, Sort, Step } from '../query/ast.js';
import { literalPrefix, prefixEnd } from '../sql/prefix.js';
import { key } from './names.js';
import { toPostgresRegex } from './regex.js';

/**
 * Bound values of one statement; `add` answers the placeholder, cast so the server never guesses a type.
 * @example const p = new Params(); p.add('W1', 'text') // '$1::text', p.values: ['W1']
 */
export class Params {
  readonly values: unknown[] = [];

  add(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

/** The jsonb functions, or their json twins for the exact text in `body`. */
interface Flavor {
  readonly type: string;
  readonly elements: string;
  readonly length: string;
  readonly wrap: string;
  readonly empty: string;
}
const JSONB: Flavor = { type: 'jsonb_typeof', elements: 'jsonb_array_elements', length: 'jsonb_array_length', wrap: 'jsonb_build_array', empty: `'[]'::jsonb` };
const JSON_TEXT: Flavor = { type: 'json_typeof', elements: 'json_array_elements', length: 'json_array_length', wrap: 'json_build_array', empty: `'[]'::json` };

/** The document as jsonb, and as json parsed from its exact text. */
const DOC = 'doc';
const BODY = '(body::json)';

// ---- expressions -----------------------------------------------------------------------------------------------

/**
 * One step from `base`: the member (objects only: `->` on anything else is NULL), then its indexes (arrays only).
 * jsonb's `-> 0` answers a scalar itself (a scalar is stored as a one-element pseudo-array), so jsonb indexes go
 * through a strict jsonpath, which answers nothing for anything but an array long enough; json's `->` has no such quirk.
 */
function member(base: string, step: Step, f: Flavor = JSONB): string {
  const named = `(${base} -> ${key(step.name)})`;
  if (!step.indexes.length) return named;
  if (f === JSON_TEXT) return `(${named}${step.indexes.map((i) => ` -> ${i}`).join('')})`;
  // Indexes are checked integers: the jsonpath literal holds digits only.
  return `jsonb_path_query_first(${named}, 'strict $${step.indexes.map((i) => `[${Math.trunc(i)}]`).join('')}', '{}', true)`;
}

function chain(base: string, steps: readonly Step[], f: Flavor = JSONB): string {
  return steps.reduce((b, s) => member(b, s, f), base);
}

/**
 * How a scalar category is stored and compared: the SQL type of its canonical expression.
 * @example castOf('int32') // 'numeric'
 */
export function castOf(category: Category): 'text' | 'numeric' | 'boolean' {
  if (category === 'boolean') return 'boolean';
  if (category === 'int32' || category === 'int64' || category === 'number') return 'numeric';
  return 'text';
}

/**
 * The canonical expression of a top-level field: indexes are declared on exactly this text, so the planner matches
 * them (`doc` names another jsonb value for the same expression over it). Strings and dates compare as text under COLLATE "C"; numbers and booleans are cast only when the stored value
 * has that JSON type (a cast of anything else would fail the statement). Other kinds index their jsonb (JSON null as
 * SQL NULL, so a null never collides on a unique key).
 * @example fieldExpr({ name: 'pwi', kind: 'String', category: 'string' }) // `((doc ->> 'pwi') COLLATE "C")`
 */
export function fieldExpr(field: FieldInfo, doc = DOC): string {
  const k = key(field.name);
  switch (field.category) {
    case 'string':
    case 'date':
      return `((${doc} ->> ${k}) COLLATE "C")`;
    case 'int32':
    case 'int64':
    case 'number':
      return `(CASE WHEN jsonb_typeof(${doc} -> ${k}) = 'number' THEN (${doc} ->> ${k})::numeric END)`;
    case 'boolean':
      return `(CASE WHEN jsonb_typeof(${doc} -> ${k}) = 'boolean' THEN (${doc} ->> ${k})::boolean END)`;
    default:
      return `(NULLIF(${doc} -> ${k}, 'null'::jsonb))`;
  }
}

/**
 * A coordinate of a GeoPoint field as stored (the exact decimal text).
 * @example coordText('surfaceLoc', 0) // "(doc -> 'surfaceLoc' -> 'coordinates' ->> 0)"
 */
export function coordText(field: string, axis: 0 | 1): string {
  return `(doc -> ${key(field)} -> 'coordinates' ->> ${axis})`;
}

/**
 * The point a GiST index holds for a GeoPoint field (queries name it with this exact text): the coordinates rounded
 * to 1e-6 degrees. GiST computes box areas in float8, and PostgreSQL refuses a product that underflows to zero
 * ("value out of range: underflow") — so points a few subnormals apart would make inserts fail. Rounded (exactly, as
 * numeric) every nonzero extent is at least 1e-6; the index only finds candidates, decided on the stored doubles.
 * @example `CREATE INDEX … USING gist ((${pointExpr('surfaceLoc')}))`
 */
export function pointExpr(field: string): string {
  return `point(round(${coordText(field, 0)}::numeric, 6)::float8, round(${coordText(field, 1)}::numeric, 6)::float8)`;
}

/** How far the indexed point may be from the stored one (rounding to 1e-6), plus PostgreSQL's geometric tolerance. */
const GRID_SLACK = 2e-6;

// ---- values along a path -------------------------------------------------------------------------------------

/**
 * True when an array index of `step` (from `base`) lands past the end of an array, an empty one included: the step
 * then yields no value at all (MongoDB), not a missing one. CASE keeps jsonb_array_length off non-arrays.
 */
function pastEnd(f: Flavor, base: string, step: Step): string {
  const parts = step.indexes.map((i, k) => {
    const x = member(base, { name: step.name, indexes: step.indexes.slice(0, k) }, f);
    return `(CASE WHEN ${f.type}(${x}) = 'array' THEN ${f.length}(${x}) <= ${i} ELSE false END)`;
  });
  return parts.length ? parts.join(' OR ') : 'false';
}

/**
 * Rows `v` of every value a condition tests (README "Values along a path"): arrays on the way fan out, the leaf is
 * tested with its elements when it is an array; a missing leaf, or one under a non-object, is SQL NULL.
 */
function candidates(f: Flavor, base: string, steps: readonly Step[]): string {
  const leaf = (b: string, s: Step) => {
    const m = member(b, s, f);
    return `SELECT ${m} AS v WHERE NOT (${pastEnd(f, b, s)}) UNION ALL SELECT ${f.elements}(CASE WHEN ${f.type}(${m}) = 'array' THEN ${m} END)`;
  };
  if (steps.length === 1) return leaf(base, steps[0]!);
  const from: string[] = [];
  let prev = base;
  for (let i = 0; i < steps.length - 1; i++) {
    const s = steps[i]!;
    const m = member(prev, s, f);
    // A non-object yields NULL from `->`: wrapped as [null], the next step reads it as missing.
    from.push(`${f.elements}(CASE WHEN ${pastEnd(f, prev, s)} THEN ${f.empty} WHEN ${f.type}(${m}) = 'array' THEN ${m} ELSE ${f.wrap}(${m}) END) AS n${i + 1}(v)`);
    prev = `n${i + 1}.v`;
  }
  return `SELECT x.v FROM ${from.join(' CROSS JOIN LATERAL ')} CROSS JOIN LATERAL (${leaf(prev, steps[steps.length - 1]!)}) AS x(v)`;
}

/**
 * Some value along the path satisfies `test(v)`. When no array lies on the path (the common case) only the leaf is
 * tested, without the correlated fan-out subquery. The answer is never NULL, so `NOT` of it is exact.
 */
function someValue(path: FieldPath, test: (v: string) => string, f: Flavor = JSONB, base: string = DOC): string {
  const steps = path.steps;
  const plain = steps.map((_, i) => `${f.type}(${chain(base, steps.slice(0, i + 1), f)}) IS DISTINCT FROM 'array'`).join(' AND ');
  const gone = steps
    .map((s, i) => (s.indexes.length ? pastEnd(f, chain(base, steps.slice(0, i), f), s) : ''))
    .filter(Boolean)
    .join(' OR ');
  return (
    `(CASE ${gone ? `WHEN ${gone} THEN false ` : ''}WHEN ${plain} THEN COALESCE(${test(chain(base, steps, f))}, false) ` +
    `ELSE EXISTS (SELECT 1 FROM (${candidates(f, base, steps)}) AS c WHERE ${test('c.v')}) END)`
  );
}

const isNull = (v: string) => `(${v} IS NULL OR ${v} = 'null'::jsonb)`;

/** True when comparing `v` whole needs its key order (an object of two or more keys somewhere inside). */
function orderMatters(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(orderMatters);
  if (v !== null && typeof v === 'object') {
    const values = Object.values(v);
    return values.length > 1 || values.some(orderMatters);
  }
  return false;
}

/**
 * Some value along the path equals one of `values` (README: numbers by value, never booleans or strings; arrays and
 * objects whole, key order included). jsonb equality decides everything but key order; objects whose key order
 * matters are compared as the exact JSON text, traversing `body`.
 */
function equalsAny(path: FieldPath, values: readonly unknown[], params: Params): string {
  const nulls = values.some((v) => v === null);
  const plain = values.filter((v) => v !== null && !orderMatters(v)).map((v) => JSON.stringify(v));
  const ordered = values.filter((v) => v !== null && orderMatters(v)).map((v) => JSON.stringify(v));
  const parts: string[] = [];
  if (nulls || plain.length) {
    const p = plain.length === 1 ? params.add(plain[0], 'jsonb') : plain.length ? params.add(plain, 'jsonb[]') : '';
    parts.push(
      someValue(path, (v) => {
        const tests = [...(nulls ? [isNull(v)] : []), ...(plain.length === 1 ? [`${v} = ${p}`] : plain.length ? [`${v} = ANY(${p})`] : [])];
        return tests.length === 1 ? tests[0]! : `(${tests.join(' OR ')})`;
      }),
    );
  }
  if (ordered.length) {
    const p = ordered.length === 1 ? params.add(ordered[0], 'text') : params.add(ordered, 'text[]');
    const eqText = (v: string) => (ordered.length === 1 ? `${v}::text = ${p}` : `${v}::text = ANY(${p})`);
    // jsonb equality first: a cheap necessary condition before the text is parsed as json.
    const p2 = ordered.length === 1 ? params.add(ordered[0], 'jsonb') : params.add(ordered, 'jsonb[]');
    const eqJsonb = (v: string) => (ordered.length === 1 ? `${v} = ${p2}` : `${v} = ANY(${p2})`);
    parts.push(`(${someValue(path, eqJsonb)} AND ${someValue(path, eqText, JSON_TEXT, BODY)})`);
  }
  return parts.length === 0 ? 'false' : parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
}

// ---- operands PostgreSQL cannot hold ------------------------------------------------------------------------------

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATE_G = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * Why a value cannot be stored or bound in PostgreSQL text (U+0000, an unpaired surrogate), or null.
 * @example unstorable({ a: ['x\u0000'] }) // 'the character U+0000'
 */
export function unstorable(v: unknown): string | null {
  if (typeof v === 'string') {
    if (v.includes('\u0000')) return 'the character U+0000';
    if (LONE_SURROGATE.test(v)) return 'an unpaired UTF-16 surrogate';
    return null;
  }
  if (Array.isArray(v)) {
    for (const x of v) {
      const r = unstorable(x);
      if (r) return r;
    }
    return null;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const r = unstorable(k) ?? unstorable(x);
      if (r) return r;
    }
  }
  return null;
}

/** An operand no stored value can equal: it holds what PostgreSQL cannot store (documents holding it are refused). */
const storable = (v: unknown) => unstorable(v) === null;

/**
 * A string operand of lt/lte/gt/gte as PostgreSQL can bind it, with the same answers. Unpaired surrogates become
 * U+FFFD, as UTF-8 encoding makes them (the byte order the README names). A U+0000 cannot be bound; stored strings
 * never hold one, so `p + "\0" + rest` has exactly `p` below it: lt/lte become lte p, gt/gte become gt p.
 */
function comparable(value: string, op: 'lt' | 'lte' | 'gt' | 'gte'): { value: string; op: 'lt' | 'lte' | 'gt' | 'gte' } {
  const text = value.replace(LONE_SURROGATE_G, '\ufffd');
  const nul = text.indexOf('\u0000');
  if (nul < 0) return { value: text, op };
  return { value: text.slice(0, nul), op: op === 'lt' || op === 'lte' ? 'lte' : 'gt' };
}

// ---- conditions ------------------------------------------------------------------------------------------------

const COMPARE = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/**
 * Moves a prefilter bound outward past the index's rounding (see pointExpr): the GiST index only finds candidates;
 * membership is decided on the stored doubles.
 */
function widen(v: number, dir: 1 | -1): number {
  return v + dir * GRID_SLACK;
}

function regexOperand(c: Extract<Condition, { op: 'regex' }>, params: Params): string {
  const t = toPostgresRegex(c.source, c.flags);
  if (!t.ok) {
    throw requestError(
      'INVALID_QUERY',
      `query.${c.path.text}.regex: ${shown(`/${c.source}/${c.flags}`)} uses ${t.reason}, which PostgreSQL's regex engine cannot match as RE2 does; this store refuses it rather than answer otherwise`,
      { field: `${c.path.text}.regex` },
    );
  }
  return params.add(t.pattern, 'text');
}

/**
 * A condition on a number or boolean field no index leads: its jsonb compared as jsonb, which orders numbers as
 * numeric and false < true, with no conversion per row (about 1.6× faster on a scan than casting each value); the
 * type test keeps other JSON types out, as the canonical expression's CASE does.
 */
function jsonbCondition(c: Condition, field: FieldInfo, params: Params): string | null {
  const v = `(doc -> ${key(field.name)})`;
  const type = field.category === 'boolean' ? 'boolean' : 'number';
  const isNull = `(${v} IS NULL OR ${v} = 'null'::jsonb)`;
  switch (c.op) {
    case 'eq':
    case 'ne':
      if (c.value === null) return c.op === 'eq' ? isNull : `NOT ${isNull}`;
      return `${v} ${c.op === 'eq' ? '=' : 'IS DISTINCT FROM'} ${params.add(JSON.stringify(c.value), 'jsonb')}`;
    case 'in': {
      if (c.values.length === 0) return 'false';
      const present = c.values.filter((x) => x !== null).map((x) => JSON.stringify(x));
      const parts = [...(present.length ? [`${v} = ANY(${params.add(present, 'jsonb[]')})`] : []), ...(present.length < c.values.length ? [isNull] : [])];
      return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return `(jsonb_typeof(${v}) = '${type}' AND ${v} ${COMPARE[c.op]} ${params.add(JSON.stringify(c.value), 'jsonb')})`;
    default:
      return null;
  }
}

/**
 * A condition on a scalar-typed top-level field: its canonical expression, so the planner uses its index; numbers and
 * booleans no index leads (`indexed` lacks them) compare as jsonb instead.
 */
function scalarCondition(c: Condition, field: FieldInfo, params: Params, indexed: ReadonlySet<string> | undefined): string {
  if ((castOf(field.category) !== 'text') && indexed && !indexed.has(field.name)) {
    const sql = jsonbCondition(c, field, params);
    if (sql !== null) return sql;
  }
  const x = fieldExpr(field);
  const cast = castOf(field.category);
  switch (c.op) {
    case 'eq':
    case 'ne':
      if (c.value === null) return `${x} ${c.op === 'eq' ? 'IS NULL' : 'IS NOT NULL'}`;
      // IS DISTINCT FROM is NULL-safe: `ne` keeps null and missing values, exactly `not eq`.
      return `${x} ${c.op === 'eq' ? '=' : 'IS DISTINCT FROM'} ${params.add(c.value, cast)}`;
    case 'in': {
      if (c.values.length === 0) return 'false';
      const present = c.values.filter((v) => v !== null);
      const parts: string[] = [];
      if (present.length === 1) parts.push(`${x} = ${params.add(present[0], cast)}`);
      else if (present.length > 1) parts.push(`${x} = ANY(${params.add(present, `${cast}[]`)})`);
      if (present.length < c.values.length) parts.push(`${x} IS NULL`);
      return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return `${x} ${COMPARE[c.op]} ${params.add(c.value, cast)}`;
    case 'regex': {
      // An anchored literal prefix becomes a range on the field, so its index narrows before the pattern runs.
      const prefix = literalPrefix(c.source, c.flags);
      const end = prefix ? prefixEnd(prefix) : null;
      const range = prefix ? [`${x} >= ${params.add(prefix, 'text')}`, ...(end !== null ? [`${x} < ${params.add(end, 'text')}`] : [])] : [];
      if (prefix && c.source === `^${prefix}`) return [...range, `${x} IS NOT NULL`].join(' AND ');
      return [...range, `${x} ~ ${regexOperand(c, params)}`].join(' AND ');
    }
    default:
      throw new TypeError(`${c.op} is not a scalar condition`);
  }
}

/**
 * One condition → SQL. A `polygon` compiles to its exterior's box only (a necessary condition): the backend decides
 * membership in JS, with the same code as SQLite (src/geo/polygons.ts), so both answer the same to the bit.
 * @example compileCondition(plan.conditions[0], params) // `((doc ->> 'pwi') COLLATE "C") = $1::text`
 */
export function compileCondition(condition: Condition, params: Params, indexed?: ReadonlySet<string>): string {
  let c = condition;
  // Operands PostgreSQL cannot bind: no stored value equals them; comparisons keep their answers (see comparable).
  if ((c.op === 'eq' || c.op === 'ne') && !storable(c.value)) return c.op === 'eq' ? 'false' : 'true';
  if (c.op === 'in' && !c.values.every(storable)) c = { ...c, values: c.values.filter(storable) };
  if ((c.op === 'lt' || c.op === 'lte' || c.op === 'gt' || c.op === 'gte') && typeof c.value === 'string') c = { ...c, ...comparable(c.value, c.op) };
  if (c.path.scalar && c.path.field && c.op !== 'bounds' && c.op !== 'polygon') return scalarCondition(c, c.path.field, params, indexed);
  switch (c.op) {
    case 'eq':
    case 'ne': {
      const sql = equalsAny(c.path, [c.value], params);
      return c.op === 'eq' ? sql : `NOT ${sql}`;
    }
    case 'in':
      return c.values.length === 0 ? 'false' : equalsAny(c.path, c.values, params);
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const op = COMPARE[c.op];
      if (typeof c.value === 'string') {
        const p = params.add(c.value, 'text');
        return someValue(c.path, (v) => `(jsonb_typeof(${v}) = 'string' AND (${v} #>> '{}') COLLATE "C" ${op} ${p})`);
      }
      // jsonb orders numbers as numeric and false < true; the type test keeps the comparison in one class.
      const p = params.add(JSON.stringify(c.value), 'jsonb');
      const type = typeof c.value === 'number' ? 'number' : 'boolean';
      return someValue(c.path, (v) => `(jsonb_typeof(${v}) = '${type}' AND ${v} ${op} ${p})`);
    }
    case 'regex': {
      const p = regexOperand(c, params);
      return someValue(c.path, (v) => `(jsonb_typeof(${v}) = 'string' AND (${v} #>> '{}') COLLATE "C" ~ ${p})`);
    }
    case 'bounds':
    case 'polygon': {
      const field = c.path.steps[0]!.name;
      const [minX, minY, maxX, maxY] = c.box;
      const box = `box(point(${params.add(widen(minX, -1), 'float8')}, ${params.add(widen(minY, -1), 'float8')}), point(${params.add(widen(maxX, 1), 'float8')}, ${params.add(widen(maxY, 1), 'float8')}))`;
      const x = `${coordText(field, 0)}::float8`;
      const y = `${coordText(field, 1)}::float8`;
      // The GiST index finds candidates; the box is decided exactly on the stored doubles, edges included.
      return (
        `${pointExpr(field)} <@ ${box} AND ${x} BETWEEN ${params.add(minX, 'float8')} AND ${params.add(maxX, 'float8')} ` +
        `AND ${y} BETWEEN ${params.add(minY, 'float8')} AND ${params.add(maxY, 'float8')}`
      );
    }
  }
}

/**
 * Every condition ANDed (`true` for none). `indexed`: the fields that lead an index (Settings.keyed); without it every
 * scalar field compares on its canonical expression.
 * @example const params = new Params(); const where = compileWhere(plan.conditions, params, new Set(['pwi']));
 */
export function compileWhere(conditions: readonly Condition[], params: Params, indexed?: ReadonlySet<string>): string {
  return conditions.length ? conditions.map((c) => compileCondition(c, params, indexed)).join(' AND ') : 'true';
}

// ---- order -----------------------------------------------------------------------------------------------------

interface OrderKey {
  readonly expr: string;
  /** `ASC NULLS FIRST`, `DESC NULLS LAST`: null and missing first ascending, last descending. */
  readonly direction: string;
}

/** How a sort orders rows: its ORDER BY keys (ties by `seq`), and the rank and key a cursor keeps of a row. */
interface SortShape {
  readonly keys: readonly OrderKey[];
  /** SQL of the row's rank (an integer) and key (text, numeric or boolean; NULL for rank 0), as a cursor keeps them. */
  readonly rank: string;
  readonly key: string;
  /** Rows after a cursor's position, in this order (ties by seq, ascending in both directions). */
  after(at: Keyset, params: Params): string;
}

/**
 * The order of a sort. A scalar field sorts on its canonical expression (its index); any other path by MongoDB's rank
 * of types (null/missing, numbers, strings, objects, arrays, booleans), then numbers by value and the rest by text:
 * strings as themselves, booleans as false < true, objects and arrays as their exact JSON text from `body`, all in
 * UTF-8 byte order. No sort: insertion order (`seq`).
 */
function sortShape(sort: Sort | null): SortShape {
  const seq: OrderKey = { expr: 'seq', direction: 'ASC' };
  if (!sort) {
    return { keys: [seq], rank: '0', key: 'NULL::text', after: (at, params) => `seq > ${params.add(at.seq, 'bigint')}` };
  }
  const asc = sort.order === 1;
  const direction = asc ? 'ASC NULLS FIRST' : 'DESC NULLS LAST';
  const cmp = asc ? '>' : '<';
  if (sort.path.scalar && sort.path.field) {
    const x = fieldExpr(sort.path.field);
    const cast = castOf(sort.path.field.category);
    return {
      keys: [{ expr: x, direction }, seq],
      rank: `(${x} IS NOT NULL)::int`,
      key: x,
      after(at, params) {
        const s = params.add(at.seq, 'bigint');
        if (at.key === null) return asc ? `(${x} IS NOT NULL OR seq > ${s})` : `(${x} IS NULL AND seq > ${s})`;
        const k = params.add(at.key, cast);
        // The leading range lets the field's index seek to the position instead of reading every earlier match.
        return asc ? `(${x} >= ${k} AND (${x} > ${k} OR seq > ${s}))` : `((${x} <= ${k} AND (${x} < ${k} OR seq > ${s})) OR ${x} IS NULL)`;
      },
    };
  }
  // A sort path is read without array traversal: `->` through an array is NULL (missing), as on SQLite.
  const v = chain(DOC, sort.path.steps);
  const text = chain(BODY, sort.path.steps, JSON_TEXT);
  const rank =
    `(CASE jsonb_typeof(${v}) WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'object' THEN 3 ` +
    `WHEN 'array' THEN 4 WHEN 'boolean' THEN 5 ELSE 0 END)`;
  const num = `(CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END)`;
  const str =
    `((CASE jsonb_typeof(${v}) WHEN 'string' THEN ${v} #>> '{}' WHEN 'boolean' THEN ${v} #>> '{}' ` +
    `WHEN 'object' THEN ${text}::text WHEN 'array' THEN ${text}::text END) COLLATE "C")`;
  return {
    keys: [{ expr: rank, direction }, { expr: num, direction }, { expr: str, direction }, seq],
    rank,
    key: `(CASE WHEN ${rank} = 1 THEN ${num}::text ELSE ${str} END)`,
    after(at, params) {
      const s = params.add(at.seq, 'bigint');
      const r = params.add(at.rank, 'int');
      const within =
        at.rank === 0 || at.key === null
          ? `seq > ${s}`
          : at.rank === 1
            ? `(${num} ${cmp} ${params.add(at.key, 'numeric')} OR (${num} = ${params.add(at.key, 'numeric')} AND seq > ${s}))`
            : `(${str} ${cmp} ${params.add(String(at.key), 'text')} OR (${str} = ${params.add(String(at.key), 'text')} AND seq > ${s}))`;
      return `(${rank} ${cmp} ${r} OR (${rank} = ${r} AND ${within}))`;
    },
  };
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
    const value = category && SCALAR_TEXT.has(category) ? `(${DOC} -> ${key(name)})` : `(${BODY} -> ${key(name)})`;
    // `->` answers SQL NULL for a missing member (a JSON null is the text 'null'): the part is then empty.
    parts.push(`COALESCE(',"${name}":' || ${value}::text, '')`);
  }
  return `(${parts.join(' || ')} || '}')`;
}

/** A query as the backend runs it. */
export interface PgSelect {
  /**
   * Limited (`keyed`): rows (total, body, rank, key, seq), one past the limit, the total on every row (NULL when the
   * page continues a cursor, whose total it carries) and a row of NULLs for an empty page. Skip without limit
   * (`paged`): one row (total, page: the page's JSON texts joined by commas). Otherwise: rows of `body`.
   */
  readonly sql: string;
  readonly params: unknown[];
  /** The count alone (what `explain` shows beside the page). */
  readonly countSql: string;
  readonly countParams: unknown[];
  readonly paged: boolean;
  readonly keyed: boolean;
}

/**
 * The statement of a query over `table` with the WHERE clause `where` (its values in `params`). A paged query counts
 * `total` and reads the page in one statement, so both come from one snapshot in one round trip; a limited one also
 * answers each row's sort rank and key, for the cursor of the next page.
 * @example selectStatement('"public"."docs_Well"', 'true', new Params(), plan)
 */
export function selectStatement(table: string, where: string, params: Params, plan: Pick<QueryPlan, 'sort' | 'limit' | 'skip' | 'after' | 'fields'>): PgSelect {
  const shape = sortShape(plan.sort);
  // The answer's text: the stored document, or its projection (options.fields).
  const body = plan.fields ? `${projection(plan.fields)} AS body` : 'body';
  const order = shape.keys.map((k) => `${k.expr} ${k.direction}`).join(', ');
  const countSql = `SELECT count(*) FROM ${table} WHERE ${where}`;
  const countParams = [...params.values];
  const paged = plan.limit > 0 || plan.skip > 0;
  if (!paged) return { sql: `SELECT ${body} FROM ${table} WHERE ${where} ORDER BY ${order}`, params: params.values, countSql, countParams, paged, keyed: false };
  const columns = shape.keys.map((k, i) => `${k.expr} AS k${i}`).join(', ');
  const again = shape.keys.map((k, i) => `p.k${i} ${k.direction}`).join(', ');
  if (plan.limit > 0) {
    const filter = plan.after ? `(${where}) AND ${shape.after(plan.after, params)}` : where;
    // One row past the limit tells whether a cursor should continue.
    const page = `SELECT ${body}, ${shape.rank} AS r, (${shape.key})::text AS k, seq AS s, ${columns} FROM ${table} WHERE ${filter} ORDER BY ${order} LIMIT ${params.add(plan.limit + 1, 'bigint')} OFFSET ${params.add(plan.skip, 'bigint')}`;
    // A page after a cursor is not counted again: its total is the one the cursor carries.
    const counted = plan.after ? `(SELECT NULL::bigint AS total)` : `(${countSql.replace('count(*)', 'count(*) AS total')})`;
    const sql = `SELECT c.total, p.body, p.r, p.k, p.s FROM ${counted} AS c LEFT JOIN LATERAL (${page}) AS p ON true ORDER BY ${again}`;
    return { sql, params: params.values, countSql, countParams, paged, keyed: true };
  }
  const offset = params.add(plan.skip, 'bigint');
  const sql =
    `SELECT (${countSql}) AS total, (SELECT string_agg(p.body, ',' ORDER BY ${again}) FROM ` +
    `(SELECT ${body}, ${columns} FROM ${table} WHERE ${where} ORDER BY ${order} OFFSET ${offset}) AS p) AS page`;
  return { sql, params: params.values, countSql, countParams, paged, keyed: false };
}
