/**
 * Static types of queries, options and update bodies, derived from the catalogue: each field's wire kind decides
 * its category (`KindCategory`, the type-level `categoryOf`), and the category decides what the run time accepts
 * there (src/query/parse.ts). What the run time refuses does not compile.
 */
import type { BuiltinCatalogue, CatalogueShape, DocInput, FieldKinds, TypeName } from '../catalogue/index.js';
import type { Category, GeoMultiPolygon, GeoPoint, KindCategory, ObjectCategory } from '../catalogue/kinds.js';

/** An operator name as written: lower case, or capitalised (v1 style: `Gte`). */
type Cap<K extends string> = K | Capitalize<K>;

/** Operand of eq / ne / in per category: what `equalityOperand` accepts (untyped values: any JSON). */
interface EqualityOperands {
  string: string;
  boolean: boolean;
  int32: number;
  int64: number;
  number: number;
  date: string | Date;
  enum: string | number;
  duration: number | string;
  any: unknown;
  dict: unknown;
  array: unknown;
  set: unknown;
  geopoint: unknown;
  geomultipolygon: unknown;
  nested: unknown;
}

/** Categories compared as their own type by lt/lte/gt/gte (`comparisonOperand`); the others take any scalar. */
type TypedComparison = 'string' | 'boolean' | 'int32' | 'int64' | 'number' | 'date' | 'enum';

/** Categories `regex` refuses (parse.ts: regex tests strings). */
type NoRegex = 'boolean' | 'int32' | 'int64' | 'number' | 'geopoint' | 'geomultipolygon';

/** A scalar operand of a field whose values are untyped JSON. */
type AnyScalar = string | number | boolean | Date;

type Equality<Cat extends Category> = EqualityOperands[Cat];
type Comparison<Cat extends Category> = Cat extends TypedComparison ? EqualityOperands[Cat] : AnyScalar;

/** GeoJSON rings (exterior first, then holes), or a GeoJSON Polygon. */
export type PolygonOperand =
  | readonly (readonly (readonly number[])[])[]
  | { readonly type: 'Polygon'; readonly coordinates: readonly (readonly (readonly number[])[])[] };

/** A `near` operand: points within `maxDistance` metres (and at least `minDistance`) of `point` along the sphere. */
export interface NearOperand {
  readonly point: readonly [number, number] | { readonly type: 'Point'; readonly coordinates: readonly [number, number] };
  readonly maxDistance: number;
  readonly minDistance?: number;
}

/** The operators a field of category Cat takes: `regex` where strings may be, `bounds`/`polygon`/`near` on GeoPoint fields. */
type OperatorName<Cat extends Category> =
  | 'eq' | 'ne' | 'in' | 'lt' | 'lte' | 'gt' | 'gte'
  | (Cat extends NoRegex ? never : 'regex')
  | (Cat extends 'geopoint' ? 'bounds' | 'polygon' | 'near' : never);

type OperandOf<Op extends string, Cat extends Category> = Op extends 'eq' | 'ne'
  ? Equality<Cat> | null
  : Op extends 'in'
    ? readonly (Equality<Cat> | null)[]
    : Op extends 'regex'
      ? string | RegExp
      : Op extends 'bounds'
        ? readonly [number, number, number, number]
        : Op extends 'polygon'
          ? PolygonOperand
          : Op extends 'near'
            ? NearOperand
            : Comparison<Cat>;

/**
 * The operator object of a field of category Cat (`Category`: 'int32', 'date', …). Names may be capitalised (v1
 * style: `Gt`); Mongo's `$gt` is not an operator here.
 */
export type Operators<Cat extends Category> = {
  [Op in Cap<OperatorName<Cat>>]?: OperandOf<Uncapitalize<Op>, Cat>;
};

/**
 * A condition on one field of category Cat: a value (eq), an array of values (in), or an operator object. A plain
 * object is read as operators, so an untyped field compares with an object through `{ eq: {...} }`.
 */
