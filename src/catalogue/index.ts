/** The catalogue at run time: type lookup, field kinds, schema listing, and the TS types derived from it. */
import { envelope, fail, requestError, RequestError, type Envelope } from '../envelope.js';
import { LIMITS, shown } from '../limits.js';
import { categoryOf, type Category } from './kinds.js';
import { describe } from './validate.js';
import { BASE_FIELDS, CATALOGUE_VERSION, DEFAULT_INDEXED_FIELDS, DEFAULT_UNIQUE_KEYS, TYPES } from './types.js';

export { BASE_FIELDS, CATALOGUE_VERSION, TYPES, DEFAULT_UNIQUE_KEYS, DEFAULT_INDEXED_FIELDS };
export type * from './documents.js';
export type { GeoMultiPolygon, GeoPoint } from './kinds.js';

/** Shape of a catalogue: type name → field name → wire kind name. */
export type CatalogueShape = { readonly [type: string]: { readonly [field: string]: string } };

/**
 * The built-in catalogue's type. A mapped type rather than `typeof TYPES`, so that the compiler prints its name in
 * hovers and errors (`Query<"Well", BuiltinCatalogue>`) instead of the whole catalogue.
 */
export type BuiltinCatalogue = { readonly [T in keyof typeof TYPES]: (typeof TYPES)[T] };

/** Lower-case name → declared name of every type of C (names are unique case-insensitively). */
type LowerNames<C extends CatalogueShape> = { [K in keyof C & string as Lowercase<K>]: K };

/** Type-level mirror of `ALIASES` below: lower-case alias → lower-case name of the type it stands for. */
interface TypeAliases {
  folder: 'petron';
}

/** The aliases whose type C has, as written and in lower case (`'Folder' | 'folder'`). */
type AliasName<C extends CatalogueShape> = {
  [A in keyof TypeAliases]: TypeAliases[A] extends keyof LowerNames<C> ? A | Capitalize<A> : never;
}[keyof TypeAliases];

/**
 * A type name as `type` accepts it: the declared name, the same in lower case (`'well'`), or an alias (`'Folder'`).
 * The run time resolves any case; the types accept these two spellings.
 */
export type TypeName<C extends CatalogueShape = BuiltinCatalogue> = (keyof C & string) | Lowercase<keyof C & string> | AliasName<C>;

/** The declared name a type name resolves to, as `Catalogue.resolve` does it: `'well'` → `'Well'`, `'Folder'` → `'Petron'`. */
export type CanonicalName<N extends string, C extends CatalogueShape = BuiltinCatalogue> = N extends keyof C
  ? N
  : Lowercase<N> extends keyof LowerNames<C>
    ? LowerNames<C>[Lowercase<N>]
    : Lowercase<N> extends keyof TypeAliases
      ? LowerNames<C>[TypeAliases[Lowercase<N>] & keyof LowerNames<C>]
      : never;

/** Field name → wire kind of a type's own fields O over the base fields (own fields win, as at run time). */
type WithBase<O> = {
  readonly [K in keyof typeof BASE_FIELDS | keyof O]: K extends keyof O ? O[K] : K extends keyof typeof BASE_FIELDS ? (typeof BASE_FIELDS)[K] : never;
};

/** Field name → wire kind of type T: the base fields, then the type's own (which win). */
export type FieldKinds<T extends TypeName<C>, C extends CatalogueShape = BuiltinCatalogue> = WithBase<C[CanonicalName<T, C> & keyof C]>;

export interface FieldInfo {
  readonly name: string;
  readonly kind: string;
  readonly category: Category;
}

