/**
 * The static types of the typed store. Each `@ts-expect-error` line is a real call on a `DataStore` that must not
 * compile (the check fails when it does compile); the `expectTypeOf` lines are calls that must compile, with the
 * types they must have. Nothing here runs: vitest typechecks this file.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  DataStore,
  type BuiltinCatalogue,
  type BuiltinDocuments,
  type DailyProduction,
  type Doc,
  type DocInput,
  type Envelope,
  type GeoPoint,
  type Petron,
  type DocumentCacheStats,
  type Query,
  type QueryOptions,
  type SqliteDataStore,
  type SqliteDynamicStore,
  type SqliteMembers,
  type TypeName,
  type UpdateBody,
  type Version,
  type Well,
} from '../src/index.js';
import type { DerivedDoc } from '../src/catalogue/documents.js';
import type { Db } from '../src/sqlite/index.js';
import type { openPostgres } from '../src/postgres/index.js';
import type { Well as TestingWell, Projected as TestingProjected } from '../src/testing.js';

declare const store: DataStore;
/** A store as `consolidata/postgres` opens one. */
declare const other: Awaited<ReturnType<typeof openPostgres>>;
declare const someDate: Date;

/** True when A and B are the same type (not merely assignable both ways). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Expect<T extends true> = T;

/**
 * The named interfaces are the types derived from the catalogue value: one per built-in type, each equal to the mapped
 * type of its fields (a catalogue type without an interface does not compile in src/catalogue/documents.ts).
 */
export type NamedDocuments = [
  Expect<Equal<BuiltinDocuments, { -readonly [T in keyof BuiltinCatalogue]: DerivedDoc<T> }>>,
  Expect<Equal<Well, DerivedDoc<'Well'>>>,
  Expect<Equal<DailyProduction, DerivedDoc<'DailyProduction'>>>,
  Expect<Equal<Doc<'Well'>, Well>>,
  Expect<Equal<Doc<'well'>, Well>>,
  Expect<Equal<Doc<'Folder'>, Petron>>,
  // consolidata/testing hands out the typed store, and the same names for its answers.
  Expect<Equal<TestingWell, Well>>,
  Expect<Equal<TestingProjected<Well, 'pwi'>, Pick<Well, 'id' | 'pwi'>>>,
];

