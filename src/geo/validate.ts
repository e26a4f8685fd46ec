/** Geometry checks shared by documents (GeoPoint, GeoMultiPolygon) and query operands (bounds, polygon). */

/** Why a position is not [longitude, latitude] within range, or null. */
export function lonLatError(pos: unknown): string | null {
  if (!Array.isArray(pos) || pos.length < 2 || pos.length > 3) return 'a position must be [longitude, latitude]';
  if (!pos.every((n) => typeof n === 'number' && Number.isFinite(n))) return 'coordinates must be finite numbers';
  const [lon, lat] = pos as number[];
  if (lon! < -180 || lon! > 180) return `longitude ${lon} is outside [-180, 180]`;
  if (lat! < -90 || lat! > 90) return `latitude ${lat} is outside [-90, 90]`;
  return null;
}

/** Checks one polygon's rings (GeoJSON): closed, at least 4 positions, valid lon/lat. */
export function ringsError(rings: unknown): string | null {
  if (!Array.isArray(rings) || rings.length === 0) return 'a polygon must be a non-empty array of rings';
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r];
    if (!Array.isArray(ring)) return `ring ${r} must be an array of [longitude, latitude] positions`;
    if (ring.length < 4) return `ring ${r} has ${ring.length} positions; a ring needs at least 4`;
    for (let p = 0; p < ring.length; p++) {
      const err = lonLatError(ring[p]);
      if (err) return `ring ${r}, position ${p}: ${err}`;
    }
    const a = ring[0] as number[];
    const b = ring[ring.length - 1] as number[];
    if (a[0] !== b[0] || a[1] !== b[1]) return `ring ${r} is not closed: its first and last positions differ`;
  }
  return null;
}
