/** Soft delete: delete stamps, everything else looks past the stamped documents, purge removes for real. */
import { describe, expect, it, vi } from 'vitest';
import { DataStore, type OpenOptions } from '../src/index.js';
import { openPostgres } from '../src/postgres/index.js';
import { backends, pgCluster } from './helpers/backends.js';
import { tempDir } from './helpers/store.js';

const clock = () => '2026-05-01T00:00:00.000Z';

describe.each(backends())('soft delete on $name', (backend) => {
  it('delete stamps deletedAt/By/ActivityId/Timestamp and leaves the document in place', async () => {
    const store = await backend.open({ softDelete: ['Well'], clock, userId: 'etl' });
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    const del = await store.delete('Well', { pwi: 'A' }, { activityId: 'cleanup' });
    expect(del.count).toBe(1);
    expect((await store.query('Well', {})).data.map((d) => d.pwi)).toEqual(['B']);
    const all = await store.query('Well', {}, { includeDeleted: true });
    const a = all.data.find((d) => d.pwi === 'A')!;
    expect([a.deletedAt, a.deletedBy, a.deletedActivityId, a.deletedTimestamp]).toEqual(['2026-05-01T00:00:00.000Z', 'etl', 'cleanup', Date.parse(clock())]);
    // Deleting again finds nothing live.
    expect((await store.delete('Well', { pwi: 'A' })).count).toBe(0);
    store.close();
  });

  it('queries, iterate, update and replace ignore soft-deleted documents unless includeDeleted', async () => {
    const store = await backend.open({ softDelete: true });
    const ins = await store.insert('Well', [{ pwi: 'A', basinName: 'P' }, { pwi: 'B', basinName: 'P' }]);
    await store.delete('Well', { pwi: 'A' });
    expect((await store.query('Well', { basinName: 'P' })).total).toBe(1);
    expect((await store.query('Well', { basinName: 'P' }, { includeDeleted: true })).total).toBe(2);
    const seen: string[] = [];
    for await (const w of store.iterate('Well', {}, { batchSize: 1 })) seen.push(w.pwi!);
    expect(seen).toEqual(['B']);
    expect((await store.update('Well', { basinName: 'P' }, { name: 'x' })).count).toBe(1);
    expect((await store.update('Well', { basinName: 'P' }, { name: 'y' }, { includeDeleted: true })).count).toBe(2);
    // Replacing a soft-deleted id makes a new document in its place (created anew, counted as inserted).
    const r = await store.replace('Well', [{ id: ins.insertedIds[0]!, pwi: 'A', basinName: 'Q' }]);
    expect(r.insertedIds).toEqual([ins.insertedIds[0]]);
    const revived = (await store.query('Well', { pwi: 'A' })).data;
    expect(revived.map((d) => [d.basinName, d.deletedAt])).toEqual([['Q', undefined]]);
    const opts = await store.dynamic.query('Well', {}, { includeDeleted: 'yes' });
    expect(opts.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'options.includeDeleted' });
    store.close();
  });

  it("unique keys hold among live documents: a deleted Well's pwi can be used again", async () => {
    const store = await backend.open({ softDelete: ['Well'] });
    await store.insert('Well', [{ pwi: 'A' }]);
    const dup = await store.insert('Well', [{ pwi: 'A' }]);
    expect(dup.errors[0]!.code).toBe('DUPLICATE_KEY');
    expect(dup.errors[0]!.key).toEqual({ pwi: 'A' });
    await store.delete('Well', { pwi: 'A' });
    expect((await store.insert('Well', [{ pwi: 'A' }])).count).toBe(1);
    expect((await store.query('Well', { pwi: 'A' }, { includeDeleted: true })).count).toBe(2);
    // The live query is served by the partial unique index (SQLite's planner says so on any size of table).
    if (backend.name === 'sqlite') expect((await store.dynamic.explain('Well', { pwi: 'A' })).plan.join(' ')).toContain('ux._well.pwi~live');
    store.close();
  });

  it('purge removes for real, soft-deleted documents included, and refuses an empty query', async () => {
    const store = await backend.open({ softDelete: ['Well'] });
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
    await store.delete('Well', { pwi: { in: ['A', 'B'] } });
    const empty = await store.purge('Well', {});
    expect([empty.count, empty.errors[0]!.code]).toEqual([0, 'ILLEGAL_OPERATION']);
    expect((await store.purge('Well', { deletedAt: { ne: null } })).count).toBe(2);
    expect((await store.query('Well', {}, { includeDeleted: true })).data.map((d) => d.pwi)).toEqual(['C']);
    store.close();
  });

  it('is recorded as a delete in the history, the feed and the log; purge as a purge', async () => {
    const store = await backend.open({ softDelete: ['Well'], history: ['Well'], changeFeed: backend.changeFeed, activityLog: true });
    const id = (await store.insert('Well', [{ pwi: 'A' }])).insertedIds[0]!;
    const del = await store.delete('Well', { pwi: 'A' });
    await store.purge('Well', { pwi: 'A' });
    expect((await store.history('Well', id)).data.map((v) => [v.event, v.createdActivityId === del.activityId, v.body.deletedAt !== undefined])).toEqual([
      ['insert', false, false],
      ['delete', true, true],
      ['purge', false, true],
    ]);
    // Citus refuses the feed: there history and the log say it.
    if (backend.changeFeed) expect((await store.dynamic.changes(undefined, { since: 0 })).data.map((e) => e.op)).toEqual(['insert', 'delete', 'purge']);
    const logs = (await store.query('ActivityLog', {})).data.map((l) => [l.name, l.numDocsModified, l.numDocsDeleted]);
    expect(logs).toEqual([
      ['insert', 0, 0],
      ['delete', 0, 1],
      ['purge', 0, 1],
    ]);
    store.close();
  });

});

