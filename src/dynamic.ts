/**
 * DynamicStore: the seven operations of the Consolidated Data Service API over one SQLite database,
 * taking untyped input (type names as strings, queries and documents as `unknown`). The HTTP adapter and
 * the CLI use it; applications use the typed `DataStore` façade (store.ts), whose `dynamic` is this.
 */
import { randomBytes } from 'node:crypto';
import {
  Catalogue,
  catalogueOf,
  CATALOGUE_VERSION,
  DEFAULT_INDEXED_FIELDS,
  DEFAULT_UNIQUE_KEYS,
  didYouMean,
  TYPES,
  type BuiltinCatalogue,
  type CatalogueShape,
  type TypeInfo,
} from './catalogue/index.js';
import { checkValue, describe, isPlainObject, jsonValue, validateDocument } from './catalogue/validate.js';
import { collect, DataStoreError, envelope, fail, requestError, RequestError, type Envelope, type EnvelopeError } from './envelope.js';
import { newId, seededIds } from './ids.js';
import { LIMITS, shown } from './limits.js';
import { normalizeDate } from './catalogue/dates.js';
import { compileSelect, compileWhere, jsonPath, type CompiledSelect } from './sqlite/compile.js';
import { docsTable, ident } from './sqlite/names.js';
import type { QueryPlan } from './query/ast.js';
import { parseFieldPath, parsePlan, type ParseContext } from './query/parse.js';
import { asRollbackJournal, openDatabase, StatementCache, type Db, type Transaction } from './sqlite/connection.js';
import { collidingKey, ensureSchema, type IndexSpec } from './sqlite/schema.js';

export interface OpenOptions<C extends CatalogueShape = BuiltinCatalogue> {
  /** Default actor for createdBy/updatedBy. */
  userId?: string;
  /** Unknown top-level fields are errors in documents and queries (default true). */
  strict?: boolean;
  /** Extra indexes per type. */
  indexes?: { [T in keyof NoInfer<C>]?: readonly IndexSpec[] };
  /** Replaces the default unique keys of the named types. */
  uniqueKeys?: { [T in keyof NoInfer<C>]?: readonly (readonly string[])[] };
  /** A catalogue of your own; defaults to the built-in one. */
  types?: C;
  /** The `schemaVersion` written on documents (default: the built-in catalogue's version). */
  schemaVersion?: string;
  /** How long a write waits for another connection's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** The time of each write (createdAt, updatedAt, modifiedTimestamp); default the system clock. For reproducible tests. */
  clock?: () => Date | string | number;
  /** Generated ids: a function returning a fresh non-empty string, or a seed for a deterministic source (see `seededIds`). */
  ids?: (() => string) | number;
  /** Called with every unexpected error and the request id its INTERNAL answer carries (the answer says only "internal error"). */
  onError?: (error: unknown, requestId: string) => void;
}

export interface InsertOptions {
  /** Roll the whole request back when any document collides (default false: insert the others). */
  atomic?: boolean;
}

type AnyDoc = Record<string, unknown>;

const OPTION_NAMES = ['userId', 'strict', 'indexes', 'uniqueKeys', 'types', 'schemaVersion', 'busyTimeoutMs', 'clock', 'ids', 'onError'];

/** State shared by a store and its `withUser` views. */
interface Core {
  db: Db;
  catalogue: Catalogue;
  strict: boolean;
  statements: StatementCache;
  /** Per type, the fields that lead an index: an equality on one of them finds few rows. */
  keyed: Map<string, Set<string>>;
  /** One transaction wrapper per connection: building it per request cost more than a whole indexed query. */
  tx: Transaction<(fn: () => unknown) => unknown>;
  /** Quoted table name per type. */
  tables: Map<string, string>;
  closed: boolean;
  /** The time of a write, as stored (ISO 8601 UTC). */
  now: () => string;
  /** A fresh id for a document that has none. */
  newId: () => string;
  onError: ((error: unknown, requestId: string) => void) | undefined;
  busyTimeoutMs: number;
  /** True for stores in memory (the ones `restore` may replace). */
  memory: boolean;
}

function defaultIndexes(catalogue: Catalogue): Record<string, IndexSpec[]> {
  const out: Record<string, IndexSpec[]> = {};
  for (const name of catalogue.names) {
    const info = catalogue.resolve(name)!;
    out[name] = DEFAULT_INDEXED_FIELDS.filter((f) => info.fields.has(f)).map((f) => ({ fields: [f] }));
  }
  return out;
}

