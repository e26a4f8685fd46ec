/**
 * What differs between the SQL engines, as the one compiler (compile.ts) asks for it: small hooks, each a rule of one
 * engine (how a value is bound, how a JSON member is read, how an array fans out, how a regex or a box is tested).
 * Everything else — which conditions, which paths, MongoDB's rules over arrays, keyset pages — is written once.
 */
import type { Condition, FieldPath, Keyset, SortKey, Step } from '../query/ast.js';
import type { Param, Placeholders, Sql } from './fragment.js';

/** A JSON value as a condition tests it: SQL of its JSON type name (NULL when missing) and of the value itself. */
export interface JsonValue {
  readonly type: string;
  readonly value: string;
}

/** A column of JSON documents, as the engine reads it. */
export interface JsonSource {
  /** The document itself, the base of every path. */
  readonly root: string;
  /** The value at `steps` below `base` (the document, or an element a fan-out reached). */
  at(base: string, steps: readonly Step[]): JsonValue;
  /** The length of the array at `steps` below `base`. */
  length(base: string, steps: readonly Step[]): string;
  /** A query of the rows `c` of every value along a path (README "Values along a path"), arrays fanned out. */
  candidates(steps: readonly Step[]): string;
  /** How a test reads one row of `candidates`. */
  readonly candidate: JsonValue;
}

/** Comparison operators and their SQL. */
export const COMPARE = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;
export type Comparison = keyof typeof COMPARE;

/** One ORDER BY key. */
export interface OrderKey {
  readonly expr: Sql | string;
  readonly direction: string;
}

/** How a sort orders rows: its ORDER BY keys (ties by insertion order), and the rank and key a cursor keeps of a row. */
export interface SortShape {
  readonly keys: readonly OrderKey[];
  readonly rank: Sql | string;
  readonly key: Sql | string;
  /** Rows after a cursor's position, in this order (ties by insertion order, ascending in both directions). */
  after(at: Keyset): Sql;
}

/**
 * How one sort key orders rows, for a cursor: its ORDER BY keys (without the insertion-order tie-break), the rank and
 * key a cursor keeps of a row, and the rows strictly after (`beyond`) or level with (`same`) a kept rank and key.
 */
export interface KeyShape {
  readonly keys: readonly OrderKey[];
  readonly rank: Sql | string;
  readonly key: Sql | string;
  beyond(rank: number, key: string | number | null): Sql | string;
  same(rank: number, key: string | number | null): Sql | string;
}

/** Where a condition is compiled: the type's table, whether its spatial index may be used, the fields an index leads. */
export interface Target {
  readonly type: string;
  /** False for rows of another table (the change feed's): points are then tested on the documents alone. */
  readonly tree: boolean;
  /** The fields that lead an index; undefined: every scalar field compares on its canonical expression. */
  readonly indexed?: ReadonlySet<string>;
}

/** Some value along `path` of `source` (the dialect's document by default) passes `test`. */
export type SomeValue = (path: FieldPath, test: (v: JsonValue) => Sql | string, source?: JsonSource) => Sql;

/** The request a journaled write belongs to, as the journal's triggers read it (README "Activity log"). */
export interface JournalContext {
  readonly op: string;
  readonly activity: string;
  readonly at: string;
  readonly ms: number;
  readonly by: string;
}