describe('soft delete on SQLite files', () => {
  it('stays on in the file: a process opening it without the option still deletes softly', async () => {
    const t = tempDir();
    const file = t.file('soft.db');
    const a = DataStore.open(file);
    await a.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    a.close();
    // Turned on for a file that has documents: the full unique index gives way to the partial one.
    const b = DataStore.open(file, { softDelete: ['Well'] });
    await b.delete('Well', { pwi: 'A' });
    b.close();
    const c = DataStore.open(file);
    expect((await c.query('Well', {})).data.map((d) => d.pwi)).toEqual(['B']);
    await c.delete('Well', { pwi: 'B' });
    expect((await c.query('Well', {}, { includeDeleted: true })).count).toBe(2);
    expect((await c.insert('Well', [{ pwi: 'A' }])).count).toBe(1);
    c.close();
    t.cleanup();
  });
});

/** Stores on one database, each opened on its own: a file for SQLite, a schema of the file's cluster for PostgreSQL. */
function sharedDatabases(): { name: string; database: () => { open: (options?: OpenOptions) => Promise<DataStore>; done: () => void } }[] {
  let schemas = 0;
  return backends().map((b) => ({
    name: b.name,
    database: () => {
      if (b.name.startsWith('sqlite')) {
        const t = tempDir();
        const file = t.file('shared.db');
        const cache = b.name === 'sqlite' ? {} : { documentCache: { maxBytes: 1 << 20 } };
        return { open: async (options) => DataStore.open(file, { ...cache, ...options }), done: () => t.cleanup() };
      }
      const schema = `soft_shared_${++schemas}`;
      return { open: async (options) => (await openPostgres(pgCluster().pool, { ...options, schema, ...(b.citus ? { citus: true } : {}) })) as DataStore, done: () => undefined };
    },
  }));
}

describe.each(sharedDatabases())('soft delete turned on by another store, on $name', ({ database }) => {
  it('a store already open deletes softly from then on, purges for real, and its reads leave the stamped documents out within a second', async () => {
    const db = database();
    vi.useFakeTimers({ toFake: ['performance'] });
    const open: DataStore[] = [];
    try {
      const writer = await db.open();
      const reader = await db.open();
      open.push(writer, reader);
      await writer.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }, { pwi: 'D' }]);
      const turner = await db.open({ softDelete: ['Well'] });
      await turner.delete('Well', { pwi: 'A' });
      await turner.close();
      // The writer still took Well for a hard-deleted type: its delete finds out in its transaction, and stamps.
      expect((await writer.delete('Well', { pwi: 'B' })).count).toBe(1);
      const all = (await writer.query('Well', {}, { includeDeleted: true, sortBy: 'pwi' })).data;
      expect(all.map((d) => [d.pwi, typeof d.deletedAt])).toEqual([['A', 'string'], ['B', 'string'], ['C', 'undefined'], ['D', 'undefined']]);
      expect((await writer.query('Well', {})).data.map((d) => d.pwi)).toEqual(['C', 'D']);
      // A purge still removes.
      expect((await writer.purge('Well', { pwi: 'D' })).count).toBe(1);
      expect((await writer.count('Well', {}, { includeDeleted: true })).total).toBe(3);
      // The reader asks the database again only once a second has passed (on PostgreSQL its answer serves the next request).
      vi.advanceTimersByTime(999);
      expect((await reader.query('Well', {}, { sortBy: 'pwi' })).data.map((d) => d.pwi)).toEqual(['A', 'B', 'C']);
      vi.advanceTimersByTime(1);
      await vi.waitFor(async () => expect((await reader.query('Well', {})).data.map((d) => d.pwi)).toEqual(['C']));
      expect((await reader.count('Well', {})).total).toBe(1);
    } finally {
      vi.useRealTimers();
      for (const s of open) await s.close();
      db.done();
    }
  });
});
