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

  it('a source that throws ends the load with INTERNAL; with atomic nothing is written', async () => {
    const store = DataStore.open();
    async function* broken() {
      yield { pwi: 'A' };
      throw new Error('disk gone');
    }
    const r = await store.load('Well', broken(), { batchSize: 1, atomic: true });
    expect(r.errors[0]!.code).toBe('INTERNAL');
    expect(JSON.stringify(r)).not.toContain('disk gone');
    expect((await store.query('Well', {})).total).toBe(0);
    store.close();
  });

  it('refuses an unknown type with UNKNOWN_TYPE, and a source that is not iterable with a TypeError', async () => {
    const store = DataStore.open();
    expect((await store.dynamic.load('Wel', wells(1))).errors[0]!.code).toBe('UNKNOWN_TYPE');
    await expect(store.dynamic.load('Well', 5 as never)).rejects.toThrow(TypeError);
    store.close();
  });
});
