/**
 * The SQLite backend: the shared SQL backend (src/sql/backend.ts) over one better-sqlite3 connection (driver.ts),
 * each operation one transaction, answered synchronously. Its own strategies: the page read in one pass (plans.ts),
 * the bulk path of large inserts (bulk.ts), streamed reads, and snapshots. The schema is kept by schema.ts.
 */
import type { TypeInfo } from '../catalogue/index.js';
import { duplicateError, orCatch, StoreBusyError, type Backend, type MaybePromise, type BulkWriter, type FieldSet, type Explained, type ReplaceResult, type InsertResult, type StoredDoc, type Journal, type ChangeFeed, type RowStream, type TextPage } from '../backend.js';
import type { EnvelopeError } from '../envelope.js';
import type { QueryPlan } from '../query/ast.js';
import type { Settings } from '../settings.js';
import { compileSelect, compileWhere, rebind, selectShape, selectTarget, type CompiledSelect, type OnePass, type SelectTarget } from './compile.js';
import { BulkInserts } from './bulk.js';
import { asRollbackJournal, NotAStoreError, openDatabase, type Db } from './connection.js';
import { CHANGES_TABLE, docsTable, ident } from './names.js';
import { collidingKey, cursorKey, ensureSchema, fieldsOfIndexSql, softDeleteOf } from './schema.js';
import { journals } from './journal.js';
import { BoundedCache } from '../cache.js';
import { onePassPays } from './plans.js';
import { insertDoc, type WriteTable } from '../sql/write.js';
import { runSync, SqlBackend, type Materialize, type Op, type Page, type PageColumns, type PageRows } from '../sql/backend.js';
import { sqlite } from './dialect.js';
import { BUSY_ATTEMPTS, isBusy, isDuplicate, requestErrorOf, SqliteDriver } from './driver.js';
import { SQLITE_SUMMARY } from './aggregate.js';
import { JOURNAL_TYPES } from '../settings.js';
import { DocumentCache, type DocumentCacheStats } from './documents.js';

/**
 * Each row's JSON parsed on its own: never one string of every row (a string has a length limit, ~512 MB), and
 * measured 1.6-2.3x faster than parsing the rows joined into one array text.
 */
const parseRows: Materialize = (_info, rows, text) => {
  const data = new Array<StoredDoc>(rows.length);
  for (let i = 0; i < rows.length; i++) data[i] = JSON.parse(text(rows[i]!) as string) as StoredDoc;
  return data;
};

/** Each row's JSON text as SQLite renders the stored document: the text JSON.stringify makes of it (queryText). */
const rowTexts: Materialize<string> = (_info, rows, text) => rows.map((r) => text(r) as string);

/** What the document cache checks before each read: another connection's commits, and this one's changes. */
const CHANGED = 'SELECT (SELECT data_version FROM pragma_data_version), total_changes()';

export class SqliteBackend extends SqlBackend<SqliteDriver, true> implements Backend {
  readonly capabilities = { cursors: true, stream: true, bulk: true, feed: true };
  protected readonly dialect = sqlite;
  protected readonly changesTable = ident(CHANGES_TABLE);
  protected readonly metaTable = 'cd_meta';
  // The driver and what is read off it on every request, as fields (set together by #use): a private getter is read
  // through V8's runtime on each call, not inlined (Runtime_LoadPrivateGetter in perf).
  #driver!: SqliteDriver;
  #db!: Db;
  #statements!: SqliteDriver['statements'];
  readonly #tables = new Map<string, WriteTable>();
  /** How each type is stored, for the compiler (compile.ts selectTarget). */
  readonly #targets = new Map<string, SelectTarget>();
  /** Compiled statements by query shape (see select). */
  readonly #plans = new BoundedCache<CompiledSelect>();
  /** Page statement text → whether its query runs as one statement (see #onePass). */
  readonly #passes = new BoundedCache<boolean>();
  readonly #settings: Settings;
  /** Per type, the fields of its unique indexes (see uniqueFields). */
  readonly #uniqueFields = new Map<string, readonly string[]>();
  /** Parsed documents by rowid (option documentCache), or null when it is off. */
  readonly #docs: DocumentCache | null;
  /** True for stores in memory (the ones `restore` may replace). */
  readonly memory: boolean;
  /** See Backend.cursorKey; a restored snapshot brings its own. */
  cursorKey: Uint8Array;

