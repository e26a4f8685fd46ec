/**
 * Fills an R*Tree in one pass by sort-tile-recursive (STR) packing, writing its shadow tables in SQLite's own format.
 *
 * Inserting a million points one by one costs SQLite's R*Tree a choose-subtree descent and frequent splits each
 * (measured at 1M Wells: 17–27 s a tree, in any insertion order, STR-sorted included). Packing builds the same
 * tree's nodes bottom-up instead, full and spatially tight, and writes them where the R*Tree module reads them
 * (ext/rtree/rtree.c):
 * - `%_node(nodeno, data)`: node 1 is the root; a node is a blob of the tree's node size (the root's length):
 *   2-byte depth (read from the root only) + 2-byte cell count + cells, big-endian. A cell is an 8-byte rowid (a
 *   child's node number in an inner node) and minX, maxX, minY, maxY as 4-byte floats.
 * - `%_parent(nodeno, parentnode)` for every node but the root; `%_rowid(rowid, nodeno)`: each entry's leaf.
 * Coordinates are rounded as the module rounds them on insert (min down, max up to a float), so a packed tree answers
 * every box exactly as one filled row by row, and takes later inserts, updates and deletes as usual.
 */
import type { Db } from './connection.js';
import { ident } from './names.js';

/** Entries to pack: ids and boxes (minX, maxX, minY, maxY per entry), the boxes already rounded to floats. */
export interface Entries {
  ids: Float64Array;
  boxes: Float32Array;
}

const CELL = 8 + 4 * 4;
/** Float-rounding factors of rtree.c (RNDTOWARDS, RNDAWAY): one unit in the last place of a float, either way. */
const TOWARDS = 1 - 1 / 8388608;
const AWAY = 1 + 1 / 8388608;

/** The float at or below d, as the R*Tree stores a minimum (rtreeValueDown). */
export function floatDown(d: number): number {
  const f = Math.fround(d);
  return f > d ? Math.fround(d * (d < 0 ? AWAY : TOWARDS)) : f;
}

/** The float at or above d, as the R*Tree stores a maximum (rtreeValueUp). */
export function floatUp(d: number): number {
  const f = Math.fround(d);
  return f < d ? Math.fround(d * (d < 0 ? TOWARDS : AWAY)) : f;
}

/**
 * Replaces the content of the 2-dimensional R*Tree `table` by its current entries plus `added`, packed in STR
 * order. Runs inside the caller's write transaction; the connection leaves defensive mode for the shadow-table writes
 * only.
 *
 * @example
 * packRtree(db, 'rtree._well.surface_loc', { ids: Float64Array.of(7), boxes: Float32Array.of(-97.5, -97.5, 32.1, 32.1) });
 */
