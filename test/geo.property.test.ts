/**
 * Geo filters, property-based: random Well documents × random boxes and polygons (with holes), combined with
 * other conditions, sorting and paging. The store's page and total must equal a brute-force check in plain JS
 * (bounds: min/max per axis, edges inclusive; polygon: @turf/boolean-point-in-polygon, boundary inclusive), on every
 * backend (SQLite, PostgreSQL). FUZZ_RUNS sets the number of runs (per backend).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DataStore } from '../src/index.js';
import { backends } from './helpers/backends.js';
import {
  expectedPage,
  fuzzRuns,
  GEO_FIELDS,
  inBox,
  inPolygon,
  nextDown,
  nextUp,
  notFloat32,
  point,
  storeQuery,
  type GeoCond,
  type GeoField,
  type ModelQuery,
  type Pos,
  type Rings,
  type WellDoc,
} from './helpers/geo.js';

const RUNS = fuzzRuns(300);

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

// ---- shapes --------------------------------------------------------------------------------

const small = fc.integer({ min: -12, max: 12 });
const coord = fc.oneof(
  { weight: 3, arbitrary: small },
  { weight: 2, arbitrary: fc.integer({ min: -24, max: 24 }).map((n) => n / 2) },
  { weight: 2, arbitrary: fc.double({ min: -12, max: 12, noNaN: true, noDefaultInfinity: true }) },
);

/** Boxes: random corners in either order, sometimes a degenerate (zero-width) or world-sized box. */
const box = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(coord, coord, coord, coord).map((t) => [...t]) },
  { weight: 1, arbitrary: fc.tuple(coord, coord, coord).map(([x, y1, y2]) => [x, y1, x, y2]) },
  { weight: 1, arbitrary: fc.constantFrom<number[]>([-180, -90, 180, 90], [180, 90, -180, -90], [-180, 0, 0, 90]) },
);

function closeRing(ring: Pos[], start: number, reverse: boolean): Pos[] {
  const open = ring.slice(start).concat(ring.slice(0, start));
  if (reverse) open.reverse();
  return [...open, open[0]!];
}

/** Axis-aligned rectangle on integer coordinates, optionally with a rectangular or triangular hole strictly inside. */
const rectPolygon: fc.Arbitrary<Rings> = fc
  .record({
    x: small,
    y: small,
    w: fc.integer({ min: 1, max: 10 }),
    h: fc.integer({ min: 1, max: 10 }),
    start: fc.nat(3),
    reverse: fc.boolean(),
    hole: fc.option(
      fc.record({
        kind: fc.constantFrom('rect' as const, 'tri' as const),
        a: fc.nat(3),
        b: fc.nat(3),
        c: fc.nat(3),
        d: fc.nat(3),
        reverse: fc.boolean(),
      }),
    ),
  })
  .map(({ x, y, w, h, start, reverse, hole }) => {
    const outer = closeRing(
      [
        [x, y],
        [x + w, y],
        [x + w, y + h],
        [x, y + h],
      ],
      start,
      reverse,
    );
    const rings: Rings = [outer];
    if (hole) {
      const [hx0, hy0, hx1, hy1] = [x + 1 + hole.a, y + 1 + hole.b, x + w - 1 - hole.c, y + h - 1 - hole.d];
      if (hx0 < hx1 && hy0 < hy1) {
        const inner: Pos[] =
          hole.kind === 'rect'
            ? [
                [hx0, hy0],
                [hx1, hy0],
                [hx1, hy1],
                [hx0, hy1],
              ]
            : [
                [hx0, hy0],
                [hx1, hy0],
                [hx0, hy1],
              ];
        rings.push(closeRing(inner, 0, hole.reverse));
      }
    }
    return rings;
  });

