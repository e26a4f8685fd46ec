/**
 * Polygons of running queries, prepared once and found by a small integer handle: the SQL binds the handle, not
 * the rings, so the per-candidate test neither copies nor re-parses anything.
 *
 * A prepared polygon keeps its edges (of every ring) in horizontal bands: a point is tested only against the
 * edges whose y-range holds it, so a 10,000-vertex polygon costs a handful of edge tests per point instead of
 * 10,000. The per-edge test is point-in-polygon-hao's (what @turf/boolean-point-in-polygon runs), with the same
 * robust orientation predicate, so answers are the same to the bit: boundary inclusive (any ring), even-odd
 * across rings (a point in a hole is out). Edges whose y-range misses the point never count in that algorithm,
 * which is why skipping them changes nothing.
 */
import { BoundedCache } from '../cache.js';
import { orient2d } from 'robust-predicates';
import { widen } from './boxes.js';

interface Prepared {
  readonly minY: number;
  readonly maxY: number;
  /** Band height; 0 when the polygon is flat (one band). */
  readonly height: number;
  /** Per band, its edges as x1, y1, x2, y2 runs. */
  readonly bands: readonly Float64Array[];
  /** Positions of the rings, for the cache's budget. */
  readonly size: number;
}

/** Prepared polygons kept at once, in positions (all rings): about 100 bytes each with their bands. */
const BUDGET = 1_000_000;
const polygons = new Map<number, Prepared>();
/** Handles by rings, bounded by positions, not entries: a few large polygons cannot hold gigabytes. */
const handles = new BoundedCache<number>(10_000, BUDGET, (id) => polygons.delete(id));
let next = 1;

/** Band of a y value: monotonic in y, so an edge and a point on its end share a band. */
function bandOf(p: { minY: number; height: number; bands: readonly unknown[] }, y: number): number {
  if (p.height === 0) return 0;
  return Math.min(p.bands.length - 1, Math.max(0, Math.floor((y - p.minY) / p.height)));
}

/** Builds the bands of a polygon (rings closed, as checked by the query parser). */
export function prepare(rings: readonly (readonly (readonly number[])[])[]): Prepared {
  let minY = Infinity;
  let maxY = -Infinity;
  let edges = 0;
  for (const ring of rings) {
    edges += ring.length - 1;
    for (const p of ring) {
      if (p[1]! < minY) minY = p[1]!;
      if (p[1]! > maxY) maxY = p[1]!;
    }
  }
  // About two edges a band; an edge spanning many bands is listed in each (bounded: at most 4096 bands).
  const count = maxY > minY ? Math.min(4096, Math.max(1, Math.ceil(edges / 2))) : 1;
  const shape = { minY, height: maxY > minY ? (maxY - minY) / count : 0, bands: new Array<number>(count) };
  const lists: number[][] = Array.from({ length: count }, () => []);
  for (const ring of rings) {
    for (let i = 0; i + 1 < ring.length; i++) {
      const [x1, y1] = ring[i]! as [number, number];
      const [x2, y2] = ring[i + 1]! as [number, number];
      const from = bandOf(shape, Math.min(y1, y2));
      const to = bandOf(shape, Math.max(y1, y2));
      for (let b = from; b <= to; b++) lists[b]!.push(x1, y1, x2, y2);
    }
  }
  const size = rings.reduce((n, r) => n + r.length, 0);
  return { minY, maxY, height: shape.height, bands: lists.map((l) => Float64Array.from(l)), size };
}

