/** Version history, the activity log and the change feed (SQLite): what each write leaves in the journal. */
import { describe, expect, it } from 'vitest';
import { createFetchHandler } from '../src/http/index.js';
import { DataStore, DataStoreError, type ChangeEvent } from '../src/index.js';
import { openPostgres } from '../src/postgres/index.js';
import { backends } from './helpers/backends.js';
import { tempDir } from './helpers/store.js';

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

/** Events of a watch collected in the background until `n` arrived (or `stop()`). */
function collect(events: AsyncGenerator<ChangeEvent, void, undefined>, n: number) {
  const seen: ChangeEvent[] = [];
  const done = (async () => {
    for await (const e of events) {
      seen.push(e);
      if (seen.length >= n) break;
    }
  })();
  return { seen, done };
}

describe.each(backends())('version history on $name', (backend) => {
  it('writes one VersionDocument per insert, update, replace and delete, answered oldest first', async () => {
    const store = await backend.open({ history: ['Well'] });
    const ins = await store.insert('Well', [{ pwi: 'A', name: 'a1' }], { activityId: 'act-1' });
    const id = ins.insertedIds[0]!;
    await store.update('Well', { pwi: 'A' }, { name: 'a2' });
    await store.replace('Well', [{ id, pwi: 'A', name: 'a3' }]);
    const del = await store.delete('Well', { pwi: 'A' });
    const h = await store.history('Well', id);
    expect(h.data.map((v) => [v.event, v.oid, v.type, v.body.name])).toEqual([
      ['insert', id, 'Well', 'a1'],
      ['update', id, 'Well', 'a2'],
      ['replace', id, 'Well', 'a3'],
      // A delete's version holds the document as it was.
      ['delete', id, 'Well', 'a3'],
    ]);
    expect(h.data[0]!.createdActivityId).toBe('act-1');
    expect(h.data[3]!.createdActivityId).toBe(del.activityId);
    expect(h.data.every((v) => Number.isSafeInteger(v.versionTimestamp))).toBe(true);
    // VersionDocument is queryable like any type.
    const q = await store.query('VersionDocument', { oid: id, event: 'update' });
    expect(q.data.map((v) => v.body)).toEqual([h.data[1]!.body]);
    store.close();
  });

  it('an update of many documents writes a version of each; types without history write none', async () => {
    const store = await backend.open({ history: ['Well'] });
    await store.insert('Well', Array.from({ length: 300 }, (_, i) => ({ pwi: `W${i}`, basinName: i % 3 ? 'P' : 'D' })));
    expect((await store.insert('Plugin', [{ name: 'c' }])).count).toBe(1);
    const u = await store.update('Well', { basinName: 'P' }, { statusCurrent: 'Producing' });
    expect(u.count).toBe(200);
    const versions = await store.query('VersionDocument', { event: 'update' });
    expect(versions.count).toBe(200);
    expect(new Set(versions.data.map((v) => (v.body as { statusCurrent?: string }).statusCurrent))).toEqual(new Set(['Producing']));
    expect((await store.query('VersionDocument', { type: 'Plugin' })).count).toBe(0);
    store.close();
  });

  it('an atomic insert that rolls back leaves no version, no change event, no log entry with its stamps', async () => {
    const feed = backend.changeFeed;
    const store = await backend.open({ history: true, changeFeed: feed, activityLog: true });
    await store.insert('Well', [{ pwi: 'A' }]);
    const before = feed ? await store.dynamic.changes() : { success: true };
    const r = await store.insert('Well', [{ pwi: 'B' }, { pwi: 'A' }], { atomic: true, activityId: 'doomed' });
    expect(r.errors[0]!.code).toBe('DUPLICATE_KEY');
    expect((await store.query('Well', { pwi: 'B' })).count).toBe(0);
    expect((await store.query('VersionDocument', { createdActivityId: 'doomed' })).count).toBe(0);
    if (feed) expect((await store.dynamic.changes(undefined, { since: 0 })).data.filter((e) => e.activityId === 'doomed')).toEqual([]);
    expect(before.success).toBe(true);
    // Only the refusal's own log entry carries the activity, and it says what happened.
    const logs = await store.query('ActivityLog', { createdActivityId: 'doomed' });
    expect(logs.data.map((l) => [l.hasError, l.errorName, l.numDocsCreated])).toEqual([[true, 'DUPLICATE_KEY', 0]]);
    store.close();
  });

});

