import { describe, expectTypeOf, it } from 'vitest';
import { DataStore, type Doc, type Envelope, type GeoPoint, type Query } from '../src/index.js';

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
  });

  it('has base fields on every type and no fields that are not in the catalogue', () => {
    expectTypeOf<Doc<'Comment'>>().toHaveProperty('id');
    expectTypeOf<Doc<'Comment'>>().toHaveProperty('schemaVersion');
    expectTypeOf<Doc<'Well'>>().not.toHaveProperty('notAField');
  });

  it('types query results and query objects from the document type', () => {
    const store = DataStore.open();
    expectTypeOf(store.query('Well', { pwi: 'W1' })).toEqualTypeOf<Promise<Envelope<Doc<'Well'>>>>();
    expectTypeOf<{ fracStages: { gt: 3 } }>().toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ fracStages: { Gte: 3; lt: 9 } }>().toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ spudDate: { gte: Date } }>().toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ fracStages: { gt: 'abc' } }>().not.toMatchTypeOf<Query<Doc<'Well'>>>();
    expectTypeOf<{ isVirtual: 1 }>().not.toMatchTypeOf<Query<Doc<'Well'>>>();
    store.close();
  });
});
