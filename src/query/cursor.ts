/**
 * Keyset cursors: a position in a sorted result, not a handle — nothing is kept on the server, so a cursor never
 * expires and survives a restart. It holds the sort key and insertion order (seq) of the last document answered,
 * the total counted when paging began, and a digest of the query and sort it belongs to, and is signed (HMAC-SHA256)
 * with the store's cursor key, kept in the database: only cursors the store answered are taken back, on every
 * connection, thread and process of that database.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { requestError } from '../envelope.js';
import type { Keyset } from './ast.js';

const VERSION = 1;
/** Bytes of the signature kept (128 bits): forging one is out of reach, and a cursor stays short. */
const MAC_BYTES = 16;
const MAC_CHARS = Math.ceil((MAC_BYTES * 4) / 3);

/** A digest of what a cursor continues: the type, the query and the sort (not limit or skip). */
export function shapeOf(type: string, query: unknown, sortBy: unknown, sortOrder: unknown): string {
  const text = JSON.stringify([type, query ?? {}, sortBy ?? null, sortOrder ?? 1], (_k, v: unknown) => (v instanceof RegExp ? String(v) : v));
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}

/**
 * A new cursor key, as a backend stores it (base64): random, or made from the `ids` seed of a deterministic store,
 * whose cursors must repeat from run to run as its ids do (such a store is for tests: its cursors are as guessable
 * as its seed).
 * @example INSERT INTO cd_meta (key, value) VALUES ('cursorKey', newCursorKey(settings.idSeed)) ON CONFLICT DO NOTHING
 */
export function newCursorKey(seed: number | undefined): string {
  return (seed === undefined ? randomBytes(32) : createHash('sha256').update(`consolidata cursor key ${seed}`).digest()).toString('base64');
}

function mac(key: Uint8Array, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
}

/**
 * The opaque text of a cursor: its position as base64url JSON, a dot, and its signature.
 * @example encodeCursor(plan.shape, { rank: 2, key: 'W7', seq: 41, total: 120 }, backend.cursorKey)
 */
export function encodeCursor(shape: string, at: Keyset, key: Uint8Array): string {
  const payload = Buffer.from(JSON.stringify({ v: VERSION, h: shape, r: at.rank, k: at.key, s: at.seq, t: at.total })).toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

function refused(message: string): never {
  throw requestError('INVALID_REQUEST', `options.cursor: ${message}`, { field: 'options.cursor' });
}

/** A cursor this store did not answer (made up, altered, another store's): nothing of it is echoed. */
function forged(): never {
  throw requestError('INVALID_CURSOR', "options.cursor: not a cursor this store answered (it was altered, or is another store's); start again without a cursor", {
    field: 'options.cursor',
  });
}

/**
 * The position a cursor names: its signature checked with the store's key before anything of it is read, then
 * checked against the query it is passed with. No key (a store without cursors): every cursor is refused.
 * @example const after = decodeCursor(options.cursor, shape, backend.cursorKey);
 */
export function decodeCursor(text: unknown, shape: string, key: Uint8Array | undefined): Keyset {
  // A cursor carries one sort key: long only when that key is (a long string or a whole object sorted on).
  if (typeof text !== 'string' || text === '' || text.length > 1_048_576) refused('expected the cursor string of a previous answer');
  const dot = text.length - MAC_CHARS - 1;
  if (!key || dot < 1 || text[dot] !== '.') forged();
  const payload = text.slice(0, dot);
  const given = Buffer.from(text.slice(dot + 1), 'base64url');
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(key, payload))) forged();
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    forged();
  }
  // Signed by this store, so well formed; checked still, as a key leaked or reused elsewhere would let anything in.
  const o = c as { v?: unknown; h?: unknown; r?: unknown; k?: unknown; s?: unknown; t?: unknown };
  const keyOk = o?.k === null || typeof o?.k === 'string' || (typeof o?.k === 'number' && Number.isFinite(o.k));
  if (!o || o.v !== VERSION || typeof o.h !== 'string' || !Number.isInteger(o.r) || !keyOk || !Number.isSafeInteger(o.s) || !Number.isSafeInteger(o.t) || (o.t as number) < 0) {
    forged();
  }
  if (o.h !== shape) refused('this cursor belongs to another query or sort; pass the same query, sortBy and sortOrder');
  return { rank: o.r as number, key: o.k as string | number | null, seq: o.s as number, total: o.t as number };
}
