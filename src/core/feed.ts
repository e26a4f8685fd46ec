/**
 * What the store answers of its journal's reads: a document's versions (`history`), and the change feed as an async
 * iterator (`watch`) or one long-polled envelope (`changes`), both served by the store's one reader (fanout.ts).
 */
import { describe } from '../catalogue/validate.js';
import type { ChangeEvent } from '../backend.js';
import { DataStoreError, envelope, fail, requestError, RequestError, type Envelope } from '../envelope.js';
import { parsePlan } from '../query/parse.js';
import { ChangeStream, type FeedStart } from './change-stream.js';
import { Fanout } from './fanout.js';
import { ensureOpen, parseContext, resolveType, run, type State } from './run.js';

export interface WatchOptions {
  /** Only changes whose document matches (the query language of `query`; needs a type). For a delete, the document as it was. */
  query?: unknown;
  /** Start after this seq (resume where a previous watch stopped); default: from now, only new changes. */
  since?: number;
  /** How often to look for new changes, in ms (default 25). */
  pollMs?: number;
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
  /**
   * Called once, at once, when the watch is dropped for falling behind (CHANGES_OVERFLOW) or its feed fails, even while
   * no `next()` is pending: a consumer waiting on something else (an SSE stream waiting for its socket) ends then.
   */
  onDrop?: (error: unknown) => void;
}

export interface ChangesOptions extends Omit<WatchOptions, 'onDrop'> {
  /** Events answered at most (default 1,000, at most 10,000). */
  limit?: number;
  /** How long to wait for a first event, in ms (default 0: answer at once). */
  waitMs?: number;
}

type AnyDoc = Record<string, unknown>;

/** The versions of document `id` of `type`, oldest first, read by `query` from the VersionDocument type. */
export function history(state: State, type: string, id: string, query: (type: string, query: unknown) => Promise<Envelope<AnyDoc>>): Promise<Envelope<AnyDoc>> {
  return run(state, () => {
    const info = resolveType(state, type);
    if (typeof id !== 'string' || id === '') throw requestError('INVALID_REQUEST', `id: expected a document id, got ${describe(id)}`, { field: 'id' });
    if (!state.settings.catalogue.resolve('VersionDocument')) throw requestError('UNKNOWN_TYPE', 'history: the catalogue has no VersionDocument type', { field: 'type' });
    // Insertion order is the order the versions were written in.
    return query('VersionDocument', { oid: id, type: info.name });
  });
}

/** The change feed as an async iterator (DynamicStore#watch); a refused request rejects the first `next()`. */
export function watch(state: State, type: string | undefined, options: WatchOptions | undefined): AsyncGenerator<ChangeEvent, void, undefined> {
  ensureOpen(state);
  const o: WatchOptions = options ?? {};
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new TypeError('watch: options must be an object');
  if (o.onDrop !== undefined && typeof o.onDrop !== 'function') throw new TypeError('watch: onDrop must be a function');
  const start = feedFrom(state, type, o, head(state, o));
  // Its failure is the first next()'s answer, even when the watch ends before one is asked for.
  start.catch(() => undefined);
  return new ChangeStream({
    start,
    closed: () => state.closed,
    signal: o.signal,
    onDrop: o.onDrop,
    error: (e) => (e instanceof RequestError ? new DataStoreError(fail(e.errors)) : e),
  });
}

