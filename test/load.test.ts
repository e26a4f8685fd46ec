/** load: streaming writes in batches, errors with their positions, atomic loads that write all or nothing. */
import { describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';

async function* wells(n: number, bad: (i: number) => Record<string, unknown> | null = () => null) {
  for (let i = 0; i < n; i++) yield bad(i) ?? { pwi: `W${i}`, fracStages: i % 40 };
}

describe('load', () => {
  it('writes an async source in batches and answers counts', async () => {
    const store = DataStore.open();
    const r = await store.load('Well', wells(2_500), { batchSize: 300 });
    expect(r).toMatchObject({ success: true, count: 2_500, total: 2_500, errors: [], insertedIds: [], message: '2500 of 2500 loaded' });
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(2_500);
    store.close();
  });

  it('skips refused documents, reporting each with its position in the source (0-based), and writes the rest', async () => {
    const store = DataStore.open();
    await store.insert('Well', [{ pwi: 'W7' }]);
    const bad = (i: number) => (i === 3 ? { pwi: 'W3', fracStages: 'many' } : i === 1_234 ? { pwi: 'W1234', wat: 1 } : null);
    const r = await store.dynamic.load('Well', wells(2_000, bad), { batchSize: 500 });
    expect(r.success).toBe(false);
    expect(r.count).toBe(1_997);
    expect(r.total).toBe(2_000);
    expect(r.errors.map((e) => [e.code, e.index])).toEqual([
      ['VALIDATION', 3],
      ['DUPLICATE_KEY', 7],
      ['UNKNOWN_FIELD', 1_234],
    ]);
    expect(r.errors[1]!.message).toMatch(/^document 7: a Well with pwi "W7" already exists/);
    expect(r.message).toBe('1997 of 2000 loaded; 3 documents refused');
    store.close();
  });

  it('atomic: one refused document anywhere writes nothing of the whole source', async () => {
    const store = DataStore.open();
    const r = await store.load('Well', wells(3_000, (i) => (i === 2_999 ? { pwi: 5 } as never : null)), { batchSize: 400, atomic: true });
    expect(r).toMatchObject({ success: false, count: 0 });
    expect(r.errors[0]).toMatchObject({ code: 'VALIDATION', index: 2_999 });
    expect(r.message).toContain('nothing was written (atomic)');
    expect((await store.query('Well', {})).total).toBe(0);
    const ok = await store.load('Well', wells(3_000), { batchSize: 400, atomic: true });
    expect(ok).toMatchObject({ success: true, count: 3_000 });
    store.close();
  });

  it('atomic: documents go into the transaction as they are read, not held for the batch; onBatch keeps the batch pace', async () => {
    const store = DataStore.open();
    const db = store.dynamic.database;
    let inTable = -1;
    async function* source() {
      for (let i = 0; i < 3_000; i++) {
        // The load's own connection reads its uncommitted writes: what the transaction holds so far.
        if (i === 1_000) inTable = db.prepare(`SELECT count(*) FROM "docs_Well"`).pluck().get() as number;
        yield { pwi: `W${i}` };
      }
    }
    const batches: number[] = [];
    const r = await store.load('Well', source(), { batchSize: 1_024, atomic: true, onBatch: (p) => batches.push(p.read) });
    expect(r).toMatchObject({ success: true, count: 3_000 });
    // Batches of 1,024 would hold the first thousand documents in memory until the 1,024th is read.
    expect(inTable).toBeGreaterThanOrEqual(1_000 - 256);
    expect(batches).toEqual([1_024, 2_048, 3_000]);
    store.close();
  });

  it('atomic: other requests of the store wait for the load and never see part of it', async () => {
    const store = DataStore.open();
    let release!: () => void;
    const paused = new Promise<void>((r) => (release = r));
    async function* slow() {
      yield { pwi: 'A' };
      await paused;
      yield { pwi: 'B' };
    }
    const loading = store.load('Well', slow(), { batchSize: 1, atomic: true });
    await new Promise((r) => setTimeout(r, 10));
    // Asked mid-load: answered after it, so it sees both documents or none, never one.
    const during = store.query('Well', {});
    release();
    expect((await loading).count).toBe(2);
    expect((await during).total).toBe(2);
    store.close();
  });

  it("a source that throws: its own error reaches the caller; batches already committed stay, an atomic load's do not", async () => {
    const store = DataStore.open();
    async function* broken() {
      yield { pwi: 'A' };
      yield { pwi: 'B' };
      throw new Error('disk gone');
    }
    await expect(store.load('Well', broken(), { batchSize: 1, atomic: true })).rejects.toThrow('disk gone');
    expect((await store.query('Well', {})).total).toBe(0);
    // The store is usable at once: the atomic load's transaction and gate are gone.
    expect((await store.insert('Well', [{ pwi: 'C' }])).count).toBe(1);
    await expect(store.load('Well', broken(), { batchSize: 1 })).rejects.toThrow('disk gone');
    expect((await store.query('Well', {}, { sortBy: 'pwi' })).data.map((d) => d.pwi)).toEqual(['A', 'B', 'C']);
    store.close();
  });

  it('stopOnError: the first refused document ends the load; its batch is not written, earlier batches stay, nothing more is read', async () => {
    const store = DataStore.open();
    let pulled = 0;
    function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield i === 25 ? { pwi: 'W25', spudDate: 'yesterday' } : { pwi: `W${i}` };
      }
    }
    const r = await store.dynamic.load('Well', source(), { batchSize: 10, stopOnError: true });
    expect(r).toMatchObject({ success: false, count: 20, total: 26 });
    expect(r.errors.map((e) => [e.code, e.index])).toEqual([['VALIDATION', 25]]);
    expect(r.message).toBe('20 of 26 loaded; 1 document refused; stopped at the first');
    expect(pulled).toBe(26);
    expect((await store.query('Well', {})).total).toBe(20);
    // A duplicate key stops it too, and its whole batch is rolled back.
    const dup = await store.dynamic.load('Well', [{ pwi: 'N1' }, { pwi: 'N2' }, { pwi: 'W3' }, { pwi: 'N3' }, { pwi: 'N4' }], { batchSize: 2, stopOnError: true });
    expect(dup).toMatchObject({ success: false, count: 2, total: 4 });
    expect(dup.errors.map((e) => [e.code, e.index])).toEqual([['DUPLICATE_KEY', 2]]);
    expect((await store.query('Well', { pwi: { in: ['N1', 'N2', 'N3', 'N4'] } })).data.map((d) => d.pwi)).toEqual(['N1', 'N2']);
    store.close();
  });

  it('onError sees every refusal in source order, beyond maxErrors; onBatch reports progress after each batch', async () => {
    const store = DataStore.open();
    await store.insert('Well', [{ pwi: 'W2' }]);
    const seen: [string, number | undefined][] = [];
    const progress: { read: number; written: number; refused: number }[] = [];
    // The first batch holds 0–3 and 5: a duplicate at 2 (found when written), an invalid document at 4 (found when read).
    const docs = Array.from({ length: 12 }, (_, i) => (i === 4 || i === 9 ? { pwi: `W${i}`, fracStages: 'x' } : { pwi: `W${i}` }));
    const r = await store.dynamic.load('Well', docs, { batchSize: 5, maxErrors: 1, onError: (e) => seen.push([e.code, e.index]), onBatch: (p) => progress.push(p) });
    expect(seen).toEqual([
      ['DUPLICATE_KEY', 2],
      ['VALIDATION', 4],
      ['VALIDATION', 9],
    ]);
    expect(r.errors).toHaveLength(1);
    expect(r.message).toBe('9 of 12 loaded; 3 documents refused');
    expect(progress).toEqual([
      { read: 6, written: 4, refused: 2 },
      { read: 12, written: 9, refused: 3 },
    ]);
    store.close();
  });

  it('refuses an unknown type with UNKNOWN_TYPE, and a source that is not iterable with a TypeError', async () => {
    const store = DataStore.open();
    expect((await store.dynamic.load('Wel', wells(1))).errors[0]!.code).toBe('UNKNOWN_TYPE');
    await expect(store.dynamic.load('Well', 5 as never)).rejects.toThrow(TypeError);
    store.close();
  });
});
