/**
 * R*Trees filled by sort-tile-recursive packing (src/sqlite/rtree-pack.ts): the shadow tables written directly must
 * make a tree SQLite accepts (`rtreecheck`, `integrity_check`), that answers every box exactly as a tree filled row
 * by row, and that takes later inserts, updates and deletes as one.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';
import { BULK_MIN } from '../src/sqlite/bulk.js';
import { floatDown, floatUp, packRtree } from '../src/sqlite/rtree-pack.js';
import { tempDir } from './helpers/store.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

/** A seeded generator of doubles in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function tree(db: Database.Database, name: string): void {
  db.exec(`CREATE VIRTUAL TABLE "${name}" USING rtree(id, minX, maxX, minY, maxY)`);
}

const hits = (db: Database.Database, name: string, b: number[]) =>
  db.prepare(`SELECT id FROM "${name}" WHERE minX <= ? AND maxX >= ? AND minY <= ? AND maxY >= ? ORDER BY id`).pluck().all(b[2], b[0], b[3], b[1]);

const check = (db: Database.Database, name: string) => db.prepare(`SELECT rtreecheck(?)`).pluck().get(name);

describe('R*Tree packing', () => {
  it('rounds as SQLite does: a packed point is stored as an inserted one', () => {
    const db = new Database(':memory:');
    tree(db, 't');
    const xs = [0.1, -0.1, 1 / 3, -97.123456789, 45.000000001, 0, 2 ** 40 + 0.5, -1e-30];
    const put = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?)');
    xs.forEach((x, i) => put.run(i + 1, x, x, -x, -x));
    const stored = db.prepare('SELECT minX, maxX, minY, maxY FROM t ORDER BY id').raw().all();
    expect(stored).toEqual(xs.map((x) => [floatDown(x), floatUp(x), floatDown(-x), floatUp(-x)]));
    db.close();
  });

  it('a packed tree passes rtreecheck and answers every box as one filled row by row, before and after later writes', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 0, max: 6_000 }), fc.double({ min: 0, max: 0.5, noNaN: true }), (seed, n, keptShare) => {
        const rnd = random(seed);
        const db = new Database(':memory:');
        tree(db, 'rows');
        tree(db, 'packed');
        // Clustered points with repeats, so that nodes hold equal and near-equal coordinates.
        const pts = Array.from({ length: n }, (_, i) => {
          const x = i % 7 === 0 && i ? -100 + Math.floor(rnd() * 4) : -104 + rnd() * 14;
          return { id: i + 1, x, y: 28 + rnd() * 20 * rnd() };
        });
        const rowsPut = db.prepare('INSERT INTO rows VALUES (?, ?, ?, ?, ?)');
        const packedPut = db.prepare('INSERT INTO packed VALUES (?, ?, ?, ?, ?)');
        for (const p of pts) rowsPut.run(p.id, p.x, p.x, p.y, p.y);
        // Some points are in the tree already (a load into a table that held documents): packing keeps them.
        const kept = Math.floor(n * keptShare);
        for (const p of pts.slice(0, kept)) packedPut.run(p.id, p.x, p.x, p.y, p.y);
        const added = pts.slice(kept);
        packRtree(db, 'packed', {
          ids: Float64Array.from(added, (p) => p.id),
          boxes: Float32Array.from(added.flatMap((p) => [floatDown(p.x), floatUp(p.x), floatDown(p.y), floatUp(p.y)])),
        });
        expect(check(db, 'packed')).toBe('ok');
        expect(db.prepare('SELECT count(*) FROM packed').pluck().get()).toBe(n);
        const boxes = Array.from({ length: 30 }, () => {
          const x = -105 + rnd() * 16;
          const y = 27 + rnd() * 22;
          return [x, y, x + rnd() * rnd() * 8, y + rnd() * rnd() * 8];
        });
        for (const b of boxes) expect(hits(db, 'packed', b)).toEqual(hits(db, 'rows', b));
        // Later writes through the module: inserts, moves, deletes, the same on both trees.
        db.transaction(() => {
          for (let i = 0; i < 300; i++) {
            const x = -104 + rnd() * 14;
            const y = 28 + rnd() * 20;
            const op = rnd();
            const id = op < 0.4 ? n + i + 1 : 1 + Math.floor(rnd() * Math.max(n, 1));
            for (const t of ['rows', 'packed']) {
              if (op < 0.4) db.prepare(`INSERT INTO ${t} VALUES (?, ?, ?, ?, ?)`).run(id, x, x, y, y);
              else if (op < 0.7) db.prepare(`UPDATE ${t} SET minX = ?, maxX = ?, minY = ?, maxY = ? WHERE id = ?`).run(x, x, y, y, id);
              else db.prepare(`DELETE FROM ${t} WHERE id = ?`).run(id);
            }
          }
        })();
        expect(check(db, 'packed')).toBe('ok');
        expect(db.prepare('SELECT count(*) FROM packed').pluck().get()).toBe(db.prepare('SELECT count(*) FROM rows').pluck().get());
        for (const b of boxes) expect(hits(db, 'packed', b)).toEqual(hits(db, 'rows', b));
        db.close();
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('leaves room in a packed tree: single inserts after a pack split (almost) no node', () => {
    const db = new Database(':memory:');
    tree(db, 'room');
    const rnd = random(11);
    const n = 20_000;
    const ids = Float64Array.from({ length: n }, (_, i) => i + 1);
    const boxes = new Float32Array(n * 4);
    for (let i = 0; i < n; i++) {
      const x = floatDown(-104 + rnd() * 14);
      const y = floatDown(28 + rnd() * 20);
      boxes.set([x, x, y, y], i * 4);
    }
    packRtree(db, 'room', { ids, boxes });
    const nodes = () => db.prepare(`SELECT count(*) FROM "room_node"`).pluck().get() as number;
    const before = nodes();
    const insert = db.prepare(`INSERT INTO "room" VALUES (?, ?, ?, ?, ?)`);
    // 300 points spread over the whole area: each lands in some leaf, and a full leaf would split.
    for (let i = 0; i < 300; i++) {
      const x = -104 + rnd() * 14;
      const y = 28 + rnd() * 20;
      insert.run(n + 1 + i, x, x, y, y);
    }
    expect(nodes() - before).toBeLessThanOrEqual(3);
    expect(check(db, 'room')).toBe('ok');
    db.close();
  });

  it('a bulk insert fills the store R*Tree packed: nodes filled as row by row, rtreecheck and integrity_check pass', async () => {
    const n = BULK_MIN + 5_000;
    const rnd = random(7);
    const store = DataStore.open(dir.file('packed.db'));
    const docs = Array.from({ length: n }, (_, i) => ({
      pwi: `P${String(i).padStart(6, '0')}`,
      surfaceLoc: { type: 'Point' as const, coordinates: [-104 + rnd() * 14, 28 + rnd() * 20] },
    }));
    expect((await store.insert('Well', docs)).count).toBe(n);
    const db = store.dynamic.database;
    expect(check(db, 'rtree._well.surface_loc')).toBe('ok');
    expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    // Row by row the module leaves nodes about two-thirds full; packed, every leaf but the last of a slice holds 70%
    // of what it could (room for later inserts, see the test above).
    const nodeSize = db.prepare(`SELECT length(data) FROM "rtree._well.surface_loc_node" WHERE nodeno = 1`).pluck().get() as number;
    const fill = Math.floor(Math.floor((nodeSize - 4) / 24) * 0.7);
    const leaves = db.prepare(`SELECT nodeno, count(*) AS n FROM "rtree._well.surface_loc_rowid" GROUP BY nodeno`).all() as { n: number }[];
    expect(Math.max(...leaves.map((l) => l.n))).toBe(fill);
    expect(leaves.length).toBeLessThanOrEqual(Math.ceil(n / fill) + Math.ceil(Math.sqrt(n / fill)));
    await store.close();
  }, 120_000);
});
