/**
 * DynamicStore: the façade of the store — the seven operations of the Consolidated Data Service API, taking
 * untyped input (type names as strings, queries and documents as `unknown`). It resolves types, parses and
 * checks queries, validates and stamps documents, and builds every envelope; a backend (src/backend.ts) runs
 * the checked plans in its database. The HTTP adapter and the CLI use it; applications use the typed
 * `DataStore` (store.ts), whose `dynamic` is this.
 */
import type { BuiltinCatalogue, CatalogueShape, TypeInfo } from './catalogue/index.js';
import { schemaAnswer, typesAnswer } from './catalogue/index.js';
import { checkValue, describe, isPlainObject, jsonValue, validateDocument } from './catalogue/validate.js';
import type { Backend, ChangeEvent, Explained, FieldSet, InsertResult, Journal, StoredDoc, WriteCounts } from './backend.js';
import { collect, DataStoreError, envelope, fail, internalFailure, requestError, RequestError, type Envelope, type EnvelopeError } from './envelope.js';
import { LIMITS } from './limits.js';
import type { Condition, QueryPlan } from './query/ast.js';
import { encodeCursor } from './query/cursor.js';
import { parseFieldPath, parsePlan, type ParseContext } from './query/parse.js';
import { resolveSettings, type OpenOptions, type Settings } from './settings.js';
import { SqliteBackend } from './sqlite/backend.js';
import type { Db } from './sqlite/connection.js';
import { rowSlices, textSlices, type SliceSize, type TextSlices } from './slices.js';
import { Fanout } from './fanout.js';
import { ChangeStream, type FeedStart } from './watch.js';

export type { OpenOptions, IndexSpec } from './settings.js';

export interface WriteOptions {
  /**
   * The activity this write belongs to (default: a new ObjectId-style id): answered as the envelope's `activityId`
   * and stamped on the documents it creates (`createdActivityId`) and changes (`lastUpdatedActivityId`). Pass the
   * same id to several requests of one business operation.
   */
  activityId?: string;
}

export interface UpdateOptions extends WriteOptions {
  /** With soft delete on: update soft-deleted matches too (default false). */
  includeDeleted?: boolean;
}

export interface ReplaceOptions extends WriteOptions {
  /**
   * Keep the stamps a document carries (`createdAt`/`createdBy`/`createdActivityId`, `updatedAt`/`updatedBy`,
   * `modifiedTimestamp`, `lastUpdatedActivityId`) instead of setting them; those it lacks are set as usual. For
   * restoring an export as it was (`consolidata import` uses it); default false: the store stamps every write.
   */
  keepStamps?: boolean;
}

export interface InsertOptions extends WriteOptions {
  /** Roll the whole request back when any document collides (default false: insert the others). */
  atomic?: boolean;
}

type AnyDoc = Record<string, unknown>;

export interface ChangesOptions extends WatchOptions {
  /** Events answered at most (default 1,000, at most 10,000). */
  limit?: number;
  /** How long to wait for a first event, in ms (default 0: answer at once). */
  waitMs?: number;
}

export interface WatchOptions {
  /** Only changes whose document matches (the query language of `query`; needs a type). For a delete, the document as it was. */
  query?: unknown;
  /** Start after this seq (resume where a previous watch stopped); default: from now, only new changes. */
  since?: number;
  /** How often to look for new changes, in ms (default 25). */
  pollMs?: number;
  /** Ends the iteration when aborted. */
  signal?: AbortSignal;
}

/** State shared by a store and its `withUser` views. */
interface Core {
  readonly backend: Backend;
  readonly settings: Settings;
  closed: boolean;
  /** Set while an atomic load holds its transaction open: other requests wait for it (on one connection they would join it). */
  gate: Promise<unknown> | null;
  /** Per type with soft delete, the condition leaving soft-deleted documents out (see #scope), parsed once. */
  readonly live: Map<string, readonly Condition[]>;
  /** The one reader of the change feed every watch and long poll of the store shares, made on first use. */
  fanout?: Fanout;
}

/** A write request's journal as the façade keeps it: what the backend is given, and what became of its log entry. */
interface RequestJournal extends Journal {
  /** True once the backend took the log entry into the request's transaction. */
  logged: boolean;
  /** The log entry of a request refused before it wrote anything, naming the error; absent without the activity log. */
  readonly refusal?: (error: EnvelopeError) => StoredDoc;
}

export interface LoadOptions extends ReplaceOptions {
  /** Documents per transaction (default 1,000); with `atomic`, per insert inside the one transaction. */
  batchSize?: number;
  /**
   * One transaction for the whole source: any refused document writes nothing at all (default false). Only a
   * load in one transaction takes the bulk path (indexes rebuilt once at the end, see README "Writes").
   */
  atomic?: boolean;
  /**
   * The first refused document ends the load: its batch is not written (each batch is then all or nothing) and
   * nothing more is read; earlier batches stay, unless `atomic` (default false: skip it and go on).
   */
  stopOnError?: boolean;
  /** Errors listed in the answer at most (default 100); `message` counts them all. */
  maxErrors?: number;
  /** Called with the errors of every refused document (all of them, beyond `maxErrors`), batch by batch in source order. */
  onError?: (error: EnvelopeError) => void;
  /** Called after each batch is written (or, atomic, inserted in the open transaction): documents read, written, refused. */
  onBatch?: (progress: { read: number; written: number; refused: number }) => void;
}

/** Wraps an error the load's source threw, so that it reaches the caller as it was. */
class SourceError {
  constructor(readonly error: unknown) {}
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

const BAD_PARTS = 'insertMany: expected an array of { type, docs }';

/** An ActivityLog's `method`: the HTTP method of the operation's route in the service's API. */
const METHODS: Record<string, string> = { insert: 'POST', insertMany: 'POST', load: 'POST', replace: 'PUT', update: 'PATCH', delete: 'DELETE', purge: 'DELETE' };

/**
 * The untyped store: every check happens at run time, so it takes input from JSON (HTTP, files, other languages).
 * @example
 * const store = DynamicStore.open();
 * await store.insert(type, JSON.parse(body));
 */
export class DynamicStore {
  readonly #core: Core;
  readonly #userId: string;

  private constructor(core: Core, userId: string) {
    this.#core = core;
    this.#userId = userId;
  }

  /**
   * Opens a store over SQLite: in memory without a file (for tests), else a file in WAL mode, created if missing.
   * @example const store = DynamicStore.open('wells.db', { userId: 'etl' });
   */
  static open<C extends CatalogueShape = BuiltinCatalogue>(file = ':memory:', options: OpenOptions<C> = {}): DynamicStore {
    if (typeof file !== 'string') throw new TypeError(`DataStore.open: file must be a string path, got ${describe(file)}`);
    const settings = resolveSettings(options as OpenOptions<CatalogueShape>, 'DataStore.open');
    return DynamicStore.over(new SqliteBackend(file, settings), settings);
  }

