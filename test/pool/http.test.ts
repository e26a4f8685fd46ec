/**
 * The pool behind the node:http adapter: answers as a plain store's, streamed with backpressure, 503 TIMEOUT, and a
 * client that leaves stops its query.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { createNodeHandler } from '../../src/http/index.js';
import { createPool, type PooledStore } from '../../src/pool/pool.js';
import { tempDir } from '../helpers/store.js';
import { removeBundles, slowWells, SLOW, until, workerScript } from './helpers.js';

const dir = tempDir();
const file = dir.file('http.db');
let pool: PooledStore;
let plain: DynamicStore;
let servers: Server[] = [];

async function listen(store: Parameters<typeof createNodeHandler>[0]): Promise<string> {
  const server = createServer(createNodeHandler(store));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
}

const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${url}/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });

beforeAll(async () => {
  slowWells(file, 4000);
  plain = DynamicStore.open(file);
  pool = await createPool(file, { readers: 1, maxQueryMs: 20_000, workerScript: await workerScript() });
});
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  servers = [];
  await pool?.close();
  await plain?.close();
  dir.cleanup();
  removeBundles();
});

describe('the pool behind the HTTP adapter', () => {
  it('answers as a plain store does, byte for byte; a small answer whole (content-length), a large one streamed', async () => {
    const [viaPool, viaStore] = await Promise.all([listen(pool), listen(plain)]);
    for (const [body, streamed] of [
      [{ type: 'Well', query: { pwi: 'S000001' } }, false],
      [{ type: 'Well', query: {}, options: { limit: 5, skip: 3 } }, false],
      [{ type: 'Well', query: {} }, true],
      [{ type: 'Wel', query: {} }, false],
      [{ type: 'Well', request: 'get', query: null }, true],
    ] as const) {
      const path = 'request' in body ? '/v1/data' : '/data/query';
      const send = (url: string) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const [a, b] = await Promise.all([send(viaPool), send(viaStore)]);
      expect(a.status, JSON.stringify(body)).toBe(b.status);
      expect(await a.text(), JSON.stringify(body)).toBe(await b.text());
      expect(a.headers.get('content-length') === null, JSON.stringify(body)).toBe(streamed);
    }
  });

  it('a pinpoint makes no AbortController on its way (the node bridge makes one when the pool reads it); a query that may wait makes one', async () => {
    const { port } = new URL(await listen(pool));
    const send = (body: unknown) =>
      new Promise<{ count: number }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/data/query', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          let out = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (out += c));
          res.on('end', () => resolve(JSON.parse(out) as { count: number }));
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });
    const Real = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Real {
      constructor() {
        super();
        made++;
      }
    };
    try {
      const main = pool.stats().routed.main;
      expect((await send({ type: 'Well', query: { pwi: 'S000001' } })).count).toBe(1);
      expect(pool.stats().routed.main).toBe(main + 1);
      expect(made).toBe(0);
      expect((await send({ type: 'Well', query: { pwi: { in: ['S000001'] } } })).count).toBe(1);
      expect(made).toBe(1);
    } finally {
      globalThis.AbortController = Real;
    }
  });

  it('a query past maxQueryMs answers 503 TIMEOUT naming the bound', async () => {
    const tight = await createPool(file, { readers: 1, maxQueryMs: 300, workerScript: await workerScript() });
    try {
      const res = await post(await listen(tight), { type: 'Well', query: SLOW });
      expect(res.status).toBe(503);
      const env = (await res.json()) as { errors: { code: string; message: string }[] };
      expect(env.errors[0]).toEqual({ code: 'TIMEOUT', message: 'the request took longer than maxQueryMs (300 ms) and was stopped' });
    } finally {
      await tight.close();
    }
  });

  it('a client that goes away stops its query: the worker is terminated, and the next request is answered', async () => {
    const url = await listen(pool);
    const before = pool.stats();
    const controller = new AbortController();
    const gone = post(url, { type: 'Well', query: SLOW }, controller.signal).catch((e: unknown) => e);
    await until(() => pool.stats().workers.busy > 0, 5000, 'the scan to start');
    controller.abort();
    await gone;
    await until(() => pool.stats().aborts === before.aborts + 1, 5000, 'the abort to reach the pool');
    expect(pool.stats().stopped).toBe(before.stopped + 1);
    expect((await (await post(url, { type: 'Well', query: {}, options: { skip: 3999 } })).json()).count).toBe(1);
  });

  it('a slow reader holds one batch: the worker waits for it (parked), and the answer arrives whole once read', async () => {
    const url = await listen(pool);
    const { port } = new URL(url);
    const body = JSON.stringify({ type: 'Well', query: {} });
    const text = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/api/data/query', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.pause();
        // Not reading: the worker must stop producing and wait.
        until(() => pool.stats().workers.parked === 1, 5000, 'the worker to wait for the reader').then(() => {
          let out = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (out += c));
          res.on('end', () => resolve(out));
          res.resume();
        }, reject);
      });
      req.on('error', reject);
      req.end(body);
    });
    const env = JSON.parse(text) as { count: number; total: number };
    expect(env).toMatchObject({ count: 4000, total: 4000 });
    expect(text).toBe(JSON.stringify(await plain.query('Well', {})));
  });
});
