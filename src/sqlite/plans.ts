/**
 * What the backend learns once per query shape or statement text and keeps: a small map bounded by entries and by
 * the characters it holds (as the statement cache is, connection.ts), the oldest dropped first, so that queries of
 * many distinct shapes cannot hold memory without limit.
 */
export class BoundedCache<V> {
  readonly #map = new Map<string, V>();
  readonly #sizes = new Map<string, number>();
  #chars = 0;

  constructor(
    private readonly max = 500,
    private readonly maxChars = 4 * 1024 * 1024,
  ) {}

  get(key: string): V | undefined {
    return this.#map.get(key);
  }

  /** Keeps `value` under `key`; `chars` is what it holds (its key, and the SQL text it keeps), counted against the budget. */
  set(key: string, value: V, chars = key.length): void {
    // An entry larger than the whole budget is not kept.
    if (chars > this.maxChars || this.#map.has(key)) return;
    while (this.#map.size && (this.#map.size >= this.max || this.#chars + chars > this.maxChars)) {
      const oldest = this.#map.keys().next().value!;
      this.#chars -= this.#sizes.get(oldest)!;
      this.#map.delete(oldest);
      this.#sizes.delete(oldest);
    }
    this.#map.set(key, value);
    this.#sizes.set(key, chars);
    this.#chars += chars;
  }

  /** Entries and characters held, for tests and diagnostics. */
  get size(): { entries: number; chars: number } {
    return { entries: this.#map.size, chars: this.#chars };
  }
}

/**
 * True when running a limited first page as one statement (CompiledSelect.onePass) is faster than the page and then
 * the count: when the page evaluates every match anyway (a sort no index walks, `always` for the rowid-list form)
 * and the count must read documents too (not answered by an index alone). A page that walks an index in its order
 * stops at the limit, and a count from an index alone is cheap: then the two statements stay.
 * `page` and `count` are SQLite's EXPLAIN QUERY PLAN details of the two statements; `table` the documents table.
 */
export function onePassPays(page: readonly string[], count: readonly string[], table: string, always: boolean): boolean {
  const everyMatch = always || page.includes('USE TEMP B-TREE FOR ORDER BY');
  if (!everyMatch) return false;
  const name = new RegExp(`^(SCAN|SEARCH) ${table.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( |$)`);
  return count.some((d) => name.test(d) && !d.includes('COVERING INDEX'));
}