  /**
   * A new in-memory store holding a copy of a snapshot (see `snapshot()`); it shares nothing with the original.
   * The options are those of `open` and should name the same catalogue, keys and indexes as the snapshot's store.
   * @example const copy = DynamicStore.fromSnapshot(store.snapshot());
   */
  static fromSnapshot<C extends CatalogueShape = BuiltinCatalogue>(snapshot: Uint8Array, options: OpenOptions<C> = {}): DynamicStore {
    if (!(snapshot instanceof Uint8Array)) throw new TypeError('fromSnapshot: expected a snapshot from store.snapshot()');
    const settings = resolveSettings(options as OpenOptions<CatalogueShape>, 'fromSnapshot');
    return DynamicStore.over(new SqliteBackend(snapshot, settings), settings);
  }

  /**
   * A store over any backend (see src/backend.ts), with settings from `resolveSettings`: how `openPostgres` and
   * other backends build theirs. The backend must have been made with the same settings.
   */
  static over(backend: Backend, settings: Settings): DynamicStore {
    return new DynamicStore({ backend, settings, closed: false, gate: null, live: new Map() }, settings.userId);
  }

  /** The SQLite backend, or a TypeError naming the member that needs one. */
  #sqlite(member: string): SqliteBackend {
    this.#open();
    if (this.#core.gate) throw new TypeError(`${member}: an atomic load is in progress`);
    const b = this.#core.backend;
    if (!(b instanceof SqliteBackend)) throw new TypeError(`${member} is only available on SQLite stores`);
    return b;
  }

  /**
   * The whole database as bytes (SQLite's serialize): documents, indexes and R*Trees. Restore it with `restore`
   * or `DataStore.fromSnapshot`; it is a copy, so later writes do not change it. SQLite stores only.
   * @example const snap = store.snapshot(); beforeEach(() => store.restore(snap));
   */
  snapshot(): Buffer {
    return this.#sqlite('snapshot').snapshot();
  }

  /**
   * Puts an in-memory store back to a snapshot (of this store or one opened with the same options). Every view
   * (`withUser`, `dynamic`) sees the restored data; the snapshot itself stays unchanged and reusable.
   * @example store.restore(snap)
   */
  restore(snapshot: Uint8Array): void {
    const backend = this.#sqlite('restore');
    if (!(snapshot instanceof Uint8Array)) throw new TypeError('restore: expected a snapshot from store.snapshot()');
    backend.restore(snapshot);
  }

