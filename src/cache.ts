/**
 * The store's one bounded cache: a map bounded by entries and by the total size of what it holds (in the caller's
 * unit: characters of SQL, bytes of an image, regex instructions, polygon positions), the least recently used
 * dropped first, so requests of many distinct shapes cannot hold memory without limit. lru-cache keeps the order
 * and the sizes.
 */
import { LRUCache } from 'lru-cache';

export class BoundedCache<V extends {}> {
  readonly #lru: LRUCache<string, V>;
  readonly #max: number;
  readonly #maxSize: number;

  /**
   * @param max entries at most
   * @param maxSize total size at most; an entry larger than this is not kept
   * @param dispose called with each entry that leaves (dropped, replaced or deleted)
   * @example const plans = new BoundedCache<Plan>(500, 4 * 1024 * 1024); plans.set(sql, plan, sql.length);
   */
  constructor(max = 500, maxSize = 4 * 1024 * 1024, dispose?: (value: V, key: string) => void) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('BoundedCache: max must be a positive integer');
    this.#max = max;
    this.#maxSize = maxSize;
    // The entry bound is kept here, not by lru-cache's `max`: given one, lru-cache fills two arrays of that length
    // element by element when it is made (26 µs for 500, measured), and a store makes three caches as it opens.
    this.#lru = new LRUCache<string, V>({ maxSize, ...(dispose ? { dispose: (value: V, key: string) => dispose(value, key) } : {}) });
  }

  get(key: string): V | undefined {
    return this.#lru.get(key);
  }

  /** Keeps `value` under `key`; `size` is what it holds (by default its key's length), counted against the budget. */
  set(key: string, value: V, size = key.length): void {
    if (size > this.#maxSize) return;
    this.#lru.set(key, value, { size: Math.max(1, Math.ceil(size)) });
    // Past the entries: the least recently used go (never the one just set, the most recent).
    while (this.#lru.size > this.#max) this.#lru.pop();
  }

  /** Entries and the size they hold, for tests and diagnostics. */
  get size(): { entries: number; held: number } {
    return { entries: this.#lru.size, held: this.#lru.calculatedSize };
  }
}
