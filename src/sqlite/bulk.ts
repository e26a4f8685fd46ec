/**
 * The bulk path of a write transaction that inserts many documents of a type.
 *
 * Keeping every secondary index and R*Tree up to date row by row costs random B-tree writes per document and makes
 * each INSERT fire a trigger. Once one transaction has inserted more documents of a type than the table held before
 * (and at least BULK_MIN), this drops the type's plain indexes and the R*Trees' insert triggers — inside the same
 * transaction — and rebuilds them before it commits: each index with one `CREATE INDEX` (one sort), each R*Tree
 * filled with one `INSERT … SELECT` of the new rows in spatial order, each trigger recreated from its own DDL text.
 * Unique indexes stay, so a duplicate key is still found at the document that brings it, with its position.
 *
 * Because DDL in SQLite is transactional, nothing outside the transaction ever sees an index missing: other
 * connections read the committed schema until the commit brings the rebuilt one, and a rollback or a crash (the
 * journal) restores the dropped objects with everything else.
 */
import type { TypeInfo } from '../catalogue/index.js';
import type { Db } from './connection.js';
import { docsTable, ident, rtreeTable, rtreeTrigger } from './names.js';
import { pointFill } from './schema.js';

/** Documents of a type one transaction inserts before its indexes are dropped and rebuilt at the end. */
export const BULK_MIN = 20_000;

interface Dropped {
  table: string;
  /** Rows up to this seq were inserted with the triggers in place. */
  fromSeq: number;
  indexes: string[];
  triggers: { field: string; sql: string }[];
}

/** Per write transaction: counts inserts per type and switches a type to the bulk path past the threshold. */
export class BulkInserts {
  readonly #db: Db;
  readonly #counts = new Map<string, { inserted: number; before: number | undefined; entered: boolean }>();
  readonly #dropped = new Map<string, Dropped>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** Counts `n` documents of `info` inserted in this transaction; past the threshold, drops what it will rebuild. */
  inserted(info: TypeInfo, n = 1): void {
    let c = this.#counts.get(info.name);
    if (!c) this.#counts.set(info.name, (c = { inserted: 0, before: undefined, entered: false }));
    c.inserted += n;
    if (c.entered || c.inserted < BULK_MIN) return;
    // Small requests never get here: the table's size is read once the threshold is reached. The largest seq bounds
    // the rows there (this transaction's included) from above, in O(log n).
    c.before ??= this.#lastSeq(info) - c.inserted;
    if (c.inserted < c.before) return;
    c.entered = true;
    this.#enter(info, this.#lastSeq(info));
  }

  #lastSeq(info: TypeInfo): number {
    return (this.#db.prepare(`SELECT max(seq) FROM ${ident(docsTable(info.name))}`).pluck().get() as number | null) ?? 0;
  }

  /** True once `type` is on the bulk path in this transaction. */
  active(type: string): boolean {
    return this.#dropped.has(type);
  }

  #enter(info: TypeInfo, fromSeq: number): void {
    const db = this.#db;
    const table = docsTable(info.name);
    const indexes = db
      .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE %'`)
      .all(table) as { name: string; sql: string }[];
    const triggers: Dropped['triggers'] = [];
    for (const field of info.geoPointFields) {
      const sql = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?`).pluck().get(rtreeTrigger(info.name, field, 'ai')) as string | undefined;
      if (sql) triggers.push({ field, sql });
    }
    for (const i of indexes) db.exec(`DROP INDEX ${ident(i.name)}`);
    for (const t of triggers) db.exec(`DROP TRIGGER ${ident(rtreeTrigger(info.name, t.field, 'ai'))}`);
    this.#dropped.set(info.name, { table, fromSeq, indexes: indexes.map((i) => i.sql), triggers });
  }

  /** Rebuilds what was dropped, inside the transaction, before it commits. */
  finish(): void {
    try {
      for (const [type, d] of this.#dropped) {
        for (const sql of d.indexes) this.#db.exec(sql);
        for (const t of d.triggers) {
          this.#db.prepare(pointFill(type, t.field, rtreeTable(type, t.field))).run(d.fromSeq);
          this.#db.exec(t.sql);
        }
      }
    } finally {
      this.#done();
    }
  }

  /** The transaction rolls back: the dropped objects come back with it. */
  abort(): void {
    this.#done();
  }

  #done(): void {
    this.#dropped.clear();
    this.#counts.clear();
  }
}
