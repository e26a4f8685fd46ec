/** @seald-io/nedb in memory, with its own indexes (pwi unique, spudDate, basinName); geo is a full scan with a $where predicate. */
import fs from 'node:fs';
import Datastore from '@seald-io/nedb';
import { inBox, inRings } from '../geo.mjs';

const INDEXES = [{ fieldName: 'pwi', unique: true }, { fieldName: 'spudDate' }, { fieldName: 'basinName' }];
const loc = (d) => d.surfaceLoc?.coordinates;

export async function create({ file }) {
  let db;
  let dp;
  const datafile = `${file}.nedb`;
  return {
    name: 'nedb',
    notes: { bounds: 'full scan, $where', polygon: 'full scan, $where', combined: 'full scan, $where', 'open-existing': 'loads its JSON-lines datafile' },
    async reset() {
      db = new Datastore();
      dp = new Datastore();
      for (const i of INDEXES) await db.ensureIndexAsync(i);
      await dp.ensureIndexAsync({ fieldName: 'pwi' });
    },
    async bulkInsert(docs) { return (await db.insertAsync(docs)).length; },
    async insertOne(doc) { await db.insertAsync(doc); return 1; },
    removePwis: (list) => db.removeAsync({ pwi: { $in: list } }, { multi: true }),
    eqPwi: async (pwi) => (await db.findAsync({ pwi })).length,
    inPwi: async (list) => (await db.findAsync({ pwi: { $in: list } })).length,
    dateRange: async (gte, lt) => (await db.findAsync({ spudDate: { $gte: gte, $lt: lt } })).length,
    numGt: async (v) => (await db.findAsync({ lateralLength: { $gt: v } })).length,
    regexPrefix: async (p) => (await db.findAsync({ name: { $regex: new RegExp(`^${p}`) } })).length,
    bounds: async (b) => (await db.findAsync({ $where() { const c = loc(this); return !!c && inBox(b, c[0], c[1]); } })).length,
    polygon: async (rings, b) => (await db.findAsync({ $where() { const c = loc(this); return !!c && inBox(b, c[0], c[1]) && inRings(rings, c[0], c[1]); } })).length,
    async combined(b, status) {
      const query = { statusCurrent: status, $where() { const c = loc(this); return !!c && inBox(b, c[0], c[1]); } };
      const page = await db.findAsync(query).sort({ spudDate: -1 }).limit(50);
      return `${page.length}/${await db.countAsync(query)}`;
    },
    updateMany: async (basin, value) => (await db.updateAsync({ basinName: basin }, { $set: { statusCurrent: value } }, { multi: true })).numAffected,
    deleteMany: (gte, lt) => db.removeAsync({ spudDate: { $gte: gte, $lt: lt } }, { multi: true }),
    async dpBulkInsert(rows) { return (await dp.insertAsync(rows)).length; },
    dpHistory: async (pwi) => (await dp.findAsync({ pwi }).sort({ prodDate: 1 })).length,
    closeForOpen() {
      if (fs.existsSync(datafile)) return void (db = null);
      // NeDB's own format: one JSON document per line, then its index definitions.
      // Written in slices: at 1M documents the whole file is longer than a JS string may be.
      const fd = fs.openSync(datafile, 'w');
      const docs = db.getAllData();
      for (let i = 0; i < docs.length; i += 10_000) fs.writeSync(fd, docs.slice(i, i + 10_000).map((d) => JSON.stringify(d) + '\n').join(''));
      fs.writeSync(fd, INDEXES.map((i) => JSON.stringify({ $$indexCreated: i }) + '\n').join(''));
      fs.closeSync(fd);
      db = null;
    },
    async openAndQuery(pwi) {
      db = new Datastore({ filename: datafile });
      await db.loadDatabaseAsync();
      return (await db.findAsync({ pwi })).length;
    },
    fileBytes: () => (fs.existsSync(datafile) ? fs.statSync(datafile).size : 0),
    close() { db = dp = null; fs.rmSync(datafile, { force: true }); },
  };
}
