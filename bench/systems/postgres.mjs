/** consolidata over PostgreSQL through its public API (the built dist/postgres.js), as users run it. */
import pg from 'pg';
import { AGGREGATES, tallyRows } from '../aggregate.mjs';

function must(env) {
  if (!env.success) throw new Error(`consolidata (postgres): ${env.message} ${JSON.stringify(env.errors.slice(0, 3))}`);
  return env;
}

const SCHEMA = 'bench_pg';

export async function create({ pgUrl, postgres, storeOptions }) {
  const { openPostgres } = postgres;
  // An admin connection of the bench's own, to drop the schema between bulk-insert reps and read sizes.
  const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
  let store;
  const open = () => openPostgres(pgUrl, { ...storeOptions, schema: SCHEMA, pool: { max: 4 } });
  const q = async (query, options) => must(await store.query('Well', query, options));

  return {
    name: 'pg',
    async reset() {
      await store?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      store = await open();
    },
    async bulkInsert(docs) { return must(await store.insert('Well', docs)).count; },
    // Statistics for the planner, as autovacuum would gather them on a server that lives longer than a bench.
    async analyze() { await admin.query('ANALYZE'); },
    async insertOne(doc) { return must(await store.insert('Well', [doc])).count; },
    async removePwis(list) { return must(await store.delete('Well', { pwi: { in: list } })).count; },
    eqPwi: async (pwi) => (await q({ pwi })).count,
    inPwi: async (list) => (await q({ pwi: { in: list } })).count,
    dateRange: async (gte, lt) => (await q({ spudDate: { gte, lt } })).count,
    numGt: async (v) => (await q({ lateralLength: { gt: v } })).count,
    regexPrefix: async (p) => (await q({ name: { regex: `^${p}` } })).count,
    bounds: async (b) => (await q({ surfaceLoc: { bounds: b } })).count,
    polygon: async (rings) => (await q({ surfaceLoc: { polygon: rings } })).count,
    async combined(b, status) {
      const r = await q({ surfaceLoc: { bounds: b }, statusCurrent: status }, { sortBy: 'spudDate', sortOrder: -1, limit: 50 });
      return `${r.count}/${r.total}`;
    },
    async updateMany(basin, value) { return must(await store.update('Well', { basinName: basin }, { statusCurrent: value })).count; },
    async deleteMany(gte, lt) { return must(await store.delete('Well', { spudDate: { gte, lt } })).count; },
    async dpBulkInsert(rows) { return must(await store.insert('DailyProduction', rows)).count; },
    monthlyPerWell: async () => tallyRows(must(await store.aggregate('DailyProduction', {}, AGGREGATES.monthlyPerWell)).data),
    monthlyPerBasin: async () => tallyRows(must(await store.aggregate('DailyProduction', {}, AGGREGATES.monthlyPerBasin)).data),
    dpHistory: async (pwi) => must(await store.query('DailyProduction', { pwi }, { sortBy: 'prodDate' })).count,
    async closeForOpen() { await store.close(); },
    async openAndQuery(pwi) {
      store = await open();
      return (await q({ pwi })).count;
    },
    async bytes() {
      const { rows } = await admin.query(`SELECT pg_total_relation_size(format('%I.%I', $1::text, 'docs_Well')) AS n`, [SCHEMA]);
      return Number(rows[0].n);
    },
    async close() {
      await store?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await admin.end();
    },
  };
}
