/**
 * Time bounds and cancellation: past `maxQueryMs`, or on abort, a request's work really stops (its worker is
 * terminated and replaced, or its waiting rows are closed) and it answers TIMEOUT; a write so stopped writes nothing.
 */
import Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { DataStoreError } from '../../src/envelope.js';
import { createPool, type PooledStore } from '../../src/pool/pool.js';
import { tempDir } from '../helpers/store.js';
import { removeBundles, slowWells, SLOW, until, workerScript } from './helpers.js';

const N = 20_000;
const dir = tempDir();
const slowFile = dir.file('slow.db');
let script: string;
const pools: PooledStore[] = [];

beforeAll(async () => {
  script = await workerScript();
  slowWells(slowFile, N);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  dir.cleanup();
  removeBundles();
});

async function pool(options: Parameters<typeof createPool>[1] = {}, file = slowFile): Promise<PooledStore> {
  const p = await createPool(file, { readers: 1, workerScript: script, ...options });
  pools.push(p);
  return p;
}

/** SLOW run to its end in a pool of its own, with no deadline: it tells how long the stopped work would have gone on. */
async function reference(): Promise<{ running: () => boolean }> {
  const p = await pool();
  let done = false;
  void p.query('Well', SLOW).finally(() => (done = true));
  await until(() => p.stats().workers.busy > 0, 5000, 'the reference scan to start');
  return { running: () => !done };
}

describe('maxQueryMs', () => {
  it('a query past its deadline answers TIMEOUT naming the bound; its worker is replaced and the next requests are served at once', async () => {
    const ref = await reference();
    const p = await pool({ maxQueryMs: 300 });
    const slow = await p.query('Well', SLOW);
    expect(slow.success).toBe(false);
    expect(slow.errors).toEqual([{ code: 'TIMEOUT', message: 'the request took longer than maxQueryMs (300 ms) and was stopped' }]);
    expect(slow.data).toEqual([]);
    expect(p.stats().stopped).toBe(1);
    // A scan (the general lane's one worker, so its replacement) and a cheap query (the fast lane; an equality on
    // pwi would be read on the pool's own thread).
    expect((await p.query('Well', {}, { skip: N - 3 })).count).toBe(3);
    expect((await p.query('Well', { pwi: { in: ['S000007'] } })).count).toBe(1);
    expect(p.stats().routed.fast).toBeGreaterThan(0);
    expect(ref.running()).toBe(true);
    expect(p.stats().workers).toMatchObject({ fast: 1, general: 1, writer: 1 });
  });

  it('a request still queued at its deadline answers TIMEOUT without running; maxQueued refuses at once', async () => {
    const p = await pool({ maxQueryMs: 400, maxQueued: 1 });
    const running = p.query('Well', SLOW);
    await until(() => p.stats().workers.busy > 0, 5000, 'the scan to start');
    const queued = p.query('Well', {}, { skip: 5 });
    const refused = await p.query('Well', {}, { skip: 6 });
    expect(refused.errors[0]!.code).toBe('TIMEOUT');
    expect(refused.message).toMatch(/busy: 1 requests are waiting for a worker \(maxQueued\)/);
    const [a, b] = await Promise.all([running, queued]);
    expect(a.errors[0]!.code).toBe('TIMEOUT');
    expect(b.errors[0]!.code).toBe('TIMEOUT');
    // Only the running one had a worker to stop.
    expect(p.stats().stopped).toBe(1);
    expect(p.stats().timeouts).toBe(2);
  });
});

describe('close', () => {
  it('answers a queued request, stops a running query, lets a running write finish, and resolves once every worker exited', async () => {
    const file = dir.file('close.db');
    slowWells(file, 5000);
    const p = await pool({}, file);
    const running = p.query('Well', SLOW);
    await until(() => p.stats().workers.busy > 0, 5000, 'the scan to start');
    const queued = p.query('Well', {}, { skip: 1 });
    const write = p.insert('Well', [{ pwi: 'closing' }]);
    await p.close();
    const [a, b, w] = await Promise.all([running, queued, write]);
    expect(a.errors[0]).toMatchObject({ code: 'INTERNAL', message: 'the store was closed before this request was answered' });
    expect(b.errors[0]).toMatchObject({ code: 'INTERNAL', message: 'the store was closed before this request was answered' });
    // The write was dispatched before close(): it ran to its end.
    expect(w.count).toBe(1);
    expect(p.stats().workers).toMatchObject({ fast: 0, general: 0, writer: 0, stopping: 0 });
    await expect(p.query('Well', {})).rejects.toThrow(TypeError);
  });
});

