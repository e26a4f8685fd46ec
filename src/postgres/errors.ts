/**
 * Which engine errors are a unique key's collision, and which index they name, on one node and on Citus alike: the
 * one place DUPLICATE_KEY is recognised. PostgreSQL reports SQLSTATE 23505 naming the index; Citus names the shard's
 * index (`<index>_<shard id>`, or a truncated name and a hash before the id when that is too long), relays a worker's
 * error without the constraint field, and when it writes rows by COPY (multi-row INSERT … SELECT) reports the
 * violation as XX000: there only the message names the index.
 */

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';
/** PostgreSQL's message of a unique violation, which Citus's COPY path reports as an internal error (XX000). */
const COPY_VIOLATION = /^duplicate key value violates unique constraint "([^"]+)"/;

/**
 * The index a unique-key collision names (as the engine named it), or undefined when `e` is no such collision.
 * @example const hit = uniqueViolation(e); if (!hit) throw e; const fields = keyOfIndex(hit.index);
 */
export function uniqueViolation(e: unknown): { index: string | undefined } | undefined {
  const err = e as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  if (!err || typeof err !== 'object') return undefined;
  // A worker's error relayed by the coordinator keeps the SQLSTATE and the message, not the constraint field.
  const named = typeof err.message === 'string' ? COPY_VIOLATION.exec(err.message)?.[1] : undefined;
  if (err.code === UNIQUE_VIOLATION) return { index: typeof err.constraint === 'string' ? err.constraint : named };
  if (err.code === 'XX000' && named !== undefined) return { index: named };
  return undefined;
}

/**
 * The store's index a name stands for: itself when known, else a shard's name of it (`_<shard id>` after the name,
 * or after a truncated name and its hash), matched against the known names.
 * @example indexOfShard('ux._well.pwi_102010', new Set(['ux._well.pwi'])) // 'ux._well.pwi'
 */
export function indexOfShard(name: string, known: { has(name: string): boolean; keys(): Iterable<string> }): string {
  if (known.has(name)) return name;
  const base = name.replace(/_\d+$/, '');
  if (base !== name && known.has(base)) return base;
  // Too long for a suffix: Citus keeps a prefix of the name, then a hash, then the shard id.
  const prefix = base.replace(/_-?\d+$/, '');
  if (prefix !== base) {
    for (const k of known.keys()) if (k.startsWith(prefix)) return k;
  }
  return name;
}
