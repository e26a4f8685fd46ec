/**
 * `consolidata/postgres`: the same store over PostgreSQL. The core entry never loads this file nor `pg`
 * (node-postgres, an optional peer dependency): only `openPostgres` does, when it makes a pool.
 * @example
 * // openPostgres is the one export of the `consolidata/postgres` entry most code needs.
 * const store = await openPostgres('postgres://etl@127.0.0.1/wells', { schema: 'consolidata', pool: { max: 10 } });
 * await store.insert('Well', [{ pwi: 'W1', basinName: 'Permian' }]);
 * await store.close();
 */
import type { BuiltinCatalogue, CatalogueShape } from '../catalogue/index.js';
import { describe } from '../catalogue/validate.js';
import { resolveSettings, type OpenOptions } from '../settings.js';
import { DataStore, DynamicStore } from '../store.js';
import { PostgresBackend, type PgPoolLike } from './backend.js';
import { distributionOf } from './citus.js';

export type { PgClientLike, PgPoolLike } from './backend.js';
export { DISTRIBUTION, distributionOf, citusStatements } from './citus.js';

export interface PostgresOptions<C extends CatalogueShape = BuiltinCatalogue> extends OpenOptions<C> {
  /** The schema of the store's tables (default `public`); created when missing. */
  schema?: string;
  /** The pool the store makes from a connection string (ignored when you pass your own pool). */
  pool?: { max?: number };
  /**
   * Citus layout, on the coordinator of a Citus cluster: a distribution column `dk` in every table and in every unique
   * index, filled from the type's distribution field (`pwi` for well-centric types, see DISTRIBUTION), so a query
   * fixing that field runs on one shard; opening distributes every table (README "Citus"). Refused on a database
   * without the Citus extension, and with `changeFeed`.
   */
  citus?: boolean;
}

const OWN_OPTIONS = ['schema', 'pool', 'citus'];

function isPool(v: unknown): v is PgPoolLike {
  return typeof v === 'object' && v !== null && typeof (v as PgPoolLike).connect === 'function' && typeof (v as PgPoolLike).end === 'function';
}

/** node-postgres, loaded only here: a missing optional peer dependency gets a message saying what to install. */
async function loadPg(): Promise<{ Pool: new (config: Record<string, unknown>) => PgPoolLike & { on(event: 'error', f: (e: Error) => void): unknown } }> {
  try {
    const mod = (await import('pg')) as unknown as { default?: unknown; Pool?: unknown };
    return (mod.Pool ? mod : mod.default) as Awaited<ReturnType<typeof loadPg>>;
  } catch (e) {
    throw new Error('openPostgres needs the pg package (node-postgres): npm install pg', { cause: e });
  }
}

/**
 * Opens a store over PostgreSQL: a connection string (the store makes a pool of `pool.max` connections, default 10,
 * and ends it on `close()`; a `schema` query parameter names the schema unless `options.schema` does), or a `pg.Pool`
 * of yours (left open on `close()`: it is yours). Creates the schema's
 * tables and indexes when missing; takes every option of `DataStore.open`, plus `schema`, `pool` and `citus`.
 * Misuse (a bad option, a non-UTF8 database, an unreachable server) rejects.
 * @example
 * const store = await openPostgres(process.env.DATABASE_URL!, { schema: 'wells', userId: 'etl' });
 * const page = await store.query('Well', { basinName: 'Permian' }, { sortBy: 'spudDate', limit: 50 });
 */
export async function openPostgres<C extends CatalogueShape = BuiltinCatalogue>(source: string | PgPoolLike, options: PostgresOptions<C> = {}): Promise<DataStore<C>> {
  if (typeof source !== 'string' && !isPool(source)) throw new TypeError(`openPostgres: expected a connection string or a pg.Pool, got ${describe(source)}`);
  if (typeof source === 'string' && source === '') throw new TypeError('openPostgres: the connection string is empty');
  const settings = resolveSettings(options as OpenOptions<CatalogueShape>, 'openPostgres', OWN_OPTIONS);
  // Refused rather than silently not kept.
  if (options.mmapSize !== undefined) throw new TypeError('openPostgres: mmapSize maps a SQLite file; a PostgreSQL store has no such setting');
  if (options.documentCache !== undefined) throw new TypeError('openPostgres: documentCache keeps documents of a SQLite store; a PostgreSQL store has no such setting');
  if (options.citus && settings.changeFeed) {
    // Its order is one sequence and one advisory lock of one server; on Citus each worker's triggers write the events.
    throw new TypeError(
      'openPostgres: changeFeed is not available with the Citus layout: the feed is ordered by one sequence and one lock of one server, and on Citus each worker writes its own events; use history or the activity log',
    );
  }
  // A `schema` parameter of the connection string names the schema (a store configured by one URL); pg never sees it.
  // Its query string is read apart: a socket URL (`postgres://u@/db?host=/run/postgresql`) is no WHATWG URL.
  let url = typeof source === 'string' ? source : '';
  let fromUrl: string | undefined;
  const at = url.indexOf('?');
  if (at >= 0) {
    const query = new URLSearchParams(url.slice(at + 1));
    const named = query.get('schema');
    if (named !== null) {
      fromUrl = named;
      query.delete('schema');
      url = url.slice(0, at) + (query.size ? `?${query.toString()}` : '');
    }
  }
  const schema = options.schema ?? fromUrl ?? 'public';
  if (typeof schema !== 'string' || schema === '' || Buffer.byteLength(schema) > 63 || schema.includes('\u0000')) {
    throw new TypeError('openPostgres: schema must be a non-empty name of at most 63 bytes');
  }
  const max = options.pool?.max ?? 10;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('openPostgres: pool.max must be a positive integer');
  if (options.citus !== undefined && typeof options.citus !== 'boolean') throw new TypeError('openPostgres: citus must be a boolean');
  let pool: PgPoolLike;
  const owns = typeof source === 'string';
  if (owns) {
    const { Pool } = await loadPg();
    const lockTimeout = Math.max(0, Math.floor(settings.busyTimeoutMs));
    // lock_timeout is set once per connection, at connect: writes then need no SET LOCAL round trip.
    const own = new Pool({ connectionString: url, max, options: `-c lock_timeout=${lockTimeout}`, application_name: 'consolidata' });
    // An idle connection the server drops emits 'error' on the pool: without a listener it would end the process.
    own.on('error', (e) => settings.onError?.(e, 'pool'));
    pool = own;
  } else pool = source;
  const distribution = options.citus ? distributionOf(settings.catalogue) : undefined;
  let backend: PostgresBackend;
  try {
    backend = await PostgresBackend.open(pool, settings, { schema, ownsPool: owns, lockTimeoutSet: owns, distribution });
  } catch (e) {
    if (owns) await pool.end().catch(() => undefined);
    throw e;
  }
  return DataStore.of<C>(DynamicStore.over(backend, settings));
}
