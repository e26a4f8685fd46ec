/** Web Mercator in world units (0..1 both ways) and the map's view: a centre and a scale in pixels per world unit. */

export interface View {
  /** Centre of the screen, in world units. */
  cx: number;
  cy: number;
  /** Pixels per world unit. */
  scale: number;
  width: number;
  height: number;
}

const MAX_LAT = 85.05112878;

/** Longitude → world x. */
export function worldX(lon: number): number {
  return (lon + 180) / 360;
}

/** Latitude → world y (north up, so y grows southward as on screen). */
export function worldY(lat: number): number {
  const s = Math.sin((Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180);
  return 0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI);
}

/** Screen pixel → [lon, lat], rounded to 6 decimals (10 cm): what a drawn shape's query says. */
export function unproject(view: View, px: number, py: number): [number, number] {
  const x = view.cx + (px - view.width / 2) / view.scale;
  const y = view.cy + (py - view.height / 2) / view.scale;
  const lon = x * 360 - 180;
  const lat = (Math.atan(Math.sinh(Math.PI * (1 - 2 * y))) * 180) / Math.PI;
  return [Math.round(lon * 1e6) / 1e6, Math.round(lat * 1e6) / 1e6];
}

/** [lon, lat] → screen pixel. */
export function project(view: View, lon: number, lat: number): [number, number] {
  return [(worldX(lon) - view.cx) * view.scale + view.width / 2, (worldY(lat) - view.cy) * view.scale + view.height / 2];
}

/** The view that fits a box of world coordinates, with a margin. */
export function fitView(width: number, height: number, x0: number, y0: number, x1: number, y1: number): View {
  const w = Math.max(x1 - x0, 1e-6);
  const hgt = Math.max(y1 - y0, 1e-6);
  return { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, scale: 0.9 * Math.min(width / w, height / hgt), width, height };
}
