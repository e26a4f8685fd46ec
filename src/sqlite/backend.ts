/**
 * The SQLite backend: one better-sqlite3 connection, each operation one transaction, answered synchronously.
 * Plans are compiled to SQL over the JSONB `doc` column by compile.ts; the schema is kept by schema.ts.
 */
import type { TypeInfo } from '../catalogue/index.js';
import { duplicateError, parentNotObject, StoreBusyError, storeFull, updateCollision, type Backend, type BulkWriter, type Explained, type ReplaceResult, type FieldSet, type InsertResult, type QueryResult, type StoredDoc, type Journal, type WriteCounts, type ChangeEvent, type ChangeFeed, type RowStream } from '../backend.js';
import { requestError, RequestError, type EnvelopeError } from '../envelope.js';
import type { QueryPlan } from '../query/ast.js';
import type { Settings } from '../settings.js';
import { compileSelect, compileWhere, rebind, selectShape, selectTarget, type CompiledSelect, type OnePass, type SelectTarget } from './compile.js';
import { BulkInserts } from './bulk.js';
import { asRollbackJournal, openDatabase, StatementCache, type Db, type Transaction } from './connection.js';
import type { Compiled } from '../sql/fragment.js';
import type { RunResult } from 'better-sqlite3';
import { CHANGES_TABLE, docsTable, ident } from './names.js';
import { collidingKey, cursorKey, ensureSchema } from './schema.js';
import { journals } from './journal.js';
import { bound, sql } from '../sql/fragment.js';
import { context, deleteWhere, feedBounds, feedRead, firstBadParent, insertDoc, putDoc, readDocs, updateSet, type WriteTable } from '../sql/write.js';
import { sqlite } from './dialect.js';
import { BoundedCache } from '../cache.js';
import { onePassPays } from './plans.js';

const BUSY_ATTEMPTS = 3;

function isDuplicate(e: unknown): e is Error & { code: string } {
  const code = (e as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * The request error an engine error means, if it means one: SQLITE_FULL (the disk is full, the file at max_page_count,
 * or an in-memory copy of a snapshot at 1 GiB) is STORE_FULL. Every request's failure passes here (see `refused`).
 * @example throw requestErrorOf(e) ?? e;
 */
export function requestErrorOf(e: unknown): RequestError | undefined {
  return (e as { code?: unknown })?.code === 'SQLITE_FULL' ? storeFull() : undefined;
}

/** fn, with an engine error that means a request error (requestErrorOf) thrown as that. */
function refused<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw requestErrorOf(e) ?? e;
  }
}

/** Thrown inside a transaction to roll it back while keeping what the caller needs to answer. */
class Rollback<T> extends Error {
  constructor(readonly result: T) {
    super('rollback');
  }
}

/**
 * Each row's JSON parsed on its own: never one string of every row (a string has a length limit, ~512 MB), and
 * measured 1.6-2.3x faster than parsing the rows joined into one array text.
 */
function parseRows<R>(rows: readonly R[], text: (row: R) => string): StoredDoc[] {
  const data = new Array<StoredDoc>(rows.length);
  for (let i = 0; i < rows.length; i++) data[i] = JSON.parse(text(rows[i]!)) as StoredDoc;
  return data;
}

export class SqliteBackend implements Backend {
  #db: Db;
  #statements: StatementCache;
  /** One transaction wrapper per connection: building it per request cost more than a whole indexed query. */
  #tx: Transaction<(fn: () => unknown) => unknown>;
  readonly #tables = new Map<string, string>();
  /** How each type is stored, for the compiler (compile.ts selectTarget). */
  readonly #targets = new Map<string, SelectTarget>();
  /** Compiled statements by query shape (see #select). */
  readonly #plans = new BoundedCache<CompiledSelect>();
  /** Page statement text → whether its query runs as one statement (see #onePass). */
  readonly #passes = new BoundedCache<boolean>();
  readonly #settings: Settings;
  /** Types whose deletes are soft: the options' and those the file names (schema.ts). */
  readonly softDelete: ReadonlySet<string> = new Set();
  /** True when the file has journal triggers (history or the change feed), whoever turned them on. */
  #journals = false;
  /** True for stores in memory (the ones `restore` may replace). */
  readonly memory: boolean;
  /** See Backend.cursorKey; a restored snapshot brings its own. */
  cursorKey: Uint8Array;

