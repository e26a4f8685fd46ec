/**
 * Reference evaluator: the README "Semantics" of queries, written plainly in JS over arrays of
 * documents, so tests can hold the SQL compiler to it. It knows nothing of SQLite.
 *
 * It takes documents as the store keeps them (DateTime fields already ISO) and, for the DateTime
 * fields named in `ctx.dateFields`, normalises query operands the way the store does.
 */
import { normalizeDate } from '../../src/catalogue/dates.js';

export type Doc = Record<string, unknown>;

export interface EvalOptions {
  limit?: number;
  skip?: number;
  sortBy?: string;
  sortOrder?: 1 | -1 | 0;
}

export interface EvalContext {
  /** Top-level DateTime fields: their operands are normalised to ISO (README "Dates"). */
  dateFields?: Iterable<string>;
}

export interface EvalResult {
  /** Ids of the page, in order. */
  ids: string[];
  /** Every match. */
  total: number;
}

interface Step {
  name: string;
  indexes: number[];
}

type Test = (tested: readonly unknown[]) => boolean;

const INDEX = /^(0|[1-9][0-9]*)$/;
const OPERATORS = new Set(['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'regex']);

/** `a.b.0.c` → [a, b[0], c]: numeric segments index the array reached by the step before. */
export function parsePath(text: string): Step[] {
  const steps: Step[] = [];
  for (const part of text.split('.')) {
    if (INDEX.test(part) && steps.length > 0) steps[steps.length - 1]!.indexes.push(Number(part));
    else steps.push({ name: part, indexes: [] });
  }
  return steps;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** An index past the end of an array (an empty one included): no value at all, unlike a missing one (MongoDB). */
const NONE = Symbol('no value');

/** One step from a node: the member, then its indexes; anything that is not there is `undefined` (missing). */
function member(node: unknown, step: Step): unknown {
  if (!isObject(node) || !Object.hasOwn(node, step.name)) return undefined;
  let v: unknown = node[step.name];
  for (const i of step.indexes) {
    if (v === NONE) return NONE;
    v = Array.isArray(v) ? (i < v.length ? v[i] : NONE) : undefined;
  }
  return v;
}

/**
 * The values a condition tests (README "Values along a path"): arrays on the way fan out to their
 * elements, a non-object where a step needs an object is a missing leaf, and the leaf is tested
 * together with its elements when it is an array. `undefined` stands for a missing leaf.
 */
export function testedValues(doc: unknown, steps: readonly Step[], i = 0): unknown[] {
  const v = member(doc, steps[i]!);
  if (v === NONE) return [];
  if (i === steps.length - 1) return Array.isArray(v) ? [v, ...v] : [v];
  if (Array.isArray(v)) return v.flatMap((e) => testedValues(e, steps, i + 1));
  return testedValues(v, steps, i + 1);
}

/**
 * The values MongoDB's `distinct` reads along a path (its dotted-path extraction): an array met before the leaf fans
 * out one level and only its objects go on (an array inside it reaches no member); the leaf's array gives its elements,
 * a nested array among them one value. `undefined` stands for a missing leaf.
 */
export function unwoundValues(doc: unknown, steps: readonly Step[], i = 0): unknown[] {
  const v = member(doc, steps[i]!);
  if (v === NONE) return [];
  if (i === steps.length - 1) return Array.isArray(v) ? v : [v];
  return (Array.isArray(v) ? v : [v]).filter(isObject).flatMap((e) => unwoundValues(e, steps, i + 1));
}

/**
 * `distinct(path)` over documents: the unwound values, null and missing left out, each once (by JSON text), in sort order.
 * @example distinctOf([{ a: [{ b: 1 }, { b: [2, [3]] }] }], 'a.b') // [1, 2, [3]]
 */
export function distinctOf(docs: readonly Doc[], path: string): unknown[] {
  const steps = parsePath(path);
  const seen = new Map<string, unknown>();
  for (const doc of docs) for (const v of unwoundValues(doc, steps)) if (v !== null && v !== undefined) seen.set(JSON.stringify(v), v);
  return [...seen.values()].sort(compareForSort);
}

/** The value a sort reads: a plain JSON path, no array traversal (as compileOrder's json_extract). */
export function sortValue(doc: unknown, steps: readonly Step[]): unknown {
  let node: unknown = doc;
  for (const step of steps) node = member(node, step);
  return node === NONE ? undefined : node;
}

function bytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** MongoDB's type-bracketed equality; arrays and objects compare whole, by JSON text (key order matters). */
export function equals(tested: unknown, operand: unknown): boolean {
  if (operand === null) return tested === null || tested === undefined;
  if (tested === null || tested === undefined) return false;
  if (typeof operand === 'number') return typeof tested === 'number' && tested === operand;
  if (typeof operand === 'string' || typeof operand === 'boolean') return tested === operand;
  if (Array.isArray(operand)) return Array.isArray(tested) && JSON.stringify(tested) === JSON.stringify(operand);
  if (isObject(operand)) return isObject(tested) && JSON.stringify(tested) === JSON.stringify(operand);
  throw new Error(`reference: unsupported operand ${String(operand)}`);
}

/** Sign of a - b when both are of one comparable class (numbers, strings by UTF-8 bytes, booleans); null otherwise. */
function compareSameClass(a: unknown, b: unknown): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return Math.sign(bytes(a, b));
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return null;
}

/**
 * A JS RegExp with RE2's line semantics, which the store's patterns run on: `.` excludes only `\n`, and with `m`
 * the anchors `^ $` break only at `\n` (JS also breaks at `\r`, U+2028 and U+2029). Other syntax passes through.
 */
export function re2Like(source: string, flags: string): RegExp {
  const dotAll = flags.includes('s');
  const multiline = flags.includes('m');
  let out = '';
  let inClass = false;
  const chars = Array.from(source);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '\\') out += ch + (chars[++i] ?? '');
    else if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
    } else if (ch === '[') {
      inClass = true;
      out += ch;
    } else if (ch === '.' && !dotAll) out += '[^\\n]';
    else if (ch === '^' && multiline) out += '(?<=^|\\n)';
    else if (ch === '$' && multiline) out += '(?=$|\\n)';
    else out += ch;
  }
  return new RegExp(out, `${flags.replace('m', '')}u`);
}

