/** Write-side checks: each value against its field's kind, normalised (dates to ISO, HashSets de-duplicated). */
import type { EnvelopeError } from '../envelope.js';
import { lonLatError, ringsError } from '../geo/validate.js';
import { dateError, normalizeDate } from './dates.js';
import { LIMITS, shown } from '../limits.js';
import { didYouMean, type FieldInfo, type TypeInfo } from './index.js';
import type { Category } from './kinds.js';

type Result = { ok: true; value: unknown } | { ok: false; reason: string };

const DURATION = /^-?(\d+\.)?\d{1,2}:\d{2}:\d{2}(\.\d{1,7})?$/;
const MAX_DEPTH = LIMITS.depth;

export function describe(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Date) return 'a Date';
  if (typeof v === 'object' && v !== null) return 'an object';
  try {
    return JSON.stringify(v) ?? typeof v;
  } catch {
    return typeof v;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Sets an own data property. Plain assignment keeps objects in V8's fast mode (prototype-less ones are
 * dictionaries, twice as slow to stringify); only "__proto__" needs defining, or it would set the prototype.
 */
export function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Why a value is not JSON, built only when it is not. */
class NotJson {
  constructor(readonly reason: string) {}
}

/** The copy of a JSON value, or NotJson: no result object per value, so a document's nested parts copy cheaply. */
function copyJson(v: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return new NotJson(`nested deeper than ${MAX_DEPTH} levels`);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : new NotJson(`${v} is not a JSON number`);
  if (Array.isArray(v)) {
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = copyJson(v[i], depth + 1);
      if (x instanceof NotJson) return new NotJson(`[${i}]: ${x.reason}`);
      out[i] = x;
    }
    return out;
  }
  if (v instanceof Date) {
    const iso = normalizeDate(v);
    return iso === null ? new NotJson('invalid Date') : iso;
  }
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const x = v[k];
      if (x === undefined) continue;
      const c = copyJson(x, depth + 1);
      if (c instanceof NotJson) return new NotJson(`${k}: ${c.reason}`);
      put(out, k, c);
    }
    return out;
  }
  return new NotJson(`${describe(v)} is not a JSON value`);
}

/** A copy of an untyped JSON value, with Dates as ISO strings; a reason when it is not JSON. */
export function jsonValue(v: unknown, depth = 0): Result {
  const c = copyJson(v, depth);
  return c instanceof NotJson ? { ok: false, reason: c.reason } : { ok: true, value: c };
}

