/** Shared pieces of the geo tests: a plain-JS reference model of bounds/polygon queries, float helpers, temp files. */
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Pos = [number, number];
export type Rings = Pos[][];
export interface PointValue {
  type: 'Point';
  coordinates: number[];
}
export type GeoField = 'surfaceLoc' | 'midPointLoc' | 'bottomHoleLoc';
export const GEO_FIELDS: readonly GeoField[] = ['surfaceLoc', 'midPointLoc', 'bottomHoleLoc'];

/** A Well document as the tests write it (only the fields the geo tests use). */
export interface WellDoc {
  id: string;
  pwi?: string | null;
  basinName?: string | null;
  fracStages?: number | null;
  surfaceLoc?: PointValue | null;
  midPointLoc?: PointValue | null;
  bottomHoleLoc?: PointValue | null;
}

/** A 1°×1° square ring around (-101.5, 31.5), closed: a fixture several geo tests share. */
export const SQUARE: Pos[] = [
  [-102, 31],
  [-101, 31],
  [-101, 32],
  [-102, 32],
  [-102, 31],
];

export function point(x: number, y: number): PointValue {
  return { type: 'Point', coordinates: [x, y] };
}

/** The stored coordinates of a GeoPoint field, or null when missing/null. */
export function coordsOf(doc: WellDoc, field: GeoField): Pos | null {
  const v = doc[field];
  if (v === null || v === undefined) return null;
  return [v.coordinates[0]!, v.coordinates[1]!];
}

/** Bounds semantics: min/max per axis, edges inclusive, decided on the doubles. */
export function inBox(p: Pos | null, box: readonly number[]): boolean {
  if (!p) return false;
  const [x1, y1, x2, y2] = box as [number, number, number, number];
  const [minX, maxX] = [Math.min(x1, x2), Math.max(x1, x2)];
  const [minY, maxY] = [Math.min(y1, y2), Math.max(y1, y2)];
  return p[0] >= minX && p[0] <= maxX && p[1] >= minY && p[1] <= maxY;
}

/**
 * Polygon semantics: @turf/boolean-point-in-polygon with default options (boundary inclusive, holes excluded).
 * A point outside the exterior ring's bounding box is outside, whatever turf says: with float32-subnormal
 * coordinates its cross products underflow to 0 and it calls such a point "on the boundary"
 * (e.g. [0, -1e-7] against an edge at x = 5e-324). The store tests the box exactly first, as it must.
 */
export function inPolygon(p: Pos | null, rings: Rings): boolean {
  if (!p) return false;
  const outer = rings[0] ?? [];
  const xs = outer.map((q) => q[0]);
  const ys = outer.map((q) => q[1]);
  if (!inBox(p, [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)])) return false;
  return booleanPointInPolygon(p, { type: 'Polygon', coordinates: rings });
}

export type GeoCond = { field: GeoField; bounds?: number[]; polygon?: Rings };

export interface ModelQuery {
  geo: GeoCond[];
  basinName?: string | null;
  fracStagesGt?: number;
  sortBy?: 'fracStages' | 'pwi';
  sortOrder?: 1 | -1;
  limit: number;
  skip: number;
}

export function matches(doc: WellDoc, q: ModelQuery): boolean {
  for (const g of q.geo) {
    const p = coordsOf(doc, g.field);
    if (g.bounds && !inBox(p, g.bounds)) return false;
    if (g.polygon && !inPolygon(p, g.polygon)) return false;
  }
  if (q.basinName !== undefined) {
    const v = doc.basinName ?? null;
    if (v !== q.basinName) return false;
  }
  if (q.fracStagesGt !== undefined) {
    if (typeof doc.fracStages !== 'number' || !(doc.fracStages > q.fracStagesGt)) return false;
  }
  return true;
}

/** Ascending order of two sort keys: null/missing first, then numbers, then strings (binary order). */
function compareKeys(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  if (ra === 1) return (a as number) - (b as number);
  const sa = Buffer.from(a as string, 'utf8');
  const sb = Buffer.from(b as string, 'utf8');
  return Buffer.compare(sa, sb);
}

/** The page ids and total the store must answer, computed by brute force over `docs` (in insertion order). */
export function expectedPage(docs: readonly WellDoc[], q: ModelQuery): { ids: string[]; total: number } {
  const hits = docs.map((d, i) => ({ d, i })).filter(({ d }) => matches(d, q));
  if (q.sortBy && q.sortOrder !== undefined) {
    const key = q.sortBy;
    const dir = q.sortOrder;
    // Ties break by insertion order, ascending in both directions.
    hits.sort((a, b) => dir * compareKeys(a.d[key], b.d[key]) || a.i - b.i);
  }
  const from = q.skip;
  const to = q.limit > 0 ? from + q.limit : hits.length;
  return { ids: hits.slice(from, to).map(({ d }) => d.id), total: hits.length };
}

/** The store query (query object and options) of a model query. */
export function storeQuery(q: ModelQuery, polygonAsGeoJson = false): { query: Record<string, unknown>; options: Record<string, unknown> } {
  const query: Record<string, unknown> = {};
  for (const g of q.geo) {
    const ops: Record<string, unknown> = (query[g.field] as Record<string, unknown> | undefined) ?? {};
    if (g.bounds) ops.bounds = g.bounds;
    if (g.polygon) ops.polygon = polygonAsGeoJson ? { type: 'Polygon', coordinates: g.polygon } : g.polygon;
    query[g.field] = ops;
  }
  if (q.basinName !== undefined) query.basinName = q.basinName === null ? { eq: null } : q.basinName;
  if (q.fracStagesGt !== undefined) query.fracStages = { gt: q.fracStagesGt };
  const options: Record<string, unknown> = { limit: q.limit, skip: q.skip };
  if (q.sortBy) {
    options.sortBy = q.sortBy;
    options.sortOrder = q.sortOrder ?? 1;
  }
  return { query, options };
}

const view = new DataView(new ArrayBuffer(8));

/** The next double after x towards +Infinity (x finite). */
export function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  view.setBigUint64(0, x > 0 ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/** The next double after x towards -Infinity (x finite). */
export function nextDown(x: number): number {
  return -nextUp(-x);
}

/** True when x is not exactly a 32-bit float (the R*Tree has to round it). */
export function notFloat32(x: number): boolean {
  return Math.fround(x) !== x;
}

/** A fresh directory under the OS temp dir and a function removing it. */
export function tempDir(prefix = 'consolidata-geo-'): { dir: string; file: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, file: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Number of runs of a property: FUZZ_RUNS from the environment, else the given default. */
export function fuzzRuns(fallback: number): number {
  const n = Number(process.env.FUZZ_RUNS);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}
