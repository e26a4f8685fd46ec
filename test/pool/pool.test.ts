/** The pooled store answers and writes as the store does, streamed or whole, and refuses misuse and bad input the same way. */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { DataStoreError, unwrap, type Envelope } from '../../src/envelope.js';
import { createPool, type PooledStore } from '../../src/pool/pool.js';
import Database from 'better-sqlite3';
import { StoreBusyError } from '../../src/backend.js';
import { NotAStoreError } from '../../src/sqlite/connection.js';
import { CASES, ERROR_CASES } from '../helpers/cases.js';
import { tempDir } from '../helpers/store.js';
import { crashingWorkerScript, removeBundles, workerScript } from './helpers.js';

const dir = tempDir();
let script: string;
beforeAll(async () => {
  script = await workerScript();
});
afterAll(() => {
  dir.cleanup();
  removeBundles();
});

/** The chunks of a stream, concatenated. */
async function text(stream: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk;
  return out;
}

/** A pool and a plain store over one file. */
async function both(name: string, options: Record<string, unknown> = {}): Promise<{ pool: PooledStore; store: DynamicStore; file: string }> {
  const file = dir.file(name);
  const store = DynamicStore.open(file, options);
  const pool = await createPool(file, { readers: 1, workerScript: script, ...options });
  return { pool, store, file };
}

