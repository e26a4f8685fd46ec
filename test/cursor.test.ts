/** Keyset cursors: paging by cursor equals one unpaged sorted query, and survives writes between pages. */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createFetchHandler } from '../src/http/index.js';
import { DataStore, DataStoreError, type DynamicStore, type Envelope } from '../src/index.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);

/** Values with many ties, nulls, missing fields and (for the untyped path) every JSON type. */
const mixed = fc.oneof(fc.constantFrom(0, 1, 2, 2.5, -1), fc.constantFrom('a', 'b', 'B', ''), fc.boolean(), fc.constant(null), fc.constant({ k: 1 }), fc.constant([1, 2]), fc.constant([]));
const doc = fc.record(
  {
    fracStages: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    basinName: fc.constantFrom('Permian', 'Bakken', 'Delaware'),
    spudDate: fc.constantFrom('2020-01-01', '2021-06-30', '2019-12-31'),
    extra: fc.record({ v: mixed }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const request = fc.record({
  sortBy: fc.constantFrom(undefined, 'fracStages', 'basinName', 'spudDate', 'extra.v'),
  sortOrder: fc.constantFrom(1, -1),
  limit: fc.integer({ min: 1, max: 7 }),
  query: fc.constantFrom({}, { basinName: { ne: 'Bakken' } }, { fracStages: { in: [0, 1, null] } }),
});

/** Every page of a query, following its cursor; checks each page's envelope on the way. */
async function pages(store: DynamicStore, query: unknown, options: Record<string, unknown>): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const page: Envelope<Record<string, unknown>> = await store.query('Well', query, { ...options, ...(cursor ? { cursor } : {}) });
    expect(page.success, page.message).toBe(true);
    expect(page.hasCursor).toBe(page.cursor !== null);
    ids.push(...page.data.map((d) => d.id as string));
    totals.push(page.total);
    if (!page.hasCursor) return { ids, totals };
    expect(page.data).toHaveLength(options.limit as number);
    cursor = page.cursor!;
  }
  throw new Error('cursor paging did not end');
}

describe('keyset cursors', () => {
  it('paging by cursor answers exactly the unpaged sorted query, for any sort, ties, nulls and mixed types', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { maxLength: 40 }), request, async (docs, r) => {
        const store = DataStore.open();
        try {
          expect((await store.dynamic.insert('Well', docs)).success).toBe(true);
          const options = { sortBy: r.sortBy, sortOrder: r.sortOrder };
          const all = await store.dynamic.query('Well', r.query, options);
          expect(all.hasCursor).toBe(false);
          const { ids, totals } = await pages(store.dynamic, r.query, { ...options, limit: r.limit });
          expect(ids).toEqual(all.data.map((d) => d.id));
          // Later pages carry the total counted by the first one.
          for (const t of totals) expect(t).toBe(all.total);
        } finally {
          store.close();
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('a write between pages neither repeats nor drops a document that existed throughout', async () => {
    for (const sortBy of [undefined, 'fracStages', 'extra.v']) {
      const store = DataStore.open();
      const docs = Array.from({ length: 30 }, (_, i) => ({ id: `d${String(i).padStart(2, '0')}`, fracStages: i % 4, extra: { v: i % 3 === 0 ? null : i % 5 } }));
      await store.dynamic.insert('Well', docs);
      const seen: string[] = [];
      let page = await store.dynamic.query('Well', {}, { sortBy, limit: 4 });
      seen.push(...page.data.map((d) => d.id as string));
      let round = 0;
      const deleted = new Set<string>();
      while (page.hasCursor) {
        // Between pages: new documents (some sorting before the position), a deletion ahead, an update of another field.
        await store.dynamic.insert('Well', [{ id: `n${round}a`, fracStages: 0, extra: { v: -1 } }, { id: `n${round}b`, fracStages: 3, extra: { v: 99 } }]);
        const victim = `d${String(29 - round).padStart(2, '0')}`;
        await store.dynamic.delete('Well', { id: victim });
        deleted.add(victim);
        await store.dynamic.update('Well', { id: `d${String(round).padStart(2, '0')}` }, { basinName: `round ${round}` });
        page = await store.dynamic.query('Well', {}, { sortBy, limit: 4, cursor: page.cursor });
        expect(page.success, page.message).toBe(true);
        seen.push(...page.data.map((d) => d.id as string));
        round++;
      }
      expect(new Set(seen).size, `${sortBy}: no repeats`).toBe(seen.length);
      const throughout = docs.map((d) => d.id).filter((id) => !deleted.has(id));
      for (const id of throughout) expect(seen, `${sortBy}: ${id}`).toContain(id);
      store.close();
    }
  });

  it('refuses a cursor of another query, a garbled cursor, and a cursor with skip, naming options.cursor', async () => {
    const store = DataStore.open();
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
    const first = await store.query('Well', {}, { sortBy: 'pwi', limit: 1 });
    expect(first.hasCursor).toBe(true);
    const other = await store.dynamic.query('Well', { pwi: { ne: 'A' } }, { sortBy: 'pwi', limit: 1, cursor: first.cursor });
    expect(other.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'options.cursor' });
    expect(other.errors[0]!.message).toContain('belongs to another query');
    const garbled = await store.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 1, cursor: 'not-a-cursor' });
    expect(garbled.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'options.cursor' });
    const skip = await store.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 1, skip: 1, cursor: first.cursor });
    expect(skip.errors[0]!.message).toContain('takes no skip');
    // The last page carries no cursor; an unlimited query never does.
    const rest = await store.dynamic.query('Well', {}, { sortBy: 'pwi', limit: 5, cursor: first.cursor });
    expect(rest.data.map((d) => d.pwi)).toEqual(['B', 'C']);
    expect([rest.hasCursor, rest.cursor]).toEqual([false, null]);
    store.close();
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