/** Distance from the origin-centred point c to the segment a–b. */
function distanceToSegment(c: Pos, a: Pos, b: Pos): number {
  const [dx, dy] = [b[0] - a[0], b[1] - a[1]];
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((c[0] - a[0]) * dx + (c[1] - a[1]) * dy) / len2));
  return Math.hypot(a[0] + t * dx - c[0], a[1] + t * dy - c[1]);
}

/**
 * Star-shaped polygon around a centre (vertices sorted by angle, so it is simple), with a triangular or
 * rectangular hole around the centre, scaled to stay strictly inside the nearest edge.
 */
const starPolygon: fc.Arbitrary<Rings> = fc
  .record({
    cx: small,
    cy: small,
    n: fc.integer({ min: 3, max: 8 }),
    radii: fc.array(fc.double({ min: 1, max: 8, noNaN: true }), { minLength: 8, maxLength: 8 }),
    jitter: fc.array(fc.double({ min: -0.3, max: 0.3, noNaN: true }), { minLength: 8, maxLength: 8 }),
    reverse: fc.boolean(),
    hole: fc.option(
      fc.record({
        kind: fc.constantFrom('rect' as const, 'tri' as const),
        scale: fc.double({ min: 0.2, max: 0.6, noNaN: true }),
        phase: fc.double({ min: 0, max: 6.28, noNaN: true }),
        reverse: fc.boolean(),
      }),
    ),
  })
  .map(({ cx, cy, n, radii, jitter, reverse, hole }) => {
    const c: Pos = [cx, cy];
    const verts: Pos[] = [];
    for (let i = 0; i < n; i++) {
      const theta = ((2 * Math.PI) / n) * (i + jitter[i]!);
      verts.push([cx + radii[i]! * Math.cos(theta), cy + radii[i]! * Math.sin(theta)]);
    }
    const rings: Rings = [closeRing(verts, 0, reverse)];
    if (hole) {
      let d = Infinity;
      for (let i = 0; i < n; i++) d = Math.min(d, distanceToSegment(c, verts[i]!, verts[(i + 1) % n]!));
      const s = d * hole.scale;
      const inner: Pos[] =
        hole.kind === 'tri'
          ? [0, 1, 2].map((k) => {
              const a = hole.phase + (k * 2 * Math.PI) / 3;
              return [cx + s * Math.cos(a), cy + s * Math.sin(a)] as Pos;
            })
          : [
              [cx - 0.7 * s, cy - 0.7 * s],
              [cx + 0.7 * s, cy - 0.7 * s],
              [cx + 0.7 * s, cy + 0.7 * s],
              [cx - 0.7 * s, cy + 0.7 * s],
            ];
      rings.push(closeRing(inner, 0, hole.reverse));
    }
    return rings;
  });

// ---- the scene: shapes, then points derived from them ------------------------------------

interface Scene {
  boxes: number[][];
  polygons: Rings[];
}

const scene: fc.Arbitrary<Scene> = fc.record({
  boxes: fc.array(box, { minLength: 2, maxLength: 2 }),
  polygons: fc.tuple(rectPolygon, starPolygon, fc.oneof(rectPolygon, starPolygon)).map((t) => [...t]),
});

