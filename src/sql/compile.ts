/**
 * Checked conditions and sorts → SQL fragments, once for every engine: the dialect (dialect.ts) answers what differs.
 * JSON paths come only from checked path steps (see query/parse.ts); every value is bound.
 */
import { capBoxes, EARTH_RADIUS, RADIANS, TINY } from '../geo/near.js';
import type { Condition, FieldPath, Keyset, Near, QueryPlan, Sort, SortKey, Step } from '../query/ast.js';
import { COMPARE, type Dialect, type JsonSource, type JsonValue, type KeyShape, type SomeValue, type SortShape, type Target } from './dialect.js';
import { bound, join, sql, type Compiled, type Param, type Sql } from './fragment.js';
import { literalPrefix, prefixEnd } from './prefix.js';

/** A query as a backend runs it: the page's statement (rows as the engine's compiler says) and the count's. */
export interface Select extends Compiled {
  /** Counts every match (`total`), what `explain` shows beside the page. */
  readonly countSql: string;
  readonly countParams: unknown[];
  /** True when `limit` or `skip` cut the page, so `total` must be counted (or the cursor carries it). */
  readonly paged: boolean;
  /** True when the page is limited: its rows carry their sort position, and one row past the limit tells whether a cursor continues. */
  readonly keyed: boolean;
}

/**
 * True when an array index of `step` (below `prefix`, from `base`) lands past the end of an array, an empty one
 * included: the step then yields no value at all, as in MongoDB (not a missing one). Never NULL, so NOT of it is exact.
 * @example pastEnd(dialect, dialect.doc, 'doc', [], { name: 'a', indexes: [0] })
 */
export function pastEnd(d: Dialect, source: JsonSource, base: string, prefix: readonly Step[], step: Step): string {
  if (!step.indexes.length) return d.false;
  return step.indexes
    .map((i, k) => {
      const steps = [...prefix, { name: step.name, indexes: step.indexes.slice(0, k) }];
      return `(CASE WHEN ${source.at(base, steps).type} = 'array' THEN ${source.length(base, steps)} <= ${i} ELSE ${d.false} END)`;
    })
    .join(' OR ');
}

/**
 * Some value along an untyped path satisfies `test`. When no array lies on the path (the common case) only the leaf
 * is tested, without the correlated fan-out subquery. The answer is never NULL, so `NOT` of it is exact.
 */
function someValue(d: Dialect, path: FieldPath, test: (v: JsonValue) => Sql | string, source: JsonSource = d.doc): Sql {
  const steps = path.steps;
  const plain = steps.map((_, i) => `${source.at(source.root, steps.slice(0, i + 1)).type} ${d.distinct} 'array'`).join(' AND ');
  // An index past an array's end: no value to test (checked before the plain path reads it as missing).
  const gone = steps
    .map((s, i) => (s.indexes.length ? pastEnd(d, source, source.root, steps.slice(0, i), s) : ''))
    .filter(Boolean)
    .join(' OR ');
  // COALESCE: a missing leaf makes the direct test NULL, which `NOT` would keep NULL rather than true.
  return sql`(CASE ${gone ? `WHEN ${gone} THEN ${d.false} ` : ''}WHEN ${plain} THEN COALESCE(${test(source.at(source.root, steps))}, ${d.false}) ELSE EXISTS (SELECT 1 FROM (${source.candidates(steps)}) AS c WHERE ${test(source.candidate)}) END)`;
}

/**
 * A condition on a scalar-typed top-level field, in two halves: its SQL, which depends only on `shape` (the operator
 * and what of the operand changes the statement: null or not, how many values, a regex's literal prefix), and its
 * bound values, in the order the SQL binds them. Queries of one shape share one statement, their values bound anew.
 */
export interface ScalarPart {
  readonly shape: string;
  readonly params: readonly Param[];
  sql(): Sql | string;
}

/**
 * A scalar-field condition → its ScalarPart; the field's canonical expression is compared directly so indexes apply.
 * @example scalarPart(dialect, plan.conditions[0]).shape // 'eq'
 */
