/**
 * A streamed answer holds one batch, not the answer: 250,000 documents of ~4.5 KB (over 1 GiB of JSON) go through the iterator
 * while the process's memory grows by a bounded amount, and a consumer that stops reading stops the worker.
 */
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type PooledStore } from '../../src/pool/pool.js';
import { tempDir } from '../helpers/store.js';
import { bulkWells, removeBundles, until, workerScript } from './helpers.js';

const N = 250_000;
/** Characters added to each document so that the answer passes 1 GiB. */
const PADDING = 3000;
const dir = tempDir();
const file = dir.file('big.db');
let pool: PooledStore;

beforeAll(async () => {
  await bulkWells(file, N, 0, PADDING);
  pool = await createPool(file, { readers: 1, workerScript: await workerScript() });
}, 180_000);
afterAll(async () => {
  await pool?.close();
  dir.cleanup();
  removeBundles();
});

/**
 * This process's resident memory in MB, in two parts (/proc/self/status): `own` is anonymous and shared memory (heaps
 * of every thread, SQLite's caches, buffers); `file` is pages of mapped files, here the database the connections
 * map for reads (mmap_size): the operating system's page cache of that file, shared and reclaimable, which grows
 * with what was read, whoever reads it, up to the file's size.
 */
function resident(): { own: number; file: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { own: (kb('RssAnon') + kb('RssShmem')) / 1024, file: kb('RssFile') / 1024 };
}

describe('streamed answers', () => {
  it(`${N.toLocaleString('en-US')} documents through the iterator: memory grows by under 200 MB`, async () => {
    const before = resident();
    let peak = before;
    const sample = () => {
      const now = resident();
      if (now.own > peak.own) peak = { ...peak, own: now.own };
      if (now.file > peak.file) peak = { ...peak, file: now.file };
    };
    const timer = setInterval(sample, 20);
    let chars = 0;
    let rows = 0;
    let first = '';
    let last = '';
    try {
      for await (const chunk of await pool.queryStream('Well', {})) {
        if (!first) first = chunk;
        last = chunk;
        chars += chunk.length;
        // Each chunk holds whole documents: counting their pwi counts them.
        for (let at = chunk.indexOf('"pwi":"P'); at >= 0; at = chunk.indexOf('"pwi":"P', at + 1)) rows++;
        sample();
      }
    } finally {
      clearInterval(timer);
    }
    const tail = JSON.parse(`{"data":[${last.slice(last.lastIndexOf('],"cursor":'))}`) as { count: number; total: number; success: boolean };
    expect(first.startsWith('{"data":[{"id":"w00000000"')).toBe(true);
    expect(tail).toMatchObject({ count: N, total: N, success: true });
    expect(rows).toBe(N);
    expect(chars).toBeGreaterThan(2 ** 30);
    const grown = peak.own - before.own;
    console.log(`streamed ${(chars / 1e6).toFixed(0)} MB of JSON; own memory grew ${grown.toFixed(0)} MB, mapped file pages ${(peak.file - before.file).toFixed(0)} MB (file ${(statSync(file).size / 1e6).toFixed(0)} MB)`);
    expect(grown).toBeLessThan(200);
    // What else grew is the map of the database file itself, never more than the file.
    expect(peak.file - before.file).toBeLessThan(statSync(file).size / 2 ** 20 + 50);
  }, 180_000);

  it('a consumer that stops reading holds its worker parked on one batch; the rest is never read', async () => {
    const stream = await pool.queryStream('Well', {});
    const it = stream[Symbol.asyncIterator]();
    const head = await it.next();
    expect((head.value as string).length).toBeLessThanOrEqual(1.1 * 2 ** 20);
    await new Promise((r) => setTimeout(r, 200));
    expect(pool.stats().workers.parked).toBe(1);
    // Parked longer than a moment: the general lane got a replacement, and answers meanwhile.
    await until(() => pool.stats().workers.general === 2, 5000, 'a replacement worker');
    expect((await pool.query('Well', {}, { skip: N - 1 })).count).toBe(1);
    await it.return!();
    await until(() => pool.stats().workers.parked === 0 && pool.stats().workers.general === 1, 5000, 'the extra worker to retire');
  });
});