export interface TypeInfo {
  readonly name: string;
  /** Base fields first, then the type's own, in the spec's order. */
  readonly fields: ReadonlyMap<string, FieldInfo>;
  readonly geoPointFields: readonly string[];
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Levenshtein distance, for "did you mean" hints. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** Up to three names close to `name`, closest first. */
export function closest(name: string, names: Iterable<string>): string[] {
  const lower = name.toLowerCase();
  return [...names]
    .map((n) => ({ n, d: distance(lower, n.toLowerCase()) }))
    .filter(({ n, d }) => d <= Math.max(2, Math.floor(n.length / 3)) || n.toLowerCase().includes(lower) || lower.includes(n.toLowerCase()))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map(({ n }) => n);
}

export function didYouMean(name: string, names: Iterable<string>): string {
  const near = closest(name, names);
  return near.length ? ` (did you mean ${near.map((n) => `"${n}"`).join(' or ')}?)` : '';
}

/** Type aliases the service accepts besides the wire names. */
const ALIASES: ReadonlyMap<string, string> = new Map([['folder', 'Petron']]);

const shared = new WeakMap<CatalogueShape, Map<string, Catalogue>>();

/** The Catalogue of a types value and version, built once per process (it is immutable). */
export function catalogueOf(types: CatalogueShape = TYPES, version = CATALOGUE_VERSION): Catalogue {
  if (types === null || typeof types !== 'object') throw new TypeError('catalogue must be an object of types');
  let byVersion = shared.get(types);
  if (!byVersion) shared.set(types, (byVersion = new Map()));
  let catalogue = byVersion.get(version);
  if (!catalogue) byVersion.set(version, (catalogue = new Catalogue(types, version)));
  return catalogue;
}

export class Catalogue {
  readonly version: string;
  private readonly byLower = new Map<string, TypeInfo>();
  readonly names: readonly string[];

  constructor(types: CatalogueShape = TYPES, version = CATALOGUE_VERSION) {
    if (types === null || typeof types !== 'object') throw new TypeError('catalogue must be an object of types');
    this.version = version;
    const names: string[] = [];
    for (const [name, own] of Object.entries(types)) {
      if (!IDENT.test(name)) throw new RangeError(`catalogue type name "${name}" must be an identifier`);
      if (own === null || typeof own !== 'object') throw new TypeError(`catalogue type "${name}" must be an object of fields`);
      const fields = new Map<string, FieldInfo>();
      for (const [field, kind] of Object.entries({ ...BASE_FIELDS, ...own })) {
        if (!IDENT.test(field)) throw new RangeError(`catalogue field "${name}.${field}" must be an identifier`);
        if (typeof kind !== 'string') throw new TypeError(`catalogue field "${name}.${field}" must name a kind`);
        fields.set(field, { name: field, kind, category: categoryOf(kind) });
      }
      const geoPointFields = [...fields.values()].filter((f) => f.category === 'geopoint').map((f) => f.name);
      const info: TypeInfo = { name, fields, geoPointFields };
      if (this.byLower.has(name.toLowerCase())) throw new RangeError(`catalogue type "${name}" is declared twice (names are case-insensitive)`);
      this.byLower.set(name.toLowerCase(), info);
      names.push(name);
    }
    this.names = names;
  }

  /** The type a request names, case-insensitively; `Folder` is `Petron`. */
  resolve(name: string): TypeInfo | undefined {
    const lower = name.toLowerCase();
    const alias = ALIASES.get(lower);
    return this.byLower.get(lower) ?? (alias ? this.byLower.get(alias.toLowerCase()) : undefined);
  }

  /** `[{ name, type }]` for every top-level field: base fields first, then the type's own. */
  schema(info: TypeInfo): { name: string; type: string }[] {
    return [...info.fields.values()].map((f) => ({ name: f.name, type: f.kind }));
  }

  /** The type a request names, or the RequestError (INVALID_REQUEST, UNKNOWN_TYPE with the closest names) refusing it. */
  require(type: unknown): TypeInfo {
    if (typeof type !== 'string' || type === '') throw requestError('INVALID_REQUEST', `type: expected a type name, got ${describe(type)}`, { field: 'type' });
    if (type.length > LIMITS.nameLength) throw requestError('UNKNOWN_TYPE', `unknown type ${shown(type)}: type names have at most ${LIMITS.nameLength} characters`, { field: 'type' });
    const info = this.resolve(type);
    if (!info) throw requestError('UNKNOWN_TYPE', `unknown type ${shown(type)}${didYouMean(type, this.names)}`, { field: 'type' });
    return info;
  }
}

/** The answer of `types`: every type name, from the catalogue alone (the store and the pool both answer here). */
export function typesAnswer(catalogue: Catalogue): Envelope<string> {
  return envelope({ data: [...catalogue.names] });
}

/**
 * The answer of `schema`: a type's fields and kinds, from the catalogue alone, never a database (the store and the
 * pool both answer here).
 * @example schemaAnswer(catalogue, 'well').data[0] // { name: 'id', type: 'String' }
 */
export function schemaAnswer(catalogue: Catalogue, type: unknown): Envelope<{ name: string; type: string }> {
  try {
    return envelope({ data: catalogue.schema(catalogue.require(type)) });
  } catch (e) {
    if (e instanceof RequestError) return fail(e.errors);
    throw e;
  }
}
