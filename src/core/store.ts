/**
 * The store's operations over any backend: the seven operations of the Consolidated Data Service API plus `load`,
 * `iterate`, `explain` and the journal's reads, taking untyped input (type names as strings, queries and documents
 * as `unknown`). It resolves types, parses and checks queries and builds every envelope; a backend (src/backend.ts)
 * runs the checked plans in its database. It knows no engine: `DynamicStore` (src/store.ts) opens it over SQLite
 * through src/sqlite/index.ts, `openPostgres` over PostgreSQL. Its parts: run.ts (how a request runs), stamp.ts,
 * update-body.ts, journal.ts, load.ts and feed.ts.
 */
import type { TypeInfo } from '../catalogue/index.js';
import { schemaAnswer, typesAnswer } from '../catalogue/index.js';
import { describe, isPlainObject } from '../catalogue/validate.js';
import { orCatch, SoftDeleteOn, type Backend, type ChangeEvent, type Explained, type InsertResult, type Journal, type MaybePromise, type StoredDoc } from '../backend.js';
import { DataStoreError, envelope, fail, requestError, RequestError, type Envelope } from '../envelope.js';
import type { QueryPlan } from '../query/ast.js';
import { encodeCursor } from '../query/cursor.js';
import { parsePlan, type ParseContext } from '../query/parse.js';
import { parseAggregate, parseCount, parseDistinct, type SummaryPlan } from '../query/aggregate.js';
import type { Condition } from '../query/ast.js';
import { nearestBy } from './nearest.js';
import { summarize } from './summary.js';
import { pinpoint, type Settings } from '../settings.js';
import { drained, envelopeSlices, listedRows, rowSlices, type SliceSize, type TextSlices } from './slices.js';
import { changes, history, watch, type ChangesOptions, type WatchOptions } from './feed.js';
import { journaled, journalOf, logRefusal, type RequestJournal } from './journal.js';
import { load, plural, type LoadOptions } from './load.js';
import { ensureOpen, parseContext, resolveType, run, runNow, andThen, type State } from './run.js';
import { sameDocument, stamp, stamping, validateAll } from './stamp.js';
import { fieldSets } from './update-body.js';

export type { ChangesOptions, WatchOptions } from './feed.js';
export type { LoadOptions } from './load.js';

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

/** What queryText's request answers once its slices are made: a success, never read beyond that. */
const SLICED: Envelope<AnyDoc> = Object.freeze(envelope<AnyDoc>({}));

const BAD_PARTS = 'insertMany: expected an array of { type, docs }';

/** A view of a store: the same state, another user. */
type StoreClass<S> = new (state: State, userId: string) => S;

/** A whole number above zero (a slice's bound). */
function positiveInteger(n: unknown): boolean {
  return Number.isSafeInteger(n) && (n as number) > 0;
}

/**
 * The untyped store over any backend: every check happens at run time, so it takes input from JSON (HTTP, files,
 * other languages). Users know it as `DynamicStore` (src/store.ts), which adds how to open one.
 * @example
 * const store = DynamicStore.open();
 * await store.insert(type, JSON.parse(body));
 */
export class CoreStore {
  readonly #state: State;
  readonly #userId: string;

  protected constructor(state: State, userId: string) {
    this.#state = state;
    this.#userId = userId;
  }

  /** The state of a new store over `backend`, made with `settings` (resolveSettings): what a subclass's factory passes to the constructor. */
  protected static stateOf(backend: Backend, settings: Settings): State {
    return { backend, settings, closed: false, gate: null, live: new Map() };
  }

  /** The backend, for an engine's own members (src/store.ts reads SQLite's off it). */
  protected get backend(): Backend {
    return this.#state.backend;
  }