function isDuplicate(e: unknown): e is Error & { code: string } {
  const code = (e as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

const BUSY_ATTEMPTS = 3;

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

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
   * Opens a store: in memory without a file (for tests), else a SQLite file in WAL mode, created if missing.
   * @example const store = DataStore.open('wells.db', { userId: 'etl' });
   */
  static open<C extends CatalogueShape = BuiltinCatalogue>(file = ':memory:', options: OpenOptions<C> = {}): DynamicStore {
    const source = (options as { [SNAPSHOT]?: Uint8Array })[SNAPSHOT];
    // validate
    if (typeof file !== 'string') throw new TypeError(`DataStore.open: file must be a string path, got ${describe(file)}`);
    if (options === null || typeof options !== 'object') throw new TypeError('DataStore.open: options must be an object');
    for (const key of Object.keys(options)) {
      // Symbol keys are not listed by Object.keys: the snapshot source never trips this check.
      if (!OPTION_NAMES.includes(key)) throw new TypeError(`DataStore.open: unknown option "${key}"${didYouMean(key, OPTION_NAMES)}`);
    }
    const userId = options.userId ?? 'consolidata';
    if (typeof userId !== 'string' || userId === '') throw new TypeError('DataStore.open: userId must be a non-empty string');
    const busy = options.busyTimeoutMs ?? 5000;
    if (typeof busy !== 'number' || !Number.isFinite(busy) || busy < 0) throw new RangeError('DataStore.open: busyTimeoutMs must be a non-negative number');
    if (options.clock !== undefined && typeof options.clock !== 'function') throw new TypeError('DataStore.open: clock must be a function returning a Date, an ISO string or ms since the epoch');
    if (options.ids !== undefined && typeof options.ids !== 'function' && !Number.isSafeInteger(options.ids)) {
      throw new TypeError('DataStore.open: ids must be a function returning a string, or an integer seed');
    }
    if (options.onError !== undefined && typeof options.onError !== 'function') throw new TypeError('DataStore.open: onError must be a function');
    // apply defaults
    const catalogue = catalogueOf(options.types ?? TYPES, options.schemaVersion ?? CATALOGUE_VERSION);
    const uniqueKeys: Record<string, readonly (readonly string[])[]> = { ...DEFAULT_UNIQUE_KEYS };
    for (const [t, keys] of Object.entries(options.uniqueKeys ?? {})) uniqueKeys[canonical(catalogue, t)] = keys as string[][];
    const indexes: Record<string, IndexSpec[]> = defaultIndexes(catalogue);
    for (const [t, specs] of Object.entries(options.indexes ?? {})) {
      const name = canonical(catalogue, t);
      indexes[name] = [...(indexes[name] ?? []), ...((specs as IndexSpec[]) ?? [])];
    }
    for (const t of Object.keys(uniqueKeys)) if (!catalogue.resolve(t)) delete uniqueKeys[t];
    // interpret
    const now = clockOf(options.clock);
    const ids = options.ids;
    const nextId = typeof ids === 'function' ? checkedIds(ids) : typeof ids === 'number' ? seededIds(ids, () => Date.parse(now())) : () => newId();
    const db = openDatabase(source ?? file, busy);
    try {
      ensureSchema(db, catalogue, { uniqueKeys, indexes }, source ? 'the snapshot' : file);
      const tables = new Map(catalogue.names.map((n) => [n, ident(docsTable(n))]));
      const keyed = new Map(
        catalogue.names.map((n) => [n, new Set([...(uniqueKeys[n] ?? []), ...(indexes[n] ?? []).map((i) => i.fields)].map((f) => f[0]!))]),
      );
      const core: Core = {
        db,
        catalogue,
        strict: options.strict ?? true,
        statements: new StatementCache(db),
        keyed,
        tx: db.transaction((fn: () => unknown) => fn()),
        tables,
        closed: false,
        now,
        newId: nextId,
        onError: options.onError,
        busyTimeoutMs: busy,
        memory: source !== undefined || file === ':memory:' || file === '',
      };
      return new DynamicStore(core, userId);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /**
   * A new in-memory store holding a copy of a snapshot (see `snapshot()`); it shares nothing with the original.
   * The options are those of `open` and should name the same catalogue, keys and indexes as the snapshot's store.
   * @example const copy = DynamicStore.fromSnapshot(store.snapshot());
   */
  static fromSnapshot<C extends CatalogueShape = BuiltinCatalogue>(snapshot: Uint8Array, options: OpenOptions<C> = {}): DynamicStore {
    if (!(snapshot instanceof Uint8Array)) throw new TypeError('fromSnapshot: expected a snapshot from store.snapshot()');
    return DynamicStore.#openFrom(snapshot, options);
  }

  static #openFrom<C extends CatalogueShape>(snapshot: Uint8Array, options: OpenOptions<C>): DynamicStore {
    return DynamicStore.open(':memory:', { ...options, [SNAPSHOT]: snapshot } as OpenOptions<C>);
  }

  /**
   * The whole database as bytes (SQLite's serialize): documents, indexes and R*Trees. Restore it with `restore`
   * or `DataStore.fromSnapshot`; it is a copy, so later writes do not change it.
   * @example const snap = store.snapshot(); beforeEach(() => store.restore(snap));
   */
  snapshot(): Buffer {
    this.#open();
    return asRollbackJournal(this.#core.db.serialize());
  }

  /**
   * Puts an in-memory store back to a snapshot (of this store or one opened with the same options). Every view
   * (`withUser`, `dynamic`) sees the restored data; the snapshot itself stays unchanged and reusable.
   * @example store.restore(snap)
   */
  restore(snapshot: Uint8Array): void {
    this.#open();
    if (!(snapshot instanceof Uint8Array)) throw new TypeError('restore: expected a snapshot from store.snapshot()');
    if (!this.#core.memory) throw new TypeError('restore: only an in-memory store can be restored; open the snapshot with fromSnapshot');
    const core = this.#core;
    const db = openDatabase(snapshot, core.busyTimeoutMs);
    core.db.close();
    core.db = db;
    core.statements = new StatementCache(db);
    core.tx = db.transaction((fn: () => unknown) => fn());
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

  /** The underlying better-sqlite3 connection, for inspection (EXPLAIN, pragmas). */
  get database(): Db {
    return this.#core.db;
  }

  /**
   * Inserts documents of several types in one transaction, all or nothing: any invalid document or collision
   * rolls every part back. Answers one envelope per part (the failed part's errors tell why).
   * @example await store.insertMany([{ type: 'Well', docs: wells }, { type: 'DailyProduction', docs: daily }])
   */
  insertMany(parts: readonly { type: string; docs: unknown }[]): Promise<Envelope<never>[]> {
    this.#open();
    if (!Array.isArray(parts)) return Promise.resolve([fail([{ code: 'INVALID_REQUEST', message: 'insertMany: expected an array of { type, docs }' }])]);
    const out: Envelope<never>[] = [];
    const all = () => {
      for (const part of parts) {
        let env: Envelope<never>;
        try {
          env = isPlainObject(part)
            ? this.#insert(part.type as string, part.docs, { atomic: true })
            : fail<never>([{ code: 'INVALID_REQUEST', message: 'insertMany: expected an array of { type, docs }' }]);
        } catch (e) {
          // A part refused before writing (validation, unknown type) answers like one that collided.
          if (!(e instanceof RequestError)) throw e;
          env = fail<never>(e.errors);
        }
        out.push(env);
        if (!env.success) throw new RequestError(env.errors);
      }
      return envelope();
    };
    return this.#run(() => this.#core.tx.immediate(all) as Envelope<never>).then((env) => {
      if (env.success) return out;
      if (!out.length) return [env];
      // The transaction rolled back: the parts that went through before the failing one were not written either.
      const failed = out.length - 1;
      const code = out[failed]!.errors[0]?.code ?? 'INTERNAL';
      return out.map((e, i) => (i === failed ? e : fail<never>([{ code, message: `part ${i} was rolled back: part ${failed} failed (${out[failed]!.message})` }])));
    });
  }

  /** Closes the database; further calls throw. Closing twice is harmless. */
  close(): void {
    if (this.#core.closed) return;
    this.#core.closed = true;
    this.#core.db.close();
  }

  /** Names of every type, as accepted in `type`. */
  types(): Promise<Envelope<string>> {
    return this.#run(() => envelope({ data: [...this.#core.catalogue.names] }));
  }

  /** Every top-level field of a type with its wire kind: base fields first, then the type's own. */
  schema(type: string): Promise<Envelope<{ name: string; type: string }>> {
    return this.#run(() => envelope({ data: this.#core.catalogue.schema(this.#resolve(type)) }));
  }

  /**
   * Documents matching `query`, sorted and paged by `options`; `total` counts every match.
   * @example await store.query('Well', { spudDate: { gte: '1/1/2020' } }, { sortBy: 'spudDate', limit: 50 })
   */
  query(type: string, query?: unknown, options?: unknown): Promise<Envelope<AnyDoc>> {
    return this.#run(() => this.#query(type, query, options));
  }

  /**
   * Inserts documents. Colliding documents are reported and skipped unless `atomic` rolls everything back.
   * @example await store.insert('Well', [{ pwi: 'W1' }, { pwi: 'W2' }])
   */
  insert(type: string, docs: unknown, options?: unknown): Promise<Envelope<never>> {
    return this.#run(() => this.#insert(type, docs, options));
  }

  /**
   * Upserts by id: a document whose id exists replaces it whole, any other is inserted. All or nothing.
   * @example await store.replace('Well', [{ id: existingId, pwi: 'W1', statusCurrent: 'Shut-in' }])
   */
  replace(type: string, docs: unknown): Promise<Envelope<never>> {
    return this.#run(() => this.#replace(type, docs));
  }

  /**
   * Sets the body's fields (dotted paths allowed) on every document the query matches.
   * @example await store.update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing' })
   */
  update(type: string, query: unknown, body: unknown): Promise<Envelope<never>> {
    return this.#run(() => this.#update(type, query, body));
  }

  /**
   * Deletes the documents the query matches. An empty query is refused and deletes nothing.
   * @example await store.delete('Well', { pwi: 'W1' })
   */
  delete(type: string, query: unknown): Promise<Envelope<never>> {
    return this.#run(() => this.#delete(type, query));
  }

  // ---- internals -------------------------------------------------------------------------

  #open(): void {
    if (this.#core.closed) throw new TypeError('The DataStore is closed');
  }

  /** Runs one request: misuse throws now; bad input and failures become an envelope. */
  #run<T>(fn: () => Envelope<T>): Promise<Envelope<T>> {
    this.#open();
    for (let attempt = 1; ; attempt++) {
      try {
        return Promise.resolve(fn());
      } catch (e) {
        if (e instanceof RequestError) return Promise.resolve(fail<T>(e.errors));
        // A request is one transaction, rolled back whole: after the busy timeout it is safe to run it again.
        if (isBusy(e) && attempt < BUSY_ATTEMPTS) continue;
        if (isBusy(e)) {
          const message = `the database stayed locked by another connection through ${BUSY_ATTEMPTS} waits; nothing was written`;
          return Promise.resolve(fail<T>([{ code: 'INTERNAL', message }]));
        }
        // The cause (an engine message, a stack) goes to onError only: an answer never carries it.
        const requestId = randomBytes(6).toString('hex');
        try {
          this.#core.onError?.(e, requestId);
        } catch {
          // A throwing hook must not turn an answer into a crash of the host.
        }
        return Promise.resolve(fail<T>([{ code: 'INTERNAL', message: `internal error (request ${requestId})`, requestId }]));
      }
    }
  }

  /** Runs fn in one write transaction (BEGIN IMMEDIATE: the write lock is taken up front, so no upgrade deadlock). */
  #write<T>(fn: () => T, statements = 2): T {
    // A single statement is atomic on its own: BEGIN/COMMIT around it would only add two round trips.
    return statements === 1 ? fn() : (this.#core.tx.immediate(fn) as T);
  }

  #resolve(type: unknown): TypeInfo {
    if (typeof type !== 'string' || type === '') throw requestError('INVALID_REQUEST', `type: expected a type name, got ${describe(type)}`, { field: 'type' });
    if (type.length > LIMITS.nameLength) throw requestError('UNKNOWN_TYPE', `unknown type ${shown(type)}: type names have at most ${LIMITS.nameLength} characters`, { field: 'type' });
    const info = this.#core.catalogue.resolve(type);
    if (!info) throw requestError('UNKNOWN_TYPE', `unknown type ${shown(type)}${didYouMean(type, this.#core.catalogue.names)}`, { field: 'type' });
    return info;
  }

  #ctx(info: TypeInfo): ParseContext {
    return { type: info, strict: this.#core.strict };
  }

  /** The quoted documents table of a type. */
  #table(info: TypeInfo): string {
    return this.#core.tables.get(info.name) ?? ident(docsTable(info.name));
  }

  /** The plan and statement of a query, or the RequestError saying what is wrong with it. */
  #compile(type: unknown, query: unknown, options: unknown): { plan: QueryPlan; select: CompiledSelect } {
    const info = this.#resolve(type);
    const plan = parsePlan(this.#ctx(info), query, options);
    return { plan, select: compileSelect(plan, { type: info.name, keyed: this.#core.keyed.get(info.name) ?? new Set() }) };
  }

  /**
   * The SQL a query runs, its bound parameters, and SQLite's query plan for it: what `query` would do, without
   * running it. Throws a DataStoreError (with the envelope a query would answer) for a query that is not valid.
   * @example store.explain('Well', { pwi: 'W1' }).plan // ['SEARCH docs_Well USING INDEX ux._well.pwi (<expr>=?)']
   */
  explain(type: string, query?: unknown, options?: unknown): CompiledSelect & { plan: string[] } {
    this.#open();
    let select: CompiledSelect;
    try {
      select = this.#compile(type, query, options).select;
    } catch (e) {
      if (e instanceof RequestError) throw new DataStoreError(fail(e.errors));
      throw e;
    }
    const rows = this.#core.db.prepare(`EXPLAIN QUERY PLAN ${select.sql}`).all(...select.params) as { detail: string }[];
    return { ...select, plan: rows.map((r) => r.detail) };
  }

  #query(type: string, query: unknown, options: unknown): Envelope<AnyDoc> {
    const { plan, select } = this.#compile(type, query, options);
    const { statements, tx } = this.#core;
    const page = () => statements.get(select.sql).pluck(true).all(...select.params) as string[];
    let rows: string[];
    let total: number;
    if (select.paged) {
      // One read transaction: the page and the total come from the same snapshot.
      [rows, total] = tx(() => [page(), statements.get(select.countSql).pluck(true).get(...select.countParams) as number]) as [string[], number];
    } else {
      rows = page();
      total = rows.length;
    }
    const data = JSON.parse(`[${rows.join(',')}]`) as AnyDoc[];
    return envelope({ data, total, issues: plan.issues as string[] });
  }

  /** Validates every document first: one bad document fails the request before anything is written. */
  #validateAll(info: TypeInfo, docs: unknown): Record<string, unknown>[] {
    if (!Array.isArray(docs)) throw requestError('INVALID_REQUEST', `data: expected an array of documents, got ${describe(docs)}`, { field: 'data' });
    const errors: EnvelopeError[] = [];
    const out = docs.map((d, index) => {
      const r = validateDocument(info, d, { strict: this.#core.strict, index });
      errors.push(...r.errors);
      return r.doc;
    });
    if (errors.length) throw new RequestError(errors);
    return out;
  }

  /** Sets the base fields on a validated document (a fresh object of the store's own), in place. */
  #stamp(doc: Record<string, unknown>, now: string, keep?: { createdAt: unknown; createdBy: unknown }): Record<string, unknown> {
    if (typeof doc.id !== 'string') doc.id = this.#core.newId();
    doc.createdAt = keep ? keep.createdAt : (doc.createdAt ?? now);
    doc.createdBy = keep ? keep.createdBy : (doc.createdBy ?? this.#userId);
    doc.updatedAt = now;
    doc.updatedBy = this.#userId;
    doc.modifiedTimestamp = Date.parse(now);
    doc.schemaVersion = this.#core.catalogue.version;
    return doc;
  }

  #duplicate(e: Error, info: TypeInfo, doc: Record<string, unknown>, index: number): EnvelopeError {
    const fields = collidingKey(this.#core.db, e);
    const key: Record<string, unknown> = {};
    for (const f of fields) key[f] = doc[f];
    const shown = fields.map((f) => `${f} ${JSON.stringify(doc[f])}`).join(', ');
    return { code: 'DUPLICATE_KEY', index, key, message: `document ${index}: a ${info.name} with ${shown} already exists` };
  }

  #insert(type: string, docs: unknown, options: unknown): Envelope<never> {
    const info = this.#resolve(type);
    if (options !== undefined && options !== null && !isPlainObject(options)) throw requestError('INVALID_REQUEST', 'options: expected an object');
    const atomic = isPlainObject(options) && options.atomic === true;
    const valid = this.#validateAll(info, docs);
    const now = this.#core.now();
    const stamped = valid.map((d) => this.#stamp(d, now));
    const stmt = this.#core.statements.get(`INSERT INTO ${this.#table(info)} (id, doc) VALUES (?, jsonb(?))`);
    const insertedIds: string[] = [];
    const errors: EnvelopeError[] = [];
    const run = () => {
      stamped.forEach((doc, index) => {
        try {
          stmt.run(doc.id, JSON.stringify(doc));
          insertedIds.push(doc.id as string);
        } catch (e) {
          if (!isDuplicate(e)) throw e;
          errors.push(this.#duplicate(e, info, doc, index));
        }
      });
      if (atomic && errors.length) throw new RequestError(errors);
    };
    try {
      this.#write(run, stamped.length);
    } catch (e) {
      if (e instanceof RequestError) {
        const msg = `0 of ${stamped.length} inserted; ${plural(errors.length, 'duplicate key')}; nothing was written (atomic)`;
        return fail(errors, msg);
      }
      throw e;
    }
    if (!errors.length) return envelope({ insertedIds, count: insertedIds.length });
    return envelope({
      insertedIds,
      count: insertedIds.length,
      errors,
      success: false,
      message: `${insertedIds.length} of ${stamped.length} inserted; ${plural(errors.length, 'duplicate key')}`,
    });
  }

  #replace(type: string, docs: unknown): Envelope<never> {
    const info = this.#resolve(type);
    const valid = this.#validateAll(info, docs);
    const now = this.#core.now();
    const table = this.#table(info);
    const { statements } = this.#core;
    const find = statements.get(`SELECT seq, json_extract(doc, '$."createdAt"') AS createdAt, json_extract(doc, '$."createdBy"') AS createdBy FROM ${table} WHERE id = ?`);
    const put = statements.get(`UPDATE ${table} SET doc = jsonb(?) WHERE seq = ?`);
    const add = statements.get(`INSERT INTO ${table} (id, doc) VALUES (?, jsonb(?))`);
    const insertedIds: string[] = [];
    let replaced = 0;
    this.#write(() => {
      valid.forEach((d, index) => {
        const old = typeof d.id === 'string' ? (find.get(d.id) as { seq: number; createdAt: unknown; createdBy: unknown } | undefined) : undefined;
        const doc = this.#stamp(d, now, old);
        try {
          if (old) {
            put.run(JSON.stringify(doc), old.seq);
            replaced++;
          } else {
            add.run(doc.id, JSON.stringify(doc));
            insertedIds.push(doc.id as string);
          }
        } catch (e) {
          if (!isDuplicate(e)) throw e;
          throw new RequestError(this.#duplicate(e, info, doc, index));
        }
      });
    });
    return envelope({ insertedIds, count: insertedIds.length + replaced });
  }

  #update(type: string, query: unknown, body: unknown): Envelope<never> {
    const info = this.#resolve(type);
    const ctx = this.#ctx(info);
    const plan = parsePlan(ctx, query, undefined);
    if (!isPlainObject(body) || Object.keys(body).length === 0) {
      throw requestError('VALIDATION', `body: expected an object of fields to set, got ${Array.isArray(body) ? 'an array' : isPlainObject(body) ? 'an empty object' : describe(body)}`, { field: 'body' });
    }
    const errors: EnvelopeError[] = [];
    const sets: { path: string; value: unknown }[] = [];
    const parentChecks: string[] = [];
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
        let value: unknown;
        if (path.steps.length === 1) {
          const r = path.field ? checkValue(path.field, raw) : jsonValue(raw);
          if (!r.ok) throw requestError('VALIDATION', `${label}: ${r.reason}`, { field: key });
          value = r.value;
        } else {
          const cat = path.field?.category;
          if (cat && !['any', 'dict', 'nested'].includes(cat)) {
            throw requestError('VALIDATION', `${label}: "${top}" is a ${path.field!.kind}; set the whole field, not a part of it`, { field: key });
          }
          // The value lands steps - 1 levels down: it may nest only as deep as a document may.
          const r = jsonValue(raw, path.steps.length - 1);
          if (!r.ok) throw requestError('VALIDATION', `${label}: ${r.reason}`, { field: key });
          value = r.value;
          for (let i = 1; i < path.steps.length; i++) {
            const p = jsonPath(path.steps.slice(0, i));
            parentChecks.push(`(json_type(doc, ${p}) IS NOT NULL AND json_type(doc, ${p}) <> 'object')`);
          }
        }
        sets.push({ path: jsonPath(path.steps), value });
      });
    }
    if (errors.length) throw new RequestError(errors);
    const now = this.#core.now();
    const stamps = { updatedAt: now, updatedBy: this.#userId, modifiedTimestamp: Date.parse(now) };
    const where = compileWhere(plan.conditions, info.name);
    const table = this.#table(info);
    const args = [
      ...sets.map((s) => `${s.path}, json(?)`),
      ...Object.keys(stamps).map((k) => `'$."${k}"', ?`),
    ].join(', ');
    const params = [...sets.map((s) => JSON.stringify(s.value)), ...Object.values(stamps), ...where.params];
    const { statements } = this.#core;
    const count = this.#write(() => {
      if (parentChecks.length) {
        const bad = statements.get(`SELECT id FROM ${table} WHERE (${where.sql}) AND (${parentChecks.join(' OR ')}) LIMIT 1`).pluck(true).get(...where.params);
        if (bad !== undefined) {
          throw requestError('VALIDATION', `body: document ${JSON.stringify(bad)} has a non-object value where a dotted path needs an object; nothing was updated`);
        }
      }
      try {
        return statements.get(`UPDATE ${table} SET doc = jsonb_set(doc, ${args}) WHERE ${where.sql}`).run(...params).changes;
      } catch (e) {
        if (!isDuplicate(e)) throw e;
        const fields = collidingKey(this.#core.db, e);
        throw requestError('DUPLICATE_KEY', `the update would give two ${info.name} documents the same ${fields.join(', ')}; nothing was updated`);
      }
    }, parentChecks.length ? 2 : 1);
    return envelope({ count, issues: [...plan.issues] });
  }

  #delete(type: string, query: unknown): Envelope<never> {
    const info = this.#resolve(type);
    const plan = parsePlan(this.#ctx(info), query, undefined);
    if (plan.conditions.length === 0) {
      const message = 'Illegal operation attempted: a delete needs a non-empty query (it would remove every document); nothing was deleted';
      return envelope({ count: 0, success: true, message, errors: [{ code: 'ILLEGAL_OPERATION', message }], issues: [...plan.issues] });
    }
    const where = compileWhere(plan.conditions, info.name);
    const { statements } = this.#core;
    const count = this.#write(() => statements.get(`DELETE FROM ${this.#table(info)} WHERE ${where.sql}`).run(...where.params).changes, 1);
    return envelope({ count, issues: [...plan.issues] });
  }
}

/** Carries a snapshot from `fromSnapshot` into `open` (a symbol key: no user option can collide with it). */
const SNAPSHOT = Symbol('snapshot');

/** The store's clock as ISO strings; a clock that answers something else is a TypeError (INTERNAL for the request). */
function clockOf(clock: OpenOptions['clock']): () => string {
  if (!clock) return () => new Date().toISOString();
  return () => {
    const t = clock();
    const iso = typeof t === 'number' ? (Number.isFinite(t) ? new Date(t).toISOString() : null) : normalizeDate(t);
    if (iso === null) throw new TypeError(`clock returned ${describe(t)}, not a Date, ISO string or ms since the epoch`);
    return iso;
  };
}

function checkedIds(ids: () => string): () => string {
  return () => {
    const id = ids();
    if (typeof id !== 'string' || id === '') throw new TypeError(`ids returned ${describe(id)}, not a non-empty string`);
    return id;
  };
}

function canonical(catalogue: Catalogue, type: string): string {
  const info = catalogue.resolve(type);
  if (!info) throw new RangeError(`unknown type "${type}" in options${didYouMean(type, catalogue.names)}`);
  return info.name;
}