export function scalarPart(d: Dialect, c: Condition): ScalarPart {
  const x = () => d.scalar(c.path);
  switch (c.op) {
    case 'eq':
    case 'ne': {
      // IS NULL / IS NOT NULL, and the NULL-safe inequality: `ne` keeps null and missing values, exactly `not eq`.
      if (c.value === null) return { shape: `${c.op}0`, params: [], sql: () => `${x()} ${c.op === 'eq' ? 'IS NULL' : 'IS NOT NULL'}` };
      const v = d.scalarValue(c.value, c.path);
      return { shape: c.op, params: [v], sql: () => sql`${x()} ${c.op === 'eq' ? '=' : d.distinct} ${v}` };
    }
    case 'in': {
      if (c.values.length === 0) return { shape: 'in0', params: [], sql: () => d.false };
      const nonNull = c.values.filter((v) => v !== null);
      const nulls = nonNull.length < c.values.length;
      const one = nonNull.length === 1 ? d.scalarValue(nonNull[0], c.path) : null;
      const many = nonNull.length > 1 ? d.anyOf(nonNull, c.path) : null;
      // The count of values also decides whether the equality pinpoints rows (SQLite's compileSelect): at most 100.
      const shape = `in${Math.min(nonNull.length, 2)}${nulls ? 'z' : ''}${c.values.length <= 100 ? 'p' : ''}`;
      return {
        shape,
        params: one ? [one] : many ? [many.param] : [],
        sql() {
          const parts: (string | Sql)[] = [];
          if (one) parts.push(sql`${x()} = ${one}`);
          else if (many) parts.push(many.test(x()));
          if (nulls) parts.push(`${x()} IS NULL`);
          return parts.length === 1 ? parts[0]! : sql`(${join(parts, ' OR ')})`;
        },
      };
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const v = d.scalarValue(c.value, c.path);
      return { shape: c.op, params: [v], sql: () => sql`${x()} ${COMPARE[c.op as keyof typeof COMPARE]} ${v}` };
    }
    case 'regex': {
      // An anchored literal prefix becomes a range, so an index (or a cheap comparison) narrows before the pattern runs.
      const prefix = literalPrefix(c.source, c.flags);
      const end = prefix ? prefixEnd(prefix) : null;
      // `^literal` alone: the range is the whole answer (strings only: a date field holds strings too).
      const whole = !!prefix && c.source === `^${prefix}`;
      const from = prefix ? bound(prefix, 'text') : null;
      const to = end !== null ? bound(end, 'text') : null;
      const test = whole ? null : d.regex(c);
      return {
        shape: `re${prefix ? (end !== null ? 2 : 1) : 0}${whole ? 'w' : ''}`,
        params: [...(from ? [from] : []), ...(to ? [to] : []), ...(test ? test.params : [])],
        sql() {
          const range = from ? sql`${x()} >= ${from} AND ${to ? sql`${x()} < ${to} AND ` : ''}` : '';
          return test ? sql`${range}${test.test(x())}` : sql`${range}${x()} IS NOT NULL`;
        },
      };
    }
    default:
      throw new TypeError(`${c.op} is not a condition on a scalar field`);
  }
}

/**
 * One condition → SQL; scalar-typed fields compare their canonical expression directly so indexes apply.
 * @example compileCondition(dialect, plan.conditions[0], { type: 'Well', tree: true })
 */
export function compileCondition(d: Dialect, condition: Condition, target: Target): Sql | string {
  let c = condition;
  if (d.operand) {
    const answered = d.operand(c);
    if (typeof answered === 'boolean') return answered ? d.true : d.false;
    c = answered;
  }
  if (c.path.scalar && c.op !== 'bounds' && c.op !== 'polygon' && c.op !== 'near') {
    if (d.unindexed && target.indexed && !target.indexed.has(c.path.steps[0]!.name)) {
      const other = d.unindexed(c, c.path);
      if (other) return other;
    }
    return scalarPart(d, c).sql();
  }
  const some: SomeValue = (path, test, source) => someValue(d, path, test, source);
  switch (c.op) {
    case 'eq':
    case 'ne': {
      const test = d.equalsAny(c.path, [c.value], some);
      return c.op === 'eq' ? test : sql`NOT ${test}`;
    }
    case 'in':
      return c.values.length === 0 ? d.false : d.equalsAny(c.path, c.values, some);
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      if (typeof c.value !== 'string') return some(c.path, d.compare(c.op, c.value));
      const p = bound(c.value, 'text');
      const op = COMPARE[c.op];
      return some(c.path, (v) => {
        const s = d.string(v);
        return sql`(${s.is} AND ${s.text} ${op} ${p})`;
      });
    }
    case 'regex': {
      const { test } = d.regex(c);
      return some(c.path, (v) => {
        const s = d.string(v);
        return sql`(${s.is} AND ${test(s.text)})`;
      });
    }
    case 'bounds':
    case 'polygon':
      return d.geo(c, target);
    case 'near': {
      // The boxes only find candidates: the distance on the stored coordinates decides, both bounds inclusive.
      const x = distance(d, c);
      const min = c.min > 0 ? sql` AND ${x} >= ${bound(c.min, 'float8')}` : '';
      return sql`${d.geo(c, target)} AND ${x} <= ${bound(c.max, 'float8')}${min}`;
    }
  }
}

