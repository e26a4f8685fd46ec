/** mingo over plain arrays: a query engine without storage or indexes, so every query is a scan; writes are n/a. */
import { find } from 'mingo';
import { inBox, inRings } from '../geo.mjs';

const loc = (d) => d.surfaceLoc?.coordinates;

export async function create() {
  let wells = [];
  let daily = [];
  return {
    name: 'mingo',
    notes: { bounds: 'full scan, $where', polygon: 'full scan, $where', combined: 'full scan, $where' },
    // No storage: the array is loaded outside the timing; only queries are measured.
    async reset() { wells = []; daily = []; },
    load(docs) { wells = docs.slice(); },
    loadDaily(rows) { daily = rows.slice(); },
    removePwis(list) { const s = new Set(list); wells = wells.filter((d) => !s.has(d.pwi)); },
    eqPwi: (pwi) => find(wells, { pwi }).all().length,
    inPwi: (list) => find(wells, { pwi: { $in: list } }).all().length,
    dateRange: (gte, lt) => find(wells, { spudDate: { $gte: gte, $lt: lt } }).all().length,
    numGt: (v) => find(wells, { lateralLength: { $gt: v } }).all().length,
    regexPrefix: (p) => find(wells, { name: { $regex: new RegExp(`^${p}`) } }).all().length,
    bounds: (b) => find(wells, { $where() { const c = loc(this); return !!c && inBox(b, c[0], c[1]); } }).all().length,
    polygon: (rings, b) => find(wells, { $where() { const c = loc(this); return !!c && inBox(b, c[0], c[1]) && inRings(rings, c[0], c[1]); } }).all().length,
    combined(b, status) {
      const query = { statusCurrent: status, $where() { const c = loc(this); return !!c && inBox(b, c[0], c[1]); } };
      const page = find(wells, query).sort({ spudDate: -1 }).limit(50).all();
      return `${page.length}/${find(wells, query).count()}`;
    },
    dpHistory: (pwi) => find(daily, { pwi }).sort({ prodDate: 1 }).all().length,
    close() { wells = daily = []; },
  };
}
