/**
 * The store's public classes: `DynamicStore`, the untyped store (the core's operations, src/core/store.ts, plus how
 * to open one), and `DataStore`, its typed face. Every signature of `DataStore` is derived from the catalogue, so a
 * misspelled field, a wrong operand or an unknown type does not compile; the work is done by a `DynamicStore`.
 * Type names are the declared name or the same in lower case (`'Well'`, `'well'`), plus the aliases the run time
 * knows (`'Folder'` for Petron); both spellings give the same document type. A store opened over SQLite is a
 * `SqliteDynamicStore` / `SqliteDataStore`: it has the SQLite-only members (`SqliteMembers`: `database`, `snapshot`,
 * `restore`, `documentCacheStats`).
 */
import type { BuiltinCatalogue, CatalogueShape, Doc, DocInput, TypeName } from './catalogue/index.js';
import { describe } from './catalogue/validate.js';
import type { Backend, ChangeEvent, Version } from './backend.js';
import { CoreStore, type InsertOptions, type LoadOptions, type ReplaceOptions, type UpdateOptions, type WatchOptions, type WriteOptions } from './core/store.js';
import type { Envelope } from './envelope.js';
import type { FieldName, IterateOptions, Projected, Query, QueryOptions, SortPath, UpdateBody } from './query/types.js';
import type { AggregateOptions, AggregateRow, GroupKey, MetricSpec } from './query/aggregate-types.js';
import { resolveSettings, type OpenOptions, type Settings } from './settings.js';
import { openSqlite, sqliteOf, type Db, type DocumentCacheStats, type SqliteEngine } from './sqlite/index.js';

export type { InsertOptions, LoadOptions, ReplaceOptions, UpdateOptions, WatchOptions, WriteOptions } from './core/store.js';
export type { OpenOptions } from './settings.js';
export type { ChangeEvent, Version } from './backend.js';
export type { DocumentCacheStats } from './sqlite/index.js';

/**
 * The SQLite-only members of a store opened over SQLite (`SqliteDataStore`, `SqliteDynamicStore`): its connection, and
 * the database as bytes and back. A store over another backend has none of them in its type; reached anyway, they
 * throw the TypeError saying so.
 */
export interface SqliteMembers {
  /**
   * The underlying better-sqlite3 connection, for inspection (EXPLAIN, pragmas).
   * @example store.database.pragma('journal_mode', { simple: true })   // 'wal' for a file store
   */
  readonly database: Db;

  /**
   * The whole database as bytes (SQLite's serialize): documents, indexes and R*Trees. A copy: later writes do not
   * change it. Put it back with `restore`, or open a copy with `DataStore.fromSnapshot`.
   * @example const seeded = store.snapshot(); beforeEach(() => store.restore(seeded));
   */
  snapshot(): Buffer;

  /**
   * Puts an in-memory store back to a snapshot of it (or of a store opened with the same options); every view sees
   * the restored data, and the snapshot stays reusable. A file store refuses it with a TypeError.
   * @example store.restore(seeded)
   */
  restore(snapshot: Uint8Array): void;

  /**
   * The document cache (option `documentCache`, README "Document cache"): documents held, their estimated bytes
   * (JSON text length, bounded by `maxBytes`), and documents answered from it (`hits`) or read and kept (`misses`).
   * Null when the store was opened without it. Each connection has its own: a pool's reader threads each hold one.
   * @example const { entries, bytes, hits, misses } = store.documentCacheStats()!;
   */
  documentCacheStats(): DocumentCacheStats | null;
}

/** The SQLite engine behind `store` for `member` (with `idle`, once no atomic load holds it), else the TypeError saying so. */
type EngineOf<S> = (store: S, member: keyof SqliteMembers, idle: boolean) => SqliteEngine;

/** A DynamicStore's engine: set inside the class, the one place its protected backend can be read. */
let dynamicEngine: EngineOf<DynamicStore>;

/**
 * Puts the one implementation of `SqliteMembers` on a store class, over the engine `engineOf` finds. They stay out
 * of the class's type (a PostgreSQL store's type has none); the SQLite classes take them by declaration merging.
 */
