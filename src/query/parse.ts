/** Query JSON → checked conditions: syntax, field paths against the catalogue, operands against field kinds. */
import { BoundedCache } from '../cache.js';
import { didYouMean, type FieldInfo, type TypeInfo } from '../catalogue/index.js';
import { OBJECT_CATEGORIES, SCALAR_CATEGORIES } from '../catalogue/kinds.js';
import { describe, isPlainObject, jsonValue } from '../catalogue/validate.js';
import { lonLatError, ringsError } from '../geo/validate.js';
import { capBoxes, EARTH_RADIUS } from '../geo/near.js';
import { collect, requestError, RequestError, type EnvelopeError } from '../envelope.js';
import { OPERATORS, type Condition, type FieldPath, type Near, type Operator, type QueryPlan, type Sort, type SortKey, type Step } from './ast.js';
import { dateError, normalizeDate } from '../catalogue/dates.js';
import { parseRegex } from './regex.js';
import { decodeCursor, shapeOf } from './cursor.js';
import { LIMITS, shown } from '../limits.js';

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const INDEX = /^(0|[1-9][0-9]{0,8})$/;
const OPS = new Map<string, Operator>(OPERATORS.map((o) => [o.toLowerCase(), o]));
const OPTION_KEYS = ['limit', 'skip', 'sortBy', 'sortOrder', 'cursor', 'fields', 'includeDeleted', 'distance'];
const NEAR_KEYS = ['point', 'maxDistance', 'minDistance'];
/** Half the sphere's circumference: no two points are farther apart. */
const FARTHEST = Math.PI * EARTH_RADIUS;
/** Keys in one sortBy list. */
const SORT_KEYS = 8;

export interface ParseContext {
  type: TypeInfo;
  strict: boolean;
  /** The key that signs the store's cursors (Backend.cursorKey); without one, a cursor is refused. */
  cursorKey?: Uint8Array;
}

/** Undefined is not a value: JSON drops it, so `{ pwi: undefined }` would silently match everything. */
const UNDEFINED = 'undefined is not a value (JSON drops it); to match a missing field use null';

function invalid(path: string, message: string): RequestError {
  return requestError('INVALID_QUERY', `${path}: ${message}`, { field: path.replace(/^query\./, '') });
}

const pathCache = new WeakMap<TypeInfo, BoundedCache<FieldPath>>();

