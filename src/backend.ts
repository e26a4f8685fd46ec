/**
 * The backend seam: what a database must do for the store. The façade (`DynamicStore`, dynamic.ts) resolves
 * types, parses and checks queries, validates and stamps documents, and builds every envelope; a backend turns a
 * checked plan into its dialect's SQL and runs each operation as one transaction (kysely's dialect + driver idea).
 * SQLite (src/sqlite/backend.ts) answers synchronously; a server database answers with promises.
 */
import type { TypeInfo } from './catalogue/index.js';
import { requestError, type EnvelopeError, type RequestError } from './envelope.js';
import type { Keyset, QueryPlan, Step } from './query/ast.js';
import type { SummaryPlan } from './query/aggregate.js';

/**
 * Thrown by `DataStore.open` and `openPostgres` when the store's schema must change (a new store, new indexes or
 * options) and another connection holds a lock that change needs through every wait: nothing was changed; open
 * again later or with a larger busyTimeoutMs.
 */
export class StoreBusyError extends Error {
  readonly code = 'STORE_BUSY';
  constructor(message: string) {
    super(message);
    this.name = 'StoreBusyError';
  }
}

export type MaybePromise<T> = T | Promise<T>;

/**
 * Applies f to a backend's answer: at once when it is a value (SQLite), after it when it is a promise. Not named
 * `then`: a module exporting `then` is a thenable, which `await import()` would call.
 * @example andThen(backend.query(info, plan), (page) => page.total)
 */
export function andThen<T, R>(value: T | PromiseLike<T>, f: (v: T) => R): R | Promise<R> {
  if (value instanceof Promise) return value.then(f);
  // A caller's promise of another kind (another realm's, a library's): taken as `await` takes it.
  if (value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function') {
    return Promise.resolve(value as PromiseLike<T>).then(f);
  }
  return f(value as T);
}

/**
 * `f()`'s answer, or what `handle` makes of its failure, thrown or rejected alike (`handle` throws what it does not
 * take): a backend's answer recovered from without making a synchronous one a promise.
 * @example orCatch(() => backend.delete(info, plan), (e) => { if (e instanceof SoftDeleteOn) return stampInstead(); throw e; })
 */
export function orCatch<T>(f: () => MaybePromise<T>, handle: (e: unknown) => MaybePromise<T>): MaybePromise<T> {
  try {
    const r = f();
    return r instanceof Promise ? r.catch(handle) : r;
  } catch (e) {
    return handle(e);
  }
}

export type StoredDoc = Record<string, unknown>;

/** One field an update sets: a checked path (no array indexes) and its checked value. */
export interface FieldSet {
  readonly steps: readonly Step[];
  readonly value: unknown;
}

/** What an insert did: the ids written, and one DUPLICATE_KEY error per document that collided. */
export interface InsertResult {
  insertedIds: string[];
  errors: EnvelopeError[];
  /** True when nothing was written because the request was atomic and something collided. */
  rolledBack: boolean;
}

/** The statement a query runs, as `explain` shows it. */
export interface Explained {
  readonly sql: string;
  readonly params: unknown[];
  readonly countSql: string;
  readonly countParams: unknown[];
  readonly paged: boolean;
  /**
   * SQLite: the one statement the store runs instead of `sql` and `countSql` for this query (a limited first page
   * whose page and count would both read every match), or null. Absent on PostgreSQL.
   */
  readonly onePass?: { readonly sql: string; readonly params: unknown[] } | null;
  /** The database's query plan, one line a step. */
  readonly plan: string[];
}

/** A page of a query. */
export interface QueryResult {
  data: StoredDoc[];
  /** Every match (one snapshot with the page); for a page continuing a cursor, the total the cursor carries. */
  total: number;
  /** Where the next page starts, when the page was limited and more matches follow. */
  next?: Keyset | null;
}

/** A page as `query` answers it, each document as its stored JSON text (Backend.queryText). */
export interface TextPage extends Omit<QueryResult, 'data'> {
  data: string[];
}

/** An unlimited query's matches as each document's JSON text, read from the database one by one (Backend.stream). */
export interface RowStream {
  readonly rows: Iterator<string>;
  /** Every match, counted with the rows in one snapshot where it is not the number of rows (a skip); else null. */
  readonly total: number | null;
  /** Ends the read (and the transaction it holds); called once the rows are read, or to stop early. */
  close(): void;
}

/** A summary's answer (Backend.summarize): rows (aggregate), values (distinct) or the count alone, and `total`. */
export interface SummaryAnswer {
  readonly data: unknown[];
  /** Groups (aggregate), values (distinct) or matches (count). */
  readonly total: number;
}

/** What a replace did: documents inserted (new ids, and soft-deleted ones taken again), replaced, and left as they were. */
export interface ReplaceResult {
  insertedIds: string[];
  replaced: number;
  /** Documents whose replacement equalled them (see `Backend.replace`): not written. */
  unchanged: number;
}

