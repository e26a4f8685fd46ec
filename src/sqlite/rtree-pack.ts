/**
 * Fills an R*Tree in one pass by sort-tile-recursive (STR) packing, writing its shadow tables in SQLite's own format.
 *
 * Inserting a million points one by one costs SQLite's R*Tree a choose-subtree descent and frequent splits each
 * (measured at 1M Wells: 17–27 s a tree, in any insertion order, STR-sorted included). Packing builds the same
 * tree's nodes bottom-up instead, spatially tight and filled about as row-by-row inserts leave them (FILL), and
 * writes them where the R*Tree module reads them (ext/rtree/rtree.c):
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
/**
 * The share of a node's cells a packed tree fills, about what row-by-row inserts leave: a later insert into a full
 * node splits it or makes the module reinsert a third of its cells, measured to double a single insert's cost at 100k
 * Wells until the tree has split its way back to this fill.
 */
const FILL = 0.7;
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
  const fill = Math.max(2, Math.floor(capacity * FILL));
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
    const groups = strGroups(boxes, count, fill);
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
    const putParents = pairs(db, shadow('parent'), 'nodeno, parentnode');
    const blob = Buffer.alloc(nodeSize);
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    for (let d = levels.length - 1; d >= 0; d--) {
      const level = levels[d]!;
      const below = d > 0 ? levels[d - 1]!.boxes : all.boxes;
      for (let k = 0; k < level.children.length; k++) {
        const children = level.children[k]!;
        const nodeno = numbers[d]![k]!;
        blob.fill(0);
        // Only the root's depth is read; the others stay 0 as the module writes them.
        if (nodeno === 1) view.setUint16(0, levels.length - 1);
        view.setUint16(2, children.length);
        for (let c = 0; c < children.length; c++) {
          const i = children[c]!;
          const id = d > 0 ? numbers[d - 1]![i]! : all.ids[i]!;
          const at = 4 + c * CELL;
          view.setInt32(at, Math.floor(id / 2 ** 32));
          view.setUint32(at + 4, id >>> 0);
          for (let j = 0; j < 4; j++) view.setFloat32(at + 8 + j * 4, below[i * 4 + j]!);
          if (d > 0) putParents.add(numbers[d - 1]![i]!, nodeno);
          else leafOf[i] = nodeno;
        }
        if (nodeno === 1) putRoot.run(blob);
        else putNode.run(nodeno, blob);
      }
    }
    putParents.flush();
    const putRowids = pairs(db, shadow('rowid'), 'rowid, nodeno');
    for (let i = 0; i < n; i++) putRowids.add(all.ids[i]!, leafOf[i]!);
    putRowids.flush();
  } finally {
    db.unsafeMode(false);
  }
}

/** Rows of two integer columns inserted ROWS at a time: one call per row would cost more than SQLite's own work. */
function pairs(db: Db, table: string, columns: string): { add(a: number, b: number): void; flush(): void } {
  const ROWS = 500;
  const sql = (rows: number) => `INSERT INTO ${table} (${columns}) VALUES ${Array.from({ length: rows }, () => '(?, ?)').join(', ')}`;
  const full = db.prepare(sql(ROWS));
  const params: number[] = [];
  return {
    add(a, b) {
      params.push(a, b);
      if (params.length === ROWS * 2) {
        full.run(params);
        params.length = 0;
      }
    },
    flush() {
      if (params.length) db.prepare(sql(params.length / 2)).run(params);
      params.length = 0;
    },
  };
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
  const keys = new Uint32Array(count);
  const scratch = { keys: new Uint32Array(count), order: new Uint32Array(count) };
  centreKeys(boxes, order, 0, keys);
  radixSort(keys, order, scratch);
  const nodes = Math.ceil(count / capacity);
  const perSlice = Math.ceil(Math.sqrt(nodes)) * capacity;
  const groups: Uint32Array[] = [];
  for (let s = 0; s < count; s += perSlice) {
    const end = Math.min(s + perSlice, count);
    const slice = order.subarray(s, end);
    const sliceKeys = keys.subarray(s, end);
    centreKeys(boxes, slice, 2, sliceKeys);
    radixSort(sliceKeys, slice, scratch);
    for (let g = 0; g < slice.length; g += capacity) groups.push(slice.slice(g, g + capacity));
  }
  return groups;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** For each box of `order`, the centre on one axis (0: x, 2: y) as a uint32 that sorts as the float does. */
function centreKeys(boxes: Float32Array, order: Uint32Array, axis: 0 | 2, keys: Uint32Array): void {
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    f32[0] = (boxes[i * 4 + axis]! + boxes[i * 4 + axis + 1]!) / 2;
    const b = u32[0]!;
    // Negative floats sort backwards by their bits: flip them all; positive ones go above them.
    keys[k] = b & 0x80000000 ? ~b >>> 0 : (b | 0x80000000) >>> 0;
  }
}

/** Sorts `order` by `keys` (both in place), stable, by 16 bits at a time: linear, where a comparator sort is not. */
function radixSort(keys: Uint32Array, order: Uint32Array, scratch: { keys: Uint32Array; order: Uint32Array }): void {
  const n = keys.length;
  let srcK = keys;
  let srcO = order;
  let dstK = scratch.keys.subarray(0, n);
  let dstO = scratch.order.subarray(0, n);
  const counts = new Uint32Array(65_537);
  for (const shift of [0, 16]) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[((srcK[i]! >>> shift) & 0xffff) + 1]!++;
    for (let b = 1; b <= 65_536; b++) counts[b]! += counts[b - 1]!;
    for (let i = 0; i < n; i++) {
      const at = counts[(srcK[i]! >>> shift) & 0xffff]!++;
      dstK[at] = srcK[i]!;
      dstO[at] = srcO[i]!;
    }
    [srcK, dstK] = [dstK, srcK];
    [srcO, dstO] = [dstO, srcO];
  }
  // Two passes: the sorted arrays are back in keys and order.
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