/** Resolves a dotted path against the type; throws on bad syntax, unknown fields (strict) and paths into scalars. */
export function parseFieldPath(ctx: ParseContext, text: string, label: string): FieldPath {
  if (typeof text !== 'string' || text === '') throw invalid(label, 'a field path must be a non-empty string');
  if (text.length > LIMITS.nameLength) throw invalid(label, `a field path may have at most ${LIMITS.nameLength} characters, got ${text.length}`);
  // Requests name the same few paths over and over; a resolved path is frozen data, safe to share.
  let cache = pathCache.get(ctx.type);
  if (!cache) pathCache.set(ctx.type, (cache = new BoundedCache<FieldPath>(1000)));
  const key = `${ctx.strict ? 's' : 'n'}${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const path = resolvePath(ctx, text, label);
  cache.set(key, path);
  return path;
}

function resolvePath(ctx: ParseContext, text: string, label: string): FieldPath {
  const parts = text.split('.');
  if (parts.length > LIMITS.pathSegments) throw invalid(label, `a field path may have at most ${LIMITS.pathSegments} segments, got ${parts.length}`);
  const steps: { name: string; indexes: number[] }[] = [];
  for (const part of parts) {
    if (INDEX.test(part) && steps.length > 0) {
      steps[steps.length - 1]!.indexes.push(Number(part));
    } else if (SEGMENT.test(part)) {
      steps.push({ name: part, indexes: [] });
    } else {
      throw invalid(label, `${shown(text)} is not a field path: segments are names (letters, digits, _ and -, not starting with a digit) or array indexes, joined by dots`);
    }
  }
  const top = steps[0]!.name;
  const field: FieldInfo | undefined = ctx.type.fields.get(top);
  if (!field && ctx.strict) {
    throw requestError('UNKNOWN_FIELD', `${label}: ${ctx.type.name} has no field "${top}"${didYouMean(top, ctx.type.fields.keys())}`, {
      field: top,
    });
  }
  const deeper = steps.length > 1 || steps[0]!.indexes.length > 0;
  if (field && deeper && !OBJECT_CATEGORIES.has(field.category)) {
    throw invalid(label, `"${top}" is a ${field.kind}; it has no fields or elements to reach into`);
  }
  const frozenSteps: Step[] = steps.map((s) => Object.freeze({ name: s.name, indexes: Object.freeze(s.indexes) }));
  return Object.freeze({ text, steps: Object.freeze(frozenSteps), field, scalar: !!field && !deeper && SCALAR_CATEGORIES.has(field.category) });
}

/** Checks an eq/ne/in operand against the field's kind; returns the normalised value. */
function equalityOperand(path: FieldPath, label: string, v: unknown): unknown {
  if (v === null) return null;
  if (v === undefined) throw invalid(label, UNDEFINED);
  if (v instanceof RegExp) throw invalid(label, 'a RegExp is only an operand of regex');
  const cat = path.scalar ? path.field!.category : null;
  switch (cat) {
    case 'date': {
      const iso = normalizeDate(v);
      if (iso === null) throw invalid(label, dateError(v, describe(v)));
      return iso;
    }
    case 'string':
      if (typeof v !== 'string') throw invalid(label, `expected a string, got ${describe(v)}`);
      return v;
    case 'boolean':
      if (typeof v !== 'boolean') throw invalid(label, `expected a boolean, got ${describe(v)}`);
      return v;
    case 'int32':
    case 'int64':
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(label, `expected a number, got ${describe(v)}`);
      return v;
    default: {
      if (path.field?.category === 'enum' && !path.steps[1] && !(typeof v === 'string' || Number.isInteger(v))) {
        throw invalid(label, `expected an enumeration name or integer, got ${describe(v)}`);
      }
      const r = jsonValue(v);
      if (!r.ok) throw invalid(label, r.reason);
      return r.value;
    }
  }
}

/** A string as UTF-8 orders it: a lone surrogate becomes U+FFFD, as it does when text is stored or bound. */
function asStored(v: string): string {
  return v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

function comparisonOperand(path: FieldPath, label: string, v: unknown): string | number | boolean {
  const value = comparisonValue(path, label, v);
  return typeof value === 'string' ? asStored(value) : value;
}

function comparisonValue(path: FieldPath, label: string, v: unknown): string | number | boolean {
  if (v === undefined) throw invalid(label, UNDEFINED);
  if (path.scalar || (path.field?.category === 'enum' && path.steps.length === 1)) {
    const value = equalityOperand(path, label, v);
    return value as string | number | boolean;
  }
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof Date) return normalizeDate(v) ?? (() => { throw invalid(label, 'invalid Date'); })();
  throw invalid(label, `comparisons take a number, string or boolean, got ${describe(v)}`);
}

function bboxOf(rings: readonly (readonly number[])[][]): [number, number, number, number] {
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const [x, y] of rings[0]!) {
    minX = Math.min(minX, x!); maxX = Math.max(maxX, x!);
    minY = Math.min(minY, y!); maxY = Math.max(maxY, y!);
  }
  return [minX, minY, maxX, maxY];
}

function parseBounds(label: string, v: unknown): [number, number, number, number] {
  if (!Array.isArray(v) || v.length !== 4) throw invalid(label, `bounds must be [x1, y1, x2, y2], got ${describe(v)}`);
  if (!v.every((n) => typeof n === 'number' && Number.isFinite(n))) throw invalid(label, 'bounds must be four finite numbers');
  const [x1, y1, x2, y2] = v as number[];
  for (const x of [x1!, x2!]) if (x < -180 || x > 180) throw invalid(label, `longitude ${x} is outside [-180, 180]`);
  for (const y of [y1!, y2!]) if (y < -90 || y > 90) throw invalid(label, `latitude ${y} is outside [-90, 90]`);
  return [Math.min(x1!, x2!), Math.min(y1!, y2!), Math.max(x1!, x2!), Math.max(y1!, y2!)];
}

function parsePolygon(label: string, v: unknown): number[][][] {
  const rings = isPlainObject(v) && v.type === 'Polygon' ? v.coordinates : v;
  const vertices = Array.isArray(rings) ? rings.reduce((n: number, r: unknown) => n + (Array.isArray(r) ? r.length : 0), 0) : 0;
  if (vertices > LIMITS.polygonVertices) throw invalid(label, `a polygon may have at most ${LIMITS.polygonVertices} positions, got ${vertices}`);
  const err = ringsError(rings);
  if (err) throw invalid(label, err);
  return (rings as number[][][]).map((ring) => ring.map((p) => [p[0]!, p[1]!]));
}

/** Parses a `near` operand: { point: [lon, lat] (or a GeoJSON Point), maxDistance: metres, minDistance?: metres }. */
function parseNear(path: FieldPath, label: string, v: unknown): Near {
  if (!isPlainObject(v)) throw invalid(label, `near takes { point: [longitude, latitude], maxDistance: metres, minDistance?: metres }, got ${describe(v)}`);
  for (const key of Object.keys(v)) {
    if (!NEAR_KEYS.includes(key)) throw invalid(`${label}.${key.slice(0, 64)}`, `unknown near option ${shown(key)}${key.length <= LIMITS.nameLength ? didYouMean(key, NEAR_KEYS) : ''}`);
  }
  const point = isPlainObject(v.point) && v.point.type === 'Point' ? v.point.coordinates : v.point;
  const err = lonLatError(point);
  if (err || (point as unknown[]).length !== 2) throw invalid(`${label}.point`, err ?? 'a position must be [longitude, latitude]');
  const metres = (key: string, value: unknown): number => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw invalid(`${label}.${key}`, `expected a distance in metres (a finite number ≥ 0), got ${describe(value)}`);
    return value;
  };
  if (v.maxDistance === undefined) throw invalid(`${label}.maxDistance`, `near needs maxDistance, in metres (${Math.round(FARTHEST)} reaches every point)`);
  const max = metres('maxDistance', v.maxDistance);
  const min = v.minDistance === undefined ? 0 : metres('minDistance', v.minDistance);
  if (min > max) throw invalid(`${label}.minDistance`, `minDistance ${min} is more than maxDistance ${max}`);
  const at = [(point as number[])[0]!, (point as number[])[1]!] as const;
  return { op: 'near', path, point: at, max, min, boxes: capBoxes(at, max) };
}

/** One operator on one path → a condition, or null when it is dropped with a warning. */
function parseOperator(ctx: ParseContext, path: FieldPath, op: Operator, operand: unknown, label: string, issues: string[]): Condition | null {
  switch (op) {
    case 'eq':
    case 'ne':
      return { op, path, value: equalityOperand(path, label, operand) };
    case 'in': {
      if (!Array.isArray(operand)) throw invalid(label, `in takes an array, got ${describe(operand)}`);
      if (operand.length > LIMITS.inValues) throw invalid(label, `in takes at most ${LIMITS.inValues} values, got ${operand.length}`);
      return { op, path, values: operand.map((v, i) => equalityOperand(path, `${label}[${i}]`, v)) };
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      // As MongoDB: null is only equal to itself, so lte/gte null are eq null and lt/gt null match nothing.
      if (operand === null) return op === 'lte' || op === 'gte' ? { op: 'eq', path, value: null } : { op: 'in', path, values: [] };
      return { op, path, value: comparisonOperand(path, label, operand) };
    case 'regex': {
      const cat = path.steps.length === 1 && path.steps[0]!.indexes.length === 0 ? path.field?.category : undefined;
      if (cat && ['boolean', 'int32', 'int64', 'number', 'geopoint', 'geomultipolygon'].includes(cat)) {
        throw invalid(label, `regex tests strings; "${path.text}" is a ${path.field!.kind}`);
      }
      let text: string;
      if (operand instanceof RegExp) text = `/${operand.source}/${operand.flags.replace(/[gyu]/g, '')}`;
      else if (typeof operand === 'string') text = operand;
      else throw invalid(label, `regex takes a pattern string or "/pattern/flags", got ${describe(operand)}`);
      if (text.length > LIMITS.regexLength) throw invalid(label, `a regex may have at most ${LIMITS.regexLength} characters, got ${text.length}`);
      const parsed = parseRegex(text);
      if (typeof parsed === 'string') throw invalid(label, parsed);
      return { op, path, source: parsed.source, flags: parsed.flags };
    }
    case 'bounds':
    case 'polygon':
    case 'near': {
      const geo =
        op === 'near'
          ? parseNear(path, label, operand)
          : op === 'bounds'
          ? ({ op, path, box: parseBounds(label, operand) } as const)
          : (() => {
              const rings = parsePolygon(label, operand);
              return { op, path, rings, box: bboxOf(rings) } as const;
            })();
      const isPoint = path.field?.category === 'geopoint' && path.steps.length === 1 && path.steps[0]!.indexes.length === 0;
      if (!isPoint) {
        issues.push(`${label}: "${path.text}" is not a GeoPoint field of ${ctx.type.name}; the ${op} condition was ignored`);
        return null;
      }
      return geo;
    }
  }
}

/** What a `$` key means in MongoDB, and what to do here instead. */
function mongoKeyHint(key: string): string {
  const lower = key.toLowerCase();
  if (lower === '$or' || lower === '$nor') return 'OR is not supported; run two queries (or use in for values of one field)';
  if (lower === '$and') return 'conditions are ANDed already: put them side by side in one query object';
  if (OPS.has(lower.slice(1))) return `operators go under a field: { field: { ${OPS.get(lower.slice(1))}: value } }, without $`;
  return `${shown(key)} is not a field path: queries take field paths, not $-operators`;
}

/** Parses and checks the `query` object: a plain value is eq, an array is in, an object holds operators. */
export function parseQuery(ctx: ParseContext, query: unknown): { conditions: Condition[]; issues: string[] } {
  const conditions: Condition[] = [];
  const issues: string[] = [];
  if (query === null || query === undefined) return { conditions, issues };
  if (!isPlainObject(query)) throw requestError('INVALID_QUERY', `query: expected an object of field conditions, got ${describe(query)}`);
  const errors: EnvelopeError[] = [];
  const entries = Object.entries(query);
  const size = entries.reduce((n, [, c]) => n + (isPlainObject(c) ? Math.max(1, Object.keys(c).length) : 1), 0);
  if (size > LIMITS.conditions) throw requestError('INVALID_QUERY', `query: at most ${LIMITS.conditions} conditions, got ${size}`);
  for (const [key, cond] of entries) {
    const label = `query.${key.length > LIMITS.nameLength ? `${key.slice(0, 61)}...` : key}`;
    collect(errors, () => {
      if (cond === undefined) throw invalid(label, UNDEFINED);
      if (key.startsWith('$')) throw invalid(label, mongoKeyHint(key));
      const path = parseFieldPath(ctx, key, label);
      if (Array.isArray(cond)) {
        const c = parseOperator(ctx, path, 'in', cond, label, issues);
        if (c) conditions.push(c);
      } else if (isPlainObject(cond)) {
        const ops = Object.entries(cond);
        if (ops.length === 0) throw invalid(label, 'an empty condition object; use { eq: {} } to match an empty object');
        for (const [name, operand] of ops) {
          const op = OPS.get(name.toLowerCase());
          if (!op) {
            const bare = name.startsWith('$') ? OPS.get(name.slice(1).toLowerCase()) : undefined;
            throw invalid(
              `${label}.${name.length > 64 ? `${name.slice(0, 61)}...` : name}`,
              bare
                ? `unknown operator ${shown(name)}: use ${bare} (operators have no $)`
                : `unknown operator ${shown(name)} (operators: ${OPERATORS.join(', ')}; to match a whole object use { eq: {...} })`,
            );
          }
          if (operand === undefined) throw invalid(`${label}.${name}`, UNDEFINED);
          const c = parseOperator(ctx, path, op, operand, `${label}.${name}`, issues);
          if (c) conditions.push(c);
        }
      } else {
        const c = parseOperator(ctx, path, 'eq', cond, label, issues);
        if (c) conditions.push(c);
      }
    });
  }
  if (errors.length) throw new RequestError(errors);
  return { conditions, issues };
}

/** A request's count option (limit, skip): absent or null is 0. */
export function nonNegativeInt(label: string, v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw requestError('INVALID_REQUEST', `${label}: expected a non-negative integer, got ${describe(v)}`, { field: label });
  }
  return v;
}

/** The answer's `id`, first in every projection. */
const ID = 'id';

/**
 * Parses `options.fields`: top-level field names, each once. `id` is always answered, first, whether named or not
 * (as MongoDB includes `_id` unless told otherwise), then the named fields in the order requested. Dotted paths are
 * refused: a projection returns whole top-level values, which both backends answer exactly (SQLite and PostgreSQL
 * would each need their own rules for arrays along a path). In strict mode an unknown field is UNKNOWN_FIELD, as in
 * a query; any other bad shape is INVALID_REQUEST naming options.fields.
 */
export function parseFields(ctx: ParseContext, v: unknown): readonly FieldPath[] | null {
  if (v === undefined || v === null) return null;
  const bad = (message: string) => requestError('INVALID_REQUEST', `options.fields: ${message}`, { field: 'options.fields' });
  if (!Array.isArray(v)) {
    const hint = isPlainObject(v) ? ': a list of names such as ["pwi", "name"], not a MongoDB projection object' : '';
    throw bad(`expected an array of top-level field names, got ${describe(v)}${hint}`);
  }
  if (v.length === 0) throw bad('name at least one field (["id"] answers the ids alone); leave fields out for whole documents');
  if (v.length > LIMITS.fields) throw bad(`at most ${LIMITS.fields} fields, got ${v.length}`);
  const seen = new Set<string>();
  const out: FieldPath[] = [parseFieldPath({ type: ctx.type, strict: false }, ID, 'options.fields')];
  for (let i = 0; i < v.length; i++) {
    const name: unknown = v[i];
    if (typeof name !== 'string' || name === '') throw bad(`[${i}]: expected a non-empty field name, got ${describe(name)}`);
    if (name.length > LIMITS.nameLength) throw bad(`[${i}]: a field name may have at most ${LIMITS.nameLength} characters, got ${name.length}`);
    if (name.includes('.')) throw bad(`[${i}]: ${shown(name)} is a dotted path; fields names top-level fields, answered whole`);
    if (!SEGMENT.test(name)) throw bad(`[${i}]: ${shown(name)} is not a field name (letters, digits, _ and -, not starting with a digit)`);
    if (seen.has(name)) throw bad(`[${i}]: ${shown(name)} is named twice`);
    seen.add(name);
    if (!ctx.type.fields.has(name) && ctx.strict) {
      throw requestError('UNKNOWN_FIELD', `options.fields[${i}]: ${ctx.type.name} has no field "${name}"${didYouMean(name, ctx.type.fields.keys())}`, { field: name });
    }
    if (name !== ID) out.push(parseFieldPath(ctx, name, `options.fields[${i}]`));
  }
  return Object.freeze(out);
}

function optionError(key: string, message: string): RequestError {
  return requestError('INVALID_REQUEST', `options.${key}: ${message}`, { field: `options.${key}` });
}

/**
 * Parses `sortBy` and `sortOrder`: one path, or a list of paths (most significant first) with one order for all or
 * one order per key. A GeoPoint field with a `near` condition on it sorts by the distance to that condition's point.
 */
function parseSort(ctx: ParseContext, sortBy: unknown, sortOrder: unknown, near: readonly Near[]): Sort | null {
  const many = Array.isArray(sortBy);
  const orders = Array.isArray(sortOrder) ? sortOrder : null;
  const order = sortOrder ?? 1;
  if (orders ? !many : order !== 1 && order !== -1 && order !== 0) {
    throw optionError('sortOrder', `expected 1, -1 or 0${many ? ', or a list of 1 and -1, one for each sortBy key' : ''}, got ${describe(sortOrder)}`);
  }
  if (sortBy === undefined || sortBy === null || sortBy === '') return null;
  if (typeof sortBy !== 'string' && !many) throw optionError('sortBy', `expected a field path or a list of them, got ${describe(sortBy)}`);
  const texts = (many ? sortBy : [sortBy]) as unknown[];
  if (texts.length === 0) throw optionError('sortBy', 'name at least one field path, or leave sortBy out for insertion order');
  if (texts.length > SORT_KEYS) throw optionError('sortBy', `at most ${SORT_KEYS} keys, got ${texts.length}`);
  if (orders && orders.length !== texts.length) throw optionError('sortOrder', `expected ${texts.length} orders, one for each sortBy key, got ${orders.length}`);
  if (order === 0) return null;
  const keys: SortKey[] = [];
  texts.forEach((text, i) => {
    const label = many ? `options.sortBy[${i}]` : 'options.sortBy';
    if (typeof text !== 'string') throw optionError(`sortBy[${i}]`, `expected a field path, got ${describe(text)}`);
    const path = parseFieldPath(ctx, text, label);
    if (keys.some((k) => k.path.text === path.text)) throw optionError(`sortBy[${i}]`, `${shown(text)} is named twice`);
    const o = orders ? orders[i] : order;
    if (o !== 1 && o !== -1) throw optionError(`sortOrder[${i}]`, `expected 1 or -1, got ${describe(o)}`);
    const to = near.find((c) => c.path.text === path.text);
    keys.push(Object.freeze(to ? { path, order: o, near: to } : { path, order: o }));
  });
  return Object.freeze({ keys: Object.freeze(keys) });
}

/** Parses `options.distance`: the name each document's distance is answered under, from the query's one `near` condition. */
function parseDistance(ctx: ParseContext, v: unknown, near: readonly Near[]): QueryPlan['distance'] {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !SEGMENT.test(v) || v.length > LIMITS.nameLength) {
    throw optionError('distance', `expected a field name to answer each document's distance under, got ${describe(v)}`);
  }
  if (ctx.type.fields.has(v) || v === 'id') throw optionError('distance', `${ctx.type.name} has a field "${v}"; name the distance something the documents do not hold`);
  if (near.length !== 1) throw optionError('distance', `the distance is to the point of a near condition: the query needs exactly one, it has ${near.length}`);
  return Object.freeze({ name: v, near: near[0]! });
}