/** What a write did, for its ActivityLog document. */
export interface WriteCounts {
  created: number;
  modified: number;
  deleted: number;
  /** Documents refused inside the transaction (duplicate keys of a non-atomic insert). */
  errors: readonly EnvelopeError[];
}

/** The request a write belongs to, as the journal records it (README "Activity log", "Version history"). */
export interface Journal {
  readonly activityId: string;
  /** The request's time (ISO 8601 UTC), as its documents are stamped. */
  readonly at: string;
  readonly userId: string;
  /** The operation the journal records, where it is not the backend method's own (a soft delete updates; a purge deletes). */
  readonly op?: 'delete' | 'purge';
  /** The request's ActivityLog document, from what the write did: the backend writes it in the write's transaction. */
  readonly log?: (done: WriteCounts) => StoredDoc;
}

/** One committed change of the feed (README "Change feed"). */
export interface ChangeEvent<D = StoredDoc> {
  /** Strictly increasing, in commit order. */
  seq: number;
  type: string;
  /** `delete` is a soft delete where the type has it (`doc` then holds the deleted* stamps); `purge` removes for real. */
  op: 'insert' | 'replace' | 'update' | 'delete' | 'purge';
  id: string;
  /** The document after the change; for a delete, as it was before. */
  doc: D;
  activityId: string | null;
  /** When the change was made (ISO 8601 UTC). */
  at: string;
}

/** A VersionDocument: one version of a document of a type whose history is kept (README "Version history"). */
export interface Version<D = StoredDoc> {
  id: string;
  /** The type of the document. */
  type: string;
  /** The document's id. */
  oid: string;
  /** The document after the change; for a delete, as it was before. */
  body: D;
  event: 'insert' | 'replace' | 'update' | 'delete' | 'purge';
  /** When the change was made, in ms since the epoch. */
  versionTimestamp: number;
  createdAt: string;
  createdBy: string;
  createdActivityId: string | null;
}

/** A backend's change feed: events are written by the writes' own transactions; this reads them. */
export interface ChangeFeed {
  /** True when the database keeps change events (the feed was turned on, by this store or another). */
  enabled(): MaybePromise<boolean>;
  /** Events after seq `after`, oldest first, at most `limit`; of one type and matching a plan's conditions when given. */
  read(after: number, limit: number, type: TypeInfo | null, plan: QueryPlan | null): MaybePromise<ChangeEvent[]>;
  /** The oldest kept and newest seq (0 and 0 when there are none). */
  bounds(): MaybePromise<{ first: number; last: number }>;
  /**
   * The newest committed seq, where a watch or a long poll without `since` starts: every write this backend is asked
   * for after the call commits events past it (a backend whose read is async holds those writes until it is read).
   */
  head(): MaybePromise<number>;
  /** Changes whenever a write may have committed, in this process or another: polling compares it first. */
  version(): MaybePromise<string>;
}

/** What a backend can do beyond the operations every backend answers: the façade asks these, never the backend's class. */
export interface Capabilities {
  /** `query` honours `plan.after` (keyset cursors) and answers `next`; the façade refuses cursors otherwise. */
  readonly cursors: boolean;
  /** `stream` reads an unlimited query's rows one by one; otherwise they come whole through `query`. */
  readonly stream: boolean;
  /** `bulk` holds one write transaction open across awaits; otherwise the façade refuses atomic loads. */
  readonly bulk: boolean;
  /** `feed` reads the change feed; otherwise watches and `changes` are refused. */
  readonly feed: boolean;
}

/** Thrown to steer a request (run it again otherwise): not a failure of the connection. */
export class Steer extends Error {}

/**
 * Thrown by a backend's delete that finds, in its own statement, that the database now names the type's deletes soft
 * (another process turned soft delete on): nothing was removed, and the caller stamps the matches instead.
 */
export class SoftDeleteOn extends Steer {
  constructor(readonly type: string) {
    super(`${type}: deletes are soft in this database now`);
    this.name = 'SoftDeleteOn';
  }
}