describe('document types derived from the catalogue', () => {
  it('gives each field the TS type of its wire kind', () => {
    expectTypeOf<NonNullable<Doc<'Well'>['surfaceLoc']>>().toEqualTypeOf<GeoPoint>();
    expectTypeOf<NonNullable<Doc<'Well'>['fracStages']>>().toEqualTypeOf<number>();
    expectTypeOf<NonNullable<Doc<'Well'>['pwi']>>().toEqualTypeOf<string>();
    expectTypeOf<NonNullable<Doc<'Well'>['isVirtual']>>().toEqualTypeOf<boolean>();
    expectTypeOf<NonNullable<Doc<'Well'>['groups']>>().toEqualTypeOf<unknown[]>();
    expectTypeOf<NonNullable<Doc<'DailyProduction'>['oilRate']>>().toEqualTypeOf<number>();
    expectTypeOf<NonNullable<Doc<'DailyProduction'>['uptime']>>().toEqualTypeOf<number | string>();
    expectTypeOf<NonNullable<Doc<'Comment'>['createdAt']>>().toEqualTypeOf<string>();
    expectTypeOf<NonNullable<Doc<'Well'>['extra']>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<NonNullable<DocInput<'Well'>['spudDate']>>().toEqualTypeOf<string | Date>();
    expectTypeOf<NonNullable<Doc<'Well'>['prod']>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<NonNullable<Doc<'Annotation'>['annotationType']>>().toEqualTypeOf<string | number>();
  });

  it('answers documents whose id is a string; documents as written may leave it out', () => {
    expectTypeOf<Well['id']>().toEqualTypeOf<string>();
    expectTypeOf<Doc<'Comment'>['id']>().toEqualTypeOf<string>();
    expectTypeOf<DocInput<'Well'>['id']>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<{ pwi: 'W1' }>().toMatchTypeOf<DocInput<'Well'>>();
    expectTypeOf<{ pwi: 'W1' }>().not.toMatchTypeOf<Well>();
    expectTypeOf<{ id: 'w-1'; pwi: 'W1' }>().toMatchTypeOf<Well>();
  });

  it('has base fields on every type and no fields that are not in the catalogue', () => {
    expectTypeOf<Doc<'Comment'>>().toHaveProperty('id');
    expectTypeOf<Doc<'Comment'>>().toHaveProperty('schemaVersion');
    expectTypeOf<Doc<'Well'>>().not.toHaveProperty('notAField');
  });

  it('resolves type names as the run time does: the declared name, its lower case, and Folder for Petron', () => {
    expectTypeOf<'well'>().toMatchTypeOf<TypeName>();
    expectTypeOf<'Folder' | 'folder' | 'petron'>().toMatchTypeOf<TypeName>();
    expectTypeOf<'Wel'>().not.toMatchTypeOf<TypeName>();
    expectTypeOf<Doc<'well'>>().toEqualTypeOf<Doc<'Well'>>();
    expectTypeOf<Doc<'Folder'>>().toEqualTypeOf<Doc<'Petron'>>();
    expectTypeOf<Doc<'folder'>>().toEqualTypeOf<Doc<'Petron'>>();
  });

  it('types query objects (the document form is accepted too)', () => {
    expectTypeOf<{ fracStages: { gt: 3 } }>().toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ fracStages: { Gte: 3; lt: 9 } }>().toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ spudDate: { gte: Date } }>().toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ fracStages: { gt: 'abc' } }>().not.toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ isVirtual: 1 }>().not.toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ fracStages: { gt: 3 }; 'extra.source': 'etl' }>().toMatchTypeOf<Query<'Well'>>();
    expectTypeOf<{ spudDate: { gte: Date } }>().toMatchTypeOf<Query<'Well'>>();
    expectTypeOf<{ pwi: { gte: Date } }>().not.toMatchTypeOf<Query<'Well'>>();
    expectTypeOf<{ sortBy: 'spudDate'; sortOrder: -1 }>().toMatchTypeOf<QueryOptions<'Well'>>();
    expectTypeOf<{ statusCurrent: 'Producing'; 'prod.cum': 1 }>().toMatchTypeOf<UpdateBody<'Well'>>();
  });
});