/** Parses `options` (limit, skip, sortBy, sortOrder, fields, includeDeleted, distance); `near`: the query's near conditions. */
export function parseOptions(
  ctx: ParseContext,
  options: unknown,
  near: readonly Near[] = [],
): { sort: Sort | null; limit: number; skip: number; fields: readonly FieldPath[] | null; includeDeleted: boolean; distance: QueryPlan['distance'] } {
  if (options === null || options === undefined) return { sort: null, limit: 0, skip: 0, fields: null, includeDeleted: false, distance: null };
  const o = optionsOf(options, OPTION_KEYS);
  const limit = nonNegativeInt('options.limit', o.limit);
  const skip = nonNegativeInt('options.skip', o.skip);
  const sort = parseSort(ctx, o.sortBy, o.sortOrder, near);
  return { sort, limit, skip, fields: parseFields(ctx, o.fields), includeDeleted: includeDeletedOf(o.includeDeleted), distance: parseDistance(ctx, o.distance, near) };
}

/** A request's options object (absent or null: none), refusing a key not in `known` with a hint. */
export function optionsOf(options: unknown, known: readonly string[]): Record<string, unknown> {
  if (options === undefined || options === null) return {};
  if (!isPlainObject(options)) throw requestError('INVALID_REQUEST', `options: expected an object, got ${describe(options)}`, { field: 'options' });
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const hint = key.length <= LIMITS.nameLength ? didYouMean(key, known) : '';
      throw requestError('INVALID_REQUEST', `options: unknown option ${shown(key)}${hint}`, { field: `options.${key.slice(0, 64)}` });
    }
  }
  return options;
}

