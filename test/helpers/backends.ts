/**
 * The backends the shared suites run against (hono's runTest idea): one suite, given a store factory, runs the same
 * assertions on SQLite (a new in-memory store per `open`, as the suites always did) and on PostgreSQL (a throwaway
 * cluster per test file, a schema per set of schema options, emptied before it is handed out again).
 *
 * With CONSOLIDATA_BACKENDS=citus (`npm run test:citus`, vitest.citus.config.ts) the same suites run on Citus alone:
 * `backends()` answers the citus backend (a coordinator and two workers per test file, stores opened with
 * `citus: true`), and `postgresBackend()` answers it too, so a suite that adds a PostgreSQL variant runs it there.
 *
 *   describe.each(backends())('$name', (backend) => { it('…', async () => { const store = await backend.open(); … }) });
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { DataStore, type OpenOptions } from '../../src/index.js';
import { openPostgres } from '../../src/postgres/index.js';
import { startCitus, startCluster, type PgCluster } from '../../scripts/pg-cluster.mjs';

export interface StoreBackend {
  readonly name: 'sqlite' | 'sqlite (documentCache)' | 'postgres' | 'postgres (own pool)' | 'citus' | 'citus (own pool)';
  /** True for the Citus cluster (README "Citus": a document's distribution field cannot change). */
  readonly citus: boolean;
  /** False on Citus, which refuses the change feed (its order is one server's sequence and lock). */
  readonly changeFeed: boolean;
  /** A store holding no documents, opened with `options`: isolated from every other store open at the time. */
  open(options?: OpenOptions): Promise<DataStore>;
}

export const sqlite: StoreBackend = {
  name: 'sqlite',
  citus: false,
  changeFeed: true,
  open: async (options) => DataStore.open(':memory:', options),
};

/** SQLite with the document cache on: the same suites answered from parsed, frozen documents (README "Document cache"). */
export const sqliteCached: StoreBackend = {
  name: 'sqlite (documentCache)',
  citus: false,
  changeFeed: true,
  open: async (options) => DataStore.open(':memory:', { documentCache: { maxBytes: 64 * 1024 * 1024 }, ...options }),
};

/** The cluster of the calling test file (started by `postgres()`'s beforeAll). */
let cluster: PgCluster | undefined;
let pool: pg.Pool | undefined;

/**
 * The file's cluster: its connection string (for the CLI, child processes) and a pool of it.
 * @example const { cluster, pool } = pgCluster(); await openPostgres(cluster.url, { schema: 'x' });
 */
export function pgCluster(): { cluster: PgCluster; pool: pg.Pool } {
  if (!cluster || !pool) throw new Error('the PostgreSQL cluster is not started: call postgresBackend() at the top of the test file');
  return { cluster, pool };
}

/** Schemas made so far, by schema-shaping options; each remembers the store using it. */
const schemas = new Map<string, { name: string; store?: DataStore }[]>();
let made = 0;

/** Options that change the tables and indexes (the others live in the store, not the schema). */
function shapeOf(options: OpenOptions): string {
  // The journal's options make triggers and tables: a schema per set of them too.
  const journal = [options.history ?? null, options.changeFeed ?? null, options.changeRetention ?? null, options.softDelete ?? null];
  return JSON.stringify([options.indexes ?? null, options.uniqueKeys ?? null, options.types ?? null, options.schemaVersion ?? null, ...journal]);
}

/**
 * Empties a schema (DELETE: far cheaper than TRUNCATE on small tables, thousands of times per property test). The
 * journal's triggers fire on those deletes, so its own tables are emptied last and the feed's seq starts over.
 */
async function empty(p: pg.Pool, schema: string): Promise<void> {
  const { rows } = await p.query<{ t: string; name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS t, tablename AS name FROM pg_tables WHERE schemaname = $1 AND (tablename LIKE 'docs\\_%' OR tablename = 'cd_changes')`,
    [schema],
  );
  const journal = (n: string) => n === 'cd_changes' || n === 'docs_VersionDocument';
  const statements = [...rows.filter((r) => !journal(r.name)), ...rows.filter((r) => journal(r.name))].map((r) => `DELETE FROM ${r.t}`);
  if (rows.some((r) => r.name === 'cd_changes')) statements.push(`ALTER SEQUENCE ${pg.escapeIdentifier(schema)}.cd_changes_seq_seq RESTART`);
  if (statements.length) await p.query(statements.join(';'));
}

let hooked = false;

/**
 * A PostgreSQL store factory; the first call of a test file registers its cluster's start (beforeAll) and stop
 * (afterAll). Stores share the file's pool of 4, as an application passing its own `pg.Pool` does; with `ownPool`
 * each store is opened from the connection string instead and makes (and ends) a pool of its own, the other path.
 * @example const backend = postgresBackend(); it('…', async () => { const store = await backend.open(); … });
 */
export function postgresBackend(options: { ownPool?: boolean } = {}): StoreBackend {
  const citus = onCitus();
  if (!hooked) {
    hooked = true;
    beforeAll(async () => {
      // Four shards a table, two per worker: every statement across shards still meets both workers, and creating
      // the ~20 tables of a store stays quick (Citus's default of 32 takes seconds per schema).
      cluster = citus ? await startCitus({ shards: 4 }) : startCluster();
      pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
    }, 180_000);
    afterAll(async () => {
      await pool?.end();
      cluster?.stop();
      pool = undefined;
      cluster = undefined;
      schemas.clear();
    });
  }
  return {
    name: citus ? (options.ownPool ? 'citus (own pool)' : 'citus') : options.ownPool ? 'postgres (own pool)' : 'postgres',
    citus,
    changeFeed: !citus,
    async open(storeOptions = {}) {
      const { pool: p } = pgCluster();
      const shape = shapeOf(storeOptions);
      let list = schemas.get(shape);
      if (!list) schemas.set(shape, (list = []));
      // A schema whose store was closed is emptied and handed out again; otherwise a new one is made.
      let slot = list.find((s) => !s.store || s.store.closed);
      if (slot) await empty(p, slot.name);
      else list.push((slot = { name: `t${++made}` }));
      const store = await openPostgres(options.ownPool ? pgCluster().cluster.url : p, {
        ...storeOptions,
        schema: slot.name,
        ...(options.ownPool ? { pool: { max: 2 } } : {}),
        ...(citus ? { citus: true } : {}),
      });
      slot.store = store as DataStore;
      return store as DataStore;
    },
  };
}

/** True in the Citus suite (CONSOLIDATA_BACKENDS=citus): the PostgreSQL backend is a Citus cluster, and it alone runs. */
function onCitus(): boolean {
  return process.env.CONSOLIDATA_BACKENDS === 'citus';
}

/**
 * Both backends for a shared suite: SQLite first, then PostgreSQL (its cluster's lifetime is the calling file's); in
 * the Citus suite, Citus alone.
 * @example describe.each(backends())('$name', (backend) => { … })
 */
export function backends(): StoreBackend[] {
  return onCitus() ? [postgresBackend()] : [sqlite, sqliteCached, postgresBackend()];
}
