/**
 * Aggregates, counts and distinct values over HTTP (both route families) and through the pool's readers: each path
 * answers exactly what the façade answers, refusals included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { createFetchHandler } from '../../src/http/index.js';
import { createPool } from '../../src/pool/pool.js';
import { sampleData } from '../../src/sample.js';
import { tempDir } from '../helpers/store.js';
import { removeBundles, workerScript } from '../pool/helpers.js';

const MONTHLY = { groupBy: ['pwi', { field: 'prodDate', interval: 'month' }], metrics: { oil: { sum: 'oilVol' }, days: { count: '*' } }, sortBy: 'oil', sortOrder: -1, limit: 5 };
const BAD = { groupBy: ['pwi'], metrics: { x: { avg: 'wellName' } } };

const dir = tempDir();
let file: string;
let store: DynamicStore;
beforeAll(async () => {
  file = dir.file('aggregate.db');
  store = DynamicStore.open(file);
  const { Well, DailyProduction } = sampleData(3, { wells: 6, days: 70 });
  await store.insertMany([{ type: 'Well', docs: Well }, { type: 'DailyProduction', docs: DailyProduction }]);
});
afterAll(async () => {
  await store.close();
  dir.cleanup();
  removeBundles();
});

/** The façade's own answers, what every other path must give. */
const expected = () => ({
  aggregate: store.aggregate('DailyProduction', { prodDate: { gte: '2024-02-01' } }, MONTHLY),
  count: store.count('Well', { basinName: 'Permian' }),
  distinct: store.distinct('Well', 'basinName'),
  refused: store.aggregate('DailyProduction', {}, BAD),
});

describe('HTTP', () => {
  const handle = () => createFetchHandler(store);
  const post = async (path: string, body: unknown) => {
    const res = await handle()(new Request(`http://x/api${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('POST /data/aggregate, /data/count and /data/distinct answer as the store does', async () => {
    const want = expected();
    const agg = await post('/data/aggregate', { type: 'DailyProduction', query: { prodDate: { gte: '2024-02-01' } }, options: MONTHLY });
    expect(agg).toEqual({ status: 200, body: await want.aggregate });
    expect((agg.body.data as unknown[]).length).toBe(5);
    expect(await post('/data/count', { type: 'Well', query: { basinName: 'Permian' } })).toEqual({ status: 200, body: await want.count });
    expect(await post('/data/distinct', { type: 'Well', field: 'basinName' })).toEqual({ status: 200, body: await want.distinct });
    const refused = await post('/data/aggregate', { type: 'DailyProduction', options: BAD });
    expect(refused).toEqual({ status: 400, body: await want.refused });
    expect((refused.body.errors as { code: string }[])[0]!.code).toBe('INVALID_REQUEST');
  });

  it('the /v1/data requests aggregate, count and distinct (its field in options.field)', async () => {
    const want = expected();
    const v1 = (body: Record<string, unknown>) => post('/v1/data', body);
    expect(await v1({ type: 'DailyProduction', request: 'aggregate', query: { prodDate: { gte: '2024-02-01' } }, options: MONTHLY })).toEqual({ status: 200, body: await want.aggregate });
    expect(await v1({ type: 'Well', request: 'COUNT', query: { basinName: 'Permian' } })).toEqual({ status: 200, body: await want.count });
    expect(await v1({ type: 'Well', request: 'distinct', query: null, options: { field: 'basinName' } })).toEqual({ status: 200, body: await want.distinct });
    const refused = await v1({ type: 'Well', request: 'distinct' });
    expect([refused.status, (refused.body.errors as { code: string; field: string }[]).map((e) => [e.code, e.field])]).toEqual([400, [['INVALID_REQUEST', 'field']]]);
  });

  it('an unknown body key of the new routes is refused, naming it', async () => {
    const r = await post('/data/distinct', { type: 'Well', fields: 'basinName' });
    expect([r.status, (r.body.errors as { code: string; field: string }[]).map((e) => [e.code, e.field])]).toEqual([400, [['INVALID_REQUEST', 'fields']]]);
  });
});

describe('pool', () => {
  let script: string;
  beforeAll(async () => {
    script = await workerScript();
  });

  it('readers answer aggregate, count and distinct through the façade, as the store does', async () => {
    const pool = await createPool(file, { readers: 1, workerScript: script });
    try {
      const want = expected();
      expect(await pool.aggregate('DailyProduction', { prodDate: { gte: '2024-02-01' } }, MONTHLY)).toEqual(await want.aggregate);
      expect(await pool.count('Well', { basinName: 'Permian' })).toEqual(await want.count);
      expect(await pool.distinct('Well', 'basinName')).toEqual(await want.distinct);
      expect(await pool.aggregate('DailyProduction', {}, BAD)).toEqual(await want.refused);
      // Served over HTTP, the pool answers the routes too.
      const res = await createFetchHandler(pool)(
        new Request('http://x/api/data/count', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well' }) }),
      );
      expect(((await res.json()) as { total: number }).total).toBe(6);
    } finally {
      await pool.close();
    }
  });
});
