/**
 * `near` against an independent engine: PostGIS's ST_Distance on geography with use_spheroid = false (its sphere)
 * computes the same distances as options.distance answers, and decides the same matches.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { EARTH_RADIUS } from '../../src/geo/near.js';
import { pgCluster, postgresBackend } from '../helpers/backends.js';

const backend = postgresBackend();
/** PostGIS's sphere: WGS84's mean radius (2a + b) / 3, where ours is 6,371,008.8 m; distances scale by the ratio. */
const POSTGIS_RADIUS = (2 * 6_378_137 + 6_356_752.314245179) / 3;
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

const lonLat = fc.oneof(
  fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true })),
  fc.tuple(fc.double({ min: 179, max: 180, noNaN: true }), fc.double({ min: -5, max: 5, noNaN: true })),
  fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: 85, max: 90, noNaN: true })),
  fc.tuple(fc.double({ min: -98, max: -97, noNaN: true }), fc.double({ min: 35, max: 36, noNaN: true })),
);

describe('near agrees with PostGIS', () => {
  beforeAll(async () => {
    await pgCluster().pool.query('CREATE EXTENSION IF NOT EXISTS postgis');
  });

  it(`distances to 1e-9 relative, and the same matches (${RUNS} runs)`, async () => {
    const { pool } = pgCluster();
    await fc.assert(
      fc.asyncProperty(fc.array(lonLat, { minLength: 1, maxLength: 40 }), lonLat, fc.constantFrom(3218.688, 100_000, 2_000_000, 20_000_000), async (points, center, maxDistance) => {
        const store = await backend.open();
        try {
          const inserted = await store.dynamic.insert('Well', points.map((c) => ({ surfaceLoc: { type: 'Point', coordinates: c } })));
          expect(inserted.success, inserted.message).toBe(true);
          const ids = inserted.insertedIds;
          const { rows } = await pool.query<{ d: number }>(
            `SELECT ST_Distance(ST_MakePoint(x, y)::geography, ST_MakePoint($1, $2)::geography, false) AS d FROM unnest($3::float8[], $4::float8[]) WITH ORDINALITY AS u(x, y, i) ORDER BY i`,
            [center[0], center[1], points.map((p) => p[0]), points.map((p) => p[1])],
          );
          const theirs = new Map(ids.map((id, i) => [id, (rows[i]!.d * EARTH_RADIUS) / POSTGIS_RADIUS]));
          const page = await store.dynamic.query('Well', { surfaceLoc: { near: { point: center, maxDistance } } }, { distance: 'metres' });
          expect(page.success, page.message).toBe(true);
          for (const d of page.data) {
            const t = theirs.get(d.id as string)!;
            expect(Math.abs((d.metres as number) - t)).toBeLessThanOrEqual(1e-9 * t + 1e-6);
          }
          // Every point PostGIS puts clearly inside is matched, and none clearly outside.
          const matched = new Set(page.data.map((d) => d.id));
          for (const [id, t] of theirs) {
            if (t < maxDistance * (1 - 1e-9)) expect(matched.has(id)).toBe(true);
            if (t > maxDistance * (1 + 1e-9)) expect(matched.has(id)).toBe(false);
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS },
    );
  });
});