  /**
   * Opens a file (WAL, created if missing), memory, or an in-memory copy of a snapshot, and brings its schema up to date.
   * @example const backend = new SqliteBackend(':memory:', resolveSettings({}, 'open'));
   */
  constructor(source: string | Uint8Array, settings: Settings) {
    super(settings);
    this.#settings = settings;
    this.#docs = settings.documentCache ? new DocumentCache(settings.documentCache.maxBytes) : null;
    this.memory = typeof source !== 'string' || source === ':memory:' || source === '';
    const options = {
      uniqueKeys: settings.uniqueKeys,
      indexes: settings.indexes,
      journal: { history: settings.history, changeFeed: settings.changeFeed, changeRetention: settings.changeRetention },
      softDelete: settings.softDelete,
    };
    // A new in-memory store creates its schema rather than copying an empty one: a copy (a deserialized database)
    // could never grow past 1 GiB (SQLite's SQLITE_MEMDB_DEFAULT_MAXSIZE), a plain :memory: database can.
    const db = openDatabase(source, settings.busyTimeoutMs, settings.mmapSize);
    const label = typeof source === 'string' ? source : 'the snapshot';
    try {
      // The schema is written (BEGIN IMMEDIATE) only when it changes; another writer's lock is waited out as a write's is.
      const schema = this.#busyRetry(
        () => ensureSchema(db, settings.catalogue, options, label),
        () => new StoreBusyError(`${label}: another connection held the write lock through ${BUSY_ATTEMPTS} waits of ${settings.busyTimeoutMs} ms while the store's schema was being brought up to date; nothing was changed: open it again, or with a larger busyTimeoutMs`),
      );
      this.keepSoft(schema.softDelete);
      this.journals = journals(db);
      // A file made before signed cursors gets its key on its first open, under the write lock (README "Cursors").
      this.cursorKey = this.#busyRetry(
        () => cursorKey(db, settings.idSeed),
        () => new StoreBusyError(`${label}: another connection held the write lock through ${BUSY_ATTEMPTS} waits of ${settings.busyTimeoutMs} ms while the store's cursor key was being made; nothing was changed: open it again`),
      );
    } catch (e) {
      db.close();
      throw e;
    }
    this.#use(new SqliteDriver(db));
    for (const n of settings.catalogue.names) this.#tables.set(n, { name: ident(docsTable(n)) });
  }

  protected get driver(): SqliteDriver {
    return this.#driver;
  }

  /** The connection, for inspection (EXPLAIN, pragmas). */
  get database(): Db {
    return this.#driver.db;
  }

  /** Serves requests on `driver`'s connection from now on. */
  #use(driver: SqliteDriver): void {
    this.#driver = driver;
    this.#db = driver.db;
    this.#statements = driver.statements;
  }

  /** fn, with an engine error that means a request error (requestErrorOf) thrown as that. */
  #refused<T>(fn: () => MaybePromise<T>): MaybePromise<T> {
    return orCatch(fn, (e) => {
      throw requestErrorOf(e) ?? e;
    });
  }

  /** fn, run again while another connection's lock rolls it back, up to BUSY_ATTEMPTS times; then `exhausted()` is thrown. */
  #busyRetry<T>(fn: () => T, exhausted: () => Error): T {
    for (let attempt = 1; ; attempt++) {
      try {
        return fn();
      } catch (e) {
        if (!isBusy(e)) throw e;
        if (attempt >= BUSY_ATTEMPTS) throw exhausted();
      }
    }
  }

  protected table(type: string): WriteTable {
    return this.#tables.get(type) ?? { name: ident(docsTable(type)) };
  }

  protected where(info: TypeInfo, plan: QueryPlan) {
    return compileWhere(plan.conditions, info.name);
  }

  protected feedWhere(type: TypeInfo, plan: QueryPlan) {
    return compileWhere(plan.conditions, type.name, false);
  }

  /** The last seq the feed gave: sqlite_sequence survives pruning. */
  protected *lastGiven(): Op<number> {
    return (this.#statements.get(`SELECT seq FROM sqlite_sequence WHERE name = ?`).pluck(true).get(CHANGES_TABLE) as number | undefined) ?? 0;
  }

  /**
   * The statements of a plan. Plans of one shape (compile.ts selectShape: the common queries, on scalar fields) are
   * compiled once and their values bound anew, so a repeated query skips compilation, and its SQL text, the same
   * string each time, finds its prepared statement at once.
   */
  protected select(info: TypeInfo, plan: QueryPlan, _where?: unknown, rowids = this.#docs !== null): CompiledSelect {
    const shape = selectShape(plan);
    const key = shape && `${info.name}\u0001${rowids ? 'r' : ''}\u0001${shape.key}`;
    const template = key && this.#plans.get(key);
    if (template) return rebind(template, plan, shape!.where);
    let target = this.#targets.get(info.name);
    if (!target) this.#targets.set(info.name, (target = selectTarget(this.#settings, info.name)));
    // A later page in insertion order chooses its plan by how dense the matches are (the cursor's total over the
    // rows, estimated by the largest rowid).
    const rows = plan.after && !plan.sort ? ((this.#statements.get(`SELECT max(rowid) FROM ${this.table(info.name).name}`).pluck(true).get() as number | null) ?? 0) : undefined;
    const select = compileSelect(plan, target, rows, rowids);
    if (key) this.#plans.set(key, select, key.length + select.sql.length + select.countSql.length + (select.onePass?.sql.length ?? 0));
    return select;
  }

  /** The one statement of a limited first page where it beats the page and the count (plans.ts onePassPays), decided once per statement text. */
  #onePass(info: TypeInfo, select: CompiledSelect): OnePass | null {
    const one = select.onePass;
    if (!one) return null;
    let pays = this.#passes.get(select.sql);
    if (pays === undefined) {
      pays = onePassPays(this.#details(select.sql, select.params), this.#details(select.countSql, select.countParams), docsTable(info.name), one.always);
      this.#passes.set(select.sql, pays);
    }
    return pays ? one : null;
  }

  /** Inside a read transaction already (a cached read holds one around its page, or the caller on `database`): that snapshot is the one. */
  protected oneSnapshot<T>(s: SqliteDriver, body: Op<T>): Op<T> {
    return this.#db.inTransaction ? body : super.oneSnapshot(s, body);
  }

  /** The page `query` answers, each document as its stored text: for plans without `fields` or `distance` (Backend.queryText). */
  queryText(info: TypeInfo, plan: QueryPlan): TextPage {
    // Text is read from the table, never through the document cache: it holds parsed documents.
    return this.answerPage(info, plan, this.select(info, plan, null, false), rowTexts);
  }

  protected readonly pageColumns: PageColumns = [0, 1, 2, 3];
  protected readonly parse = parseRows;
  protected readonly summaryHooks = SQLITE_SUMMARY;

  /** A limited first page read by its one-pass statement where that pays (#onePass): every match counted with it. */
  protected pageRows(_s: SqliteDriver, info: TypeInfo, _plan: QueryPlan, select: CompiledSelect, counting: boolean): PageRows {
    if (!select.keyed) return { rows: this.#statements.get(select.sql).pluck(true).all(...select.params) };
    const one = counting ? this.#onePass(info, select) : null;
    const rows = this.#statements.get(one ? one.sql : select.sql).raw(true).all(...(one ? one.params : select.params)) as unknown[][];
    // No row: no match at all, or the page is past the end (then counted on its own).
    return { rows, total: one && rows.length ? (rows[0]![4] as number) : undefined };
  }

  /** With the document cache on, a page of rowids: its documents from the cache, in the snapshot of its check for changes. */
  protected answerPage<D>(info: TypeInfo, plan: QueryPlan, select: CompiledSelect, materialize: Materialize<D>): Page<D> {
    if (!select.rowids) return super.answerPage(info, plan, select, materialize);
    // A transaction the caller holds on `database` may still roll back what this read sees: nothing it reads is kept.
    const held = this.#db.inTransaction;
    return this.exec((s) => this.oneSnapshot(s, this.#cachedPage(s, info, plan, select, held)));
  }

  *#cachedPage<D>(s: SqliteDriver, info: TypeInfo, plan: QueryPlan, select: CompiledSelect, held: boolean): Op<Page<D>> {
    const docs = this.#docs!;
    const [version, changes] = this.#statements.get(CHANGED).raw(true).get() as [number, number];
    docs.sync(version, changes);
    const page = yield* this.page(s, info, plan, select, this.#cached);
    if (held) docs.clear();
    return page as Page<D>;
  }

  /** Documents by rowid from the document cache, those it lacks read in one statement (then kept), in the snapshot of the rowids. */
  readonly #cached: Materialize = (info, rows, value) => {
    const docs = this.#docs!;
    const data = new Array<StoredDoc>(rows.length);
    const missing: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      const rowid = value(rows[i]!) as number;
      const doc = docs.get(info.name, rowid);
      if (doc) data[i] = doc;
      else missing.push(i);
    }
    if (!missing.length) return data;
    const ids = missing.map((i) => value(rows[i]!) as number);
    const read = this.#statements.get(`SELECT rowid, json(doc) FROM ${this.table(info.name).name} WHERE rowid IN (SELECT value FROM json_each(?))`);
    const texts = new Map(read.raw(true).all(JSON.stringify(ids)) as [number, string][]);
    for (let j = 0; j < missing.length; j++) data[missing[j]!] = docs.set(info.name, ids[j]!, texts.get(ids[j]!)!);
    return data;
  };

  stream(info: TypeInfo, plan: QueryPlan): RowStream | null {
    if (plan.limit > 0 || plan.after) return null;
    // Streamed rows are JSON text, read as they are taken: never through the document cache.
    const select = this.select(info, plan, null, false);
    let total: number | null = null;
    // Inside a transaction already (one held on `database`): its snapshot is the stream's, and not the stream's to end.
    const own = select.paged && !this.#db.inTransaction;
    const d = this.#driver;
    let rows: IterableIterator<string>;
    try {
      // A skip: the rows and their total come from one read transaction, held until the stream closes.
      if (own) d.begin(d, 'read', []);
      if (select.paged) total = this.request(() => d.all(d, { sql: select.countSql, params: select.countParams })[0]![0] as number);
      rows = this.#statements.get(select.sql).pluck(true).iterate(...select.params) as IterableIterator<string>;
    } catch (e) {
      if (own) d.rollback();
      throw e;
    }
    return {
      rows,
      total,
      close: () => {
        try {
          rows.return?.();
        } finally {
          // COMMIT ends the read transaction; it cannot run while the statement is stepping, hence after return().
          if (own) {
            if (this.#db.inTransaction) this.#driver.commit();
            else this.#driver.rollback();
          }
        }
      },
    };
  }

  /** SQLite's plan of a statement (EXPLAIN QUERY PLAN), prepared on its own: never kept among the statements. */
  #details(sql: string, params: unknown[]): string[] {
    return (this.#db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
  }

  protected explainText(_s: SqliteDriver, select: CompiledSelect): string[] {
    return this.#details(select.sql, select.params);
  }

  /** `onePass`: the one statement the store runs instead of the page's and the count's (a limited first page, where it is faster), or null. */
  protected explained(info: TypeInfo, plan: QueryPlan, select: CompiledSelect): Omit<Explained, 'plan'> {
    return { ...select, onePass: plan.after ? null : this.#onePass(info, select) };
  }

  /**
   * Inserts inside the caller's transaction, taking each document from `docs` as it goes (validated and stamped
   * then); collisions are collected, other errors thrown. `bulk` counts the inserts and may switch the type to the
   * bulk path (src/sqlite/bulk.ts).
   */
  #insertDocs(info: TypeInfo, docs: Iterable<StoredDoc>, bulk: BulkInserts): InsertResult {
    const table = this.table(info.name);
    const insertedIds: string[] = [];
    const errors: EnvelopeError[] = [];
    let index = 0;
    for (const doc of docs) {
      try {
        const { sql, params } = insertDoc(sqlite, table, doc.id, JSON.stringify(doc));
        const { lastInsertRowid } = this.#statements.get(sql).run(...params);
        insertedIds.push(doc.id as string);
        bulk.inserted(info, doc, Number(lastInsertRowid));
      } catch (e) {
        if (!isDuplicate(e)) throw e;
        errors.push(duplicateError(info, doc, index, collidingKey(this.#db, e)));
      }
      index++;
    }
    return { insertedIds, errors, rolledBack: false };
  }

  /**
   * A write of this store, the document cache told after it which types it wrote (the journal's types with them:
   * its triggers and ActivityLog write those) and the connection's change count around it.
   */
  #wrote<T>(info: TypeInfo | readonly { info: TypeInfo }[], fn: () => T): T {
    const docs = this.#docs;
    if (!docs) return fn();
    const changes = () => this.#statements.get('SELECT total_changes()').pluck(true).get() as number;
    const before = changes();
    try {
      return fn();
    } finally {
      const types = 'name' in info ? [info.name] : info.map((p) => p.info.name);
      docs.wrote([...types, ...JOURNAL_TYPES], before, changes());
    }
  }

  /** What the document cache holds and how it served reads, or null when it is off (option documentCache). */
  documentCacheStats(): DocumentCacheStats | null {
    return this.#docs?.stats() ?? null;
  }

  /** Inserts in a write's transaction with a bulk-path state, rebuilding what it dropped before the commit (settled first: a rolled back load rebuilds nothing). */
  *#bulkInserts<T extends InsertResult | InsertResult[]>(fn: (bulk: BulkInserts) => T, atomic: boolean): Op<T> {
    const bulk = new BulkInserts(this.#db);
    try {
      const r = this.settle(fn(bulk), atomic);
      bulk.finish();
      return r;
    } catch (e) {
      bulk.abort();
      throw e;
    }
  }

  insert(info: TypeInfo, docs: Iterable<StoredDoc>, atomic: boolean, count = 2, journal?: Journal): InsertResult {
    const w = { op: 'insert', journal, counts: (r: InsertResult) => ({ created: r.insertedIds.length, modified: 0, deleted: 0, errors: r.errors }) };
    return this.#wrote(info, () => this.inserts(w, count, () => this.#bulkInserts((bulk) => this.#insertDocs(info, docs, bulk), atomic)) as InsertResult);
  }

  insertMany(parts: readonly { info: TypeInfo; docs: readonly StoredDoc[] }[], journal?: Journal): InsertResult[] {
    const w = { op: 'insert', journal, counts: (rs: InsertResult[]) => ({ created: rs.reduce((n, r) => n + r.insertedIds.length, 0), modified: 0, deleted: 0, errors: [] }) };
    return this.#wrote(parts, () => this.inserts(w, 2, () => this.#bulkInserts((bulk) => parts.map((p) => this.#insertDocs(p.info, p.docs, bulk)), true)) as InsertResult[]);
  }

  replace(info: TypeInfo, docs: readonly StoredDoc[], stamp: (doc: StoredDoc, old?: StoredDoc) => StoredDoc | null, journal?: Journal): ReplaceResult {
    return this.#wrote(info, () => super.replace(info, docs, stamp, journal) as ReplaceResult);
  }

  /**
   * The fields of the file's unique indexes on a type's table (those the options no longer list too), read once per
   * type: rewrites are batched in the order of their rows (SqlBackend#replace), so one added since by another
   * connection only costs a replace its one-by-one rerun, never another answer.
   */
  protected uniqueFields(info: TypeInfo): readonly string[] {
    let fields = this.#uniqueFields.get(info.name);
    if (!fields) {
      const indexes = this.#statements.get(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).pluck(true).all(docsTable(info.name)) as string[];
      fields = indexes.filter((q) => /^CREATE\s+UNIQUE/i.test(q)).flatMap(fieldsOfIndexSql);
      this.#uniqueFields.set(info.name, fields);
    }
    return fields;
  }

  update(info: TypeInfo, plan: QueryPlan, sets: readonly FieldSet[], stamps: Readonly<Record<string, unknown>>, journal?: Journal): number {
    return this.#wrote(info, () => super.update(info, plan, sets, stamps, journal) as number);
  }

  delete(info: TypeInfo, plan: QueryPlan, journal?: Journal): number {
    return this.#wrote(info, () => super.delete(info, plan, journal) as number);
  }

  /**
   * One write transaction held open across awaits (BEGIN IMMEDIATE now, COMMIT or ROLLBACK later). The façade lets
   * no other request of this store run meanwhile: on one connection it would join the transaction.
   */
  bulk(): BulkWriter {
    const alone = this.#alone();
    try {
      this.request(() => this.#db.exec('BEGIN IMMEDIATE'));
      try {
        // Read before the first insert, under the write lock: the newest committed seq until this transaction ends.
        this.#heldHead = this.feed.head() as number;
      } catch (e) {
        this.#db.exec('ROLLBACK');
        throw e;
      }
    } catch (e) {
      if (alone) this.#backToWal();
      throw e;
    }
    const bulk = new BulkInserts(this.#db);
    let open = true;
    const end = (commit: boolean) => {
      if (!open) return;
      open = false;
      this.#heldHead = undefined;
      try {
        if (!commit) {
          // SQLite may have rolled the transaction back itself (a full database does).
          if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
          bulk.abort();
          return;
        }
        try {
          bulk.finish();
          this.#db.exec('COMMIT');
        } catch (e) {
          // A COMMIT that failed (a full disk) leaves the transaction open: it is rolled back, not left holding the lock.
          if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
          throw e;
        }
        this.commits++;
      } finally {
        if (alone) this.#backToWal();
      }
    };
    return {
      insert: (info, docs) => this.#refused(() => this.#wrote(info, () => this.#insertDocs(info, docs, bulk))),
      // 200k Wells in one atomic load: 14-16 s in batches of 5,000, 10.6 s written 200 at a time.
      chunk: 256,
      commit: () => this.#refused(() => end(true)),
      rollback: () => end(false),
    };
  }

  /**
   * Switches a file no other connection has open to a rollback journal for one bulk transaction, and answers whether
   * it did. A transaction larger than the cache writes its pages into the file once, not into the WAL and then again
   * at the checkpoint, and a new file's journal holds next to nothing. SQLite itself is the check: leaving WAL takes
   * an exclusive lock, refused (SQLITE_BUSY, asked without waiting) while another connection has the file open.
   * Until the mode is back, a connection opened meanwhile waits as for any writer; a crash leaves a hot journal that
   * the next open rolls back, as WAL would have.
   */
  #alone(): boolean {
    if (this.memory) return false;
    const db = this.#db;
    db.pragma('busy_timeout = 0');
    try {
      return db.pragma('journal_mode = DELETE', { simple: true }) === 'delete';
    } catch (e) {
      if (isBusy(e)) return false;
      throw e;
    } finally {
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(this.#settings.busyTimeoutMs))}`);
    }
  }

  /**
   * Back to WAL after a bulk transaction ran with a rollback journal. A reader that came meanwhile and still holds the
   * file is waited out once (busy timeout); past that the connection stays on the rollback journal, which is only
   * less concurrent, until its next bulk load or the next open: the load has committed and must not answer a failure.
   */
  #backToWal(): void {
    try {
      this.#db.pragma('journal_mode = WAL');
    } catch (e) {
      if (!isBusy(e)) throw e;
    }
  }

  /** The feed's committed head while a bulk transaction is open: the connection reads its own uncommitted events. */
  #heldHead: number | undefined;

  /** The feed's table was seen: a feed once on stays on (nothing drops it), so it is looked up until then, not after. */
  #feedOn = false;

  /** The change feed (journal.ts writes it): events read by seq, polled cheaply through data_version. */
  readonly feed: ChangeFeed = {
    enabled: () => (this.#feedOn ||= this.#statements.get(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck(true).get(CHANGES_TABLE) !== undefined),
    read: (after, limit, type, plan) => this.readFeed(after, limit, type, plan),
    bounds: () => runSync(this.bounds(this.#driver)),
    // A prepared statement: pragma() prepares anew on each call, and the store's reader asks every poll.
    version: () => `${this.#statements.get('PRAGMA data_version').pluck(true).get() as number}.${this.commits}`,
    // Synchronous, so a write issued after it commits later; without the feed's table there is no head (0).
    head: () => this.#heldHead ?? (this.feed.enabled() ? (this.feed.bounds() as { last: number }).last : 0),
  };

  /** The whole database as bytes, in a form an in-memory database opens (see asRollbackJournal). */
  snapshot(): Buffer {
    return asRollbackJournal(this.#db.serialize());
  }

  /** Replaces an in-memory database with a copy of a snapshot. */
  restore(snapshot: Uint8Array): void {
    if (!this.memory) throw new TypeError('restore: only an in-memory store can be restored; open the snapshot with fromSnapshot');
    // Read from the snapshot before anything is let go: one that is not a store's leaves this store as it was.
    let db: Db | undefined;
    let key: Uint8Array;
    let soft: string[];
    try {
      db = openDatabase(snapshot, this.#settings.busyTimeoutMs, this.#settings.mmapSize);
      key = cursorKey(db, this.#settings.idSeed);
      soft = softDeleteOf(db);
    } catch (e) {
      db?.close();
      throw new NotAStoreError('restore: the snapshot is not a consolidata store; the store is as it was', { cause: e });
    }
    this.#db.close();
    this.#docs?.clear();
    this.#uniqueFields.clear();
    this.#use(new SqliteDriver(db));
    // The snapshot may have been taken before the feed was on.
    this.#feedOn = false;
    this.journals = journals(db);
    this.cursorKey = key;
    // Its soft deletes are the snapshot's (its unique indexes are made for them), not those of the database replaced.
    this.takeSoft(soft);
  }

  close(): void {
    this.#db.close();
  }
}
