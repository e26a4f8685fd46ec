/**
 * Distance on GeoPoint fields (`near`, sort by distance, options.distance) and several sort keys, on both backends:
 * each answer equals a brute-force evaluation in JS (haversine over every document, a full sort), paging by cursor
 * equals the unpaged answer, and bad input is refused with its code.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capBoxes, EARTH_RADIUS, haversine } from '../src/geo/near.js';
import { createFetchHandler } from '../src/http/index.js';
import { DataStore, type Envelope } from '../src/index.js';
import { backends } from './helpers/backends.js';
import { cursorPages } from './helpers/store.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

/** Points clustered where the rules are hard: the antimeridian, the poles, and an oil field. */
const lonLat = fc.oneof(
  fc.tuple(fc.double({ min: 179, max: 180, noNaN: true }), fc.double({ min: -2, max: 2, noNaN: true })),
  fc.tuple(fc.double({ min: -180, max: -179, noNaN: true }), fc.double({ min: -2, max: 2, noNaN: true })),
  fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: 88, max: 90, noNaN: true })),
  fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: -88, noNaN: true })),
  fc.tuple(fc.double({ min: -98, max: -97, noNaN: true }), fc.double({ min: 35, max: 36, noNaN: true })),
);
const well = fc.record({ surfaceLoc: fc.option(lonLat.map((c) => ({ type: 'Point', coordinates: c })), { nil: undefined, freq: 8 }), fracStages: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: ['fracStages'] });
const near = fc.record({ point: lonLat, maxDistance: fc.constantFrom(1000, 50_000, 200_000, 400_000, 25_000_000), minDistance: fc.constantFrom(undefined, 0, 500) });

type Well = { id: string; fracStages: number; surfaceLoc?: { coordinates: number[] } };

/** The brute-force answer: every document with a point within [min, max] metres, nearest first, ties by insertion order. */
function bruteForce(docs: Well[], n: { point: number[]; maxDistance: number; minDistance?: number }): { id: string; d: number }[] {
  return docs
    .flatMap((w) => (w.surfaceLoc ? [{ id: w.id, d: haversine(n.point, w.surfaceLoc.coordinates) }] : []))
    .filter((x) => x.d <= n.maxDistance && x.d >= (n.minDistance ?? 0))
    .sort((a, b) => a.d - b.d);
}

