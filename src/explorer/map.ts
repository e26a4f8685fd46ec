/**
 * The map view: a type's GeoPoint field as points over the offline basemap, drawn on a canvas; a box or a polygon
 * drawn on it becomes a `bounds` / `polygon` query. Points are binned into 3-pixel cells coloured by count, so
 * 100k of them cost one pass over a typed array per frame; the basemap is drawn once per view and moved as an
 * image while panning.
 */
import { call, errorList, h, queryAll, type Doc, type FieldSchema } from './api.js';
import { drawBasemap, loadBasemap, type Basemap } from './basemap.js';
import { fitView, project, unproject, worldX, worldY, type View } from './projection.js';

type Tool = 'pan' | 'box' | 'polygon';

/** What the map shows; `window.explorerMap` exposes it to whoever drives the page (tests, the console). */
export interface MapState {
  type: string;
  field: string;
  filter: string;
  ids: string[];
  /** World coordinates of the loaded points, x0 y0 x1 y1 … */
  xy: Float64Array;
  selected: Set<string>;
  /** The query the last drawn shape ran. */
  selection: unknown;
  view: View | undefined;
  /** Frames drawn so far. */
  frames: number;
  project: (lon: number, lat: number) => [number, number];
}

const CELL = 3;
const state: MapState = {
  type: 'Well',
  field: 'surfaceLoc',
  filter: '{}',
  ids: [],
  xy: new Float64Array(0),
  selected: new Set(),
  selection: null,
  view: undefined,
  frames: 0,
  project: (lon, lat) => (state.view ? project(state.view, lon, lat) : [NaN, NaN]),
};
(window as unknown as { explorerMap: MapState }).explorerMap = state;