/** The change feed as one envelope, waiting up to `waitMs` for a first event (DynamicStore#changes). */
export function changes(state: State, type: string | undefined, options: ChangesOptions | undefined): Promise<Envelope<ChangeEvent>> {
  const o: ChangesOptions = options ?? {};
  const valid = typeof o === 'object' && o !== null && !Array.isArray(o);
  // Taken now, not once the request runs (after an atomic load, or a tick later): writes issued after the call are past it.
  const from = valid && !state.closed ? head(state, o) : undefined;
  return run(state, async () => {
    if (!valid) throw requestError('INVALID_REQUEST', 'options: expected an object');
    const limit = o.limit ?? 1000;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw requestError('INVALID_REQUEST', 'limit: expected an integer from 1 to 10000', { field: 'limit' });
    const waitMs = o.waitMs ?? 0;
    if (typeof waitMs !== 'number' || !(waitMs >= 0 && waitMs <= 300_000)) throw requestError('INVALID_REQUEST', 'waitMs: expected a number of milliseconds from 0 to 300000', { field: 'waitMs' });
    const { fanout, info, plan, after, pollMs, atHead } = await feedFrom(state, type, o, from);
    const deadline = performance.now() + waitMs;
    const sub = fanout.subscribe({ info, plan, after, pollMs, atHead, batch: limit });
    try {
      for (;;) {
        const data = await sub.take(limit);
        const left = deadline - performance.now();
        if (data.length || left <= 0 || state.closed || o.signal?.aborted) return envelope({ data });
        await sub.wait(left, o.signal);
      }
    } finally {
      sub.close();
    }
  });
}

/**
 * Where a feed request without `since` starts: the feed's head, read at once (on SQLite before this returns; on
 * PostgreSQL ahead of the store's later requests), so a write issued after the call is never taken for an earlier one.
 */
function head(state: State, o: WatchOptions): Promise<number> | undefined {
  const { feed, capabilities } = state.backend;
  if (!capabilities.feed || o.since !== undefined) return undefined;
  let at: Promise<number>;
  try {
    at = Promise.resolve(feed.head());
  } catch (e) {
    at = Promise.reject(e);
  }
  // Awaited by feedFrom once the request is checked; a refused request never awaits it.
  at.catch(() => undefined);
  return at;
}

/** The feed, the type and query to filter by, and the seq to read after (`since`, else `from`), of a `watch` or `changes` request. */
async function feedFrom(state: State, type: string | undefined, o: WatchOptions, from: Promise<number> | undefined): Promise<FeedStart> {
  const pollMs = o.pollMs ?? 25;
  if (typeof pollMs !== 'number' || !(pollMs >= 1 && pollMs <= 60_000)) throw requestError('INVALID_REQUEST', 'pollMs: expected a number of milliseconds from 1 to 60000', { field: 'pollMs' });
  if (o.since !== undefined && (!Number.isSafeInteger(o.since) || o.since < 0)) throw requestError('INVALID_REQUEST', 'since: expected a non-negative integer (an event seq)', { field: 'since' });
  if (o.query !== undefined && type === undefined) throw requestError('INVALID_REQUEST', 'query: a query of the change feed needs a type', { field: 'query' });
  const { feed, capabilities } = state.backend;
  while (state.gate) await state.gate;
  if (!capabilities.feed || !(await feed.enabled())) throw requestError('INVALID_REQUEST', 'the change feed is off; open the store with { changeFeed: true }');
  const info = type === undefined ? null : resolveType(state, type);
  const plan = info && o.query !== undefined ? parsePlan(parseContext(state, info), o.query, undefined) : null;
  const fanout = (state.fanout ??= new Fanout({ feed, gate: () => state.gate, closed: () => state.closed, bufferBytes: state.settings.feedBufferBytes }));
  if (o.since === undefined) return { feed, fanout, info, plan, after: await (from ?? feed.head()), pollMs, atHead: true };
  const bounds = await feed.bounds();
  if (o.since < bounds.first - 1) {
    const message = `since: the events after ${o.since} were pruned (the feed keeps the newest, see changeRetention); the oldest kept is ${bounds.first}`;
    throw requestError('CHANGES_PRUNED', message, { field: 'since' });
  }
  // A seq the feed never gave (another database's, or this one's before a restore) would wait in silence forever.
  if (o.since > bounds.last) {
    const message = `since: ${o.since} is ahead of the change feed, whose newest event is ${bounds.last} (a seq of another database, or of this one before a restore); resume from ${bounds.last}, or without since`;
    throw requestError('INVALID_REQUEST', message, { field: 'since' });
  }
  return { feed, fanout, info, plan, after: o.since, pollMs, atHead: false };
}
