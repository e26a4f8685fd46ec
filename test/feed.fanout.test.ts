/** The change feed's reader: bounds by seeks, one shared reader per store, long polls on time, slow subscribers dropped. */
import { describe, expect, it, vi } from 'vitest';
import { DataStoreError, type ChangeEvent } from '../src/index.js';
import { DynamicStore } from '../src/store.js';
import { Fanout, MAX_BUFFERED } from '../src/core/fanout.js';
import { resolveSettings } from '../src/settings.js';
import { SqliteBackend } from '../src/sqlite/backend.js';

/** A store over a SQLite backend whose feed the test can spy on. */
function open(file = ':memory:', feedBufferBytes?: number) {
  const settings = resolveSettings({ changeFeed: true, ...(feedBufferBytes ? { feedBufferBytes } : {}) }, 'test');
  const backend = new SqliteBackend(file, settings);
  return { backend, feed: backend.feed, store: DynamicStore.over(backend, settings) };
}

describe('the feed bounds', () => {
  it('are read by seeks at the ends of the seq key, never a scan of the feed', async () => {
    const { backend, store } = open();
    await store.insert('Well', Array.from({ length: 50 }, (_, i) => ({ pwi: `W${i}` })));
    const prepare = vi.spyOn(backend.database, 'prepare');
    expect(backend.feed.bounds()).toEqual({ first: 1, last: 50 });
    const sql = prepare.mock.calls.map(([s]) => s).filter((s) => s.includes('cd_changes'));
    prepare.mockRestore();
    expect(sql.length).toBeGreaterThan(0);
    const plans = sql.flatMap((s) => (backend.database.prepare(`EXPLAIN QUERY PLAN ${s}`).all() as { detail: string }[]).map((r) => r.detail));
    expect(plans.filter((d) => d.includes('cd_changes'))).toEqual(['SEARCH cd_changes', 'SEARCH cd_changes']);
    await store.close();
  });
});

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Feed calls by method, from spies on the backend's feed. */
function spy(feed: SqliteBackend['feed']) {
  const calls = { read: vi.spyOn(feed, 'read'), bounds: vi.spyOn(feed, 'bounds'), version: vi.spyOn(feed, 'version') };
  return {
    calls,
    reset: () => Object.values(calls).forEach((c) => c.mockClear()),
  };
}

describe('one reader per store', () => {
  it('500 idle watchers cost one look at the version per period and no read; one commit is read once for all', async () => {
    const { feed, store } = open();
    const pollMs = 5;
    const { calls, reset } = spy(feed);
    const watches = [
      ...Array.from({ length: 300 }, () => store.watch('Well', { pollMs })),
      ...Array.from({ length: 100 }, () => store.watch(undefined, { pollMs })),
      ...Array.from({ length: 100 }, () => store.watch('Well', { pollMs, query: { pwi: 'A' } })),
    ];
    const pending = watches.map((w) => w.next());
    // Every watcher opens (a seek each) and joins the store's reader.
    await tick(50);
    reset();
    const t0 = performance.now();
    await tick(100);
    const periods = (performance.now() - t0) / pollMs;
    expect(calls.read).not.toHaveBeenCalled();
    expect(calls.bounds).not.toHaveBeenCalled();
    // Timers fire late, never early: at most one look per elapsed period, whatever the number of watchers.
    expect(calls.version.mock.calls.length).toBeLessThanOrEqual(periods + 1);
    expect(calls.version).toHaveBeenCalled();

    reset();
    await store.insert('Well', [{ pwi: 'A' }]);
    const got = await Promise.all(pending);
    expect(got.map((r) => (r.done ? null : r.value.doc.pwi))).toEqual(watches.map(() => 'A'));
    // One read of what committed, and one for the 100 watchers sharing a query: not one per watcher.
    expect(calls.read).toHaveBeenCalledTimes(2);
    await Promise.all(watches.map((w) => w.return()));
    await store.close();
  });

  it('polls the version through a statement prepared once, not pragma() (which prepares one on each call)', async () => {
    const { backend, store } = open();
    const watch = store.watch('Well', { pollMs: 5 });
    const pending = watch.next();
    await tick(30);
    const prepare = vi.spyOn(backend.database, 'prepare');
    const pragma = vi.spyOn(backend.database, 'pragma');
    const version = vi.spyOn(backend.feed, 'version');
    await tick(60);
    expect(version).toHaveBeenCalled();
    expect(pragma).not.toHaveBeenCalled();
    expect(prepare).not.toHaveBeenCalled();
    await watch.return();
    await pending;
    await store.close();
  });

  it('a watch without a query opened level with the polling reader joins it without a read of its own', async () => {
    const { feed, store } = open();
    await store.insert('Well', [{ pwi: 'A' }]);
    const first = store.watch('Well', { pollMs: 5 });
    const firstNext = first.next();
    await tick(30);
    const { calls } = spy(feed);
    const later = Array.from({ length: 20 }, () => store.watch('Well', { pollMs: 5 }));
    const pending = later.map((w) => w.next());
    await tick(30);
    expect(calls.read).not.toHaveBeenCalled();
    await store.insert('Well', [{ pwi: 'B' }]);
    const got = await Promise.all([firstNext, ...pending]);
    expect(got.map((r) => (r.done ? null : r.value.doc.pwi))).toEqual(got.map(() => 'B'));
    await Promise.all([first, ...later].map((w) => w.return()));
    await store.close();
  });

  it('a watch behind the reader reads its backlog, then joins it without a gap or a repeat', async () => {
    const { store } = open();
    const other = store.watch(undefined, { pollMs: 5 });
    const pending = other.next();
    await store.insert('Well', Array.from({ length: 2500 }, (_, i) => ({ pwi: `W${i}` })));
    const seqs: number[] = [];
    const behind = (async () => {
      for await (const e of store.watch('Well', { since: 0, pollMs: 5 })) {
        seqs.push(e.seq);
        // Written while it reads its backlog and while the store's reader runs ahead of it.
        if (seqs.length === 1000) await store.insert('Well', [{ pwi: 'late' }]);
        if (seqs.length === 2501) break;
      }
    })();
    await behind;
    expect(seqs).toEqual(Array.from({ length: 2501 }, (_, i) => i + 1));
    await pending;
    await other.return();
    await store.close();
  });

  it('a long poll reads nothing while it waits and ends within its wait and one period', async () => {
    const { feed, store } = open();
    await store.insert('Well', [{ pwi: 'A' }]);
    const { calls } = spy(feed);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      let answered = false;
      const polled = store.changes('Plugin', { since: 0, waitMs: 20_000, pollMs: 25 }).then((a) => ((answered = true), a));
      await vi.advanceTimersByTimeAsync(19_990);
      expect(answered).toBe(false);
      const reads = calls.read.mock.calls.length;
      // Its own backlog once, then level with the store's reader: not a read of the feed every period.
      expect(reads).toBeLessThanOrEqual(2);
      await vi.advanceTimersByTimeAsync(10 + 25);
      expect(answered).toBe(true);
      expect(await polled).toMatchObject({ success: true, data: [] });
      expect(calls.read.mock.calls.length).toBe(reads);
    } finally {
      vi.useRealTimers();
    }
    await store.close();
  });
});

