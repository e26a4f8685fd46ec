/**
 * PostgreSQL's driver for the shared SQL backend (src/sql/backend.ts): a pool of node-postgres clients, one client a
 * request (its session), statements answered with promises (operations run with runAsync), and what the server's
 * errors mean: lock waits, deadlocks and serialization failures are run again; a lost connection is UNAVAILABLE.
 */
import { Steer, storeFull, type MaybePromise } from '../backend.js';
import { requestError, RequestError } from '../envelope.js';
import { Rollback, runAsync, type Driver, type Op, type Retry } from '../sql/backend.js';
import type { Compiled } from '../sql/fragment.js';
import { indexOfShard, uniqueViolation } from './errors.js';
import { fieldsOfIndexDef } from './schema.js';

/** What the backend needs of a node-postgres client (a `pg.PoolClient` is one). */
export interface PgClientLike {
  query(config: { text: string; values?: unknown[]; rowMode?: 'array' }): Promise<{ rows: unknown[]; rowCount: number | null }>;
  query(text: string): Promise<unknown>;
  release(destroy?: Error | boolean): void;
  /** A pg.Client emits 'error' when its connection drops; the backend listens while it holds the client. */
  on?(event: 'error', listener: (e: Error) => void): unknown;
}

/** What the backend needs of a node-postgres pool (a `pg.Pool` is one). */
export interface PgPoolLike {
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
}

export type Row = unknown[];

/** A request is run again whole (it wrote nothing) this many times at most. */
export const ATTEMPTS = 4;
const SERIALIZATION_FAILURE = '40001';
const DEADLOCK = '40P01';
const LOCK_TIMEOUT = '55P03';
export const UNDEFINED_TABLE = '42P01';
/** The server refused a translated pattern (too complex for its engine). */
const BAD_REGEX = new Set(['2201B', '54001']);
/** disk_full: no room to write. 53200 out_of_memory is not this: it passes, and may not recur. */
const DISK_FULL = '53100';

/** Error codes of a socket that failed (EPIPE would otherwise pass for an SQLSTATE). */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOENT', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'EAI_AGAIN']);

/** The SQLSTATE of a server error, if it is one. */
export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !SOCKET_ERRORS.has(code) ? code : undefined;
}

/**
 * True for an error saying the connection is gone or cannot be made: a connection exception (08…), the server
 * shutting down or restarting (57P01–57P03), a socket error, or node-postgres' own words for a dropped connection.
 */
export function connectionLost(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const state = sqlState(e);
  if (state) return state.startsWith('08') || /^57P0[123]$/.test(state);
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && SOCKET_ERRORS.has(code)) return true;
  return /^Connection terminated|is not queryable|^timeout exceeded when trying to connect/.test(e.message);
}

/** The answer to a request whose connection was lost: retryable, and nothing of the driver's message in it. */
function unavailable(cause: unknown): RequestError {
  const e = requestError(
    'UNAVAILABLE',
    'the connection to PostgreSQL was lost or could not be made; the request did not complete: retry it once the database is back (a write cut off while committing may have been applied)',
  );
  (e as { cause?: unknown }).cause = cause;
  return e;
}

/** Clients the backend already listens to for 'error' (a pool hands the same clients out again). */
const watched = new WeakSet<object>();

/**
 * A dropped connection makes its client emit 'error', which would end the process without a listener: node-postgres
 * listens only while the client is idle in the pool. The query in flight (or the next one) fails too, and answers it.
 */
export function watch(client: PgClientLike): void {
  if (watched.has(client) || typeof client.on !== 'function') return;
  watched.add(client);
  client.on('error', () => undefined);
}

/**
 * The request error an engine error means, if it means one: a lost connection is UNAVAILABLE, a regex the server
 * refused INVALID_QUERY, a full disk (SQLSTATE 53100) STORE_FULL. Every request's failure passes here (connecting,
 * #client, #retry, the bulk writer).
 * @example throw requestErrorOf(e) ?? e;
 */
export function requestErrorOf(e: unknown): RequestError | undefined {
  if (connectionLost(e)) return unavailable(e);
  const code = sqlState(e);
  if (code === DISK_FULL) return storeFull();
  if (code && BAD_REGEX.has(code)) return requestError('INVALID_QUERY', 'query: PostgreSQL refused a regex of this query as too complex for its engine; simplify the pattern');
  return undefined;
}

/** The promise, with an engine error that means a request error (requestErrorOf) thrown as that. */
export async function refused<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw requestErrorOf(e) ?? e;
  }
}

/** Runs statements on one client. */
export class Session {
  constructor(readonly client: PgClientLike) {}

  async rows(text: string, values: unknown[] = []): Promise<Row[]> {
    return (await this.client.query({ text, values, rowMode: 'array' })).rows as Row[];
  }

  async exec(text: string): Promise<void> {
    await this.client.query(text);
  }

  /** The rows of a compiled statement. */
  all(c: Compiled): Promise<Row[]> {
    return this.rows(c.sql, c.params);
  }

