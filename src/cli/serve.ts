/** `consolidata serve`: a store file over HTTP, optionally seeded with the sample data. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamicStore } from '../store.js';
import { basicAuth } from '../http/auth.js';
import { createNodeHandler } from '../http/node.js';
import { configureServer } from '../http/server.js';
import { sampleData } from '../sample.js';
import { createPool, type PooledStore } from '../pool/pool.js';
import { isPostgresUrl, openDb, shownDb, type JournalOptions } from './db.js';

export interface ServeOptions {
  /** A SQLite file (created if missing) or a PostgreSQL connection string (`postgres://…`, `?schema=` names the schema). */
  db: string;
  port: number;
  host: string;
  sample?: boolean;
  /** Path of a JSON file `{ appId: secret, … }`; enables HTTP Basic auth. */
  basicAuthFile?: string;
  /**
   * SQLite: worker threads that serve reads (default: the CPU count); one more serves cheap queries, one more
   * writes. 0 serves every request on the main thread, without isolation or time bound (the single-thread server,
   * kept for comparison and for debugging).
   */
  workers?: number;
  /** SQLite: a request still running after this long is stopped and answers 503 TIMEOUT (default 30,000; 0: never). */
  maxQueryMs?: number;
  /** History, change feed, activity log, soft delete (README "Journal"); once on, the file keeps history, feed and soft delete. */
  journal?: JournalOptions;
  /**
   * SQLite: bytes of the file mapped for reads, on every connection (default 2 GiB; 0: read through `read()` alone,
   * for a file the OS does not keep cached: README "Cold files"). A PostgreSQL database refuses it.
   */
  mmapSize?: number;
  /** SQLite: the pool's worker script (default: dist/pool-worker.js beside the CLI); tests pass a bundle. */
  workerScript?: string;
  /** The explorer's built files, served at `/` (default: dist/explorer beside the CLI); tests pass a fresh build. */
  explorerDir?: string;
  log?: (line: string) => void;
}

/** How long `serve` lets a request run before it stops it (503 TIMEOUT): full scans of a few million documents fit. */
export const DEFAULT_MAX_QUERY_MS = 30_000;
/** Requests waiting per lane beyond which `serve` answers 503 at once instead of queueing them. */
export const DEFAULT_MAX_QUEUED = 1000;

export interface Running {
  server: Server;
  /** A SQLite file is served by a pool of worker threads; PostgreSQL by its store (its queries never block this thread). */
  store: DynamicStore | PooledStore;
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the store. */
  stop: (graceMs?: number) => Promise<void>;
}

/** How `serve --sample` reports a load, e.g. `87,840 sample documents (240 Well, 87,600 DailyProduction)`; the README quotes it. */
export function sampleSummary(counts: readonly { type: string; count: number }[]): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const total = counts.reduce((sum, c) => sum + c.count, 0);
  return `${n(total)} sample documents (${counts.map((c) => `${n(c.count)} ${c.type}`).join(', ')})`;
}

/**
 * Loads `sampleData()` when the Well table is empty, in one transaction: a run stopped midway leaves nothing
 * half-loaded, so the next run loads it whole. Answers the documents loaded per type (none: it was loaded before).
 */
export async function loadSample(store: DynamicStore): Promise<{ type: string; count: number }[]> {
  const probe = await store.query('Well', {}, { limit: 1 });
  if (!probe.success || probe.total > 0) return [];
  const parts = Object.entries(sampleData()).map(([type, docs]) => ({ type, docs }));
  const envs = await store.insertMany(parts);
  const failed = envs.findLastIndex((e) => !e.success);
  if (failed >= 0) throw new Error(`loading the sample (${parts[failed]?.type ?? 'request'}): ${envs[failed]!.message}; nothing was loaded`);
  return parts.map((p, i) => ({ type: p.type, count: envs[i]!.count }));
}

function readApps(file: string): Record<string, string> {
  let apps: unknown;
  try {
    apps = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`--basic-auth ${file}: ${(e as Error).message}`);
  }
  if (apps === null || typeof apps !== 'object' || Array.isArray(apps) || Object.keys(apps).length === 0) {
    throw new Error(`--basic-auth ${file}: expected a JSON object { "appId": "secret", … } with at least one entry`);
  }
  return apps as Record<string, string>;
}

/**
 * Opens the store and starts the server.
 * @example const { url, stop } = await serve({ db: 'wells.db', port: 0, host: '127.0.0.1' });
 */
export async function serve(opts: ServeOptions): Promise<Running> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const authenticate = opts.basicAuthFile ? basicAuth(readApps(opts.basicAuthFile)) : undefined;
  const stack = (e: unknown) => (e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e));
  // Every 500 is logged with its cause; the answer itself only says "internal error" (and the request id).
  const onError = (e: unknown, requestId: string) => log(`internal error (request ${requestId}): ${stack(e)}`);
  if (opts.mmapSize !== undefined && isPostgresUrl(opts.db)) throw new Error('--mmap-size maps a SQLite file; a PostgreSQL database has no such setting');
  const opened = await openDb(opts.db, { create: true, onError, journal: opts.journal, mmapSize: opts.mmapSize });
  if (typeof opened === 'string') throw new Error(opened);
  let store: DynamicStore | PooledStore = opened;
  try {
    if (opts.sample) {
      const loaded = await loadSample(opened);
      if (loaded.length) log(`loaded ${sampleSummary(loaded)} into ${shownDb(opts.db)}`);
    }
    if (!isPostgresUrl(opts.db) && opts.workers !== 0) {
      // Worker threads serve a SQLite file: a slow query or a lock wait never stalls the other requests, and each
      // is time-bounded. The store opened above (schema, sample) is closed first.
      await opened.close();
      const maxQueryMs = opts.maxQueryMs ?? DEFAULT_MAX_QUERY_MS;
      store = await createPool(opts.db, {
        ...(opts.journal ?? {}),
        ...(opts.mmapSize !== undefined ? { mmapSize: opts.mmapSize } : {}),
        onError,
        maxQueryMs: maxQueryMs === 0 ? Infinity : maxQueryMs,
        maxQueued: DEFAULT_MAX_QUEUED,
        ...(opts.workers ? { readers: opts.workers } : {}),
        ...(opts.workerScript ? { workerScript: opts.workerScript } : {}),
      });
    }
    // The explorer at `/`, beside the API under /api, behind the same credentials.
    const explorer = { path: '/', ...(opts.explorerDir ? { dir: opts.explorerDir } : {}) };
    const handler = createNodeHandler(store, { authenticate, explorer, onError: (e) => log(`internal error: ${stack(e)}`) });
    // Deliberate socket timeouts, and Node's own refusals (malformed, headers too large, too slow) as JSON envelopes.
    const server = configureServer(createServer((req, res) => handler(req, res)));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
    const url = `http://${host}:${port}/api`;
    const stop = async (graceMs = 5000) => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await store.close();
    };
    return { server, store, url, stop };
  } catch (e) {
    await store.close();
    throw e;
  }
}