function installSqliteMembers<S>(target: { prototype: S }, engineOf: EngineOf<S>): void {
  // Flags as a class body gives its own members: not enumerable, replaceable.
  const method = (value: (this: S, ...args: never[]) => unknown): PropertyDescriptor => ({ value, writable: true, configurable: true });
  const members: Record<keyof SqliteMembers, PropertyDescriptor> = {
    database: {
      get(this: S): Db {
        return engineOf(this, 'database', false).database;
      },
      configurable: true,
    },
    snapshot: method(function (this: S): Buffer {
      return engineOf(this, 'snapshot', true).snapshot();
    }),
    restore: method(function (this: S, snapshot: Uint8Array): void {
      const engine = engineOf(this, 'restore', true);
      if (!(snapshot instanceof Uint8Array)) throw new TypeError('restore: expected a snapshot from store.snapshot()');
      engine.restore(snapshot);
    }),
    documentCacheStats: method(function (this: S): DocumentCacheStats | null {
      return engineOf(this, 'documentCacheStats', false).documentCacheStats();
    }),
  };
  Object.defineProperties(target.prototype, members);
}

/**
 * The untyped store: every check happens at run time, so it takes input from JSON (HTTP, files, other languages).
 * @example
 * const store = DynamicStore.open();
 * await store.insert(type, JSON.parse(body));
 */
export class DynamicStore extends CoreStore {
  /**
   * Opens a store over SQLite: in memory without a file (for tests), else a file in WAL mode, created if missing.
   * @example const store = DynamicStore.open('wells.db', { userId: 'etl' });
   */
  static open<C extends CatalogueShape = BuiltinCatalogue>(file = ':memory:', options: OpenOptions<C> = {}): SqliteDynamicStore {
    if (typeof file !== 'string') throw new TypeError(`DataStore.open: file must be a string path, got ${describe(file)}`);
    const settings = resolveSettings(options as OpenOptions<CatalogueShape>, 'DataStore.open');
    return new SqliteDynamicStore(DynamicStore.stateOf(openSqlite(file, settings), settings), settings.userId);
  }

  /**
   * A new in-memory store holding a copy of a snapshot (see `snapshot()`); it shares nothing with the original.
   * The options are those of `open` and should name the same catalogue, keys and indexes as the snapshot's store.
   * @example const copy = DynamicStore.fromSnapshot(store.snapshot());
   */
  static fromSnapshot<C extends CatalogueShape = BuiltinCatalogue>(snapshot: Uint8Array, options: OpenOptions<C> = {}): SqliteDynamicStore {
    if (!(snapshot instanceof Uint8Array)) throw new TypeError('fromSnapshot: expected a snapshot from store.snapshot()');
    const settings = resolveSettings(options as OpenOptions<CatalogueShape>, 'fromSnapshot');
    return new SqliteDynamicStore(DynamicStore.stateOf(openSqlite(snapshot, settings), settings), settings.userId);
  }

  /**
   * A store over any backend (see src/backend.ts), with settings from `resolveSettings`: how `openPostgres` and
   * other backends build theirs. The backend must have been made with the same settings.
   */
  static over(backend: Backend, settings: Settings): DynamicStore {
    return new DynamicStore(DynamicStore.stateOf(backend, settings), settings.userId);
  }

  // Inside the class, where the protected backend is readable: DataStore reaches it through dynamicEngine.
  static {
    dynamicEngine = (store, member, idle) => sqliteOf(idle ? store.idle(member) : store.backend, member);
    installSqliteMembers(this, dynamicEngine);
  }
}

/** A `DynamicStore` over SQLite (`DynamicStore.open`, `fromSnapshot`): one with the `SqliteMembers`. */
export interface SqliteDynamicStore extends SqliteMembers {}
export class SqliteDynamicStore extends DynamicStore {}

/**
 * The typed store: an in-process document store over SQLite (`DataStore.open`), or over another backend
 * (`openPostgres`).
 * @example
 * const store = DataStore.open();
 * await store.insert('Well', [{ pwi: 'W1', basinName: 'Permian' }]);
 * const { data } = await store.query('Well', { basinName: 'Permian' });
 */
export class DataStore<C extends CatalogueShape = BuiltinCatalogue> {
  readonly #dynamic: DynamicStore;