/** Points that sit exactly on the interesting places of the scene: corners, edges, vertices, just outside, in holes. */
function pointPool(s: Scene): Pos[] {
  const pool: Pos[] = [
    [-180, -90],
    [180, 90],
    [0, 0],
  ];
  for (const [x1, y1, x2, y2] of s.boxes as [number, number, number, number][]) {
    const mx = (x1 + x2) / 2;
    const my = (y1 + y2) / 2;
    pool.push([x1, y1], [x1, y2], [x2, y1], [x2, y2]); // corners
    pool.push([x1, my], [x2, my], [mx, y1], [mx, y2], [mx, my]); // edges, centre
    // Just outside (or inside) each edge by one ulp.
    pool.push([nextUp(x1), my], [nextDown(x1), my], [nextUp(x2), my], [nextDown(x2), my]);
    pool.push([mx, nextUp(y1)], [mx, nextDown(y1)], [mx, nextUp(y2)], [mx, nextDown(y2)]);
  }
  for (const rings of s.polygons) {
    for (const ring of rings) {
      for (let i = 0; i + 1 < ring.length; i++) {
        const a = ring[i]!;
        const b = ring[i + 1]!;
        pool.push(a, [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2], [nextUp(a[0]), a[1]], [a[0], nextDown(a[1])]);
      }
    }
    // The hole's centre region (inside the hole) and the exterior's box centre.
    const hole = rings[1];
    if (hole) {
      const xs = hole.map((p) => p[0]);
      const ys = hole.map((p) => p[1]);
      const hx = xs.slice(0, -1).reduce((u, v) => u + v, 0) / (xs.length - 1);
      const hy = ys.slice(0, -1).reduce((u, v) => u + v, 0) / (ys.length - 1);
      pool.push([hx, hy]);
    }
  }
  return pool.filter(([x, y]) => x >= -180 && x <= 180 && y >= -90 && y <= 90);
}

type LocSpec = { kind: 'missing' } | { kind: 'null' } | { kind: 'pool'; i: number } | { kind: 'random'; p: Pos };

const locSpec: fc.Arbitrary<LocSpec> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'missing' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'null' as const }) },
  { weight: 6, arbitrary: fc.nat().map((i) => ({ kind: 'pool' as const, i })) },
  { weight: 2, arbitrary: fc.tuple(coord, coord).map((p) => ({ kind: 'random' as const, p: p as Pos })) },
);

const docSpec = fc.record({
  pwi: fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 6, arbitrary: fc.constantFrom('W', 'a', 'B', 'z', 'é') },
  ),
  basinName: fc.constantFrom(undefined, null, 'Permian', 'Bakken', 'Eagle Ford'),
  fracStages: fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer({ min: 0, max: 12 })),
  surfaceLoc: locSpec,
  midPointLoc: locSpec,
  bottomHoleLoc: locSpec,
});

function materialise(specs: ValueOf<typeof docSpec>[], pool: Pos[]): WellDoc[] {
  const loc = (s: LocSpec) => {
    switch (s.kind) {
      case 'missing':
        return undefined;
      case 'null':
        return null;
      case 'pool': {
        const p = pool[s.i % pool.length]!;
        return point(p[0], p[1]);
      }
      case 'random':
        return point(s.p[0], s.p[1]);
    }
  };
  return specs.map((s, i) => {
    const doc: WellDoc = { id: `doc-${String(i).padStart(3, '0')}` };
    // pwi is unique per document (a unique key): a label, then the position.
    if (s.pwi !== undefined) doc.pwi = s.pwi === null ? null : `${s.pwi}${i}`;
    if (s.basinName !== undefined) doc.basinName = s.basinName;
    if (s.fracStages !== undefined) doc.fracStages = s.fracStages;
    for (const f of GEO_FIELDS) {
      const v = loc(s[f]);
      if (v !== undefined) doc[f] = v;
    }
    return doc;
  });
}

// ---- queries -------------------------------------------------------------------------------

const geoCondSpec = fc.record({
  field: fc.constantFrom<GeoField>('surfaceLoc', 'surfaceLoc', 'surfaceLoc', 'midPointLoc', 'bottomHoleLoc'),
  shape: fc.constantFrom('bounds' as const, 'polygon' as const, 'both' as const),
  box: fc.nat(1),
  polygon: fc.nat(2),
});

const querySpec = fc.record({
  geo: fc.uniqueArray(geoCondSpec, { minLength: 1, maxLength: 2, selector: (g) => g.field }),
  basinName: fc.constantFrom(undefined, undefined, 'Permian', 'Bakken', null),
  fracStagesGt: fc.option(fc.integer({ min: -1, max: 10 }), { nil: undefined }),
  sort: fc.constantFrom(undefined, 'fracStages' as const, 'pwi' as const),
  sortOrder: fc.constantFrom(1 as const, -1 as const),
  limit: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })),
  skip: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })),
  geoJson: fc.boolean(),
});