  /** The same store acting as another user (createdBy/updatedBy). */
  withUser(userId: string): DynamicStore {
    if (typeof userId !== 'string' || userId === '') throw new TypeError('withUser: userId must be a non-empty string');
    return new DynamicStore(this.#core, userId);
  }

  /** The user this store writes as. */
  get userId(): string {
    return this.#userId;
  }

  /** True once `close()` was called (on this store or any of its views). */
  get closed(): boolean {
    return this.#core.closed;
  }

  /** The underlying better-sqlite3 connection, for inspection (EXPLAIN, pragmas). SQLite stores only. */
  get database(): Db {
    const b = this.#core.backend;
    if (!(b instanceof SqliteBackend)) throw new TypeError('database is only available on SQLite stores');
    return b.database;
  }

  /** Closes the database; further calls throw. Closing twice is harmless. Resolves once the backend has closed. */
  close(): Promise<void> {
    if (this.#core.closed) return Promise.resolve();
    this.#core.closed = true;
    try {
      return Promise.resolve(this.#core.backend.close());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Names of every type, as accepted in `type`. */
  types(): Promise<Envelope<string>> {
    return this.#run(() => typesAnswer(this.#core.settings.catalogue));
  }

  /** Every top-level field of a type with its wire kind: base fields first, then the type's own. */
  schema(type: string): Promise<Envelope<{ name: string; type: string }>> {
    return this.#run(() => schemaAnswer(this.#core.settings.catalogue, type));
  }

  /**
   * Documents matching `query`, sorted and paged by `options`; `total` counts every match.
   * @example await store.query('Well', { spudDate: { gte: '1/1/2020' } }, { sortBy: 'spudDate', limit: 50 })
   */
  query(type: string, query?: unknown, options?: unknown): Promise<Envelope<AnyDoc>> {
    return this.#run(() => {
      const { info, plan } = this.#read(type, query, options);
      return this.#answer(info, plan);
    });
  }

  /**
   * The answer of `query` as slices of its envelope's JSON text (concatenated, the text of
   * `JSON.stringify(await store.query(…))`), each of at most `size.rows` documents or about `size.chars` characters;
   * `failure` is a refusal (then there are no slices). A query without `limit` or cursor reads its documents as the
   * slices are taken, so memory stays one slice whatever the answer's size, and holds the connection until the last
   * slice or `close()`: for a store whose connection serves nothing else meanwhile (a worker thread of the pool).
   * @example const { failure, slices } = await store.queryText('Well', {}, undefined, { rows: 1000, chars: 1 << 20 });
   */
  async queryText(type: string, query: unknown, options: unknown, size: SliceSize): Promise<{ failure: Envelope<never> | null; slices: TextSlices }> {
    let streamed: TextSlices | undefined;
    const env = await this.#run(() => {
      const { info, plan } = this.#read(type, query, options);
      const { backend } = this.#core;
      const rows = backend.capabilities.stream ? backend.stream(info, plan) : null;
      if (!rows) return this.#answer(info, plan);
      streamed = rowSlices(rows, [...plan.issues], size);
      return envelope<AnyDoc>({});
    });
    if (streamed) return { failure: null, slices: streamed };
    return { failure: env.success ? null : (env as Envelope<never>), slices: textSlices(JSON.stringify(env), size.chars) };
  }

  /** A read's type and its plan, scoped to live documents: every read of documents starts here. */
  #read(type: string, query: unknown, options: unknown): { info: TypeInfo; plan: QueryPlan } {
    const info = this.#resolve(type);
    const plan = this.#scope(info, parsePlan(this.#ctx(info), query, options));
    if (plan.after && !this.#core.backend.capabilities.cursors) throw requestError('INVALID_REQUEST', 'options.cursor: this backend does not page by cursor yet; use limit and skip', { field: 'options.cursor' });
    return { info, plan };
  }

  /** The envelope of a read plan's page. */
  #answer(info: TypeInfo, plan: QueryPlan): Envelope<AnyDoc> | Promise<Envelope<AnyDoc>> {
    return then(this.#core.backend.query(info, plan), ({ data, total, next }) =>
      envelope({ data, total, issues: [...plan.issues], cursor: next ? encodeCursor(plan.shape, next, this.#core.backend.cursorKey) : null }),
    );
  }

  /**
   * Every document matching `query`, in `options`' order, as an async iterator reading `batchSize` documents at a
   * time (default 1,000): memory stays flat whatever the result's size. It follows the keyset cursor, so each batch
   * costs its own rows, and stops reading when the loop ends (`break`). `options.limit` caps the documents yielded.
   * A query the store refuses throws the DataStoreError of its envelope from the first step.
   * @example for await (const well of store.iterate('Well', { basinName: 'Permian' }, { sortBy: 'spudDate' })) write(well);
   */
  async *iterate(type: string, query?: unknown, options?: unknown): AsyncGenerator<AnyDoc, void, undefined> {
    this.#open();
    yield* iteratePages((o) => this.query(type, query, o), options);
  }

  /**
   * The versions of one document, oldest first: a VersionDocument per insert, replace, update and delete of it, while
   * its type's history is on (option `history`). A document without any answers an empty list.
   * @example (await store.history('Well', id)).data.map((v) => v.event) // ['insert', 'update', 'delete']
   */
  history(type: string, id: string): Promise<Envelope<AnyDoc>> {
    return this.#run(() => {
      const info = this.#resolve(type);
      if (typeof id !== 'string' || id === '') throw requestError('INVALID_REQUEST', `id: expected a document id, got ${describe(id)}`, { field: 'id' });
      if (!this.#core.settings.catalogue.resolve('VersionDocument')) throw requestError('UNKNOWN_TYPE', 'history: the catalogue has no VersionDocument type', { field: 'type' });
      // Insertion order is the order the versions were written in.
      return this.query('VersionDocument', { oid: id, type: info.name });
    });
  }

  /**
   * The change feed: every committed insert, replace, update and delete (of `type`, matching `options.query`, when
   * given) as an async iterator of events in commit order, `seq` strictly increasing. It sees the writes of every
   * connection and process on the file. From `options.since` (a seq: the events after it, kept ones only, else a
   * CHANGES_PRUNED DataStoreError; a seq past the newest event is refused), or from the call: every write issued
   * after it returns is yielded. It waits for new events (polling every `pollMs`, default 25, a cheap check of
   * PRAGMA data_version) until the loop breaks (`return()`, which also ends a pending `next()` at once), `signal`
   * aborts or the store closes. Needs the feed on
   * (option `changeFeed`, here or in another process on the file); a refusal rejects the first `next()`.
   * @example for await (const e of store.watch('Well', { since: lastSeq })) { apply(e); lastSeq = e.seq; }
   */
  watch(type?: string, options?: WatchOptions): AsyncGenerator<ChangeEvent, void, undefined> {
    this.#open();
    const o: WatchOptions = options ?? {};
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new TypeError('watch: options must be an object');
    const start = this.#feedFrom(type, o, this.#head(o));
    // Its failure is the first next()'s answer, even when the watch ends before one is asked for.
    start.catch(() => undefined);
    return new ChangeStream({
      start,
      closed: () => this.#core.closed,
      signal: o.signal,
      error: (e) => (e instanceof RequestError ? new DataStoreError(fail(e.errors)) : e),
    });
  }

  /**
   * The change feed as one envelope (the long-poll form of `watch`, for HTTP): the events after `since` (default:
   * those of writes issued after the call), at most `limit` (default 1,000, at most 10,000), waiting up to `waitMs` (default 0) for the
   * first. An empty answer after the wait is a success. Resume with the last event's `seq`.
   * @example const { data } = await store.changes('Well', { since: 41, waitMs: 25_000 });
   */
  changes(type?: string, options?: ChangesOptions): Promise<Envelope<ChangeEvent>> {
    const o: ChangesOptions = options ?? {};
    const valid = typeof o === 'object' && o !== null && !Array.isArray(o);
    // Taken now, not once the request runs (after an atomic load, or a tick later): writes issued after the call are past it.
    const head = valid && !this.#core.closed ? this.#head(o) : undefined;
    return this.#run(async () => {
      if (!valid) throw requestError('INVALID_REQUEST', 'options: expected an object');
      const limit = o.limit ?? 1000;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw requestError('INVALID_REQUEST', 'limit: expected an integer from 1 to 10000', { field: 'limit' });
      const waitMs = o.waitMs ?? 0;
      if (typeof waitMs !== 'number' || !(waitMs >= 0 && waitMs <= 300_000)) throw requestError('INVALID_REQUEST', 'waitMs: expected a number of milliseconds from 0 to 300000', { field: 'waitMs' });
      const { fanout, info, plan, after, pollMs } = await this.#feedFrom(type, o, head);
      const deadline = performance.now() + waitMs;
      const sub = fanout.subscribe({ info, plan, after, pollMs, batch: limit });
      try {
        for (;;) {
          const data = await sub.take(limit);
          const left = deadline - performance.now();
          if (data.length || left <= 0 || this.#core.closed || o.signal?.aborted) return envelope({ data });
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
  #head(o: WatchOptions): Promise<number> | undefined {
    const { feed, capabilities } = this.#core.backend;
    if (!capabilities.feed || o.since !== undefined) return undefined;
    let head: Promise<number>;
    try {
      head = Promise.resolve(feed.head());
    } catch (e) {
      head = Promise.reject(e);
    }
    // Awaited by #feedFrom once the request is checked; a refused request never awaits it.
    head.catch(() => undefined);
    return head;
  }

  /** The feed, the type and query to filter by, and the seq to read after (`since`, else `head`), of a `watch` or `changes` request. */
  async #feedFrom(type: string | undefined, o: WatchOptions, head: Promise<number> | undefined): Promise<FeedStart> {
    const pollMs = o.pollMs ?? 25;
    if (typeof pollMs !== 'number' || !(pollMs >= 1 && pollMs <= 60_000)) throw requestError('INVALID_REQUEST', 'pollMs: expected a number of milliseconds from 1 to 60000', { field: 'pollMs' });
    if (o.since !== undefined && (!Number.isSafeInteger(o.since) || o.since < 0)) throw requestError('INVALID_REQUEST', 'since: expected a non-negative integer (an event seq)', { field: 'since' });
    if (o.query !== undefined && type === undefined) throw requestError('INVALID_REQUEST', 'query: a query of the change feed needs a type', { field: 'query' });
    const { feed, capabilities } = this.#core.backend;
    while (this.#core.gate) await this.#core.gate;
    if (!capabilities.feed || !(await feed.enabled())) throw requestError('INVALID_REQUEST', 'the change feed is off; open the store with { changeFeed: true }');
    const info = type === undefined ? null : this.#resolve(type);
    const plan = info && o.query !== undefined ? parsePlan(this.#ctx(info), o.query, undefined) : null;
    const core = this.#core;
    const fanout = (core.fanout ??= new Fanout({ feed, gate: () => core.gate, closed: () => core.closed }));
    if (o.since === undefined) return { feed, fanout, info, plan, after: await (head ?? feed.head()), pollMs };
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
    return { feed, fanout, info, plan, after: o.since, pollMs };
  }

  /**
   * The SQL a query runs, its bound parameters, the statement counting `total`, and the database's plan for it:
   * what `query` would do, without running it. Rejects with the DataStoreError of the envelope a query would answer
   * when the query is not valid.
   * @example (await store.explain('Well', { pwi: 'W1' })).plan // ['SEARCH docs_Well USING INDEX ux._well.pwi (<expr>=?)']
   */
  async explain(type: string, query?: unknown, options?: unknown): Promise<Explained> {
    this.#open();
    let info: TypeInfo;
    let plan: QueryPlan;
    try {
      info = this.#resolve(type);
      plan = this.#scope(info, parsePlan(this.#ctx(info), query, options));
    } catch (e) {
      if (e instanceof RequestError) throw new DataStoreError(fail(e.errors));
      throw e;
    }
    return this.#core.backend.explain(info, plan);
  }

  /**
   * Inserts documents. Colliding documents are reported and skipped unless `atomic` rolls everything back.
   * @example await store.insert('Well', [{ pwi: 'W1' }, { pwi: 'W2' }])
   */
  insert(type: string, docs: unknown, options?: unknown): Promise<Envelope<never>> {
    return this.#write('insert', type, options, (journal) => {
      const info = this.#resolve(type);
      if (!Array.isArray(docs)) throw requestError('INVALID_REQUEST', `data: expected an array of documents, got ${describe(docs)}`, { field: 'data' });
      const atomic = isPlainObject(options) && options.atomic === true;
      return then(this.#core.backend.insert(info, this.#stamping(info, docs, journal), atomic, docs.length, journal), (r) => insertEnvelope(r, docs.length));
    });
  }

  /**
   * Inserts documents of several types in one transaction, all or nothing: any invalid document or collision
   * rolls every part back. Answers one envelope per part (the failed parts' errors tell why).
   * @example await store.insertMany([{ type: 'Well', docs: wells }, { type: 'DailyProduction', docs: daily }])
   */
  async insertMany(parts: readonly { type: string; docs: unknown }[], options?: WriteOptions): Promise<Envelope<never>[]> {
    this.#open();
    const types = Array.isArray(parts) ? parts.map((p) => (isPlainObject(p) ? p.type : undefined)) : [];
    let journal: RequestJournal;
    try {
      journal = this.#journal('insertMany', types, options);
    } catch (e) {
      if (e instanceof RequestError) return [fail(e.errors)];
      throw e;
    }
    const answers = (await this.#insertMany(parts, journal)).map((env) => ({ ...env, activityId: journal.activityId }));
    const refused = answers.find((a) => !a.success);
    if (refused) await this.#logRefusal(journal, refused);
    return answers;
  }

  async #insertMany(parts: readonly { type: string; docs: unknown }[], journal: Journal): Promise<Envelope<never>[]> {
    if (!Array.isArray(parts) || parts.length === 0) return [fail([{ code: 'INVALID_REQUEST', message: BAD_PARTS }])];
    // Every part is checked before anything is written, as one request.
    const checked = parts.map((part) => {
      try {
        if (!isPlainObject(part)) throw requestError('INVALID_REQUEST', BAD_PARTS);
        const info = this.#resolve(part.type);
        return { info, docs: this.#validated(info, part.docs, journal) };
      } catch (e) {
        if (!(e instanceof RequestError)) throw e;
        return fail<never>(e.errors);
      }
    });
    const refused = checked.findIndex((c) => !('info' in c));
    if (refused >= 0) return checked.map((c, i) => ('info' in c ? rolledBack(i, refused, checked[refused] as Envelope<never>) : c));
    const ready = checked as { info: TypeInfo; docs: StoredDoc[] }[];
    const env = await this.#run(async () => {
      const results = await this.#core.backend.insertMany(ready, journal);
      return envelope({ data: results as never[] });
    });
    if (!env.success) return parts.map(() => env as Envelope<never>);
    const results = env.data as unknown as InsertResult[];
    const failed = results.findIndex((r) => r.errors.length);
    return results.map((r, i) =>
      failed < 0 || i === failed ? insertEnvelope(r, ready[i]!.docs.length) : rolledBack(i, failed, insertEnvelope(results[failed]!, ready[failed]!.docs.length)),
    );
  }

  /**
   * Inserts documents from an (async) iterable, `batchSize` at a time, so memory stays flat for any source (an NDJSON
   * file, a generator): each batch is one transaction, or the whole source one with `atomic`. A refused document
   * (invalid, or a duplicate key) is skipped and reported with its position in the source (`index`, 0-based); with
   * `atomic` it makes the whole load write nothing. Answers one envelope: `count` documents written, `total` read,
   * the first `maxErrors` errors. `insertedIds` stays empty (a million ids would defeat the point).
   * @example await store.load('Well', readNdjson('wells.ndjson'), { batchSize: 5000 })
   */
  async load(type: string, source: Iterable<unknown> | AsyncIterable<unknown>, options?: LoadOptions): Promise<Envelope<never>> {
    this.#open();
    const iterable = source as { [Symbol.iterator]?: unknown; [Symbol.asyncIterator]?: unknown } | null;
    if (!iterable || (typeof iterable[Symbol.asyncIterator] !== 'function' && typeof iterable[Symbol.iterator] !== 'function')) {
      throw new TypeError('load: source must be an iterable or async iterable of documents');
    }
    const o = options ?? {};
    const batchSize = o.batchSize ?? 1000;
    const maxErrors = o.maxErrors ?? 100;
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError('load: batchSize must be a positive integer');
    if (!Number.isSafeInteger(maxErrors) || maxErrors < 0) throw new RangeError('load: maxErrors must be a non-negative integer');
    for (const k of ['onError', 'onBatch'] as const) {
      if (o[k] !== undefined && typeof o[k] !== 'function') throw new TypeError(`load: ${k} must be a function`);
    }
    const atomic = o.atomic === true;
    const stopOnError = o.stopOnError === true;
    const keepStamps = o.keepStamps === true;
    const { backend, settings } = this.#core;
    let info: TypeInfo;
    let journal: RequestJournal;
    try {
      journal = this.#journal('load', [type], o.activityId === undefined ? undefined : { activityId: o.activityId });
    } catch (e) {
      if (e instanceof RequestError) return fail(e.errors);
      throw e;
    }
    const activityId = journal.activityId;
    try {
      info = this.#resolve(type);
    } catch (e) {
      if (!(e instanceof RequestError)) throw e;
      const env = { ...fail<never>(e.errors), activityId };
      await this.#logRefusal(journal, env);
      return env;
    }
    if (atomic && !backend.capabilities.bulk) return fail([{ code: 'INVALID_REQUEST', message: 'load: this backend cannot load atomically yet; load in batches' }]);
    await this.#core.gate;
    let release = () => {};
    if (atomic) this.#core.gate = new Promise<void>((resolve) => (release = resolve));
    const errors: EnvelopeError[] = [];
    let refused = 0;
    let read = 0;
    let written = 0;
    /** Refusals of the batch being read, reported in source order once its documents are written. */
    let found: EnvelopeError[] = [];
    const report = (list: EnvelopeError[]) => {
      list.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      for (const e of list) {
        if (errors.length < maxErrors) errors.push(e);
        o.onError?.(e);
      }
    };
    let writer: ReturnType<Backend['bulk']> | undefined;
    try {
      writer = atomic ? backend.bulk() : undefined;
      let batch: StoredDoc[] = [];
      let positions: number[] = [];
      /** Documents accepted since the last batch report (an atomic load has written most of them already). */
      let accepted = 0;
      /** Writes the documents read so far; refusals wait in `found` for the batch's report. */
      const write = async () => {
        const docs = batch;
        const at = positions;
        batch = [];
        positions = [];
        // Written unless a refusal already dooms it: an atomic load rolls back, a stopping one drops its batch.
        if (docs.length && !((atomic || stopOnError) && refused)) {
          const r = writer ? await writer.insert(info, docs) : await backend.insert(info, docs, stopOnError);
          if (!r.rolledBack) written += r.insertedIds.length;
          // One error per colliding document.
          refused += r.errors.length;
          for (const e of r.errors) {
            const pos = at[e.index ?? 0]!;
            found.push({ ...e, index: pos, message: e.message.replace(/^document \d+:/, `document ${pos}:`) });
          }
        }
      };
      const flush = async () => {
        if (!accepted && !found.length) return;
        accepted = 0;
        await write();
        report(found);
        found = [];
        o.onBatch?.({ read, written: atomic ? 0 : written, refused });
      };
      const now = settings.now();
      const it = (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator]?.() ?? toAsync(iterable as Iterable<unknown>);
      for (;;) {
        let step: IteratorResult<unknown>;
        try {
          step = await it.next();
        } catch (e) {
          throw new SourceError(e);
        }
        if (step.done) break;
        const r = validateDocument(info, step.value, { strict: settings.strict, index: read });
        if (r.errors.length) {
          refused++;
          found.push(...r.errors);
        } else {
          batch.push(this.#stamp(r.doc, now, activityId, undefined, keepStamps));
          positions.push(read);
          accepted++;
        }
        read++;
        if (stopOnError && refused) break;
        if (accepted >= batchSize) await flush();
        // One transaction holds the whole atomic load: the writer takes documents as they come (its chunk); the
        // batch then paces only the reports.
        else if (writer?.chunk && batch.length >= writer.chunk) await write();
        if (stopOnError && refused) break;
        // Atomic and already refused: once the answer's error list is full, reading on changes nothing.
        if (atomic && refused && errors.length + found.length >= maxErrors) break;
      }
      if (stopOnError && refused) {
        batch = [];
        await it.return?.();
      }
      await flush();
      if (writer) {
        if (refused) {
          await writer.rollback();
          written = 0;
        } else await writer.commit();
      }
    } catch (e) {
      try {
        await writer?.rollback();
      } catch {
        // The transaction is gone with the failure that ended it.
      }
      // The source's own failure is the caller's to handle, as it threw it; what was committed stays committed.
      if (e instanceof SourceError) {
        await this.#logLoad(journal, atomic ? 0 : written, [{ code: 'INVALID_REQUEST', message: 'load: the source threw' }]);
        throw e.error;
      }
      const env = { ...this.#failure<never>(e), count: atomic ? 0 : written, total: read, activityId };
      await this.#logLoad(journal, env.count, env.errors);
      return env;
    } finally {
      if (atomic) {
        this.#core.gate = null;
        release();
      }
    }
    const message = refused
      ? atomic
        ? `0 of ${read} loaded; ${plural(refused, 'document')} refused; nothing was written (atomic)`
        : `${written} of ${read} loaded; ${plural(refused, 'document')} refused${stopOnError ? '; stopped at the first' : ''}`
      : `${written} of ${read} loaded`;
    await this.#logLoad(journal, written, errors);
    return envelope<never>({ count: written, total: read, errors, success: refused === 0, message, activityId });
  }

  /**
   * The ActivityLog document of a load, in a transaction of its own after the load's last one (a load commits batch
   * by batch: there is no one transaction to write it in). A failure to write it goes to onError.
   */
  #logLoad(journal: Journal, written: number, errors: readonly EnvelopeError[]): Promise<void> {
    return this.#logApart(journal.log?.({ created: written, modified: 0, deleted: 0, errors }));
  }

  /**
   * Upserts by id: a document whose id exists replaces it whole, any other is inserted. All or nothing. A replacement
   * equal to the stored document (stamps aside) changes nothing, stamps included, and still counts.
   * @example await store.replace('Well', [{ id: existingId, pwi: 'W1', statusCurrent: 'Shut-in' }])
   */
  replace(type: string, docs: unknown, options?: ReplaceOptions): Promise<Envelope<never>> {
    return this.#write('replace', type, options, (journal) => {
      const info = this.#resolve(type);
      const valid = this.#validateAll(info, docs);
      const keepStamps = isPlainObject(options) && options.keepStamps === true;
      const stamp = (d: StoredDoc, old?: StoredDoc) => {
        const doc = this.#stamp(d, journal.at, journal.activityId, old, keepStamps);
        return old && sameDocument(old, doc) ? null : doc;
      };
      return then(this.#core.backend.replace(info, valid, stamp, journal), ({ insertedIds, replaced, unchanged }) =>
        envelope<never>({ insertedIds, count: insertedIds.length + replaced + unchanged }),
      );
    });
  }

  /**
   * Sets the body's fields (dotted paths allowed) on every document the query matches.
   * @example await store.update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing' })
   */
  update(type: string, query: unknown, body: unknown, options?: UpdateOptions): Promise<Envelope<never>> {
    return this.#write('update', type, options, (journal) => {
      const info = this.#resolve(type);
      const includeDeleted = isPlainObject(options) && options.includeDeleted === true;
      const plan = this.#scope(info, parsePlan(this.#ctx(info), query, undefined), includeDeleted);
      const sets = this.#fieldSets(info, body);
      const now = journal.at;
      const stamps = { updatedAt: now, updatedBy: this.#userId, modifiedTimestamp: Date.parse(now), lastUpdatedActivityId: journal.activityId };
      return then(this.#core.backend.update(info, plan, sets, stamps, journal), (count) => envelope<never>({ count, issues: [...plan.issues] }));
    });
  }

  /**
   * Deletes the documents the query matches. An empty query is refused and deletes nothing.
   * @example await store.delete('Well', { pwi: 'W1' })
   */
  delete(type: string, query: unknown, options?: WriteOptions): Promise<Envelope<never>> {
    return this.#write('delete', type, options, (journal) => {
      const info = this.#resolve(type);
      const plan = parsePlan(this.#ctx(info), query, undefined);
      if (plan.conditions.length === 0) return emptyQueryRefusal('delete', plan);
      if (this.#softDeletes(info)) {
        // Soft: the live matches are stamped, not removed (purge removes).
        const stamps = { deletedAt: journal.at, deletedBy: this.#userId, deletedActivityId: journal.activityId, deletedTimestamp: Date.parse(journal.at) };
        return then(this.#core.backend.update(info, this.#scope(info, plan), [], stamps, { ...journal, op: 'delete' }), (count) => envelope<never>({ count, issues: [...plan.issues] }));
      }
      return then(this.#core.backend.delete(info, plan, journal), (count) => envelope<never>({ count, issues: [...plan.issues] }));
    });
  }

  /**
   * Removes the documents the query matches for real, soft-deleted ones included (with soft delete on, `delete` only
   * stamps them). An empty query is refused and removes nothing, as for delete.
   * @example await store.purge('Well', { deletedAt: { lt: '2026-01-01' } })
   */
  purge(type: string, query: unknown, options?: WriteOptions): Promise<Envelope<never>> {
    return this.#write('purge', type, options, (journal) => {
      const info = this.#resolve(type);
      const plan = parsePlan(this.#ctx(info), query, undefined);
      if (plan.conditions.length === 0) return emptyQueryRefusal('purge', plan);
      return then(this.#core.backend.delete(info, plan, { ...journal, op: 'purge' }), (count) => envelope<never>({ count, issues: [...plan.issues] }));
    });
  }

  /** True when the type's deletes are soft (the options, or the file, say so). */
  #softDeletes(info: TypeInfo): boolean {
    return this.#core.backend.softDelete.has(info.name);
  }

  /**
   * A plan scoped to live documents where the type's deletes are soft and the request does not include deleted ones:
   * `deletedAt` null or missing (the very term of the partial unique indexes, so they serve it). The one place
   * soft-deleted documents are left out: queries, iterate, explain, update and delete all pass here.
   */
  #scope(info: TypeInfo, plan: QueryPlan, includeDeleted = plan.includeDeleted): QueryPlan {
    if (includeDeleted || !this.#softDeletes(info)) return plan;
    let live = this.#core.live.get(info.name);
    if (!live) this.#core.live.set(info.name, (live = parsePlan(this.#ctx(info), { deletedAt: null }, undefined).conditions));
    return { ...plan, conditions: [...plan.conditions, ...live] };
  }

  // ---- internals -------------------------------------------------------------------------

  #open(): void {
    if (this.#core.closed) throw new TypeError('The DataStore is closed');
  }

  /**
   * Runs a write request under its activity id, which its envelope carries whatever the outcome. With the activity
   * log on, the backend writes the request's ActivityLog document in the request's transaction; a request that
   * wrote nothing because it was refused gets one in a transaction of its own.
   */
  async #write<T>(op: string, type: unknown, options: unknown, fn: (journal: Journal) => Envelope<T> | Promise<Envelope<T>>): Promise<Envelope<T>> {
    let journal: RequestJournal | null = null;
    const env = await this.#run(() => fn((journal = this.#journal(op, [type], options))));
    if (journal === null) return env;
    const j: RequestJournal = journal;
    if (!env.success && !j.logged) await this.#logRefusal(j, env);
    return { ...env, activityId: j.activityId };
  }

  /** The journal of a write request: its activity, time and user, and, with the activity log on, its log document. */
  #journal(op: string, types: readonly unknown[], options: unknown): RequestJournal {
    const { settings } = this.#core;
    const activityId = this.#activityOf(options);
    const at = settings.now();
    if (!settings.activityLog) return { activityId, at, userId: this.#userId, logged: false };
    const started = performance.now();
    const dataTypes = [...new Set(types.map((t) => (typeof t === 'string' ? (settings.catalogue.resolve(t)?.name ?? t.slice(0, LIMITS.nameLength)) : String(t))))];
    const entry = (done: WriteCounts, error?: EnvelopeError) => {
      const end = settings.now();
      const doc: StoredDoc = {
        name: op,
        method: METHODS[op] ?? 'POST',
        dataTypes,
        numDocsCreated: done.created,
        numDocsModified: done.modified,
        numDocsDeleted: done.deleted,
        startTime: at,
        endTime: end,
        duration: performance.now() - started,
        hasError: !!error || done.errors.length > 0,
        toolName: settings.tool.name,
        toolVersion: settings.tool.version,
      };
      const first = error ?? done.errors[0];
      if (first) {
        doc.errorName = first.code;
        doc.errorMessage = done.errors.length > 1 ? `${first.message} (and ${done.errors.length - 1} more)` : first.message;
      }
      return this.#stamp(doc, at, activityId);
    };
    const journal: RequestJournal = {
      activityId,
      at,
      userId: this.#userId,
      logged: false,
      log: (done) => {
        journal.logged = true;
        return entry(done);
      },
      refusal: (e) => entry({ created: 0, modified: 0, deleted: 0, errors: [] }, e),
    };
    return journal;
  }

  /** The ActivityLog document of a refused request, in a transaction of its own. */
  #logRefusal(journal: RequestJournal, env: Envelope<unknown>): Promise<void> {
    return this.#logApart(journal.refusal?.(env.errors[0] ?? { code: 'INTERNAL', message: env.message ?? 'refused' }));
  }

  /**
   * Writes an ActivityLog document in a transaction of its own (none without the activity log). A failure to write it
   * goes to onError: the request's answer stays what it was.
   */
  async #logApart(doc: StoredDoc | undefined): Promise<void> {
    const info = this.#core.settings.catalogue.resolve('ActivityLog');
    if (!doc || !info) return;
    try {
      await this.#core.backend.insert(info, [doc], false, 1);
    } catch (e) {
      this.#failure(e);
    }
  }

  /** The activity of a write request: the caller's `options.activityId`, or a new ObjectId-style id. */
  #activityOf(options: unknown): string {
    if (options === undefined || options === null) return this.#core.settings.newId();
    if (!isPlainObject(options)) throw requestError('INVALID_REQUEST', 'options: expected an object');
    const id = options.activityId;
    if (id === undefined || id === null) return this.#core.settings.newId();
    if (typeof id !== 'string' || id === '' || id.length > LIMITS.nameLength) {
      throw requestError('INVALID_REQUEST', `options.activityId: expected a non-empty string of at most ${LIMITS.nameLength} characters, got ${describe(id)}`, {
        field: 'options.activityId',
      });
    }
    return id;
  }