export type FieldCondition<Cat extends Category> =
  | (Cat extends 'any' | 'dict' | 'array' | 'set' | 'geopoint' | 'geomultipolygon' | 'nested' ? AnyScalar : Equality<Cat>)
  | null
  | readonly (Equality<Cat> | null)[]
  | Operators<Cat>;

/** The category a document type's value suggests, for `Query<Doc<'Well'>>` (a string may be a DateTime). */
type ValueCategory<V> = unknown extends V
  ? 'any'
  : [V] extends [boolean] ? 'boolean'
  : [V] extends [number] ? 'number'
  : [V] extends [string | Date] ? 'date'
  : [V] extends [string | number] ? 'enum'
  : [V] extends [GeoPoint] ? 'geopoint'
  : [V] extends [GeoMultiPolygon] ? 'geomultipolygon'
  : [V] extends [readonly unknown[]] ? 'array'
  : 'nested';

/**
 * Field → category of the subject of a query: a type name of catalogue C (`'Well'`), or a document type
 * (`Doc<'Well'>`, your own interface).
 */
type CategoriesOf<S, C extends CatalogueShape> = [S] extends [TypeName<C>]
  ? { [K in keyof FieldKinds<S, C>]-?: KindCategory<FieldKinds<S, C>[K] & string> }
  : { [K in keyof S]-?: ValueCategory<Exclude<S[K], null | undefined>> };

/** Fields of M whose category is (only) one of P. */
type FieldsOf<M, P extends Category> = { [K in keyof M]: [M[K]] extends [P] ? K : never }[keyof M] & string;

/** Dotted paths a query or sort may name: under Object, Dictionary, nested-type, collection and geo fields. */
type QueryPath<M> = `${FieldsOf<M, ObjectCategory>}.${string}`;

/** Dotted paths an update may set: under Object, Dictionary and nested-type fields (collections and points are set whole). */
type UpdatePath<M> = `${FieldsOf<M, 'any' | 'dict' | 'nested'>}.${string}`;

type QueryOn<M> = { [K in keyof M]?: FieldCondition<M[K] & Category> } & { [P in QueryPath<M>]?: FieldCondition<'any'> };

/**
 * A query on type S (`Query<'Well'>`) of catalogue C, or on a document type (`Query<Doc<'Well'>>`): field conditions,
 * ANDed. Keys are the type's fields, or dotted paths into its Object, Dictionary, nested-type and collection fields
 * (`'extra.source'`); the value inside those is untyped.
 * @example const q: Query<'Well'> = { basinName: 'Permian', fracStages: { gte: 20 }, 'extra.source': 'etl' };
 */
export type Query<S extends TypeName<C> | object, C extends CatalogueShape = BuiltinCatalogue> = QueryOn<CategoriesOf<S, C>>;

/** A sort path of S: a field, or a dotted path into an Object, Dictionary, nested-type or collection field. */
export type SortPath<S extends TypeName<C> | object, C extends CatalogueShape = BuiltinCatalogue> =
  | (keyof CategoriesOf<S, C> & string)
  | QueryPath<CategoriesOf<S, C>>;

/**
 * A field `options.fields` may name: a top-level field of S (dotted paths are refused at run time).
 * @example const f: FieldName<'Well'> = 'pwi';
 */
export type FieldName<S extends TypeName<C> | object, C extends CatalogueShape = BuiltinCatalogue> = keyof CategoriesOf<S, C> & string;

/**
 * The documents an answer holds when `options.fields` names F: `id` and the fields named, as `Pick` of the document
 * type D (which has `id` always and every other field optional); D itself when F is `never` (no `fields`) or every field.
 * @example type Row = Projected<Well, 'pwi' | 'name'>; // Pick<Well, 'id' | 'pwi' | 'name'>
 */
export type Projected<D, F extends PropertyKey> = [F] extends [never] ? D : [keyof D] extends [F | 'id'] ? D : Pick<D, (F | 'id') & keyof D>;

