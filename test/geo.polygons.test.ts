/** The prepared polygon (edges in y-bands) answers exactly as @turf/boolean-point-in-polygon, for every point. */
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contains, mayContainBox, prepare } from '../src/geo/polygons.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

/** A closed ring through n points around (cx, cy), radii drawn per vertex (star-shaped, may be very spiky). */
const ring = (cx: number, cy: number, scale: number) =>
  fc.array(fc.double({ min: 0.1, max: 1, noNaN: true }), { minLength: 3, maxLength: 60 }).map((radii) => {
    const pts = radii.map((r, i) => {
      const a = (2 * Math.PI * i) / radii.length;
      return [cx + Math.cos(a) * r * scale, cy + Math.sin(a) * r * scale];
    });
    return [...pts, pts[0]!];
  });

/** An exterior and up to two small holes near its centre. */
const polygon = fc.tuple(ring(0, 0, 10), fc.array(ring(0, 0, 1), { maxLength: 2 })).map(([outer, holes]) => [outer, ...holes]);

/** Points anywhere near the polygon, plus its own vertices and edge midpoints (the boundary cases). */
function probes(rings: number[][][], extra: number[][]): number[][] {
  const onEdges = rings.flatMap((r) => r.slice(1).map((p, i) => [(p[0]! + r[i]![0]!) / 2, (p[1]! + r[i]![1]!) / 2]));
  return [...rings.flat(), ...onEdges, ...extra];
}

describe('prepared polygons', () => {
  it('agree with turf on random polygons with holes, at vertices, on edges and anywhere around', () => {
    fc.assert(
      fc.property(polygon, fc.array(fc.tuple(fc.double({ min: -12, max: 12, noNaN: true }), fc.double({ min: -12, max: 12, noNaN: true })), { maxLength: 50 }), (rings, pts) => {
        const prepared = prepare(rings);
        const geo = { type: 'Polygon' as const, coordinates: rings };
        for (const p of probes(rings, pts)) {
          const want = booleanPointInPolygon(p, geo) ? 1 : 0;
          expect(contains(prepared, p[0]!, p[1]!), JSON.stringify({ p, rings })).toBe(want);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('keep flat and axis-aligned shapes exact: a square, its corners and sides, and a degenerate ring', () => {
    const square = [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]];
    const p = prepare(square);
    const geo = { type: 'Polygon' as const, coordinates: square };
    for (const x of [-1, 0, 0.5, 1, 1.5, 2, 3, 4, 5]) {
      for (const y of [-1, 0, 0.5, 1, 1.5, 2, 3, 4, 5]) expect(contains(p, x, y), `${x},${y}`).toBe(booleanPointInPolygon([x, y], geo) ? 1 : 0);
    }
    const flat = prepare([[[0, 0], [2, 0], [1, 0], [0, 0]]]);
    expect(contains(flat, 1, 0)).toBe(1);
    expect(contains(flat, 1, 1)).toBe(0);
  });

  it('test a point against a few edges of a 10,000-vertex polygon, not all of them', () => {
    const n = 10_000;
    const circle = Array.from({ length: n }, (_, i) => [Math.cos((2 * Math.PI * i) / n), Math.sin((2 * Math.PI * i) / n)]);
    const p = prepare([[...circle, circle[0]!]]);
    const sizes = p.bands.map((b) => b.length / 4);
    // Near-horizontal edges (the circle's top and bottom) crowd their bands; elsewhere a band holds a few.
    expect(Math.max(...sizes)).toBeLessThan(n / 50);
    expect(sizes.reduce((a, b) => a + b, 0) / sizes.length).toBeLessThan(8);
    expect(contains(p, 0, 0)).toBe(1);
    expect(contains(p, 1.5, 0)).toBe(0);
  });
});

describe('the box pre-test on R*Tree entries', () => {
  /** A box around (x, y): a point's own (w = 0), float32-sized, or wide enough to straddle edges. */
  const box = fc.tuple(fc.double({ min: -12, max: 12, noNaN: true }), fc.double({ min: -12, max: 12, noNaN: true }), fc.constantFrom(0, 1e-6, 0.01, 0.5, 3), fc.constantFrom(0, 1e-6, 0.01, 0.5, 3));

  it('never drops a box holding a point the polygon contains: corners, centre, edge points and the polygon\'s vertices within', () => {
    fc.assert(
      fc.property(polygon, fc.array(box, { maxLength: 30 }), (rings, boxes) => {
        const prepared = prepare(rings);
        // Boxes around the polygon's own vertices and edge midpoints too: where an edge grazes a box.
        const all = [...boxes, ...probes(rings, []).map(([x, y]) => [x!, y!, 1e-6, 1e-6] as const)];
        for (const [x, y, w, h] of all) {
          const [minX, maxX, minY, maxY] = [x - w, x + w, y - h, y + h];
          const inside = [[minX, minY], [maxX, minY], [minX, maxY], [maxX, maxY], [x, y], [minX, y], [x, maxY]]
            .concat(rings.flat().filter(([px, py]) => px! >= minX && px! <= maxX && py! >= minY && py! <= maxY))
            .some(([px, py]) => contains(prepared, px!, py!) === 1);
          if (inside) expect(mayContainBox(prepared, minX, maxX, minY, maxY), JSON.stringify({ box: [minX, maxX, minY, maxY], rings })).toBe(1);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('answers 0 for boxes wholly outside or wholly in a hole, 1 inside or across an edge', () => {
    const square = prepare([[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [3, 1], [3, 3], [1, 3], [1, 1]]]);
    expect(mayContainBox(square, 5, 6, 5, 6)).toBe(0);
    expect(mayContainBox(square, 1.5, 2.5, 1.5, 2.5)).toBe(0);
    expect(mayContainBox(square, 0.2, 0.8, 0.2, 3.8)).toBe(1);
    expect(mayContainBox(square, 3.5, 4.5, 2, 2.1)).toBe(1);
    expect(mayContainBox(square, 2.9, 3.1, 2, 2.1)).toBe(1);
    // A box touching the boundary only at a point: the boundary is inside.
    expect(mayContainBox(square, 4, 5, 4, 5)).toBe(1);
    expect(mayContainBox(square, -2, -1, 1, 2)).toBe(0);
  });
});