describe('capBoxes: the index prefilter of near', () => {
  it('holds every point within the distance: across the antimeridian, near the poles, at any radius', () => {
    fc.assert(
      fc.property(lonLat, lonLat, fc.double({ min: 0, max: 1, noNaN: true }), (center, p, f) => {
        const d = haversine(center, p);
        // A radius at or beyond the point's distance: the point must be in some box.
        const boxes = capBoxes(center, d * (1 + f));
        expect(boxes.some(([x1, y1, x2, y2]) => p[0] >= x1 && p[0] <= x2 && p[1] >= y1 && p[1] <= y2)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('splits at the antimeridian and spans every longitude around a pole', () => {
    expect(capBoxes([179.99, 0], 5000)).toHaveLength(2);
    expect(capBoxes([-179.99, 0], 5000)).toHaveLength(2);
    const polar = capBoxes([10, 89.99], 5000);
    expect(polar).toEqual([[-180, expect.any(Number), 180, 90]]);
    const [x1, y1, x2, y2] = capBoxes([-97.5, 35.5], 3218.688)[0]!;
    // Two miles is about 0.029° of latitude; a degree of longitude is shorter by cos(35.5°).
    expect(y2! - y1!).toBeCloseTo((2 * 3218.688 * 180) / (Math.PI * EARTH_RADIUS), 6);
    expect(x2! - x1!).toBeGreaterThan(y2! - y1!);
  });
});

describe('several sort keys on SQLite: index-served', () => {
  it('DailyProduction by pwi then prodDate reads the (pwi, prodDate) unique index in order, with no sorter', async () => {
    const store = await DataStore.open(':memory:');
    try {
      const plan = (await store.dynamic.explain('DailyProduction', { pwi: { gte: 'W' } }, { sortBy: ['pwi', 'prodDate'], limit: 10 })).plan!;
      expect(plan.join('\n')).toMatch(/USING INDEX ux\._daily_production\.pwi\.prod_date/);
      expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
      // Descending on both keys: the same index read backward; only level keys are sorted by insertion order (the last term).
      const back = (await store.dynamic.explain('DailyProduction', {}, { sortBy: ['pwi', 'prodDate'], sortOrder: -1 })).plan!.join('\n');
      expect(back).toMatch(/USING INDEX ux\._daily_production\.pwi\.prod_date/);
      expect(back).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    } finally {
      await store.close();
    }
  });
});

describe.each(backends())('near and several sort keys: $name', (backend) => {
  async function seeded(docs: unknown[]): Promise<{ store: DataStore; wells: Well[] }> {
    const store = await backend.open();
    const r = await store.dynamic.insert('Well', docs);
    expect(r.success, r.message).toBe(true);
    const wells = (await store.dynamic.query('Well', {}, {})).data as Well[];
    return { store, wells };
  }

  it(`near matches exactly the brute-force haversine scan; sorted by distance it is the full sort; cursors page through it (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(well, { maxLength: 40 }), near, fc.integer({ min: 1, max: 6 }), async (docs, n, k) => {
        const { store, wells } = await seeded(docs);
        try {
          const expected = bruteForce(wells, n);
          const stages = (id: string) => wells.find((w) => w.id === id)!.fracStages;
          const query = { surfaceLoc: { near: n } };
          const matched = await store.dynamic.query('Well', query);
          expect(matched.success, matched.message).toBe(true);
          expect(new Set(matched.data.map((d) => d.id))).toEqual(new Set(expected.map((x) => x.id)));
          const sorted = await store.dynamic.query('Well', query, { sortBy: 'surfaceLoc', distance: 'dist' });
          expect(sorted.data.map((d) => d.id)).toEqual(expected.map((x) => x.id));
          // The engines' sin and cos may differ from JavaScript's in the last bit.
          sorted.data.forEach((d, i) => expect(Math.abs((d.dist as number) - expected[i]!.d)).toBeLessThanOrEqual(1e-12 * Math.max(1, expected[i]!.d)));
          // k-nearest: the first k of the full sort by distance.
          const nearest = await store.dynamic.query('Well', query, { sortBy: 'surfaceLoc', limit: k });
          expect(nearest.data.map((d) => d.id)).toEqual(expected.slice(0, k).map((x) => x.id));
          expect(nearest.total).toBe(expected.length);
          expect((await cursorPages(store.dynamic, query, { sortBy: 'surfaceLoc', limit: k })).ids).toEqual(expected.map((x) => x.id));
          // A distance key among several: cursors keep it exactly (a page boundary between level distances included).
          const two = { sortBy: ['fracStages', 'surfaceLoc'], sortOrder: [-1, 1] };
          const whole = await store.dynamic.query('Well', query, two);
          const byStages = [...expected].sort((a, b) => stages(b.id) - stages(a.id));
          expect(whole.data.map((d) => d.id)).toEqual(byStages.map((x) => x.id));
          expect((await cursorPages(store.dynamic, query, { ...two, limit: k })).ids).toEqual(byStages.map((x) => x.id));
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS },
    );
  });

  it(`several sort keys order as a full sort in JS, with a sortOrder per key, and cursors page through them (${RUNS} runs)`, async () => {
    const row = fc.record({ fracStages: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }), basinName: fc.constantFrom('Permian', 'Bakken', 'B', 'é'), spudDate: fc.constantFrom('2020-01-01', '2019-12-31') }, { requiredKeys: [] });
    const keys = fc.shuffledSubarray(['fracStages', 'basinName', 'spudDate'], { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 30 }), keys, fc.array(fc.constantFrom(1, -1), { minLength: 3, maxLength: 3 }), fc.integer({ min: 1, max: 5 }), async (docs, sortBy, dirs, limit) => {
        const { store, wells } = await seeded(docs);
        try {
          const sortOrder = dirs.slice(0, sortBy.length) as (1 | -1)[];
          const key = (w: Record<string, unknown>, f: string) => (f === 'spudDate' && w[f] != null ? String(w[f]) : (w[f] as string | number | null | undefined) ?? null);
          // Null and missing first ascending, last descending; strings in UTF-8 byte order; ties by insertion order.
          const cmp = (a: Record<string, unknown>, b: Record<string, unknown>) => {
            for (let i = 0; i < sortBy.length; i++) {
              const x = key(a, sortBy[i]!);
              const y = key(b, sortBy[i]!);
              if (x === y) continue;
              const c = x === null ? -1 : y === null ? 1 : typeof x === 'string' ? Buffer.compare(Buffer.from(x), Buffer.from(y as string)) : x < (y as number) ? -1 : 1;
              return c * sortOrder[i]!;
            }
            return 0;
          };
          const expected = [...(wells as unknown as Record<string, unknown>[])].sort(cmp).map((w) => w.id);
          const all = await store.dynamic.query('Well', {}, { sortBy, sortOrder });
          expect(all.success, all.message).toBe(true);
          expect(all.data.map((d) => d.id)).toEqual(expected);
          expect((await cursorPages(store.dynamic, {}, { sortBy, sortOrder, limit })).ids).toEqual(expected);
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('near queries of one shape answer each its own point (one statement, its values bound anew)', async () => {
    const { store, wells } = await seeded(Array.from({ length: 60 }, (_, i) => ({ fracStages: i % 4, surfaceLoc: { type: 'Point', coordinates: [-97 - (i % 10) / 100, 35 + Math.floor(i / 10) / 100] } })));
    try {
      for (let i = 0; i < 20; i++) {
        const n = { point: [-97 - i / 200, 35 + i / 300], maxDistance: 2000 + i * 150, ...(i % 2 ? { minDistance: 300 } : {}) };
        const r = await store.dynamic.query('Well', { surfaceLoc: { near: n }, fracStages: { gte: i % 3 } });
        const expected = bruteForce(wells.filter((w) => w.fracStages >= i % 3), n).map((x) => x.id).sort();
        expect(r.data.map((d) => d.id as string).sort(), `query ${i}`).toEqual(expected);
      }
    } finally {
      await store.close();
    }
  });

  it('a distance sort with another key after it: level distances order by the next key', async () => {
    const at = { type: 'Point', coordinates: [-97.5, 35.5] };
    const { store } = await seeded([
      { pwi: 'A', fracStages: 2, surfaceLoc: at },
      { pwi: 'B', fracStages: 9, surfaceLoc: at },
      { pwi: 'C', fracStages: 5, surfaceLoc: { type: 'Point', coordinates: [-97.6, 35.5] } },
    ]);
    try {
      const query = { surfaceLoc: { near: { point: [-97.5, 35.5], maxDistance: 20_000 } } };
      const r = await store.dynamic.query('Well', query, { sortBy: ['surfaceLoc', 'fracStages'], sortOrder: [1, -1], limit: 1 });
      expect(r.data.map((d) => d.pwi)).toEqual(['B']);
      expect((await cursorPages(store.dynamic, query, { sortBy: ['surfaceLoc', 'fracStages'], sortOrder: [1, -1], limit: 1 })).ids).toHaveLength(3);
      // iterate reads by the same cursor, its distance answered on each document.
      const seen: unknown[] = [];
      for await (const d of store.dynamic.iterate('Well', query, { sortBy: ['surfaceLoc', 'fracStages'], sortOrder: [1, -1], batchSize: 1, distance: 'metres' })) {
        seen.push([(d as { pwi: string }).pwi, (d as { metres: number }).metres === 0]);
      }
      expect(seen).toEqual([['B', true], ['A', true], ['C', false]]);
    } finally {
      await store.close();
    }
  });

  it('HTTP passes near, several sort keys and distance through, on both route families', async () => {
    const { store } = await seeded([
      { pwi: 'FAR', fracStages: 1, surfaceLoc: { type: 'Point', coordinates: [-97.6, 35.5] } },
      { pwi: 'NEAR', fracStages: 1, surfaceLoc: { type: 'Point', coordinates: [-97.501, 35.5] } },
      { pwi: 'OUT', fracStages: 1, surfaceLoc: { type: 'Point', coordinates: [-90, 35.5] } },
    ]);
    try {
      const handle = createFetchHandler(store);
      const post = async (path: string, body: unknown) => {
        const res = await handle(new Request(`http://localhost${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
        return { status: res.status, body: (await res.json()) as Envelope<Record<string, unknown>> };
      };
      const query = { surfaceLoc: { near: { point: [-97.5, 35.5], maxDistance: 20_000 } } };
      const options = { sortBy: ['surfaceLoc', 'pwi'], sortOrder: [1, 1], distance: 'metres' };
      const a = await post('/api/data/query', { type: 'Well', query, options });
      expect(a.status).toBe(200);
      expect(a.body.data.map((d) => d.pwi)).toEqual(['NEAR', 'FAR']);
      expect(a.body.data[0]!.metres).toBeCloseTo(haversine([-97.5, 35.5], [-97.501, 35.5]), 6);
      const b = await post('/api/v1/data', { type: 'Well', request: 'get', query: { surfaceLoc: { Near: query.surfaceLoc.near } }, options: { sortBy: 'surfaceLoc', limit: 1 } });
      expect(b.status).toBe(200);
      expect(b.body.data.map((d) => d.pwi)).toEqual(['NEAR']);
      const bad = await post('/api/data/query', { type: 'Well', query: { surfaceLoc: { near: { point: [0, 0] } } } });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0]!.code).toBe('INVALID_QUERY');
    } finally {
      await store.close();
    }
  });

  it('refuses bad near operands and sort options with their codes, naming the path', async () => {
    const { store } = await seeded([]);
    try {
      const bad = async (query: unknown, options: unknown, code: string, field: string) => {
        const r = await store.dynamic.query('Well', query, options);
        expect(r.success).toBe(false);
        expect(r.errors[0]).toMatchObject({ code, field });
      };
      await bad({ surfaceLoc: { near: { point: [0, 0] } } }, {}, 'INVALID_QUERY', 'surfaceLoc.near.maxDistance');
      await bad({ surfaceLoc: { near: { point: [0, 91], maxDistance: 1 } } }, {}, 'INVALID_QUERY', 'surfaceLoc.near.point');
      await bad({ surfaceLoc: { near: { point: [0, 0], maxDistance: -1 } } }, {}, 'INVALID_QUERY', 'surfaceLoc.near.maxDistance');
      await bad({ surfaceLoc: { near: { point: [0, 0], maxDistance: 5, minDistance: 6 } } }, {}, 'INVALID_QUERY', 'surfaceLoc.near.minDistance');
      await bad({ surfaceLoc: { near: { point: [0, 0], maxDistance: 5, radius: 6 } } }, {}, 'INVALID_QUERY', 'surfaceLoc.near.radius');
      await bad({}, { sortBy: ['pwi', 'spudDate'], sortOrder: [1] }, 'INVALID_REQUEST', 'options.sortOrder');
      await bad({}, { sortBy: ['pwi', 'pwi'] }, 'INVALID_REQUEST', 'options.sortBy[1]');
      await bad({}, { sortBy: ['pwi', 7] }, 'INVALID_REQUEST', 'options.sortBy[1]');
      await bad({}, { sortBy: [] }, 'INVALID_REQUEST', 'options.sortBy');
      await bad({}, { sortBy: ['pwi'], sortOrder: [0] }, 'INVALID_REQUEST', 'options.sortOrder[0]');
      await bad({}, { distance: 'dist' }, 'INVALID_REQUEST', 'options.distance');
      await bad({ surfaceLoc: { near: { point: [0, 0], maxDistance: 5 } } }, { distance: 'pwi' }, 'INVALID_REQUEST', 'options.distance');
    } finally {
      await store.close();
    }
  });
});