describe('the store reader', () => {
  it('stops polling once no subscriber is level with it, even one it was started for', async () => {
    const { feed, store } = open();
    await store.insert('Well', [{ pwi: 'A' }]);
    const fanout = new Fanout({ feed, gate: () => null, closed: () => store.closed });
    const sub = fanout.subscribe({ info: null, plan: null, after: 0, pollMs: 5 });
    // Behind the reader it started: not handed events, so its wait ends at once for it to read its backlog.
    await sub.wait(60_000);
    expect([fanout.at, fanout.live]).toEqual([1, 0]);
    sub.close();
    await vi.waitFor(() => expect(fanout.at).toBe(-1));
    const { calls } = spy(feed);
    await tick(60);
    expect(calls.version).not.toHaveBeenCalled();
    await store.close();
  });
});

describe('a subscriber that does not read', () => {
  const docs = Array.from({ length: MAX_BUFFERED + 500 }, (_, i) => ({ pwi: `W${i}` }));

  it('is dropped with CHANGES_OVERFLOW past MAX_BUFFERED events, its buffer never above the bound', async () => {
    const { feed, store } = open();
    const fanout = new Fanout({ feed, gate: () => null, closed: () => store.closed });
    const sub = fanout.subscribe({ info: null, plan: null, after: feed.head() as number, pollMs: 5 });
    expect(await sub.take(10)).toEqual([]);
    void sub.wait(60_000);
    await vi.waitFor(() => expect(fanout.live).toBe(1));
    // What it holds, seen before each read of the store's reader and at the end.
    const held: number[] = [];
    const read = feed.read;
    vi.spyOn(feed, 'read').mockImplementation((...args) => (held.push(sub.buffered), read(...args)));
    await store.insert('Well', docs.slice(0, 5000));
    await store.insert('Well', docs.slice(5000));
    await vi.waitFor(() => expect(fanout.live).toBe(0));
    held.push(sub.buffered);
    expect(Math.max(...held)).toBeLessThanOrEqual(MAX_BUFFERED);
    expect(held.at(-1)).toBe(0);
    await expect(sub.take(1)).rejects.toMatchObject({ errors: [{ code: 'CHANGES_OVERFLOW' }] });
    await store.close();
  });

  it('ends a watch with a DataStoreError CHANGES_OVERFLOW once it fell MAX_BUFFERED events behind', async () => {
    const { feed, store } = open();
    const { calls } = spy(feed);
    const watch = store.watch('Well', { pollMs: 5 });
    const first = watch.next();
    await tick(30);
    await store.insert('Well', [{ pwi: 'first' }]);
    expect(((await first) as IteratorYieldResult<ChangeEvent>).value.doc.pwi).toBe('first');
    calls.read.mockClear();
    await store.insert('Well', docs.slice(0, 5000));
    await store.insert('Well', docs.slice(5000));
    // The store's reader read every new event (BATCH at a time) while the watch read none.
    await vi.waitFor(() => expect(calls.read.mock.calls.length).toBeGreaterThanOrEqual(Math.ceil(docs.length / 1000)));
    const error = await watch.next().then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(DataStoreError);
    expect(error).toMatchObject({ code: 'CHANGES_OVERFLOW' });
    expect(await watch.next()).toEqual({ done: true, value: undefined });
    await store.close();
  });
});