/**
 * Paging and order of a query on type S of catalogue C (or on a document type); F: the fields `fields` may name (a
 * typed store infers it from the call, to narrow the answer's type).
 * @example const o: QueryOptions<'Well'> = { sortBy: 'spudDate', sortOrder: -1, limit: 50 };
 */
export interface QueryOptions<
  S extends TypeName<C> | object = Record<string, unknown>,
  C extends CatalogueShape = BuiltinCatalogue,
  F extends FieldName<S, C> = FieldName<S, C>,
> {
  /** Page size; 0 or absent: no limit. */
  limit?: number;
  /** Matches to skip before the page. */
  skip?: number;
  /** Field path to sort on, or several (most significant first); a GeoPoint field with a `near` condition sorts by distance. */
  sortBy?: SortPath<S, C> | readonly SortPath<S, C>[];
  /** 1 ascending (default), -1 descending, 0 none; with several sortBy keys, one order for all or one per key. */
  sortOrder?: 1 | -1 | 0 | readonly (1 | -1)[];
  /** With a `near` condition: each document gets its distance in metres under this name. */
  distance?: string;
  /** Continue after the last document of an earlier answer (its `cursor`), with the same query and sort. */
  cursor?: string | null;
  /**
   * The top-level fields the answer's documents hold: `id` first and always, then these in this order; a document
   * lacking one lacks it in the answer too. Absent: whole documents. The answer's type narrows to match
   * (`Projected`: `Pick<Well, 'id' | 'pwi' | 'name'>`).
   * @example { fields: ['pwi', 'name'] } // data: [{ id: '…', pwi: 'W1', name: 'Hawk 1H' }, …]
   */
  fields?: readonly F[] | null;
  /** With `softDelete` on: answer soft-deleted documents too (default false). */
  includeDeleted?: boolean;
}

/** Options of `iterate`: a sort, a cap on the documents yielded, and how many are read at a time; F as in QueryOptions. */
export interface IterateOptions<
  S extends TypeName<C> | object = Record<string, unknown>,
  C extends CatalogueShape = BuiltinCatalogue,
  F extends FieldName<S, C> = FieldName<S, C>,
> {
  /** Field path to sort on, or several (most significant first); a GeoPoint field with a `near` condition sorts by distance. */
  sortBy?: SortPath<S, C> | readonly SortPath<S, C>[];
  /** 1 ascending (default), -1 descending, 0 none; with several sortBy keys, one order for all or one per key. */
  sortOrder?: 1 | -1 | 0 | readonly (1 | -1)[];
  /** With a `near` condition: each document gets its distance in metres under this name. */
  distance?: string;
  /** Documents yielded at most; 0 or absent: every match. */
  limit?: number;
  /** Documents read per step (default 1,000). */
  batchSize?: number;
  /** The top-level fields each document holds (`id` always, first), as QueryOptions' `fields`; the type narrows too. */
  fields?: readonly F[] | null;
  /** With `softDelete` on: yield soft-deleted documents too (default false). */
  includeDeleted?: boolean;
}

/** The document type whose fields an update sets: the write form of a type name's documents, or the document type itself. */
type WriteDoc<S, C extends CatalogueShape> = [S] extends [TypeName<C>] ? DocInput<S, C> : S;

/**
 * The fields an update on type S of catalogue C (or on a document type) sets: fields with their write types, and
 * dotted paths into Object, Dictionary and nested-type fields (`'extra.source'`), whose values are untyped.
 * @example const b: UpdateBody<'Well'> = { statusCurrent: 'Producing', 'extra.source': 'etl' };
 */
export type UpdateBody<S extends TypeName<C> | object, C extends CatalogueShape = BuiltinCatalogue> = {
  [K in keyof WriteDoc<S, C>]?: WriteDoc<S, C>[K];
} & { [P in UpdatePath<CategoriesOf<S, C>>]?: unknown };