/**
 * The great-circle distance in metres from a `near` condition's point to the stored point of its field: haversine on
 * a sphere of radius EARTH_RADIUS, written once for every engine with the same operations as src/geo/near.ts
 * `haversine` (the point's coordinates below TINY read as zero; see the dialects' `coordinates` for the stored ones).
 * The point's radians and cosine are bound, so both engines compute from the same doubles. Read only under its `near`
 * condition, whose prefilter passes stored points alone (PostgreSQL's least() would make a missing point's distance πR).
 * @example distance(dialect, plan.conditions[0]) // 12742017.6 * asin(min(1, sqrt(...)))
 */
export function distance(d: Dialect, c: Near): Sql {
  const f8 = (v: number) => bound(v, 'float8');
  const [x, y] = d.coordinates(c.path.steps[0]!.name);
  const flush = (v: number) => (Math.abs(v) < TINY ? 0 : v);
  const rad = f8(RADIANS);
  const lat = f8(flush(c.point[1]) * RADIANS);
  const lon = f8(flush(c.point[0]) * RADIANS);
  const cos = f8(Math.cos(flush(c.point[1]) * RADIANS));
  const h = sql`power(sin((${y} * ${rad} - ${lat}) / 2), 2) + ${cos} * cos(${y} * ${rad}) * power(sin((${x} * ${rad} - ${lon}) / 2), 2)`;
  return sql`(${f8(2 * EARTH_RADIUS)} * asin(${d.atMostOne(sql`sqrt(${h})`)}))`;
}

/**
 * The JSON text of an answered document with its distance added last (options.distance), or `doc` itself.
 * @example withDistance(dialect, 'json(doc)', plan) // json(doc) minus its `}`, then ,"dist":<metres>}
 */
export function withDistance(d: Dialect, doc: string, plan: Pick<QueryPlan, 'distance'>): Sql | string {
  if (!plan.distance) return doc;
  // Names are checked against a strict pattern (query/parse.ts): safe inside a JSON string and a SQL literal.
  return sql`(substr(${doc}, 1, length(${doc}) - 1) || ',"${plan.distance.name}":' || ${d.floatText(distance(d, plan.distance.near))} || '}')`;
}

/**
 * The `near` condition a k-nearest page reads within `plan.reach` (src/core/nearest.ts): its leading sort key's, cut
 * to that distance (its boxes those of the smaller cap); null when the plan has no reach.
 * @example reachedNear({ ...plan, reach: 2000 })?.max // 2000
 */
export function reachedNear(plan: Pick<QueryPlan, 'sort' | 'reach'>): Near | null {
  const near = plan.sort?.keys[0]?.near;
  if (plan.reach === undefined || !near || plan.reach >= near.max) return null;
  return { ...near, max: plan.reach, boxes: capBoxes(near.point, plan.reach) };
}

/**
 * The conditions a page reads: the plan's, its k-nearest key's `near` cut to `plan.reach` (see reachedNear).
 * @example compileWhere(dialect, pageConditions(plan), target)
 */
export function pageConditions(plan: Pick<QueryPlan, 'conditions' | 'sort' | 'reach'>): readonly Condition[] {
  const cut = reachedNear(plan);
  if (!cut) return plan.conditions;
  const near = plan.sort!.keys[0]!.near!;
  return plan.conditions.map((c) => (c === near ? cut : c));
}

/**
 * Every condition ANDed (the dialect's true for none).
 * @example compileWhere(dialect, plan.conditions, { type: 'Well', tree: true })
 */