describe.each(backends())('replace of an unchanged document on $name', (backend) => {
  it('writes no version and no change event and leaves every stamp; a changed one still writes', async () => {
    const feed = backend.changeFeed;
    const store = await backend.open({ history: ['Well'], changeFeed: feed, activityLog: true });
    await store.insert('Well', [{ pwi: 'A', name: 'a', extra: { x: 1, y: [1, 2] } }, { pwi: 'B', name: 'b' }]);
    const [a, b] = (await store.query('Well', {})).data;
    // Without the feed (Citus), its checks are left out: history and the log say the same.
    const events = async () => (feed ? (await store.dynamic.changes(undefined, { since: 0 })).data : []);
    const head = (await events()).length;
    // Members in another order, and stamps from elsewhere: still the same document.
    const again = { extra: { y: [1, 2], x: 1 }, name: 'a', pwi: 'A', id: a!.id, updatedAt: '2001-01-01', updatedBy: 'someone' };
    const r = await store.replace('Well', [again, { ...b }], { activityId: 'same' });
    expect([r.success, r.count, r.insertedIds]).toEqual([true, 2, []]);
    expect((await store.query('Well', {})).data).toEqual([a, b]);
    expect((await store.history('Well', a!.id as string)).data.map((v) => v.event)).toEqual(['insert']);
    expect((await events()).length).toBe(head);
    const log = await store.query('ActivityLog', { createdActivityId: 'same' });
    expect(log.data.map((l) => [l.name, l.numDocsCreated, l.numDocsModified, l.hasError])).toEqual([['replace', 0, 0, false]]);
    // One changed member: that document is replaced and stamped, the unchanged one is not.
    const changed = await store.replace('Well', [{ ...a, name: 'a2' }, { ...b }], { activityId: 'changed' });
    expect([changed.success, changed.count]).toEqual([true, 2]);
    const [a2, b2] = (await store.query('Well', {})).data;
    expect([a2!.name, a2!.lastUpdatedActivityId, a2!.createdAt]).toEqual(['a2', 'changed', a!.createdAt]);
    expect(b2).toEqual(b);
    expect((await store.history('Well', a!.id as string)).data.map((v) => v.event)).toEqual(['insert', 'replace']);
    if (feed) expect((await events()).slice(head).map((e) => [e.op, e.doc.pwi])).toEqual([['replace', 'A']]);
    store.close();
  });

  it('keeps the stamps a document carries with keepStamps, and sets them without it', async () => {
    const store = await backend.open();
    const stamps = { createdAt: '2020-01-01T00:00:00.000Z', createdBy: 'etl', createdActivityId: 'c1', updatedAt: '2021-01-01T00:00:00.000Z', updatedBy: 'ops', modifiedTimestamp: 1609459200000, lastUpdatedActivityId: 'u1' };
    await store.load('Well', [{ id: 'kept', pwi: 'K', ...stamps }], { keepStamps: true });
    await store.replace('Well', [{ id: 'kept2', pwi: 'K2', ...stamps }], { keepStamps: true });
    await store.load('Well', [{ id: 'set', pwi: 'S', ...stamps }]);
    const byId = Object.fromEntries((await store.query('Well', {})).data.map((d) => [d.id, d]));
    expect(byId.kept).toMatchObject(stamps);
    expect(byId.kept2).toMatchObject(stamps);
    // Without it, a write is stamped by the store (creation stamps given on insert are kept, as always).
    expect(byId.set!.updatedBy).toBe(store.userId);
    expect(byId.set!.updatedAt).not.toBe(stamps.updatedAt);
    expect(byId.set!.lastUpdatedActivityId).not.toBe('u1');
    store.close();
  });
});