export function packRtree(db: Db, table: string, added: Entries): void {
  const all = withCurrent(db, table, added);
  if (!all.ids.length) return;
  const nodeSize = (db.prepare(`SELECT length(data) FROM ${ident(`${table}_node`)} WHERE nodeno = 1`).pluck().get() as number | undefined) ?? 0;
  const capacity = Math.floor((nodeSize - 4) / CELL);
  if (capacity < 2) throw new Error(`R*Tree ${table}: unexpected node size ${nodeSize}`);
  const n = all.ids.length;
  const leafOf = new Uint32Array(n);

  // Levels bottom-up: each node's children (entry indexes at the leaves, node indexes above) and its box.
  interface Level {
    children: Uint32Array[];
    boxes: Float32Array;
  }
  const levels: Level[] = [];
  let boxes = all.boxes;
  let count = n;
  do {
    const groups = strGroups(boxes, count, capacity);
    const up = new Float32Array(groups.length * 4);
    groups.forEach((g, k) => unionInto(boxes, g, up, k));
    levels.push({ children: groups, boxes: up });
    boxes = up;
    count = groups.length;
  } while (count > 1);

  // Node numbers: the root is 1, the others from 2 on, level by level from the top (reads walk down in that order).
  const numbers: Uint32Array[] = levels.map((l) => new Uint32Array(l.children.length));
  let next = 2;
  for (let d = levels.length - 1; d >= 0; d--) for (let k = 0; k < numbers[d]!.length; k++) numbers[d]![k] = d === levels.length - 1 ? 1 : next++;

  const shadow = (s: string) => ident(`${table}_${s}`);
  // Defensive mode (better-sqlite3's default) makes shadow tables read-only to SQL; it is back on before this returns.
  db.unsafeMode(true);
  try {
    db.exec(`DELETE FROM ${shadow('rowid')}; DELETE FROM ${shadow('parent')}; DELETE FROM ${shadow('node')} WHERE nodeno <> 1`);
    const putNode = db.prepare(`INSERT INTO ${shadow('node')} (nodeno, data) VALUES (?, ?)`);
    const putRoot = db.prepare(`UPDATE ${shadow('node')} SET data = ? WHERE nodeno = 1`);
    const putParent = db.prepare(`INSERT INTO ${shadow('parent')} (nodeno, parentnode) VALUES (?, ?)`);
    const blob = Buffer.alloc(nodeSize);
    for (let d = levels.length - 1; d >= 0; d--) {
      const level = levels[d]!;
      const below = d > 0 ? levels[d - 1]!.boxes : all.boxes;
      for (let k = 0; k < level.children.length; k++) {
        const children = level.children[k]!;
        const nodeno = numbers[d]![k]!;
        blob.fill(0);
        // Only the root's depth is read; the others stay 0 as the module writes them.
        if (nodeno === 1) blob.writeUInt16BE(levels.length - 1, 0);
        blob.writeUInt16BE(children.length, 2);
        for (let c = 0; c < children.length; c++) {
          const i = children[c]!;
          const id = d > 0 ? numbers[d - 1]![i]! : all.ids[i]!;
          const at = 4 + c * CELL;
          blob.writeInt32BE(Math.floor(id / 2 ** 32), at);
          blob.writeUInt32BE(id >>> 0, at + 4);
          for (let j = 0; j < 4; j++) blob.writeFloatBE(below[i * 4 + j]!, at + 8 + j * 4);
          if (d > 0) putParent.run(numbers[d - 1]![i]!, nodeno);
          else leafOf[i] = nodeno;
        }
        if (nodeno === 1) putRoot.run(blob);
        else putNode.run(nodeno, blob);
      }
    }
    const putRowid = db.prepare(`INSERT INTO ${shadow('rowid')} (rowid, nodeno) VALUES (?, ?)`);
    for (let i = 0; i < n; i++) putRowid.run(all.ids[i]!, leafOf[i]!);
  } finally {
    db.unsafeMode(false);
  }
}

/** The tree's current entries (already floats) followed by `added`. */
function withCurrent(db: Db, table: string, added: Entries): Entries {
  const current = db.prepare(`SELECT id, minX, maxX, minY, maxY FROM ${ident(table)}`).raw().all() as number[][];
  if (!current.length) return added;
  const m = current.length;
  const ids = new Float64Array(m + added.ids.length);
  const boxes = new Float32Array(ids.length * 4);
  current.forEach((r, i) => {
    ids[i] = r[0]!;
    for (let j = 0; j < 4; j++) boxes[i * 4 + j] = r[j + 1]!;
  });
  ids.set(added.ids, m);
  boxes.set(added.boxes, m * 4);
  return { ids, boxes };
}

/**
 * Sort-tile-recursive grouping of `count` boxes into nodes of at most `capacity`: sorted by centre x into vertical
 * slices of about √(nodes) nodes each, each slice sorted by centre y and cut into nodes.
 */
function strGroups(boxes: Float32Array, count: number, capacity: number): Uint32Array[] {
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  const cx = (i: number) => boxes[i * 4]! + boxes[i * 4 + 1]!;
  const cy = (i: number) => boxes[i * 4 + 2]! + boxes[i * 4 + 3]!;
  order.sort((a, b) => cx(a) - cx(b));
  const nodes = Math.ceil(count / capacity);
  const perSlice = Math.ceil(Math.sqrt(nodes)) * capacity;
  const groups: Uint32Array[] = [];
  for (let s = 0; s < count; s += perSlice) {
    const slice = order.subarray(s, Math.min(s + perSlice, count)).sort((a, b) => cy(a) - cy(b));
    for (let g = 0; g < slice.length; g += capacity) groups.push(slice.slice(g, g + capacity));
  }
  return groups;
}

/** Writes the bounding box of `members` of `boxes` at position k of `out`. */
function unionInto(boxes: Float32Array, members: Uint32Array, out: Float32Array, k: number): void {
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (const i of members) {
    minX = Math.min(minX, boxes[i * 4]!);
    maxX = Math.max(maxX, boxes[i * 4 + 1]!);
    minY = Math.min(minY, boxes[i * 4 + 2]!);
    maxY = Math.max(maxY, boxes[i * 4 + 3]!);
  }
  out[k * 4] = minX;
  out[k * 4 + 1] = maxX;
  out[k * 4 + 2] = minY;
  out[k * 4 + 3] = maxY;
}