  protected constructor(dynamic: DynamicStore) {
    this.#dynamic = dynamic;
  }

  /**
   * Opens a store: in memory without a file (for tests), else a SQLite file in WAL mode, created if missing.
   * @example const store = DataStore.open('wells.db', { userId: 'etl' });
   */
  static open<C extends CatalogueShape = BuiltinCatalogue>(file = ':memory:', options: OpenOptions<C> = {}): SqliteDataStore<C> {
    return new SqliteDataStore<C>(DynamicStore.open(file, options));
  }

  /**
   * A new in-memory store holding a copy of a snapshot (see `snapshot()`); it shares nothing with the original.
   * Give it the options (catalogue, keys, indexes) of the store the snapshot came from.
   * @example const copy = DataStore.fromSnapshot(seeded, { clock: fixedClock(), ids: 1 });
   */
  static fromSnapshot<C extends CatalogueShape = BuiltinCatalogue>(snapshot: Uint8Array, options: OpenOptions<C> = {}): SqliteDataStore<C> {
    return new SqliteDataStore<C>(DynamicStore.fromSnapshot(snapshot, options));
  }

  /**
   * The typed view of an untyped store, e.g. one a backend opened (`openPostgres`). The catalogue type `C` must be
   * the one the store was opened with: it is not checked at run time.
   * @example const store = DataStore.of<typeof myTypes>(dynamic);
   */
  static of<C extends CatalogueShape = BuiltinCatalogue>(dynamic: DynamicStore): DataStore<C> {
    if (!(dynamic instanceof DynamicStore)) throw new TypeError('DataStore.of: expected a DynamicStore');
    return new DataStore<C>(dynamic);
  }

