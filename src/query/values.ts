/**
 * The values a condition tests along a path (README "Values along a path") and `eq`'s equality, over a parsed JSON
 * document: for the conditions an engine decides outside SQL (PostgreSQL on Citus: an object compared with its key
 * order along a path of several steps). The SQL compiler (src/sql/compile.ts) states the same rules for every engine.
 */
import type { Step } from './ast.js';

/** An index past the end of an array (an empty one included): no value at all, unlike a missing one (MongoDB). */
const NONE = Symbol('no value');

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One step from a value: the member (objects only), then its indexes (arrays only); missing is `undefined`. */
function member(node: unknown, step: Step): unknown {
  if (!isObject(node) || !Object.hasOwn(node, step.name)) return undefined;
  let v: unknown = node[step.name];
  for (const i of step.indexes) {
    if (v === NONE) return NONE;
    v = Array.isArray(v) ? (i < v.length ? v[i] : NONE) : undefined;
  }
  return v;
}

/**
 * The values a condition on `steps` tests in `doc`: arrays on the way fan out to their elements (one level), the leaf
 * comes with its elements when it is an array, a missing leaf (or one under a non-object) is `undefined`, and an index
 * past an array's end yields nothing.
 * @example valuesAlong({ a: [{ b: 1 }, 7] }, [{ name: 'a', indexes: [] }, { name: 'b', indexes: [] }]) // [1, undefined]
 */
export function valuesAlong(doc: unknown, steps: readonly Step[]): unknown[] {
  const out: unknown[] = [];
  const walk = (node: unknown, i: number): void => {
    const v = member(node, steps[i]!);
    if (v === NONE) return;
    if (i === steps.length - 1) {
      out.push(v);
      if (Array.isArray(v)) out.push(...(v as unknown[]));
    } else if (Array.isArray(v)) for (const e of v as unknown[]) walk(e, i + 1);
    else walk(v, i + 1);
  };
  walk(doc, 0);
  return out;
}

/**
 * `eq` over the values along a path: some value equals one of `operands` — `null` matches null and missing; any
 * other operand matches a value of the same JSON text. That is the README's equality for values parsed from the
 * store's own JSON.stringify output: numbers by value (1.0 is 1), no type equals another, containers whole with their
 * key order.
 * @example equalsSome({ m: { k: 1, j: 0 } }, [{ name: 'm', indexes: [] }], [{ k: 1, j: 0 }]) // true; [{ j: 0, k: 1 }]: false
 */
export function equalsSome(doc: unknown, steps: readonly Step[], operands: readonly unknown[]): boolean {
  const nulls = operands.some((o) => o === null);
  const texts = new Set(operands.filter((o) => o !== null).map((o) => JSON.stringify(o)));
  return valuesAlong(doc, steps).some((v) => (v === null || v === undefined ? nulls : texts.has(JSON.stringify(v))));
}
