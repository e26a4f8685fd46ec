/** mingo over plain arrays: a query engine without storage or indexes, so every query is a scan; writes are n/a. */
// The $group and $sort stages are not in mingo's default build: the system operators register them.
import 'mingo/init/system';
import { aggregate, find } from 'mingo';
import { tally } from '../aggregate.mjs';
import { inBox, inRings } from '../geo.mjs';

const loc = (d) => d.surfaceLoc?.coordinates;
/** Sum of oil by a key and the month of prodDate (its first seven characters), sorted as the store's rows are. */
const pipeline = (key) => [
  { $group: { _id: { key, month: { $substrBytes: ['$prodDate', 0, 7] } }, oil: { $sum: '$oilVol' } } },
  { $sort: { '_id.key': 1, '_id.month': 1 } },
];
const groups = (rows) => tally(rows.length, rows.reduce((a, r) => a + r.oil, 0));

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
    monthlyPerWell: () => groups(aggregate(daily, pipeline('$pwi'))),
    monthlyPerBasin: () => groups(aggregate(daily, pipeline('$extra.basin'))),
    dpHistory: (pwi) => find(daily, { pwi }).sort({ prodDate: 1 }).all().length,
    close() { wells = daily = []; },
  };
}
