/**
 * A pooled store over one database file, for servers: no request but a pinpoint read runs on the caller's thread.
 *
 * - Reads run in worker threads, each with a `DynamicStore` on its own connection (WAL lets readers run beside the
 *   writer). A pinpoint (an equality on a unique key: one document at most) is read on the pool's own thread
 *   instead, where its read costs less than sending it to a worker and its answer back. Cheap queries (an equality
 *   or `in` on an indexed field estimated to find at most FAST_ROWS rows, from the file's statistics or a bounded
 *   walk of the index: scheduler.ts `#readLane`) have a lane of their own, one worker that runs nothing else, so a
 *   flood of scans never queues them; general workers run everything else, and cheap queries too when they are idle.
 * - Writes run in one writer thread: they stay serialised and atomic, and a wait for another process's lock blocks
 *   that thread only.
 * - Every request may have a deadline (`maxQueryMs`) and an AbortSignal. Past either, its work stops: a queued
 *   request is dropped, a running one's worker is terminated and replaced (a write's transaction then dies with
 *   its connection), a query waiting for its consumer is closed; the request answers TIMEOUT.
 * - A query's answer leaves the worker as slices of its JSON text (1,000 documents or ~1 MB), the next one only
 *   when the consumer asks (`queryStream`), so a slow reader holds one slice. A worker held that way by a slow
 *   reader is replaced in its lane after a moment (up to `maxParked`), and the answer is cut past `maxParkMs`.
 * - A worker that dies answers its request INTERNAL and is replaced.
 *
 * This file is the pool's face; scheduler.ts queues and stops requests, workers.ts keeps the threads, stream.ts
 * pulls an answer's slices, and worker.ts is what each thread runs (the façade's own operations).
 */
import type { BuiltinCatalogue, CatalogueShape } from '../catalogue/index.js';
import { iteratePages, type ChangesOptions, type ReplaceOptions, type WatchOptions } from '../core/store.js';
import type { RequestControl } from '../core/store-like.js';
import { DataStoreError, type Envelope } from '../envelope.js';
import type { OpenOptions } from '../settings.js';
import type { ChangeEvent } from '../backend.js';
import type { Op } from './protocol.js';
import { Scheduler, signalOf } from './scheduler.js';
import { PoolQueryStream, wholeAnswer, type QueryStream } from './stream.js';

export type { QueryStream } from './stream.js';

type AnyDoc = Record<string, unknown>;

export interface PoolOptions<C extends CatalogueShape = BuiltinCatalogue> extends OpenOptions<C> {
  /** Worker threads for general reads (default `os.availableParallelism()`); one more serves cheap queries (see FAST_ROWS). */
  readers?: number;
  /**
   * Longest a request may take in ms, from the call to its last chunk: queueing, and a streamed answer's reading,
   * included (default: no limit). Past it the work stops and it answers TIMEOUT.
   */
  maxQueryMs?: number;
  /** Requests waiting for a worker, per lane (cheap reads, other reads, writes), beyond which a new one answers TIMEOUT at once (default: no limit). */
  maxQueued?: number;
  /** Extra reader threads started to replace workers held by slow readers of streamed answers (default 16). */
  maxParked?: number;
  /**
   * Longest a streamed answer may wait for its consumer to ask for the next slice, in ms (default 30,000): past it
   * the answer is cut (the next pull throws TIMEOUT) and its worker freed, so a client that does not read holds none.
   */
  maxParkMs?: number;
  /** The worker script: dist/pool-worker.js beside the bundle by default; tests pass a bundle of src/pool/worker.ts. */
  workerScript?: string | URL;
}

export type { RequestControl } from '../core/store-like.js';

/** What the pool is doing, for tests and monitoring. */
export interface PoolStats {
  /** Live workers by lane; `busy` run a request, `parked` wait for their consumer, `stopping` are exiting. */
  workers: { fast: number; general: number; writer: number; busy: number; parked: number; stopping: number };
  queued: number;
  /**
   * Requests sent to each lane since the pool opened: `main` the pinpoints read on the pool's own thread (an equality
   * on a unique key), `fast` those estimated cheap (see FAST_ROWS).
   */
  routed: { main: number; fast: number; general: number; write: number };
  /** Workers terminated because their request was stopped (deadline, abort, cancel). */
  stopped: number;
  /** Workers that died on their own. */
  crashed: number;
  /** Requests stopped past maxQueryMs, or answers cut past maxParkMs. */
  timeouts: number;
  aborts: number;
}

/**
 * A request's control, checked. A signal given as a value is checked here; one behind a getter (made when it is first
 * asked for, as the node bridge's is) only once it is read, which a request answered within the call never does.
 */
function controlOf(control: RequestControl | undefined): RequestControl | undefined {
  if (control === undefined) return undefined;
  if (control === null || typeof control !== 'object') throw new TypeError('control: expected { signal?: AbortSignal, aborted?: boolean }');
  const given = Object.getOwnPropertyDescriptor(control, 'signal');
  if (given && 'value' in given) signalOf(control);
  if (control.aborted !== undefined && typeof control.aborted !== 'boolean') throw new TypeError('control.aborted: expected a boolean');
  return control;
}


