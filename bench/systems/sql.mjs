/**
 * The limit: hand-written better-sqlite3 SQL on the store's own JSONB layout. The schema (tables, expression
 * indexes, R*Trees and their triggers) is created by DataStore.open on the file, so both sides run on the same
 * shape; every statement below is written by hand and prepared once.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { capBox, inRings } from '../geo.mjs';

const W = 'docs_Well';
const D = 'docs_DailyProduction';
const X = (f) => `json_extract(doc, '$."${f}"')`;
const PX = `json_extract(doc, '$."surfaceLoc"."coordinates"[0]')`;
const PY = `json_extract(doc, '$."surfaceLoc"."coordinates"[1]')`;
const RT = `SELECT id FROM "rtree._well.surface_loc" WHERE minX <= ? AND maxX >= ? AND minY <= ? AND maxY >= ?`;
const BOX = `${W}.rowid IN (${RT}) AND ${PX} BETWEEN ? AND ? AND ${PY} BETWEEN ? AND ?`;

// Haversine in SQL (SQLite's math functions), from the centre's latitude and longitude in radians and its latitude's cosine.
const DIST = `(12742017.6 * asin(min(1, sqrt(power(sin((${PY} * 0.017453292519943295 - ?) / 2), 2) + ? * cos(${PY} * 0.017453292519943295) * power(sin((${PX} * 0.017453292519943295 - ?) / 2), 2)))))`;
const distParams = ([lon, lat]) => [lat * (Math.PI / 180), Math.cos(lat * (Math.PI / 180)), lon * (Math.PI / 180)];
const NEAR = `${W}.rowid IN (${RT}) AND ${DIST} <= ?`;
const nearParams = (c, m) => [...boxParams(capBox(c, m)).slice(0, 4), ...distParams(c), m];
const SCAN = `${PX} BETWEEN ? AND ? AND ${PY} BETWEEN ? AND ?`;
const scanParams = (b) => [b[0], b[2], b[1], b[3]];
const boxParams = (b) => [b[2], b[0], b[3], b[1], b[0], b[2], b[1], b[3]];
const parseRows = (rows) => JSON.parse(`[${rows.join(',')}]`);

let seq = 0;
// Time-ordered ids, as the store makes them: the id index stays append-only.
const newId = () => (Date.now() * 4096 + (seq++ % 4096)).toString(16).padStart(24, '0');

export async function create({ file, DataStore, storeOptions }) {
  let db;
  let st;
  let rings = null;
  const stamp = (doc, now) => ({ id: newId(), ...doc, createdAt: now, createdBy: 'bench', updatedAt: now, updatedBy: 'bench', modifiedTimestamp: Date.parse(now), schemaVersion: '5.0.0' });

  function open() {
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.function('pip', { deterministic: true }, (x, y) => (inRings(rings, x, y) ? 1 : 0));
    const inList = `(${Array(100).fill('?').join(',')})`;
    // Prepared on first use, once per connection: opening costs only what the first query needs.
    const sql = {
      insW: () => db.prepare(`INSERT INTO ${W} (id, doc) VALUES (?, jsonb(?))`),
      insD: () => db.prepare(`INSERT INTO ${D} (id, doc) VALUES (?, jsonb(?))`),
      eq: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${X('pwi')} = ?`).pluck(),
      in100: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${X('pwi')} IN ${inList}`).pluck(),
      range: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${X('spudDate')} >= ? AND ${X('spudDate')} < ?`).pluck(),
      numGt: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${X('lateralLength')} > ?`).pluck(),
      // A prefix regex is a range on the (indexed) name: [prefix, prefix with its last character + 1).
      prefix: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${X('name')} >= ? AND ${X('name')} < ?`).pluck(),
      bounds: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${BOX}`).pluck(),
      polygon: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${BOX} AND pip(${PX}, ${PY})`).pluck(),
      boundsScan: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${SCAN}`).pluck(),
      polygonScan: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${SCAN} AND pip(${PX}, ${PY})`).pluck(),
      near: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${NEAR}`).pluck(),
      nearPage: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${NEAR} ORDER BY ${DIST}, rowid LIMIT 10`).pluck(),
      nearTotal: () => db.prepare(`SELECT count(*) FROM ${W} WHERE ${NEAR}`).pluck(),
      nearScan: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${DIST} <= ?`).pluck(),
      nearScanPage: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${DIST} <= ? ORDER BY ${DIST}, rowid LIMIT 10`).pluck(),
      nearScanTotal: () => db.prepare(`SELECT count(*) FROM ${W} WHERE ${DIST} <= ?`).pluck(),
      combPage: () => db.prepare(`SELECT json(doc) FROM ${W} WHERE ${BOX} AND ${X('statusCurrent')} = ? ORDER BY ${X('spudDate')} DESC, rowid LIMIT 50`).pluck(),
      combTotal: () => db.prepare(`SELECT count(*) FROM ${W} WHERE ${BOX} AND ${X('statusCurrent')} = ?`).pluck(),
      history: () => db.prepare(`SELECT json(doc) FROM ${D} WHERE ${X('pwi')} = ? ORDER BY ${X('prodDate')}, rowid`).pluck(),
      update: () => db.prepare(`UPDATE ${W} SET doc = jsonb_set(doc, '$."statusCurrent"', ?, '$."updatedAt"', ?, '$."updatedBy"', ?, '$."modifiedTimestamp"', ?) WHERE ${X('basinName')} = ?`),
      del: () => db.prepare(`DELETE FROM ${W} WHERE ${X('spudDate')} >= ? AND ${X('spudDate')} < ?`),
      pageAfter: () => db.prepare(`SELECT seq, json(doc) AS d FROM ${W} WHERE seq > ? ORDER BY seq LIMIT ?`),
      exportAfter: () => db.prepare(`SELECT seq, json(doc) AS d FROM ${W} WHERE ${X('spudDate')} < ? AND seq > ? ORDER BY seq LIMIT 1000`),
      all: () => db.prepare(`SELECT json(doc) FROM ${W}`).pluck(),
      delPwi: () => db.prepare(`DELETE FROM ${W} WHERE ${X('pwi')} IN (SELECT value FROM json_each(?))`),
    };
    const cache = {};
    st = new Proxy(cache, { get: (c, k) => c[k] ?? (c[k] = k === 'comb' ? db.transaction((b, status) => [st.combPage.all(...boxParams(b), status), st.combTotal.get(...boxParams(b), status)]) : sql[k]()) });
  }
  const remove = () => { for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true }); };

  return {
    name: 'sql',
    async reset() {
      db?.close();
      remove();
      DataStore.open(file, storeOptions).close();
      open();
    },
    bulkInsert(docs) {
      const now = new Date().toISOString();
      db.transaction(() => { for (const d of docs) st.insW.run(...idAndText(stamp(d, now))); })();
      return docs.length;
    },
    insertOne(doc) {
      st.insW.run(...idAndText(stamp(doc, new Date().toISOString())));
      return 1;
    },
    // Keyset pages on rowid, parsed row by row.
    pageAll(size) {
      let n = 0;
      let after = 0;
      for (;;) {
        const rows = st.pageAfter.all(after, size);
        for (const r of rows) if (JSON.parse(r.d)) n++;
        if (rows.length < size) return n;
        after = rows[rows.length - 1].seq;
      }
    },
    iterateAll() {
      let n = 0;
      for (const text of st.all.iterate()) if (JSON.parse(text)) n++;
      return n;
    },
    exportRange(lt) {
      let n = 0;
      let after = 0;
      let bytes = 0;
      for (;;) {
        const rows = st.exportAfter.all(lt, after);
        for (const r of rows) {
          bytes += JSON.stringify(JSON.parse(r.d)).length + 1;
          n++;
        }
        if (rows.length < 1000) return bytes > 0 ? n : 0;
        after = rows[rows.length - 1].seq;
      }
    },
    removePwis(list) { return st.delPwi.run(JSON.stringify(list)).changes; },
    eqPwi: (pwi) => parseRows(st.eq.all(pwi)).length,
    inPwi: (list) => parseRows(st.in100.all(...list)).length,
    dateRange: (gte, lt) => parseRows(st.range.all(gte, lt)).length,
    numGt: (v) => parseRows(st.numGt.all(v)).length,
    regexPrefix: (p) => parseRows(st.prefix.all(p, p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1))).length,
    bounds: (b) => parseRows(st.bounds.all(...boxParams(b))).length,
    polygon(r, b) {
      rings = r;
      return parseRows(st.polygon.all(...boxParams(b))).length;
    },
    boundsScan: (b) => parseRows(st.boundsScan.all(...scanParams(b))).length,
    polygonScan(r, b) {
      rings = r;
      return parseRows(st.polygonScan.all(...scanParams(b))).length;
    },
    near: (c, m) => parseRows(st.near.all(...nearParams(c, m))).length,
    nearest(c, m) {
      const [page, total] = db.transaction(() => [st.nearPage.all(...nearParams(c, m), ...distParams(c)), st.nearTotal.get(...nearParams(c, m))])();
      return `${parseRows(page).length}/${total}`;
    },
    nearScan: (c, m) => parseRows(st.nearScan.all(...distParams(c), m)).length,
    nearestScan(c, m) {
      const [page, total] = db.transaction(() => [st.nearScanPage.all(...distParams(c), m, ...distParams(c)), st.nearScanTotal.get(...distParams(c), m)])();
      return `${parseRows(page).length}/${total}`;
    },
    combined(b, status) {
      const [page, total] = st.comb(b, status);
      return `${parseRows(page).length}/${total}`;
    },
    updateMany(basin, value) {
      const now = new Date().toISOString();
      return db.transaction(() => st.update.run(JSON.stringify(value), now, 'bench', Date.parse(now), basin).changes).immediate();
    },
    deleteMany: (gte, lt) => db.transaction(() => st.del.run(gte, lt).changes).immediate(),
    dpBulkInsert(rows) {
      const now = new Date().toISOString();
      db.transaction(() => { for (const d of rows) st.insD.run(...idAndText(stamp(d, now))); })();
      return rows.length;
    },
    dpHistory: (pwi) => parseRows(st.history.all(pwi)).length,
    closeForOpen() { db.close(); },
    openAndQuery(pwi) {
      open();
      return parseRows(st.eq.all(pwi)).length;
    },
    fileBytes: () => fs.statSync(file).size,
    close() { db?.close(); remove(); },
  };
}

function idAndText(doc) {
  return [doc.id, JSON.stringify(doc)];
}