/** Renders the view into `root`. */
export async function showMap(root: HTMLElement): Promise<void> {
  const types = (await call<string>('/data/types')).data;
  const geo: { type: string; field: string }[] = [];
  const schemas = await Promise.all(types.map((t) => call<FieldSchema>(`/data/schema?type=${encodeURIComponent(t)}`)));
  schemas.forEach((s, i) => s.data.filter((f) => f.type === 'GeoPoint').forEach((f) => geo.push({ type: types[i]!, field: f.name })));
  const layer = h('select', { id: 'layer' }, ...geo.map((g) => h('option', { value: `${g.type}.${g.field}` }, `${g.type}.${g.field}`)));
  layer.value = `${state.type}.${state.field}`;
  const filter = h('input', { id: 'map-filter', value: state.filter, spellcheck: 'false' });
  const load = h('button', { id: 'map-load', type: 'submit' }, 'Load');
  const tools = h('div', { class: 'tools', role: 'radiogroup' });
  const status = h('span', { id: 'map-status' });
  const side = h('aside', { class: 'selection' }, h('h2', {}, 'Selection'), h('p', {}, 'Draw a box or a polygon (click its corners, double-click to close).'));
  const canvas = h('canvas', { id: 'map' });
  const wrap = h('div', { class: 'map-wrap' }, canvas);
  const form = h('form', { class: 'map-bar' }, h('label', {}, 'layer ', layer), h('label', {}, 'query ', filter), load, tools, status);
  root.replaceChildren(h('div', { class: 'map-view' }, form, h('div', { class: 'map-body' }, wrap, side)));

  let tool: Tool = 'pan';
  for (const t of ['pan', 'box', 'polygon'] as const) {
    const b = h('button', { type: 'button', 'data-tool': t, 'aria-pressed': String(t === tool) }, t);
    b.addEventListener('click', () => {
      tool = t;
      draft = [];
      tools.querySelectorAll('button').forEach((x) => x.setAttribute('aria-pressed', String(x === b)));
      paint();
    });
    tools.append(b);
  }

  const ctx = canvas.getContext('2d')!;
  let basemap: Basemap | undefined;
  // The basemap as an image, drawn for `cached` and shifted while the view moves away from it.
  const under = document.createElement('canvas');
  const dots = document.createElement('canvas');
  let cached: View | undefined;
  let image: ImageData | undefined;
  let counts = new Uint16Array(0);
  let draft: [number, number][] = [];
  let pointer: [number, number] | undefined;
  let queued = false;
  let settle: ReturnType<typeof setTimeout> | undefined;

  function resize(): void {
    const r = wrap.getBoundingClientRect();
    const [width, height] = [Math.max(200, Math.floor(r.width)), Math.max(200, Math.floor(r.height))];
    if (image && width === canvas.width && height === canvas.height) return;
    canvas.width = width;
    canvas.height = height;
    under.width = canvas.width;
    under.height = canvas.height;
    dots.width = canvas.width;
    dots.height = canvas.height;
    image = ctx.createImageData(canvas.width, canvas.height);
    counts = new Uint16Array(Math.ceil(canvas.width / CELL) * Math.ceil(canvas.height / CELL));
    if (state.view) Object.assign(state.view, { width: canvas.width, height: canvas.height });
    cached = undefined;
  }

  function fitPoints(): void {
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i < state.xy.length; i += 2) {
      x0 = Math.min(x0, state.xy[i]!);
      x1 = Math.max(x1, state.xy[i]!);
      y0 = Math.min(y0, state.xy[i + 1]!);
      y1 = Math.max(y1, state.xy[i + 1]!);
    }
    // No points: the lower 48.
    if (!Number.isFinite(x0)) [x0, y0, x1, y1] = [worldX(-125), worldY(50), worldX(-66), worldY(24)];
    state.view = fitView(canvas.width, canvas.height, x0, y0, x1, y1);
  }

  function drawUnder(): void {
    const v = state.view!;
    const u = under.getContext('2d')!;
    u.fillStyle = '#f6f8fa';
    u.fillRect(0, 0, under.width, under.height);
    if (basemap) drawBasemap(u, basemap, v.cx, v.cy, v.scale, v.width, v.height);
    cached = { ...v };
  }

  function paint(): void {
    if (queued) return;
    queued = true;
    requestAnimationFrame(frame);
  }

  function frame(): void {
    queued = false;
    const v = state.view;
    if (!v || !image) return;
    if (!cached) drawUnder();
    const c = cached!;
    // The cached basemap, moved and scaled to the current view until it is redrawn.
    const k = v.scale / c.scale;
    ctx.fillStyle = '#f6f8fa';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(k, 0, 0, k, v.width / 2 - (v.cx - c.cx) * v.scale - (c.width / 2) * k, v.height / 2 - (v.cy - c.cy) * v.scale - (c.height / 2) * k);
    ctx.drawImage(under, 0, 0);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    drawPoints(v);
    drawShapes(v);
    state.frames++;
  }

  function drawPoints(v: View): void {
    const cols = Math.ceil(v.width / CELL);
    const rows = Math.ceil(v.height / CELL);
    counts.fill(0);
    const ox = v.width / 2 - v.cx * v.scale;
    const oy = v.height / 2 - v.cy * v.scale;
    const xy = state.xy;
    let max = 1;
    for (let i = 0; i < xy.length; i += 2) {
      const cx = Math.floor((xy[i]! * v.scale + ox) / CELL);
      const cy = Math.floor((xy[i + 1]! * v.scale + oy) / CELL);
      if (cx < 0 || cy < 0 || cx >= cols || cy >= rows) continue;
      const n = ++counts[cy * cols + cx]!;
      if (n > max) max = n;
    }
    // Cells are written into a transparent image of their own, then composited over the basemap: no read-back.
    const img = image!;
    const px = new Uint32Array(img.data.buffer);
    px.fill(0);
    const logMax = Math.log(Math.max(max, 2));
    for (let cy = 0; cy < rows; cy++) {
      for (let cx = 0; cx < cols; cx++) {
        const n = counts[cy * cols + cx]!;
        if (!n) continue;
        const color = ramp(Math.log(n) / logMax);
        for (let dy = 0; dy < CELL; dy++) {
          const y = cy * CELL + dy;
          if (y >= v.height) break;
          const row = y * v.width;
          for (let dx = 0; dx < CELL; dx++) {
            const x = cx * CELL + dx;
            if (x < v.width) px[row + x] = color;
          }
        }
      }
    }
    dots.getContext('2d')!.putImageData(img, 0, 0);
    ctx.drawImage(dots, 0, 0);
    if (state.selected.size) {
      ctx.fillStyle = '#d62728';
      state.ids.forEach((id, i) => {
        if (!state.selected.has(id)) return;
        ctx.fillRect(xy[2 * i]! * v.scale + ox - 2.5, xy[2 * i + 1]! * v.scale + oy - 2.5, 5, 5);
      });
    }
  }

  function drawShapes(v: View): void {
    const pts = pointer && draft.length ? [...draft, pointer] : draft;
    if (!pts.length) return;
    ctx.strokeStyle = '#1f6feb';
    ctx.fillStyle = 'rgba(31, 111, 235, 0.12)';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    if (tool === 'box' && pts.length === 2) {
      const [[x0, y0], [x1, y1]] = pts.map(([lon, lat]) => project(v, lon, lat)) as [[number, number], [number, number]];
      ctx.rect(x0, y0, x1 - x0, y1 - y0);
    } else {
      pts.forEach(([lon, lat], i) => {
        const [x, y] = project(v, lon, lat);
        if (i) ctx.lineTo(x, y);
        else ctx.moveTo(x, y);
      });
      ctx.closePath();
    }
    ctx.fill();
    ctx.stroke();
  }

  async function loadPoints(): Promise<void> {
    const [type, field] = layer.value.split('.') as [string, string];
    Object.assign(state, { type, field, filter: filter.value, selected: new Set(), selection: null });
    let q: unknown;
    try {
      q = JSON.parse(filter.value);
    } catch (e) {
      status.replaceChildren(`query: not JSON (${(e as Error).message})`);
      return;
    }
    status.textContent = 'loading…';
    const ids: string[] = [];
    const xy: number[] = [];
    const env = await queryAll<Doc>(type, q, { fields: [field] }, (page, total) => {
      for (const d of page) {
        const c = (d[field] as { coordinates?: [number, number] } | undefined)?.coordinates;
        if (!c) continue;
        ids.push(String(d.id));
        xy.push(worldX(c[0]), worldY(c[1]));
      }
      status.textContent = `${ids.length.toLocaleString('en-US')} of ${total.toLocaleString('en-US')}…`;
    });
    if (!env.success) {
      status.replaceChildren(errorList(env));
      return;
    }
    state.ids = ids;
    state.xy = Float64Array.from(xy);
    canvas.dataset.points = String(ids.length);
    status.textContent = `${ids.length.toLocaleString('en-US')} points`;
    fitPoints();
    cached = undefined;
    paint();
  }

  async function select(shape: unknown): Promise<void> {
    const q = { [state.field]: shape };
    let base: unknown = {};
    try {
      base = JSON.parse(state.filter);
    } catch {
      // The filter box was checked when the points were loaded.
    }
    const whole = base && typeof base === 'object' && Object.keys(base).length ? { and: [base, q] } : q;
    state.selection = whole;
    const env = await queryAll<Doc>(state.type, whole, { fields: ['id'] });
    if (!env.success) {
      side.replaceChildren(h('h2', {}, 'Selection'), errorList(env));
      return;
    }
    state.selected = new Set(env.data.map((d) => String(d.id)));
    const list = h('ul', { id: 'selected' }, ...env.data.slice(0, 500).map((d) => h('li', { 'data-id': String(d.id) }, state.type === 'Well' ? h('a', { href: `#/well/${encodeURIComponent(String(d.id))}` }, String(d.id)) : String(d.id))));
    side.replaceChildren(h('h2', {}, `Selection: ${env.data.length.toLocaleString('en-US')}`), h('pre', { id: 'selection-query' }, JSON.stringify(whole)), list);
    side.dataset.count = String(env.data.length);
    paint();
  }

  // Pointer: drag pans (or draws a box); clicks add polygon corners; the wheel zooms about the cursor.
  let drag: { x: number; y: number; cx: number; cy: number } | undefined;
  const at = (e: MouseEvent): [number, number] => {
    const r = canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };
  canvas.addEventListener('mousedown', (e) => {
    const [x, y] = at(e);
    if (!state.view) return;
    if (tool === 'pan') drag = { x, y, cx: state.view.cx, cy: state.view.cy };
    else if (tool === 'box') draft = [unproject(state.view, x, y)];
  });
  canvas.addEventListener('mousemove', (e) => {
    const [x, y] = at(e);
    const v = state.view;
    if (!v) return;
    if (drag) {
      v.cx = drag.cx - (x - drag.x) / v.scale;
      v.cy = drag.cy - (y - drag.y) / v.scale;
      paint();
    } else if (draft.length) {
      pointer = unproject(v, x, y);
      paint();
    }
  });
  // On the window, so a drag that ends off the canvas ends; removed at the first mouseup once this map is gone.
  const listening = new AbortController();
  window.addEventListener(
    'mouseup',
    (e) => {
      if (!canvas.isConnected) {
        listening.abort();
        return;
      }
      if (drag) {
        drag = undefined;
        redrawSoon();
      } else if (tool === 'box' && draft.length === 1 && state.view) {
        const [x, y] = at(e);
        const [a, b] = [draft[0]!, unproject(state.view, x, y)];
        draft = [a, b];
        pointer = undefined;
        void select({ bounds: [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[0], b[0]), Math.max(a[1], b[1])] });
      }
    },
    { signal: listening.signal },
  );
  canvas.addEventListener('click', (e) => {
    if (tool !== 'polygon' || !state.view) return;
    // The second click of a double-click closes the ring rather than adding a corner.
    if (e.detail > 1) return;
    draft.push(unproject(state.view, ...at(e)));
    paint();
  });
  canvas.addEventListener('dblclick', () => {
    if (tool !== 'polygon' || draft.length < 3) return;
    pointer = undefined;
    void select({ polygon: [[...draft, draft[0]!]] });
    paint();
  });
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const v = state.view;
      if (!v) return;
      const [x, y] = at(e);
      const before = unproject(v, x, y);
      v.scale *= Math.exp(-e.deltaY / 300);
      // Keep the point under the cursor where it was.
      const [nx, ny] = project(v, before[0], before[1]);
      v.cx += (nx - x) / v.scale;
      v.cy += (ny - y) / v.scale;
      paint();
      redrawSoon();
    },
    { passive: false },
  );

  function redrawSoon(): void {
    clearTimeout(settle);
    settle = setTimeout(() => {
      cached = undefined;
      paint();
    }, 120);
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void loadPoints();
  });
  new ResizeObserver(() => {
    resize();
    if (!state.view) fitPoints();
    paint();
  }).observe(wrap);
  resize();
  basemap = await loadBasemap();
  cached = undefined;
  if (state.ids.length && state.type === layer.value.split('.')[0]) {
    canvas.dataset.points = String(state.ids.length);
    paint();
  } else await loadPoints();
}

/** Blue (one point) to orange (the densest cell), as little-endian RGBA. */
function ramp(t: number): number {
  const r = Math.round(31 + t * (230 - 31));
  const g = Math.round(111 + t * (120 - 111));
  const b = Math.round(235 + t * (20 - 235));
  return (255 << 24) | (b << 16) | (g << 8) | r;
}