describe('answers as the store does', () => {
  const groups = new Map<string, { docs: readonly Record<string, unknown>[]; strict: boolean; cases: typeof CASES[number][] }>();
  for (const c of CASES) {
    const strict = c.strict ?? true;
    let key = [...groups.entries()].find(([, g]) => g.docs === c.docs && g.strict === strict)?.[0];
    if (!key) groups.set((key = `g${groups.size}`), { docs: c.docs, strict, cases: [] });
    groups.get(key)!.cases.push(c);
  }

  it(`every case of the query table (${CASES.length} cases), whole and streamed, byte for byte`, async () => {
    for (const [name, g] of groups) {
      const { pool, store } = await both(`${name}.db`, { strict: g.strict });
      try {
        expect((await store.insert('Well', g.docs)).errors).toEqual([]);
        for (const c of g.cases) {
          const expected = JSON.stringify(await store.query('Well', c.query, c.options));
          expect(JSON.stringify(await pool.query('Well', c.query, c.options)), c.name).toBe(expected);
          expect(await text(await pool.queryStream('Well', c.query, c.options)), c.name).toBe(expected);
        }
      } finally {
        await pool.close();
        await store.close();
      }
    }
  });

  it(`every case of the query table on stores whose options change scoping (soft delete, history), some documents deleted`, async () => {
    const docs = CASES[0]!.docs;
    for (const [name, options] of [
      ['soft', { softDelete: ['Well'] }],
      ['soft-history', { softDelete: ['Well'], history: ['Well'] }],
    ] as const) {
      const { pool, store } = await both(`scoped-${name}.db`, options);
      try {
        expect((await store.insert('Well', docs)).errors).toEqual([]);
        const ids = unwrap(await store.query('Well', {})).map((d) => d.id as string);
        // Every third document deleted (soft): no answer of any path may show it.
        const gone = ids.filter((_, i) => i % 3 === 0);
        expect((await pool.delete('Well', { id: { in: gone } })).count).toBe(gone.length);
        for (const c of CASES.filter((k) => k.docs === docs && (k.strict ?? true))) {
          const expected = JSON.stringify(await store.query('Well', c.query, c.options));
          expect(JSON.stringify(await pool.query('Well', c.query, c.options)), c.name).toBe(expected);
          expect(await text(await pool.queryStream('Well', c.query, c.options)), c.name).toBe(expected);
        }
        for (const options of [undefined, { skip: 1 }, { limit: 1000 }, { sortBy: 'pwi' }]) {
          const answered = unwrap(await pool.query('Well', {}, options)).map((d) => d.id);
          expect(answered.filter((id) => gone.includes(id as string)), JSON.stringify(options)).toEqual([]);
          expect(answered.length, JSON.stringify(options)).toBe(ids.length - gone.length - (options?.skip ?? 0));
        }
      } finally {
        await pool.close();
        await store.close();
      }
    }
  });

  it(`every refusal of the error table (${ERROR_CASES.length} cases): the same envelope, and a stream of that envelope alone`, async () => {
    const { pool, store } = await both('errors.db');
    const lax = await both('errors-lax.db', { strict: false });
    try {
      for (const c of ERROR_CASES) {
        const s = c.strict === false ? lax : { pool, store };
        const expected = await s.store.query('Well', c.query, c.options);
        expect(expected.success, c.name).toBe(false);
        expect(await s.pool.query('Well', c.query, c.options), c.name).toEqual(expected);
        const stream = await s.pool.queryStream('Well', c.query, c.options);
        expect(stream.failure, c.name).toEqual(expected);
        expect(await text(stream), c.name).toBe(JSON.stringify(expected));
      }
      // An unknown type and a non-string one are the façade's refusals too.
      for (const type of ['Wel', '', 42, 'x'.repeat(100_000)]) {
        expect(await pool.query(type as string, {})).toEqual(await store.query(type as string, {}));
      }
    } finally {
      await Promise.all([pool.close(), store.close(), lax.pool.close(), lax.store.close()]);
    }
  });

  it('answers of many slices: updated documents, astral characters at slice edges, skip, limit and sort', async () => {
    const { pool, store } = await both('slices.db');
    try {
      // ~3 MB of JSON: several 1 MB slices and three 1,000-document batches; emoji make slice edges fall inside pairs.
      const docs = Array.from({ length: 3000 }, (_, i) => ({ pwi: `S-${i}`, wellId: `g-${i % 7}`, fracStages: i % 40, name: `😀${'é😀'.repeat(i % 300)}`, extra: { n: i, [String(i % 5)]: i } }));
      expect((await store.insert('Well', docs)).errors).toEqual([]);
      // After an update SQLite holds modifiedTimestamp as a REAL (1.7e12 renders as 1700000000000.0): answers must not show it.
      expect((await store.update('Well', { wellId: 'g-3' }, { statusCurrent: 'Producing', 'extra.k': 1.5 })).success).toBe(true);
      const queries: [unknown, unknown][] = [
        [{}, undefined],
        [{}, { skip: 1234 }],
        [{}, { limit: 2500 }],
        [{}, { limit: 1200, skip: 10, sortBy: 'fracStages', sortOrder: -1 }],
        [{ wellId: 'g-3' }, undefined],
        [{ fracStages: { gte: 20 } }, { sortBy: 'name' }],
        [{ pwi: 'none' }, undefined],
      ];
      for (const [q, o] of queries) {
        const expected = JSON.stringify(await store.query('Well', q, o));
        const stream = await pool.queryStream('Well', q, o);
        const chunks: string[] = [];
        for await (const c of stream) chunks.push(c);
        const label = JSON.stringify([q, o]);
        expect(chunks.join(''), label).toBe(expected);
        for (const c of chunks) {
          // Each chunk is encoded alone (res.write): a cut pair would turn into U+FFFD.
          expect(Buffer.from(c, 'utf8').toString('utf8'), label).toBe(c);
        }
        if (expected.length > 2_500_000) expect(chunks.length, label).toBeGreaterThan(2);
        expect(JSON.stringify(await pool.query('Well', q, o)), label).toBe(expected);
      }
    } finally {
      await pool.close();
      await store.close();
    }
  });

  it('types and schema, answered without a worker', async () => {
    const { pool, store } = await both('catalogue.db');
    try {
      expect(await pool.types()).toEqual(await store.types());
      for (const t of ['Well', 'well', 'Folder', 'Wel', '']) expect(await pool.schema(t)).toEqual(await store.schema(t));
    } finally {
      await pool.close();
      await store.close();
    }
  });
});

