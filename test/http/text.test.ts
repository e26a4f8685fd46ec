/**
 * The one-thread server (either bridge over a DynamicStore) answers a query with the documents' stored text as it is
 * (DynamicStore#queryText): byte for byte the envelope `store.query` answers, no document parsed on the way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import vm from 'node:vm';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFetchHandler, createNodeHandler } from '../../src/http/index.js';
import { DataStore } from '../../src/index.js';
import type { StoreLike } from '../../src/core/store-like.js';
import { textsOf } from '../../src/core/slices.js';

const ODD = { sum: 0.1 + 0.2, big: 1e21, tiny: 5e-324, text: 'line\u2028"q"\\ \u0001 \ud800 日本' };

/** 1,200 Wells: an unlimited answer is more than one slice of 1,000. */
async function wells() {
  const store = DataStore.open(':memory:', { strict: false });
  const docs = Array.from({ length: 1200 }, (_, i) => ({ pwi: `W-${String(i).padStart(4, '0')}`, ...ODD, n: i / 7 }));
  expect((await store.dynamic.insert('Well', docs)).errors).toEqual([]);
  return store;
}

/** Runs `fn` on the 1,200 Wells of `wells()`, and closes their store whatever happens. */
async function withWells(fn: (store: DataStore) => Promise<void>): Promise<void> {
  const store = await wells();
  try {
    await fn(store);
  } finally {
    store.close();
  }
}

/** The store's own operations, but `query`, which must not answer. */
function textOnly(store: DataStore): StoreLike {
  const d = store.dynamic;
  return {
    ...Object.fromEntries(['insert', 'replace', 'update', 'delete', 'types', 'schema', 'aggregate', 'count', 'distinct', 'queryText'].map((m) => [m, (d as unknown as Record<string, (...a: unknown[]) => unknown>)[m]!.bind(d)])),
    query: () => Promise.reject(new Error('answered by query, not queryText')),
    withUser: () => textOnly(store),
  } as unknown as StoreLike;
}

const BODIES = [
  { type: 'Well', query: { pwi: 'W-0007' } },
  { type: 'Well', query: {}, options: { limit: 50, sortBy: 'pwi', sortOrder: -1 } },
  { type: 'Well', query: {}, options: { skip: 3 } },
  { type: 'Well', query: { pwi: { gte: 'W-0100' } }, options: { fields: ['pwi', 'sum'] } },
];