/** How an engine stores and reads back whole documents: the hooks of the write statements (write.ts). */
export interface Storage {
  /** The columns a document is stored in besides `id`, each with its value from the document's JSON text `json`. */
  stored(json: Sql): readonly (readonly [column: string, value: Sql | string])[];
  /** A row's document as its JSON text. */
  readonly docText: string;
  /** Takes the rows a SELECT reads for the write that follows (or nothing where the write lock covers them). */
  readonly lock: string;
  /** Skips a row colliding on a unique key, answering the ids of those that went in (after an INSERT … SELECT). */
  readonly skipConflicts: string;
  /** The rows of a bound JSON array: its FROM item, an element (JSON), its position, and an element's member as text. */
  elements(array: Param): { from: Sql; item: string; at: string; member(name: string): string };
  /** A text column equals one of several values, bound as one list. */
  anyText(column: string, values: readonly string[]): Sql;
  /** The SET clause writing fields at paths and top-level stamps into a document, keeping the order of its members. */
  setFields(sets: readonly { readonly steps: readonly Step[]; readonly value: unknown }[], stamps: Readonly<Record<string, unknown>>): Sql;
  /**
   * The statement setting a transaction's context for the journal's triggers, and the one clearing it before the commit
   * (null: it ends with the transaction); `distributed`: the triggers run on other servers too (Citus' workers).
   */
  context(ctx: JournalContext, distributed: boolean): { set: Sql | string; clear: Sql | string | null };
}

/** The hooks of one engine. */
export interface Dialect extends Placeholders, Storage {
  readonly true: string;
  readonly false: string;
  /** NULL-safe inequality: `IS NOT` or `IS DISTINCT FROM`. */
  readonly distinct: string;
  /** True when the JSON text `list` (an array of strings, a column of text) holds `item` exactly, case and all. */
  listHas(list: string, item: string): string;
  /** The column of insertion order. */
  readonly seq: string;
  /** The cast of a bound insertion-order position. */
  readonly seqCast: string;
  /** The documents. */
  readonly doc: JsonSource;
  /** ORDER BY direction: null and missing first ascending, last descending. */
  direction(asc: boolean): string;
  /** A boolean test as the integer a cursor's rank holds. */
  rank(test: Sql | string): Sql | string;
  /** The canonical expression of a scalar top-level field: indexes are declared on exactly this text. */
  scalar(path: FieldPath): string;
  /** A scalar operand, bound as the field's canonical expression compares. */
  scalarValue(value: unknown, path: FieldPath): Param;
  /** A scalar field's expression equals one of several non-null values, bound as one list. */
  anyOf(values: readonly unknown[], path: FieldPath): { param: Param; test(x: string): Sql };
  /** A regex test of string SQL text, its bound values (the pattern, as the engine runs it). */
  regex(c: Extract<Condition, { op: 'regex' }>): { params: readonly Param[]; test(text: string): Sql };
  /** A tested JSON value is a string: its type test and its text, compared in UTF-8 byte order. */
  string(v: JsonValue): { is: string; text: string };
  /** A tested JSON value compares with a number or boolean operand, within its own type. */
  compare(op: Comparison, value: number | boolean): (v: JsonValue) => Sql;
  /** Some value along the path equals one of `values` (README "Semantics": numbers by value, containers whole). */
  equalsAny(path: FieldPath, values: readonly unknown[], some: SomeValue): Sql | string;
  /**
   * A `bounds` or `polygon` condition: a spatial prefilter where `target.tree`, then the exact test. A `near`
   * condition: the points in its boxes (the compiler then tests the distance).
   */
  geo(c: Extract<Condition, { op: 'bounds' | 'polygon' | 'near' }>, target: Target): Sql | string;
  /** The longitude and latitude of a GeoPoint field as stored, as SQL doubles a distance reads (see src/geo/near.ts TINY). */
  coordinates(field: string): readonly [string, string];
  /** The smaller of 1 and a double (SQLite's two-argument min, PostgreSQL's least). */
  atMostOne(x: Sql): Sql;
  /** A double as JSON number text that reads back as the same double. */
  floatText(x: Sql | string): Sql;
  /** Several sort keys as one JSON array text (a cursor keeps it): numbers exact, strings and JSON texts as strings. */
  tuple(items: readonly (Sql | string)[]): Sql;
  /** A condition answered otherwise before it is compiled (operands the engine cannot bind): a boolean, or another condition. */
  operand?(c: Condition): Condition | boolean;
  /** A scalar condition on a field no index leads, when the engine compares it better without the canonical expression. */
  unindexed?(c: Condition, path: FieldPath): Sql | null;
  /** The order of a sort key on a path other than a scalar field. */
  pathSort(key: SortKey): KeyShape;
}