/** 1 when (x, y) is inside the prepared polygon or on a boundary, 0 outside or in a hole. */
export function contains(p: Prepared, x: number, y: number): number {
  if (!(y >= p.minY && y <= p.maxY)) return 0;
  const e = p.bands[bandOf(p, y)]!;
  let k = 0;
  for (let i = 0; i < e.length; i += 4) {
    const u1 = e[i]! - x;
    const v1 = e[i + 1]! - y;
    const u2 = e[i + 2]! - x;
    const v2 = e[i + 3]! - y;
    if (v1 === 0 && v2 === 0) {
      if ((u2 <= 0 && u1 >= 0) || (u1 <= 0 && u2 >= 0)) return 1;
    } else if ((v2 >= 0 && v1 <= 0) || (v2 <= 0 && v1 >= 0)) {
      const f = orient2d(u1, u2, v1, v2, 0, 0);
      if (f === 0) return 1;
      if ((f > 0 && v2 > 0 && v1 <= 0) || (f < 0 && v2 <= 0 && v1 > 0)) k++;
    }
  }
  return k % 2;
}

/**
 * 0 when no point of the closed box [minX, maxX] × [minY, maxY] can be inside the prepared polygon or on its boundary;
 * 1 when one may be. Exact in the direction that matters: a box that touches or crosses any edge answers 1; one that
 * touches none lies wholly on one side of every ring, so one of its corners answers for all of it. The R*Tree keeps
 * each point as such a box (float32, rounded outward), so candidates are decided on the tree's own numbers and only
 * those that may match are read.
 */
export function mayContainBox(p: Prepared, minX: number, maxX: number, minY: number, maxY: number): number {
  if (maxY < p.minY || minY > p.maxY) return 0;
  const last = bandOf(p, maxY);
  for (let b = bandOf(p, minY); b <= last; b++) {
    const e = p.bands[b]!;
    for (let i = 0; i < e.length; i += 4) {
      const x1 = e[i]!;
      const y1 = e[i + 1]!;
      const x2 = e[i + 2]!;
      const y2 = e[i + 3]!;
      // Separating axes of a segment and a box: x, y, and the segment's normal (exact signs of the corners).
      if (Math.max(x1, x2) < minX || Math.min(x1, x2) > maxX || Math.max(y1, y2) < minY || Math.min(y1, y2) > maxY) continue;
      const a = Math.sign(orient2d(x1, y1, x2, y2, minX, minY));
      if (a !== 0 && a === Math.sign(orient2d(x1, y1, x2, y2, maxX, minY)) && a === Math.sign(orient2d(x1, y1, x2, y2, minX, maxY)) && a === Math.sign(orient2d(x1, y1, x2, y2, maxX, maxY))) continue;
      return 1;
    }
  }
  return contains(p, minX, minY);
}

/** The handle of a polygon (the same rings give the same handle, so statements stay cached). */
export function polygonHandle(rings: readonly (readonly (readonly number[])[])[]): number {
  const key = JSON.stringify(rings);
  let id = handles.get(key);
  if (id === undefined) {
    const prepared = prepare(rings);
    id = next++;
    polygons.set(id, prepared);
    handles.set(key, id, prepared.size);
  }
  return id;
}

/** The prepared polygon a statement bound by its handle. */
function byHandle(id: unknown): Prepared {
  const polygon = polygons.get(Number(id));
  // Handles live far longer than one synchronous statement; a miss means a caller bound a stale handle.
  if (!polygon) throw new Error(`unknown polygon handle ${String(id)}`);
  return polygon;
}

/** SQL function body: 1 when (x, y) is inside the polygon or on its boundary, 0 outside or in a hole. */
export function inPolygon(id: unknown, x: unknown, y: unknown): number {
  if (typeof x !== 'number' || typeof y !== 'number') return 0;
  return contains(byHandle(id), x, y);
}

/** SQL function body: mayContainBox on a polygon's handle and an R*Tree entry's (float32) box. */
export function polygonMayContainBox(id: unknown, minX: unknown, maxX: unknown, minY: unknown, maxY: unknown): number {
  // The tree's box is float32: widened, it holds the point's true doubles.
  return mayContainBox(byHandle(id), widen(minX as number, -1), widen(maxX as number, 1), widen(minY as number, -1), widen(maxY as number, 1));
}

/** Positions held by prepared polygons (the cache's budget is 1,000,000), for tests and diagnostics. */
export function heldPositions(): number {
  return handles.size.held;
}
