/**
 * The backend of every SQL engine, written once over a small driver per engine (run a statement, read rows, open and
 * end a transaction, classify the engine's errors). An operation is a generator whose steps yield driver calls: a
 * synchronous runner answers SQLite's (no promise or microtask per request), an async one PostgreSQL's, so each rule
 * (the retry policy, the journal's context and ActivityLog, replaces, deletes, updates, the feed's reads) exists once.
 */
import type { TypeInfo } from '../catalogue/index.js';
import { requestError, RequestError } from '../envelope.js';
import type { QueryPlan } from '../query/ast.js';
import type { SummaryPlan } from '../query/aggregate.js';
import {
  andThen,
  duplicateError,
  orCatch,
  parentNotObject,
  SoftDeleteOn,
  Steer,
  updateCollision,
  type Backend,
  type Capabilities,
  type ChangeEvent,
  type Explained,
  type FieldSet,
  type InsertResult,
  type Journal,
  type MaybePromise,
  type QueryResult,
  type ReplaceResult,
  type StoredDoc,
  type SummaryAnswer,
  type WriteCounts,
} from '../backend.js';
import { compileSummary, type SummaryHooks } from './aggregate.js';
import type { Select } from './compile.js';
import type { Dialect } from './dialect.js';
import { render, type Compiled, type Sql } from './fragment.js';
import { context, deleteWhere, feedBounds, feedRead, firstBadParent, ids, insertArray, insertDoc, metaValue, notSoft, putArray, putDoc, readDocs, updateSet, type WriteTable } from './write.js';

/** How often a request may ask the database which types delete softly (see SqlBackend.softDelete). */
export const SOFT_DELETE_RECHECK_MS = 1000;

/** An operation: its steps yield what driver calls answer (a value, or a promise of one), and take it back. */
export type Op<T> = Generator<unknown, T, unknown>;

/**
 * A driver call's answer, inside an operation.
 * @example const rows = yield* call(driver.all(s, statement));
 */
export function* call<T>(answer: MaybePromise<T>): Generator<MaybePromise<T>, T, unknown> {
  return (yield answer) as T;
}

/**
 * Runs an operation whose driver answers synchronously: each step's answer goes straight back in.
 * @example runSync(op) // the operation's value, or its error thrown
 */
export function runSync<T>(op: Op<T>): T {
  let step = op.next();
  while (!step.done) step = op.next(step.value);
  return step.value;
}

/**
 * Runs an operation whose driver answers with promises: each is awaited, its failure thrown into the operation.
 * @example await runAsync(op)
 */
export async function runAsync<T>(op: Op<T>): Promise<T> {
  let step = op.next();
  while (!step.done) {
    let value: unknown;
    try {
      value = await step.value;
    } catch (e) {
      step = op.throw(e);
      continue;
    }
    step = op.next(value);
  }
  return step.value;
}

/** What a retry does with an engine error: run the request again now, again after a lock wait, or not at all. */
export type Retry = 'again' | 'locked' | null;

/** One engine's connection: statements, transactions and what its errors mean. `S` is a session (a pool's client). */
export interface Driver<S> {
  /** Runs `fn` on a session of its own (PostgreSQL: a client of the pool, given back after). */
  client<T>(fn: (s: S) => MaybePromise<T>): MaybePromise<T>;
  /** Runs an operation with the driver's runner (runSync or runAsync). */
  run<T>(op: Op<T>): MaybePromise<T>;
  /** The rows of a statement, each an array of its columns. */
  all(s: S, c: Compiled | string): MaybePromise<unknown[][]>;
  /** Rows a write statement changed. */
  changes(s: S, c: Compiled): MaybePromise<number>;
  /** Opens a transaction; `prelude`, statements every such transaction starts with, run first. */
  begin(s: S, kind: 'read' | 'write', prelude: readonly (Compiled | string)[]): MaybePromise<void>;
  commit(s: S): MaybePromise<void>;
  /** Ends a transaction that failed (a no-op where the engine already rolled it back). */
  rollback(s: S): MaybePromise<void>;
  /** Whether an engine error is run again: a lock wait that timed out, a deadlock or a serialization failure. */
  retry(e: unknown): Retry;
  /** Attempts of a request in all (the first included). */
  readonly attempts: number;
  /** The answer to a request still locked out after every attempt. */
  locked(): RequestError;
  /** The request error an engine error means (a full disk, a lost connection), if it means one. */
  refusal(e: unknown): RequestError | undefined;
  /** The fields of the unique key a unique violation collided on, or null for any other error. */
  uniqueKey(s: S, e: unknown): MaybePromise<readonly string[] | null>;
  /** True when a write of one statement runs alone, outside a transaction (PostgreSQL: once lock_timeout is set at connect). */
  readonly alone: boolean;
}