describe('query answers of the one-thread server', () => {
  let store: DataStore | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await store?.close();
  });

  it('are the stored text, byte for byte the envelope of store.query, through the Fetch bridge', async () => {
    store = await wells();
    const handle = createFetchHandler(textOnly(store));
    for (const body of BODIES) {
      const res = await handle(new Request('http://x/api/data/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(text).toBe(JSON.stringify(await store.dynamic.query(body.type, body.query, body.options)));
    }
  });

  it('are the stored text through the node bridge, and no document is parsed on the way', async () => {
    store = await wells();
    const expected = await Promise.all(BODIES.map((b) => store!.dynamic.query(b.type, b.query, b.options).then((e) => JSON.stringify(e))));
    const handler = createNodeHandler(store);
    const server = http.createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const [i, body] of BODIES.entries()) {
        const res = await fetch(`http://127.0.0.1:${port}/api/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(res.status).toBe(200);
        expect(await res.text()).toBe(expected[i]);
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
    // Only the projection (text built in SQL) is parsed again; whole documents never are.
    const documents = parse.mock.calls.filter(([text]) => typeof text === 'string' && text.includes('"createdActivityId"'));
    expect(documents).toEqual([]);
  });
});

describe('reads of the one-thread server on its one connection', () => {
  it('leave no read open: queries after a skip, answered together with a write, all answer and the write commits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'consolidata-text-'));
    const file = join(dir, 'one.db');
    const store = DataStore.open(file, { strict: false });
    const other = DataStore.open(file, { strict: false });
    try {
      await store.dynamic.insert('Well', Array.from({ length: 20 }, (_, i) => ({ pwi: `P${i}` })));
      // Requests held by an authentication that waits (a key set loading), then let go in one turn.
      let ready!: () => void;
      const keys = new Promise<void>((r) => (ready = r));
      const handler = createFetchHandler(store.dynamic, { authenticate: async () => (await keys, { userId: 'u' }) });
      const post = (path: string, body: unknown) =>
        handler(new Request(`http://x/api${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
      const answers = Promise.all([
        post('/data/query', { type: 'Well', query: {}, options: { skip: 1 } }),
        post('/data/query', { type: 'Well', query: { pwi: { ne: 'x' } }, options: { skip: 1 } }),
        post('/data', { type: 'Well', data: [{ pwi: 'NEW' }] }),
      ]);
      ready();
      const replies = await answers;
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(((await replies[0]!.json()) as { count: number }).count).toBe(19);
      expect(store.database.inTransaction).toBe(false);
      expect((await other.dynamic.query('Well', { pwi: 'NEW' })).count).toBe(1);
    } finally {
      store.close();
      other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('answers not stored as text', () => {
  it('are serialised a document at a time, in slices, byte for byte the envelope', () =>
    withWells(async (store) => {
      const query = { pwi: { gte: 'W-0100' } };
      // A page (not streamed) of a projection (text built in SQL): what PostgreSQL's answers take too.
      const options = { fields: ['pwi', 'sum', 'text'], limit: 1000 };
      const { failure, slices } = await store.dynamic.queryText('Well', query, options, { rows: 100, chars: 1 << 20 });
      expect(failure).toBeNull();
      const parts = textsOf(slices);
      expect(parts.length).toBeGreaterThan(10);
      expect(parts.join('')).toBe(JSON.stringify(await store.dynamic.query('Well', query, options)));
    }));
});

describe('promises of another kind from the caller', () => {
  it('are awaited as await takes them: an authenticate and a store answering thenables and promises of another realm', () =>
    withWells(async (store) => {
      const foreign = vm.runInNewContext('(v) => Promise.resolve(v)') as <T>(v: T) => PromiseLike<T>;
      const thenable = <T>(v: T): PromiseLike<T> => ({ then: (ok: (v: T) => void) => void setTimeout(() => ok(v), 1) }) as unknown as PromiseLike<T>;
      const d = store.dynamic;
      const wrapped = {
        ...textOnly(store),
        queryText: (...a: Parameters<typeof d.queryText>) => foreign(d.queryText(...a)),
        types: () => thenable(d.types()),
      } as unknown as StoreLike;
      const handler = createFetchHandler(wrapped, { authenticate: () => thenable({ userId: 'u' }) });
      const post = (body: unknown) => handler(new Request('http://x/api/data/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
      const r = await post(BODIES[0]);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(JSON.stringify(await d.query('Well', BODIES[0]!.query)));
      const types = await handler(new Request('http://x/api/data/types'));
      expect(types.status).toBe(200);
    }));
});

describe('a read that fails on its way', () => {
  it('answers its failure, not the slices it began', () =>
    withWells(async (store) => {
      // A projection's rows are parsed as they are sliced: the 700th parse fails, after 600 rows were sliced.
      const parse = JSON.parse;
      let rows = 0;
      const spy = vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
        if (++rows === 700) throw new Error('read failed');
        return parse(text, reviver);
      });
      const answer = store.dynamic.queryText('Well', {}, { fields: ['pwi'] }, { rows: 100, chars: 1 << 20 });
      spy.mockRestore();
      const { failure, slices } = await answer;
      expect(failure?.errors.map((e) => e.code)).toEqual(['INTERNAL']);
      expect(JSON.parse(textsOf(slices).join(''))).toMatchObject({ success: false, data: [] });
    }));
});
