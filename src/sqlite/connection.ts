/** The SQLite connection: opening a file, memory or a snapshot, pragmas, SQL functions, and a statement cache. */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { BoundedCache } from '../cache.js';
import { inPolygon, polygonMayContainBox } from '../geo/polygons.js';
import { regexTest } from '../query/regex.js';

/** Thrown by `open` for a file that is not a store of this library (another application's database, not SQLite). */
export class NotAStoreError extends Error {
  readonly code = 'NOT_A_STORE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NotAStoreError';
  }
}

export type Db = Database.Database;
export type Statement = Database.Statement;

/**
 * A serialized database whose header says rollback journal: the image of a WAL file says WAL (header bytes 18
 * and 19 are 2), which an in-memory database cannot open. The bytes are otherwise the same; `image` is changed in place.
 */
export function asRollbackJournal(image: Buffer): Buffer {
  if (image.length > 19 && image[18] === 2 && image[19] === 2) {
    image[18] = 1;
    image[19] = 1;
  }
  return image;
}

/** KiB of page cache per connection. */
export const CACHE_KIB = 65_536;

/**
 * better-sqlite3's connection, its open failures naming the file: its own messages name neither the file nor why
 * ("Cannot open database because the directory does not exist", "unable to open database file").
 */
function connect(source: string | Buffer): Db {
  if (typeof source === 'string' && source !== ':memory:' && source !== '' && !existsSync(dirname(source))) {
    throw new TypeError(`${source}: cannot open: the directory ${dirname(source)} does not exist`);
  }
  try {
    return new Database(source);
  } catch (e) {
    if (typeof source === 'string' && (e as { code?: string }).code === 'SQLITE_CANTOPEN') (e as Error).message = `${source}: ${(e as Error).message}`;
    throw e;
  }
}

/** Opens a file (WAL; `mmapSize` bytes of it mapped for reads), memory (`':memory:'`), or an in-memory copy of a serialized database (a Buffer). */
export function openDatabase(file: string | Uint8Array, busyTimeoutMs: number, mmapSize: number): Db {
  // An image from elsewhere (a file read from disk) may still say WAL: open a copy that says rollback journal.
  const image = typeof file === 'string' ? file : file.length > 19 && file[18] === 2 ? asRollbackJournal(Buffer.from(file)) : Buffer.isBuffer(file) ? file : Buffer.from(file);
  const db = connect(image);
  if (typeof file === 'string' && file !== ':memory:' && file !== '') {
    try {
      db.pragma('journal_mode = WAL');
    } catch (e) {
      db.close();
      const code = (e as { code?: string }).code;
      if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') throw new NotAStoreError(`${file} is not a SQLite database`, { cause: e });
      throw e;
    }
    // NORMAL in WAL mode: a commit survives a process crash; an OS crash may lose the last transactions, never corrupt.
    db.pragma('synchronous = NORMAL');
    // Reads map the file instead of copying pages into SQLite's cache: address space, not heap (the pages are the
    // OS's page cache, shared with every process reading the file). SQLite caps it at its compiled maximum.
    db.pragma(`mmap_size = ${mmapSize}`);
  }
  // 64 MiB of page cache (the default is 2 MiB): the index working set of a million documents stays in memory.
  db.pragma(`cache_size = -${CACHE_KIB}`);
  // Statement journals and sorters in memory: the R*Tree triggers make every insert keep one, which otherwise spills to disk.
  db.pragma('temp_store = MEMORY');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  db.pragma('foreign_keys = OFF');
  db.function('cd_regexp', { deterministic: true }, regexTest);
  db.function('cd_in_polygon', { deterministic: true }, inPolygon);
  db.function('cd_polygon_box', { deterministic: true }, polygonMayContainBox);
  return db;
}

/**
 * Prepared statements by SQL text, so repeated requests skip the SQL parser. Bounded by entries and by the characters
 * of their SQL (a statement's memory grows with its text), the least recently used dropped first, so queries of many
 * distinct shapes cannot hold memory without limit. A statement larger than the whole budget is used once, not kept.
 */
export class StatementCache {
  readonly #statements: BoundedCache<Statement>;
  constructor(
    private readonly db: Db,
    max = 500,
    maxChars = 4 * 1024 * 1024,
  ) {
    this.#statements = new BoundedCache<Statement>(max, maxChars);
  }

  get(sql: string): Statement {
    let s = this.#statements.get(sql);
    if (!s) this.#statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /** Statements and SQL characters held, for tests and diagnostics. */
  get size(): { entries: number; held: number } {
    return this.#statements.size;
  }
}