/** Thrown inside a transaction to roll it back while keeping what the caller answers. */
export class Rollback<T> extends Error {
  constructor(readonly result: T) {
    super('rollback');
  }
}

/** A replace whose batched statements collided: run again one document at a time, to name the one that collides. */
class OneByOne extends Steer {}

/** A replace that met an id another request created meanwhile: run again whole, it is now an existing document. */
class IdRace extends Steer {}

/** One document of a replace as it is written: inserted, or rewriting the stored document of its id. */
interface Put {
  readonly kind: 'insert' | 'update';
  readonly doc: StoredDoc;
  readonly index: number;
  /** A rewrite that changes no field of a unique key: it cannot collide, and goes in one statement with others. */
  readonly safe: boolean;
  /** A soft-deleted document taken again by a new one, in its row: counted as inserted. */
  readonly revived: boolean;
  /** The stored row's seq of a rewrite (none for a document this request inserted). */
  readonly seq: bigint | undefined;
}

/** A write's journal as its transaction runs it: the operation, the request's journal, what to count for its log. */
export interface WriteSpec<T> {
  readonly op: string;
  readonly journal: Journal | undefined;
  readonly counts: (r: T) => WriteCounts;
}

/** The matches a write rewrites: a WHERE clause, or null when none matches. */
export type Matches = Sql | string | null;

/** How a page's rows become its documents: `value` takes a row's document (its JSON text, or a key to it). */
export type Materialize<D = StoredDoc> = <R>(info: TypeInfo, rows: readonly R[], value: (row: R) => unknown) => D[];

/** A page as `query` answers it, each document as `materialize` makes it. */
export type Page<D> = Omit<QueryResult, 'data'> & { data: D[] };

/** A page's rows as read (a limited page's at `PageColumns`, one past the limit); `total` when the statement counted it. */
export interface PageRows {
  readonly rows: unknown[];
  readonly total?: number | undefined;
}

/** Where a limited page's row holds its document, seq, sort rank and key. */
export type PageColumns = readonly [doc: number, seq: number, rank: number, key: number];

/** What an engine's operations answer: a value where its driver answers synchronously (`A` true), else a promise. */
export type Answer<A extends boolean, T> = A extends true ? T : Promise<T>;

const itself = (row: unknown): unknown => row;
const whole = <D>(info: TypeInfo, read: PageRows, materialize: Materialize<D>): Page<D> => ({ data: materialize(info, read.rows, itself), total: read.rows.length, next: null });

/**
 * The operations every SQL engine shares; an engine's backend extends it with its driver, dialect and strategies.
 * Adding a read is one compiler function (src/sql/) and one method here, run through `exec`.
 */
export abstract class SqlBackend<S, A extends boolean> implements Pick<Backend, 'capabilities' | 'query' | 'summarize' | 'explain' | 'replace' | 'update' | 'delete'> {
  abstract readonly capabilities: Capabilities;
  protected abstract readonly dialect: Dialect;
  protected abstract get driver(): Driver<S>;
  /** True when the database has journal triggers (history or the change feed), whoever turned them on. */
  protected journals = false;
  /** Write transactions this connection committed: the feed's version changes with them. */
  protected commits = 0;
  /** Asked before each write request commits (OpenOptions.beforeCommit): false rolls it back. */
  readonly #beforeCommit: (() => boolean) | undefined;

  constructor(settings: { readonly beforeCommit: (() => boolean) | undefined }) {
    this.#beforeCommit = settings.beforeCommit;
  }

  /** True when the journal's triggers run on other servers too (Citus' workers): its context must reach them. */
  protected get distributed(): boolean {
    return false;
  }

  /** The table of a type, as writes name it. */
  protected abstract table(type: string): WriteTable;
  /** The quoted table of the change feed. */
  protected abstract readonly changesTable: string;
  /** The WHERE clause of a plan's conditions, or null when the engine must find the matches in steps (`matches`). */
  protected abstract where(info: TypeInfo, plan: Pick<QueryPlan, 'conditions'>): Sql | string | null;
  /** The WHERE clause of a plan's conditions on the change feed's rows. */
  protected abstract feedWhere(type: TypeInfo, plan: QueryPlan): Sql | string;

  /** Matches an engine finds in steps (PostgreSQL's polygons), locked for the write when `lock`; see `where`. */
  protected *matches(_s: S, _info: TypeInfo, _plan: Pick<QueryPlan, 'conditions'>, _lock: boolean): Op<Matches> {
    throw new TypeError('matches: this engine compiles every plan to one WHERE clause');
  }