function modelQuery(q: ValueOf<typeof querySpec>, s: Scene): ModelQuery {
  const geo: GeoCond[] = q.geo.map((g) => ({
    field: g.field,
    ...(g.shape !== 'polygon' ? { bounds: s.boxes[g.box]! } : {}),
    ...(g.shape !== 'bounds' ? { polygon: s.polygons[g.polygon]! } : {}),
  }));
  return {
    geo,
    ...(q.basinName !== undefined ? { basinName: q.basinName } : {}),
    ...(q.fracStagesGt !== undefined ? { fracStagesGt: q.fracStagesGt } : {}),
    ...(q.sort ? { sortBy: q.sort, sortOrder: q.sortOrder } : {}),
    limit: q.limit,
    skip: q.skip,
  };
}

async function checkAgainstModel(store: DataStore, docs: WellDoc[], mq: ModelQuery, geoJson: boolean): Promise<void> {
  const { query, options } = storeQuery(mq, geoJson);
  const r = await store.dynamic.query('Well', query, options);
  const want = expectedPage(docs, mq);
  const ctx = JSON.stringify({ query, options });
  expect(r.success, `${ctx}: ${r.message}`).toBe(true);
  expect(r.issues, ctx).toEqual([]);
  expect(
    r.data.map((d) => d.id),
    ctx,
  ).toEqual(want.ids);
  expect(r.total, ctx).toBe(want.total);
  expect(r.count, ctx).toBe(want.ids.length);
}

