/**
 * Great-circle distance on a sphere, and the lon/lat boxes that hold a spherical cap: the `near` operator's rule
 * (the SQL compiler states the same haversine in SQL, src/sql/compile.ts `distance`) and its index prefilter.
 */

/** The sphere's radius in metres: the mean Earth radius (IUGG), as MongoDB and turf use. */
export const EARTH_RADIUS = 6_371_008.8;

/** Degrees to radians, as one bound constant: both engines then multiply by the same double. */
export const RADIANS = Math.PI / 180;

/**
 * Coordinates nearer zero than this count as zero in a distance: PostgreSQL refuses a float product that underflows
 * ("value out of range: underflow"), and squaring the sine of a difference of such values would. Flushed, the
 * smallest nonzero difference of two coordinates is about 1e-116 and its square stays a normal double; the distance
 * moves by under 1e-90 metres.
 */
export const TINY = 1e-100;

/** A coordinate as a distance reads it (see TINY). */
const flush = (v: number) => (Math.abs(v) < TINY ? 0 : v);

/** A lon/lat box: [minX, minY, maxX, maxY] in degrees. */
export type Box = readonly [number, number, number, number];

/**
 * The haversine distance in metres between two [lon, lat] points, computed as the SQL of `near` computes it
 * (the same operations in the same order), for tests and for callers that need it without a store.
 * @example haversine([-97.5, 35.4], [-97.6, 35.5]) // ≈ 14_288
 */
export function haversine(a: readonly number[], b: readonly number[]): number {
  const [x1, y1, x2, y2] = [a[0]!, a[1]!, b[0]!, b[1]!].map(flush) as [number, number, number, number];
  const lat1 = y1 * RADIANS;
  const dLat = Math.sin((y2 * RADIANS - lat1) / 2);
  const dLon = Math.sin((x2 * RADIANS - x1 * RADIANS) / 2);
  const h = dLat ** 2 + Math.cos(lat1) * Math.cos(y2 * RADIANS) * dLon ** 2;
  return 2 * EARTH_RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Extra angle (radians, about 6 mm) added to a cap before its box is taken: float rounding never loses a point. */
const SLACK = 1e-9;

/**
 * The boxes that hold every point within `metres` of [lon, lat] along the sphere: one box, or two when the cap
 * crosses the antimeridian; the whole width of longitudes when it holds a pole. Its latitude extent is the cap's
 * (lat ± angle); its longitude half-width is asin(sin(angle) / cos(lat)), the meridians tangent to the cap.
 * @example capBoxes([179.99, 0], 5000) // two boxes, one each side of ±180
 */
export function capBoxes(point: readonly number[], metres: number): Box[] {
  const [lon, lat] = point as [number, number];
  const angle = metres / EARTH_RADIUS + SLACK;
  const minY = lat - angle / RADIANS;
  const maxY = lat + angle / RADIANS;
  // The cap reaches a pole (or past it): every longitude is within reach there.
  if (angle >= Math.PI / 2 || minY <= -90 || maxY >= 90) return [[-180, Math.max(-90, minY), 180, Math.min(90, maxY)]];
  const half = Math.asin(Math.min(1, Math.sin(angle) / Math.cos(lat * RADIANS))) / RADIANS + SLACK / RADIANS;
  if (half >= 180) return [[-180, minY, 180, maxY]];
  const minX = lon - half;
  const maxX = lon + half;
  if (minX < -180) return [[minX + 360, minY, 180, maxY], [-180, minY, maxX, maxY]];
  if (maxX > 180) return [[minX, minY, 180, maxY], [-180, minY, maxX - 360, maxY]];
  return [[minX, minY, maxX, maxY]];
}