  /** True when the engine finds a plan's matches in steps (`matches`, then `where` is null): checked without compiling. */
  protected stepped(_plan: Pick<QueryPlan, 'conditions'>): boolean {
    return false;
  }

  /** A request: an operation on a session of its own, run again as `retried` says. */
  protected exec<T>(op: (s: S) => Op<T>): Answer<A, T> {
    return this.request((s) => this.driver.run(op(s)));
  }

  /** A request of one step, without an operation's generator (the page no limit or skip cuts: the hot path). */
  protected request<T>(fn: (s: S) => MaybePromise<T>): Answer<A, T> {
    return this.driver.run(this.retried(() => this.driver.client(fn))) as Answer<A, T>;
  }

  /** `attempt` run again whole while the driver says so (it wrote nothing), up to `attempts` times; then `locked()`, or the request error meant. */
  protected *retried<T>(attempt: () => MaybePromise<T>, locked?: () => Error): Op<T> {
    const d = this.driver;
    for (let n = 1; ; n++) {
      try {
        return (yield attempt()) as T;
      } catch (e) {
        const retry = d.retry(e);
        if (retry && n < d.attempts) continue;
        if (retry === 'locked') throw locked ? locked() : d.locked();
        throw d.refusal(e) ?? e;
      }
    }
  }