describe('version history on SQLite files', () => {
  it('history: true covers every type but the journal ones; bad options throw at open', () => {
    expect(() => DataStore.open(':memory:', { history: ['Wel' as 'Well'] })).toThrow(RangeError);
    expect(() => DataStore.open(':memory:', { history: ['VersionDocument'] })).toThrow(/its documents are the journal/);
    expect(() => DataStore.open(':memory:', { changeRetention: 0 })).toThrow(RangeError);
    expect(() => DataStore.open(':memory:', { activityLog: 'yes' as unknown as boolean })).toThrow(TypeError);
    const store = DataStore.open(':memory:', { history: true });
    const triggers = store.database.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'jr.%'`).pluck().all() as string[];
    expect(triggers.some((t) => t.startsWith('jr._well.history'))).toBe(true);
    expect(triggers.some((t) => t.startsWith('jr._version_document') || t.startsWith('jr._activity_log'))).toBe(false);
    store.close();
  });

  it('stays on in the file for a process that opens it without the option', async () => {
    const t = tempDir();
    const file = t.file('h.db');
    const a = DataStore.open(file, { history: ['Well'] });
    await a.insert('Well', [{ pwi: 'A' }]);
    a.close();
    const b = DataStore.open(file);
    const id = (await b.query('Well', { pwi: 'A' })).data[0]!.id!;
    await b.delete('Well', { pwi: 'A' }, { activityId: 'from-b' });
    expect((await b.history('Well', id)).data.map((v) => [v.event, v.createdActivityId])).toEqual([
      ['insert', expect.any(String)],
      ['delete', 'from-b'],
    ]);
    b.close();
    t.cleanup();
  });
});

describe.each(backends())('activity log on $name', (backend) => {
  it('writes one ActivityLog per write request with what it did', async () => {
    const store = await backend.open({ activityLog: true, tool: { name: 'etl', version: '2.1' } });
    const ins = await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
    await store.update('Well', { pwi: { in: ['A', 'B'] } }, { name: 'x' });
    await store.replace('Well', [{ id: ins.insertedIds[0]!, pwi: 'A' }, { pwi: 'D' }]);
    await store.delete('Well', { pwi: 'C' });
    await store.load('Well', [{ pwi: 'E' }, { pwi: 'F' }]);
    const logs = (await store.query('ActivityLog', {})).data;
    expect(logs.map((l) => [l.name, l.method, l.dataTypes, l.numDocsCreated, l.numDocsModified, l.numDocsDeleted, l.hasError])).toEqual([
      ['insert', 'POST', ['Well'], 3, 0, 0, false],
      ['update', 'PATCH', ['Well'], 0, 2, 0, false],
      ['replace', 'PUT', ['Well'], 1, 1, 0, false],
      ['delete', 'DELETE', ['Well'], 0, 0, 1, false],
      ['load', 'POST', ['Well'], 2, 0, 0, false],
    ]);
    expect(logs[0]!.createdActivityId).toBe(ins.activityId);
    expect([logs[0]!.toolName, logs[0]!.toolVersion]).toEqual(['etl', '2.1']);
    expect(typeof logs[0]!.duration).toBe('number');
    expect(Date.parse(logs[0]!.endTime!)).toBeGreaterThanOrEqual(Date.parse(logs[0]!.startTime!));
    store.close();
  });

  it('logs a refused request in a transaction of its own, and a partial insert with its error', async () => {
    const store = await backend.open({ activityLog: true });
    await store.insert('Well', [{ pwi: 'A' }]);
    const bad = await store.insert('Well', [{ pwi: 'B', spudDate: 'not a date' }]);
    expect(bad.errors[0]!.code).toBe('VALIDATION');
    const partial = await store.insert('Well', [{ pwi: 'A' }, { pwi: 'C' }]);
    expect(partial.count).toBe(1);
    const unknown = await store.dynamic.update('Nope', { a: 1 }, { b: 2 });
    expect(unknown.errors[0]!.code).toBe('UNKNOWN_TYPE');
    const logs = (await store.query('ActivityLog', {}, { sortBy: 'startTime' })).data.slice(1);
    expect(logs.map((l) => [l.name, l.hasError, l.errorName, l.numDocsCreated])).toEqual([
      ['insert', true, 'VALIDATION', 0],
      ['insert', true, 'DUPLICATE_KEY', 1],
      ['update', true, 'UNKNOWN_TYPE', 0],
    ]);
    expect(logs.map((l) => l.createdActivityId)).toEqual([bad.activityId, partial.activityId, unknown.activityId]);
    store.close();
  });

  it('is off by default', async () => {
    const store = await backend.open();
    await store.insert('Well', [{ pwi: 'A' }]);
    expect((await store.query('ActivityLog', {})).count).toBe(0);
    store.close();
  });
});

describe.each(backends().filter((b) => b.changeFeed))('change feed on $name', (backend) => {
  it('yields every committed change in commit order with strictly increasing seq, filtered by type and query', async () => {
    const store = await backend.open({ changeFeed: true });
    const all = collect(store.watch(), 6);
    const some = collect(store.watch('Well', { query: { pwi: { in: ['A', 'C'] } } }), 3);
    await tick();
    const a = await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    await store.update('Well', { pwi: 'B' }, { name: 'b' });
    await store.insert('Plugin', [{ name: 'co' }]);
    await store.insert('Well', [{ pwi: 'C' }]);
    await store.delete('Well', { pwi: 'A' });
    await Promise.all([all.done, some.done]);
    expect(all.seen.map((e) => [e.type, e.op, e.doc.pwi ?? e.doc.name])).toEqual([
      ['Well', 'insert', 'A'],
      ['Well', 'insert', 'B'],
      ['Well', 'update', 'B'],
      ['Plugin', 'insert', 'co'],
      ['Well', 'insert', 'C'],
      ['Well', 'delete', 'A'],
    ]);
    const seqs = all.seen.map((e) => e.seq);
    expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
    expect(some.seen.map((e) => [e.op, e.doc.pwi])).toEqual([
      ['insert', 'A'],
      ['insert', 'C'],
      ['delete', 'A'],
    ]);
    expect(all.seen[0]!.activityId).toBe(a.activityId);
    expect(all.seen[0]!.id).toBe(a.insertedIds[0]);
    store.close();
  });

  it("gives a replace's events in the order of its documents, whatever the order of their rows", async () => {
    const store = await backend.open({ changeFeed: true });
    const { insertedIds: [a, b, c] } = await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }, { pwi: 'C' }]);
    const last = (await store.dynamic.changes('Well', { since: 0 })).data.at(-1)!.seq;
    const r = await store.replace('Well', [{ id: c!, pwi: 'C', name: 'c' }, { id: a!, pwi: 'A', name: 'a' }, { pwi: 'X' }, { pwi: 'Y' }, { id: b!, pwi: 'B', name: 'b' }]);
    expect(r.success).toBe(true);
    const events = (await store.dynamic.changes('Well', { since: last })).data;
    expect(events.map((e) => `${e.op}:${e.doc.pwi}`)).toEqual(['replace:C', 'replace:A', 'insert:X', 'insert:Y', 'replace:B']);
    store.close();
  });

  it('a watch without since sees every write issued after watch() returns, before its first next()', async () => {
    const store = await backend.open({ changeFeed: true });
    await store.insert('Well', [{ pwi: 'BEFORE' }]);
    const events = store.watch('Well');
    // Not awaited: issued in the same tick as the watch, as an application would.
    const written = Promise.all([store.insert('Well', [{ pwi: 'A' }]), store.insert('Well', [{ pwi: 'B' }])]);
    const seen: unknown[] = [];
    for await (const e of events) {
      seen.push(e.doc.pwi);
      if (seen.length === 2) break;
    }
    await written;
    // Both, and nothing else; two requests in flight at once may commit in either order (PostgreSQL's pool runs them
    // on two connections).
    expect([...seen].sort()).toEqual(['A', 'B']);
    store.close();
  });

  it('changes() without since starts where it is called, not where its request runs', async () => {
    const store = await backend.open({ changeFeed: true });
    await store.insert('Well', [{ pwi: 'BEFORE' }]);
    const polled = store.dynamic.changes('Well', { waitMs: 30_000 });
    await store.insert('Well', [{ pwi: 'A' }]);
    const answer = await polled;
    expect(answer.success).toBe(true);
    expect(answer.data.map((e) => e.doc.pwi)).toEqual(['A']);
    store.close();
  });

  it("return() ends a pending next() with done and settles, as events.on's iterators do", async () => {
    const store = await backend.open({ changeFeed: true });
    const events = store.watch('Well');
    const pending = events.next();
    expect(await events.return(undefined)).toEqual({ done: true, value: undefined });
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(await events.next()).toEqual({ done: true, value: undefined });
    // A consumer that stops waiting at a deadline, then stops: its loop ends without an event.
    const ac = new AbortController();
    const raced = store.watch('Well', { signal: ac.signal });
    const step = raced.next();
    ac.abort();
    expect(await step).toEqual({ done: true, value: undefined });
    await store.insert('Well', [{ pwi: 'LATE' }]);
    expect(await raced.next()).toEqual({ done: true, value: undefined });
    store.close();
  });

  it('resumes from since with exactly the missed events, and refuses a since that was pruned (CHANGES_PRUNED)', async () => {
    const store = await backend.open({ changeFeed: true, changeRetention: 10 });
    for (let i = 0; i < 5; i++) await store.insert('Well', [{ pwi: `W${i}` }]);
    const first = (await store.dynamic.changes(undefined, { since: 0 })).data;
    expect(first.map((e) => e.doc.pwi)).toEqual(['W0', 'W1', 'W2', 'W3', 'W4']);
    const resumed = collect(store.watch(undefined, { since: first[2]!.seq }), 2);
    await resumed.done;
    expect(resumed.seen.map((e) => e.doc.pwi)).toEqual(['W3', 'W4']);
    // 1,000 events more: the oldest are pruned past the retention, 1,000 at a time.
    await store.insert('Well', Array.from({ length: 1000 }, (_, i) => ({ pwi: `X${i}` })));
    const last = (await store.dynamic.changes(undefined, { since: first[4]!.seq + 990 })).data;
    expect(last.map((e) => e.doc.pwi)).toEqual(['X990', 'X991', 'X992', 'X993', 'X994', 'X995', 'X996', 'X997', 'X998', 'X999']);
    const pruned = await store.dynamic.changes(undefined, { since: 1 });
    expect(pruned.errors[0]).toMatchObject({ code: 'CHANGES_PRUNED', field: 'since' });
    await expect(store.watch(undefined, { since: 1 }).next()).rejects.toBeInstanceOf(DataStoreError);
    store.close();
  });

  it('refuses a since (or Last-Event-ID) ahead of the feed, naming its newest event, instead of waiting in silence', async () => {
    const store = await backend.open({ changeFeed: true });
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    const head = (await store.dynamic.changes(undefined, { since: 0 })).data.at(-1)!.seq;
    const ahead = await store.dynamic.changes(undefined, { since: head + 100, waitMs: 0 });
    expect(ahead.errors[0]).toMatchObject({ code: 'INVALID_REQUEST', field: 'since' });
    expect(ahead.message).toContain(`newest event is ${head}`);
    await expect(store.watch(undefined, { since: head + 1 }).next()).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    // At the head itself: accepted, and the next write is the next event.
    const atHead = collect(store.watch('Well', { since: head }), 1);
    await store.insert('Well', [{ pwi: 'C' }]);
    await atHead.done;
    expect(atHead.seen.map((e) => e.doc.pwi)).toEqual(['C']);
    const handle = createFetchHandler(store);
    const sse = await handle(new Request('http://x/api/data/changes?type=Well', { headers: { accept: 'text/event-stream', 'last-event-id': String(head + 100) } }));
    expect(sse.status).toBe(400);
    const env = (await sse.json()) as { errors: { code: string; message: string }[] };
    expect(env.errors[0]!.code).toBe('INVALID_REQUEST');
    expect(env.errors[0]!.message).toContain(`newest event is ${head + 1}`);
    await store.close();
  });

  it('ends when its signal aborts; refuses to start when the feed is off', async () => {
    const store = await backend.open({ changeFeed: true });
    const ac = new AbortController();
    const w = collect(store.watch(undefined, { signal: ac.signal }), 1);
    await tick();
    ac.abort();
    await w.done;
    expect(w.seen).toEqual([]);
    store.close();
    const off = await backend.open();
    await expect(off.watch().next()).rejects.toThrow(/changeFeed: true/);
    expect((await off.dynamic.changes()).errors[0]!.code).toBe('INVALID_REQUEST');
    off.close();
  });

  it('is served over HTTP as Server-Sent Events and as a long poll', async () => {
    const store = await backend.open({ changeFeed: true, changeRetention: 1 });
    const handle = createFetchHandler(store);
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    const poll = await handle(new Request('http://x/api/data/changes?type=Well&since=1&wait=0'));
    expect(poll.status).toBe(200);
    expect(((await poll.json()) as { data: ChangeEvent[] }).data.map((e) => [e.seq, e.doc.pwi])).toEqual([[2, 'B']]);
    // The long poll waits for the first event.
    const waiting = handle(new Request('http://x/api/data/changes?since=2&wait=5000'));
    await tick(50);
    await store.insert('Well', [{ pwi: 'C' }]);
    expect(((await (await waiting).json()) as { data: ChangeEvent[] }).data.map((e) => e.doc.pwi)).toEqual(['C']);
    const ac = new AbortController();
    const sse = await handle(new Request('http://x/api/data/changes?type=Well', { headers: { accept: 'text/event-stream', 'last-event-id': '1' }, signal: ac.signal }));
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = sse.body!.getReader();
    let text = '';
    while (!text.includes('id: 3\n')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toMatch(/id: 2\nevent: change\ndata: \{"seq":2,"type":"Well","op":"insert"/);
    ac.abort();
    await reader.cancel();
    const bad = await handle(new Request('http://x/api/data/changes?since=-1'));
    expect([bad.status, ((await bad.json()) as { errors: { code: string }[] }).errors[0]!.code]).toEqual([400, 'INVALID_REQUEST']);
    // Pruned: 410 Gone, so a client knows to start over.
    await store.insert('Well', Array.from({ length: 1000 }, (_, i) => ({ pwi: `X${i}` })));
    const gone = await handle(new Request('http://x/api/data/changes?since=1&wait=0'));
    expect([gone.status, ((await gone.json()) as { errors: { code: string }[] }).errors[0]!.code]).toEqual([410, 'CHANGES_PRUNED']);
    store.close();
  });
});

describe('change feed beside an atomic load', () => {
  it('yields nothing of an atomic load before it commits, and nothing of one that rolled back', async () => {
    const store = DataStore.open(':memory:', { changeFeed: true });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    async function* source() {
      yield { pwi: 'L1' };
      await held;
      yield { pwi: 'L1' }; // a duplicate: the atomic load rolls back
    }
    const loading = store.load('Well', source(), { atomic: true, batchSize: 1 });
    await tick();
    // The load's first document is in its open transaction, on the watch's connection: not yet an event.
    const got = collect(store.watch('Well', { since: 0 }), 2);
    await tick(80);
    expect(got.seen).toEqual([]);
    release();
    expect((await loading).count).toBe(0);
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    await got.done;
    expect(got.seen.map((e) => e.doc.pwi)).toEqual(['A', 'B']);
    store.close();
  });

  it('a watch without since started during an atomic load yields the load once it commits', async () => {
    const store = DataStore.open(':memory:', { changeFeed: true });
    await store.insert('Well', [{ pwi: 'BEFORE' }]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    async function* source() {
      yield { pwi: 'L1' };
      await held;
      yield { pwi: 'L2' };
    }
    const loading = store.load('Well', source(), { atomic: true, batchSize: 1 });
    await tick();
    // Its transaction holds the watch's connection: the start is the feed's committed head, not its own events.
    const got = collect(store.watch('Well'), 2);
    release();
    expect((await loading).count).toBe(2);
    await got.done;
    expect(got.seen.map((e) => e.doc.pwi)).toEqual(['L1', 'L2']);
    store.close();
  });
});

describe('the journal and hand-written SQL', () => {
  it("records a delete by a connection that set no context at the clock, never as the store's last request", async () => {
    const store = DataStore.open(':memory:', { changeFeed: true, history: ['Well'] });
    await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    const ours = await store.delete('Well', { pwi: 'A' }, { activityId: 'ours' });
    expect(ours.count).toBe(1);
    // The same connection, as an application's own SQL would use it.
    expect(store.database.prepare(`DELETE FROM "docs_Well" WHERE json_extract(doc, '$.pwi') = 'B'`).run().changes).toBe(1);
    const events = (await store.dynamic.changes(undefined, { since: 0 })).data;
    expect(events.map((e) => [e.op, e.doc.pwi, e.activityId])).toEqual([
      ['insert', 'A', expect.any(String)],
      ['insert', 'B', expect.any(String)],
      ['delete', 'A', 'ours'],
      ['delete', 'B', null],
    ]);
    expect(Date.parse(events[3]!.at)).toBeGreaterThan(Date.parse('2020-01-01'));
    const versions = (await store.query('VersionDocument', { event: 'delete' }, { sortBy: 'versionTimestamp' })).data;
    expect(versions.map((v) => [(v.body as { pwi?: string }).pwi, v.createdActivityId ?? null, Number.isSafeInteger(v.versionTimestamp)])).toEqual([
      ['A', 'ours', true],
      ['B', null, true],
    ]);
    store.close();
  });
});

describe('change feed on SQLite files', () => {
  it('resumes after a restart from the last seq it saw, with exactly the events written meanwhile', async () => {
    const t = tempDir();
    const file = t.file('restart.db');
    const first = DataStore.open(file, { changeFeed: true });
    await first.insert('Well', [{ pwi: 'A' }]);
    const seen = (await first.dynamic.changes(undefined, { since: 0 })).data;
    const last = seen[seen.length - 1]!.seq;
    first.close();
    // Another process writes while the watcher is down.
    const other = DataStore.open(file);
    await other.insert('Well', [{ pwi: 'B' }]);
    await other.update('Well', { pwi: 'A' }, { name: 'a' });
    other.close();
    const again = DataStore.open(file);
    const resumed = collect(again.watch(undefined, { since: last }), 2);
    await resumed.done;
    expect(resumed.seen.map((e) => [e.op, e.doc.pwi])).toEqual([
      ['insert', 'B'],
      ['update', 'A'],
    ]);
    again.close();
    t.cleanup();
  });

  it('sees the commits of another connection on the file, and ends when the loop breaks or the store closes', async () => {
    const t = tempDir();
    const file = t.file('feed.db');
    const reader = DataStore.open(file, { changeFeed: true });
    const writer = DataStore.open(file, { changeFeed: true });
    const got = collect(reader.watch('Well'), 2);
    await tick();
    await writer.insert('Well', [{ pwi: 'A' }]);
    await writer.insert('Well', [{ pwi: 'B' }]);
    await got.done;
    expect(got.seen.map((e) => e.doc.pwi)).toEqual(['A', 'B']);
    // A watch waiting for events ends when its store closes.
    const waiting = collect(reader.watch(), 1);
    await tick();
    reader.close();
    await waiting.done;
    expect(waiting.seen).toEqual([]);
    writer.close();
    t.cleanup();
  });
});

describe('on PostgreSQL', () => {
  it('refuses the change feed with the Citus layout at open, before connecting, saying why', async () => {
    const refused = openPostgres('postgres://nobody@127.0.0.1:1/none', { changeFeed: true, citus: true });
    await expect(refused).rejects.toThrow(/changeFeed is not available with the Citus layout: the feed is ordered by one sequence and one lock of one server/);
  });
});
