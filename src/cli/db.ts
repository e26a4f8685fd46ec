/**
 * What `--db` names: a SQLite file, or a PostgreSQL database (`postgres://…` / `postgresql://…`), opened through
 * `consolidata/postgres`, loaded only then (it loads `pg`).
 */
import { existsSync } from 'node:fs';
import { DynamicStore } from '../store.js';
import type { OpenOptions } from '../settings.js';

/**
 * True when `--db` is a PostgreSQL connection string rather than a file.
 * @example isPostgresUrl('postgres://etl@127.0.0.1/wells') // true
 */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * `--db` as messages show it: a connection string without its password.
 * @example shownDb('postgres://etl:secret@db/wells') // 'postgres://etl:***@db/wells'
 */
export function shownDb(db: string): string {
  if (!isPostgresUrl(db)) return db;
  try {
    const url = new URL(db);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return db.replace(/:[^:@/]*@/, ':***@');
  }
}

export interface OpenDbOptions {
  /** SQLite: create the file when it does not exist (default: refuse). A PostgreSQL database must exist; its tables are made as needed. */
  create?: boolean;
  /** Added to the "no such database file" message. */
  hint?: string;
  onError?: OpenOptions['onError'];
  /** The journal and soft delete (serve's --history, --change-feed, --feed-buffer-bytes, --activity-log, --soft-delete). */
  journal?: JournalOptions;
  /** SQLite: bytes of the file mapped for reads (serve's --mmap-size); a PostgreSQL database refuses it. */
  mmapSize?: number;
}

/** The open options the CLI's journal flags set. */
export type JournalOptions = Pick<OpenOptions, 'history' | 'changeFeed' | 'feedBufferBytes' | 'activityLog' | 'softDelete'>;

/**
 * A flag's list of types: `all` for every type (true), else comma-separated names (checked when the store opens).
 * @example typesFlag('Well,DailyProduction') // ['Well', 'DailyProduction']
 */
export function typesFlag(value: string): true | string[] {
  const v = value.trim();
  if (v === 'all') return true;
  return v.split(',').map((t) => t.trim()).filter(Boolean);
}

/**
 * Opens the store `--db` names (a connection string's `?schema=` names the PostgreSQL schema); answers an error
 * message instead when it cannot (nothing is created then).
 * @example const store = await openDb('postgres://etl@127.0.0.1/wells?schema=wells');
 */
export async function openDb(db: string, options: OpenDbOptions = {}): Promise<DynamicStore | string> {
  const settings: OpenOptions = {
    ...(options.journal ?? {}),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.mmapSize !== undefined ? { mmapSize: options.mmapSize } : {}),
  };
  if (isPostgresUrl(db)) {
    try {
      const { openPostgres } = await import('../postgres/index.js');
      return (await openPostgres(db, settings)).dynamic;
    } catch (e) {
      return `${shownDb(db)}: ${(e as Error).message}`;
    }
  }
  if (!options.create && !existsSync(db)) return `${db}: no such database file${options.hint ? ` (${options.hint})` : ''}`;
  try {
    return DynamicStore.open(db, settings);
  } catch (e) {
    const message = (e as Error).message;
    // The store's own open failures (not SQLite, missing directory, busy) name the file already.
    return message.startsWith(db) ? message : `${db}: ${message}`;
  }
}

/**
 * A command's `fn` on the store `--db` names, closed after it; a store that cannot be opened is said, exit code 1.
 * @example return withDb(o.db, { hint: 'check --db' }, say, async (store) => { …; return 0; });
 */
export async function withDb(db: string, options: OpenDbOptions, say: (line: string) => void, fn: (store: DynamicStore) => Promise<number>): Promise<number> {
  const store = await openDb(db, options);
  if (typeof store === 'string') {
    say(store);
    return 1;
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