  /**
   * Runs one request: misuse throws now; bad input becomes a failed envelope, anything unexpected an INTERNAL one
   * whose cause goes to onError only (an answer never carries an engine message or a stack).
   */
  #run<T>(fn: () => Envelope<T> | Promise<Envelope<T>>): Promise<Envelope<T>> {
    this.#open();
    // An atomic load holds the connection's one transaction: run after it, never inside it.
    const gate = this.#core.gate;
    if (gate) return gate.then(() => this.#run(fn));
    const failed = (e: unknown) => this.#failure<T>(e);
    try {
      const out = fn();
      return out instanceof Promise ? out.catch(failed) : Promise.resolve(out);
    } catch (e) {
      return Promise.resolve(failed(e));
    }
  }

  /** The answer to a failure: a RequestError's errors, or INTERNAL with a request id and the cause sent to onError only. */
  #failure<T>(e: unknown): Envelope<T> {
    return e instanceof RequestError ? fail<T>(e.errors) : internalFailure<T>(e, this.#core.settings.onError);
  }

  #resolve(type: unknown): TypeInfo {
    return this.#core.settings.catalogue.require(type);
  }

  #ctx(info: TypeInfo): ParseContext {
    return { type: info, strict: this.#core.settings.strict, cursorKey: this.#core.backend.cursorKey };
  }

