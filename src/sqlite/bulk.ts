/**
 * The bulk path of a write transaction that inserts many documents of a type.
 *
 * Keeping every secondary index and R*Tree up to date row by row costs random B-tree writes per document and makes
 * each INSERT fire a trigger. Once one transaction has inserted more documents of a type than the table held before
 * (and at least BULK_MIN), this drops the type's plain indexes and the R*Trees' insert triggers — inside the same
 * transaction — and rebuilds them before it commits: each index with one `CREATE INDEX` (one sort), each trigger
 * recreated from its own DDL text. The points of the rows inserted meanwhile are kept as the documents go in (three
 * doubles a row): filling a tree with `INSERT … SELECT` from the table would read every new document again, and
 * within the transaction those pages come from the write-ahead log, not the map. At the end each tree is packed
 * whole, its entries before the load and the kept points together, in sort-tile-recursive order (rtree-pack.ts):
 * one INSERT per point into the module measured 17–27 s a tree at 1M Wells, in any order, STR-sorted included.
 * Unique indexes stay, so a duplicate key is still found at the document that brings it, with its position.
 *
 * Because DDL in SQLite is transactional, nothing outside the transaction ever sees an index missing: other
 * connections read the committed schema until the commit brings the rebuilt one, and a rollback or a crash (the
 * journal) restores the dropped objects with everything else.
 */
import type { StoredDoc } from '../backend.js';
import type { TypeInfo } from '../catalogue/index.js';
import type { Db } from './connection.js';
import { docsTable, ident, rtreeTable, rtreeTrigger } from './names.js';
import { type Entries, floatDown, floatUp, packRtree } from './rtree-pack.js';

/** Documents of a type one transaction inserts before its indexes are dropped and rebuilt at the end. */
export const BULK_MIN = 20_000;

/**
 * rowid, x, y of every point inserted since a tree's trigger was dropped, in fixed-size chunks of doubles (rowids are
 * safe integers, exact in a double): outside the JS heap, and never copied as a growing array would be (at 1M Wells
 * two trees keep 48 MB; as arrays they held that on the heap and up to 2.5 times it while growing).
 */
class Points {
  static readonly CHUNK = 3 * 65_536;
  readonly #chunks: Float64Array[] = [];
  #used = Points.CHUNK;
  #count = 0;

  push(rowid: number, x: number, y: number): void {
    if (this.#used === Points.CHUNK) {
      this.#chunks.push(new Float64Array(Points.CHUNK));
      this.#used = 0;
    }
    const c = this.#chunks[this.#chunks.length - 1]!;
    c[this.#used] = rowid;
    c[this.#used + 1] = x;
    c[this.#used + 2] = y;
    this.#used += 3;
    this.#count++;
  }

  /** The points as R*Tree entries (each a box of zero size, rounded as the tree rounds it); the chunks are let go. */
  entries(): Entries {
    const ids = new Float64Array(this.#count);
    const boxes = new Float32Array(this.#count * 4);
    let k = 0;
    this.drain((rowid, x, y) => {
      ids[k] = rowid;
      boxes[k * 4] = floatDown(x);
      boxes[k * 4 + 1] = floatUp(x);
      boxes[k * 4 + 2] = floatDown(y);
      boxes[k * 4 + 3] = floatUp(y);
      k++;
    });
    this.#count = 0;
    return { ids, boxes };
  }

  /** Each point in insertion order; the chunks are let go as they are read. */
  drain(each: (rowid: number, x: number, y: number) => void): void {
    const chunks = this.#chunks.splice(0);
    const used = this.#used;
    this.#used = Points.CHUNK;
    for (let c = chunks.shift(); c; c = chunks.shift()) {
      const end = chunks.length ? Points.CHUNK : used;
      for (let i = 0; i < end; i += 3) each(c[i]!, c[i + 1]!, c[i + 2]!);
    }
  }
}

interface Tree {
  field: string;
  /** The DDL of the insert trigger, recreated at the end. */
  trigger: string;
  points: Points;
}

interface Dropped {
  indexes: string[];
  trees: Tree[];
}

/** Per write transaction: counts inserts per type and switches a type to the bulk path past the threshold. */
export class BulkInserts {
  readonly #db: Db;
  readonly #counts = new Map<string, { inserted: number; before: number | undefined; entered: boolean }>();
  readonly #dropped = new Map<string, Dropped>();

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Called after each document of `info` is inserted (with its rowid): counts it, keeps its points once the type is
   * on the bulk path, and past the threshold drops what will be rebuilt.
   */
  inserted(info: TypeInfo, doc: StoredDoc, rowid: number): void {
    const dropped = this.#dropped.get(info.name);
    if (dropped) {
      for (const t of dropped.trees) {
        const c = (doc[t.field] as { coordinates?: unknown } | null | undefined)?.coordinates;
        // What the trigger indexes: a point whose first two coordinates are numbers.
        if (Array.isArray(c) && typeof c[0] === 'number' && typeof c[1] === 'number') t.points.push(rowid, c[0], c[1]);
      }
      return;
    }
    let c = this.#counts.get(info.name);
    if (!c) this.#counts.set(info.name, (c = { inserted: 0, before: undefined, entered: false }));
    c.inserted++;
    if (c.entered || c.inserted < BULK_MIN) return;
    // Small requests never get here: the table's size is read once the threshold is reached. The largest seq bounds
    // the rows there (this transaction's included) from above, in O(log n).
    c.before ??= this.#lastSeq(info) - c.inserted;
    if (c.inserted < c.before) return;
    c.entered = true;
    this.#enter(info);
  }

  #lastSeq(info: TypeInfo): number {
    return (this.#db.prepare(`SELECT max(seq) FROM ${ident(docsTable(info.name))}`).pluck().get() as number | null) ?? 0;
  }

  #enter(info: TypeInfo): void {
    const db = this.#db;
    const indexes = db
      .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE %'`)
      .all(docsTable(info.name)) as { name: string; sql: string }[];
    const trees: Tree[] = [];
    for (const field of info.geoPointFields) {
      const sql = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?`).pluck().get(rtreeTrigger(info.name, field, 'ai')) as string | undefined;
      if (sql) trees.push({ field, trigger: sql, points: new Points() });
    }
    for (const i of indexes) db.exec(`DROP INDEX ${ident(i.name)}`);
    for (const t of trees) db.exec(`DROP TRIGGER ${ident(rtreeTrigger(info.name, t.field, 'ai'))}`);
    this.#dropped.set(info.name, { indexes: indexes.map((i) => i.sql), trees });
  }

  /** Rebuilds what was dropped, inside the transaction, before it commits. */
  finish(): void {
    try {
      for (const [type, d] of this.#dropped) {
        for (const sql of d.indexes) this.#db.exec(sql);
        for (const t of d.trees) {
          packRtree(this.#db, rtreeTable(type, t.field), t.points.entries());
          this.#db.exec(t.trigger);
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
