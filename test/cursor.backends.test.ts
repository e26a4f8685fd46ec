/**
 * Keyset cursors on both backends: paging by cursor equals one unpaged sorted query (any sort, ties, nulls, every
 * JSON type, geo conditions), survives writes between pages, and iterate() follows it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFetchHandler } from '../src/http/index.js';
import { backends } from './helpers/backends.js';
import { cursorPages as pages } from './helpers/store.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const mixed = fc.oneof(fc.constantFrom(0, 1, 2, 2.5, -1, 1e21), fc.constantFrom('a', 'b', 'B', '', 'é'), fc.boolean(), fc.constant(null), fc.constant({ k: 1 }), fc.constant([1, 2]), fc.constant([]));
const doc = fc.record(
  {
    fracStages: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    isVirtual: fc.option(fc.boolean(), { nil: null }),
    basinName: fc.constantFrom('Permian', 'Bakken', 'Delaware'),
    spudDate: fc.constantFrom('2020-01-01', '2021-06-30', '2019-12-31'),
    surfaceLoc: fc.constantFrom({ type: 'Point', coordinates: [0, 0] }, { type: 'Point', coordinates: [1, 1] }, { type: 'Point', coordinates: [5, 5] }),
    extra: fc.record({ v: mixed }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const request = fc.record({
  sortBy: fc.constantFrom(undefined, 'fracStages', 'basinName', 'spudDate', 'isVirtual', 'extra.v'),
  sortOrder: fc.constantFrom(1, -1),
  limit: fc.integer({ min: 1, max: 7 }),
  query: fc.constantFrom({}, { basinName: { ne: 'Bakken' } }, { fracStages: { in: [0, 1, null] } }, { surfaceLoc: { polygon: [[[-1, -1], [2, -1], [2, 2], [-1, -1]]] } }),
});

describe.each(backends())('keyset cursors: $name', (backend) => {
  it(`paging by cursor answers exactly the unpaged sorted query (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { maxLength: 30 }), request, async (docs, r) => {
        const store = await backend.open();
        try {
          expect((await store.dynamic.insert('Well', docs)).success).toBe(true);
          const options = { sortBy: r.sortBy, sortOrder: r.sortOrder };
          const all = await store.dynamic.query('Well', r.query, options);
          expect(all.hasCursor).toBe(false);
          const { ids, totals } = await pages(store.dynamic, r.query, { ...options, limit: r.limit });
          expect(ids).toEqual(all.data.map((d) => d.id));
          for (const t of totals) expect(t).toBe(all.total);
        } finally {
          await store.close();
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('a write between pages neither repeats nor drops a document that existed throughout', async () => {
    for (const sortBy of [undefined, 'fracStages', 'extra.v']) {
      const store = await backend.open();
      const docs = Array.from({ length: 30 }, (_, i) => ({ id: `d${String(i).padStart(2, '0')}`, fracStages: i % 4, extra: { v: i % 3 === 0 ? null : i % 5 } }));
      await store.dynamic.insert('Well', docs);
      const seen: string[] = [];
      let page = await store.dynamic.query('Well', {}, { sortBy, limit: 4 });
      seen.push(...page.data.map((d) => d.id as string));
      let round = 0;
      const deleted = new Set<string>();
      while (page.hasCursor) {
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
      expect(new Set(seen).size, `${String(sortBy)}: no repeats`).toBe(seen.length);
      for (const id of docs.map((d) => d.id).filter((x) => !deleted.has(x))) expect(seen, `${String(sortBy)}: ${id}`).toContain(id);
      await store.close();
    }
  });

  it('refuses forged, altered and foreign cursors with 400 INVALID_CURSOR, echoing nothing of them', async () => {
    const logged: unknown[] = [];
    const store = await backend.open({ onError: (e) => void logged.push(e) });
    const other = await backend.open();
    try {
      await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
      await other.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
      const options = { sortBy: 'pwi', limit: 1 } as const;
      const cursor = (await store.query('Well', {}, options)).cursor!;
      const [payload, mac] = cursor.split('.') as [string, string];
      const content = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      const encode = (o: Record<string, unknown>) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const huge = 'k'.repeat(700_000);
      const cases: Record<string, string> = {
        'a forged key, signature kept': `${encode({ ...content, r: 1, k: huge })}.${mac}`,
        'a negative total, signature kept': `${encode({ ...content, t: -5 })}.${mac}`,
        'the content alone, unsigned': encode({ ...content, r: 1, k: huge }),
        'a signature altered': `${payload}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`,
        "another store's cursor": (await other.query('Well', {}, options)).cursor!,
        'garbled text': 'not-a-cursor',
      };
      const handle = createFetchHandler(store);
      for (const [name, forged] of Object.entries(cases)) {
        const env = await store.dynamic.query('Well', {}, { ...options, cursor: forged });
        expect(env.errors.map((e) => e.code), name).toEqual(['INVALID_CURSOR']);
        expect(env.errors[0]!.field, name).toBe('options.cursor');
        expect(env.message.length, name).toBeLessThan(200);
        const res = await handle(new Request('http://localhost/api/data/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', query: {}, options: { ...options, cursor: forged } }) }));
        expect(res.status, name).toBe(400);
        expect((await res.text()).includes('kkkkkkkk'), name).toBe(false);
      }
      expect(logged).toEqual([]);
      // The true cursor still continues.
      expect((await store.dynamic.query('Well', {}, { ...options, cursor })).data.map((d) => d.pwi)).toEqual(['B']);
    } finally {
      await store.close();
      await other.close();
    }
  });

  it('iterate yields every match in the query\'s order, batch by batch', async () => {
    const store = await backend.open();
    try {
      await store.insert('Well', Array.from({ length: 250 }, (_, i) => ({ pwi: `W${i}`, fracStages: i % 7 })));
      const all = (await store.query('Well', { fracStages: { gte: 2 } }, { sortBy: 'fracStages', sortOrder: -1 })).data.map((d) => d.pwi);
      const seen: string[] = [];
      for await (const w of store.iterate('Well', { fracStages: { gte: 2 } }, { sortBy: 'fracStages', sortOrder: -1, batchSize: 17 })) seen.push(w.pwi!);
      expect(seen).toEqual(all);
    } finally {
      await store.close();
    }
  });
});