  /**
   * Opens a file (WAL, created if missing), memory, or an in-memory copy of a snapshot, and brings its schema up to date.
   * @example const backend = new SqliteBackend(':memory:', resolveSettings({}, 'open'));
   */
  constructor(source: string | Uint8Array, settings: Settings) {
    this.#settings = settings;
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
      this.softDelete = schema.softDelete;
      this.#journals = journals(db);
      // A file made before signed cursors gets its key on its first open, under the write lock (README "Cursors").
      this.cursorKey = this.#busyRetry(
        () => cursorKey(db, settings.idSeed),
        () => new StoreBusyError(`${label}: another connection held the write lock through ${BUSY_ATTEMPTS} waits of ${settings.busyTimeoutMs} ms while the store's cursor key was being made; nothing was changed: open it again`),
      );
    } catch (e) {
      db.close();
      throw e;
    }
    this.#db = db;
    this.#statements = new StatementCache(db);
    this.#tx = db.transaction((fn: () => unknown) => fn());
    for (const n of settings.catalogue.names) this.#tables.set(n, ident(docsTable(n)));
  }

  /** The connection, for inspection (EXPLAIN, pragmas). */
  get database(): Db {
    return this.#db;
  }

  /**
   * Runs one operation; a request rolled back by another connection's lock is run again whole (it wrote nothing),
   * up to three times, after waiting busyTimeoutMs each time.
   */
  #retry<T>(fn: () => T): T {
    return refused(() => this.#busyRetry(fn, () => requestError('INTERNAL', `the database stayed locked by another connection through ${BUSY_ATTEMPTS} waits; nothing was written`)));
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

  /**
   * Runs fn in one write transaction (BEGIN IMMEDIATE: the write lock is taken up front, so no upgrade deadlock).
   * With a journal, the request's context row is set first where the file journals (journal.ts: a replace, update
   * or delete's triggers read it), and its ActivityLog document is written last, from what fn did.
   */
  #write<T>(fn: () => T, statements = 2, j?: { op: string; journal: Journal | undefined; counts: (r: T) => WriteCounts }): T {
    const journal = j?.journal;
    const op = journal?.op ?? j?.op;
    const ctx = journal && op && op !== 'insert' && this.#journals ? context(sqlite, { op, activity: journal.activityId, at: journal.at, ms: Date.parse(journal.at), by: journal.userId }) : null;
    const log = journal?.log;
    const run =
      ctx || log
        ? () => {
            if (ctx) this.#run(ctx.set);
            const r = fn();
            if (ctx?.clear) this.#run(ctx.clear);
            if (log) {
              const c = j!.counts(r);
              // A soft delete is an update of the rows, and what it did is deleting them.
              this.#insertLog(log(journal.op === 'delete' && c.modified ? { ...c, deleted: c.modified, modified: 0 } : c));
            }
            return r;
          }
        : fn;
    const n = statements + (ctx ? 2 : 0) + (log ? 1 : 0);
    // A single statement is atomic on its own: BEGIN/COMMIT around it would only add two round trips.
    const r = this.#retry(() => (n === 1 ? run() : (this.#tx.immediate(run) as T)));
    this.#commits++;
    return r;
  }

  /** Writes a request's ActivityLog document (inside its transaction). */
  #insertLog(doc: StoredDoc): void {
    this.#run(insertDoc(sqlite, { name: ident(docsTable('ActivityLog')) }, doc.id, JSON.stringify(doc)));
  }

  /** Runs a compiled write statement; what it changed. */
  #run(c: Compiled): RunResult {
    return this.#statements.get(c.sql).run(...c.params);
  }

  #table(info: TypeInfo): string {
    return this.#tables.get(info.name) ?? ident(docsTable(info.name));
  }

  #writeTable(info: TypeInfo): WriteTable {
    return { name: this.#table(info) };
  }

  /**
   * The statements of a plan. Plans of one shape (compile.ts selectShape: the common queries, on scalar fields) are
   * compiled once and their values bound anew, so a repeated query skips compilation, and its SQL text, the same
   * string each time, finds its prepared statement at once.
   */
  #select(info: TypeInfo, plan: QueryPlan): CompiledSelect {
    const shape = selectShape(plan);
    const key = shape && `${info.name}\u0001${shape.key}`;
    const template = key && this.#plans.get(key);
    if (template) return rebind(template, plan, shape!.where);
    let target = this.#targets.get(info.name);
    if (!target) this.#targets.set(info.name, (target = selectTarget(this.#settings, info.name)));
    // A later page in insertion order chooses its plan by how dense the matches are (the cursor's total over the
    // rows, estimated by the largest rowid).
    const rows = plan.after && !plan.sort ? ((this.#statements.get(`SELECT max(rowid) FROM ${this.#table(info)}`).pluck(true).get() as number | null) ?? 0) : undefined;
    const select = compileSelect(plan, target, rows);
    if (key) this.#plans.set(key, select, key.length + select.sql.length + select.countSql.length + (select.onePass?.sql.length ?? 0));
    return select;
  }

  /**
   * The one-statement form of a limited first page, when it is faster than the page and the count (plans.ts
   * onePassPays), else null. Decided once per statement text from SQLite's plans of the two statements.
   */
  #onePass(info: TypeInfo, select: CompiledSelect): OnePass | null {
    const one = select.onePass;
    if (!one) return null;
    let pays = this.#passes.get(select.sql);
    if (pays === undefined) {
      const details = (sql: string, params: unknown[]) => (this.#db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
      pays = onePassPays(details(select.sql, select.params), details(select.countSql, select.countParams), docsTable(info.name), one.always);
      this.#passes.set(select.sql, pays);
    }
    return pays ? one : null;
  }

  /** This backend continues keyset cursors (plan.after). */
  readonly cursors = true;

  query(info: TypeInfo, plan: QueryPlan): QueryResult {
    const select = this.#select(info, plan);
    return this.#retry(() => {
      if (!select.keyed) {
        const statement = this.#statements.get(select.sql);
        const page = () => statement.pluck(true).all(...select.params) as string[];
        let rows: string[];
        let total: number;
        if (select.paged) {
          // A skip without a limit answers every match after it: the total is known unless the page is empty. One
          // read transaction: a count, when it runs, sees the page's snapshot.
          [rows, total] = this.#tx(() => {
            const r = page();
            return [r, r.length || !plan.skip ? plan.skip + r.length : this.#count(select)];
          }) as [string[], number];
        } else {
          rows = page();
          total = rows.length;
        }
        return { data: parseRows(rows, (r) => r), total, next: null };
      }
      type Row = { d: string; s: number; r: number; k: string | number | null; n?: number };
      let rows: Row[];
      let total: number;
      if (plan.after) {
        // A cursor carries the total counted when paging began: later pages are not counted again.
        rows = this.#statements.get(select.sql).pluck(false).all(...select.params) as Row[];
        total = plan.after.total;
      } else {
        const one = this.#onePass(info, select);
        // One read transaction: the page and the total come from the same snapshot.
        [rows, total] = this.#tx(() => {
          if (one) {
            const r = this.#statements.get(one.sql).pluck(false).all(...one.params) as Row[];
            // No row: no match at all, or the page is past the end (then counted on its own).
            return [r, r.length ? r[0]!.n! : plan.skip ? this.#count(select) : 0];
          }
          const r = this.#statements.get(select.sql).pluck(false).all(...select.params) as Row[];
          // A page that ends before the limit is the last one: every match is before its end, and no count runs.
          const last = r.length <= plan.limit && (r.length > 0 || plan.skip === 0);
          return [r, last ? plan.skip + r.length : this.#count(select)];
        }) as [Row[], number];
      }
      const more = rows.length > plan.limit;
      if (more) rows.pop();
      const last = rows[rows.length - 1];
      const data = parseRows(rows, (r) => r.d);
      return { data, total, next: more && last ? { rank: last.r, key: last.k, seq: last.s, total } : null };
    });
  }

  stream(info: TypeInfo, plan: QueryPlan): RowStream | null {
    if (plan.limit > 0 || plan.after) return null;
    const select = this.#select(info, plan);
    let total: number | null = null;
    if (select.paged) {
      // A skip: the rows and their total come from one read transaction, held until the stream closes.
      total = this.#retry(() => {
        this.#db.exec('BEGIN');
        try {
          return this.#count(select);
        } catch (e) {
          this.#db.exec('ROLLBACK');
          throw e;
        }
      });
    }
    let rows: IterableIterator<string>;
    try {
      rows = this.#statements.get(select.sql).pluck(true).iterate(...select.params) as IterableIterator<string>;
    } catch (e) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
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
          if (total !== null && this.#db.inTransaction) this.#db.exec('COMMIT');
        }
      },
    };
  }

  #count(select: CompiledSelect): number {
    return this.#statements.get(select.countSql).pluck(true).get(...select.countParams) as number;
  }

  /**
   * The page's statement and the count's, their parameters, and SQLite's plan of the page; `onePass` is the one
   * statement the store runs instead of both for this query (a limited first page, where it is faster), or null.
   */
  explain(info: TypeInfo, plan: QueryPlan): Explained & { onePass: OnePass | null } {
    const select = this.#select(info, plan);
    const rows = this.#db.prepare(`EXPLAIN QUERY PLAN ${select.sql}`).all(...select.params) as { detail: string }[];
    return { ...select, onePass: plan.after ? null : this.#onePass(info, select), plan: rows.map((r) => r.detail) };
  }

  /**
   * Inserts inside the caller's transaction, taking each document from `docs` as it goes (validated and stamped
   * then); collisions are collected, other errors thrown. `bulk` counts the inserts and may switch the type to the
   * bulk path (src/sqlite/bulk.ts).
   */
  #insertDocs(info: TypeInfo, docs: Iterable<StoredDoc>, bulk: BulkInserts): InsertResult {
    const table = this.#writeTable(info);
    const insertedIds: string[] = [];
    const errors: EnvelopeError[] = [];
    let index = 0;
    for (const doc of docs) {
      try {
        const { lastInsertRowid } = this.#run(insertDoc(sqlite, table, doc.id, JSON.stringify(doc)));
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

  /** Runs fn in one write transaction with a bulk-path state, rebuilding what it dropped before the commit. */
  #bulkWrite<T>(fn: (bulk: BulkInserts) => T, statements: number, j: { op: string; journal: Journal | undefined; counts: (r: T) => WriteCounts }): T {
    return this.#write(() => {
      const bulk = new BulkInserts(this.#db);
      try {
        const r = fn(bulk);
        bulk.finish();
        return r;
      } catch (e) {
        bulk.abort();
        throw e;
      }
    }, statements, j);
  }

  insert(info: TypeInfo, docs: Iterable<StoredDoc>, atomic: boolean, count = 2, journal?: Journal): InsertResult {
    try {
      return this.#bulkWrite(
        (bulk) => {
          const r = this.#insertDocs(info, docs, bulk);
          if (atomic && r.errors.length) throw new Rollback<InsertResult>({ insertedIds: [], errors: r.errors, rolledBack: true });
          return r;
        },
        count,
        { op: 'insert', journal, counts: (r) => ({ created: r.insertedIds.length, modified: 0, deleted: 0, errors: r.errors }) },
      );
    } catch (e) {
      if (e instanceof Rollback) return e.result as InsertResult;
      throw e;
    }
  }

  insertMany(parts: readonly { info: TypeInfo; docs: readonly StoredDoc[] }[], journal?: Journal): InsertResult[] {
    try {
      return this.#bulkWrite(
        (bulk) => {
          const results = parts.map((p) => this.#insertDocs(p.info, p.docs, bulk));
          if (results.some((r) => r.errors.length)) throw new Rollback(results.map((r) => ({ insertedIds: [], errors: r.errors, rolledBack: true })));
          return results;
        },
        2,
        { op: 'insert', journal, counts: (rs) => ({ created: rs.reduce((n, r) => n + r.insertedIds.length, 0), modified: 0, deleted: 0, errors: [] }) },
      );
    } catch (e) {
      if (e instanceof Rollback) return e.result as InsertResult[];
      throw e;
    }
  }

  replace(info: TypeInfo, docs: readonly StoredDoc[], stamp: (doc: StoredDoc, old?: StoredDoc) => StoredDoc | null, journal?: Journal): ReplaceResult {
    const table = this.#writeTable(info);
    const find = (id: string) => {
      const c = readDocs(sqlite, table, sql`id = ${bound(id)}`, false);
      return this.#statements.get(c.sql).pluck(false).get(...c.params) as { seq: number; doc: string } | undefined;
    };
    const soft = this.softDelete.has(info.name);
    return this.#write(() => {
      const insertedIds: string[] = [];
      let replaced = 0;
      let unchanged = 0;
      docs.forEach((d, index) => {
        const row = typeof d.id === 'string' ? find(d.id) : undefined;
        const old = row && (JSON.parse(row.doc) as StoredDoc);
        // A soft-deleted document is gone for replace too: its id is taken again by a new document, in its row.
        const revived = soft && old !== undefined && old.deletedAt !== undefined && old.deletedAt !== null;
        const doc = stamp(d, revived ? undefined : old);
        if (!doc) {
          unchanged++;
          return;
        }
        try {
          this.#run(row ? putDoc(sqlite, table, JSON.stringify(doc), row.seq) : insertDoc(sqlite, table, doc.id, JSON.stringify(doc)));
          if (row && !revived) replaced++;
          else insertedIds.push(doc.id as string);
        } catch (e) {
          if (!isDuplicate(e)) throw e;
          throw new RequestError(duplicateError(info, doc, index, collidingKey(this.#db, e)));
        }
      });
      return { insertedIds, replaced, unchanged };
    }, 2, { op: 'replace', journal, counts: (r) => ({ created: r.insertedIds.length, modified: r.replaced, deleted: 0, errors: [] }) });
  }

  update(info: TypeInfo, plan: QueryPlan, sets: readonly FieldSet[], stamps: Readonly<Record<string, unknown>>, journal?: Journal): number {
    const where = compileWhere(plan.conditions, info.name);
    const table = this.#writeTable(info);
    const bad = firstBadParent(sqlite, table, where, sets);
    const statement = updateSet(sqlite, table, where, sets, stamps);
    return this.#write(
      () => {
        if (bad) {
          const id = this.#statements.get(bad.sql).pluck(true).get(...bad.params);
          if (id !== undefined) throw requestError('VALIDATION', parentNotObject(id));
        }
        try {
          return this.#run(statement).changes;
        } catch (e) {
          if (!isDuplicate(e)) throw e;
          throw requestError('DUPLICATE_KEY', updateCollision(info, collidingKey(this.#db, e)));
        }
      },
      bad ? 2 : 1,
      { op: 'update', journal, counts: (n) => ({ created: 0, modified: n, deleted: 0, errors: [] }) },
    );
  }

  delete(info: TypeInfo, plan: QueryPlan, journal?: Journal): number {
    const statement = deleteWhere(sqlite, this.#writeTable(info), compileWhere(plan.conditions, info.name));
    return this.#write(() => this.#run(statement).changes, 1, {
      op: 'delete',
      journal,
      counts: (n) => ({ created: 0, modified: 0, deleted: n, errors: [] }),
    });
  }

  /**
   * One write transaction held open across awaits (BEGIN IMMEDIATE now, COMMIT or ROLLBACK later). The façade lets
   * no other request of this store run meanwhile: on one connection it would join the transaction.
   */
  bulk(): BulkWriter {
    const alone = this.#alone();
    try {
      this.#retry(() => this.#db.exec('BEGIN IMMEDIATE'));
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
        this.#commits++;
      } finally {
        if (alone) this.#backToWal();
      }
    };
    return {
      insert: (info, docs) => refused(() => this.#insertDocs(info, docs, bulk)),
      // 200k Wells in one atomic load: 14-16 s in batches of 5,000, 10.6 s written 200 at a time.
      chunk: 256,
      commit: () => refused(() => end(true)),
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

  /** Write transactions this connection committed: PRAGMA data_version changes only for other connections' commits. */
  #commits = 0;
  /** The feed's committed head while a bulk transaction is open: the connection reads its own uncommitted events. */
  #heldHead: number | undefined;

  /** The change feed (journal.ts writes it): events read by seq, polled cheaply through data_version. */
  readonly feed: ChangeFeed = {
    enabled: () => this.#statements.get(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck(true).get(CHANGES_TABLE) !== undefined,
    read: (after, limit, type, plan) => {
      const where = type && plan?.conditions.length ? compileWhere(plan.conditions, type.name, false) : null;
      const c = feedRead(sqlite, ident(CHANGES_TABLE), after, limit, type?.name ?? null, where);
      const rows = this.#statements.get(c.sql).pluck(false).all(...c.params) as { seq: number; type: string; op: ChangeEvent['op']; id: string; doc: string; activity: string | null; at: string }[];
      return rows.map((r) => ({ seq: r.seq, type: r.type, op: r.op, id: r.id, doc: JSON.parse(r.doc) as StoredDoc, activityId: r.activity, at: r.at }));
    },
    bounds: () => {
      const r = this.#statements.get(feedBounds(ident(CHANGES_TABLE))).pluck(false).get() as { first: number | null; last: number | null };
      // With no event kept, the next seq follows the last one ever given (sqlite_sequence survives pruning).
      if (r.last === null) {
        const given = (this.#statements.get(`SELECT seq FROM sqlite_sequence WHERE name = ?`).pluck(true).get(CHANGES_TABLE) as number | undefined) ?? 0;
        return { first: given + 1, last: given };
      }
      return { first: r.first!, last: r.last };
    },
    version: () => `${this.#db.pragma('data_version', { simple: true }) as number}.${this.#commits}`,
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
    const db = openDatabase(snapshot, this.#settings.busyTimeoutMs, this.#settings.mmapSize);
    this.#db.close();
    this.#db = db;
    this.#statements = new StatementCache(db);
    this.#tx = db.transaction((fn: () => unknown) => fn());
    this.#journals = journals(db);
    this.cursorKey = cursorKey(db, this.#settings.idSeed);
  }

  close(): void {
    this.#db.close();
  }
}
