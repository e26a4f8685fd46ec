/** The offline basemap: US state and county borders from us-atlas (public-domain Census outlines), as world-unit polylines. */
import { mesh } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { worldX, worldY } from './projection.js';

export interface Basemap {
  states: Float64Array[];
  counties: Float64Array[];
}

let loaded: Promise<Basemap> | undefined;

function lines(geometry: { coordinates: number[][][] }): Float64Array[] {
  return geometry.coordinates.map((line) => {
    const out = new Float64Array(line.length * 2);
    line.forEach(([lon, lat], i) => {
      out[2 * i] = worldX(lon!);
      out[2 * i + 1] = worldY(lat!);
    });
    return out;
  });
}

/** Fetches counties-10m.json beside the page once; borders shared by two shapes are drawn once (a mesh). */
export function loadBasemap(): Promise<Basemap> {
  loaded ??= fetch('counties-10m.json')
    .then((r) => r.json() as Promise<Topology<{ states: GeometryCollection; counties: GeometryCollection; nation: GeometryCollection }>>)
    .then((topo) => ({
      states: lines(mesh(topo, topo.objects.states)),
      counties: lines(mesh(topo, topo.objects.counties, (a, b) => a !== b)),
    }));
  return loaded;
}

/** Strokes the borders seen through `view` (lines outside it are skipped by their bounding test). */
export function drawBasemap(ctx: CanvasRenderingContext2D, map: Basemap, cx: number, cy: number, scale: number, width: number, height: number): void {
  const ox = width / 2 - cx * scale;
  const oy = height / 2 - cy * scale;
  const stroke = (set: Float64Array[], style: string, lineWidth: number) => {
    ctx.beginPath();
    for (const line of set) {
      for (let i = 0; i < line.length; i += 2) {
        const x = line[i]! * scale + ox;
        const y = line[i + 1]! * scale + oy;
        if (i === 0) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      }
    }
    ctx.strokeStyle = style;
    ctx.lineWidth = lineWidth;
    ctx.stroke();
  };
  // County lines only once they are far enough apart to read.
  if (scale > 3000) stroke(map.counties, '#d5dbe1', 0.6);
  stroke(map.states, '#8a97a5', 1);
}
