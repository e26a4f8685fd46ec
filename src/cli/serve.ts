/** `consolidata serve`: a store file over HTTP, optionally seeded with the sample data. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamicStore } from '../dynamic.js';
import { basicAuth } from '../http/auth.js';
import { createNodeHandler } from '../http/node.js';
import { sampleData } from '../sample.js';

export interface ServeOptions {
  db: string;
  port: number;
  host: string;
  sample?: boolean;
  /** Path of a JSON file `{ appId: secret, … }`; enables HTTP Basic auth. */
  basicAuthFile?: string;
  log?: (line: string) => void;
}

export interface Running {
  server: Server;
  store: DynamicStore;
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the store. */
  stop: (graceMs?: number) => Promise<void>;
}

/** Loads `sampleData()` when the Well table is empty; returns how many documents went in. */
export async function loadSample(store: DynamicStore): Promise<number> {
  const probe = await store.query('Well', {}, { limit: 1 });
  if (!probe.success || probe.total > 0) return 0;
  const { wells, daily } = sampleData();
  let n = 0;
  for (const [type, docs] of [['Well', wells], ['DailyProduction', daily]] as const) {
    for (let i = 0; i < docs.length; i += 10_000) {
      const env = await store.insert(type, docs.slice(i, i + 10_000));
      if (!env.success) throw new Error(`loading sample ${type}: ${env.message}`);
      n += env.count;
    }
  }
  return n;
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
  const store = DynamicStore.open(opts.db);
  try {
    if (opts.sample) {
      const n = await loadSample(store);
      if (n) log(`loaded ${n} sample documents (Well, DailyProduction) into ${opts.db}`);
    }
    const handler = createNodeHandler(store, { authenticate, onError: (e) => log(`internal error: ${(e as Error)?.stack ?? e}`) });
    const server = createServer((req, res) => handler(req, res));
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
      store.close();
    };
    return { server, store, url, stop };
  } catch (e) {
    store.close();
    throw e;
  }
}