  /** Validates every document first: one bad document fails the request before anything is written. */
  #validateAll(info: TypeInfo, docs: unknown): StoredDoc[] {
    if (!Array.isArray(docs)) throw requestError('INVALID_REQUEST', `data: expected an array of documents, got ${describe(docs)}`, { field: 'data' });
    const errors: EnvelopeError[] = [];
    const strict = this.#core.settings.strict;
    const out = docs.map((d, index) => {
      const r = validateDocument(info, d, { strict, index });
      errors.push(...r.errors);
      return r.doc;
    });
    if (errors.length) throw new RequestError(errors);
    return out;
  }

  /** Validated and stamped documents of a new write, ready for the backend. */
  #validated(info: TypeInfo, docs: unknown, journal: Journal): StoredDoc[] {
    const valid = this.#validateAll(info, docs);
    return valid.map((d) => this.#stamp(d, journal.at, journal.activityId));
  }

  /**
   * The documents of an insert, validated and stamped one at a time as the backend writes them inside its
   * transaction, so no validated copy of the whole request is ever held. Past the first invalid document nothing
   * more is handed out; the rest are still checked, and the end throws every problem found as one VALIDATION
   * error, which rolls the transaction back: a request with an invalid document writes nothing. Each iteration
   * starts over (a backend may run the request again after a lock wait).
   */
  #stamping(info: TypeInfo, docs: readonly unknown[], journal: Journal): Iterable<StoredDoc> {
    const strict = this.#core.settings.strict;
    const stamp = (d: StoredDoc, now: string) => this.#stamp(d, now, journal.activityId);
    const now = journal.at;
    return {
      *[Symbol.iterator]() {
        const errors: EnvelopeError[] = [];
        for (let index = 0; index < docs.length; index++) {
          const r = validateDocument(info, docs[index], { strict, index });
          if (r.errors.length) errors.push(...r.errors);
          else if (!errors.length) yield stamp(r.doc, now);
        }
        if (errors.length) throw new RequestError(errors);
      },
    };
  }

  /**
   * Sets the base fields on a validated document (a fresh object of the store's own), in place: a replacement keeps
   * the creation stamps of the stored document `keep`; with `given`, the document's own stamps stay where it has them.
   */
  #stamp(doc: StoredDoc, now: string, activityId: string, keep?: StoredDoc, given = false): StoredDoc {
    const { settings } = this.#core;
    const own = (field: string) => given && doc[field] !== undefined && doc[field] !== null;
    if (typeof doc.id !== 'string') doc.id = settings.newId();
    if (!own('createdAt')) doc.createdAt = keep ? keep.createdAt : (doc.createdAt ?? now);
    if (!own('createdBy')) doc.createdBy = keep ? keep.createdBy : (doc.createdBy ?? this.#userId);
    if (!own('updatedAt')) doc.updatedAt = now;
    if (!own('updatedBy')) doc.updatedBy = this.#userId;
    if (!own('modifiedTimestamp')) doc.modifiedTimestamp = Date.parse(now);
    doc.schemaVersion = settings.catalogue.version;
    // A replaced document keeps the activity that created it (absent when it was created before activities were kept).
    if (!own('createdActivityId')) doc.createdActivityId = keep ? (keep.createdActivityId ?? undefined) : (doc.createdActivityId ?? activityId);
    if (!own('lastUpdatedActivityId')) doc.lastUpdatedActivityId = activityId;
    return doc;
  }

  /** The checked fields of an update body; every problem of the body is reported together. */
  #fieldSets(info: TypeInfo, body: unknown): FieldSet[] {
    if (!isPlainObject(body) || Object.keys(body).length === 0) {
      throw requestError('VALIDATION', `body: expected an object of fields to set, got ${Array.isArray(body) ? 'an array' : isPlainObject(body) ? 'an empty object' : describe(body)}`, { field: 'body' });
    }
    const ctx = this.#ctx(info);
    const errors: EnvelopeError[] = [];
    const sets: FieldSet[] = [];
    const seen: string[] = [];
    for (const [key, raw] of Object.entries(body)) {
      if (raw === undefined) continue;
      const label = `body.${key.length > 64 ? `${key.slice(0, 61)}...` : key}`;
      collect(errors, () => {
        if (key.startsWith('$')) {
          const what = /^\$(inc|mul|push|pull|addToSet|pop|min|max|rename|unset|currentDate)$/i.test(key) ? `${key} is not supported, and ` : '';
          throw requestError('VALIDATION', `${label}: ${what}the body holds the fields to set directly: { statusCurrent: 'Producing' }, not { $set: { statusCurrent: 'Producing' } }`, { field: key.slice(0, 64) });
        }
        const path = parseFieldPath(ctx, key, label);
        const top = path.steps[0]!.name;
        if (top === 'id') throw requestError('VALIDATION', `${label}: the id of a document cannot change`, { field: key });
        if (path.steps.some((s) => s.indexes.length)) throw requestError('VALIDATION', `${label}: array elements cannot be set by index; set the whole array`, { field: key });
        const clash = seen.find((s) => s === key || s.startsWith(`${key}.`) || key.startsWith(`${s}.`));
        if (clash) throw requestError('VALIDATION', `${label}: conflicts with body.${clash}`, { field: key });
        seen.push(key);
        if (path.steps.length === 1) {
          const r = path.field ? checkValue(path.field, raw) : jsonValue(raw);
          if (!r.ok) throw requestError('VALIDATION', `${label}: ${r.reason}`, { field: key });
          sets.push({ steps: path.steps, value: r.value });
          return;
        }
        const cat = path.field?.category;
        if (cat && !['any', 'dict', 'nested'].includes(cat)) {
          throw requestError('VALIDATION', `${label}: "${top}" is a ${path.field!.kind}; set the whole field, not a part of it`, { field: key });
        }
        // The value lands steps - 1 levels down: it may nest only as deep as a document may.
        const r = jsonValue(raw, path.steps.length - 1);
        if (!r.ok) throw requestError('VALIDATION', `${label}: ${r.reason}`, { field: key });
        sets.push({ steps: path.steps, value: r.value });
      });
    }
    if (errors.length) throw new RequestError(errors);
    return sets;
  }
}