export interface Backend {
  /** What it can do beyond the operations every backend answers. */
  readonly capabilities: Capabilities;
  /** Types whose deletes are soft, as the database says (options and earlier opens). */
  readonly softDelete: ReadonlySet<string>;
  /** The change feed's reader (capabilities.feed). */
  readonly feed: ChangeFeed;
  /**
   * The key that signs the store's cursors: random, made once per database and kept in it (cd_meta), so every
   * connection, thread and process of the database takes back the cursors any of them answered.
   */
  readonly cursorKey: Uint8Array;
  /** Documents matching the plan, sorted and paged, and the number of every match (one snapshot). */
  query(info: TypeInfo, plan: QueryPlan): MaybePromise<QueryResult>;
  /**
   * The matches of a plan without `limit` or cursor, read one by one as the caller takes them (capabilities.stream),
   * or null where the backend answers it through `query` only. The connection is held until `close()`: for a
   * connection of its own.
   */
  stream(info: TypeInfo, plan: QueryPlan): RowStream | null;
  /**
   * The page `query` answers, each document as the text the database stores, for a plan reading whole documents (no
   * `fields`, no `distance`). Present only where that text is always what JSON.stringify makes of the document
   * (SQLite, test/stored-text.test.ts; not PostgreSQL's jsonb text, `{"a": 1}`): then the rows `stream` reads for such
   * a plan are that text too, and both may be sent as they are.
   */
  queryText?(info: TypeInfo, plan: QueryPlan): MaybePromise<TextPage>;
  /**
   * Inserts stamped documents in one transaction; colliding ones are skipped and reported, or roll everything back
   * when atomic. `docs` is read once per attempt, inside the transaction: it validates and stamps each document as
   * it is taken and may throw (a RequestError: the transaction rolls back and the error is the answer). A backend
   * that runs the request again (after a lock wait) iterates it again from the start. `count`, when known, is how
   * many documents `docs` holds: a single document needs no transaction around its one statement.
   */
  insert(info: TypeInfo, docs: Iterable<StoredDoc>, atomic: boolean, count?: number, journal?: Journal): MaybePromise<InsertResult>;
  /** Atomic inserts of several types in one transaction: any collision rolls back every part. */
  insertMany(parts: readonly { info: TypeInfo; docs: readonly StoredDoc[] }[], journal?: Journal): MaybePromise<InsertResult[]>;
  /**
   * Replaces documents by id, or inserts those whose id is new, in one transaction; `stamp` sets the base fields,
   * seeing the stored document it replaces, and answers null when the replacement equals it: that document is left
   * as it is (no write, so no version and no change event). Any collision throws a RequestError and writes nothing.
   */
  replace(info: TypeInfo, docs: readonly StoredDoc[], stamp: (doc: StoredDoc, old?: StoredDoc) => StoredDoc | null, journal?: Journal): MaybePromise<ReplaceResult>;
  /** Sets fields and stamps on every match; the count of matches. A collision or a non-object parent throws a RequestError. */
  update(info: TypeInfo, plan: QueryPlan, sets: readonly FieldSet[], stamps: Readonly<Record<string, unknown>>, journal?: Journal): MaybePromise<number>;
  /** Deletes every match (the façade refuses an empty plan); the count. */
  delete(info: TypeInfo, plan: QueryPlan, journal?: Journal): MaybePromise<number>;
  /** An aggregate, count or distinct, computed by the database in one statement (src/sql/aggregate.ts). */
  summarize(info: TypeInfo, plan: SummaryPlan): MaybePromise<SummaryAnswer>;
  /** The statements a query would run and the database's plan for them. */
  explain(info: TypeInfo, plan: QueryPlan): MaybePromise<Explained>;
  close(): MaybePromise<void>;
  /** Opens one write transaction that several inserts join, for a load whose whole source is atomic (capabilities.bulk). */
  bulk(): BulkWriter;
}

/** One open write transaction: inserts join it; nothing is visible to others until commit. */
export interface BulkWriter {
  /** Inserts stamped documents; collisions are reported (the caller decides to roll back). */
  insert(info: TypeInfo, docs: readonly StoredDoc[]): MaybePromise<InsertResult>;
  /**
   * Documents it takes best at a time, when that is fewer than the load's batch: an in-process writer pays nothing a
   * call, while documents held for a larger batch outlive the young generation and cost full collections.
   */
  readonly chunk?: number;
  commit(): MaybePromise<void>;
  rollback(): MaybePromise<void>;
}

/** The DUPLICATE_KEY error of a document that collided on the unique key `fields`. */
export function duplicateError(info: TypeInfo, doc: StoredDoc, index: number, fields: readonly string[]): EnvelopeError {
  const key: Record<string, unknown> = {};
  for (const f of fields) key[f] = doc[f];
  const shown = fields.map((f) => `${f} ${JSON.stringify(doc[f])}`).join(', ');
  return { code: 'DUPLICATE_KEY', index, key, message: `document ${index}: a ${info.name} with ${shown} already exists` };
}

/**
 * The answer of a write the database had no room for (a full disk, or the size limit of an in-memory database
 * opened from bytes): its transaction was rolled back. Each backend maps its engine's error to it in one place.
 */
export function storeFull(): RequestError {
  return requestError('STORE_FULL', 'the database is full (no room left on its disk, or at its size limit); nothing was written');
}

/** The message of an update that would make two documents share a unique key. */
export function updateCollision(info: TypeInfo, fields: readonly string[]): string {
  return `the update would give two ${info.name} documents the same ${fields.join(', ')}; nothing was updated`;
}

/** The message of an update whose dotted path meets a non-object parent in document `id`. */
export function parentNotObject(id: unknown): string {
  return `body: document ${JSON.stringify(id)} has a non-object value where a dotted path needs an object; nothing was updated`;
}