/** `options.includeDeleted` of every read: absent or null is false. */
export function includeDeletedOf(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw requestError('INVALID_REQUEST', `options.includeDeleted: expected true or false, got ${describe(v)}`, { field: 'options.includeDeleted' });
  return v;
}

export function parsePlan(ctx: ParseContext, query: unknown, options: unknown): QueryPlan {
  const errors: EnvelopeError[] = [];
  const parsed = collect(errors, () => parseQuery(ctx, query));
  const near = (parsed?.conditions ?? []).filter((c): c is Near => c.op === 'near');
  const opts = collect(errors, () => parseOptions(ctx, options, near));
  if (errors.length) throw new RequestError(errors);
  const o = isPlainObject(options) ? options : {};
  const continues = o.cursor !== undefined && o.cursor !== null;
  // Only a limited answer can have a cursor, and only a cursor is checked against the digest: an unlimited query
  // (most of them) skips the hash. `fields` is not part of it: a projection does not move a position.
  const shape = opts!.limit > 0 || continues ? shapeOf(ctx.type.name, query, o.sortBy, o.sortOrder) : '';
  let after = null;
  if (continues) {
    if (opts!.skip > 0) throw requestError('INVALID_REQUEST', 'options.cursor: a cursor continues where the last page ended; it takes no skip', { field: 'options.cursor' });
    after = decodeCursor(o.cursor, shape, ctx.cursorKey);
  }
  // Every key written out: spreading the options copies their properties at run time on every request (V8's object
  // clone and property copy, seen in perf). A key added to QueryPlan must be added here too (the type says so).
  const { sort, limit, skip, fields, includeDeleted, distance } = opts!;
  return Object.freeze({ conditions: parsed!.conditions, issues: parsed!.issues, sort, limit, skip, fields, includeDeleted, distance, after, shape });
}