describe.each(backends())('$name', (backend) => {
describe('geo filters agree with a brute-force check', () => {
  it('bounds and polygons (with holes) × other conditions × sorting × paging: page ids and total', async () => {
    await fc.assert(
      fc.asyncProperty(scene, fc.array(docSpec, { minLength: 0, maxLength: 40 }), fc.array(querySpec, { minLength: 1, maxLength: 4 }), async (s, specs, queries) => {
        const docs = materialise(specs, pointPool(s));
        const store = await backend.open();
        try {
          const ins = await store.insert('Well', docs);
          expect(ins.success, ins.message).toBe(true);
          expect(ins.count).toBe(docs.length);
          for (const q of queries) await checkAgainstModel(store, docs, modelQuery(q, s), q.geoJson);
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('the generators do reach the edge cases the property is about', () => {
    // A fixed sample: points on box corners/edges, on polygon vertices/edges and inside holes are all produced.
    const sample = fc.sample(fc.tuple(scene, fc.array(docSpec, { minLength: 20, maxLength: 40 })), { numRuns: 200, seed: 42 });
    let onCorner = 0;
    let onVertex = 0;
    let inHole = 0;
    let outsideByUlp = 0;
    for (const [s, specs] of sample) {
      const docs = materialise(specs, pointPool(s));
      for (const d of docs) {
        const p = d.surfaceLoc?.coordinates as Pos | undefined;
        if (!p) continue;
        for (const [x1, y1, x2, y2] of s.boxes as [number, number, number, number][]) {
          if ((p[0] === x1 || p[0] === x2) && (p[1] === y1 || p[1] === y2)) onCorner++;
          if (!inBox(p, [x1, y1, x2, y2]) && (inBox([nextDown(p[0]), p[1]], [x1, y1, x2, y2]) || inBox([nextUp(p[0]), p[1]], [x1, y1, x2, y2]))) outsideByUlp++;
        }
        for (const rings of s.polygons) {
          if (rings[0]!.some((v) => v[0] === p[0] && v[1] === p[1])) onVertex++;
          if (rings.length > 1 && inPolygon(p, [rings[0]!]) && !inPolygon(p, rings)) inHole++;
        }
      }
    }
    expect(onCorner).toBeGreaterThan(0);
    expect(onVertex).toBeGreaterThan(0);
    expect(inHole).toBeGreaterThan(0);
    expect(outsideByUlp).toBeGreaterThan(0);
  });
});

// ---- float32 rounding of the R*Tree --------------------------------------------------------

/** A double that a 32-bit float cannot hold exactly, such as 31.8000001. */
const oddLon = fc
  .oneof(
    fc.integer({ min: -1799, max: 1799 }).map((n) => n / 10 + 1e-7),
    fc.integer({ min: -1799, max: 1799 }).map((n) => n / 10 - 1e-7),
    fc.double({ min: -179.9, max: 179.9, noNaN: true }),
  )
  .filter(notFloat32);
const oddLat = fc
  .oneof(
    fc.integer({ min: -899, max: 899 }).map((n) => n / 10 + 1e-7),
    fc.integer({ min: -899, max: 899 }).map((n) => n / 10 - 1e-7),
    fc.double({ min: -89.9, max: 89.9, noNaN: true }),
  )
  .filter(notFloat32);

/** Values around e that the R*Tree cannot tell apart from e, or barely can. */
function around(e: number): number[] {
  const f = Math.fround(e);
  return [e, nextUp(e), nextDown(e), nextUp(nextUp(e)), f, nextUp(f), nextDown(f)];
}

describe('box edges not representable in float32 are decided on the exact doubles', () => {
  it('points at, one ulp inside and one ulp outside an odd edge', async () => {
    await fc.assert(
      fc.asyncProperty(
        oddLon,
        oddLat,
        fc.constantFrom('minX' as const, 'maxX' as const, 'minY' as const, 'maxY' as const),
        fc.boolean(),
        fc.constantFrom('bounds' as const, 'polygon' as const),
        async (ex, ey, side, swapCorners, shape) => {
          // A box with one odd edge; the others at a safe distance (0.5 away, clamped to the valid range).
          const span = 0.5;
          let minX = Math.max(-180, ex - span);
          let maxX = Math.min(180, ex + span);
          let minY = Math.max(-90, ey - span);
          let maxY = Math.min(90, ey + span);
          if (side === 'minX') minX = ex;
          if (side === 'maxX') maxX = ex;
          if (side === 'minY') minY = ey;
          if (side === 'maxY') maxY = ey;
          const bounds = swapCorners ? [maxX, maxY, minX, minY] : [minX, minY, maxX, maxY];
          const rings: Rings = [
            [
              [minX, minY],
              [maxX, minY],
              [maxX, maxY],
              [minX, maxY],
              [minX, minY],
            ],
          ];
          const cx = (minX + maxX) / 2;
          const cy = (minY + maxY) / 2;
          const docs: WellDoc[] = [];
          const xs = side === 'minX' || side === 'maxX' ? around(ex) : [cx];
          const ys = side === 'minY' || side === 'maxY' ? around(ey) : [cy];
          for (const x of xs) for (const y of ys) docs.push({ id: `p${docs.length}`, surfaceLoc: point(x, y) });
          // Corners of the box, by the exact doubles.
          docs.push({ id: `p${docs.length}`, surfaceLoc: point(minX, minY) }, { id: `p${docs.length + 1}`, surfaceLoc: point(maxX, maxY) });
          const store = await backend.open();
          try {
            expect((await store.insert('Well', docs)).success).toBe(true);
            const mq: ModelQuery = shape === 'bounds' ? { geo: [{ field: 'surfaceLoc', bounds }], limit: 0, skip: 0 } : { geo: [{ field: 'surfaceLoc', polygon: rings }], limit: 0, skip: 0 };
            await checkAgainstModel(store, docs, mq, false);
            // The edge point itself is in; the point one ulp beyond the edge (same float32 cell) is out.
            const r = await store.dynamic.query('Well', storeQuery(mq).query);
            const ids = new Set(r.data.map((d) => d.id));
            expect(ids.has('p0')).toBe(true);
            const beyond = side === 'minX' || side === 'minY' ? nextDown : nextUp;
            const outside = docs.find((d) => {
              const [x, y] = d.surfaceLoc!.coordinates as Pos;
              return side === 'minX' || side === 'maxX' ? x === beyond(side === 'minX' ? minX : maxX) : y === beyond(side === 'minY' ? minY : maxY);
            })!;
            expect(ids.has(outside.id)).toBe(false);
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: Math.max(50, Math.floor(RUNS / 3)) },
    );
  });

  it('tiny (float32-subnormal) coordinates on a box or polygon edge are found', async () => {
    // SQLite's R*Tree cannot round these outward (1e-40 is stored as 9.99994610111476e-41, 5e-324 as 0).
    const values = [5e-324, 1e-320, 1e-40, 1.5e-39, -1e-40, -5e-324];
    const store = await backend.open();
    try {
      await store.insert(
        'Well',
        values.flatMap((v, i) => [
          { id: `x${i}`, surfaceLoc: point(v, 0.25) },
          { id: `y${i}`, surfaceLoc: point(0.25, v) },
        ]),
      );
      for (const [i, v] of values.entries()) {
        const boxes = v > 0 ? [[v, -1, 1, 1], [1, 1, v, -1]] : [[-1, -1, v, 1], [v, 1, -1, -1]];
        for (const b of boxes) {
          const r = await store.dynamic.query('Well', { surfaceLoc: { bounds: b } });
          expect(r.data.map((d) => d.id), `bounds ${JSON.stringify(b)}`).toContain(`x${i}`);
          const by = [b[1]!, b[0]!, b[3]!, b[2]!];
          const ry = await store.dynamic.query('Well', { surfaceLoc: { bounds: by } });
          expect(ry.data.map((d) => d.id), `bounds ${JSON.stringify(by)}`).toContain(`y${i}`);
        }
        const [lo, hi] = v > 0 ? [v, 1] : [-1, v];
        const ring: Pos[] = [
          [lo, -1],
          [hi, -1],
          [hi, 1],
          [lo, 1],
          [lo, -1],
        ];
        const p = await store.query('Well', { surfaceLoc: { polygon: [ring] } });
        expect(p.data.map((d) => d.id), `polygon with an edge at x = ${v}`).toContain(`x${i}`);
      }
    } finally {
      await store.close();
    }
  });

  it('31.8000001 on a box edge: the example from the design', async () => {
    const e = 31.8000001;
    expect(notFloat32(e)).toBe(true);
    const store = await backend.open();
    try {
      await store.insert('Well', [
        { id: 'at', surfaceLoc: point(-101.9, e) },
        { id: 'above', surfaceLoc: point(-101.9, nextUp(e)) },
        { id: 'fround', surfaceLoc: point(-101.9, Math.fround(e)) },
        { id: 'below', surfaceLoc: point(-101.9, nextDown(e)) },
      ]);
      const upTo = await store.query('Well', { surfaceLoc: { bounds: [-102, 31, -101, e] } });
      const from = await store.query('Well', { surfaceLoc: { bounds: [-101, e, -102, 32] } });
      const want = (lo: number, hi: number) => [
        ...(e >= lo && e <= hi ? ['at'] : []),
        ...(nextUp(e) >= lo && nextUp(e) <= hi ? ['above'] : []),
        ...(Math.fround(e) >= lo && Math.fround(e) <= hi ? ['fround'] : []),
        ...(nextDown(e) >= lo && nextDown(e) <= hi ? ['below'] : []),
      ];
      expect(upTo.data.map((d) => d.id)).toEqual(want(31, e));
      expect(from.data.map((d) => d.id)).toEqual(want(e, 32));
      expect(upTo.data.map((d) => d.id)).toContain('at');
      expect(upTo.data.map((d) => d.id)).not.toContain('above');
      expect(from.data.map((d) => d.id)).toContain('at');
      expect(from.data.map((d) => d.id)).not.toContain('below');
    } finally {
      await store.close();
    }
  });
});
});
