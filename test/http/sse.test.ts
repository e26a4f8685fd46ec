/**
 * The change feed as Server-Sent Events: the events buffered for a stream go out together, one chunk per commit (of
 * at most about 64 KB), not one write per event; every event once, in order.
 */
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { DataStore } from '../../src/index.js';
import { createFetchHandler } from '../../src/http/index.js';

/** Reads chunks until `done(text)`; answers each chunk's text. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, done: (text: string) => boolean): Promise<string[]> {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  while (!done(chunks.join(''))) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    chunks.push(decoder.decode(value));
  }
  return chunks;
}

const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

describe('Server-Sent Events of the change feed', () => {
  it('sends one commit of 100 events (under 64 KB) to a live stream in one chunk', async () => {
    const store = DataStore.open(':memory:', { changeFeed: true });
    const ac = new AbortController();
    try {
      const res = await createFetchHandler(store)(new Request('http://x/api/data/changes?type=Well', { headers: { accept: 'text/event-stream' }, signal: ac.signal }));
      const reader = res.body!.getReader();
      await readUntil(reader, (t) => t.includes(': consolidata change feed'));
      await store.insert('Well', Array.from({ length: 100 }, (_, i) => ({ pwi: `W${i}` })));
      const chunks = await readUntil(reader, (t) => t.includes('id: 100\n'));
      expect(chunks).toHaveLength(1);
      expect(ids(chunks[0]!)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      ac.abort();
      await reader.cancel();
    } finally {
      store.close();
    }
  });

  it('sends a backlog in chunks of about 64 KB, every event once and in order', async () => {
    const store = DataStore.open(':memory:', { changeFeed: true });
    const ac = new AbortController();
    try {
      await store.insert('Well', Array.from({ length: 2000 }, (_, i) => ({ pwi: `W${i}`, name: 'x'.repeat(100) })));
      const res = await createFetchHandler(store)(new Request('http://x/api/data/changes?type=Well&since=0', { headers: { accept: 'text/event-stream' }, signal: ac.signal }));
      const reader = res.body!.getReader();
      const chunks = (await readUntil(reader, (t) => t.includes('id: 2000\n'))).filter((c) => c.startsWith('id: '));
      const total = chunks.reduce((n, c) => n + c.length, 0);
      expect(total).toBeGreaterThan(200_000);
      // Each chunk but the last holds at least 64 K characters and at most one event more.
      for (const c of chunks.slice(0, -1)) expect(c.length).toBeGreaterThanOrEqual(64 * 1024);
      expect(chunks.length).toBeLessThanOrEqual(Math.ceil(total / (64 * 1024)) + 1);
      expect(ids(chunks.join(''))).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
      ac.abort();
      await reader.cancel();
    } finally {
      store.close();
    }
  });
});

describe('opening a stream', () => {
  it('reads the feed\'s facts once per store: 50 more streams look nothing up in sqlite_master and read no events', async () => {
    // Every statement run, by its SQL: prepared statements are wrapped as they are made (cached ones too, at first use).
    const executed: string[] = [];
    const prepare = Database.prototype.prepare;
    vi.spyOn(Database.prototype, 'prepare').mockImplementation(function (this: Database.Database, sql: string) {
      const statement = prepare.call(this, sql) as unknown as Record<string, (...args: unknown[]) => unknown>;
      for (const m of ['get', 'all', 'run', 'iterate']) {
        const run = statement[m]!;
        statement[m] = function (this: unknown, ...args: unknown[]) {
          executed.push(sql);
          return run.apply(this, args);
        };
      }
      return statement as never;
    });
    const store = DataStore.open(':memory:', { changeFeed: true });
    const ac = new AbortController();
    try {
      await store.insert('Well', [{ pwi: 'A' }]);
      const handle = createFetchHandler(store);
      const open = async () => {
        const res = await handle(new Request('http://x/api/data/changes?type=Well', { headers: { accept: 'text/event-stream' }, signal: ac.signal }));
        const reader = res.body!.getReader();
        await readUntil(reader, (t) => t.includes(': consolidata change feed'));
        return reader;
      };
      const first = await open();
      executed.length = 0;
      const readers = [];
      for (let i = 0; i < 50; i++) readers.push(await open());
      const run = executed.filter((sql) => !sql.startsWith('PRAGMA'));
      expect(run.filter((sql) => sql.includes('sqlite_master'))).toEqual([]);
      expect(run.filter((sql) => /FROM "?cd_changes"? WHERE/.test(sql))).toEqual([]);
      // What is left: per stream, the feed's newest seq where it starts (the request's check and the stream's), a
      // seek each; once, the store's reader's look at its own position if it had stopped meanwhile.
      expect(run.length).toBeLessThanOrEqual(2 * 50 + 1);
      await store.insert('Well', [{ pwi: 'B' }]);
      for (const r of [first, ...readers]) expect(ids((await readUntil(r, (t) => t.includes('id: 2\n'))).join(''))).toEqual([2]);
    } finally {
      vi.restoreAllMocks();
      ac.abort();
      store.close();
    }
  });
});