const CHECKS: Record<Category, (v: unknown) => Result> = {
  string: (v) => (typeof v === 'string' ? { ok: true, value: v } : { ok: false, reason: `expected a string, got ${describe(v)}` }),
  boolean: (v) => (typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, reason: `expected a boolean, got ${describe(v)}` }),
  int32: (v) =>
    Number.isInteger(v) && (v as number) >= -2147483648 && (v as number) <= 2147483647
      ? { ok: true, value: v }
      : { ok: false, reason: `expected an integer in the Int32 range, got ${describe(v)}` },
  int64: (v) => (Number.isSafeInteger(v) ? { ok: true, value: v } : { ok: false, reason: `expected a safe integer, got ${describe(v)}` }),
  number: (v) =>
    typeof v === 'number' && Number.isFinite(v) ? { ok: true, value: v } : { ok: false, reason: `expected a finite number, got ${describe(v)}` },
  date: (v) => {
    const iso = normalizeDate(v);
    return iso === null ? { ok: false, reason: dateError(v, describe(v)) } : { ok: true, value: iso };
  },
  duration: (v) =>
    (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && DURATION.test(v))
      ? { ok: true, value: v }
      : { ok: false, reason: `expected seconds or a "d.hh:mm:ss" duration, got ${describe(v)}` },
  any: (v) => jsonValue(v),
  dict: (v) => (isPlainObject(v) ? jsonValue(v) : { ok: false, reason: `expected an object, got ${describe(v)}` }),
  nested: (v) => (isPlainObject(v) ? jsonValue(v) : { ok: false, reason: `expected an object, got ${describe(v)}` }),
  array: (v) => (Array.isArray(v) ? jsonValue(v) : { ok: false, reason: `expected an array, got ${describe(v)}` }),
  set: (v) => {
    if (!Array.isArray(v)) return { ok: false, reason: `expected an array, got ${describe(v)}` };
    const r = jsonValue(v);
    if (!r.ok) return r;
    // Scalars are their own keys (a Set tells 1 from "1" as JSON does); objects and arrays are keyed by their text.
    const scalars = new Set<unknown>();
    let texts: Set<unknown> | undefined;
    const out = (r.value as unknown[]).filter((x) => {
      const seen = x === null || typeof x !== 'object' ? scalars : (texts ??= new Set());
      const k = seen === scalars ? x : JSON.stringify(x);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    return { ok: true, value: out };
  },
  enum: (v) =>
    typeof v === 'string' || Number.isInteger(v) ? { ok: true, value: v } : { ok: false, reason: `expected an enumeration name or integer, got ${describe(v)}` },
  geopoint: (v) => {
    if (!isPlainObject(v) || v.type !== 'Point') return { ok: false, reason: 'expected a GeoJSON Point { type: "Point", coordinates: [lon, lat] }' };
    const err = lonLatError(v.coordinates);
    return err ? { ok: false, reason: err } : jsonValue(v);
  },
  geomultipolygon: (v) => {
    if (!isPlainObject(v) || v.type !== 'MultiPolygon' || !Array.isArray(v.coordinates))
      return { ok: false, reason: 'expected a GeoJSON MultiPolygon { type: "MultiPolygon", coordinates: [[[[lon, lat], …]]] }' };
    for (let i = 0; i < v.coordinates.length; i++) {
      const err = ringsError(v.coordinates[i]);
      if (err) return { ok: false, reason: `polygon ${i}: ${err}` };
    }
    return jsonValue(v);
  },
};

/** Checks and normalises one value of a field; null is allowed everywhere. */
export function checkValue(field: FieldInfo, v: unknown): Result {
  if (v === null) return { ok: true, value: null };
  return CHECKS[field.category](v);
}

/** What `scalar` answers when it cannot accept a value itself: checkValue decides, and says why. */
const UNDECIDED = Symbol('undecided');

/**
 * The value of a scalar field that is valid as given (most of every document: strings, numbers, canonical dates),
 * without allocating a result; UNDECIDED for anything else.
 */
function scalar(category: Category, v: unknown): unknown {
  switch (category) {
    case 'string':
      return typeof v === 'string' ? v : UNDECIDED;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? v : UNDECIDED;
    case 'boolean':
      return typeof v === 'boolean' ? v : UNDECIDED;
    case 'int32':
      return typeof v === 'number' && (v | 0) === v ? v : UNDECIDED;
    case 'date':
      return typeof v === 'string' ? (normalizeDate(v) ?? UNDECIDED) : UNDECIDED;
    default:
      return UNDECIDED;
  }
}

export interface ValidateOptions {
  strict: boolean;
  /** Position of the document in the request, for error reports. */
  index: number;
}

/** The errors of a valid document: shared, never written to. */
const NO_ERRORS: readonly EnvelopeError[] = Object.freeze([]);

/**
 * A normalised copy of `doc`, or the errors that make it invalid. Undefined values are dropped.
 * @example validateDocument(info, { pwi: 'W1', spudDate: '5/1/2024' }, { strict: true, index: 0 }).doc.spudDate // '2024-05-01T00:00:00.000Z'
 */
export function validateDocument(
  type: TypeInfo,
  doc: unknown,
  { strict, index }: ValidateOptions,
): { doc: Record<string, unknown>; errors: readonly EnvelopeError[] } {
  if (!isPlainObject(doc)) {
    // Keeps `id` first in the stored JSON; stays undefined (and unwritten) until the store sets it.
    return { doc: { id: undefined }, errors: [{ code: 'VALIDATION', index, message: `document ${index}: expected an object, got ${describe(doc)}` }] };
  }
  // One native shallow copy (`id` first, as above), then one pass that replaces only the values a check normalises
  // or copies: most of a document (strings, numbers, canonical dates) is stored as given.
  const out: Record<string, unknown> = { id: undefined, ...doc };
  let errors: EnvelopeError[] | undefined;
  // The copy's own values are read, so a getter of `doc` runs once.
  for (const key of Object.keys(out)) {
    const value = out[key];
    if (value === undefined) {
      if (key !== 'id') delete out[key];
      continue;
    }
    const field = type.fields.get(key);
    if (field && value !== null) {
      const v = scalar(field.category, value);
      if (v !== UNDECIDED) {
        // A date given in another form (or a Date) is stored as its canonical text.
        if (v !== value) put(out, key, v);
        continue;
      }
    }
    if (!field && key.length > LIMITS.nameLength) {
      (errors ??= []).push({ code: 'VALIDATION', index, field: key.slice(0, 64), message: `document ${index}: field name ${shown(key)} is longer than ${LIMITS.nameLength} characters` });
      continue;
    }
    if (!field) {
      if (strict) {
        (errors ??= []).push({
          code: 'UNKNOWN_FIELD',
          index,
          field: key,
          message: `document ${index}: ${type.name} has no field "${key}"${didYouMean(key, type.fields.keys())}`,
        });
        continue;
      }
      const r = jsonValue(value);
      if (r.ok) put(out, key, r.value);
      else (errors ??= []).push({ code: 'VALIDATION', index, field: key, message: `document ${index}: ${key}: ${r.reason}` });
      continue;
    }
    const r = checkValue(field, value);
    if (r.ok) {
      if (r.value !== value) put(out, key, r.value);
    } else (errors ??= []).push({ code: 'VALIDATION', index, field: key, message: `document ${index}: ${key}: ${r.reason}` });
  }
  if (out.id !== undefined && out.id !== null && (typeof out.id !== 'string' || out.id === '')) {
    (errors ??= []).push({ code: 'VALIDATION', index, field: 'id', message: `document ${index}: id: expected a non-empty string` });
  }
  return { doc: out, errors: errors ?? NO_ERRORS };
}
