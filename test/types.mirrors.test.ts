/**
 * The type-level mirrors of run-time tables agree with them: `KindCategory` (the type-level `categoryOf`) gives every
 * kind of the catalogue the category `categoryOf` gives it, and `ObjectCategory` is `OBJECT_CATEGORIES`. The query
 * types decide operands, operators and dotted paths by category, so a drift here would make them wrong.
 */
import { describe, expect, it } from 'vitest';
import { BASE_FIELDS, catalogue } from '../src/index.js';
import { categoryOf, ENUM_KINDS, OBJECT_CATEGORIES, QUANTITY_KINDS } from '../src/catalogue/kinds.js';
import { typecheck } from './types.compile.js';

const kinds = [
  ...new Set([
    ...Object.values(BASE_FIELDS),
    ...Object.values(catalogue).flatMap((fields) => Object.values(fields) as string[]),
    ...QUANTITY_KINDS,
    ...ENUM_KINDS,
    'String', 'Boolean', 'Int32', 'Int64', 'Double', 'Single', 'DateTime', 'Duration', 'Object', 'Dictionary',
    'IDictionary', 'ICollection', 'List', 'HashSet', 'GeoPoint', 'GeoMultiPolygon', 'SomeNestedType', 'LengthUnit',
  ]),
];

const union = (xs: Iterable<string>) => [...xs].map((x) => JSON.stringify(x)).join(' | ');

describe('type-level mirrors of the run-time tables', () => {
  it('KindCategory gives every kind the category categoryOf gives it; ObjectCategory is OBJECT_CATEGORIES', () => {
    const code = [
      "import type { KindCategory, ObjectCategory } from '../src/catalogue/kinds.js';",
      'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;',
      'const yes = <T extends true>() => undefined as unknown as T;',
      ...kinds.map((k) => `yes<Same<KindCategory<${JSON.stringify(k)}>, ${JSON.stringify(categoryOf(k))}>>(); // ${k}`),
      `yes<Same<ObjectCategory, ${union(OBJECT_CATEGORIES)}>>();`,
    ].join('\n');
    expect(typecheck(code)).toEqual([]);
  }, 60_000);

  it('is really typechecked: a wrong category is reported', () => {
    const code = [
      "import type { KindCategory } from '../src/catalogue/kinds.js';",
      "const wrong: KindCategory<'Int32'> = 'string';",
    ].join('\n');
    expect(typecheck(code).join('\n')).toMatch(/"string"' is not assignable to type '"int32"'/);
  }, 60_000);
});
