/**
 * PostgreSQL's hooks for the one SQL compiler (src/sql/compile.ts), over a documents table (`seq`, `id`, `doc jsonb`,
 * `body text`). `doc` answers conditions, indexes and sorts; `body` is the document's exact JSON text (key order kept,
 * which jsonb drops), read for the two rules that need it: whole objects compare with key order, and objects and
 * arrays sort by their JSON text (README "Semantics"). Arrays fan out with jsonb_array_elements: jsonpath's lax mode
 * unwraps nested arrays and has no "missing counts as null", so it cannot state the rules. Strings compare under
 * COLLATE "C" (UTF-8 byte order in a UTF8 database), numbers as numeric (exact for every double).
 */
import type { FieldInfo } from '../catalogue/index.js';
import type { Category } from '../catalogue/kinds.js';
import { requestError } from '../envelope.js';
import { shown } from '../limits.js';
import type { Condition, SortKey, Step } from '../query/ast.js';
import { pastEnd } from '../sql/compile.js';
import { COMPARE, type Comparison, type Dialect, type JsonSource } from '../sql/dialect.js';
import { bound, join, literal, render, sql, type Compiled, type Param, type Sql } from '../sql/fragment.js';
import { put } from '../catalogue/validate.js';
import { TINY } from '../geo/near.js';
import { contextStatement } from './journal.js';
import { key } from './names.js';
import { toPostgresRegex } from './regex.js';

/**
 * Renders a fragment as PostgreSQL runs it: `$n::type` placeholders, a value used twice bound once.
 * @example toPostgres(sql`id = ${bound('W1', 'text')}`) // { sql: 'id = $1::text', params: ['W1'] }
 */
export function toPostgres(fragment: Sql | string): Compiled {
  return render(fragment, postgres);
}

// ---- expressions -----------------------------------------------------------------------------------------------

/** The jsonb functions, or their json twins for the exact text in `body`. */
interface Flavor {
  readonly type: string;
  readonly elements: string;
  readonly length: string;
  readonly wrap: string;
  readonly empty: string;
  readonly json: boolean;
}
const JSONB: Flavor = { type: 'jsonb_typeof', elements: 'jsonb_array_elements', length: 'jsonb_array_length', wrap: 'jsonb_build_array', empty: `'[]'::jsonb`, json: false };
const JSON_TEXT: Flavor = { type: 'json_typeof', elements: 'json_array_elements', length: 'json_array_length', wrap: 'json_build_array', empty: `'[]'::json`, json: true };

/**
 * One step from `base`: the member (objects only: `->` on anything else is NULL), then its indexes (arrays only).
 * jsonb's `-> 0` answers a scalar itself (a scalar is stored as a one-element pseudo-array), so jsonb indexes go
 * through a strict jsonpath, which answers nothing for anything but an array long enough; json's `->` has no such quirk.
 */
