/**
 * src/query/values.ts, the README's values along a path and `eq` in JS (what PostgreSQL on Citus decides outside
 * SQL): fixtures of each rule, then a property against the reference evaluator over documents as the store keeps them
 * (parsed from JSON.stringify's text).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { equalsSome, valuesAlong } from '../src/query/values.js';
import { equals, parsePath, testedValues } from './helpers/reference.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);

describe('valuesAlong', () => {
  it.each([
    ['an object path', { a: { b: 1 } }, 'a.b', [1]],
    ['arrays on the way fan out one level; a non-object element is a missing leaf', { a: [{ b: 1 }, 7, [{ b: 2 }]] }, 'a.b', [1, undefined, undefined]],
    ['the leaf comes with its elements', { a: { b: [1, [2]] } }, 'a.b', [[1, [2]], 1, [2]]],
    ['an index reads an element, no fan-out first', { a: [{ b: 1 }, { b: 2 }] }, 'a.1.b', [2]],
    ['past the end: no value at all', { a: [] }, 'a.0.b', []],
    ['an index on a non-array is missing', { a: { b: 1 } }, 'a.0', [undefined]],
    ['a missing member is missing', {}, 'a.b', [undefined]],
  ])('%s', (_name, doc, path, expected) => {
    expect(valuesAlong(doc, parsePath(path))).toEqual(expected);
  });
});

describe('equalsSome', () => {
  it('compares objects with their key order, numbers by value, null with missing', () => {
    const doc = { a: [{ m: { k: 1, j: 0 } }, { m: 1 }, {}] };
    const steps = parsePath('a.m');
    expect(equalsSome(doc, steps, [{ k: 1, j: 0 }])).toBe(true);
    expect(equalsSome(doc, steps, [{ j: 0, k: 1 }])).toBe(false);
    expect(equalsSome(doc, steps, [1.0])).toBe(true);
    expect(equalsSome(doc, steps, [true, '1'])).toBe(false);
    expect(equalsSome(doc, steps, [null])).toBe(true);
    expect(equalsSome({ a: [] }, steps, [null])).toBe(false);
  });

  const key = fc.constantFrom('a', 'b', 'c');
  const scalar = fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constantFrom(0.5, -0, 1e21, '', 'a', '1', true, false, null));
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 3 })),
  }));
  const path = fc.constantFrom('a', 'a.b', 'a.0', 'a.b.c', 'a.0.b', 'a.b.1', 'b.a.c.0', 'a.a.a');

  /** Every value inside `v`, itself included: operands drawn from them match often. */
  const inside = (v: unknown): unknown[] => [v, ...(v !== null && typeof v === 'object' ? Object.values(v).flatMap(inside) : [])];
  const cases = fc.dictionary(key, value, { maxKeys: 3 }).chain((doc) =>
    fc.tuple(fc.constant(doc), path, fc.array(fc.oneof(fc.constantFrom(null, ...inside(doc)), value), { minLength: 1, maxLength: 3 })),
  );

  it('answers as the reference evaluator on stored documents, whatever the operands', () => {
    fc.assert(
      fc.property(cases, ([doc, text, operands]) => {
        const stored = JSON.parse(JSON.stringify(doc)) as unknown;
        const steps = parsePath(text);
        const expected = testedValues(stored, steps).some((v) => operands.some((o) => equals(v, JSON.parse(JSON.stringify(o)))));
        expect(equalsSome(stored, steps, operands)).toBe(expected);
      }),
      { numRuns: RUNS },
    );
  });
});