describe('answers in one slice', () => {
  it('hand their whole text at once (`whole`), what iterating them gives; longer and refused answers do not', async () => {
    const { pool, store } = await both('whole.db');
    try {
      const docs = Array.from({ length: 1001 }, (_, i) => ({ pwi: `W-${i}` }));
      expect((await store.insert('Well', docs)).errors).toEqual([]);
      const one = await pool.queryStream('Well', { pwi: 'W-7' });
      expect(one.whole).toBe(JSON.stringify(await store.query('Well', { pwi: 'W-7' })));
      expect(await text(one)).toBe(one.whole);
      // 1,001 documents: two slices of at most 1,000.
      const long = await pool.queryStream('Well', {});
      expect(long.whole).toBeUndefined();
      expect(await text(long)).toBe(JSON.stringify(await store.query('Well', {})));
      const refused = await pool.queryStream('Well', { pwi: { gte: 3 } });
      expect(refused.failure?.errors[0]!.code).toBe('INVALID_QUERY');
      expect(refused.whole).toBeUndefined();
    } finally {
      await pool.close();
      await store.close();
    }
  });
});

describe('writes as the store does', () => {
  it('the same envelopes and the same documents for a sequence of writes, with a fixed clock and seeded ids', async () => {
    const options = { clock: () => '2024-05-01T12:00:00.000Z', ids: 7 };
    const plain = DynamicStore.open(dir.file('writes-plain.db'), options);
    const pool = await createPool(dir.file('writes-pool.db'), { ...options, readers: 1, workerScript: script });
    type Step = (s: { insert: DynamicStore['insert']; replace: DynamicStore['replace']; update: DynamicStore['update']; delete: DynamicStore['delete']; insertMany: DynamicStore['insertMany'] }) => Promise<unknown>;
    const steps: Step[] = [
      (s) => s.insert('Well', [{ pwi: 'A', basinName: 'Permian' }, { pwi: 'B' }]),
      (s) => s.insert('Well', [{ pwi: 'C' }, { pwi: 'A' }]),
      (s) => s.insert('Well', [{ pwi: 'D' }, { pwi: 'B' }], { atomic: true }),
      (s) => s.insert('Well', [{ pwi: 'E', fracStages: 'many' }]),
      (s) => s.insert('Wel', []),
      (s) => s.update('Well', { pwi: 'A' }, { statusCurrent: 'Producing', 'extra.note': 'x' }),
      (s) => s.update('Well', { pwi: 'A' }, { $set: { a: 1 } }),
      (s) => s.replace('Well', [{ id: 'fixed-1', pwi: 'F' }, { pwi: 'G' }]),
      (s) => s.delete('Well', { pwi: 'B' }),
      (s) => s.delete('Well', {}),
      (s) => s.insertMany([
        { type: 'Well', docs: [{ pwi: 'H' }] },
        { type: 'DailyProduction', docs: [{ pwi: 'H', prodDate: '2024-01-01', oil: 10 }] },
      ]),
      (s) => s.insertMany([{ type: 'Well', docs: [{ pwi: 'I' }] }, { type: 'Well', docs: [{ pwi: 'A' }] }]),
      // A caller's activity id reaches the writer thread with each kind of write.
      (s) => s.insert('Well', [{ pwi: 'K' }], { activityId: 'op-1' }),
      (s) => s.update('Well', { pwi: 'A' }, { fracStages: 2 }, { activityId: 'op-1' }),
      (s) => s.replace('Well', [{ id: 'fixed-1', pwi: 'F2' }], { activityId: 'op-1' }),
      (s) => s.delete('Well', { pwi: 'C' }, { activityId: 'op-1' }),
      (s) => s.insertMany([{ type: 'Well', docs: [{ pwi: 'L' }] }], { activityId: 'op-2' }),
    ];
    try {
      for (const [i, step] of steps.entries()) {
        const expected = await step(plain);
        expect(await step(pool as never), `step ${i}`).toEqual(expected);
      }
      const alice = await pool.withUser('alice').insert('Well', [{ pwi: 'J' }]);
      const alicePlain = await plain.withUser('alice').insert('Well', [{ pwi: 'J' }]);
      expect(alice).toEqual(alicePlain);
      for (const type of ['Well', 'DailyProduction']) expect(await pool.query(type, {})).toEqual(await plain.query(type, {}));
      expect((await pool.query('Well', { pwi: 'J' })).data[0]!.createdBy).toBe('alice');
      expect((await pool.query('Well', { pwi: { in: ['A', 'F2', 'K', 'L'] } }, { sortBy: 'pwi' })).data.map((d) => d.lastUpdatedActivityId)).toEqual(['op-1', 'op-1', 'op-1', 'op-2']);
    } finally {
      await pool.close();
      await plain.close();
    }
  });
});