function member(base: string, step: Step, f: Flavor): string {
  const named = `(${base} -> ${key(step.name)})`;
  if (!step.indexes.length) return named;
  if (f.json) return `(${named}${step.indexes.map((i) => ` -> ${i}`).join('')})`;
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
 * them (`doc` names another jsonb value for the same expression over it). Strings and dates compare as text under
 * COLLATE "C"; numbers and booleans are cast only when the stored value has that JSON type (a cast of anything else
 * would fail the statement). Other kinds index their jsonb (JSON null as SQL NULL, so a null never collides on a
 * unique key).
 * @example fieldExpr({ name: 'pwi', kind: 'String', category: 'string' }) // `((doc ->> 'pwi') COLLATE "C")`
 */
export function fieldExpr(field: FieldInfo, doc = 'doc'): string {
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

/**
 * Moves a prefilter bound outward past the index's rounding (see pointExpr): the GiST index only finds candidates;
 * membership is decided on the stored doubles.
 */
function widen(v: number, dir: 1 | -1): number {
  return v + dir * GRID_SLACK;
}

// ---- values along a path -------------------------------------------------------------------------------------

/** A column of JSON read with one flavor: `doc` as jsonb, or `body` parsed as json (its exact text). */
function source(f: Flavor, root: string): JsonSource {
  const self: JsonSource = {
    root,
    at: (base, steps) => {
      const v = chain(base, steps, f);
      return { type: `${f.type}(${v})`, value: v };
    },
    length: (base, steps) => `${f.length}(${chain(base, steps, f)})`,
    candidate: { type: `${f.type}(c.v)`, value: 'c.v' },
    /**
     * Rows `v` of every value tested: arrays on the way fan out, the leaf with its elements when it is an array; a
     * missing leaf is NULL (JSON null on a longer jsonb path: both answer only the null tests). Each is one
     * set-returning function over an immutable expression of the row, the one shape of correlated subquery Citus
     * pushes down to the shards (a UNION, a LATERAL chain or a STABLE function it refuses, or worse).
     */
    candidates(steps) {
      if (steps.length === 1 || f.json) return chained(steps);
      return `SELECT c.v FROM jsonb_array_elements(${jsonbCandidates(root, steps)}) AS c(v)`;
    },
  };
  /** The leaf and its elements as rows: o = 0 the value itself, o = k its k-th element. */
  const leaf = (b: string, s: Step) => {
    const m = member(b, s, f);
    const from = `CASE WHEN ${pastEnd(postgres, self, b, [], s)} THEN 1 ELSE 0 END`;
    return `SELECT (CASE WHEN o.i = 0 THEN ${m} ELSE ${m} -> (o.i - 1) END) AS v FROM generate_series(${from}, CASE WHEN ${f.type}(${m}) = 'array' THEN ${f.length}(${m}) ELSE 0 END) AS o(i)`;
  };
  /** The fan-out as joined set-returning functions, for the exact text of `body` on paths of several steps (plain PostgreSQL). */
  const chained = (steps: readonly Step[]): string => {
    if (steps.length === 1) return leaf(root, steps[0]!);
    const from: string[] = [];
    let prev = root;
    for (let i = 0; i < steps.length - 1; i++) {
      const s = steps[i]!;
      const m = member(prev, s, f);
      // A non-object yields NULL from `->`: wrapped as [null], the next step reads it as missing.
      from.push(`${f.elements}(CASE WHEN ${pastEnd(postgres, self, prev, [], s)} THEN ${f.empty} WHEN ${f.type}(${m}) = 'array' THEN ${m} ELSE ${f.wrap}(${m}) END) AS n${i + 1}(v)`);
      prev = `n${i + 1}.v`;
    }
    return `SELECT x.v FROM ${from.join(' CROSS JOIN LATERAL ')} CROSS JOIN LATERAL (${leaf(prev, steps[steps.length - 1]!)}) AS x(v)`;
  };
  return self;
}

/** A jsonpath string literal of a checked field name (letters, digits, `_`, `-`: nothing to escape). */
const pathName = (name: string) => JSON.stringify(key(name).slice(1, -1));

/** `jsonb_path_query_array` of a constant strict or lax path: immutable, so Citus evaluates it on the shards. */
const query = (array: string, path: string) => `jsonb_path_query_array(${array}, '${path}')`;

/**
 * The values along a path of jsonb `doc` as one jsonb array, level by level: each level is an array of the values
 * reached (JSON null where the path goes missing), the next one computed from it by jsonpath, with no subquery. Per
 * step: the member of each object that has it (strict: nothing else raises), a null when some value is no object or
 * lacks it, then each index of arrays long enough (past the end: nothing; not an array: missing); between steps
 * arrays fan out one level (lax `[*]` of a non-array is the value itself); the leaf adds its elements to itself.
 */
function jsonbCandidates(doc: string, steps: readonly Step[]): string {
  const missing = (missed: string) => `CASE WHEN ${missed} THEN '[null]'::jsonb ELSE '[]'::jsonb END`;
  let level = query(doc, 'strict $');
  for (const [n, step] of steps.entries()) {
    const name = pathName(step.name);
    const { values, indexed } = stepValues(level, step);
    const missed = [`jsonb_path_exists(${level}, 'strict $[*] ? (@.type() != "object" || !(exists(@.keyvalue() ? (@.key == ${name}))))')`];
    for (const before of indexed) missed.push(`jsonb_path_exists(${before}, 'strict $[*] ? (@.type() != "array")')`);
    const nulls = missing(missed.join(' OR '));
    level = n === steps.length - 1 ? `(${values} || ${query(values, 'strict $[*] ? (@.type() == "array")[*]')} || ${nulls})` : `(${fanOut(values)} || ${nulls})`;
  }
  return level;
}

/**
 * One step from a level (a jsonb array of values): the member of each object that has it, then each index of arrays
 * long enough; `indexed` holds the values before each index (what the null padding of `jsonbCandidates` tests).
 */
function stepValues(level: string, step: Step): { values: string; indexed: string[] } {
  let values = query(level, `strict $[*] ? (@.type() == "object").keyvalue() ? (@.key == ${pathName(step.name)}).value`);
  const indexed: string[] = [];
  for (const i of step.indexes) {
    indexed.push(values);
    values = query(values, `strict $[*] ? (@.type() == "array" && @.size() > ${Math.trunc(i)})[${Math.trunc(i)}]`);
  }
  return { values, indexed };
}

/** Arrays of a level fanned out one level (lax `[*]` of a non-array is the value itself). */
const fanOut = (values: string) => query(values, 'lax $[*][*]');

/**
 * The values MongoDB's distinct reads along a path of jsonb `doc`, as one jsonb array: at every step arrays fan out
 * one level and only objects go on; the leaf's arrays give their elements (a nested array is one value). No
 * subquery and no joined set-returning function, so Citus evaluates it on the shards.
 * @example `jsonb_array_elements(${jsonbUnwound('m.doc', path.steps)})`
 */
export function jsonbUnwound(doc: string, steps: readonly Step[]): string {
  let level = query(doc, 'strict $');
  for (const step of steps) level = fanOut(stepValues(level, step).values);
  return level;
}

const DOC = source(JSONB, 'doc');
const BODY = source(JSON_TEXT, '(body::json)');

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

/** `v` equals the one bound value, or any of a bound list. */
const equalsBound = (v: string, p: Param, many: boolean) => (many ? sql`${v} = ANY(${p})` : sql`${v} = ${p}`);

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
function comparable(value: string, op: Comparison): { value: string; op: Comparison } {
  const text = value.replace(LONE_SURROGATE_G, '\ufffd');
  const nul = text.indexOf('\u0000');
  if (nul < 0) return { value: text, op };
  return { value: text.slice(0, nul), op: op === 'lt' || op === 'lte' ? 'lte' : 'gt' };
}

/**
 * `equalsAny` with key order where `ordered(v)`: jsonb equality decides everything but key order; objects whose key
 * order matters are compared as the exact JSON text, traversing `body`.
 */
function equalsAny(ordered: (v: unknown) => boolean): Dialect['equalsAny'] {
  return (path, values, some) => {
    const nulls = values.some((v) => v === null);
    const plain = values.filter((v) => v !== null && !ordered(v)).map((v) => JSON.stringify(v));
    const exact = values.filter((v) => v !== null && ordered(v)).map((v) => JSON.stringify(v));
    const parts: Sql[] = [];
    if (nulls || plain.length) {
      const p = plain.length ? bound(plain.length === 1 ? plain[0] : plain, plain.length === 1 ? 'jsonb' : 'jsonb[]') : null;
      parts.push(
        some(path, (v) => {
          const tests = [...(nulls ? [isNull(v.value)] : []), ...(p ? [equalsBound(v.value, p, plain.length > 1)] : [])];
          return tests.length === 1 ? tests[0]! : sql`(${join(tests, ' OR ')})`;
        }),
      );
    }
    if (exact.length) {
      const many = exact.length > 1;
      const text = bound(many ? exact : exact[0], many ? 'text[]' : 'text');
      const jsonb = bound(many ? exact : exact[0], many ? 'jsonb[]' : 'jsonb');
      // jsonb equality first: a cheap necessary condition before the text is parsed as json.
      parts.push(sql`(${some(path, (v) => equalsBound(v.value, jsonb, many))} AND ${some(path, (v) => equalsBound(`${v.value}::text`, text, many), BODY)})`);
    }
    return parts.length === 0 ? 'false' : parts.length === 1 ? parts[0]! : sql`(${join(parts, ' OR ')})`;
  };
}

/**
 * True when SQL would compare an operand of `c` with its key order along a path of several steps: that reads `body`
 * through joined set-returning functions in a correlated subquery, which Citus refuses ("cannot push down this
 * subquery"), so on Citus the backend decides such a condition in JS (src/query/values.ts) over the candidates
 * `unordered` finds, as it decides polygons.
 * @example orderedOnPath(plan.conditions[0]) // true for { 'extra.meta': { eq: { k: 1, j: 0 } } }
 */
export function orderedOnPath(c: Condition): boolean {
  if (c.path.scalar || c.path.steps.length < 2) return false;
  if (c.op === 'eq' || c.op === 'ne') return orderMatters(c.value);
  return c.op === 'in' && c.values.some(orderMatters);
}

// ---- the dialect -----------------------------------------------------------------------------------------------

/**
 * PostgreSQL's hooks: `$n::type` placeholders (a value used twice is bound once), true/false, `seq` for insertion
 * order, jsonb for conditions. A `polygon` compiles to its exterior's box only (a necessary condition): the backend
 * decides membership in JS, with the same code as SQLite (src/geo/polygons.ts), so both answer the same to the bit.
 */
export const postgres: Dialect = {
  listHas: (list, item) => `(${list})::jsonb ? ${literal(item)}`,
  stored: (json) => [
    ['doc', sql`${json}::jsonb`],
    ['body', sql`${json}::text`],
  ],
  docText: 'body',
  // Writes run under READ COMMITTED: what a write rewrites is locked as it is read, so no concurrent update is lost.
  lock: ' FOR UPDATE',
  skipConflicts: 'ON CONFLICT DO NOTHING RETURNING id',
  elements: (array) => ({ from: sql`json_array_elements(${array}) WITH ORDINALITY AS e(j, n)`, item: 'e.j', at: 'e.n', member: (name) => `(e.j ->> ${key(name)})` }),
  anyText: (column, values) => sql`${column} = ANY(${bound(values, 'text[]')})`,
  /**
   * Top-level fields only: `doc || fields`, and `body` rebuilt with its members in order (json_each keeps the text and
   * order of each member): a member set keeps its place, a new one goes last, as SQLite's json_set.
   */
  setFields(sets, stamps) {
    const fields: Record<string, unknown> = {};
    for (const set of sets) {
      if (set.steps.length !== 1) throw new TypeError('setFields: PostgreSQL sets top-level fields in SQL; a dotted path is rewritten by the backend');
      put(fields, set.steps[0]!.name, set.value);
    }
    for (const [k, v] of Object.entries(stamps)) put(fields, k, v);
    const f = bound(JSON.stringify(fields), 'text');
    const kept = `string_agg(to_json(e.key)::text || ':' || COALESCE(n.value::text, e.value::text), ',' ORDER BY e.o)`;
    const added = sql`(SELECT string_agg(to_json(a.key)::text || ':' || a.value::text, ',' ORDER BY a.o) FROM json_each(${f}::json) WITH ORDINALITY AS a(key, value, o) WHERE NOT (doc ? a.key))`;
    const body = sql`(SELECT '{' || concat_ws(',', ${kept}, ${added}) || '}' FROM json_each(body::json) WITH ORDINALITY AS e(key, value, o) LEFT JOIN json_each(${f}::json) AS n ON n.key = e.key)`;
    return sql`body = ${body}, doc = doc || ${f}::jsonb`;
  },
  // A literal, not a bound value: it rides on BEGIN's round trip, where nothing is bound.
  context: (ctx, distributed) => ({ set: contextStatement(ctx, distributed), clear: null }),
  text: (p, n) => (p.cast ? `$${n}::${p.cast}` : `$${n}`),
  reuse: true,
  true: 'true',
  false: 'false',
  distinct: 'IS DISTINCT FROM',
  seq: 'seq',
  seqCast: 'bigint',
  doc: DOC,
  direction: (asc) => (asc ? 'ASC NULLS FIRST' : 'DESC NULLS LAST'),
  rank: (test) => sql`${test}::int`,
  // Coordinates below TINY read as zero: PostgreSQL refuses a product that underflows, as a distance's would.
  coordinates: (field) => [0, 1].map((i) => `(CASE WHEN abs(${coordText(field, i as 0 | 1)}::float8) < ${TINY} THEN 0 ELSE ${coordText(field, i as 0 | 1)}::float8 END)`) as [string, string],
  atMostOne: (x) => sql`least(1, ${x})`,
  // float8's text output is the shortest that reads back as the same double (extra_float_digits ≥ 1, the default).
  floatText: (x) => sql`(${x})::text`,
  tuple: (items) => sql`jsonb_build_array(${join(items, ', ')})::text`,
  scalar: (path) => fieldExpr(path.field!),
  scalarValue: (value, path) => bound(value, castOf(path.field!.category)),
  anyOf(values, path) {
    const param = bound(values, `${castOf(path.field!.category)}[]`);
    return { param, test: (x) => sql`${x} = ANY(${param})` };
  },
  regex(c) {
    const t = toPostgresRegex(c.source, c.flags);
    if (!t.ok) {
      throw requestError(
        'INVALID_QUERY',
        `query.${c.path.text}.regex: ${shown(`/${c.source}/${c.flags}`)} uses ${t.reason}, which PostgreSQL's regex engine cannot match as RE2 does; this store refuses it rather than answer otherwise`,
        { field: `${c.path.text}.regex` },
      );
    }
    const p = bound(t.pattern, 'text');
    return { params: [p], test: (text) => sql`${text} ~ ${p}` };
  },
  string: (v) => ({ is: `${v.type} = 'string'`, text: `(${v.value} #>> '{}') COLLATE "C"` }),
  compare(op, value) {
    // jsonb orders numbers as numeric and false < true; the type test keeps the comparison in one class.
    const p = bound(JSON.stringify(value), 'jsonb');
    const type = typeof value === 'number' ? 'number' : 'boolean';
    return (v) => sql`(${v.type} = '${type}' AND ${v.value} ${COMPARE[op]} ${p})`;
  },
  equalsAny: equalsAny(orderMatters),
  geo(c) {
    const field = c.path.steps[0]!.name;
    const f8 = (v: number) => bound(v, 'float8');
    const box = ([minX, minY, maxX, maxY]: readonly number[]) =>
      sql`box(point(${f8(widen(minX!, -1))}, ${f8(widen(minY!, -1))}), point(${f8(widen(maxX!, 1))}, ${f8(widen(maxY!, 1))}))`;
    if (c.op === 'near') {
      // The GiST index finds the candidates of each box (a BitmapOr of two across the antimeridian); the distance decides.
      const found = c.boxes.map((b) => sql`${pointExpr(field)} <@ ${box(b)}`);
      return found.length === 1 ? found[0]! : sql`(${join(found, ' OR ')})`;
    }
    const [minX, minY, maxX, maxY] = c.box;
    // The GiST index finds candidates; the box is decided exactly on the stored doubles, edges included.
    return sql`${pointExpr(field)} <@ ${box(c.box)} AND ${coordText(field, 0)}::float8 BETWEEN ${f8(minX)} AND ${f8(maxX)} AND ${coordText(field, 1)}::float8 BETWEEN ${f8(minY)} AND ${f8(maxY)}`;
  },
  operand(c) {
    // Operands PostgreSQL cannot bind: no stored value equals them; comparisons keep their answers (see comparable).
    if ((c.op === 'eq' || c.op === 'ne') && !storable(c.value)) return c.op === 'ne';
    if (c.op === 'in' && !c.values.every(storable)) return { ...c, values: c.values.filter(storable) };
    if ((c.op === 'lt' || c.op === 'lte' || c.op === 'gt' || c.op === 'gte') && typeof c.value === 'string') return { ...c, ...comparable(c.value, c.op) };
    return c;
  },
  /**
   * A number or boolean field no index leads: its jsonb compared as jsonb, which orders numbers as numeric and
   * false < true, with no conversion per row (about 1.6× faster on a scan than casting each value); the type test
   * keeps other JSON types out, as the canonical expression's CASE does.
   */
  unindexed(c, path) {
    const field = path.field!;
    if (castOf(field.category) === 'text') return null;
    const v = `(doc -> ${key(field.name)})`;
    const type = field.category === 'boolean' ? 'boolean' : 'number';
    switch (c.op) {
      case 'eq':
      case 'ne':
        if (c.value === null) return sql`${c.op === 'eq' ? '' : 'NOT '}${isNull(v)}`;
        return sql`${v} ${c.op === 'eq' ? '=' : 'IS DISTINCT FROM'} ${bound(JSON.stringify(c.value), 'jsonb')}`;
      case 'in': {
        if (c.values.length === 0) return sql`false`;
        const present = c.values.filter((x) => x !== null).map((x) => JSON.stringify(x));
        const parts = [...(present.length ? [sql`${v} = ANY(${bound(present, 'jsonb[]')})`] : []), ...(present.length < c.values.length ? [isNull(v)] : [])];
        return parts.length === 1 ? sql`${parts[0]!}` : sql`(${join(parts, ' OR ')})`;
      }
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        return sql`(jsonb_typeof(${v}) = '${type}' AND ${v} ${COMPARE[c.op]} ${bound(JSON.stringify(c.value), 'jsonb')})`;
      default:
        return null;
    }
  },
  /**
   * MongoDB's rank of types (null/missing, numbers, strings, objects, arrays, booleans), then numbers by value and the
   * rest by text: strings as themselves, booleans as false < true, objects and arrays as their exact JSON text from
   * `body`, all in UTF-8 byte order. A sort path is read without array traversal: `->` through an array is NULL.
   */
  pathSort(sort: SortKey) {
    const asc = sort.order === 1;
    const direction = asc ? 'ASC NULLS FIRST' : 'DESC NULLS LAST';
    const cmp = asc ? '>' : '<';
    const v = chain('doc', sort.path.steps);
    const text = chain('(body::json)', sort.path.steps, JSON_TEXT);
    const rank =
      `(CASE jsonb_typeof(${v}) WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'object' THEN 3 ` +
      `WHEN 'array' THEN 4 WHEN 'boolean' THEN 5 ELSE 0 END)`;
    const num = `(CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END)`;
    const str =
      `((CASE jsonb_typeof(${v}) WHEN 'string' THEN ${v} #>> '{}' WHEN 'boolean' THEN ${v} #>> '{}' ` +
      `WHEN 'object' THEN ${text}::text WHEN 'array' THEN ${text}::text END) COLLATE "C")`;
    return {
      keys: [{ expr: rank, direction }, { expr: num, direction }, { expr: str, direction }],
      rank,
      key: `(CASE WHEN ${rank} = 1 THEN ${num}::text ELSE ${str} END)`,
      beyond(at, key) {
        const r = bound(at, 'int');
        const within = at === 0 || key === null ? 'false' : at === 1 ? sql`${num} ${cmp} ${bound(key, 'numeric')}` : sql`${str} ${cmp} ${bound(String(key), 'text')}`;
        return sql`(${rank} ${cmp} ${r} OR (${rank} = ${r} AND ${within}))`;
      },
      same(at, key) {
        const level = at === 0 || key === null ? 'true' : at === 1 ? sql`${num} = ${bound(key, 'numeric')}` : sql`${str} = ${bound(String(key), 'text')}`;
        return sql`(${rank} = ${bound(at, 'int')} AND ${level})`;
      },
    };
  },
};

/**
 * PostgreSQL's dialect comparing every whole value as jsonb, without key order: a necessary condition of an equality,
 * the SQL half of one the backend decides in JS (see orderedOnPath). Its other hooks are `postgres`'s.
 */
export const unordered: Dialect = { ...postgres, equalsAny: equalsAny(() => false) };
