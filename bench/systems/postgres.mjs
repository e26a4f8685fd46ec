/** consolidata over PostgreSQL through its public API (the built dist/postgres.js), as users run it. */
import pg from 'pg';
import { apiWorkloads, mustOf } from './api.mjs';

const must = mustOf('consolidata (postgres)');

const SCHEMA = 'bench_pg';

export async function create({ pgUrl, postgres, storeOptions }) {
  const { openPostgres } = postgres;
  // An admin connection of the bench's own, to drop the schema between bulk-insert reps and read sizes.
  const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
  let store;
  const open = () => openPostgres(pgUrl, { ...storeOptions, schema: SCHEMA, pool: { max: 4 } });
  const { q, ...shared } = apiWorkloads(() => store, must);

  return {
    ...shared,
    name: 'pg',
    async reset() {
      await store?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      store = await open();
    },
    // Statistics for the planner, as autovacuum would gather them on a server that lives longer than a bench.
    async analyze() { await admin.query('ANALYZE'); },
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