describe('misuse and bad input', () => {
  it('misuse throws or rejects with TypeError/RangeError; a file that is not a store is refused', async () => {
    await expect(createPool(':memory:', { workerScript: script })).rejects.toThrow(TypeError);
    await expect(createPool(dir.file('m.db'), { workerScript: script, reader: 2 } as never)).rejects.toThrow(/unknown option "reader".*readers/);
    await expect(createPool(dir.file('m.db'), { workerScript: script, ids: () => 'x' })).rejects.toThrow(/integer seed/);
    await expect(createPool(dir.file('m.db'), { workerScript: script, readers: 0 })).rejects.toThrow(RangeError);
    await expect(createPool(dir.file('m.db'), { workerScript: script, maxQueryMs: -1 })).rejects.toThrow(RangeError);
    await expect(createPool(dir.file('m.db'), { workerScript: dir.file('missing.mjs') })).rejects.toThrow(/no worker script/);
    const junk = dir.file('junk.db');
    writeFileSync(junk, 'this is not a database, just text that is long enough to have a header of sorts....................');
    const refused = await createPool(junk, { workerScript: script }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotAStoreError);
    expect((refused as NotAStoreError).code).toBe('NOT_A_STORE');
    // The writer thread cannot bring the schema up to date while another connection holds the write lock.
    DynamicStore.open(dir.file('locked.db')).close();
    const holder = new Database(dir.file('locked.db'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const busy = await createPool(dir.file('locked.db'), { workerScript: script, busyTimeoutMs: 20, indexes: { Well: [{ fields: ['spudDate'] }] } }).catch((e: unknown) => e);
      expect(busy).toBeInstanceOf(StoreBusyError);
      expect((busy as StoreBusyError).code).toBe('STORE_BUSY');
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }

    const pool = await createPool(dir.file('m.db'), { readers: 1, workerScript: script });
    expect(() => pool.withUser('')).toThrow(TypeError);
    await expect(pool.query('Well', {}, undefined, { signal: 'stop' } as never)).rejects.toThrow(TypeError);
    await pool.close();
    expect(pool.closed).toBe(true);
    await expect(pool.query('Well', {})).rejects.toThrow(/closed/);
    await expect(pool.close()).resolves.toBeUndefined();
  });

  it('a value that cannot reach a worker (a function) answers INVALID_REQUEST, and the pool goes on', async () => {
    const pool = await createPool(dir.file('clone.db'), { readers: 1, workerScript: script });
    try {
      const r = await pool.insert('Well', [{ pwi: 'A', extra: { f: () => 1 } }]);
      expect(r.success).toBe(false);
      expect(r.errors[0]!.code).toBe('INVALID_REQUEST');
      expect((await pool.insert('Well', [{ pwi: 'A' }])).count).toBe(1);
      expect((await pool.query('Well', { pwi: 'A' }, undefined)).count).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('a worker that dies answers INTERNAL (with a request id, its cause to onError), is replaced, and the pool goes on', async () => {
    const seen: [unknown, string][] = [];
    const pool = await createPool(dir.file('crash.db'), { readers: 1, workerScript: await crashingWorkerScript(), onError: (e, id) => seen.push([e, id]) });
    try {
      await pool.insert('Well', [{ pwi: 'A' }]);
      const r = await pool.query('__crash__', {});
      expect(r.success).toBe(false);
      expect(r.errors[0]!.code).toBe('INTERNAL');
      expect(r.message).toMatch(/^internal error \(request [0-9a-f]{12}\)$/);
      expect(seen).toHaveLength(1);
      expect(seen[0]![1]).toBe(r.errors[0]!.requestId);
      expect(String(seen[0]![0])).toMatch(/exited with code 3/);
      expect(pool.stats().crashed).toBe(1);
      expect((await pool.query('Well', {})).count).toBe(1);
      expect((await pool.query('Well', { pwi: 'A' })).count).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('a stream that fails after its first chunk throws a DataStoreError from the iteration (never an unhandled rejection)', async () => {
    const file = dir.file('fail.db');
    const store = DynamicStore.open(file);
    await store.insert('Well', Array.from({ length: 2500 }, (_, i) => ({ pwi: `P${i}` })));
    const pool = await createPool(file, { readers: 1, maxQueryMs: 1000, workerScript: script });
    try {
      const stream = await pool.queryStream('Well', {});
      const seen: string[] = [];
      const failure = await (async () => {
        for await (const chunk of stream) {
          seen.push(chunk);
          // A consumer slower than the deadline: the query is stopped between two chunks.
          await new Promise((r) => setTimeout(r, 1200));
        }
      })().catch((e: unknown) => e);
      expect(seen).toHaveLength(1);
      expect(DataStoreError.is(failure)).toBe(true);
      expect((failure as DataStoreError).code).toBe('TIMEOUT');
      expect(((failure as DataStoreError).envelope as Envelope).message).toMatch(/maxQueryMs \(1000 ms\)/);
      expect((await pool.query('Well', { pwi: 'P1' })).count).toBe(1);
    } finally {
      await pool.close();
      await store.close();
    }
  });
});

describe('the journal through the pool', () => {
  it("records the writer thread's writes (history, log, feed) and serves the feed from the main thread", async () => {
    const file = dir.file('journal-pool.db');
    const pool = await createPool(file, { readers: 1, workerScript: script, history: ['Well'], changeFeed: true, activityLog: true });
    try {
      const events: string[] = [];
      const watching = (async () => {
        for await (const e of pool.watch('Well')) {
          events.push(`${e.op} ${e.doc.pwi}`);
          if (events.length === 3) break;
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      const ins = await pool.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
      await pool.delete('Well', { pwi: 'A' });
      await watching;
      expect(events).toEqual(['insert A', 'insert B', 'delete A']);
      const versions = await pool.query('VersionDocument', { oid: ins.insertedIds[0] });
      expect(versions.data.map((v) => v.event)).toEqual(['insert', 'delete']);
      expect((await pool.query('ActivityLog', {})).data.map((l) => l.name)).toEqual(['insert', 'delete']);
      const polled = await pool.changes('Well', { since: 0 });
      expect(polled.data.map((e) => e.seq)).toEqual([1, 2, 3]);
    } finally {
      await pool.close();
    }
  });

  it('ends a long poll by maxQueryMs with an empty success, however long its wait', async () => {
    const pool = await createPool(dir.file('journal-pool-wait.db'), { readers: 1, workerScript: script, changeFeed: true, maxQueryMs: 100 });
    try {
      // Longer than the test's own timeout: only the pool's bound can end it in time.
      const polled = await pool.changes('Well', { waitMs: 120_000 });
      expect(polled).toMatchObject({ success: true, data: [] });
    } finally {
      await pool.close();
    }
  });
});
