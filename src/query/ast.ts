/** The checked form of a query: plain frozen data the compiler turns into SQL. */
import type { FieldInfo } from '../catalogue/index.js';

export const OPERATORS = ['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'regex', 'bounds', 'polygon'] as const;
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

export type Scalar = string | number | boolean | null;

export type Condition =
  | { readonly op: 'eq' | 'ne'; readonly path: FieldPath; readonly value: unknown }
  | { readonly op: 'in'; readonly path: FieldPath; readonly values: readonly unknown[] }
  | { readonly op: 'lt' | 'lte' | 'gt' | 'gte'; readonly path: FieldPath; readonly value: string | number | boolean }
  | { readonly op: 'regex'; readonly path: FieldPath; readonly source: string; readonly flags: string }
  | { readonly op: 'bounds'; readonly path: FieldPath; readonly box: readonly [number, number, number, number] }
  | { readonly op: 'polygon'; readonly path: FieldPath; readonly rings: readonly (readonly (readonly number[])[])[]; readonly box: readonly [number, number, number, number] };

export interface Sort {
  readonly path: FieldPath;
  readonly order: 1 | -1;
}

export interface QueryPlan {
  readonly conditions: readonly Condition[];
  readonly sort: Sort | null;
  readonly limit: number;
  readonly skip: number;
  /** Warnings for the envelope's `issues`. */
  readonly issues: readonly string[];
}
