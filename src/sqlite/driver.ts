/**
 * SQLite's driver for the shared SQL backend (src/sql/backend.ts): one better-sqlite3 connection, prepared statements
 * cached by text, every call answered synchronously (operations run with runSync), and what SQLite's errors mean.
 */
import { storeFull, type MaybePromise } from '../backend.js';
import { requestError, type RequestError } from '../envelope.js';
import { runSync, type Driver, type Op, type Retry } from '../sql/backend.js';
import type { Compiled } from '../sql/fragment.js';
import { StatementCache, type Db } from './connection.js';
import { collidingKey } from './schema.js';

/** A request locked out by another connection is run this many times in all, each after waiting busyTimeoutMs. */
export const BUSY_ATTEMPTS = 3;

/** True for a unique or primary key violation. */
export function isDuplicate(e: unknown): e is Error & { code: string } {
  const code = (e as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** True when another connection's lock refused the statement (it waited busyTimeoutMs first). */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * The request error an engine error means, if it means one: SQLITE_FULL (the disk is full, the file at max_page_count,
 * or an in-memory copy of a snapshot at 1 GiB) is STORE_FULL. Every request's failure passes here.
 * @example throw requestErrorOf(e) ?? e;
 */
export function requestErrorOf(e: unknown): RequestError | undefined {
  return (e as { code?: unknown })?.code === 'SQLITE_FULL' ? storeFull() : undefined;
}

/** The connection as the shared backend drives it; the session is the driver itself (one connection). */
export class SqliteDriver implements Driver<SqliteDriver> {
  readonly statements: StatementCache;
  readonly attempts = BUSY_ATTEMPTS;
  readonly alone = true;

  constructor(readonly db: Db) {
    this.statements = new StatementCache(db);
  }

  client<T>(fn: (s: SqliteDriver) => T): T {
    return fn(this);
  }

  run<T>(op: Op<T>): T {
    return runSync(op);
  }

  all(_s: SqliteDriver, c: Compiled | string): unknown[][] {
    if (typeof c === 'string') return this.statements.get(c).raw(true).all() as unknown[][];
    return this.statements.get(c.sql).raw(true).all(...c.params) as unknown[][];
  }

  changes(_s: SqliteDriver, c: Compiled): number {
    return this.statements.get(c.sql).run(...c.params).changes;
  }

  /** Writes take the write lock up front (BEGIN IMMEDIATE): no upgrade deadlock. */
  begin(_s: SqliteDriver, kind: 'read' | 'write', prelude: readonly (Compiled | string)[]): void {
    this.statements.get(kind === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN').run();
    try {
      for (const p of prelude) this.statements.get(typeof p === 'string' ? p : p.sql).run(...(typeof p === 'string' ? [] : p.params));
    } catch (e) {
      this.rollback();
      throw e;
    }
  }

  /** A COMMIT that fails (a full disk) leaves the transaction open, for `rollback` to end. */
  commit(): void {
    this.statements.get('COMMIT').run();
  }

  /** SQLite may have rolled the transaction back itself (a full database does). */
  rollback(): void {
    if (this.db.inTransaction) this.statements.get('ROLLBACK').run();
  }

  retry(e: unknown): Retry {
    return isBusy(e) ? 'locked' : null;
  }

  locked(): RequestError {
    return requestError('INTERNAL', `the database stayed locked by another connection through ${BUSY_ATTEMPTS} waits; nothing was written`);
  }

  refusal(e: unknown): RequestError | undefined {
    return requestErrorOf(e);
  }

  uniqueKey(_s: SqliteDriver, e: unknown): MaybePromise<readonly string[] | null> {
    return isDuplicate(e) ? collidingKey(this.db, e) : null;
  }
}
