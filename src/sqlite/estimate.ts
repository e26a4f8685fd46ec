/**
 * How many rows an equality on an indexed field finds, estimated for the pool's lanes: SQLite's own statistics
 * (`ANALYZE`'s sqlite_stat1) when the file has them, else a bounded walk of the field's index. Estimates are cached
 * per (type, field) and refreshed now and then, so deciding costs a map lookup.
 */
import type { Db } from './connection.js';
import { fieldExpr } from './dialect.js';
import { docsTable, ident, indexName } from './names.js';
import { LIVE } from './schema.js';

/** Index entries walked to estimate rows per key when the file has no statistics. */
const SAMPLE = 10_000;
/** How long an estimate is trusted: data changes, and a stale figure only sends a query to the other lane. */
const FRESH_MS = 10_000;

/** Rows per distinct key of each (type, field) leading an index, read from one connection. */
export class KeyEstimates {
  readonly #cache = new Map<string, { perKey: number; at: number }>();

  constructor(private readonly db: Db) {}

  /**
   * Average rows sharing one value of `field` (0 for an empty table); Infinity when it cannot be told. `live`: the
   * type has soft delete, so its unique keys are partial indexes of live documents, and live rows are counted.
   * @example estimates.rowsPerKey('DailyProduction', 'pwi') * 100 // rows an `in` of 100 pwis finds
   */
  rowsPerKey(type: string, field: string, live = false): number {
    const key = `${type}\0${field}`;
    const hit = this.#cache.get(key);
    const now = Date.now();
    if (hit && now - hit.at < FRESH_MS) return hit.perKey;
    let perKey: number;
    try {
      perKey = this.#stat(type, field) ?? this.#sample(type, field, live);
    } catch {
      // A table not created yet, or a busy file: unknown, so not cheap.
      perKey = Infinity;
    }
    this.#cache.set(key, { perKey, at: now });
    return perKey;
  }

  /** sqlite_stat1's second figure of an index on `field` (and maybe more fields): rows per value of its first column. */
  #stat(type: string, field: string): number | undefined {
    const has = this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").get();
    if (!has) return undefined;
    const names = [indexName('ux', type, [field]), indexName('ix', type, [field])];
    const rows = this.db.prepare('SELECT idx, stat FROM sqlite_stat1 WHERE tbl = ?').all(docsTable(type)) as { idx: string; stat: string }[];
    for (const r of rows) {
      // An index on the field alone (maybe of live documents: liveIndexName), or on it then more fields.
      if (!names.some((n) => r.idx === n || r.idx === `${n}~live` || r.idx.startsWith(`${n}.`))) continue;
      const perKey = Number(r.stat.split(' ')[1]);
      if (Number.isFinite(perKey)) return perKey;
    }
    return undefined;
  }

  /** The first SAMPLE entries of the field's index: rows over distinct keys (a key with more rows than that counts SAMPLE). */
  #sample(type: string, field: string, live: boolean): number {
    const r = this.db.prepare(sampleSql(type, field, live)).get() as { n: number; d: number };
    return r.d === 0 ? 0 : r.n / r.d;
  }
}

/**
 * The walk of a field's index that estimates rows per key: in index order, so SQLite reads SAMPLE entries and stops.
 * With `live`, the partial index of live documents is the one that serves it: its condition is restated.
 * @example db.prepare(sampleSql('DailyProduction', 'pwi', false)).get() // { n: 10000, d: 274 }
 */
export function sampleSql(type: string, field: string, live: boolean): string {
  const k = fieldExpr(field);
  const where = `${k} IS NOT NULL${live ? ` AND ${LIVE}` : ''}`;
  return `SELECT count(*) AS n, count(DISTINCT k) AS d FROM (SELECT ${k} AS k FROM ${ident(docsTable(type))} WHERE ${where} ORDER BY ${k} LIMIT ${SAMPLE})`;
}