export function compileWhere(d: Dialect, conditions: readonly Condition[], target: Target): Sql | string {
  return conditions.length ? join(conditions.map((c) => compileCondition(d, c, target)), ' AND ') : d.true;
}

/** How a sort key on a scalar field orders rows: its canonical expression (its index), null and missing first ascending. */
function scalarKey(d: Dialect, x: Sql | string, asc: boolean, bind: (v: string | number) => Param): KeyShape & { value(v: string | number): Param } {
  // One Param per kept key: an engine that numbers its placeholders binds it once however often it is compared.
  const held = new Map<string | number, Param>();
  const value = (v: string | number) => held.get(v) ?? (held.set(v, bind(v)), held.get(v)!);
  return {
    value,
    keys: [{ expr: x, direction: d.direction(asc) }],
    rank: d.rank(sql`(${x} IS NOT NULL)`),
    key: x,
    beyond(_rank, key) {
      if (key === null) return asc ? sql`${x} IS NOT NULL` : d.false;
      const k = value(key);
      return asc ? sql`${x} > ${k}` : sql`(${x} < ${k} OR ${x} IS NULL)`;
    },
    same: (_rank, key) => (key === null ? sql`${x} IS NULL` : sql`${x} = ${value(key)}`),
  };
}

/**
 * How one sort key orders rows: a `near` field by the distance to its point, a scalar field on its canonical
 * expression, any other path as the dialect ranks types.
 * @example keyShape(dialect, plan.sort.keys[0]).keys
 */
export function keyShape(d: Dialect, k: SortKey): KeyShape & { value?(v: string | number): Param } {
  // Every match of a near condition has a point, so a distance is never null: its rank is constant.
  if (k.near) return { ...scalarKey(d, distance(d, k.near), k.order === 1, (v) => bound(v, 'float8')), rank: d.rank(d.true) };
  if (k.path.scalar) return scalarKey(d, d.scalar(k.path), k.order === 1, (v) => d.scalarValue(v, k.path));
  return d.pathSort(k);
}

/**
 * The order of a sort: each key's order in turn, ties by insertion order (ascending in both directions). One key
 * keeps its own rank and key for a cursor; several keep a JSON array of their ranks and keys (the dialect's tuple).
 * No sort: insertion order.
 * @example sortShape(dialect, plan.sort).keys
 */
export function sortShape(d: Dialect, sort: Sort | null): SortShape {
  if (!sort) return { keys: [{ expr: d.seq, direction: 'ASC' }], rank: '0', key: 'NULL', after: (at) => sql`${d.seq} > ${bound(at.seq, d.seqCast)}` };
  const shapes = sort.keys.map((k) => keyShape(d, k));
  const one = shapes.length === 1 ? shapes[0]! : null;
  const first = sort.keys[0]!;
  return {
    keys: [...shapes.flatMap((s) => s.keys), { expr: d.seq, direction: 'ASC' }],
    rank: one ? one.rank : d.rank(d.true),
    key: one ? one.key : d.tuple(shapes.flatMap((s) => [s.rank, s.key])),
    after(at: Keyset) {
      const kept = one ? [at.rank, at.key] : (JSON.parse(String(at.key)) as (string | number | null)[]);
      // A leading range on an ascending scalar key lets its index seek to the position instead of reading every earlier match.
      const lead = kept[1] ?? null;
      const value = shapes[0]!.value;
      const seek = !!value && first.order === 1 && lead !== null;
      // Lexicographic: beyond on a key, or level with it and after on the next ones; last, the insertion order.
      let rest: Sql | string = sql`${d.seq} > ${bound(at.seq, d.seqCast)}`;
      for (let i = shapes.length - 1; i >= 0; i--) {
        const rank = Number(kept[2 * i]);
        const key = kept[2 * i + 1] ?? null;
        // Within the seek's range, not beyond the first key is level with it.
        const level: Sql | string = i === 0 && seek ? rest : sql`(${shapes[i]!.same(rank, key)} AND ${rest})`;
        rest = sql`(${shapes[i]!.beyond(rank, key)} OR ${level})`;
      }
      if (!seek) return rest;
      return sql`(${shapes[0]!.key} >= ${value(lead)} AND ${rest})`;
    },
  };
}
