/**
 * The limit on PostgreSQL: hand-written SQL through node-postgres on the store's own layout (`doc jsonb` for queries,
 * `body text` for answers). The schema (tables, expression and GiST indexes) is made by openPostgres, so both sides
 * run on the same shape; every statement below is written by hand, each request one round trip where it can be.
 */
import pg from 'pg';
import { inRings } from '../geo.mjs';
import { tallyRows } from '../aggregate.mjs';

const SCHEMA = 'bench_pgsql';
const W = `${SCHEMA}."docs_Well"`;
const D = `${SCHEMA}."docs_DailyProduction"`;
const T = (f) => `((doc ->> '${f}') COLLATE "C")`;
const X = `(doc -> 'surfaceLoc' -> 'coordinates' ->> 0)`;
const Y = `(doc -> 'surfaceLoc' -> 'coordinates' ->> 1)`;
// The GiST index's own expression (points rounded to 1e-6°), then the exact box on the stored doubles.
const POINT = `point(round(${X}::numeric, 6)::float8, round(${Y}::numeric, 6)::float8)`;
const BOX = `${POINT} <@ box(point($1::float8 - 2e-6, $2::float8 - 2e-6), point($3::float8 + 2e-6, $4::float8 + 2e-6)) AND ${X}::float8 BETWEEN $1 AND $3 AND ${Y}::float8 BETWEEN $2 AND $4`;

let seq = 0;
const newId = () => (Date.now() * 4096 + (seq++ % 4096)).toString(16).padStart(24, '0');
const parseRows = (rows) => JSON.parse(`[${rows.map((r) => r[0]).join(',')}]`);
const INSERT = (table) => `INSERT INTO ${table} (id, doc, body) SELECT e.j ->> 'id', e.j::jsonb, e.j::text FROM json_array_elements($1::json) WITH ORDINALITY AS e(j, n) ORDER BY e.n`;