describe('a subscriber past feedBufferBytes', () => {
  const big = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ pwi: `B${from + i}`, name: 'x'.repeat(5000) }));

  it('is dropped when new events find it holding more than the bound; a watch that keeps up gets a larger commit whole', async () => {
    const bound = 100_000;
    const { store } = open(':memory:', bound);
    const dropped: unknown[] = [];
    const stalled = store.watch('Well', { pollMs: 5, onDrop: (e) => dropped.push(e) });
    const reading = store.watch('Well', { pollMs: 5 });
    const firsts = [stalled.next(), reading.next()];
    await tick(30);
    await store.insert('Well', big(0, 1));
    await Promise.all(firsts);
    // One commit of about 1 MB, ten times the bound: handed whole to both, the reading watch takes all of it.
    await store.insert('Well', big(1, 200));
    const seqs: number[] = [];
    for await (const e of reading) if (seqs.push(e.seq) === 200) break;
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => i + 2));
    expect(dropped).toEqual([]);
    // The next commit finds the stalled watch still holding the first: dropped at once, without a next() pending.
    await store.insert('Well', big(201, 1));
    await vi.waitFor(() => expect(dropped).toHaveLength(1));
    expect(dropped[0]).toBeInstanceOf(DataStoreError);
    expect(dropped[0]).toMatchObject({ code: 'CHANGES_OVERFLOW' });
    await expect(stalled.next()).rejects.toMatchObject({ code: 'CHANGES_OVERFLOW' });
    await store.close();
  });

  it('is an open option of a positive integer of bytes', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '1'] as unknown[]) {
      expect(() => resolveSettings({ feedBufferBytes: bad as number }, 'DataStore.open')).toThrow(RangeError);
    }
    expect(() => resolveSettings({ feedBufferBytes: 0 }, 'DataStore.open')).toThrow(/DataStore.open: feedBufferBytes must be a positive integer of bytes/);
    expect(resolveSettings({}, 'DataStore.open').feedBufferBytes).toBe(8 * 1024 * 1024);
  });

  it('holds the bound and one batch at most, and lets every event go once dropped', async () => {
    const bound = 100_000;
    const { feed, store } = open(':memory:', bound);
    const fanout = new Fanout({ feed, gate: () => null, closed: () => store.closed, bufferBytes: bound });
    const sub = fanout.subscribe({ info: null, plan: null, after: feed.head() as number, pollMs: 5 });
    expect(await sub.take(10)).toEqual([]);
    void sub.wait(60_000);
    await vi.waitFor(() => expect(fanout.live).toBe(1));
    const held: number[] = [];
    for (let i = 0; i < 10 && fanout.live; i++) {
      await store.insert('Well', big(i * 10, 10));
      await tick(20);
      held.push(sub.bytes);
    }
    expect(fanout.live).toBe(0);
    // Ten events of about 5.4 KB a commit: the bound and one commit at most, then nothing.
    expect(Math.max(...held)).toBeLessThanOrEqual(bound + 10 * 6000);
    expect(Math.max(...held)).toBeGreaterThan(bound);
    expect(held.at(-1)).toBe(0);
    expect(fanout.buffered).toBe(0);
    await expect(sub.take(1)).rejects.toMatchObject({ errors: [{ code: 'CHANGES_OVERFLOW' }] });
    await store.close();
  });
});

describe("a subscriber's buffer", () => {
  it('hands out every event once and in order, however offers and takes interleave, counting what it holds', async () => {
    const fanout = new Fanout({ feed: {} as SqliteBackend['feed'], gate: () => null, closed: () => false });
    const sub = fanout.subscribe({ info: null, plan: null, after: 0, pollMs: 25 });
    // Level with the reader: take() answers from the buffer alone.
    sub.joined();
    const event = (seq: number) => ({ seq, type: 'Well', op: 'insert', id: String(seq), doc: {}, activityId: null, at: '' }) as unknown as ChangeEvent;
    let offered = 0;
    const taken: number[] = [];
    // 700 offered per round, taken 1, 3 and up to 500 at a time: the part read grows past 1,024 and is compacted.
    for (let round = 0; round < 12; round++) {
      sub.offer(Array.from({ length: 700 }, (_, i) => event(offered + i + 1)), offered + 700);
      offered += 700;
      for (const limit of [1, 3, 500]) {
        for (let i = 0; i < 100; i++) {
          const before = sub.buffered;
          const out = await sub.take(limit);
          expect(out.length).toBe(Math.min(limit, before));
          expect(sub.buffered).toBe(before - out.length);
          taken.push(...out.map((e) => e.seq));
        }
      }
    }
    while (sub.buffered) taken.push(...(await sub.take(1000)).map((e) => e.seq));
    expect(taken).toEqual(Array.from({ length: offered }, (_, i) => i + 1));
  });
});
