/**
 * The store's one bounded cache: a map bounded by entries and by the total size of what it holds (in the caller's
 * unit: characters of SQL, bytes of an image, regex instructions, polygon positions), the least recently used
 * dropped first, so requests of many distinct shapes cannot hold memory without limit. lru-cache keeps the order
 * and the sizes.
 */
import { LRUCache } from 'lru-cache';

export class BoundedCache<V extends {}> {
  readonly #lru: LRUCache<string, V>;
  readonly #maxSize: number;

  /**
   * @param max entries at most
   * @param maxSize total size at most; an entry larger than this is not kept
   * @param dispose called with each entry that leaves (dropped, replaced or deleted)
   * @example const plans = new BoundedCache<Plan>(500, 4 * 1024 * 1024); plans.set(sql, plan, sql.length);
   */
  constructor(max = 500, maxSize = 4 * 1024 * 1024, dispose?: (value: V, key: string) => void) {
    this.#maxSize = maxSize;
    this.#lru = new LRUCache<string, V>({ max, maxSize, ...(dispose ? { dispose: (value: V, key: string) => dispose(value, key) } : {}) });
  }

  get(key: string): V | undefined {
    return this.#lru.get(key);
  }

  /** Keeps `value` under `key`; `size` is what it holds (by default its key's length), counted against the budget. */
  set(key: string, value: V, size = key.length): void {
    if (size > this.#maxSize) return;
    this.#lru.set(key, value, { size: Math.max(1, Math.ceil(size)) });
  }

  /** Entries and the size they hold, for tests and diagnostics. */
  get size(): { entries: number; held: number } {
    return { entries: this.#lru.size, held: this.#lru.calculatedSize };
  }
}
