/**
 * Polygons of running queries, by a small integer handle: the SQL binds the handle, not the rings, so the
 * per-candidate polygon test neither copies nor re-parses a JSON string for every row.
 */
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';

interface Polygon {
  type: 'Polygon';
  coordinates: number[][][];
}

const MAX = 256;
const handles = new Map<string, number>();
const polygons = new Map<number, Polygon>();
let next = 1;

/** The handle of a polygon (the same rings give the same handle, so statements stay cached). */
export function polygonHandle(rings: readonly (readonly (readonly number[])[])[]): number {
  const key = JSON.stringify(rings);
  let id = handles.get(key);
  if (id === undefined) {
    id = next++;
    handles.set(key, id);
    polygons.set(id, { type: 'Polygon', coordinates: JSON.parse(key) as number[][][] });
    if (handles.size > MAX) {
      const [oldKey, oldId] = handles.entries().next().value!;
      handles.delete(oldKey);
      polygons.delete(oldId);
    }
  }
  return id;
}

/** SQL function body: 1 when (x, y) is inside the polygon or on its boundary, 0 outside or in a hole. */
export function inPolygon(id: unknown, x: unknown, y: unknown): number {
  if (typeof x !== 'number' || typeof y !== 'number') return 0;
  const polygon = polygons.get(Number(id));
  // Handles live far longer than one synchronous statement; a miss means a caller bound a stale handle.
  if (!polygon) throw new Error(`unknown polygon handle ${String(id)}`);
  return booleanPointInPolygon([x, y], polygon) ? 1 : 0;
}