/** The stamps every write sets anew: a replacement that differs from the stored document only in them changes nothing. */
const WRITE_STAMPS = new Set(['updatedAt', 'updatedBy', 'modifiedTimestamp', 'lastUpdatedActivityId']);

/** True when a replacement equals the stored document, its write stamps aside (member order does not matter). */
function sameDocument(stored: StoredDoc, doc: StoredDoc): boolean {
  const fields = (d: StoredDoc) => Object.keys(d).filter((k) => !WRITE_STAMPS.has(k) && d[k] !== undefined);
  const a = fields(stored);
  return a.length === fields(doc).length && a.every((k) => sameJson(stored[k], doc[k]));
}

/** Deep equality of JSON values; a member whose value is undefined counts as absent, as JSON.stringify has it. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((k) => x[k] !== undefined);
  return keys.length === Object.keys(y).filter((k) => y[k] !== undefined).length && keys.every((k) => sameJson(x[k], y[k]));
}

/** Applies f to a backend's answer: at once when it is a value (SQLite), after it when it is a promise. */
function then<T, R>(value: T | Promise<T>, f: (v: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** The envelope of an insert: the truthful partial insert, or the atomic refusal. */
function insertEnvelope(r: InsertResult, requested: number): Envelope<never> {
  if (r.rolledBack) {
    return fail(r.errors, `0 of ${requested} inserted; ${plural(r.errors.length, 'duplicate key')}; nothing was written (atomic)`);
  }
  if (!r.errors.length) return envelope({ insertedIds: r.insertedIds, count: r.insertedIds.length });
  return envelope({
    insertedIds: r.insertedIds,
    count: r.insertedIds.length,
    errors: r.errors,
    success: false,
    message: `${r.insertedIds.length} of ${requested} inserted; ${plural(r.errors.length, 'duplicate key')}`,
  });
}

/** The envelope of an insertMany part that was not written because part `failed` was refused. */
function rolledBack(part: number, failed: number, cause: Envelope<never>): Envelope<never> {
  const code = cause.errors[0]?.code ?? 'INTERNAL';
  return fail<never>([{ code, message: `part ${part} was rolled back: part ${failed} failed (${cause.message})` }]);
}

/** The answer to a delete or purge with an empty query: refused, nothing removed, `success` as the service answers. */
function emptyQueryRefusal(what: 'delete' | 'purge', plan: QueryPlan): Envelope<never> {
  const message = `Illegal operation attempted: a ${what} needs a non-empty query (it would remove every document); nothing was ${what === 'delete' ? 'deleted' : 'removed'}`;
  return envelope<never>({ count: 0, success: true, message, errors: [{ code: 'ILLEGAL_OPERATION', message }], issues: [...plan.issues] });
}

/** An async iterator over a sync iterable, without the per-item promise a `for await` over it would add beyond one. */
function toAsync<T>(iterable: Iterable<T>): AsyncIterator<T> {
  const it = iterable[Symbol.iterator]();
  return {
    next: async () => it.next(),
    return: async () => it.return?.() ?? { done: true, value: undefined },
  };
}

/**
 * Every document a query matches, read a page of `batchSize` at a time by following its keyset cursor (by skip where a
 * backend answers no cursor): the one `iterate` of every store, given how that store answers a page.
 */
export async function* iteratePages(page: (options: Record<string, unknown>) => Promise<Envelope<AnyDoc>>, options?: unknown): AsyncGenerator<AnyDoc, void, undefined> {
  const { batchSize = 1000, limit = 0, ...rest } = (isPlainObject(options) ? options : options == null ? {} : { invalid: options }) as Record<string, unknown>;
  if (!Number.isSafeInteger(batchSize) || (batchSize as number) < 1) throw new RangeError('iterate: batchSize must be a positive integer');
  if (!Number.isSafeInteger(limit) || (limit as number) < 0) throw new RangeError('iterate: limit must be a non-negative integer');
  let left = (limit as number) || Infinity;
  let cursor: string | null = null;
  let skip = 0;
  while (left > 0) {
    const size = Math.min(batchSize as number, left);
    const answer: Envelope<AnyDoc> = await page({ ...rest, limit: size, ...(cursor ? { cursor } : { skip }) });
    if (!answer.success) throw new DataStoreError(answer);
    yield* answer.data;
    left -= answer.data.length;
    skip += answer.data.length;
    cursor = answer.cursor;
    // A backend without cursors answers none while matches remain: it is paged by skip instead.
    if (!cursor && (answer.data.length < size || skip >= answer.total)) return;
  }
}
