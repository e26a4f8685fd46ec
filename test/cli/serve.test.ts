import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore, type SqliteDynamicStore } from '../../src/store.js';
import { loadSample, serve } from '../../src/cli/serve.js';
import type { PooledStore } from '../../src/pool/pool.js';
import { crashingWorkerScript, removeBundles, workerScript } from '../pool/helpers.js';

describe('serve', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'consolidata-serve-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    removeBundles();
  });

  it('--sample loads in one transaction: a failure in DailyProduction leaves no Wells behind', async () => {
    // Unique by wellId, every Well's second day of production collides: the DailyProduction part fails.
    const store = DynamicStore.open(':memory:', { uniqueKeys: { DailyProduction: [['wellId']] } });
    await expect(loadSample(store)).rejects.toThrow(/loading the sample \(DailyProduction\): .*duplicate key.*; nothing was loaded/);
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(0);
    expect((await store.query('DailyProduction', {}, { limit: 1 })).total).toBe(0);
    store.close();
  });

  it('logs every 500 with its cause (a stack, the engine message); the answer says only "internal error" and its request id', async () => {
    const logs: string[] = [];
    const running = await serve({ db: join(dir, 'internal.db'), port: 0, host: '127.0.0.1', log: (l) => logs.push(l), workerScript: await crashingWorkerScript() });
    try {
      // The worker thread running this query dies under it (test/pool/fixtures/crashing-worker.ts).
      const res = await fetch(`${running.url}/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"__crash__","query":{}}' });
      expect(res.status).toBe(500);
      const text = await res.text();
      const body = JSON.parse(text) as { errors: { code: string; message: string }[] };
      expect(body.errors[0]?.code).toBe('INTERNAL');
      expect(body.errors[0]?.message).toMatch(/^internal error\b/);
      expect(text).not.toMatch(/exited|\bat .*\.(?:js|ts):\d+/);
      const logged = logs.find((l) => l.startsWith('internal error'));
      expect(logged, `log: ${logs.join('\n')}`).toMatch(/^internal error \(request (\S+)\): .*exited with code 3[^]*\n\s+at /);
      const requestId = /request (\S+)\)/.exec(logged!)![1]!;
      expect(requestId).not.toBe('undefined');
      expect(text).toContain(requestId);
    } finally {
      await running.stop(100);
    }
  });

  it('with soft delete, the pooled server answers no deleted document: unlimited, skipped, paged by cursor (iterate)', async () => {
    const running = await serve({ db: join(dir, 'soft.db'), port: 0, host: '127.0.0.1', log: () => undefined, journal: { softDelete: ['Well'] }, workerScript: await workerScript() });
    const call = async (path: string, body: unknown, method = 'POST') =>
      (await (await fetch(`${running.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as {
        data: { pwi: string }[];
        cursor: string | null;
        total: number;
        count: number;
      };
    try {
      const wells = Array.from({ length: 5 }, (_, i) => ({ pwi: `W${i + 1}` }));
      expect((await call('/data', { type: 'Well', data: wells })).count).toBe(5);
      expect((await call('/data', { type: 'Well', query: { pwi: { in: ['W1', 'W4'] } } }, 'DELETE')).count).toBe(2);
      const live = ['W2', 'W3', 'W5'];
      const pwis = (r: { data: { pwi: string }[] }) => r.data.map((d) => d.pwi);
      expect(pwis(await call('/data/query', { type: 'Well', query: {} }))).toEqual(live);
      expect(pwis(await call('/data/query', { type: 'Well', query: {}, options: { skip: 1 } }))).toEqual(live.slice(1));
      expect(pwis(await call('/data/query', { type: 'Well', query: {}, options: { sortBy: 'pwi', sortOrder: -1 } }))).toEqual([...live].reverse());
      expect(pwis(await call('/v1/data', { type: 'Well', request: 'GET', query: {} }))).toEqual(live);
      // Page by page as iterate and export read: every page follows the cursor of the last.
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await call('/data/query', { type: 'Well', query: {}, options: { limit: 2, ...(cursor ? { cursor } : {}) } });
        paged.push(...pwis(page));
        cursor = page.cursor;
      } while (cursor);
      expect(paged).toEqual(live);
      expect((running.store as PooledStore).iterate).toBeTypeOf('function');
      const iterated: string[] = [];
      for await (const w of (running.store as PooledStore).iterate('Well', {}, { batchSize: 2 })) iterated.push(w.pwi as string);
      expect(iterated).toEqual(live);
    } finally {
      await running.stop(100);
    }
  });

  it('mmapSize reaches the store it serves (0: the map is off)', async () => {
    const running = await serve({ db: join(dir, 'mmap.db'), port: 0, host: '127.0.0.1', log: () => undefined, workers: 0, mmapSize: 0 });
    try {
      expect((running.store as SqliteDynamicStore).database.pragma('mmap_size', { simple: true })).toBe(0);
    } finally {
      await running.stop(100);
    }
  });

  it('sets its socket timeouts and answers a request Node cannot parse with a JSON envelope', async () => {
    const running = await serve({ db: join(dir, 'socket.db'), port: 0, host: '127.0.0.1', log: () => undefined, workerScript: await workerScript() });
    try {
      expect([running.server.headersTimeout, running.server.requestTimeout, running.server.keepAliveTimeout]).toEqual([10_000, 60_000, 5_000]);
      const { port } = running.server.address() as { port: number };
      const text = await new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let got = '';
        socket.on('data', (d) => (got += d.toString()));
        socket.on('close', () => resolve(got));
        socket.write('NOT HTTP\r\n\r\n');
      });
      expect(text).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).errors[0].code).toBe('INVALID_REQUEST');
    } finally {
      await running.stop(100);
    }
  });

  it('serves from a pool of --workers threads by default, and on the main thread with --workers 0', async () => {
    const pooled = await serve({ db: join(dir, 'workers.db'), port: 0, host: '127.0.0.1', log: () => undefined, workers: 3, workerScript: await workerScript() });
    try {
      expect(pooled.store).not.toBeInstanceOf(DynamicStore);
      expect((pooled.store as { stats(): { workers: { general: number } } }).stats().workers.general).toBe(3);
      const res = await fetch(`${pooled.url}/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"Well","data":[{"pwi":"W-1"}]}' });
      expect(((await res.json()) as { count: number }).count).toBe(1);
    } finally {
      await pooled.stop(100);
    }
    const single = await serve({ db: join(dir, 'workers.db'), port: 0, host: '127.0.0.1', log: () => undefined, workers: 0 });
    try {
      expect(single.store).toBeInstanceOf(DynamicStore);
      const res = await fetch(`${single.url}/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"Well","query":{"pwi":"W-1"}}' });
      expect(((await res.json()) as { count: number }).count).toBe(1);
    } finally {
      await single.stop(100);
    }
  });
});