  /** The backend, once the store is open and no atomic load holds its connection; else the TypeError naming `member`. */
  protected idle(member: string): Backend {
    ensureOpen(this.#state);
    if (this.#state.gate) throw new TypeError(`${member}: an atomic load is in progress`);
    return this.#state.backend;
  }

  /** The same store acting as another user (createdBy/updatedBy). */
  withUser(userId: string): this {
    if (typeof userId !== 'string' || userId === '') throw new TypeError('withUser: userId must be a non-empty string');
    // A view is of the store's own class, so an engine's members stay on it.
    return new (this.constructor as StoreClass<this>)(this.#state, userId);
  }

  /** The user this store writes as. */
  get userId(): string {
    return this.#userId;
  }

  /** True once `close()` was called (on this store or any of its views). */
  get closed(): boolean {
    return this.#state.closed;
  }

  /** Closes the database; further calls throw. Closing twice is harmless. Resolves once the backend has closed. */
  close(): Promise<void> {
    if (this.#state.closed) return Promise.resolve();
    this.#state.closed = true;
    try {
      return Promise.resolve(this.#state.backend.close());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Names of every type, as accepted in `type`. */
  types(): Promise<Envelope<string>> {
    return run(this.#state, () => typesAnswer(this.#state.settings.catalogue));
  }

  /** Every top-level field of a type with its wire kind: base fields first, then the type's own. */
  schema(type: string): Promise<Envelope<{ name: string; type: string }>> {
    return run(this.#state, () => schemaAnswer(this.#state.settings.catalogue, type));
  }

  /**
   * Documents matching `query`, sorted and paged by `options`; `total` counts every match.
   * @example await store.query('Well', { spudDate: { gte: '1/1/2020' } }, { sortBy: 'spudDate', limit: 50 })
   */
  query(type: string, query?: unknown, options?: unknown): Promise<Envelope<AnyDoc>> {
    return run(this.#state, () => {
      const { info, plan } = this.#read(type, query, options);
      return this.#answer(info, plan);
    });
  }

  /**
   * The answer of `query` as slices of its envelope's JSON text (concatenated, the text of
   * `JSON.stringify(await store.query(…))`), each of at most `size.rows` documents or about `size.chars` characters;
   * `failure` is a refusal (then there are no slices). A query without `limit` or cursor reads its documents as the
   * slices are taken only with `hold`: memory stays one slice whatever the answer's size, and the read holds the
   * connection until the last slice or `close()`, for a store whose connection serves nothing else meanwhile (a worker
   * thread of the pool). Without it the answer is read whole before this returns, and no read stays open.
   * Documents the engine stores as JSON.stringify's text go out as read; others are serialised one at a time.
   * Answered at once, not as a promise, where the engine answers at once (SQLite): a server's hot path takes it in
   * the same task. Misuse (a closed store) throws, as `query` does.
   * @example const { failure, slices } = await store.queryText('Well', {}, undefined, { rows: 1000, chars: 1 << 20 }, true);
   */
  queryText(type: string, query: unknown, options: unknown, size: SliceSize, hold = false): MaybePromise<{ failure: Envelope<never> | null; slices: TextSlices }> {
    // A slice of no size would never end: misuse, refused before anything is read.
    if (!isPlainObject(size) || !positiveInteger(size.rows) || !positiveInteger(size.chars)) throw new TypeError('queryText: size must be { rows, chars }, positive integers');
    let streamed: TextSlices | undefined;
    const answer = () => {
      const { info, plan } = this.#read(type, query, options);
      const { backend } = this.#state;
      // Whole documents where the engine stores JSON.stringify's text of them: sent as read, never parsed.
      const stored = backend.queryText !== undefined && plan.fields === null && plan.distance === null;
      // A pinpoint's one row comes as a page, read in one call: a stream's per-row steps cost more than the row.
      const rows = backend.capabilities.stream && !(stored && pinpoint(this.#state.settings, info.name, plan.conditions)) ? backend.stream(info, plan) : null;
      // The tail is only read (tailText): the plan's own issues, not a copy. Objects of one shape, written out, not
      // spread: a spread and a key added after it made V8 a new hidden class every request (measured with perf).
      if (rows) {
        streamed = rowSlices(rows, { issues: plan.issues, cursor: null }, size, stored);
        return SLICED;
      }
      if (!stored) return this.#answer(info, plan);
      return andThen(
        nearestBy((p) => backend.queryText!(info, p), plan),
        ({ data, total, next }) => {
          const cursor = next ? encodeCursor(plan.shape, next, backend.cursorKey) : null;
          streamed = rowSlices(listedRows(data, total), { issues: plan.issues, cursor }, size, true);
          return SLICED;
        },
      );
    };
    // Read to the end inside the request's run, where nothing else uses the connection (SQLite answers synchronously).
    const env = runNow(this.#state, () =>
      andThen(answer(), (e) => {
        if (streamed && !hold) streamed = drained(streamed);
        return e;
      }),
    );
    return andThen(env, (e) => {
      // A read that failed on its way (drained or not) answers its failure, never the slices it began.
      if (!e.success) streamed?.close();
      else if (streamed) return { failure: null, slices: streamed };
      return { failure: e.success ? null : (e as Envelope<never>), slices: envelopeSlices(e, size) };
    });
  }

  /**
   * Rows of groups and metrics computed by the database (an extension of the service's API; README "Aggregates").
   * @example await store.aggregate('DailyProduction', {}, { groupBy: ['pwi', { field: 'prodDate', interval: 'month' }], metrics: { oil: { sum: 'oilVol' } } })
   */
  aggregate(type: string, query?: unknown, options?: unknown): Promise<Envelope<AnyDoc>> {
    return this.#summary(type, (ctx) => parseAggregate(ctx, query, options)) as Promise<Envelope<AnyDoc>>;
  }

  /**
   * The number of documents matching `query`, as the envelope's `count` and `total` (README "Aggregates").
   * @example (await store.count('Well', { basinName: 'Permian' })).total
   */
  count(type: string, query?: unknown, options?: unknown): Promise<Envelope<never>> {
    return this.#summary(type, (ctx) => parseCount(ctx, query, options)) as Promise<Envelope<never>>;
  }

  /**
   * The values of a field path over the documents matching `query`, each once, in sort order; arrays are unwound
   * (README "Aggregates").
   * @example (await store.distinct('Well', 'basinName')).data // ['Bakken', 'DJ', 'Eagle Ford', 'Permian']
   */
  distinct(type: string, field: string, query?: unknown, options?: unknown): Promise<Envelope<unknown>> {
    return this.#summary(type, (ctx) => parseDistinct(ctx, field, query, options));
  }

  /** A summary's plan, checked and scoped to live documents as every read is, run by the backend (summary.ts). */
  #summary(type: string, parse: (ctx: ParseContext) => SummaryPlan): Promise<Envelope<unknown>> {
    return run(this.#state, () => {
      const info = resolveType(this.#state, type);
      return summarize(this.#state.backend, info, this.#scope(info, parse(parseContext(this.#state, info))));
    });
  }

  /** A read's type and its plan, scoped to live documents: every read of documents starts here. */
  #read(type: string, query: unknown, options: unknown): { info: TypeInfo; plan: QueryPlan } {
    const info = resolveType(this.#state, type);
    const plan = this.#scope(info, parsePlan(parseContext(this.#state, info), query, options));
    if (plan.after && !this.#state.backend.capabilities.cursors) throw requestError('INVALID_REQUEST', 'options.cursor: this backend does not page by cursor yet; use limit and skip', { field: 'options.cursor' });
    return { info, plan };
  }

  /** The envelope of a read plan's page. */
  #answer(info: TypeInfo, plan: QueryPlan): Envelope<AnyDoc> | Promise<Envelope<AnyDoc>> {
    return andThen(nearestBy((p) => this.#state.backend.query(info, p), plan), ({ data, total, next }) =>
      envelope({ data, total, issues: [...plan.issues], cursor: next ? encodeCursor(plan.shape, next, this.#state.backend.cursorKey) : null }),
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
    ensureOpen(this.#state);
    yield* iteratePages((o) => this.query(type, query, o), options);
  }

  /**
   * The versions of one document, oldest first: a VersionDocument per insert, replace, update and delete of it, while
   * its type's history is on (option `history`). A document without any answers an empty list.
   * @example (await store.history('Well', id)).data.map((v) => v.event) // ['insert', 'update', 'delete']
   */
  history(type: string, id: string): Promise<Envelope<AnyDoc>> {
    return history(this.#state, type, id, (t, q) => this.query(t, q));
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
    return watch(this.#state, type, options);
  }

  /**
   * The change feed as one envelope (the long-poll form of `watch`, for HTTP): the events after `since` (default:
   * those of writes issued after the call), at most `limit` (default 1,000, at most 10,000), waiting up to `waitMs` (default 0) for the
   * first. An empty answer after the wait is a success. Resume with the last event's `seq`.
   * @example const { data } = await store.changes('Well', { since: 41, waitMs: 25_000 });
   */
  changes(type?: string, options?: ChangesOptions): Promise<Envelope<ChangeEvent>> {
    return changes(this.#state, type, options);
  }

  /**
   * The SQL a query runs, its bound parameters, the statement counting `total`, and the database's plan for it:
   * what `query` would do, without running it. Rejects with the DataStoreError of the envelope a query would answer
   * when the query is not valid.
   * @example (await store.explain('Well', { pwi: 'W1' })).plan // ['SEARCH docs_Well USING INDEX ux._well.pwi (<expr>=?)']
   */
  async explain(type: string, query?: unknown, options?: unknown): Promise<Explained> {
    ensureOpen(this.#state);
    let info: TypeInfo;
    let plan: QueryPlan;
    try {
      info = resolveType(this.#state, type);
      plan = this.#scope(info, parsePlan(parseContext(this.#state, info), query, options));
    } catch (e) {
      if (e instanceof RequestError) throw new DataStoreError(fail(e.errors));
      throw e;
    }
    return this.#state.backend.explain(info, plan);
  }

  /**
   * Inserts documents. Colliding documents are reported and skipped unless `atomic` rolls everything back.
   * @example await store.insert('Well', [{ pwi: 'W1' }, { pwi: 'W2' }])
   */
  insert(type: string, docs: unknown, options?: unknown): Promise<Envelope<never>> {
    return journaled(this.#state, this.#userId, 'insert', type, options, (journal) => {
      const info = resolveType(this.#state, type);
      if (!Array.isArray(docs)) throw requestError('INVALID_REQUEST', `data: expected an array of documents, got ${describe(docs)}`, { field: 'data' });
      const atomic = isPlainObject(options) && options.atomic === true;
      return andThen(this.#state.backend.insert(info, stamping(this.#state.settings, info, docs, journal), atomic, docs.length, journal), (r) => insertEnvelope(r, docs.length));
    });
  }

  /**
   * Inserts documents of several types in one transaction, all or nothing: any invalid document or collision
   * rolls every part back. Answers one envelope per part (the failed parts' errors tell why).
   * @example await store.insertMany([{ type: 'Well', docs: wells }, { type: 'DailyProduction', docs: daily }])
   */
  async insertMany(parts: readonly { type: string; docs: unknown }[], options?: WriteOptions): Promise<Envelope<never>[]> {
    ensureOpen(this.#state);
    const types = Array.isArray(parts) ? parts.map((p) => (isPlainObject(p) ? p.type : undefined)) : [];
    let journal: RequestJournal;
    try {
      journal = journalOf(this.#state.settings, this.#userId, 'insertMany', types, options);
    } catch (e) {
      if (e instanceof RequestError) return [fail(e.errors)];
      throw e;
    }
    const answers = (await this.#insertMany(parts, journal)).map((env) => ({ ...env, activityId: journal.activityId }));
    const refused = answers.find((a) => !a.success);
    if (refused) await logRefusal(this.#state, journal, refused);
    return answers;
  }

  async #insertMany(parts: readonly { type: string; docs: unknown }[], journal: Journal): Promise<Envelope<never>[]> {
    if (!Array.isArray(parts) || parts.length === 0) return [fail([{ code: 'INVALID_REQUEST', message: BAD_PARTS }])];
    // Every part is checked before anything is written, as one request.
    const checked = parts.map((part) => {
      try {
        if (!isPlainObject(part)) throw requestError('INVALID_REQUEST', BAD_PARTS);
        const info = resolveType(this.#state, part.type);
        return { info, docs: validateAll(info, part.docs, this.#state.settings.strict).map((d) => stamp(this.#state.settings, journal, d)) };
      } catch (e) {
        if (!(e instanceof RequestError)) throw e;
        return fail<never>(e.errors);
      }
    });
    const refused = checked.findIndex((c) => !('info' in c));
    if (refused >= 0) return checked.map((c, i) => ('info' in c ? rolledBack(i, refused, checked[refused] as Envelope<never>) : c));
    const ready = checked as { info: TypeInfo; docs: StoredDoc[] }[];
    const env = await run(this.#state, async () => {
      const results = await this.#state.backend.insertMany(ready, journal);
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
  load(type: string, source: Iterable<unknown> | AsyncIterable<unknown>, options?: LoadOptions): Promise<Envelope<never>> {
    return load(this.#state, this.#userId, type, source, options);
  }

  /**
   * Upserts by id: a document whose id exists replaces it whole, any other is inserted. All or nothing. A replacement
   * equal to the stored document (stamps aside) changes nothing, stamps included, and still counts.
   * @example await store.replace('Well', [{ id: existingId, pwi: 'W1', statusCurrent: 'Shut-in' }])
   */
  replace(type: string, docs: unknown, options?: ReplaceOptions): Promise<Envelope<never>> {
    return journaled(this.#state, this.#userId, 'replace', type, options, (journal) => {
      const info = resolveType(this.#state, type);
      const valid = validateAll(info, docs, this.#state.settings.strict);
      const keepStamps = isPlainObject(options) && options.keepStamps === true;
      const stamped = (d: StoredDoc, old?: StoredDoc) => {
        const doc = stamp(this.#state.settings, journal, d, old, keepStamps);
        return old && sameDocument(old, doc) ? null : doc;
      };
      return andThen(this.#state.backend.replace(info, valid, stamped, journal), ({ insertedIds, replaced, unchanged }) =>
        envelope<never>({ insertedIds, count: insertedIds.length + replaced + unchanged }),
      );
    });
  }

  /**
   * Sets the body's fields (dotted paths allowed) on every document the query matches.
   * @example await store.update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing' })
   */
  update(type: string, query: unknown, body: unknown, options?: UpdateOptions): Promise<Envelope<never>> {
    return journaled(this.#state, this.#userId, 'update', type, options, (journal) => {
      const info = resolveType(this.#state, type);
      const includeDeleted = isPlainObject(options) && options.includeDeleted === true;
      const plan = this.#scope(info, parsePlan(parseContext(this.#state, info), query, undefined), includeDeleted);
      const sets = fieldSets(parseContext(this.#state, info), body);
      const now = journal.at;
      const stamps = { updatedAt: now, updatedBy: this.#userId, modifiedTimestamp: Date.parse(now), lastUpdatedActivityId: journal.activityId };
      return andThen(this.#state.backend.update(info, plan, sets, stamps, journal), (count) => envelope<never>({ count, issues: [...plan.issues] }));
    });
  }

  /**
   * Deletes the documents the query matches. An empty query is refused and deletes nothing.
   * @example await store.delete('Well', { pwi: 'W1' })
   */
  delete(type: string, query: unknown, options?: WriteOptions): Promise<Envelope<never>> {
    return journaled(this.#state, this.#userId, 'delete', type, options, (journal) => {
      const info = resolveType(this.#state, type);
      const plan = parsePlan(parseContext(this.#state, info), query, undefined);
      if (plan.conditions.length === 0) return emptyQueryRefusal('delete', plan);
      const backend = this.#state.backend;
      // Soft: the live matches are stamped, not removed (purge removes).
      const soft = () => {
        const stamps = { deletedAt: journal.at, deletedBy: this.#userId, deletedActivityId: journal.activityId, deletedTimestamp: Date.parse(journal.at) };
        return backend.update(info, this.#scope(info, plan), [], stamps, { ...journal, op: 'delete' });
      };
      // A hard delete finding soft delete turned on meanwhile (by another process) removed nothing: it stamps instead.
      const count = this.#softDeletes(info)
        ? soft()
        : orCatch(
            () => backend.delete(info, plan, journal),
            (e) => {
              if (e instanceof SoftDeleteOn) return soft();
              throw e;
            },
          );
      return andThen(count, (n) => envelope<never>({ count: n, issues: [...plan.issues] }));
    });
  }

  /**
   * Removes the documents the query matches for real, soft-deleted ones included (with soft delete on, `delete` only
   * stamps them). An empty query is refused and removes nothing, as for delete.
   * @example await store.purge('Well', { deletedAt: { lt: '2026-01-01' } })
   */
  purge(type: string, query: unknown, options?: WriteOptions): Promise<Envelope<never>> {
    return journaled(this.#state, this.#userId, 'purge', type, options, (journal) => {
      const info = resolveType(this.#state, type);
      const plan = parsePlan(parseContext(this.#state, info), query, undefined);
      if (plan.conditions.length === 0) return emptyQueryRefusal('purge', plan);
      return andThen(this.#state.backend.delete(info, plan, { ...journal, op: 'purge' }), (count) => envelope<never>({ count, issues: [...plan.issues] }));
    });
  }

  /** True when the type's deletes are soft (the options, or the file, say so). */
  #softDeletes(info: TypeInfo): boolean {
    return this.#state.backend.softDelete.has(info.name);
  }

  /**
   * A plan scoped to live documents where the type's deletes are soft and the request does not include deleted ones:
   * `deletedAt` null or missing (the very term of the partial unique indexes, so they serve it). The one place
   * soft-deleted documents are left out: queries, iterate, explain, update and delete all pass here.
   */
  #scope<P extends { readonly conditions: readonly Condition[]; readonly includeDeleted: boolean }>(info: TypeInfo, plan: P, includeDeleted = plan.includeDeleted): P {
    if (includeDeleted || !this.#softDeletes(info)) return plan;
    let live = this.#state.live.get(info.name);
    if (!live) this.#state.live.set(info.name, (live = parsePlan(parseContext(this.#state, info), { deletedAt: null }, undefined).conditions));
    return { ...plan, conditions: [...plan.conditions, ...live] };
  }

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