  /** The rows a compiled statement wrote. */
  async changes(c: Compiled): Promise<number> {
    return (await this.client.query({ text: c.sql, values: c.params, rowMode: 'array' })).rowCount ?? 0;
  }
}

/** How the driver runs: the schema (for index names), whether connections set lock_timeout at connect, and how long a lock wait lasts. */
export interface PgDriverOptions {
  readonly schema: string;
  readonly lockTimeoutSet: boolean;
  readonly busyTimeoutMs: number;
}

/** The pool as the shared backend drives it. */
export class PgDriver implements Driver<Session> {
  readonly attempts = ATTEMPTS;
  readonly alone: boolean;
  /** Index name → the fields of the unique key it enforces, read from the database (so any index of the store is named right). */
  readonly keyOfIndex = new Map<string, readonly string[]>();
  /** Reads of the feed's head in flight: requests issued after one connect once it is read. */
  readonly heads = new Set<Promise<number>>();

  constructor(
    readonly pool: PgPoolLike,
    readonly options: PgDriverOptions,
  ) {
    this.alone = options.lockTimeoutSet;
  }

  /** A client of the pool, listened to for a dropped connection; a database out of reach answers UNAVAILABLE. */
  async connect(): Promise<PgClientLike> {
    let client: PgClientLike;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw requestErrorOf(e) ?? e;
    }
    watch(client);
    return client;
  }

  /** fn on a client of its own; `head`: a read of the feed's head, which requests issued after it wait for. */
  async client<T>(fn: (s: Session) => MaybePromise<T>, head = false): Promise<T> {
    // After the head reads of watches started before this request: its events then come after their start.
    if (!head && this.heads.size) await Promise.allSettled(this.heads);
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      return await fn(new Session(client));
    } catch (e) {
      // An error without an SQLSTATE (a dropped connection) leaves the client unusable: it is destroyed, not pooled.
      if (connectionLost(e) || (!sqlState(e) && !(e instanceof RequestError) && !(e instanceof Rollback) && !(e instanceof Steer))) broken = e as Error;
      throw requestErrorOf(e) ?? e;
    } finally {
      client.release(broken);
    }
  }

  run<T>(op: Op<T>): Promise<T> {
    return runAsync(op);
  }

  all(s: Session, c: Compiled | string): Promise<Row[]> {
    return typeof c === 'string' ? s.rows(c) : s.all(c);
  }

  changes(s: Session, c: Compiled): Promise<number> {
    return s.changes(c);
  }

  /**
   * Reads: REPEATABLE READ READ ONLY (one snapshot for every statement). Writes: READ COMMITTED with row locks taken
   * by the statements, lock waits bounded by busyTimeoutMs. The prelude rides on BEGIN's round trip.
   */
  begin(s: Session, kind: 'read' | 'write', prelude: readonly (Compiled | string)[]): Promise<void> {
    const ms = Math.max(0, Math.floor(this.options.busyTimeoutMs));
    return s.exec(
      [
        kind === 'read' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN',
        ...(kind === 'write' && !this.options.lockTimeoutSet ? [`SET LOCAL lock_timeout = ${ms}`] : []),
        ...prelude.map((p) => {
          if (typeof p === 'string') return p;
          // One round trip of several statements binds nothing: a prelude is literal text.
          if (p.params.length) throw new TypeError('begin: a prelude statement binds no values');
          return p.sql;
        }),
      ].join('; '),
    );
  }

  commit(s: Session): Promise<void> {
    return s.exec('COMMIT');
  }

  rollback(s: Session): Promise<void> {
    return s.exec('ROLLBACK').catch(() => undefined);
  }

  retry(e: unknown): Retry {
    const code = sqlState(e);
    return code === LOCK_TIMEOUT ? 'locked' : code === SERIALIZATION_FAILURE || code === DEADLOCK ? 'again' : null;
  }

  locked(): RequestError {
    return requestError('INTERNAL', `the documents stayed locked by another connection through ${ATTEMPTS} waits; nothing was written`);
  }

  refusal(e: unknown): RequestError | undefined {
    return requestErrorOf(e);
  }

  uniqueKey(s: Session, e: unknown): MaybePromise<readonly string[] | null> {
    const hit = uniqueViolation(e);
    return hit ? this.keyOf(s, hit.index) : null;
  }

  /**
   * The fields of the unique key an index enforces (the engine's name: a Citus shard's maps to its index), read from
   * the database when not known yet (`id` as a last resort).
   */
  async keyOf(s: Session, named: string | undefined): Promise<readonly string[]> {
    if (named === undefined) return ['id'];
    const index = indexOfShard(named, this.keyOfIndex);
    let fields = this.keyOfIndex.get(index);
    if (!fields) {
      const [row] = await s.rows(
        `SELECT pg_get_indexdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1::text AND c.relname = $2::text`,
        [this.options.schema, index],
      );
      fields = row ? fieldsOfIndexDef(row[0] as string) : [];
      if (!fields.length) fields = ['id'];
      this.keyOfIndex.set(index, fields);
    }
    return fields;
  }
}
