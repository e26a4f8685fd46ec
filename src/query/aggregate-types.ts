/**
 * Static types of aggregates, derived from the catalogue as queries' are (types.ts): sum and avg take numeric
 * fields, min and max numeric, date and string ones, buckets DateTime ones, and the row type names each group key
 * and metric with its value's type. What the run time refuses (query/aggregate.ts) does not compile.
 */
import type { BuiltinCatalogue, CatalogueShape, FieldKinds, TypeName } from '../catalogue/index.js';
import type { Category, KindCategory } from '../catalogue/kinds.js';
import type { Interval } from './aggregate.js';
import type { SortPath } from './types.js';

type Categories<T extends TypeName<C>, C extends CatalogueShape> = { [K in keyof FieldKinds<T, C>]-?: KindCategory<FieldKinds<T, C>[K] & string> };
type FieldsOf<M, P extends Category> = { [K in keyof M]: [M[K]] extends [P] ? K : never }[keyof M] & string;

/** A field sum and avg take: numbers and quantities. */
export type NumericField<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> = FieldsOf<Categories<T, C>, 'int32' | 'int64' | 'number'>;
/** A field min and max take: numeric, date and string fields. */
export type OrderedField<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> = FieldsOf<Categories<T, C>, 'int32' | 'int64' | 'number' | 'date' | 'string'>;

/** A group key: a field path, or a date bucket `{ field, interval }` of a DateTime field. */
export type GroupKey<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> =
  | SortPath<T, C>
  | { readonly field: FieldsOf<Categories<T, C>, 'date'>; readonly interval: Interval };

/** One metric: a function and the field it reads (`count: '*'` counts the documents). */
export type MetricSpec<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> =
  | { readonly sum: NumericField<T, C> }
  | { readonly avg: NumericField<T, C> }
  | { readonly min: OrderedField<T, C> }
  | { readonly max: OrderedField<T, C> }
  | { readonly count: '*' | SortPath<T, C> }
  | { readonly countDistinct: SortPath<T, C> };

/**
 * Options of `aggregate` on type T; G and M are the group keys and metrics, inferred from the call so that the
 * row type can name them.
 * @example const o: AggregateOptions<'DailyProduction'> = { groupBy: ['pwi'], metrics: { oil: { sum: 'oilVol' } } };
 */
export interface AggregateOptions<
  T extends TypeName<C>,
  C extends CatalogueShape = BuiltinCatalogue,
  G extends readonly GroupKey<T, C>[] = readonly GroupKey<T, C>[],
  M extends Record<string, MetricSpec<T, C>> = Record<string, MetricSpec<T, C>>,
> {
  groupBy?: G;
  metrics?: M;
  /** Group keys or metrics by name (several allowed); then every group key ascending. */
  sortBy?: NoInfer<SortName<G, M> | readonly SortName<G, M>[]>;
  /** 1 ascending (default) or -1, or one per sort key. */
  sortOrder?: 1 | -1 | readonly (1 | -1)[];
  /** Rows per answer; 0 or absent: every group. */
  limit?: number;
  skip?: number;
  /** Continue after the last row of an earlier answer (its `cursor`), with the same request. */
  cursor?: string | null;
  /** With `softDelete` on: count soft-deleted documents too (default false). */
  includeDeleted?: boolean;
}

/** A name `sortBy` takes: a group key's or a metric's. */
type SortName<G extends readonly unknown[], M> = KeyName<G[number]> | (keyof M & string);

/** The name a row holds a group key under: the path, or a bucket's field. */
export type KeyName<G> = G extends string ? G : G extends { readonly field: infer F extends string } ? F : never;

type Value<D, F> = F extends keyof D ? Exclude<D[F], undefined> | null : unknown;

type KeyValue<D, G> = G extends { readonly interval: Interval } ? string | null : Value<D, G>;

type MetricValue<D, S> = S extends { readonly count: unknown } | { readonly countDistinct: unknown }
  ? number
  : S extends { readonly min: infer F } | { readonly max: infer F }
    ? Value<D, F>
    : number | null;

/**
 * A row of an aggregate of documents D: each group key of G under its name, each metric of M under its name.
 * @example type Row = AggregateRow<DailyProduction, ['pwi'], { oil: { sum: 'oilVol' } }>; // { pwi: string | null; oil: number | null }
 */
export type AggregateRow<D, G extends readonly unknown[], M> = Flat<{ [K in G[number] as KeyName<K>]: KeyValue<D, K> } & { -readonly [K in keyof M]: MetricValue<D, M[K]> }>;

/** One object type of an intersection, as editors show it. */
type Flat<T> = { [K in keyof T]: T[K] };