/** `pattern` or `/pattern/flags` (flags i m s), or a RegExp (g y u dropped), as the store's RE2 reads it. */
export function toRegExp(operand: unknown): RegExp {
  let source: string;
  let flags = '';
  if (operand instanceof RegExp) {
    source = operand.source;
    flags = operand.flags.replace(/[gyu]/g, '');
  } else if (typeof operand === 'string') {
    const m = /^\/(.*)\/([A-Za-z]*)$/s.exec(operand);
    source = m ? m[1]! : operand;
    flags = m ? m[2]! : '';
  } else throw new Error('reference: regex takes a string or RegExp');
  return re2Like(source, flags);
}

function normalizeOperand(v: unknown, isDate: boolean): unknown {
  if (v instanceof Date) return v.toISOString();
  if (isDate && v !== null) {
    const iso = normalizeDate(v);
    if (iso === null) throw new Error(`reference: not a date: ${String(v)}`);
    return iso;
  }
  return v;
}

function compileOperator(op: string, operand: unknown, isDate: boolean): Test {
  const norm = (v: unknown) => normalizeOperand(v, isDate);
  switch (op) {
    case 'eq': {
      const v = norm(operand);
      return (t) => t.some((x) => equals(x, v));
    }
    case 'ne': {
      const v = norm(operand);
      return (t) => !t.some((x) => equals(x, v));
    }
    case 'in': {
      if (!Array.isArray(operand)) throw new Error('reference: in takes an array');
      const vs = operand.map(norm);
      return (t) => vs.some((v) => t.some((x) => equals(x, v)));
    }
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const v = norm(operand);
      // null is only equal to itself: lte/gte null are eq null, lt/gt null match nothing.
      if (v === null) return op === 'lte' || op === 'gte' ? (t) => t.some((x) => equals(x, null)) : () => false;
      if (v === undefined || typeof v === 'object') throw new Error(`reference: ${op} needs a scalar operand`);
      const ok = { lt: (s: number) => s < 0, lte: (s: number) => s <= 0, gt: (s: number) => s > 0, gte: (s: number) => s >= 0 }[op];
      return (t) =>
        t.some((x) => {
          const s = compareSameClass(x, v);
          return s !== null && ok(s);
        });
    }
    case 'regex': {
      const re = toRegExp(operand);
      return (t) => t.some((x) => typeof x === 'string' && re.test(x));
    }
    default:
      throw new Error(`reference: unknown operator "${op}"`);
  }
}

