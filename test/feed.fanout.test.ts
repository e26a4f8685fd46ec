/** The change feed's reader: bounds by seeks, one shared reader per store, long polls on time, slow subscribers dropped. */
import { describe, expect, it, vi } from 'vitest';
import { DataStoreError, type ChangeEvent } from '../src/index.js';
import { DynamicStore } from '../src/dynamic.js';
import { resolveSettings } from '../src/settings.js';
import { SqliteBackend } from '../src/sqlite/backend.js';

/** A store over a SQLite backend whose feed the test can spy on. */
function open(file = ':memory:') {
  const settings = resolveSettings({ changeFeed: true }, 'test');
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
