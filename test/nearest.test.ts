/**
 * k-nearest pages read a bounded neighbourhood (src/core/nearest.ts): with a cap as large as the Earth, the search
 * reads only the radius its k nearest need — never the whole cap — and still answers the first k of the full sort by
 * distance, with the total of every match, on the first page and on a cursor's next one.
 */
import { describe, expect, it } from 'vitest';
import type { QueryPlan } from '../src/query/ast.js';
import type { Backend } from '../src/backend.js';
import { nearestBy } from '../src/core/nearest.js';
import { haversine } from '../src/geo/near.js';
import { DataStore } from '../src/index.js';
import { decodeCursor, encodeCursor } from '../src/query/cursor.js';
import { parsePlan } from '../src/query/parse.js';
import { resolveSettings } from '../src/settings.js';
import { openSqlite } from '../src/sqlite/index.js';

/** A seeded generator (mulberry32): the same points every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('k-nearest reads a bounded neighbourhood', () => {
  it('the 10 nearest of 2,000 wells within 25,000 km: each read is cut to a radius far inside the cap, the answer the full sort’s first 10', async () => {
    const next = random(7);
    const wells = Array.from({ length: 2000 }, (_, i) => ({ pwi: `W${i}`, surfaceLoc: { type: 'Point', coordinates: [-98 + next(), 35 + next()] } }));
    const store = DataStore.open();
    expect((await store.dynamic.insert('Well', wells)).success).toBe(true);
    const stored = (await store.dynamic.query('Well')).data as { id: string; surfaceLoc: { coordinates: number[] } }[];
    const settings = resolveSettings({}, 'test');
    const engine = openSqlite(store.snapshot(), settings);
    const info = settings.catalogue.require('Well');
    const read: QueryPlan[] = [];
    const spy = new Proxy(engine, {
      get(target, p) {
        if (p === 'query') return (i: typeof info, plan: QueryPlan) => (read.push(plan), target.query(i, plan));
        const v = Reflect.get(target, p, target) as unknown;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as Backend;
    const point = [-97.5, 35.5];
    const query = { surfaceLoc: { near: { point, maxDistance: 25_000_000 } } };
    const full = stored.map((w) => ({ id: w.id, d: haversine(point, w.surfaceLoc.coordinates) })).sort((a, b) => a.d - b.d);
    const ctx = { type: info, strict: settings.strict, cursorKey: engine.cursorKey };

    const plan = parsePlan(ctx, query, { sortBy: 'surfaceLoc', limit: 10 });
    const first = await nearestBy((p) => spy.query(info, p), plan);
    expect(first.data.map((d) => d.id)).toEqual(full.slice(0, 10).map((x) => x.id));
    expect(first.total).toBe(2000);
    expect(read.length).toBeGreaterThan(0);
    // Every read was cut, to well under the 60 km across the field: never the whole cap.
    for (const p of read) expect(p.reach).toBeLessThan(20_000);

    read.length = 0;
    const cursor = encodeCursor(plan.shape, first.next!, engine.cursorKey);
    const later = parsePlan(ctx, query, { sortBy: 'surfaceLoc', limit: 10, cursor });
    expect(decodeCursor(cursor, plan.shape, engine.cursorKey).total).toBe(2000);
    const second = await nearestBy((p) => spy.query(info, p), later);
    expect(second.data.map((d) => d.id)).toEqual(full.slice(10, 20).map((x) => x.id));
    expect(second.total).toBe(2000);
    for (const p of read) expect(p.reach).toBeLessThan(20_000);
    engine.close();
    await store.close();
  });

  it('a skip within the neighbourhood, and a page reaching past every match, answer as the full sort', async () => {
    const next = random(11);
    const store = DataStore.open();
    const wells = Array.from({ length: 300 }, (_, i) => ({ pwi: `S${i}`, surfaceLoc: { type: 'Point', coordinates: [179.5 + next(), -0.5 + next()].map((v, j) => (j === 0 && v > 180 ? v - 360 : v)) } }));
    expect((await store.dynamic.insert('Well', wells)).success).toBe(true);
    const stored = (await store.dynamic.query('Well')).data as { id: string; surfaceLoc: { coordinates: number[] } }[];
    const point = [180, 0];
    const query = { surfaceLoc: { near: { point, maxDistance: 100_000 } } };
    const full = stored.map((w) => ({ id: w.id, d: haversine(point, w.surfaceLoc.coordinates) })).filter((x) => x.d <= 100_000).sort((a, b) => a.d - b.d);
    for (const [skip, limit] of [[5, 7], [0, 1], [full.length - 3, 10], [full.length + 5, 2]] as const) {
      const r = await store.dynamic.query('Well', query, { sortBy: 'surfaceLoc', skip, limit });
      expect([skip, r.data.map((d) => d.id)]).toEqual([skip, full.slice(skip, skip + limit).map((x) => x.id)]);
      expect(r.total).toBe(full.length);
      expect(r.hasCursor).toBe(skip + limit < full.length);
    }
    await store.close();
  });
});
