/** Plain geometry for the bench: exact point tests (the peers' full-scan predicates, the SQL baseline's polygon test) and query shapes picked from the data. */

/** Ray casting over GeoJSON rings (exterior first, holes after); the bench's shapes keep points off their edges. */
export function inRings(rings, x, y) {
  let inside = false;
  for (const ring of rings) {
    let c = false;
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i];
      const [xj, yj] = ring[j];
      if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) c = !c;
    }
    if (ring === rings[0]) inside = c;
    else if (c) return false;
  }
  return inside;
}

export const inBox = (b, x, y) => x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3];

/** Box [minX, minY, maxX, maxY] of a ring set. */
export function ringsBox(rings) {
  const xs = rings[0].map((p) => p[0]);
  const ys = rings[0].map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

// 3e-7 off the 6-decimal grid of the generated coordinates: no point sits exactly on an edge.
const OFF = 3e-7;

/** A box around (cx, cy) whose hit count over `pts` is close to `target` (bisection on the half width). */
export function boxFor(pts, cx, cy, target) {
  let lo = 0;
  let hi = 30;
  let best = null;
  for (let it = 0; it < 40; it++) {
    const h = (lo + hi) / 2;
    const b = [cx - h + OFF, cy - h * 0.8 + OFF, cx + h + OFF, cy + h * 0.8 + OFF];
    let n = 0;
    for (const [x, y] of pts) if (inBox(b, x, y)) n++;
    best = { box: b, hits: n };
    if (n === target) break;
    if (n < target) lo = h;
    else hi = h;
  }
  return best;
}

/** An octagon of radius r around (cx, cy) with a square hole of half width r/2. */
export function holedOctagon(cx, cy, r) {
  const outer = [];
  for (let k = 0; k < 8; k++) {
    const a = (k * Math.PI) / 4 + 0.2;
    outer.push([cx + r * Math.cos(a) + OFF, cy + r * Math.sin(a) * 0.8 + OFF]);
  }
  outer.push(outer[0]);
  const h = r / 2;
  const hole = [[cx - h + OFF, cy - h + OFF], [cx + h + OFF, cy - h + OFF], [cx + h + OFF, cy + h + OFF], [cx - h + OFF, cy + h + OFF], [cx - h + OFF, cy - h + OFF]];
  return [outer, hole];
}

/** A holed octagon around (cx, cy) whose hit count is close to `target`. */
export function polygonFor(pts, cx, cy, target) {
  let lo = 0;
  let hi = 30;
  let best = null;
  for (let it = 0; it < 30; it++) {
    const r = (lo + hi) / 2;
    const rings = holedOctagon(cx, cy, r);
    const b = ringsBox(rings);
    let n = 0;
    for (const [x, y] of pts) if (inBox(b, x, y) && inRings(rings, x, y)) n++;
    best = { rings, hits: n };
    if (n === target) break;
    if (n < target) lo = r;
    else hi = r;
  }
  return best;
}

/** The sphere of `near` (metres) and degrees to radians. */
export const EARTH_RADIUS = 6_371_008.8;
const RAD = Math.PI / 180;

/** Haversine distance in metres between two [lon, lat] points. */
export function haversine(a, b) {
  const h = Math.sin((b[1] - a[1]) * RAD / 2) ** 2 + Math.cos(a[1] * RAD) * Math.cos(b[1] * RAD) * Math.sin((b[0] - a[0]) * RAD / 2) ** 2;
  return 2 * EARTH_RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The lon/lat box [minX, minY, maxX, maxY] of a cap of `metres` around a point away from the poles and the antimeridian. */
export function capBox([lon, lat], metres) {
  const angle = metres / EARTH_RADIUS + 1e-9;
  const half = Math.asin(Math.sin(angle) / Math.cos(lat * RAD)) / RAD + 1e-9 / RAD;
  return [lon - half, lat - angle / RAD, lon + half, lat + angle / RAD];
}
