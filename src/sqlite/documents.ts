/**
 * The opt-in cache of parsed documents (option `documentCache`): deeply frozen documents by type and rowid, bounded by
 * an estimate of their bytes (their JSON text's length), the least recently used dropped first. It holds no rule of
 * its own about the database: the backend (backend.ts) tells it what the connection saw (`sync`) and what this store
 * wrote (`wrote`), and it answers only documents no write has touched since they were read.
 */
import { LRUCache } from 'lru-cache';
import type { StoredDoc } from '../backend.js';
import { deepFreeze } from '../catalogue/documents.js';

/** What the document cache holds and how it served reads (`store.documentCacheStats()`). */
export interface DocumentCacheStats {
  /** Documents held (some may be of types written since, waiting to be dropped or read again). */
  readonly entries: number;
  /** The estimated bytes they hold: the length of each one's JSON text. */
  readonly bytes: number;
  /** The bound on `bytes` (the option's `maxBytes`). */
  readonly maxBytes: number;
  /** Documents answered from the cache. */
  readonly hits: number;
  /** Documents read from the database (then kept). */
  readonly misses: number;
}

interface Entry {
  readonly doc: StoredDoc;
  /** The invalidation count when it was read: stale once its type was written after (see `#since`). */
  readonly at: number;
}

export class DocumentCache {
  readonly maxBytes: number;
  #lru: LRUCache<string, Entry>;
  /** Invalidations so far: an entry read at `at` is stale when its type was written at a later count. */
  #epoch = 0;
  readonly #since = new Map<string, number>();
  /** What the connection reported at the last read or own write: SQLite's data_version and total_changes(). */
  #version: number | undefined;
  #changes: number | undefined;
  #hits = 0;
  #misses = 0;

  /**
   * @param maxBytes the estimated bytes held at most; a document larger than this is not kept
   * @example const cache = new DocumentCache(256 * 1024 * 1024);
   */
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
    this.#lru = this.#empty();
  }

  #empty(): LRUCache<string, Entry> {
    return new LRUCache<string, Entry>({ maxSize: this.maxBytes });
  }

  /** Drops every document: a new LRU rather than clear(), which walks every entry. */
  clear(): void {
    if (this.#lru.size) this.#lru = this.#empty();
    this.#version = undefined;
    this.#changes = undefined;
  }

  /**
   * Called at the start of each read, inside its read transaction: `version` (PRAGMA data_version) changes when
   * another connection commits, `changes` (total_changes()) when this connection wrote without `wrote` knowing
   * (SQL run through `store.database`). Either drops every document.
   */
  sync(version: number, changes: number): void {
    if (version !== this.#version || changes !== this.#changes) {
      if (this.#lru.size) this.#lru = this.#empty();
      this.#version = version;
      this.#changes = changes;
    }
  }

  /**
   * Called after each write of this store: the documents of `types` read before it are stale. `before` and `after`
   * are total_changes() around the write: a change before it that no read saw means a write the cache cannot place.
   */
  wrote(types: readonly string[], before: number, after: number): void {
    if (before !== this.#changes) {
      this.clear();
      return;
    }
    this.#epoch++;
    for (const t of types) this.#since.set(t, this.#epoch);
    this.#changes = after;
  }

  /** The document of a row, if held and no write of its type came after it was read. */
  get(type: string, rowid: number): StoredDoc | undefined {
    const entry = this.#lru.get(`${type}\u0001${rowid}`);
    if (entry && entry.at >= (this.#since.get(type) ?? 0)) {
      this.#hits++;
      return entry.doc;
    }
    this.#misses++;
    return undefined;
  }

  /** Keeps a row's document, parsed from `text` and frozen, and answers it. */
  set(type: string, rowid: number, text: string): StoredDoc {
    const doc = deepFreeze(JSON.parse(text) as StoredDoc);
    const size = Math.max(1, text.length);
    if (size <= this.maxBytes) this.#lru.set(`${type}\u0001${rowid}`, { doc, at: this.#epoch }, { size });
    return doc;
  }

  stats(): DocumentCacheStats {
    return { entries: this.#lru.size, bytes: this.#lru.calculatedSize, maxBytes: this.maxBytes, hits: this.#hits, misses: this.#misses };
  }
}
