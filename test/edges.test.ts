/** Queries that cannot be bent: undefined values, size bounds, engine messages, Mongo habits, update depth. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';
import { LIMITS } from '../src/limits.js';

let store: DataStore;
beforeEach(async () => {
  store = DataStore.open();
  const r = await store.insert('Well', [
    { pwi: 'A', basinName: 'Permian', fracStages: 10 },
    { pwi: 'B', basinName: 'Bakken', fracStages: 20 },
  ]);
  expect(r.success).toBe(true);
});
afterEach(() => store.close());

const pwis = async () => (await store.query('Well', {}, { sortBy: 'pwi' })).data.map((d) => [d.pwi, d.statusCurrent ?? null]);

describe('undefined in a query', () => {
  it('update with { pwi: undefined } is INVALID_QUERY naming the path and null, and updates nothing', async () => {
    const r = await store.dynamic.update('Well', { pwi: undefined }, { statusCurrent: 'Shut-In' });
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: 'pwi' });
    expect(r.errors[0]!.message).toMatch(/query\.pwi: undefined is not a value .*use null/);
    expect(await pwis()).toEqual([['A', null], ['B', null]]);
  });

  it('delete with an undefined operand is refused and deletes nothing', async () => {
    const r = await store.dynamic.delete('Well', { fracStages: { gte: undefined } });
    expect(r.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: 'fracStages.gte' });
    expect((await store.query('Well', {})).total).toBe(2);
  });

  it('null still matches missing', async () => {
    expect((await store.query('Well', { statusCurrent: null })).total).toBe(2);
  });
});

describe('size bounds, checked before any expensive step', () => {
  it('1,100 conditions answer INVALID_QUERY naming the bound, not an engine error', async () => {
    const query = Object.fromEntries(Array.from({ length: 1100 }, (_, i) => [`extra.k${i}`, i]));
    const r = await store.dynamic.query('Well', query);
    expect(r.errors).toEqual([{ code: 'INVALID_QUERY', message: `query: at most ${LIMITS.conditions} conditions, got 1100` }]);
  });

  it('a 15 MB unknown field name in a query is refused by its length, with no hint computed', async () => {
    const name = 'x'.repeat(15 * 1024 * 1024);
    const r = await store.dynamic.query('Well', { [name]: 1 });
    expect(r.errors[0]!.code).toBe('INVALID_QUERY');
    expect(r.errors[0]!.message).toContain(`at most ${LIMITS.nameLength} characters`);
    expect(JSON.stringify(r).length).toBeLessThan(2000);
  });

  it('a 15 MB unknown field name in a document is a VALIDATION error naming the bound; the answer stays small', async () => {
    const r = await store.dynamic.insert('Well', [{ pwi: 'C', ['y'.repeat(15 * 1024 * 1024)]: 1 }]);
    expect(r.errors[0]).toMatchObject({ code: 'VALIDATION', index: 0 });
    expect(r.errors[0]!.message).toContain(`longer than ${LIMITS.nameLength} characters`);
    expect(JSON.stringify(r).length).toBeLessThan(2000);
    expect((await store.query('Well', {})).total).toBe(2);
  });

  it('a 15 MB type name is UNKNOWN_TYPE naming the bound; a 15 MB option name is refused alike', async () => {
    const t = await store.dynamic.query('W'.repeat(15 * 1024 * 1024), {});
    expect(t.errors[0]!.code).toBe('UNKNOWN_TYPE');
    expect(t.errors[0]!.message).toContain(`at most ${LIMITS.nameLength} characters`);
    const o = await store.dynamic.query('Well', {}, { ['o'.repeat(15 * 1024 * 1024)]: 1 });
    expect(o.errors[0]!.code).toBe('INVALID_REQUEST');
    expect(JSON.stringify(o).length).toBeLessThan(2000);
  });

  it('a path of more than 32 segments is refused naming the bound', async () => {
    const r = await store.dynamic.query('Well', { [`extra${'.a'.repeat(40)}`]: 1 });
    expect(r.errors[0]!.code).toBe('INVALID_QUERY');
    expect(r.errors[0]!.message).toContain(`at most ${LIMITS.pathSegments} segments, got 41`);
  });

  it('an in list longer than the bound is refused naming it', async () => {
    const r = await store.dynamic.query('Well', { pwi: { in: Array.from({ length: LIMITS.inValues + 1 }, (_, i) => `p${i}`) } });
    expect(r.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: 'pwi.in' });
    expect(r.errors[0]!.message).toContain(`at most ${LIMITS.inValues} values`);
  });
});

describe('no answer carries an engine message', () => {
  it('an unexpected failure answers "internal error" with a request id; the cause goes to onError', async () => {
    const seen: [unknown, string][] = [];
    const s = DataStore.open(':memory:', { onError: (e, id) => seen.push([e, id]) });
    s.database.close();
    const r = await s.query('Well', {});
    expect(r.success).toBe(false);
    expect(r.errors).toHaveLength(1);
    const [error] = r.errors;
    expect(error!.code).toBe('INTERNAL');
    expect(error!.requestId).toMatch(/^[0-9a-f]{12}$/);
    expect(error!.message).toBe(`internal error (request ${error!.requestId})`);
    expect(JSON.stringify(r)).not.toMatch(/database|connection|sqlite|at .*:\d+/i);
    expect(seen).toHaveLength(1);
    expect(seen[0]![1]).toBe(error!.requestId);
    expect((seen[0]![0] as Error).message).toMatch(/not open/);
  });

  it('a throwing onError does not break the answer', async () => {
    const s = DataStore.open(':memory:', {
      onError: () => {
        throw new Error('hook failed');
      },
    });
    s.database.close();
    const r = await s.query('Well', {});
    expect(r.errors[0]!.code).toBe('INTERNAL');
  });
});

describe('hints for MongoDB habits', () => {
  it('$set in an update body says the body holds the fields directly', async () => {
    const r = await store.dynamic.update('Well', { pwi: 'A' }, { $set: { statusCurrent: 'Producing' } });
    expect(r.errors[0]).toMatchObject({ code: 'VALIDATION', field: '$set' });
    expect(r.errors[0]!.message).toContain('the body holds the fields to set directly');
    expect(await pwis()).toEqual([['A', null], ['B', null]]);
  });

  it('$inc is not supported, and says so', async () => {
    const r = await store.dynamic.update('Well', { pwi: 'A' }, { $inc: { fracStages: 1 } });
    expect(r.errors[0]!.code).toBe('VALIDATION');
    expect(r.errors[0]!.message).toMatch(/\$inc is not supported, and the body holds the fields to set directly/);
  });

  it('$gt names gt; $or says to run two queries; $nor likewise; $eq at the top level points under a field', async () => {
    const gt = await store.dynamic.query('Well', { fracStages: { $gt: 5 } });
    expect(gt.errors[0]!.message).toContain('use gt (operators have no $)');
    const or = await store.dynamic.query('Well', { $or: [{ pwi: 'A' }, { pwi: 'B' }] });
    expect(or.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: '$or' });
    expect(or.errors[0]!.message).toContain('OR is not supported; run two queries');
    const nor = await store.dynamic.query('Well', { $nor: [{ pwi: 'A' }] });
    expect(nor.errors[0]!.message).toContain('OR is not supported');
    const eq = await store.dynamic.query('Well', { $eq: 'A' });
    expect(eq.errors[0]!.message).toContain('operators go under a field');
  });
});

describe('an update never makes a document the store would refuse on insert', () => {
  const nest = (depth: number): unknown => (depth === 0 ? 1 : { n: nest(depth - 1) });

  it('a dotted path counts its own levels toward the nesting bound', async () => {
    // extra.a.b sets a value two levels below extra: it may nest two levels less than extra itself.
    const deepest = nest(LIMITS.depth - 2);
    const ok = await store.dynamic.update('Well', { pwi: 'A' }, { 'extra.a.b': deepest });
    expect(ok.success, ok.message).toBe(true);
    const tooDeep = await store.dynamic.update('Well', { pwi: 'A' }, { 'extra.a.b': nest(LIMITS.depth - 1) });
    expect(tooDeep.errors[0]).toMatchObject({ code: 'VALIDATION', field: 'extra.a.b' });
    expect(tooDeep.errors[0]!.message).toContain(`nested deeper than ${LIMITS.depth} levels`);
    // The same shapes on insert: the accepted one is accepted, the refused one refused.
    expect((await store.dynamic.insert('Well', [{ pwi: 'C', extra: { a: { b: deepest } } }])).success).toBe(true);
    const refused = await store.dynamic.insert('Well', [{ pwi: 'D', extra: { a: { b: nest(LIMITS.depth - 1) } } }]);
    expect(refused.errors[0]!.code).toBe('VALIDATION');
  });
});
