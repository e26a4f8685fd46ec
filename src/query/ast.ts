/** The checked form of a query: plain frozen data the compiler turns into SQL. */
import type { FieldInfo } from '../catalogue/index.js';

export const OPERATORS = ['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'regex', 'bounds', 'polygon', 'near'] as const;
export type Operator = (typeof OPERATORS)[number];

/** A JSON path step: a member name followed by zero or more array indexes (`a.0` → a[0]). */
export interface Step {
  readonly name: string;
  readonly indexes: readonly number[];
}

export interface FieldPath {
  readonly text: string;
  readonly steps: readonly Step[];
  /** The catalogue field this path starts at, when known. */
  readonly field?: FieldInfo;
  /** True when the path is exactly a scalar-typed top-level field (one JSON type, never an array). */
  readonly scalar: boolean;
}

export type Condition =
  | { readonly op: 'eq' | 'ne'; readonly path: FieldPath; readonly value: unknown }
  | { readonly op: 'in'; readonly path: FieldPath; readonly values: readonly unknown[] }
  | { readonly op: 'lt' | 'lte' | 'gt' | 'gte'; readonly path: FieldPath; readonly value: string | number | boolean }
  | { readonly op: 'regex'; readonly path: FieldPath; readonly source: string; readonly flags: string }
  | { readonly op: 'bounds'; readonly path: FieldPath; readonly box: readonly [number, number, number, number] }
  | { readonly op: 'polygon'; readonly path: FieldPath; readonly rings: readonly (readonly (readonly number[])[])[]; readonly box: readonly [number, number, number, number] }
  | Near;

/**
 * A `near` condition: points within `max` metres (and at least `min`) of `point` along the sphere (src/geo/near.ts).
 * `boxes` hold that cap in lon/lat degrees (two across the antimeridian): the index prefilter, never losing a point.
 */
export interface Near {
  readonly op: 'near';
  readonly path: FieldPath;
  readonly point: readonly [number, number];
  readonly max: number;
  readonly min: number;
  readonly boxes: readonly (readonly [number, number, number, number])[];
}

/** One sort key: a path and its direction; `near` when the key is the distance to that condition's point. */
export interface SortKey {
  readonly path: FieldPath;
  readonly order: 1 | -1;
  readonly near?: Near;
}

/** The keys a result is sorted by, most significant first (ties then by insertion order). */
export interface Sort {
  readonly keys: readonly SortKey[];
}

/** A position in a sorted result (see cursor.ts): the last document's sort rank and key, its seq, and the total when paging began. */
export interface Keyset {
  readonly rank: number;
  readonly key: string | number | null;
  readonly seq: number;
  readonly total: number;
}

export interface QueryPlan {
  readonly conditions: readonly Condition[];
  readonly sort: Sort | null;
  readonly limit: number;
  readonly skip: number;
  /**
   * The top-level fields the answer's documents hold (options.fields), `id` first and always, then the named fields in
   * the order requested; a document lacking a field lacks it in the answer too (a null stays null). Null: whole documents.
   */
  readonly fields: readonly FieldPath[] | null;
  /** options.includeDeleted: soft-deleted documents match too (the façade scopes a plan to live documents otherwise). */
  readonly includeDeleted: boolean;
  /** Continue after this position (options.cursor), instead of counting from the first match. */
  readonly after: Keyset | null;
  /**
   * The digest of the query and sort a cursor of this plan's answer continues (see cursor.ts); '' when the plan has
   * no limit and continues no cursor (no cursor can follow its answer, and the digest costs a hash per query).
   */
  readonly shape: string;
  /** options.distance: each answered document gets the distance (metres) to this `near` condition's point, under `name`. */
  readonly distance: { readonly name: string; readonly near: Near } | null;
  /** Warnings for the envelope's `issues`. */
  readonly issues: readonly string[];
  /**
   * A k-nearest page's neighbourhood (src/core/nearest.ts): the page reads the matches within this many metres of its
   * leading `near` sort key's point only; the count still reads every match.
   */
  readonly reach?: number;
  /** The total when already counted (a k-nearest search that grew its neighbourhood): the page is not counted again. */
  readonly counted?: number;
}
