/**
 * Keyset cursors: a position in a sorted result, not a handle — nothing is kept on the server, so a cursor never
 * expires and survives a restart. It holds the sort key and insertion order (seq) of the last document answered,
 * the total counted when paging began, and a digest of the query and sort it belongs to.
 */
import { createHash } from 'node:crypto';
import { requestError } from '../envelope.js';
import type { Keyset } from './ast.js';

const VERSION = 1;

/** A digest of what a cursor continues: the type, the query and the sort (not limit or skip). */
export function shapeOf(type: string, query: unknown, sortBy: unknown, sortOrder: unknown): string {
  const text = JSON.stringify([type, query ?? {}, sortBy ?? null, sortOrder ?? 1], (_k, v: unknown) => (v instanceof RegExp ? String(v) : v));
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

/** The opaque text of a cursor. */
export function encodeCursor(shape: string, at: Keyset): string {
  return Buffer.from(JSON.stringify({ v: VERSION, h: shape, r: at.rank, k: at.key, s: at.seq, t: at.total })).toString('base64url');
}

function refused(message: string): never {
  throw requestError('INVALID_REQUEST', `options.cursor: ${message}`, { field: 'options.cursor' });
}

/** The position a cursor names, checked against the query it is passed with. */
export function decodeCursor(text: unknown, shape: string): Keyset {
  // A cursor carries one sort key: long only when that key is (a long string or a whole object sorted on).
  if (typeof text !== 'string' || text === '' || text.length > 1_048_576) refused('expected the cursor string of a previous answer');
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    refused('not a cursor of this store');
  }
  const o = c as { v?: unknown; h?: unknown; r?: unknown; k?: unknown; s?: unknown; t?: unknown };
  const keyOk = o?.k === null || typeof o?.k === 'string' || (typeof o?.k === 'number' && Number.isFinite(o.k));
  if (!o || o.v !== VERSION || typeof o.h !== 'string' || !Number.isInteger(o.r) || !keyOk || !Number.isSafeInteger(o.s) || !Number.isSafeInteger(o.t)) {
    refused('not a cursor of this store');
  }
  if (o.h !== shape) refused('this cursor belongs to another query or sort; pass the same query, sortBy and sortOrder');
  return { rank: o.r as number, key: o.k as string | number | null, seq: o.s as number, total: o.t as number };
}
