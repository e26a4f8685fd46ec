/** Keyset cursors' refusals and HTTP, and iterate (paging itself, on both backends: cursor.backends.test.ts). */
import { describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFetchHandler, createPool } from '../src/http/index.js';
import { DataStore, DataStoreError, type Envelope } from '../src/index.js';
import { workerScript } from './pool/helpers.js';

describe('keyset cursors', () => {
  it('refuses a cursor of another query, a garbled cursor, and a cursor with skip, naming options.cursor', async () => {
    const store = DataStore.open();
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
    const first = await store.query('Well', {}, { sortBy: 'pwi', limit: 1 });
    expect(first.hasCursor).toBe(true);
    const other = await store.dynamic.query('Well', { pwi: { ne: 'A' } }, { sortBy: 'pwi', limit: 1, cursor: first.cursor });
    expect(other.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'options.cursor' });
    expect(other.errors[0]!.message).toContain('belongs to another query');
    // Not a cursor this store signed (forgeries in cursor.backends.test.ts).
    const garbled = await store.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 1, cursor: 'not-a-cursor' });
    expect(garbled.errors[0]).toMatchObject({ code: 'INVALID_CURSOR', field: 'options.cursor' });
    const skip = await store.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 1, skip: 1, cursor: first.cursor });
    expect(skip.errors[0]!.message).toContain('takes no skip');
    // The last page carries no cursor; an unlimited query never does.
    const rest = await store.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 5, cursor: first.cursor });
    expect(rest.data.map((d) => d.pwi)).toEqual(['B', 'C']);
    expect([rest.hasCursor, rest.cursor]).toEqual([false, null]);
    store.close();
  });

  it("a cursor stays valid across a restart and across the pool's threads and processes on the same file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'consolidata-cursor-'));
    const file = join(dir, 'wells.db');
    try {
      const first = DataStore.open(file);
      await first.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
      const cursor = (await first.query('Well', {}, { sortBy: 'pwi', limit: 1 })).cursor!;
      first.close();
      const reopened = DataStore.open(file);
      expect((await reopened.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 1, cursor })).data.map((d) => d.pwi)).toEqual(['B']);
      const pool = await createPool(file, { readers: 2, workerScript: await workerScript() });
      try {
        const pages = await Promise.all([0, 1, 2, 3].map(() => pool.query('Well', {}, { sortBy: 'pwi', limit: 1, cursor })));
        expect(pages.map((p) => p.data.map((d) => (d as { pwi: string }).pwi))).toEqual([['B'], ['B'], ['B'], ['B']]);
        // And the other way: a cursor a worker thread answered continues in this process's own store.
        const next = (await pool.query('Well', {}, { sortBy: 'pwi', limit: 1, cursor })).cursor!;
        expect((await reopened.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 1, cursor: next })).data.map((d) => d.pwi)).toEqual(['C']);
      } finally {
        await pool.close();
        reopened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('both route families take and answer cursors', async () => {
    const store = DataStore.open();
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
    const handle = createFetchHandler(store);
    const post = async (path: string, body: unknown) =>
      (await (await handle(new Request(`http://localhost/api${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))).json()) as Envelope<{ pwi: string }>;
    const p1 = await post('/data/query', { type: 'Well', query: {}, options: { sortBy: 'pwi', limit: 2 } });
    expect([p1.data.map((d) => d.pwi), p1.hasCursor]).toEqual([['A', 'B'], true]);
    const p2 = await post('/data/query', { type: 'Well', query: {}, options: { sortBy: 'pwi', limit: 2, cursor: p1.cursor } });
    expect([p2.data.map((d) => d.pwi), p2.hasCursor]).toEqual([['C'], false]);
    const v1 = await post('/v1/data', { type: 'Well', request: 'get', query: {}, options: { sortBy: 'pwi', limit: 2, cursor: p1.cursor } });
    expect(v1.data.map((d) => d.pwi)).toEqual(['C']);
    store.close();
  });
});

describe('later pages in insertion order', () => {
  // A continued page finds its matches by walking the table from the cursor (dense matches, or no index serving the
  // conditions) or by listing them from an index (sparse matches): both must give exactly the unpaged answer.
  const pageAll = async (store: DataStore, query: object, limit: number) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Envelope<{ pwi?: string }> = await store.dynamic.query('Well', query, { limit, ...(cursor ? { cursor } : {}) });
      expect(page.errors).toEqual([]);
      seen.push(...page.data.map((d) => d.pwi!));
      cursor = page.cursor;
    } while (cursor);
    return seen;
  };

  it.each([
    ['dense, on an index', { spudDate: { lt: '2010-08-01T00:00:00.000Z' } }],
    ['sparse, on an index', { spudDate: { lt: '2010-01-04T00:00:00.000Z' } }],
    ['sparse, on no index', { fracStages: { gte: 297 } }],
    ['dense, on no index', { fracStages: { gte: 100 } }],
  ])('equals the unpaged answer: %s', async (_, query) => {
    const store = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['spudDate'] }] } });
    const day = (i: number) => new Date(Date.UTC(2010, 0, 1) + (i % 365) * 86_400_000).toISOString();
    await store.insert('Well', Array.from({ length: 3000 }, (_, i) => ({ pwi: `W${i}`, spudDate: day(i * 7), fracStages: i % 300 })));
    const all = (await store.query('Well', query)).data.map((d) => d.pwi);
    expect(all.length).toBeGreaterThan(20);
    expect(await pageAll(store, query, 7)).toEqual(all);
    store.close();
  });
});

describe('iterate', () => {
  it('yields every match in the query\'s order, batch by batch, and caps at limit', async () => {
    const store = DataStore.open();
    const docs = Array.from({ length: 250 }, (_, i) => ({ pwi: `W${i}`, fracStages: i % 7 }));
    await store.insert('Well', docs);
    const all = (await store.query('Well', { fracStages: { gte: 2 } }, { sortBy: 'fracStages', sortOrder: -1 })).data.map((d) => d.pwi);
    const seen: string[] = [];
    for await (const w of store.iterate('Well', { fracStages: { gte: 2 } }, { sortBy: 'fracStages', sortOrder: -1, batchSize: 17 })) seen.push(w.pwi!);
    expect(seen).toEqual(all);
    const capped: string[] = [];
    for await (const w of store.iterate('Well', {}, { limit: 30, batchSize: 8 })) capped.push(w.pwi!);
    expect(capped).toEqual(docs.slice(0, 30).map((d) => d.pwi));
    store.close();
  });

  it('stops reading when the loop breaks', async () => {
    const store = DataStore.open();
    await store.insert('Well', Array.from({ length: 1000 }, (_, i) => ({ pwi: `W${i}` })));
    const reads = vi.spyOn(store.dynamic, 'query');
    let n = 0;
    for await (const _ of store.iterate('Well', {}, { batchSize: 100 })) {
      if (++n === 150) break;
    }
    expect(n).toBe(150);
    expect(reads).toHaveBeenCalledTimes(2);
    store.close();
  });

  it('a query the store refuses throws the DataStoreError of its envelope', async () => {
    const store = DataStore.open();
    const run = async () => {
      for await (const _ of store.dynamic.iterate('Well', { fracStages: { gt: 'x' } })) void _;
    };
    const error = await run().catch((e: unknown) => e);
    expect(DataStoreError.is(error)).toBe(true);
    expect((error as DataStoreError).code).toBe('INVALID_QUERY');
    store.close();
  });
});