export async function create({ pgUrl, postgres, storeOptions }) {
  let pool;
  const stamp = (doc, now) => ({ id: newId(), ...doc, createdAt: now, createdBy: 'bench', updatedAt: now, updatedBy: 'bench', modifiedTimestamp: Date.parse(now), schemaVersion: '5.0.0' });
  const open = () => {
    pool = new pg.Pool({ connectionString: pgUrl, max: 4 });
  };
  const rows = async (text, values) => (await pool.query({ text, values, rowMode: 'array' })).rows;
  const objects = async (text) => (await pool.query(text)).rows;
  /** Many documents in one transaction, 5,000 per statement (a statement's text is parsed in one piece). */
  async function insertMany(table, docs) {
    const now = new Date().toISOString();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (let i = 0; i < docs.length; i += 5000) {
        const json = `[${docs.slice(i, i + 5000).map((d) => JSON.stringify(stamp(d, now))).join(',')}]`;
        await client.query({ text: INSERT(table), values: [json] });
      }
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    } finally {
      client.release();
    }
    return docs.length;
  }
  const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });

  return {
    name: 'pgsql',
    async reset() {
      await pool?.end();
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await (await postgres.openPostgres(admin, { ...storeOptions, schema: SCHEMA })).close();
      open();
    },
    bulkInsert: (docs) => insertMany(W, docs),
    async analyze() { await admin.query('ANALYZE'); },
    async insertOne(doc) {
      const d = stamp(doc, new Date().toISOString());
      await rows(`INSERT INTO ${W} (id, doc, body) VALUES ($1, $2::jsonb, $2::text)`, [d.id, JSON.stringify(d)]);
      return 1;
    },
    async removePwis(list) { return (await pool.query({ text: `DELETE FROM ${W} WHERE ${T('pwi')} = ANY($1::text[])`, values: [list] })).rowCount; },
    eqPwi: async (pwi) => parseRows(await rows(`SELECT body FROM ${W} WHERE ${T('pwi')} = $1`, [pwi])).length,
    inPwi: async (list) => parseRows(await rows(`SELECT body FROM ${W} WHERE ${T('pwi')} = ANY($1::text[])`, [list])).length,
    dateRange: async (gte, lt) => parseRows(await rows(`SELECT body FROM ${W} WHERE ${T('spudDate')} >= $1 AND ${T('spudDate')} < $2`, [gte, lt])).length,
    numGt: async (v) => parseRows(await rows(`SELECT body FROM ${W} WHERE (doc ->> 'lateralLength')::numeric > $1`, [v])).length,
    // A prefix regex is a range on the (indexed) name: [prefix, prefix with its last character + 1).
    regexPrefix: async (p) => parseRows(await rows(`SELECT body FROM ${W} WHERE ${T('name')} >= $1 AND ${T('name')} < $2`, [p, p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1)])).length,
    bounds: async (b) => parseRows(await rows(`SELECT body FROM ${W} WHERE ${BOX}`, b)).length,
    async polygon(rings, b) {
      const candidates = await rows(`SELECT body, ${X}, ${Y} FROM ${W} WHERE ${BOX}`, b);
      return parseRows(candidates.filter((r) => inRings(rings, Number(r[1]), Number(r[2])))).length;
    },
    async combined(b, status) {
      const [[total, page]] = await rows(
        `SELECT (SELECT count(*) FROM ${W} WHERE ${BOX} AND ${T('statusCurrent')} = $5), ` +
          `(SELECT string_agg(p.body, ',' ORDER BY p.k DESC NULLS LAST, p.seq) FROM (SELECT body, ${T('spudDate')} AS k, seq FROM ${W} WHERE ${BOX} AND ${T('statusCurrent')} = $5 ORDER BY ${T('spudDate')} DESC NULLS LAST, seq LIMIT 50) AS p)`,
        [...b, status],
      );
      return `${page === null ? 0 : JSON.parse(`[${page}]`).length}/${Number(total)}`;
    },
    async updateMany(basin, value) {
      const now = new Date().toISOString();
      const set = JSON.stringify({ statusCurrent: value, updatedAt: now, updatedBy: 'bench', modifiedTimestamp: Date.parse(now) });
      // The body keeps its key order: members are replaced where they are, new ones appended (json_each keeps order).
      const body =
        `(SELECT '{' || string_agg(to_json(e.key)::text || ':' || COALESCE(n.value::text, e.value::text), ',' ORDER BY e.o) || ` +
        `COALESCE((SELECT string_agg(',' || to_json(a.key)::text || ':' || a.value::text, '' ORDER BY a.o) FROM json_each($1::json) WITH ORDINALITY AS a(key, value, o) ` +
        `WHERE NOT (doc ? a.key)), '') || '}' FROM json_each(body::json) WITH ORDINALITY AS e(key, value, o) LEFT JOIN json_each($1::json) AS n ON n.key = e.key)`;
      const r = await pool.query({ text: `UPDATE ${W} SET body = ${body}, doc = doc || $1::jsonb WHERE ${T('basinName')} = $2`, values: [set, basin] });
      return r.rowCount;
    },
    async deleteMany(gte, lt) { return (await pool.query({ text: `DELETE FROM ${W} WHERE ${T('spudDate')} >= $1 AND ${T('spudDate')} < $2`, values: [gte, lt] })).rowCount; },
    dpBulkInsert: (docs) => insertMany(D, docs),
    monthlyPerWell: async () => tallyRows(await objects(`SELECT ${T('pwi')} AS pwi, left(${T('prodDate')}, 7) || '-01T00:00:00.000Z' AS month, sum((doc ->> 'oilVol')::numeric)::float8 AS oil FROM ${D} GROUP BY 1, 2 ORDER BY 1, 2`)),
    monthlyPerBasin: async () => tallyRows(await objects(`SELECT (doc -> 'extra' ->> 'basin') COLLATE "C" AS basin, left(${T('prodDate')}, 7) || '-01T00:00:00.000Z' AS month, sum((doc ->> 'oilVol')::numeric)::float8 AS oil FROM ${D} GROUP BY 1, 2 ORDER BY 1, 2`)),
    dpHistory: async (pwi) => parseRows(await rows(`SELECT body FROM ${D} WHERE ${T('pwi')} = $1 ORDER BY ${T('prodDate')} NULLS FIRST, seq`, [pwi])).length,
    async closeForOpen() { await pool.end(); },
    async openAndQuery(pwi) {
      open();
      return parseRows(await rows(`SELECT body FROM ${W} WHERE ${T('pwi')} = $1`, [pwi])).length;
    },
    async bytes() {
      const { rows: r } = await admin.query(`SELECT pg_total_relation_size(format('%I.%I', $1::text, 'docs_Well')) AS n`, [SCHEMA]);
      return Number(r[0].n);
    },
    async close() {
      await pool?.end();
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await admin.end();
    },
  };
}
