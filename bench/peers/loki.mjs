/**
 * lokijs in memory: unique + binary index on pwi, binary indexes on spudDate and basinName; geo is a full scan with
 * where(). `clone`: its clone mode (each answer a copy of the stored objects, as a store's answers are), system `loki-clone`.
 */
import fs from 'node:fs';
import Loki from 'lokijs';
import { inBox, inRings } from '../geo.mjs';
import { tally } from '../aggregate.mjs';

const OPTS = { unique: ['pwi'], indices: ['pwi', 'spudDate', 'basinName'] };
const loc = (d) => d.surfaceLoc?.coordinates;
// Loki keeps (and stamps $loki/meta on) the objects it is given: hand it copies, outside the timing.
const copy = (docs) => docs.map((d) => structuredClone(d));

/** Loki's mapReduce: each row to its (key, month, oil), reduced into sums by key and month, sorted as the store's rows are. */
function monthly(collection, keyOf) {
  return collection.mapReduce(
    (d) => [keyOf(d), d.prodDate.slice(0, 7), d.oilVol ?? 0],
    (mapped) => {
      const sums = new Map();
      for (const [key, month, oil] of mapped) {
        const k = `${key}\u0000${month}`;
        sums.set(k, (sums.get(k) ?? 0) + oil);
      }
      const keys = [...sums.keys()].sort();
      return tally(keys.length, keys.reduce((a, k) => a + sums.get(k), 0));
    },
  );
}

export async function create({ file, clone = false }) {
  let db;
  let wells;
  let daily;
  const datafile = `${file}.loki.json`;
  return {
    name: clone ? 'loki-clone' : 'loki',
    notes: { bounds: 'full scan, where()', polygon: 'full scan, where()', combined: 'full scan, where()', 'open-existing': 'loads its serialized JSON file', 'bulk-insert': 'given pre-copied objects (Loki keeps references)', 'dp-bulk-insert': 'given pre-copied objects' },
    prepare: { bulkInsert: copy, dpBulkInsert: copy, insertOne: (d) => structuredClone(d) },
    async reset() {
      db = new Loki('bench.db');
      wells = db.addCollection('wells', { ...OPTS, clone });
      daily = db.addCollection('daily', { indices: ['pwi'], clone });
    },
    bulkInsert(docs) {
      // Clone mode copies an inserted array through one JSON string: at 1M documents past V8's string limit.
      for (let i = 0; i < docs.length; i += clone ? 10_000 : docs.length) wells.insert(docs.slice(i, i + (clone ? 10_000 : docs.length)));
      return docs.length;
    },
    insertOne(doc) { wells.insert(doc); return 1; },
    removePwis(list) { const rs = wells.chain().find({ pwi: { $in: list } }); const n = rs.count(); rs.remove(); return n; },
    eqPwi: (pwi) => wells.find({ pwi }).length,
    inPwi: (list) => wells.find({ pwi: { $in: list } }).length,
    // Chained finds: the first uses the binary index, the second filters its result set.
    dateRange: (gte, lt) => wells.chain().find({ spudDate: { $gte: gte } }).find({ spudDate: { $lt: lt } }).data().length,
    numGt: (v) => wells.find({ lateralLength: { $gt: v } }).length,
    regexPrefix: (p) => wells.find({ name: { $regex: new RegExp(`^${p}`) } }).length,
    bounds: (b) => wells.where((d) => { const c = loc(d); return !!c && inBox(b, c[0], c[1]); }).length,
    polygon: (rings, b) => wells.where((d) => { const c = loc(d); return !!c && inBox(b, c[0], c[1]) && inRings(rings, c[0], c[1]); }).length,
    combined(b, status) {
      const rs = wells.chain().find({ statusCurrent: status }).where((d) => { const c = loc(d); return !!c && inBox(b, c[0], c[1]); });
      const total = rs.count();
      return `${rs.simplesort('spudDate', { desc: true }).limit(50).data().length}/${total}`;
    },
    updateMany(basin, value) {
      const rs = wells.chain().find({ basinName: basin });
      const n = rs.count();
      rs.update((d) => { d.statusCurrent = value; });
      return n;
    },
    deleteMany(gte, lt) {
      const rs = wells.chain().find({ spudDate: { $gte: gte } }).find({ spudDate: { $lt: lt } });
      const n = rs.count();
      rs.remove();
      return n;
    },
    dpBulkInsert(rows) { daily.insert(rows); return rows.length; },
    monthlyPerWell: () => monthly(daily, (d) => d.pwi),
    monthlyPerBasin: () => monthly(daily, (d) => d.extra?.basin),
    dpHistory: (pwi) => daily.chain().find({ pwi }).simplesort('prodDate').data().length,
    closeForOpen() {
      if (!fs.existsSync(datafile)) fs.writeFileSync(datafile, db.serialize());
      db = wells = daily = null;
    },
    openAndQuery(pwi) {
      db = new Loki(datafile);
      db.loadJSON(fs.readFileSync(datafile, 'utf8'));
      wells = db.getCollection('wells');
      daily = db.getCollection('daily');
      return wells.find({ pwi }).length;
    },
    fileBytes: () => (fs.existsSync(datafile) ? fs.statSync(datafile).size : 0),
    close() { db = wells = daily = null; fs.rmSync(datafile, { force: true }); },
  };
}
