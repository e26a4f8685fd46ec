/**
 * The SQLite entry: the one way into the SQLite backend for the rest of the package. `DynamicStore.open` and
 * `fromSnapshot` (src/store.ts) open a backend here, and the store's SQLite-only members (`database`, `snapshot`,
 * `restore`) read it off the backend through `sqliteOf`.
 */
import type { Backend } from '../backend.js';
import type { Settings } from '../settings.js';
import { SqliteBackend } from './backend.js';
import type { Db } from './connection.js';
import type { DocumentCacheStats } from './documents.js';

export { NotAStoreError, openDatabase, type Db } from './connection.js';
export { requestErrorOf } from './driver.js';
// The pool's scheduler estimates a query's cost from the file's statistics on a connection of its own.
export { KeyEstimates } from './estimate.js';
export type { DocumentCacheStats } from './documents.js';

/** What a SQLite backend offers beyond the seam: its connection, and the database as bytes and back. */
export interface SqliteEngine extends Backend {
  /** The better-sqlite3 connection, for inspection (EXPLAIN, pragmas). */
  readonly database: Db;
  /** The whole database as bytes (SQLite's serialize). */
  snapshot(): Buffer;
  /** Replaces an in-memory database with a copy of a snapshot; a file store throws a TypeError. */
  restore(snapshot: Uint8Array): void;
  /** What the document cache holds and how it served reads, or null when it is off (option documentCache). */
  documentCacheStats(): DocumentCacheStats | null;
}

/**
 * A SQLite backend over a file (WAL, created if missing), memory (`':memory:'`), or an in-memory copy of a snapshot,
 * its schema brought up to date for `settings`.
 * @example const backend = openSqlite('wells.db', resolveSettings({}, 'DataStore.open'));
 */
export function openSqlite(source: string | Uint8Array, settings: Settings): SqliteEngine {
  return new SqliteBackend(source, settings);
}

/**
 * The SQLite backend behind a store, or the TypeError saying that `member` needs one: the one place that rule lives.
 * @example sqliteOf(backend, 'snapshot').snapshot()
 */
export function sqliteOf(backend: Backend, member: string): SqliteEngine {
  if (!(backend instanceof SqliteBackend)) throw new TypeError(`${member} is only available on SQLite stores`);
  return backend;
}