  // A typed store's SqliteMembers are those of its dynamic store.
  static {
    installSqliteMembers<DataStore>(this, (store, member, idle) => dynamicEngine(store.#dynamic, member, idle));
  }

  /**
   * The same store without static types, for input that is only known at run time (JSON from a client,
   * a file): type names are strings, queries and documents `unknown`, and every check happens at run time.
   * @example await store.dynamic.query(req.body.type, req.body.query)
   */
  get dynamic(): DynamicStore {
    return this.#dynamic;
  }

  /**
   * The same store acting as another user (createdBy/updatedBy).
   * @example await store.withUser('alice').update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing' })
   */
  withUser(userId: string): this {
    // A view is of the store's own class, so the SQLite members stay on it.
    return new (this.constructor as new (dynamic: DynamicStore) => this)(this.#dynamic.withUser(userId));
  }

  /**
   * The user this store writes as.
   * @example store.withUser('alice').userId   // 'alice'
   */
  get userId(): string {
    return this.#dynamic.userId;
  }

  /**
   * True once `close()` was called (on this store or any of its views).
   * @example if (!store.closed) store.close();
   */
  get closed(): boolean {
    return this.#dynamic.closed;
  }

  /**
   * Closes the database; further calls throw. Closing twice is harmless. The promise resolves once the backend has
   * closed (at once for SQLite; a server backend ends its connections).
   * @example afterAll(() => store.close());
   */
  close(): Promise<void> {
    return this.#dynamic.close();
  }

  /**
   * Names of every type, as accepted in `type`.
   * @example (await store.types()).data   // ['WorkspaceDefinition', 'DailyProduction', …]
   */
  types(): Promise<Envelope<string>> {
    return this.#dynamic.types();
  }

  /**
   * Every top-level field of a type with its wire kind: base fields first, then the type's own.
   * @example (await store.schema('Well')).data   // [{ name: 'id', type: 'String' }, …]
   */
  schema(type: TypeName<C>): Promise<Envelope<{ name: string; type: string }>> {
    return this.#dynamic.schema(type);
  }

  /**
   * Documents matching `query`, sorted and paged by `options`; `total` counts every match. Fields, operands,
   * operators (`regex` where strings may be, `bounds`/`polygon` on GeoPoint fields) and `sortBy` are checked against
   * the type; dotted paths may reach into Object, Dictionary, nested-type and collection fields, untyped inside.
   * With `fields`, the answer's type is the projection (`Pick<Well, 'id' | 'pwi' | 'name'>`).
   * @example await store.query('Well', { spudDate: { gte: '1/1/2020' } }, { sortBy: 'spudDate', limit: 50 })
   */
  query<T extends TypeName<C>, F extends FieldName<T, C> = never>(
    type: T,
    query?: NoInfer<Query<T, C>> | null,
    options?: QueryOptions<NoInfer<T>, C, F> | null,
  ): Promise<Envelope<Projected<Doc<T, C>, F>>> {
    return this.#dynamic.query(type, query, options) as Promise<Envelope<Projected<Doc<T, C>, F>>>;
  }

  /**
   * Rows of groups and metrics, computed by the database (an extension of the service's API; README "Aggregates"):
   * group keys are field paths or date buckets, metrics sum/avg numeric fields, min/max numeric, date and string
   * ones, count and countDistinct any path. The row type names each key and metric.
   * @example await store.aggregate('DailyProduction', {}, { groupBy: ['pwi', { field: 'prodDate', interval: 'month' }], metrics: { oil: { sum: 'oilVol' } } })
   */
  aggregate<
    T extends TypeName<C>,
    const G extends readonly GroupKey<T, C>[] = [],
    const M extends Record<string, MetricSpec<T, C>> = Record<never, never>,
  >(type: T, query: NoInfer<Query<T, C>> | null | undefined, options: AggregateOptions<T, C, G, M>): Promise<Envelope<AggregateRow<Doc<T, C>, G, M>>> {
    return this.#dynamic.aggregate(type, query, options) as Promise<Envelope<AggregateRow<Doc<T, C>, G, M>>>;
  }

  /**
   * The number of documents matching `query`, as the envelope's `count` and `total` (README "Aggregates").
   * @example (await store.count('Well', { basinName: 'Permian' })).total
   */
  count<T extends TypeName<C>>(type: T, query?: NoInfer<Query<T, C>> | null, options?: { includeDeleted?: boolean }): Promise<Envelope<never>> {
    return this.#dynamic.count(type, query, options);
  }

  /**
   * The values of a field path over the documents matching `query`, each once, in sort order: arrays unwound into
   * their elements, null and missing left out (README "Aggregates").
   * @example (await store.distinct('Well', 'basinName')).data // ['Bakken', 'Permian']
   */
  distinct<T extends TypeName<C>, P extends SortPath<T, C>>(
    type: T,
    field: P,
    query?: NoInfer<Query<T, C>> | null,
    options?: { includeDeleted?: boolean },
  ): Promise<Envelope<P extends keyof Doc<T, C> ? NonNullable<Doc<T, C>[P]> extends readonly (infer E)[] ? E : NonNullable<Doc<T, C>[P]> : unknown>> {
    return this.#dynamic.distinct(type, field, query, options) as never;
  }

  /**
   * Every document matching `query` as an async iterator, read `batchSize` at a time (default 1,000) by keyset
   * cursor: memory stays flat for any result, and reading stops when the loop does. `limit` caps the documents.
   * @example for await (const w of store.iterate('Well', { basinName: 'Permian' }, { sortBy: 'spudDate' })) console.log(w.pwi);
   */
  iterate<T extends TypeName<C>, F extends FieldName<T, C> = never>(
    type: T,
    query?: NoInfer<Query<T, C>> | null,
    options?: IterateOptions<NoInfer<T>, C, F> | null,
  ): AsyncGenerator<Projected<Doc<T, C>, F>, void, undefined> {
    return this.#dynamic.iterate(type, query, options) as AsyncGenerator<Projected<Doc<T, C>, F>, void, undefined>;
  }

  /**
   * The versions of one document, oldest first (option `history` keeps them): one per insert, replace, update and delete.
   * @example (await store.history('Well', id)).data.map((v) => v.event) // ['insert', 'update']
   */
  history<T extends TypeName<C>>(type: T, id: string): Promise<Envelope<Version<Doc<T, C>>>> {
    return this.#dynamic.history(type, id) as unknown as Promise<Envelope<Version<Doc<T, C>>>>;
  }

  /**
   * The change feed (option `changeFeed`): committed changes, of every process on the file, in commit order, from
   * `since` or from now, until the loop breaks, `signal` aborts or the store closes.
   * @example for await (const e of store.watch('Well', { query: { basinName: 'Permian' } })) console.log(e.op, e.doc.pwi);
   */
  watch<T extends TypeName<C>>(type: T, options?: WatchOptions & { query?: NoInfer<Query<T, C>> }): AsyncGenerator<ChangeEvent<Doc<T, C>>, void, undefined>;
  watch(type?: undefined, options?: Omit<WatchOptions, 'query'>): AsyncGenerator<ChangeEvent, void, undefined>;
  watch(type?: string, options?: WatchOptions): AsyncGenerator<ChangeEvent, void, undefined> {
    return this.#dynamic.watch(type, options);
  }

  /**
   * Inserts documents. Colliding documents are reported and skipped unless `atomic` rolls everything back.
   * @example await store.insert('Well', [{ pwi: 'W1' }, { pwi: 'W2' }])
   */
  insert<T extends TypeName<C>>(type: T, docs: readonly NoInfer<DocInput<T, C>>[], options?: InsertOptions): Promise<Envelope<never>> {
    return this.#dynamic.insert(type, docs, options);
  }

  /**
   * Inserts documents from an (async) iterable in batches (one transaction each, or one for all with `atomic`), so
   * memory stays flat for any source; refused documents are reported with their position in the source.
   * @example await store.load('Well', wellsFromNdjson('wells.ndjson'), { batchSize: 5000 })
   */
  load<T extends TypeName<C>>(type: T, source: Iterable<DocInput<T, C>> | AsyncIterable<DocInput<T, C>>, options?: LoadOptions): Promise<Envelope<never>> {
    return this.#dynamic.load(type, source, options);
  }

  /**
   * Upserts by id: a document whose id exists replaces it whole, any other is inserted. All or nothing. A replacement
   * equal to the stored document (stamps aside) changes nothing, stamps included, and still counts.
   * @example await store.replace('Well', [{ id: existingId, pwi: 'W1', statusCurrent: 'Shut-in' }])
   */
  replace<T extends TypeName<C>>(type: T, docs: readonly NoInfer<DocInput<T, C>>[], options?: ReplaceOptions): Promise<Envelope<never>> {
    return this.#dynamic.replace(type, docs, options);
  }

  /**
   * Sets the body's fields (dotted paths allowed) on every document the query matches.
   * @example await store.update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing' })
   */
  update<T extends TypeName<C>>(type: T, query: NoInfer<Query<T, C>> | null, body: NoInfer<UpdateBody<T, C>>, options?: UpdateOptions): Promise<Envelope<never>> {
    return this.#dynamic.update(type, query, body, options);
  }

  /**
   * Deletes the documents the query matches. An empty query is refused and deletes nothing.
   * @example await store.delete('Well', { pwi: 'W1' })
   */
  delete<T extends TypeName<C>>(type: T, query: NoInfer<Query<T, C>> | null, options?: WriteOptions): Promise<Envelope<never>> {
    return this.#dynamic.delete(type, query, options);
  }

  /**
   * Removes the matches for real, soft-deleted ones included (with `softDelete` on, `delete` only stamps them). An
   * empty query is refused and removes nothing.
   * @example await store.purge('Well', { deletedAt: { lt: '2026-01-01T00:00:00.000Z' } })
   */
  purge<T extends TypeName<C>>(type: T, query: NoInfer<Query<T, C>> | null, options?: WriteOptions): Promise<Envelope<never>> {
    return this.#dynamic.purge(type, query, options);
  }
}

/** A `DataStore` over SQLite (`DataStore.open`, `fromSnapshot`): one with the `SqliteMembers`. */
export interface SqliteDataStore<C extends CatalogueShape = BuiltinCatalogue> extends SqliteMembers {}
export class SqliteDataStore<C extends CatalogueShape = BuiltinCatalogue> extends DataStore<C> {
  /**
   * The same store without static types (see `DataStore#dynamic`), with its SQLite members.
   * @example store.dynamic.database.pragma('page_count', { simple: true })
   */
  override get dynamic(): SqliteDynamicStore {
    return super.dynamic as SqliteDynamicStore;
  }
}
