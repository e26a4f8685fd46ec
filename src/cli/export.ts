/** `consolidata export`: a type's documents as NDJSON, paged so memory stays flat. */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Envelope } from '../envelope.js';
import type { StoreLike } from '../core/store-like.js';

export interface ExportOptions {
  store: StoreLike;
  type: string;
  /** A query object (default: every document). */
  query?: unknown;
  output: Writable;
  /** The order of the lines (options.sortBy and sortOrder, checked by the store); default: insertion order. */
  sort?: { sortBy?: unknown; sortOrder?: unknown };
  /** Documents per page (default 1000). */
  pageSize?: number;
}

/**
 * Writes every matching document as one JSON line, page by page in insertion order (or `sort`'s), following the store's keyset
 * cursor (so each page costs its own rows: linear in the result, and stable under concurrent writes);
 * resolves with the count, or with the store's failed envelope (unknown type, bad query).
 * @example await runExport({ store, type: 'Well', query: { basinName: 'Permian' }, output: process.stdout });
 */
export async function runExport(opts: ExportOptions): Promise<{ exported: number; failure?: Envelope<unknown> }> {
  const pageSize = opts.pageSize ?? 1000;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError('pageSize must be a positive integer');
  let exported = 0;
  let cursor: string | null = null;
  for (;;) {
    // A backend without cursors answers no cursor while more matches remain: page by skip there.
    const options: Record<string, unknown> = { ...opts.sort, ...(cursor ? { limit: pageSize, cursor } : { limit: pageSize, skip: exported }) };
    const page: Envelope<unknown> = await opts.store.query(opts.type, opts.query ?? {}, options);
    if (!page.success) return { exported, failure: page };
    if (page.data.length === 0) break;
    const text = page.data.map((d) => JSON.stringify(d)).join('\n') + '\n';
    if (!opts.output.write(text)) await once(opts.output, 'drain');
    exported += page.data.length;
    cursor = page.cursor;
    if (!cursor && (page.data.length < pageSize || exported >= page.total)) break;
  }
  return { exported };
}