/** The query as one predicate over documents: fields ANDed, operators of one field ANDed. */
export function compileQuery(query: Record<string, unknown>, ctx: EvalContext = {}): (doc: Doc) => boolean {
  const dateFields = new Set(ctx.dateFields ?? []);
  const parts: { steps: Step[]; test: Test }[] = [];
  for (const [key, cond] of Object.entries(query ?? {})) {
    if (cond === undefined) continue;
    const steps = parsePath(key);
    const isDate = steps.length === 1 && steps[0]!.indexes.length === 0 && dateFields.has(key);
    const add = (op: string, operand: unknown) => parts.push({ steps, test: compileOperator(op, operand, isDate) });
    if (Array.isArray(cond)) add('in', cond);
    else if (isObject(cond) && !(cond instanceof Date) && !(cond instanceof RegExp)) {
      const entries = Object.entries(cond).filter(([, v]) => v !== undefined);
      if (entries.length === 0) throw new Error(`reference: empty operator object at ${key}`);
      for (const [name, operand] of entries) {
        const op = name.toLowerCase();
        if (!OPERATORS.has(op)) throw new Error(`reference: unknown operator "${name}"`);
        add(op, operand);
      }
    } else add('eq', cond);
  }
  return (doc) => parts.every((p) => p.test(testedValues(doc, p.steps)));
}

/** Sort rank across types: null/missing < numbers < strings < objects < arrays < booleans. */
export function sortRank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  if (Array.isArray(v)) return 4;
  if (typeof v === 'boolean') return 5;
  return 3;
}

/** Ascending order of two sort values; arrays and objects by their JSON text as UTF-8 bytes. */
export function compareForSort(a: unknown, b: unknown): number {
  const ra = sortRank(a);
  const rb = sortRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  if (ra === 3 || ra === 4) return Math.sign(bytes(JSON.stringify(a), JSON.stringify(b)));
  return compareSameClass(a, b)!;
}

/**
 * Matches, order and page of `query` over `docs` (in insertion order), by the README's semantics.
 * @example evaluate(docs, { fracStages: { gt: 10 } }, { sortBy: 'spudDate', sortOrder: -1, limit: 5 })
 */
export function evaluate(docs: readonly Doc[], query: Record<string, unknown> = {}, options: EvalOptions = {}, ctx: EvalContext = {}): EvalResult {
  const match = compileQuery(query, ctx);
  const hits = docs.map((doc, index) => ({ doc, index })).filter(({ doc }) => match(doc));
  const order = options.sortBy ? (options.sortOrder ?? 1) : 0;
  if (order !== 0) {
    const steps = parsePath(options.sortBy!);
    const keyed = hits.map((h) => ({ ...h, key: sortValue(h.doc, steps) }));
    // Ties break by insertion order, ascending in both directions.
    keyed.sort((x, y) => order * compareForSort(x.key, y.key) || x.index - y.index);
    hits.splice(0, hits.length, ...keyed);
  }
  const skip = options.skip ?? 0;
  const limit = options.limit ?? 0;
  const page = hits.slice(skip, limit > 0 ? skip + limit : undefined);
  return { ids: page.map((h) => h.doc.id as string), total: hits.length };
}
