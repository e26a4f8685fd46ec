/**
 * A watch of the change feed as an explicit async iterator (not an async generator): `return()` settles at once and
 * ends a pending `next()` with `{ done: true }`, as Node's `events.on` iterators do, where a generator's `return()`
 * would queue behind the pending `next()` until the next event.
 */
import type { ChangeEvent, ChangeFeed } from '../backend.js';
import type { TypeInfo } from '../catalogue/index.js';
import type { Fanout, Subscriber } from './fanout.js';
import type { QueryPlan } from '../query/ast.js';

/** Where a feed request starts: the feed, its store's reader, what it filters by, the seq it reads after, its polling period. */
export interface FeedStart {
  feed: ChangeFeed;
  fanout: Fanout;
  info: TypeInfo | null;
  plan: QueryPlan | null;
  after: number;
  pollMs: number;
  /** `after` is the feed's head (the request had no `since`). */
  atHead: boolean;
}

/** What a watch needs of its store. */
export interface WatchSource {
  /** Where it starts, taken when the watch was made; a rejection is the first `next()`'s. */
  readonly start: Promise<FeedStart>;
  closed(): boolean;
  signal?: AbortSignal | undefined;
  /** Told at once when its subscriber is dropped or the feed fails (with the error a `next()` would reject with). */
  onDrop?: ((error: unknown) => void) | undefined;
  /** The error a `next()` rejects with for an error of the feed. */
  error(e: unknown): unknown;
}

const done = (): IteratorReturnResult<void> => ({ done: true, value: undefined });

/** Why a watch's own signal was aborted: its iteration ended. */
const ENDED = new Error('the watch ended');

/**
 * The change feed's events in commit order, taken from its subscription to the store's one reader (fanout.ts),
 * until `return()`, the signal, the store's close, or a drop for falling too far behind (CHANGES_OVERFLOW) ends it. Steps run one at a time, in the order `next()` was called.
 * @example const w = new ChangeStream(source); const { value } = await w.next(); await w.return();
 */
export class ChangeStream implements AsyncGenerator<ChangeEvent, void, undefined> {
  readonly #source: WatchSource;
  /** Aborted when the iteration ends, whatever ended it: wakes the poll's sleep and drops the signal's listener. */
  readonly #halt = new AbortController();
  /**
   * The pending `next()`s, each ended `{ done: true }` by `return()` or the signal. Not one long-lived promise raced
   * against every step: each race would leave it a reaction holding its step's event until the iteration ends.
   */
  readonly #pending = new Set<() => void>();
  #queue: Promise<unknown> = Promise.resolve();
  #done = false;
  /** Its place among the store's feed readers, once the first `next()` ran. */
  #sub: Subscriber | undefined;

  constructor(source: WatchSource) {
    this.#source = source;
    const signal = source.signal;
    if (signal?.aborted) this.#stop();
    else if (signal) {
      const abort = () => this.#stop();
      signal.addEventListener('abort', abort, { once: true });
      this.#halt.signal.addEventListener('abort', () => signal.removeEventListener('abort', abort), { once: true });
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The next event; `{ done: true }` once the iteration ended (at once when `return()` is called meanwhile). */
  async next(): Promise<IteratorResult<ChangeEvent, void>> {
    const [e] = await this.#settle(1, Infinity);
    return e ? { done: false, value: e } : done();
  }

  /**
   * The events there are now, up to about `maxBytes` of JSON (at least one, waited for as `next()` waits), in one
   * step rather than one `next()` each: a consumer sending them on (an SSE stream) takes a commit at a time.
   * Empty once the iteration ended.
   * @example for (let batch = await w.nextBatch(65536); batch.length; batch = await w.nextBatch(65536)) send(batch);
   */
  nextBatch(maxBytes: number): Promise<ChangeEvent[]> {
    return this.#settle(Infinity, maxBytes);
  }

  /** One step, run after the steps asked for before it; [] once the iteration ended (at once on `return()`). */
  #settle(limit: number, maxBytes: number): Promise<ChangeEvent[]> {
    if (this.#done) return Promise.resolve([]);
    const step = this.#queue.then(() => this.#step(limit, maxBytes));
    this.#queue = step.catch(() => undefined);
    return new Promise((resolve, reject) => {
      const stop = () => resolve([]);
      this.#pending.add(stop);
      step.then(
        (events) => {
          this.#pending.delete(stop);
          if (!events.length) this.#end();
          resolve(events);
        },
        (e: unknown) => {
          this.#pending.delete(stop);
          this.#end();
          reject(this.#source.error(e));
        },
      );
    });
  }

  /** Ends the iteration: a pending `next()` answers `{ done: true }`, and so does every later one. */
  return(): Promise<IteratorReturnResult<void>> {
    this.#stop();
    return Promise.resolve(done());
  }

  /** Ends the iteration and rejects with `e`, as a generator without a `catch` does. */
  throw(e: unknown): Promise<IteratorResult<ChangeEvent, void>> {
    this.#stop();
    return Promise.reject(e);
  }

  /** Ends the iteration and every pending `next()` with `{ done: true }`. */
  #stop(): void {
    this.#end();
    for (const stop of this.#pending) stop();
    this.#pending.clear();
  }

  #end(): void {
    this.#done = true;
    // A reason of its own: without one, abort() makes a DOMException and captures a stack, for each stream that ends.
    this.#halt.abort(ENDED);
    this.#sub?.close();
  }

  #ended(): boolean {
    return this.#done || this.#source.closed();
  }

  async #step(limit: number, maxBytes: number): Promise<ChangeEvent[]> {
    if (this.#ended()) return [];
    if (!this.#sub) {
      const { fanout, info, plan, after, pollMs, atHead } = await this.#source.start;
      if (this.#ended()) return [];
      const onDrop = this.#source.onDrop;
      this.#sub = fanout.subscribe({ info, plan, after, pollMs, atHead, ...(onDrop ? { onFail: (e: unknown) => onDrop(this.#source.error(e)) } : {}) });
    }
    for (;;) {
      if (this.#ended()) return [];
      const events = await this.#sub.take(limit, maxBytes);
      if (events.length) return events;
      if (this.#ended()) return [];
      await this.#sub.wait(60_000, this.#halt.signal);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const wake = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal?.addEventListener('abort', wake, { once: true });
  });
}
