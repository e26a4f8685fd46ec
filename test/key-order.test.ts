/**
 * Whole objects compared with their key order along a dotted path, through every operation that takes a query, on
 * every backend: on Citus such a condition is decided in JS over SQL's candidates (src/postgres/backend.ts #inJs), on
 * one server in SQL; both must touch exactly the documents the README's rules match.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DataStore } from '../src/index.js';
import { backends } from './helpers/backends.js';
import { all, ids } from './helpers/store.js';

/** One document per well, so on Citus they spread over the shards. */
const DOCS = [
  { id: 'same', pwi: 'A', extra: { m: { meta: { k: 1, j: 0 } } } },
  { id: 'swapped', pwi: 'B', extra: { m: { meta: { j: 0, k: 1 } } } },
  { id: 'element', pwi: 'C', extra: { m: { meta: [3, { k: 1, j: 0 }] } } },
  { id: 'wider', pwi: 'D', extra: { m: { meta: { k: 1, j: 0, x: 2 } } } },
  { id: 'fanned', pwi: 'E', extra: { m: [{ meta: 'no' }, { meta: { k: 1, j: 0 } }] } },
  { id: 'swappedElement', pwi: 'F', extra: { m: { meta: [{ j: 0, k: 1 }] } } },
  { id: 'none', pwi: 'G' },
];
const MATCHES = ['same', 'element', 'fanned'];
const OTHERS = ['swapped', 'wider', 'swappedElement', 'none'];
const EQ = { 'extra.m.meta': { eq: { k: 1, j: 0 } } };

describe.each(backends())('$name', (backend) => {
  let store: DataStore;
  beforeEach(async () => {
    store = await backend.open();
    const r = await store.dynamic.insert('Well', DOCS);
    expect(r.success, r.message).toBe(true);
    return () => store.close();
  });

  it('query, count and iterate answer the documents of the same key order, arrays fanned out', async () => {
    expect(await ids(store, 'Well', EQ)).toEqual(MATCHES);
    expect(await ids(store, 'Well', { 'extra.m.meta': { eq: { j: 0, k: 1 } } })).toEqual(['swapped', 'swappedElement']);
    expect(await ids(store, 'Well', { 'extra.m.meta': { ne: { k: 1, j: 0 } } })).toEqual(OTHERS);
    expect(await ids(store, 'Well', { 'extra.m.meta': { in: [{ k: 1, j: 0 }, 3] } })).toEqual(MATCHES);
    expect(await ids(store, 'Well', { 'extra.m.meta': { in: [{ j: 0, k: 1 }, null] } })).toEqual(['swapped', 'swappedElement', 'none']);
    // ANDed with a condition SQL decides, and with the distribution field (one shard on Citus).
    expect(await ids(store, 'Well', { ...EQ, pwi: { in: ['A', 'B', 'E'] } })).toEqual(['same', 'fanned']);
    expect(await ids(store, 'Well', { ...EQ, pwi: 'B' })).toEqual([]);
    const page = await store.dynamic.query('Well', EQ, { limit: 2 });
    expect(page.total).toBe(3);
    expect(page.hasCursor).toBe(true);
    expect((await store.count('Well', EQ)).total).toBe(3);
    expect((await store.count('Well', { 'extra.m.meta': { ne: { k: 1, j: 0 } } })).total).toBe(4);
    const seen: string[] = [];
    for await (const w of store.iterate('Well', EQ, { batchSize: 1, sortBy: 'pwi', sortOrder: -1 })) seen.push(w.id as string);
    expect(seen).toEqual([...MATCHES].reverse());
  });

  it('aggregate and distinct summarise the matches only', async () => {
    const groups = await store.aggregate('Well', EQ, { groupBy: ['pwi'], metrics: { n: { count: '*' } } });
    expect(groups.errors).toEqual([]);
    expect(groups.data).toEqual([
      { pwi: 'A', n: 1 },
      { pwi: 'C', n: 1 },
      { pwi: 'E', n: 1 },
    ]);
    expect((await store.distinct('Well', 'pwi', { 'extra.m.meta': { ne: { k: 1, j: 0 } } })).data).toEqual(['B', 'D', 'F', 'G']);
  });

  it('update touches exactly the matching documents, keeping the others and their key order', async () => {
    const r = await store.update('Well', EQ, { statusCurrent: 'Producing' });
    expect(r.errors).toEqual([]);
    expect(r.count).toBe(3);
    expect(await ids(store, 'Well', { statusCurrent: 'Producing' })).toEqual(MATCHES);
    // A dotted set: rewritten document by document (on one server too), keeping each document's key order.
    const dotted = await store.update('Well', EQ, { 'extra.seen': true });
    expect(dotted.errors).toEqual([]);
    expect(dotted.count).toBe(3);
    const docs = await all(store, 'Well');
    expect(docs.filter((d) => (d.extra as { seen?: boolean } | undefined)?.seen).map((d) => d.id)).toEqual(MATCHES);
    expect(JSON.stringify(docs.find((d) => d.id === 'same')!.extra)).toBe('{"m":{"meta":{"k":1,"j":0}},"seen":true}');
    expect(JSON.stringify(docs.find((d) => d.id === 'swapped')!.extra)).toBe('{"m":{"meta":{"j":0,"k":1}}}');
  });

  it('ne updates every other document', async () => {
    const r = await store.update('Well', { 'extra.m.meta': { ne: { k: 1, j: 0 } } }, { statusCurrent: 'Producing' });
    expect(r.errors).toEqual([]);
    expect(r.count).toBe(4);
    expect(await ids(store, 'Well', { statusCurrent: 'Producing' })).toEqual(OTHERS);
  });

  it('delete removes exactly the matching documents', async () => {
    const r = await store.delete('Well', EQ);
    expect(r.errors).toEqual([]);
    expect(r.count).toBe(3);
    expect((await all(store, 'Well')).map((d) => d.id)).toEqual(OTHERS);
    const again = await store.delete('Well', { 'extra.m.meta': { in: [{ j: 0, k: 1 }] } });
    expect(again.count).toBe(2);
    expect((await all(store, 'Well')).map((d) => d.id)).toEqual(['wider', 'none']);
  });
});