  /** `body` in one transaction of its session, rolled back when it throws. */
  protected *transaction<T>(s: S, kind: 'read' | 'write', body: Op<T>, prelude: readonly (Compiled | string)[] = []): Op<T> {
    const d = this.driver;
    yield* call(d.begin(s, kind, prelude));
    try {
      const r = yield* body;
      if (kind === 'write' && this.#beforeCommit && !this.#beforeCommit()) throw requestError('TIMEOUT', 'the write was cancelled before it committed; nothing was written');
      yield* call(d.commit(s));
      if (kind === 'write') this.commits++;
      return r;
    } catch (e) {
      yield* call(d.rollback(s));
      throw e;
    }
  }

  /** True when a write must be a transaction for its journal: a context for the triggers, or an ActivityLog to write. */
  protected journaled(w: WriteSpec<never>): boolean {
    const journal = w.journal;
    return !!journal && (!!journal.log || (this.journals && (journal.op ?? w.op) !== 'insert'));
  }

  /**
   * A write of `statements` statements, run as one request: alone when it is one statement and nothing is journaled,
   * else one transaction that sets the request's context first where the database journals (its triggers read it),
   * and writes the request's ActivityLog document last, from what the write did.
   */
  protected write<T>(w: WriteSpec<T>, statements: number, body: (s: S) => Op<T>, prelude: readonly (Compiled | string)[] = []): MaybePromise<T> {
    const journal = w.journal;
    const op = journal?.op ?? w.op;
    const ctx = journal && this.journals && op !== 'insert' ? context(this.dialect, { op, activity: journal.activityId, at: journal.at, ms: Date.parse(journal.at), by: journal.userId }, this.distributed) : null;
    const log = journal?.log;
    // A single statement is atomic on its own: BEGIN/COMMIT around it would only add round trips (unless asked to commit).
    if (statements === 1 && !ctx && !log && !prelude.length && this.driver.alone && !this.#beforeCommit) return this.exec((s) => this.#alone(s, body));
    // Before any savepoint the write takes: rolling back to one would undo it.
    return this.exec((s) => this.transaction(s, 'write', this.#journaled(s, w, body, ctx?.clear ?? null, log), ctx ? [ctx.set, ...prelude] : prelude));
  }

  // Operations are generator methods, never generator expressions made per request: each of those makes a
  // function and its prototype, measured at ~2 µs a request, where a method's generator costs ~50 ns.

  *#alone<T>(s: S, body: (s: S) => Op<T>): Op<T> {
    const r = yield* body(s);
    this.commits++;
    return r;
  }

  /** The write, then the context cleared and the request's ActivityLog document written, from what it did. */
  *#journaled<T>(s: S, w: WriteSpec<T>, body: (s: S) => Op<T>, clear: Compiled | null, log: Journal['log']): Op<T> {
    const d = this.driver;
    const r = yield* body(s);
    if (clear) yield d.changes(s, clear);
    if (log) {
      const c = w.counts(r);
      // A soft delete is an update of the rows, and what it did is deleting them.
      const doc = log(w.journal?.op === 'delete' && c.modified ? { ...c, deleted: c.modified, modified: 0 } : c);
      yield d.changes(s, insertDoc(this.dialect, this.table('ActivityLog'), doc.id, JSON.stringify(doc)));
    }
    return r;
  }

  /** A write's matches: the plan's WHERE clause, or those the engine finds in steps (then one more statement). */
  *#matches(s: S, info: TypeInfo, plan: QueryPlan, where: Sql | string | null): Op<Matches> {
    // Not `??`: the CommonJS build rewrites it into an arrow function, where `yield` cannot stand.
    if (where !== null) return where;
    return yield* this.matches(s, info, plan, true);
  }

  /** A RequestError DUPLICATE_KEY for an update that collided, or the error as it was. */
  protected *collision(s: S, info: TypeInfo, e: unknown): Op<unknown> {
    const key = yield* call(this.driver.uniqueKey(s, e));
    return key ? requestError('DUPLICATE_KEY', updateCollision(info, key)) : e;
  }

  // ---- reads -----------------------------------------------------------------------------------------------

  /** The statements of a plan's page and count over `where`, or over the plan's own conditions when it is null. */
  protected abstract select(info: TypeInfo, plan: QueryPlan, where: Sql | string | null): Select;
  /** A page's rows; `counting` when no cursor carries the total, so the statement may count it. */
  protected abstract pageRows(s: S, info: TypeInfo, plan: QueryPlan, select: Select, counting: boolean): MaybePromise<PageRows>;
  protected abstract readonly pageColumns: PageColumns;
  /** True when the page statement counts its matches itself: no count follows it, so it needs no snapshot of its own. */
  protected readonly pageCounts: boolean = false;
  protected abstract readonly parse: Materialize;
  protected abstract readonly summaryHooks: SummaryHooks;
  /** The engine's plan of a statement, one line a step. */
  protected abstract explainText(s: S, select: Select): MaybePromise<string[]>;

  /** A page's cursor key as the next page binds it, from the key the page statement answered. */
  protected keyOf(_rank: number, key: unknown, _plan: QueryPlan): string | number | null {
    return key as string | number | null;
  }

  /** `body` in one read snapshot, for a page and the count that follows it. */
  protected oneSnapshot<T>(s: S, body: Op<T>): Op<T> {
    return this.transaction(s, 'read', body);
  }

  /** A read over a plan's matches: those found in steps (`stepped`) first, then `body` over them in one snapshot; else `body` over null. */
  protected read<T>(info: TypeInfo, plan: Pick<QueryPlan, 'conditions'>, body: (s: S, where: Sql | string | null) => Op<T>): Answer<A, T> {
    if (!this.stepped(plan)) return this.exec((s) => body(s, null));
    return this.exec((s) => this.transaction(s, 'read', this.#stepped(s, info, plan, body)));
  }

  *#stepped<T>(s: S, info: TypeInfo, plan: Pick<QueryPlan, 'conditions'>, body: (s: S, where: Sql | string | null) => Op<T>): Op<T> {
    // No match: a clause matching nothing still answers the page's (or the summary's) empty answer.
    const where = yield* this.matches(s, info, plan, false);
    return yield* body(s, where === null ? this.dialect.false : where);
  }

  query(info: TypeInfo, plan: QueryPlan): Answer<A, QueryResult> {
    if (this.stepped(plan)) return this.read(info, plan, (s, where) => this.page(s, info, plan, this.select(info, plan, where), this.parse));
    return this.answerPage(info, plan, this.select(info, plan, null), this.parse);
  }

  /** A page as a request of its own: one no limit or skip cuts holds every match, one step (no count, no snapshot). */
  protected answerPage<D>(info: TypeInfo, plan: QueryPlan, select: Select, materialize: Materialize<D>): Answer<A, Page<D>> {
    if (select.paged) return this.exec((s) => this.page(s, info, plan, select, materialize));
    return this.request((s) => {
      const read = this.pageRows(s, info, plan, select, false);
      return read instanceof Promise ? read.then((r) => whole(info, r, materialize)) : whole(info, read, materialize);
    });
  }

  /** A plan's page and total: the total a cursor carries (or a grown k-nearest search) is not counted again, else in the page's snapshot. */
  protected page<D>(s: S, info: TypeInfo, plan: QueryPlan, select: Select, materialize: Materialize<D>): Op<Page<D>> {
    const carried = select.keyed ? (plan.after?.total ?? plan.counted) : undefined;
    const op = this.#page(s, info, plan, select, materialize, carried);
    return carried === undefined && select.paged && !this.pageCounts ? this.oneSnapshot(s, op) : op;
  }

  *#page<D>(s: S, info: TypeInfo, plan: QueryPlan, select: Select, materialize: Materialize<D>, carried: number | undefined): Op<Page<D>> {
    const read = (yield this.pageRows(s, info, plan, select, carried === undefined)) as PageRows;
    const rows = read.rows;
    const n = rows.length;
    let total = carried ?? read.total;
    if (total === undefined) {
      // A page that ends before the limit is the last one: every match is before its end, and no count runs. Not so
      // for a k-nearest page's neighbourhood (plan.reach): matches lie beyond it; nor for an empty page after a skip.
      const last = (!select.keyed || (plan.reach === undefined && n <= plan.limit)) && (n > 0 || plan.skip === 0);
      total = last ? plan.skip + n : Number(((yield this.driver.all(s, { sql: select.countSql, params: select.countParams })) as unknown[][])[0]![0]);
    }
    if (!select.keyed) return { data: materialize(info, rows, itself), total, next: null };
    const [doc, seq, rank, key] = this.pageColumns;
    const more = n > plan.limit;
    if (more) rows.pop();
    const last = rows[rows.length - 1] as unknown[] | undefined;
    const data = materialize(info, rows as unknown[][], (r) => r[doc]);
    if (!more || !last) return { data, total, next: null };
    return { data, total, next: { rank: last[rank] as number, key: this.keyOf(last[rank] as number, last[key], plan), seq: Number(last[seq]), total } };
  }

  /** A summary (aggregate, count or distinct) of a plan's matches, in one statement over them. */
  summarize(info: TypeInfo, plan: SummaryPlan): Answer<A, SummaryAnswer> {
    return this.read(info, plan, (s, where) => this.#summarize(s, info, plan, where));
  }

  *#summarize(s: S, info: TypeInfo, plan: SummaryPlan, where: Sql | string | null): Op<SummaryAnswer> {
    const summary = compileSummary(this.dialect, this.summaryHooks, plan, this.table(info.name).name, where ?? this.where(info, plan)!);
    return summary.answer(yield* call(this.driver.all(s, render(summary.sql, this.dialect))));
  }

  /** The statements a query runs and the engine's plan of its page (with matches found in steps: of their candidates). */
  explain(info: TypeInfo, plan: QueryPlan): Answer<A, Explained> {
    const select = this.select(info, plan, null);
    return this.request((s) => andThen(this.explainText(s, select), (lines) => ({ ...this.explained(info, plan, select), plan: lines })));
  }

  /** What `explain` answers of a select besides the engine's plan of it. */
  protected explained(_info: TypeInfo, _plan: QueryPlan, select: Select): Omit<Explained, 'plan'> {
    return { sql: select.sql, params: select.params, countSql: select.countSql, countParams: select.countParams, paged: select.paged };
  }

  // ---- writes ----------------------------------------------------------------------------------------------

  /**
   * Removes the matches. A delete (not a purge) removes nothing if the database names the type's deletes soft by now
   * (another process turned soft delete on): its statement says so itself, and when it removed nothing the list is
   * read, to throw SoftDeleteOn when that is why; the caller then stamps instead.
   */
  delete(info: TypeInfo, plan: QueryPlan, journal?: Journal): MaybePromise<number> {
    const where = this.where(info, plan);
    const w: WriteSpec<number> = { op: 'delete', journal, counts: (n) => ({ created: 0, modified: 0, deleted: n, errors: [] }) };
    const ask = journal?.op !== 'purge';
    return this.write(w, where === null ? 2 : 1, (s) => this.#delete(s, info, plan, where, ask), ask ? this.schemaHeld : []);
  }

  *#delete(s: S, info: TypeInfo, plan: QueryPlan, where: Sql | string | null, ask: boolean): Op<number> {
    const matches = yield* this.#matches(s, info, plan, where);
    if (matches === null) return 0;
    const statement = deleteWhere(this.dialect, this.table(info.name), matches, ask ? notSoft(this.dialect, this.metaTable, info.name) : null);
    const removed = (yield* call(this.driver.changes(s, statement))) as number;
    if (removed === 0 && ask) {
      const kept = yield* this.#keptSoft(s);
      if (kept.includes(info.name)) {
        this.keepSoft(kept);
        throw new SoftDeleteOn(info.name);
      }
    }
    return removed;
  }

  /**
   * Sets fields and stamps on every match in one statement, after checking no match has a non-object where a dotted
   * path needs an object; an engine that keeps documents' exact text rewrites dotted paths itself (`rewrite`).
   */
  update(info: TypeInfo, plan: QueryPlan, sets: readonly FieldSet[], stamps: Readonly<Record<string, unknown>>, journal?: Journal): MaybePromise<number> {
    const w: WriteSpec<number> = { op: 'update', journal, counts: (n) => ({ created: 0, modified: n, deleted: 0, errors: [] }) };
    this.checkSets(info, sets);
    const where = this.where(info, plan);
    if (!this.setsInSql(info, sets)) return this.write(w, 2, (s) => this.rewrite(s, info, plan, sets, stamps, where));
    const table = this.table(info.name);
    const bad = where === null ? null : firstBadParent(this.dialect, table, where, sets);
    return this.write(w, (bad ? 1 : 0) + (where === null ? 2 : 1), (s) => this.#update(s, info, plan, where, bad, table, sets, stamps));
  }

  *#update(s: S, info: TypeInfo, plan: QueryPlan, where: Sql | string | null, bad: Compiled | null, table: WriteTable, sets: readonly FieldSet[], stamps: Readonly<Record<string, unknown>>): Op<number> {
    const matches = yield* this.#matches(s, info, plan, where);
    if (matches === null) return 0;
    if (bad) {
      const [row] = yield* call(this.driver.all(s, bad));
      if (row) throw requestError('VALIDATION', parentNotObject(row[0]));
    }
    try {
      return yield* call(this.driver.changes(s, updateSet(this.dialect, table, matches, sets, stamps)));
    } catch (e) {
      throw yield* this.collision(s, info, e);
    }
  }

  /**
   * Replaces documents in order, all or nothing: each one replaces the stored document of its id (which keeps its
   * createdAt/createdBy and its seq) or is inserted. Consecutive inserts go in one statement (rows are checked in
   * order, as one by one); consecutive replacements that change no unique field cannot collide and go in one
   * statement; any other replacement is its own statement. A collision in a statement of several documents runs the
   * request again one document at a time, to name the document that collides.
   */
  replace(info: TypeInfo, docs: readonly StoredDoc[], stamp: (doc: StoredDoc, old?: StoredDoc) => StoredDoc | null, journal?: Journal): MaybePromise<ReplaceResult> {
    const w: WriteSpec<ReplaceResult> = { op: 'replace', journal, counts: (r) => ({ created: r.insertedIds.length, modified: r.replaced, deleted: 0, errors: [] }) };
    // A replace revives a soft-deleted document's id (see #replaceIn): soft delete another process turned on counts.
    this.askSoft();
    return this.#replace(info, docs, stamp, w, false, 1);
  }

  /** One attempt of a replace, run again one by one after a collision in a batch, or whole after an IdRace. */
  #replace(info: TypeInfo, docs: readonly StoredDoc[], stamp: (doc: StoredDoc, old?: StoredDoc) => StoredDoc | null, w: WriteSpec<ReplaceResult>, oneByOne: boolean, attempt: number): MaybePromise<ReplaceResult> {
    const again = (e: unknown): MaybePromise<ReplaceResult> => {
      if (e instanceof OneByOne && !oneByOne) return this.#replace(info, docs, stamp, w, true, attempt + 1);
      if (e instanceof IdRace && attempt < this.driver.attempts) return this.#replace(info, docs, stamp, w, oneByOne, attempt + 1);
      throw e;
    };
    return orCatch(() => this.write(w, 2, (s) => this.#replaceIn(s, info, docs, stamp, oneByOne)), again);
  }

  *#replaceIn(s: S, info: TypeInfo, docs: readonly StoredDoc[], stamp: (doc: StoredDoc, old?: StoredDoc) => StoredDoc | null, oneByOne: boolean): Op<ReplaceResult> {
    const d = this.driver;
    const table = this.table(info.name);
    const named = docs.map((doc) => doc.id).filter((id): id is string => typeof id === 'string');
    const stored = new Map<string, StoredDoc>();
    const seqs = new Map<string, bigint>();
    if (named.length) {
      const rows = (yield* call(d.all(s, this.readLocked(table, ids(this.dialect, named))))) as [number | string, string, string][];
      for (const [seq, id, text] of rows) {
        stored.set(id, JSON.parse(text) as StoredDoc);
        seqs.set(id, BigInt(seq));
      }
    }
    const unique = this.uniqueFields(info);
    const soft = this.softNow(info.name);
    const puts: Put[] = [];
    let unchanged = 0;
    for (const [index, given] of docs.entries()) {
      const prior = typeof given.id === 'string' ? stored.get(given.id) : undefined;
      // A soft-deleted document is gone for replace too: its id is taken again by a new document, in its row.
      const revived = soft && prior !== undefined && prior.deletedAt !== undefined && prior.deletedAt !== null;
      // Stamped as a copy: a request run again (one by one, after a race, after a lock wait) starts from what was given.
      const doc = stamp({ ...given }, revived ? undefined : prior);
      if (!doc) {
        unchanged++;
        continue;
      }
      if (prior) this.keepShard(info, prior, doc, index);
      const safe = !!prior && !revived && unique.every((f) => JSON.stringify(prior[f] ?? null) === JSON.stringify(doc[f] ?? null));
      puts.push({ kind: prior ? 'update' : 'insert', doc, index, safe, revived, seq: prior ? seqs.get(doc.id as string) : undefined });
      stored.set(doc.id as string, doc);
    }
    const insertedIds = puts.filter((p) => p.kind === 'insert' || p.revived).map((p) => p.doc.id as string);
    // Runs of statements, in document order. Rewrites join a run only in the order of their rows: an engine may rewrite
    // a statement's rows in either order (the array's or the table's), and both are then the request's, so the
    // journal's events and every unique check come as one by one would have them.
    const runs: Put[][] = [];
    for (const put of puts) {
      const run = runs[runs.length - 1];
      const last = run?.[run.length - 1];
      const joins =
        !oneByOne &&
        last !== undefined &&
        last.kind === put.kind &&
        (put.kind === 'insert' || (put.safe && last.safe && last.seq !== undefined && put.seq !== undefined && last.seq < put.seq));
      if (joins) run!.push(put);
      else runs.push([put]);
    }
    for (const run of runs) {
      try {
        yield* call(d.changes(s, this.#put(table, run)));
      } catch (e) {
        const fields = yield* call(d.uniqueKey(s, e));
        if (!fields) throw e;
        if (run.length > 1) throw new OneByOne();
        const put = run[0]!;
        // An id the caller gave, not stored when read, was inserted meanwhile by another request: run again, it now
        // replaces. A generated id that is taken (a seeded generator) is the caller's duplicate.
        if (put.kind === 'insert' && fields.length === 1 && fields[0] === 'id' && typeof docs[put.index]!.id === 'string') throw new IdRace();
        throw new RequestError(duplicateError(info, put.doc, put.index, fields));
      }
    }
    return { insertedIds, replaced: puts.length - insertedIds.length, unchanged };
  }

  /** The statement of a run: one document's own (no JSON array to take apart), or the run's array. */
  #put(table: WriteTable, run: readonly Put[]): Compiled {
    const insert = run[0]!.kind === 'insert';
    if (run.length === 1) {
      const doc = run[0]!.doc;
      return insert ? insertDoc(this.dialect, table, doc.id, JSON.stringify(doc)) : putDoc(this.dialect, table, doc.id, JSON.stringify(doc));
    }
    const json = `[${run.map((p) => JSON.stringify(p.doc)).join(',')}]`;
    return insert ? insertArray(this.dialect, table, json, false) : putArray(this.dialect, table, json);
  }

  // ---- soft delete ---------------------------------------------------------------------------------------

  /** The quoted table of the database's own facts (key, value), where it names the types whose deletes are soft. */
  protected abstract readonly metaTable: string;
  /**
   * What a hard delete's transaction starts with so that no schema change (soft delete turned on) commits after its
   * statement read the list: PostgreSQL takes a statement's snapshot before it waits for a lock. None where a write
   * excludes schema changes already (SQLite: one writer, and a stale snapshot cannot write).
   */
  protected readonly schemaHeld: readonly string[] = [];
  #soft: ReadonlySet<string> = new Set();
  #softAsked = performance.now();

  /**
   * Types whose deletes are soft (their documents keep their rows, marked deleted), as the database says: another
   * process may turn soft delete on for a type (never off) while this store is open. Read at open; by every hard
   * delete's own statement (one that finds its type soft by then removes nothing and throws SoftDeleteOn); and,
   * asked here by a request, at most once a SOFT_DELETE_RECHECK_MS (on PostgreSQL the answer serves the requests after).
   */
  get softDelete(): ReadonlySet<string> {
    this.askSoft();
    return this.#soft;
  }

  /** Asks the database again which types delete softly, when SOFT_DELETE_RECHECK_MS have passed since it last did. */
  protected askSoft(): void {
    const now = performance.now();
    if (now - this.#softAsked < SOFT_DELETE_RECHECK_MS) return;
    this.#softAsked = now;
    try {
      // One attempt, no retry on a lock: the request that asked meets any failure itself, and answers it.
      const kept = this.driver.client((s) => this.driver.run(this.#keptSoft(s)));
      if (kept instanceof Promise) kept.then((t) => this.keepSoft(t)).catch(() => undefined);
      else this.keepSoft(kept);
    } catch {
      // As above.
    }
  }

  /** Adds types whose deletes are soft (at open: the options' and the database's; later: what the database says). */
  protected keepSoft(types: Iterable<string>): void {
    const more = [...types].filter((t) => !this.#soft.has(t));
    if (more.length) this.#soft = new Set([...this.#soft, ...more]);
  }

  /** Takes a database's list as it is, dropping what this store knew before (a restored snapshot brings its own). */
  protected takeSoft(types: Iterable<string>): void {
    this.#soft = new Set(types);
  }

  /** Whether a type's deletes are soft, as this store last knew (no asking: inside a request's own steps). */
  protected softNow(type: string): boolean {
    return this.#soft.has(type);
  }

  /** The types the database names soft now (a list that is not one of names counts as none). */
  *#keptSoft(s: S): Op<string[]> {
    const rows = (yield* call(this.driver.all(s, metaValue(this.metaTable, 'softDelete')))) as [string][];
    const kept: unknown = rows.length ? JSON.parse(rows[0]![0]) : [];
    return Array.isArray(kept) ? kept.filter((t): t is string => typeof t === 'string') : [];
  }

  /** The stored documents of the rows matching `where`, as rows (seq, id, JSON text), locked for the write that follows. */
  protected readLocked(t: WriteTable, where: Sql | string): Compiled {
    return readDocs(this.dialect, t, where, true);
  }

  /** The fields besides `id` some unique index of a type's table covers: a replacement that changes none cannot collide. */
  protected abstract uniqueFields(info: TypeInfo): readonly string[];

  /** Refuses a write that changes what the engine cannot change in place (Citus' distribution key): a VALIDATION RequestError. */
  protected keepShard(_info: TypeInfo, _before: StoredDoc, _after: StoredDoc, _index?: number): void {}

  /** Refuses values the engine cannot store, before anything is written (a VALIDATION RequestError). */
  protected checkSets(_info: TypeInfo, _sets: readonly FieldSet[]): void {}

  /** True when the dialect sets these fields in SQL (`Storage.setFields`); else `rewrite` does. */
  protected setsInSql(_info: TypeInfo, _sets: readonly FieldSet[]): boolean {
    return true;
  }

  /** An update the engine writes itself (see `setsInSql`), in the write's transaction: the count of matches. */
  protected *rewrite(_s: S, _info: TypeInfo, _plan: QueryPlan, _sets: readonly FieldSet[], _stamps: Readonly<Record<string, unknown>>, _where: Sql | string | null): Op<number> {
    throw new TypeError('rewrite: this engine sets every path in SQL');
  }

  /**
   * Inserts of one write (several parts: insertMany); the body calls `settle` on what it inserted, which rolls the
   * transaction back when the request is atomic and something collided, answering the collisions with nothing written.
   */
  protected inserts<T extends InsertResult | InsertResult[]>(w: WriteSpec<T>, statements: number, body: (s: S) => Op<T>, prelude: readonly (Compiled | string)[] = []): MaybePromise<T> {
    return orCatch(
      () => this.write(w, statements, body, prelude),
      (e): T => {
        if (e instanceof Rollback) return e.result as T;
        throw e;
      },
    );
  }

  /** What parts inserted, or (atomic, and something collided) a Rollback of the write carrying the collisions. */
  protected settle<T extends InsertResult | InsertResult[]>(r: T, atomic: boolean): T {
    const all: InsertResult[] = Array.isArray(r) ? r : [r];
    if (!atomic || !all.some((x) => x.errors.length)) return r;
    const back = all.map((x) => ({ insertedIds: [], errors: x.errors, rolledBack: true }));
    throw new Rollback(Array.isArray(r) ? back : back[0]);
  }

  /** Change events after seq `after` (Backend.feed.read). */
  protected readFeed(after: number, limit: number, type: TypeInfo | null, plan: QueryPlan | null): MaybePromise<ChangeEvent[]> {
    const where = type && plan?.conditions.length ? this.feedWhere(type, plan) : null;
    const statement = feedRead(this.dialect, this.changesTable, after, limit, type?.name ?? null, where);
    return this.request((s) => andThen(this.driver.all(s, statement), (rows) => (rows as [number | string, string, ChangeEvent['op'], string, string, string | null, string][]).map(([seq, t, op, id, doc, activityId, at]) => ({ seq: Number(seq), type: t, op, id, doc: JSON.parse(doc) as StoredDoc, activityId, at }))));
  }

  /** The feed's oldest kept and newest seq; with none kept, the next seq follows the last one ever given (`lastGiven`). */
  protected *bounds(s: S): Op<{ first: number; last: number }> {
    const [[first, last]] = (yield* call(this.driver.all(s, feedBounds(this.changesTable)))) as [[number | string | null, number | string | null]];
    if (last !== null) return { first: Number(first), last: Number(last) };
    const given = yield* this.lastGiven(s);
    return { first: given + 1, last: given };
  }

  /** The last seq the feed ever gave (pruning keeps it), for a feed holding no event. */
  protected abstract lastGiven(s: S): Op<number>;
}