/**
 * A store over a database file whose requests run in worker threads (see the module comment): the untyped
 * operations of `DynamicStore`, each taking an optional `{ signal }`, plus `queryStream`. Satisfies the HTTP
 * adapter's `StoreLike`. Create it with `createPool`.
 * @example
 * const store = await createPool('wells.db', { maxQueryMs: 30_000 });
 * const page = await store.query('Well', { basinName: 'Permian' }, { limit: 50 });
 * await store.close();
 */
export class PooledStore {
  readonly #core: Scheduler;
  readonly #userId: string;
  /** The pool's maxQueryMs (Infinity: none): a long poll of the feed waits no longer. */
  readonly #maxQueryMs: number;

  private constructor(core: Scheduler, userId: string, maxQueryMs: number) {
    this.#core = core;
    this.#userId = userId;
    this.#maxQueryMs = maxQueryMs;
  }

  /** See `createPool`. */
  static async open<C extends CatalogueShape = BuiltinCatalogue>(file: string, options: PoolOptions<C> = {}): Promise<PooledStore> {
    const core = new Scheduler(file, options as PoolOptions<CatalogueShape>);
    await core.start();
    return new PooledStore(core, core.settings.userId, options.maxQueryMs ?? Infinity);
  }

  /** The same pool acting as another user (createdBy/updatedBy of its writes). */
  withUser(userId: string): PooledStore {
    if (typeof userId !== 'string' || userId === '') throw new TypeError('withUser: userId must be a non-empty string');
    return new PooledStore(this.#core, userId, this.#maxQueryMs);
  }

  /** The user this view writes as. */
  get userId(): string {
    return this.#userId;
  }

  /** True once `close()` was called (on this view or any other). */
  get closed(): boolean {
    return this.#core.closed;
  }

  /**
   * Documents matching `query`, as `DynamicStore#query` answers them, read in a worker; `total` counts every match.
   * @example await store.query('Well', { pwi: 'W1' }, undefined, { signal: AbortSignal.timeout(1000) })
   */
  async query(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<AnyDoc>> {
    const { job, head } = this.#core.submit('query', [type, query, options], this.#userId, controlOf(control));
    try {
      return (await wholeAnswer(this.#core, job, await head)) as Envelope<AnyDoc>;
    } catch (e) {
      // A failure after the first slice (TIMEOUT, a worker that died) is the answer.
      if (DataStoreError.is(e)) return e.envelope as Envelope<AnyDoc>;
      throw e;
    }
  }

  /**
   * Every document matching `query`, read a page at a time in the readers (see `DynamicStore#iterate`).
   * @example for await (const well of store.iterate('Well', { basinName: 'Permian' })) write(well);
   */
  async *iterate(type: string, query?: unknown, options?: unknown, control?: RequestControl): AsyncGenerator<AnyDoc, void, undefined> {
    this.#core.open();
    yield* iteratePages((o) => this.query(type, query, o, control), options);
  }

  /**
   * A query's answer as JSON text chunks, pulled one batch (≤1,000 documents or ~1 MB) at a time: resolves once the
   * first batch (or the refusal) is ready, so `failure` tells the status before anything is written.
   * @example
   * const answer = await store.queryStream('Well', {}, undefined, { signal });
   * res.writeHead(answer.failure ? statusOf(answer.failure) : 200, headers);
   * for await (const chunk of answer) if (!res.write(chunk)) await once(res, 'drain');
   * res.end();
   */
  queryStream(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<QueryStream> {
    try {
      const { job, head } = this.#core.submit('query', [type, query, options], this.#userId, controlOf(control));
      // A pinpoint's head is there at once: one settled promise, not a chain of them (6-8% of a pooled equality's rate).
      return head instanceof Promise ? head.then((h) => new PoolQueryStream(this.#core, job, h)) : Promise.resolve(new PoolQueryStream(this.#core, job, head));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Inserts documents in the writer thread (see `DynamicStore#insert`).
   * @example await store.insert('Well', [{ pwi: 'W1' }], { atomic: true })
   */
  insert(type: string, docs: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<never>> {
    return this.#whole('insert', [type, docs, options], control);
  }

  /**
   * Inserts documents of several types in one transaction, all or nothing (see `DynamicStore#insertMany`).
   * @example await store.insertMany([{ type: 'Well', docs: wells }, { type: 'DailyProduction', docs: daily }])
   */
  async insertMany(parts: readonly { type: string; docs: unknown }[], options?: { activityId?: string }, control?: RequestControl): Promise<Envelope<never>[]> {
    const { head } = this.#core.submit('insertMany', [parts, options], this.#userId, controlOf(control));
    const answer = ((await head) as { answer: unknown }).answer;
    return Array.isArray(answer) ? (answer as Envelope<never>[]) : [answer as Envelope<never>];
  }

  /**
   * Upserts by id (see `DynamicStore#replace`).
   * @example await store.replace('Well', [{ id, pwi: 'W1' }])
   */
  replace(type: string, docs: unknown, options?: ReplaceOptions, control?: RequestControl): Promise<Envelope<never>> {
    return this.#whole('replace', [type, docs, options], control);
  }

  /**
   * Sets fields on every match (see `DynamicStore#update`).
   * @example await store.update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing' })
   */
  update(type: string, query: unknown, body: unknown, options?: { activityId?: string }, control?: RequestControl): Promise<Envelope<never>> {
    return this.#whole('update', [type, query, body, options], control);
  }

  /**
   * Deletes every match; an empty query is refused (see `DynamicStore#delete`).
   * @example await store.delete('Well', { pwi: 'W1' })
   */
  delete(type: string, query: unknown, options?: { activityId?: string }, control?: RequestControl): Promise<Envelope<never>> {
    return this.#whole('delete', [type, query, options], control);
  }

  /** Names of every type; answered at once, without a worker (the catalogue is not in the file). */
  types(): Promise<Envelope<string>> {
    return this.#core.types();
  }

  /** The change feed as an async iterator (see DynamicStore.watch), read on this thread's own connection. */
  watch(type?: string, options?: WatchOptions): AsyncGenerator<ChangeEvent, void, undefined> {
    return this.#core.local().watch(type, options);
  }

  /**
   * The change feed's long-poll form (see DynamicStore.changes). Its wait ends by `maxQueryMs` as any request's work
   * does, answering what it has (an empty success) rather than TIMEOUT: the client polls again.
   * @example const { data } = await pool.changes('Well', { since: 41, waitMs: 25_000 });
   */
  changes(type?: string, options?: ChangesOptions): Promise<Envelope<ChangeEvent>> {
    const o = options;
    // Options the store refuses are passed on as they are, for it to answer.
    if (this.#maxQueryMs === Infinity || typeof o !== 'object' || o === null || !(o.signal === undefined || o.signal instanceof AbortSignal)) return this.#core.local().changes(type, o);
    const deadline = AbortSignal.timeout(this.#maxQueryMs);
    return this.#core.local().changes(type, { ...o, signal: o.signal ? AbortSignal.any([o.signal, deadline]) : deadline });
  }

  /** A type's fields and kinds; answered at once, without a worker. */
  schema(type: string): Promise<Envelope<{ name: string; type: string }>> {
    return this.#core.schema(type);
  }

  /** Workers, queue and stop counts, for tests and monitoring. */
  stats(): PoolStats {
    return this.#core.stats();
  }

  /**
   * Closes the pool (see Scheduler#close): further calls throw; resolves once every worker has exited.
   * @example process.on('SIGTERM', () => void store.close());
   */
  close(): Promise<void> {
    return this.#core.close();
  }

  /**
   * Rows of groups and metrics, computed in a reader (see `DynamicStore#aggregate`).
   * @example await store.aggregate('DailyProduction', {}, { groupBy: ['pwi'], metrics: { oil: { sum: 'oilVol' } } })
   */
  aggregate(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<AnyDoc>> {
    return this.#whole('aggregate', [type, query, options], control) as Promise<Envelope<AnyDoc>>;
  }

  /**
   * The number of matches, counted in a reader (see `DynamicStore#count`).
   * @example (await store.count('Well', { basinName: 'Permian' })).total
   */
  count(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<never>> {
    return this.#whole('count', [type, query, options], control);
  }

  /**
   * A field's values over the matches, read in a reader (see `DynamicStore#distinct`).
   * @example (await store.distinct('Well', 'basinName')).data
   */
  distinct(type: string, field: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<unknown>> {
    return this.#whole('distinct', [type, field, query, options], control);
  }

  /** A request answered by one whole envelope: a write, or a summary (a read whose answer is small). */
  async #whole(op: Op, args: unknown[], control: RequestControl | undefined): Promise<Envelope<never>> {
    const { head } = this.#core.submit(op, args, this.#userId, controlOf(control));
    return ((await head) as { answer: unknown }).answer as Envelope<never>;
  }
}

/**
 * Opens a pooled store over a database file (created if missing): reads in `readers` worker threads plus one for
 * cheap queries, writes in one writer thread, each request bounded by `maxQueryMs`. Resolves once every worker
 * has opened the file; rejects as `DataStore.open` would (NotAStoreError for a file that is not a store).
 * @example
 * const store = await createPool('wells.db', { readers: 2, maxQueryMs: 30_000 });
 * http.createServer(createNodeHandler(store)).listen(8080, '127.0.0.1');
 */
export function createPool<C extends CatalogueShape = BuiltinCatalogue>(file: string, options: PoolOptions<C> = {}): Promise<PooledStore> {
  return PooledStore.open(file, options);
}
