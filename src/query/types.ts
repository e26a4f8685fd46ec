/** Static types of queries and options, derived from a document type. */

type Cap<K extends string> = K | Capitalize<K>;
type Operand<V> = [V] extends [string] ? V | Date : V;

/** Operator object for a field whose values are V. Operator names may be capitalised (v1 style: `Gt`). */
export type Operators<V> = {
  [K in Cap<'eq'> | Cap<'ne'>]?: Operand<V> | null;
} & {
  [K in Cap<'in'>]?: readonly (Operand<V> | null)[];
} & {
  [K in Cap<'lt'> | Cap<'lte'> | Cap<'gt'> | Cap<'gte'>]?: Operand<V>;
} & {
  [K in Cap<'regex'>]?: string | RegExp;
} & {
  [K in Cap<'bounds'>]?: readonly [number, number, number, number];
} & {
  [K in Cap<'polygon'>]?: readonly (readonly (readonly number[])[])[];
};

type Element<V> = V extends readonly (infer E)[] ? E | V : V;

/** A condition on one field: a value (eq), an array of values (in), or an operator object. */
export type FieldCondition<V> = Operand<Element<V>> | null | readonly (Operand<Element<V>> | null)[] | Operators<Element<V>>;

/** A query on documents D: field conditions ANDed; dotted paths reach into object values. */
export type Query<D> = { [K in keyof D]?: FieldCondition<NonNullable<D[K]>> } & {
  [path: `${string}.${string}`]: unknown;
};

export interface QueryOptions<D = Record<string, unknown>> {
  /** Page size; 0 or absent: no limit. */
  limit?: number;
  /** Matches to skip before the page. */
  skip?: number;
  /** Field path to sort on. */
  sortBy?: (keyof D & string) | `${string}.${string}`;
  /** 1 ascending (default), -1 descending, 0 none. */
  sortOrder?: 1 | -1 | 0;
}

/** The fields an update sets: document fields with their write types, and dotted paths into object values. */
export type UpdateBody<D> = { [K in keyof D]?: D[K] } & {
  [path: `${string}.${string}`]: unknown;
};