describe('AbortSignal', () => {
  it('an aborted query stops its worker: it is replaced, and a probe is answered while the query would still run', async () => {
    const ref = await reference();
    const p = await pool();
    const controller = new AbortController();
    const long = p.query('Well', SLOW, undefined, { signal: controller.signal });
    await until(() => p.stats().workers.busy > 0, 5000, 'the scan to start');
    controller.abort();
    const answer = await long;
    expect(answer.errors).toEqual([{ code: 'TIMEOUT', message: 'the request was cancelled by its caller and stopped' }]);
    expect(p.stats()).toMatchObject({ stopped: 1, aborts: 1 });
    const probe = await p.query('Well', {}, { skip: N - 1 });
    expect(probe.count).toBe(1);
    expect(ref.running()).toBe(true);
    // An already aborted signal runs nothing.
    expect((await p.query('Well', {}, undefined, { signal: AbortSignal.abort() })).errors[0]!.code).toBe('TIMEOUT');
    expect(p.stats().stopped).toBe(1);
  });

  it('a stream its consumer leaves (break, cancel, abort) closes its rows and frees its worker without terminating it', async () => {
    const file = dir.file('stream.db');
    const store = DynamicStore.open(file);
    await store.insert('Well', Array.from({ length: 3000 }, (_, i) => ({ pwi: `P${i}`, extra: { pad: 'x'.repeat(800) } })));
    await store.close();
    const p = await pool({}, file);
    // break: the generator's return() cancels.
    for await (const chunk of await p.queryStream('Well', {})) {
      expect(chunk.startsWith('{"data":[')).toBe(true);
      break;
    }
    await until(() => p.stats().workers.parked === 0 && p.stats().workers.busy === 0, 5000, 'the worker to be free');
    // cancel() before iterating.
    const s = await p.queryStream('Well', {});
    s.cancel();
    const after: string[] = [];
    const cancelled = await (async () => {
      for await (const c of s) after.push(c);
    })().catch((e: unknown) => e);
    expect(after).toHaveLength(1);
    expect(DataStoreError.is(cancelled) && cancelled.code).toBe('TIMEOUT');
    // abort while the worker waits for the consumer.
    const controller = new AbortController();
    const t = await p.queryStream('Well', {}, undefined, { signal: controller.signal });
    const it = t[Symbol.asyncIterator]();
    await it.next();
    controller.abort();
    await expect(it.next()).rejects.toThrow(/cancelled by its caller/);
    expect(p.stats()).toMatchObject({ stopped: 0, aborts: 1 });
    await until(() => p.stats().workers.parked === 0 && p.stats().workers.busy === 0, 5000, 'the worker to be free');
    expect((await p.query('Well', {})).count).toBe(3000);
  });
});

describe('writes that are stopped write nothing', () => {
  it('a write stopped mid-statement by its deadline is rolled back: its worker dies inside the transaction', async () => {
    const file = dir.file('write-stop.db');
    slowWells(file, N);
    const p = await pool({ maxQueryMs: 300 }, file);
    // Every document matches; the regex calls a JS function per tag, so the writer dies in the middle of the UPDATE.
    const r = await p.update('Well', { 'extra.tags': { regex: '^tag-0$|zz$' } }, { statusCurrent: 'Stopped' });
    expect(r.errors).toEqual([{ code: 'TIMEOUT', message: 'the request took longer than maxQueryMs (300 ms) and was stopped; nothing was written' }]);
    expect(p.stats().stopped).toBe(1);
    const ok = await p.update('Well', { pwi: 'S000001' }, { statusCurrent: 'After' });
    expect(ok.count).toBe(1);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare(`SELECT count(*) FROM docs_Well WHERE json_extract(doc, '$.statusCurrent') = 'Stopped'`).pluck().get()).toBe(0);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });

  it('under a tight deadline every write answers all (success) or nothing (TIMEOUT): no write is half there, none answered TIMEOUT is there', async () => {
    const file = dir.file('write-race.db');
    const p = await pool({ maxQueryMs: 150 }, file);
    const sizes = [50, 4000, 120, 15000, 10, 8000, 600, 20000, 30, 2500, 9000, 70];
    const answers = await Promise.all(
      sizes.map((n, b) => p.insert('Well', Array.from({ length: n }, (_, i) => ({ pwi: `b${b}-${i}`, wellId: `b${b}` })), { atomic: true })),
    );
    const written = DynamicStore.open(file);
    try {
      for (const [b, n] of sizes.entries()) {
        const there = (await written.query('Well', { wellId: `b${b}` }, { limit: 1 })).total;
        if (answers[b]!.success) expect(there, `batch ${b}`).toBe(n);
        else {
          expect(answers[b]!.errors[0]!.code, `batch ${b}`).toBe('TIMEOUT');
          expect(there, `batch ${b}`).toBe(0);
        }
      }
    } finally {
      await written.close();
    }
    expect(answers.some((a) => a.success)).toBe(true);
    expect(answers.some((a) => !a.success)).toBe(true);
    // The writer was replaced and writes again (once the one it replaced has let go of the lock, under this deadline).
    let after = await p.insert('Well', [{ pwi: 'after' }]);
    for (let i = 0; i < 50 && !after.success; i++) after = await p.insert('Well', [{ pwi: 'after' }]);
    expect(after.count).toBe(1);
  });

  it('SQLite discards the open transaction of a worker terminated inside it, and its lock is released', async () => {
    const file = dir.file('terminate.db');
    DynamicStore.open(file).close();
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const Database = require(workerData.sqlite);
       const db = new Database(workerData.file);
       db.exec('BEGIN IMMEDIATE');
       const put = db.prepare("INSERT INTO docs_Well (id, doc) VALUES (?, jsonb('{}'))");
       for (let i = 0; i < 1000; i++) put.run('t' + i);
       parentPort.postMessage('written');
       for (;;) {}`,
      { eval: true, workerData: { sqlite, file } },
    );
    await new Promise((resolve) => worker.once('message', resolve));
    await worker.terminate();
    const db = new Database(file, { timeout: 0 });
    try {
      expect(db.prepare('SELECT count(*) FROM docs_Well').pluck().get()).toBe(0);
      // No other connection holds the write lock any more: BEGIN IMMEDIATE succeeds without waiting.
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
    } finally {
      db.close();
    }
  });
});
