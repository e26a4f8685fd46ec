/**
 * consolidata on a Citus cluster (`openPostgres(url, { citus: true })`: every table distributed by dk), through the
 * same calls as consolidata on PostgreSQL (./postgres.mjs), so the two compare workload by workload.
 */
import pg from 'pg';
import { create as createPg } from './postgres.mjs';

export async function create({ citusUrl, postgres, storeOptions }) {
  const sys = await createPg({ pgUrl: citusUrl, postgres, storeOptions: { ...storeOptions, citus: true } });
  const admin = new pg.Pool({ connectionString: citusUrl, max: 1 });
  return {
    ...sys,
    name: 'citus',
    // The coordinator's table is empty: the shards on the workers hold the rows.
    async bytes() {
      const { rows } = await admin.query(`SELECT citus_total_relation_size(format('%I.%I', 'bench_pg', 'docs_Well')) AS n`);
      return Number(rows[0].n);
    },
    async close() {
      await sys.close();
      await admin.end();
    },
  };
}