describe('DataStore: calls that compile, with their types', () => {
  it('types results from the document type', async () => {
    expectTypeOf(store.query('Well', { pwi: 'W1' })).toEqualTypeOf<Promise<Envelope<Well>>>();
    expectTypeOf(store.query('Well', { pwi: 'W1' })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf((await store.query('Well', {})).data[0]!.fracStages).toEqualTypeOf<number | null | undefined>();
    expectTypeOf((await store.query('Well')).data[0]!.surfaceLoc).toEqualTypeOf<GeoPoint | null | undefined>();
    expectTypeOf(store.insert('Well', [{ pwi: 'W1' }])).toEqualTypeOf<Promise<Envelope<never>>>();
  });

  it('answers ids as strings, to pass on as they are', async () => {
    const w = (await store.query('Well', { pwi: 'W1' })).data[0]!;
    expectTypeOf(w.id).toEqualTypeOf<string>();
    expectTypeOf(store.history('Well', w.id)).toEqualTypeOf<Promise<Envelope<Version<Well>>>>();
    expectTypeOf(store.replace('Well', [{ ...w, statusCurrent: 'Shut-in' }])).toEqualTypeOf<Promise<Envelope<never>>>();
    for await (const d of store.iterate('DailyProduction', {})) expectTypeOf(d.id).toEqualTypeOf<string>();
    for await (const e of store.watch('Well')) expectTypeOf(e.doc.id).toEqualTypeOf<string>();
  });

  it('accepts the lower-case name and the Folder alias, typed as the declared type', async () => {
    expectTypeOf(store.query('well', { pwi: 'W1' })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(((await store.query('well', { pwi: 'W1' }))).data[0]!.fracStages).toEqualTypeOf<number | null | undefined>();
    expectTypeOf(store.query('Folder', { isPublic: true })).toEqualTypeOf<Promise<Envelope<Doc<'Petron'>>>>();
    expectTypeOf(store.query('folder', { name: 'f' })).toEqualTypeOf<Promise<Envelope<Doc<'Petron'>>>>();
    expectTypeOf(store.insert('folder', [{ name: 'f', isPublic: false }])).toEqualTypeOf<Promise<Envelope<never>>>();
    expectTypeOf(store.update('well', { pwi: 'W1' }, { fracStages: 3 })).toEqualTypeOf<Promise<Envelope<never>>>();
    expectTypeOf(store.delete('dailyproduction', { pwi: 'W1' })).toEqualTypeOf<Promise<Envelope<never>>>();
    expectTypeOf(store.schema('well')).toEqualTypeOf<Promise<Envelope<{ name: string; type: string }>>>();
  });

  it('takes typed operands, v1 capitalised operator names, and dotted paths into object-like fields', () => {
    expectTypeOf(store.query('Well', { fracStages: { Gte: 3, lt: 9 } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { fracStages: [1, 2, null], isVirtual: false, pwi: null })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { spudDate: { gte: '1/1/2020', lt: someDate } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { basinName: { regex: '^Perm' }, spudDate: { regex: /^2021/ } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { surfaceLoc: { bounds: [-102, 31, -101, 32] } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { bottomHoleLoc: { Polygon: [[[0, 0], [1, 0], [1, 1], [0, 0]]] } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { surfaceLoc: { near: { point: [-97.5, 35.5], maxDistance: 3218.688 } } }, { sortBy: 'surfaceLoc', limit: 10, distance: 'metres' })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('DailyProduction', {}, { sortBy: ['pwi', 'prodDate'], sortOrder: [1, -1] })).toEqualTypeOf<Promise<Envelope<Doc<'DailyProduction'>>>>();
    expectTypeOf(store.query('Annotation', { annotationType: { in: ['Note', 2] } })).toEqualTypeOf<Promise<Envelope<Doc<'Annotation'>>>>();
    expectTypeOf(store.query('Well', { 'extra.source': 'x' })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { 'prod.cum': { gt: 1 } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { 'groups.0': 'a', 'extra.tags': { regex: '^a', eq: null } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', { 'surfaceLoc.coordinates.0': { lt: 0 } })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('JobResult', { result: { eq: { ok: true } }, 'result.ok': true })).toEqualTypeOf<Promise<Envelope<Doc<'JobResult'>>>>();
    expectTypeOf(store.delete('Well', { 'extra.source': 'x' })).toEqualTypeOf<Promise<Envelope<never>>>();
  });

  it('takes options with sort paths of the type', () => {
    expectTypeOf(store.query('Well', {}, { sortBy: 'spudDate', sortOrder: -1, limit: 50, skip: 10 })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', null, { sortBy: 'extra.source' })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf(store.query('Well', {}, null)).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
  });

  it('narrows the answer to the fields asked for: id always, then those (as the run time answers)', async () => {
    expectTypeOf(store.query('Well', {}, { fields: ['pwi', 'name'] })).toEqualTypeOf<Promise<Envelope<Pick<Well, 'id' | 'pwi' | 'name'>>>>();
    expectTypeOf(store.query('well', { pwi: 'W1' }, { fields: ['id'], limit: 5 })).toEqualTypeOf<Promise<Envelope<Pick<Well, 'id'>>>>();
    expectTypeOf((await store.query('Well', {}, { fields: ['spudDate'] })).data[0]!.spudDate).toEqualTypeOf<string | null | undefined>();
    expectTypeOf((await store.query('Well', {}, { fields: ['spudDate'] })).data[0]!.id).toEqualTypeOf<string>();
    expectTypeOf(store.iterate('DailyProduction', {}, { fields: ['oilRate'] })).toEqualTypeOf<AsyncGenerator<Pick<DailyProduction, 'id' | 'oilRate'>, void, undefined>>();
    // Without fields, with null, or with options typed as every field: whole documents.
    expectTypeOf(store.query('Well', {}, { fields: null })).toEqualTypeOf<Promise<Envelope<Well>>>();
    expectTypeOf(store.query('Well', {}, { limit: 1 })).toEqualTypeOf<Promise<Envelope<Well>>>();
    const options: QueryOptions<'Well'> = { fields: ['pwi'] };
    expectTypeOf(store.query('Well', {}, options)).toEqualTypeOf<Promise<Envelope<Well>>>();
    expectTypeOf(store.iterate('Well', {})).toEqualTypeOf<AsyncGenerator<Well, void, undefined>>();
    // @ts-expect-error a field the projection leaves out is not on the answer
    (await store.query('Well', {}, { fields: ['pwi'] })).data[0]!.name;
    // @ts-expect-error a misspelled field in fields
    store.query('Well', {}, { fields: ['pwii'] });
    // @ts-expect-error a field of another type in fields
    store.iterate('Well', {}, { fields: ['oilRate'] });
  });

  it('writes typed documents and update bodies, dotted paths into Object, Dictionary and nested fields', () => {
    expectTypeOf(store.insert('Well', [{ pwi: 'W1', spudDate: someDate, surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] } }], { atomic: true })).toEqualTypeOf<Promise<Envelope<never>>>();
    expectTypeOf(store.replace('Well', [{ id: 'w-1', pwi: 'W1', basinName: null }])).toEqualTypeOf<Promise<Envelope<never>>>();
    expectTypeOf(store.update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing', spudDate: someDate })).toEqualTypeOf<Promise<Envelope<never>>>();
    expectTypeOf(store.update('Well', null, { 'extra.source': 'x', 'prod.cum': { a: 1 } })).toEqualTypeOf<Promise<Envelope<never>>>();
  });

  it('types a custom catalogue, whatever its uniqueKeys and indexes', async () => {
    const custom = DataStore.open(':memory:', {
      types: { Thing: { size: 'Int32', loc: 'GeoPoint', meta: 'Object' } } as const,
      uniqueKeys: { Thing: [['size']] },
      indexes: { Thing: [{ fields: ['size'] }] },
    });
    expectTypeOf(((await custom.query('Thing', { size: { gt: 1 }, loc: { bounds: [0, 0, 1, 1] } }))).data[0]!.size).toEqualTypeOf<number | null | undefined>();
    expectTypeOf(((await custom.query('thing', { 'meta.x': 1 }, { sortBy: 'size' }))).data[0]!.loc).toEqualTypeOf<GeoPoint | null | undefined>();
    expectTypeOf(((await custom.query('Thing', {}))).data[0]!.id).toEqualTypeOf<string>();
    expectTypeOf(((await custom.query('Thing', {}, { fields: ['size'] }))).data[0]!).toEqualTypeOf<{ id: string; size?: number | null }>();
    expectTypeOf(custom.insert('Thing', [{ size: 3, id: 't' }])).toEqualTypeOf<Promise<Envelope<never>>>();
    // @ts-expect-error a field of another catalogue
    custom.query('Thing', { pwi: 'W1' });
    // @ts-expect-error a type of another catalogue
    custom.query('Well', {});
    // @ts-expect-error no Petron here, so no Folder either
    custom.query('Folder', {});
    // @ts-expect-error a string for an Int32
    custom.insert('Thing', [{ size: 'big' }]);
    // @ts-expect-error uniqueKeys name the catalogue's types
    DataStore.open(':memory:', { types: { Thing: { size: 'Int32' } } as const, uniqueKeys: { Other: [['size']] } });
  });

  it('keeps a union of type names reasonable: the fields they share', async () => {
    const byPwi = (type: 'Well' | 'DailyProduction', pwi: string) => store.query(type, { pwi, wellId: { ne: null } }, { sortBy: 'pwi' });
    expectTypeOf((await byPwi('Well', 'W1')).data[0]!.pwi).toEqualTypeOf<string | null | undefined>();
    expectTypeOf((await byPwi('Well', 'W1')).data[0]!).toEqualTypeOf<Well | DailyProduction>();
    // @ts-expect-error fracStages is a Well field only
    store.query('Well' as 'Well' | 'DailyProduction', { fracStages: 1 });
  });
});

describe('DataStore: mistakes that do not compile', () => {
  it('refuses unknown types and fields', () => {
    // @ts-expect-error misspelled field
    store.query('Well', { basinNmae: 'x' });
    // @ts-expect-error misspelled field in a delete
    store.delete('Well', { basinNmae: 'x' });
    // @ts-expect-error misspelled field in an update query
    store.update('Well', { basinNmae: 'x' }, { statusCurrent: 'Producing' });
    // @ts-expect-error misspelled field in an update body
    store.update('Well', { pwi: 'W1' }, { statusCurent: 'Producing' });
    // @ts-expect-error unknown type name
    store.query('Wel', {});
    // @ts-expect-error a type name in another case than declared or lower case
    store.query('WELL', {});
    // @ts-expect-error unknown type name
    store.insert('Wel', [{}]);
    // @ts-expect-error unknown type name
    store.schema('Wel');
    // @ts-expect-error a dotted path under a misspelled field
    store.query('Well', { 'basinNmae.x': 'x' });
    // @ts-expect-error a dotted path under a String field
    store.query('Well', { 'pwi.x': 'x' });
    // @ts-expect-error a dotted path under an enumeration field
    store.query('Annotation', { 'annotationType.x': 1 });
    // @ts-expect-error a dotted path under a DateTime field, in a delete
    store.delete('Well', { 'spudDate.x': 1 });
  });

  it('refuses operands of the wrong kind', () => {
    // @ts-expect-error a string for an Int32
    store.query('Well', { fracStages: 'x' });
    // @ts-expect-error a string operand for an Int32
    store.query('Well', { fracStages: { gt: 'abc' } });
    // @ts-expect-error a number for a Boolean
    store.query('Well', { isVirtual: 1 });
    // @ts-expect-error a string in an Int32's in-list
    store.query('Well', { fracStages: { in: [1, '2'] } });
    // @ts-expect-error a Date for a String field (only DateTime fields take dates)
    store.query('Well', { pwi: { gte: someDate } });
    // @ts-expect-error a boolean for an enumeration
    store.query('Annotation', { annotationType: true });
    // @ts-expect-error a null comparison operand (null never compares)
    store.query('Well', { fracStages: { gt: null } });
    // @ts-expect-error a plain object on an Object field is read as operators: compare with { eq: {...} }
    store.query('JobResult', { result: { ok: true } });
  });

  it('refuses operators that do not exist or do not apply', () => {
    // @ts-expect-error Mongo-style operator
    store.query('Well', { fracStages: { $gt: 3 } });
    // @ts-expect-error Mongo-style operator under a dotted path
    store.query('Well', { 'extra.n': { $gt: 3 } });
    // @ts-expect-error bounds on a String field
    store.query('Well', { pwi: { bounds: [0, 0, 1, 1] } });
    // @ts-expect-error polygon on a GeoMultiPolygon field (only GeoPoint fields take geo filters)
    store.query('Well', { aoi: { polygon: [[[0, 0], [1, 0], [1, 1], [0, 0]]] } });
    // @ts-expect-error bounds under a dotted path
    store.query('Well', { 'extra.loc': { bounds: [0, 0, 1, 1] } });
    // @ts-expect-error near on a String field
    store.query('Well', { pwi: { near: { point: [0, 0], maxDistance: 1 } } });
    // @ts-expect-error near without maxDistance
    store.query('Well', { surfaceLoc: { near: { point: [0, 0] } } });
    // @ts-expect-error a sortBy list naming a field the type does not have
    store.query('DailyProduction', {}, { sortBy: ['pwi', 'nope'] });
    // @ts-expect-error an order of 0 in a sortOrder list
    store.query('DailyProduction', {}, { sortBy: ['pwi', 'prodDate'], sortOrder: [1, 0] });
    // @ts-expect-error bounds with three numbers
    store.query('Well', { surfaceLoc: { bounds: [0, 0, 1] } });
    // @ts-expect-error regex on an Int32
    store.query('Well', { fracStages: { regex: '^1' } });
    // @ts-expect-error regex on a Boolean
    store.query('Well', { isVirtual: { regex: 'true' } });
    // @ts-expect-error regex on a GeoPoint
    store.query('Well', { surfaceLoc: { regex: 'x' } });
    // @ts-expect-error a regex pattern that is not a string or RegExp
    store.query('Well', { pwi: { regex: 1 } });
  });

  it('refuses bad options', () => {
    // @ts-expect-error sortOrder is 1, -1 or 0
    store.query('Well', {}, { sortOrder: 'desc' });
    // @ts-expect-error limit is a number
    store.query('Well', {}, { limit: '10' });
    // @ts-expect-error sortBy names a field
    store.query('Well', {}, { sortBy: 'nope' });
    // @ts-expect-error sortBy under a scalar field
    store.query('Well', {}, { sortBy: 'pwi.x' });
    // @ts-expect-error an unknown option
    store.query('Well', {}, { sort: 'pwi' });
  });

  it('refuses bad documents and update bodies', () => {
    // @ts-expect-error a number for a String
    store.insert('Well', [{ pwi: 5 }]);
    // @ts-expect-error an unknown field
    store.insert('Well', [{ pwi: 'A', wat: 1 }]);
    // @ts-expect-error a GeoPoint that is not a Point
    store.insert('Well', [{ surfaceLoc: { type: 'Polygon', coordinates: [0, 0] } }]);
    // @ts-expect-error an unknown field on replace
    store.replace('Well', [{ id: 'w-1', wat: 1 }]);
    // @ts-expect-error a string for an Int32 in an update body
    store.update('Well', { pwi: 'W1' }, { fracStages: 'x' });
    // @ts-expect-error Mongo-style update
    store.update('Well', { pwi: 'W1' }, { $set: { pwi: 'x' } });
    // @ts-expect-error a dotted path under a String field in an update body
    store.update('Well', { pwi: 'W1' }, { 'pwi.x': 'x' });
    // @ts-expect-error a dotted path into a GeoPoint in an update body (set the whole point)
    store.update('Well', { pwi: 'W1' }, { 'surfaceLoc.coordinates': [0, 0] });
    // @ts-expect-error a dotted path into a collection in an update body (set the whole array)
    store.update('Well', { pwi: 'W1' }, { 'groups.0': 'a' });
  });

  it('leaves untyped input to store.dynamic', async () => {
    const type: string = 'Well';
    const query: unknown = JSON.parse('{}');
    expectTypeOf(store.dynamic.query(type, query, { sortBy: 'anything' })).toEqualTypeOf<Promise<Envelope<Record<string, unknown>>>>();
    // @ts-expect-error a string is not a TypeName
    store.query(type, {});
    // @ts-expect-error unknown is not a query
    store.query('Well', query);
  });
});

describe('aggregates', () => {
  it('names each group key and metric in the row type, with its value type', async () => {
    const r = await store.aggregate('DailyProduction', { prodDate: { gte: '2024-01-01' } }, {
      groupBy: ['pwi', { field: 'prodDate', interval: 'month' }],
      metrics: { oil: { sum: 'oilVol' }, days: { count: '*' }, last: { max: 'prodDate' }, wells: { countDistinct: 'pwi' } },
      sortBy: ['oil', 'pwi'],
      sortOrder: [-1, 1],
    });
    expectTypeOf(r.data[0]!).toEqualTypeOf<{ pwi: string | null; prodDate: string | null; oil: number | null; days: number; last: string | null; wells: number }>();
    expectTypeOf((await store.count('Well', { basinName: 'Permian' })).total).toEqualTypeOf<number>();
    expectTypeOf((await store.distinct('Well', 'basinName')).data).toEqualTypeOf<string[]>();
    // A HashSet's elements are untyped JSON.
    expectTypeOf((await store.distinct('Well', 'groups')).data).toEqualTypeOf<unknown[]>();
  });

  it('refuses metrics over fields of the wrong kind, buckets of non-dates and unknown sort names', () => {
    // @ts-expect-error sum of a String field
    store.aggregate('DailyProduction', {}, { metrics: { x: { sum: 'pwi' } } });
    // @ts-expect-error avg of a Dictionary field
    store.aggregate('DailyProduction', {}, { metrics: { x: { avg: 'extra' } } });
    // @ts-expect-error min of a Boolean field
    store.aggregate('Well', {}, { metrics: { x: { min: 'isVirtual' } } });
    // @ts-expect-error an unknown function
    store.aggregate('Well', {}, { metrics: { x: { median: 'fracStages' } } });
    // @ts-expect-error a month bucket of a String field
    store.aggregate('Well', {}, { groupBy: [{ field: 'pwi', interval: 'month' }] });
    // @ts-expect-error an hourly bucket
    store.aggregate('Well', {}, { groupBy: [{ field: 'spudDate', interval: 'hour' }] });
    // @ts-expect-error sorting by a name that is neither a group key nor a metric
    store.aggregate('Well', {}, { groupBy: ['basinName'], sortBy: 'pwi' });
    // @ts-expect-error distinct of an unknown field
    store.distinct('Well', 'basin');
  });
});

describe('the SQLite-only members', () => {
  it('are public on a store opened over SQLite, its views and its dynamic store, with their types', () => {
    const sqlite = DataStore.open();
    expectTypeOf(sqlite).toEqualTypeOf<SqliteDataStore>();
    expectTypeOf(sqlite).toExtend<SqliteMembers>();
    expectTypeOf(sqlite.withUser('alice')).toExtend<SqliteMembers>();
    expectTypeOf(DataStore.fromSnapshot(sqlite.snapshot())).toEqualTypeOf<SqliteDataStore>();
    expectTypeOf(sqlite.database).toEqualTypeOf<Db>();
    expectTypeOf(sqlite.snapshot()).toEqualTypeOf<Buffer>();
    expectTypeOf(sqlite.restore).toEqualTypeOf<(snapshot: Uint8Array) => void>();
    expectTypeOf(sqlite.documentCacheStats()).toEqualTypeOf<DocumentCacheStats | null>();
    expectTypeOf(sqlite.dynamic).toEqualTypeOf<SqliteDynamicStore>();
    expectTypeOf(sqlite.dynamic.database).toEqualTypeOf<Db>();
    expectTypeOf(sqlite.dynamic.snapshot()).toEqualTypeOf<Buffer>();
  });

  it('are not in the type of a store over another backend', () => {
    expectTypeOf<keyof typeof other & keyof SqliteMembers>().toEqualTypeOf<never>();
    expectTypeOf<keyof typeof other.dynamic & keyof SqliteMembers>().toEqualTypeOf<never>();
    // @ts-expect-error database is a member of SQLite stores only
    void other.database;
    // @ts-expect-error snapshot is a member of SQLite stores only
    other.snapshot();
    // @ts-expect-error restore is a member of SQLite stores only
    other.restore(new Uint8Array());
    // @ts-expect-error documentCacheStats is a member of SQLite stores only
    other.documentCacheStats();
    // @ts-expect-error database is a member of SQLite stores only
    void other.dynamic.database;
  });
});
