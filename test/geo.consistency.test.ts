/**
 * Geo filters stay consistent with committed data: updates, replaces, deletes, rolled-back requests, other
 * connections and other processes writing to the same file, and reopening a file.
 */
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataStore, type SqliteDataStore } from '../src/index.js';
import { fuzzRuns, point, tempDir } from './helpers/geo.js';

const BOX = [-102, 31, -101, 32]; // the Permian test box
const inside = (i = 0) => point(-101.5 + i * 0.01, 31.5);
const outside = () => point(-97.1, 32.9);

type Store = SqliteDataStore;

/** Ids (pwi) of the Wells whose surfaceLoc is inside BOX, in insertion order. */
async function inBox(store: Store, box: number[] = BOX): Promise<string[]> {
  const r = await store.dynamic.query('Well', { surfaceLoc: { bounds: box } });
  expect(r.success, r.message).toBe(true);
  return r.data.map((d) => d.pwi as string);
}

function rtreeRows(store: Store): number {
  return store.database.prepare('SELECT count(*) FROM "rtree._well.surface_loc"').pluck().get() as number;
}

/** The R*Tree's rows as (id, box), for before/after comparisons. */
function rtreeDump(store: Store): unknown[] {
  return store.database.prepare('SELECT id, minX, maxX, minY, maxY FROM "rtree._well.surface_loc" ORDER BY id').all();
}

/** Number of Wells holding a surfaceLoc point. */
function pointRows(store: Store): number {
  return store.database
    .prepare(`SELECT count(*) FROM docs_Well WHERE json_type(doc, '$.surfaceLoc.coordinates[0]') IN ('integer', 'real')`)
    .pluck()
    .get() as number;
}

function expectTreeMatchesDocs(store: Store): void {
  expect(rtreeRows(store)).toBe(pointRows(store));
}

describe('writes keep the R*Tree in step (one connection)', () => {
  let store: Store;
  beforeEach(async () => {
    store = DataStore.open();
    const r = await store.insert('Well', [
      { pwi: 'A', surfaceLoc: inside(0) },
      { pwi: 'B', surfaceLoc: inside(1) },
      { pwi: 'C', surfaceLoc: outside() },
      { pwi: 'D' },
      { pwi: 'E', surfaceLoc: null },
    ]);
    expect(r.success, r.message).toBe(true);
  });
  afterEach(() => store.close());

  it('the tree starts with one row per document holding a point', async () => {
    expect(rtreeRows(store)).toBe(3);
    expectTreeMatchesDocs(store);
    expect(await inBox(store)).toEqual(['A', 'B']);
  });

  it('update moves a point out of the box', async () => {
    const u = await store.update('Well', { pwi: 'A' }, { surfaceLoc: outside() });
    expect(u.success, u.message).toBe(true);
    expect(u.count).toBe(1);
    expect(await inBox(store)).toEqual(['B']);
    expect(await inBox(store, [-97.2, 32.8, -97, 33])).toEqual(['A', 'C']); // insertion order is kept
    expectTreeMatchesDocs(store);
  });

  it('update moves a point into the box, also for a document that had none', async () => {
    expect((await store.update('Well', { pwi: 'C' }, { surfaceLoc: inside(5) })).count).toBe(1);
    expect((await store.update('Well', { pwi: 'D' }, { surfaceLoc: inside(6) })).count).toBe(1);
    expect((await store.update('Well', { pwi: 'E' }, { surfaceLoc: inside(7) })).count).toBe(1);
    expect(await inBox(store)).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(rtreeRows(store)).toBe(5);
    expectTreeMatchesDocs(store);
  });

  it('update selected by a bounds query moves every matched point', async () => {
    const u = await store.dynamic.update('Well', { surfaceLoc: { bounds: BOX } }, { surfaceLoc: point(10, 10) });
    expect(u.count).toBe(2);
    expect(await inBox(store)).toEqual([]);
    expect(await inBox(store, [9, 9, 11, 11])).toEqual(['A', 'B']);
    expectTreeMatchesDocs(store);
  });

  it('update setting surfaceLoc to null removes it from bounds results and from the tree', async () => {
    const u = await store.update('Well', { pwi: 'B' }, { surfaceLoc: null });
    expect(u.success, u.message).toBe(true);
    expect(await inBox(store)).toEqual(['A']);
    expect(await inBox(store, [-180, -90, 180, 90])).toEqual(['A', 'C']);
    expect(rtreeRows(store)).toBe(2);
    expectTreeMatchesDocs(store);
  });

  it('update of other fields keeps the point findable', async () => {
    expect((await store.update('Well', { pwi: 'A' }, { basinName: 'Permian', 'extra.note': 'x' })).count).toBe(1);
    expect(await inBox(store)).toEqual(['A', 'B']);
    expect(rtreeRows(store)).toBe(3);
  });

  it('a dotted path into a GeoPoint is refused and changes nothing', async () => {
    const before = rtreeDump(store);
    const u = await store.dynamic.update('Well', { pwi: 'A' }, { 'surfaceLoc.coordinates': [-97.1, 32.9] });
    expect(u.success).toBe(false);
    expect(u.errors[0]?.code).toBe('VALIDATION');
    expect(await inBox(store)).toEqual(['A', 'B']);
    expect(rtreeDump(store)).toEqual(before);
  });

  it('replace moves a point (and can drop it)', async () => {
    const [a, b] = (await store.query('Well', { pwi: { in: ['A', 'B'] } }, { sortBy: 'pwi' })).data;
    const r = await store.replace('Well', [
      { id: a!.id!, pwi: 'A', surfaceLoc: outside() },
      { id: b!.id!, pwi: 'B' },
    ]);
    expect(r.success, r.message).toBe(true);
    expect(r.count).toBe(2);
    expect(await inBox(store)).toEqual([]);
    expect(await inBox(store, [-97.2, 32.8, -97, 33])).toEqual(['A', 'C']);
    expect(rtreeRows(store)).toBe(2);
    expectTreeMatchesDocs(store);
  });

  it('replace that inserts (upsert) adds the new point', async () => {
    const r = await store.replace('Well', [{ pwi: 'F', surfaceLoc: inside(9) }]);
    expect(r.success, r.message).toBe(true);
    expect(await inBox(store)).toEqual(['A', 'B', 'F']);
    expectTreeMatchesDocs(store);
  });

  it('delete removes the point from results and the tree', async () => {
    const d = await store.delete('Well', { pwi: 'A' });
    expect(d.count).toBe(1);
    expect(await inBox(store)).toEqual(['B']);
    expect(rtreeRows(store)).toBe(2);
    expectTreeMatchesDocs(store);
    // Deleting by a bounds query.
    const d2 = await store.delete('Well', { surfaceLoc: { bounds: [-180, -90, 180, 90] } });
    expect(d2.count).toBe(2);
    expect(rtreeRows(store)).toBe(0);
    expect(await inBox(store, [-180, -90, 180, 90])).toEqual([]);
    expect((await store.query('Well', {})).total).toBe(2); // D and E, which had no point
  });

  it('an atomic insert with a duplicate key rolls back and leaves the tree unchanged', async () => {
    const before = rtreeDump(store);
    const r = await store.insert(
      'Well',
      [
        { pwi: 'G', surfaceLoc: inside(20) },
        { pwi: 'A', surfaceLoc: inside(21) },
      ],
      { atomic: true },
    );
    expect(r.success).toBe(false);
    expect(r.count).toBe(0);
    expect(r.errors[0]?.code).toBe('DUPLICATE_KEY');
    expect(rtreeDump(store)).toEqual(before);
    expect(await inBox(store)).toEqual(['A', 'B']);
    expectTreeMatchesDocs(store);
  });

  it('a non-atomic insert with a duplicate adds only the inserted document to the tree', async () => {
    const r = await store.insert('Well', [
      { pwi: 'G', surfaceLoc: inside(20) },
      { pwi: 'A', surfaceLoc: outside() },
    ]);
    expect(r.success).toBe(false);
    expect(r.count).toBe(1);
    expect(await inBox(store)).toEqual(['A', 'B', 'G']);
    expect(await inBox(store, [-97.2, 32.8, -97, 33])).toEqual(['C']);
    expect(rtreeRows(store)).toBe(4);
    expectTreeMatchesDocs(store);
  });

  it('a replace with a duplicate key rolls back and leaves the tree unchanged', async () => {
    const a = (await store.query('Well', { pwi: 'A' })).data[0]!;
    const before = rtreeDump(store);
    const r = await store.replace('Well', [
      { id: a.id!, pwi: 'A', surfaceLoc: outside() }, // applied first, then rolled back
      { pwi: 'H', surfaceLoc: inside(30) },
      { pwi: 'B', surfaceLoc: inside(31) }, // collides with B
    ]);
    expect(r.success).toBe(false);
    expect(r.errors[0]?.code).toBe('DUPLICATE_KEY');
    expect(rtreeDump(store)).toEqual(before);
    expect(await inBox(store)).toEqual(['A', 'B']);
    expectTreeMatchesDocs(store);
  });

  it('an update that would duplicate a key rolls back and leaves the tree unchanged', async () => {
    const before = rtreeDump(store);
    const r = await store.dynamic.update('Well', { surfaceLoc: { bounds: BOX } }, { pwi: 'Z', surfaceLoc: outside() });
    expect(r.success).toBe(false);
    expect(r.errors[0]?.code).toBe('DUPLICATE_KEY');
    expect(rtreeDump(store)).toEqual(before);
    expect(await inBox(store)).toEqual(['A', 'B']);
  });

  it('an invalid insert writes nothing to the tree', async () => {
    const before = rtreeDump(store);
    const r = await store.insert('Well', [{ pwi: 'I', surfaceLoc: inside(40) }, { pwi: 'J', surfaceLoc: point(0, 91) }]);
    expect(r.success).toBe(false);
    expect(rtreeDump(store)).toEqual(before);
    expect(await inBox(store)).toEqual(['A', 'B']);
  });

  it('the other GeoPoint fields have their own trees, kept in step the same way', async () => {
    await store.update('Well', { pwi: 'A' }, { midPointLoc: inside(50), bottomHoleLoc: outside() });
    const q = async (field: string, box: number[]) =>
      (await store.dynamic.query('Well', { [field]: { bounds: box } })).data.map((d) => d.pwi);
    expect(await q('midPointLoc', BOX)).toEqual(['A']);
    expect(await q('bottomHoleLoc', BOX)).toEqual([]);
    expect(await q('bottomHoleLoc', [-97.2, 32.8, -97, 33])).toEqual(['A']);
    const count = (t: string) => store.database.prepare(`SELECT count(*) FROM ${t}`).pluck().get();
    expect(count('"rtree._well.mid_point_loc"')).toBe(1);
    expect(count('"rtree._well.bottom_hole_loc"')).toBe(1);
    await store.delete('Well', { pwi: 'A' });
    expect(count('"rtree._well.mid_point_loc"')).toBe(0);
    expect(count('"rtree._well.bottom_hole_loc"')).toBe(0);
    expect(await q('midPointLoc', BOX)).toEqual([]);
  });
});

describe('other connections and processes on the same file', () => {
  let tmp: ReturnType<typeof tempDir>;
  const open: Store[] = [];
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
    tmp.remove();
  });
  const openStore = (file: string) => {
    const s = DataStore.open(file);
    open.push(s);
    return s;
  };

  it('a second DataStore on the same file: its writes are seen by the first at once', async () => {
    const file = tmp.file('wells.db');
    const first = openStore(file);
    const second = openStore(file);
    await first.insert('Well', [{ pwi: 'A', surfaceLoc: inside(0) }]);
    expect(await inBox(second)).toEqual(['A']);
    expect(await inBox(first)).toEqual(['A']);

    await second.insert('Well', [{ pwi: 'B', surfaceLoc: inside(1) }, { pwi: 'C', surfaceLoc: outside() }]);
    expect(await inBox(first)).toEqual(['A', 'B']);

    await second.update('Well', { pwi: 'A' }, { surfaceLoc: outside() });
    expect(await inBox(first)).toEqual(['B']);

    await second.update('Well', { pwi: 'C' }, { surfaceLoc: inside(2) });
    expect(await inBox(first)).toEqual(['B', 'C']);

    await second.delete('Well', { pwi: 'B' });
    expect(await inBox(first)).toEqual(['C']);
    expect(rtreeRows(first)).toBe(2);
    expectTreeMatchesDocs(first);

    // A rolled-back request on the second connection leaves the first's view unchanged.
    const r = await second.insert('Well', [{ pwi: 'D', surfaceLoc: inside(3) }, { pwi: 'C' }], { atomic: true });
    expect(r.success).toBe(false);
    expect(await inBox(first)).toEqual(['C']);
    expectTreeMatchesDocs(first);
  });

  it('a second DataStore on the same file answers polygon queries on the first one\'s writes', async () => {
    const file = tmp.file('wells.db');
    const first = openStore(file);
    const second = openStore(file);
    await first.insert('Well', [{ pwi: 'A', surfaceLoc: inside(0) }, { pwi: 'B', surfaceLoc: outside() }]);
    const ring = [
      [-102, 31],
      [-101, 31],
      [-101, 32],
      [-102, 32],
      [-102, 31],
    ];
    const r = await second.query('Well', { surfaceLoc: { polygon: [ring] } });
    expect(r.data.map((d) => d.pwi)).toEqual(['A']);
  });

  it('another process writing to the file with better-sqlite3 directly is seen at once', async () => {
    const file = tmp.file('wells.db');
    const first = openStore(file);
    await first.insert('Well', [{ pwi: 'A', surfaceLoc: inside(0) }, { pwi: 'B', surfaceLoc: outside() }]);
    expect(await inBox(first)).toEqual(['A']);

    // The child writes rows itself; the schema's triggers keep the tree in step in its transaction.
    const script = `
      import Database from 'better-sqlite3';
      const db = new Database(process.argv[1]);
      db.pragma('busy_timeout = 5000');
      const doc = (pwi, x, y) => JSON.stringify({ id: 'child-' + pwi, pwi, surfaceLoc: { type: 'Point', coordinates: [x, y] } });
      db.transaction(() => {
        db.prepare('INSERT INTO docs_Well (id, doc) VALUES (?, jsonb(?))').run('child-X', doc('X', -101.25, 31.25));
        db.prepare('INSERT INTO docs_Well (id, doc) VALUES (?, jsonb(?))').run('child-Y', doc('Y', 50, 50));
        db.prepare("UPDATE docs_Well SET doc = jsonb_set(doc, '$.surfaceLoc', json(?)) WHERE json_extract(doc, '$.pwi') = 'B'")
          .run(JSON.stringify({ type: 'Point', coordinates: [-101.75, 31.75] }));
        db.prepare("DELETE FROM docs_Well WHERE json_extract(doc, '$.pwi') = 'A'").run();
      })();
      // A rolled-back transaction in the child: nothing of it may show.
      try {
        db.transaction(() => {
          db.prepare('INSERT INTO docs_Well (id, doc) VALUES (?, jsonb(?))').run('child-Z', doc('Z', -101.5, 31.5));
          throw new Error('rollback');
        })();
      } catch {}
      db.close();
      process.stdout.write('done');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, file], { cwd: process.cwd(), encoding: 'utf8', timeout: 30_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('done');
    expect(child.status).toBe(0);

    expect(await inBox(first)).toEqual(['B', 'X']);
    expect(await inBox(first, [49, 49, 51, 51])).toEqual(['Y']);
    expect(rtreeRows(first)).toBe(3);
    expectTreeMatchesDocs(first);
  });

  it('another process clearing a point (while this store holds the file open in WAL mode) is seen at once', async () => {
    const file = tmp.file('wells.db');
    const first = openStore(file);
    await first.insert('Well', [{ pwi: 'A', surfaceLoc: inside(0) }]);
    // A fresh connection in another process: it finds the file in WAL mode and its update fires the schema's triggers.
    const script = `
      import Database from 'better-sqlite3';
      const db = new Database(process.argv[1]);
      db.pragma('busy_timeout = 5000');
      const mode = db.pragma('journal_mode', { simple: true });
      db.prepare("UPDATE docs_Well SET doc = jsonb_set(doc, '$.surfaceLoc', NULL) WHERE json_extract(doc, '$.pwi') = 'A'").run();
      db.close();
      process.stdout.write(String(mode));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, file], { cwd: process.cwd(), encoding: 'utf8', timeout: 30_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('wal');
    expect(await inBox(first)).toEqual([]);
    expect(rtreeRows(first)).toBe(0);
    expectTreeMatchesDocs(first);
  });

  it('a store opened on an existing file answers a bounds query at once', async () => {
    const file = tmp.file('wells.db');
    const writer = DataStore.open(file);
    await writer.insert(
      'Well',
      Array.from({ length: 50 }, (_, i) => ({ pwi: `W${i}`, surfaceLoc: i % 2 ? inside(i) : outside(), fracStages: i })),
    );
    writer.close();

    const reader = openStore(file);
    const r = await reader.dynamic.query('Well', { surfaceLoc: { bounds: BOX } }, { sortBy: 'fracStages', sortOrder: -1, limit: 3 });
    expect(r.success, r.message).toBe(true);
    expect(r.total).toBe(25);
    expect(r.data.map((d) => d.pwi)).toEqual(['W49', 'W47', 'W45']);
    expect(rtreeRows(reader)).toBe(50);
    expectTreeMatchesDocs(reader);
  });
});

describe('bulk writes selected by a geo condition', () => {
  it('update and delete of many documents selected by bounds/polygon keep results and the tree in step', async () => {
    const store = DataStore.open();
    try {
      const n = 600;
      await store.insert(
        'Well',
        Array.from({ length: n }, (_, i) => ({ pwi: `W${i}`, surfaceLoc: point((i % 30) * 0.1, (i % 23) * 0.1) })),
      );
      const all = [-180, -90, 180, 90];
      const box = [0, 0, 1.45, 1.05];
      const want = Array.from({ length: n }, (_, i) => i).filter((i) => (i % 30) * 0.1 <= 1.45 && (i % 23) * 0.1 <= 1.05);
      expect(await inBox(store, box)).toEqual(want.map((i) => `W${i}`));

      const u = await store.dynamic.update('Well', { surfaceLoc: { bounds: box } }, { surfaceLoc: point(50, 50) });
      expect(u.count).toBe(want.length);
      expect(await inBox(store, box)).toEqual([]);
      expect(await inBox(store, [49, 49, 51, 51])).toEqual(want.map((i) => `W${i}`));
      expect(rtreeRows(store)).toBe(n);

      const square = [
        [49, 49],
        [51, 49],
        [51, 51],
        [49, 51],
        [49, 49],
      ];
      const d = await store.delete('Well', { surfaceLoc: { polygon: [square] } });
      expect(d.count).toBe(want.length);
      expect(rtreeRows(store)).toBe(n - want.length);
      expect((await inBox(store, all)).length).toBe(n - want.length);
      expectTreeMatchesDocs(store);
    } finally {
      store.close();
    }
  });
});

describe('random write sequences (model-based)', () => {
  type Loc = [number, number] | null | undefined;
  interface ModelDoc {
    id: string;
    pwi: string;
    loc: Loc;
  }
  const loc: fc.Arbitrary<Loc> = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 })).map(([x, y]) => [x, y] as [number, number]),
  );
  const pwi = fc.constantFrom('P0', 'P1', 'P2', 'P3', 'P4', 'P5');
  const op = fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), docs: fc.array(fc.record({ pwi, loc }), { minLength: 1, maxLength: 3 }), atomic: fc.boolean() }),
    fc.record({ kind: fc.constant('update' as const), pwi, loc: loc.filter((l) => l !== undefined) }),
    fc.record({ kind: fc.constant('updateByBox' as const), box: fc.tuple(fc.nat(4), fc.nat(4), fc.nat(4), fc.nat(4)), loc: loc.filter((l) => l !== undefined) }),
    fc.record({ kind: fc.constant('replace' as const), target: fc.nat(), pwi, loc }),
    fc.record({ kind: fc.constant('delete' as const), pwi }),
    fc.record({ kind: fc.constant('deleteByBox' as const), box: fc.tuple(fc.nat(4), fc.nat(4), fc.nat(4), fc.nat(4)) }),
  );
  const boxes = [
    [0, 0, 4, 4],
    [1, 1, 2, 3],
    [3, 3, 0, 0],
    [2, 2, 2, 2],
  ];
  const inModelBox = (l: Loc, b: readonly number[]) => {
    if (!l) return false;
    const [x1, y1, x2, y2] = b as [number, number, number, number];
    return l[0] >= Math.min(x1, x2) && l[0] <= Math.max(x1, x2) && l[1] >= Math.min(y1, y2) && l[1] <= Math.max(y1, y2);
  };
  const geo = (l: Loc) => (l === undefined ? {} : { surfaceLoc: l === null ? null : point(l[0], l[1]) });

  it('bounds results and the R*Tree equal a model after every write (including failed ones)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const store = DataStore.open();
        let model: ModelDoc[] = [];
        try {
          for (const o of ops) {
            switch (o.kind) {
              case 'insert': {
                const r = await store.insert('Well', o.docs.map((d) => ({ pwi: d.pwi, ...geo(d.loc) })), { atomic: o.atomic });
                const taken = new Set(model.map((m) => m.pwi));
                const added: Omit<ModelDoc, 'id'>[] = [];
                for (const d of o.docs) {
                  if (taken.has(d.pwi)) continue;
                  taken.add(d.pwi);
                  added.push({ pwi: d.pwi, loc: d.loc });
                }
                const collided = added.length < o.docs.length;
                if (collided && o.atomic) {
                  expect(r.count).toBe(0);
                } else {
                  expect(r.insertedIds).toHaveLength(added.length);
                  model.push(...added.map((a, i) => ({ ...a, id: r.insertedIds[i]! })));
                }
                expect(r.success).toBe(!collided);
                break;
              }
              case 'update': {
                const r = await store.update('Well', { pwi: o.pwi }, geo(o.loc));
                const hit = model.filter((m) => m.pwi === o.pwi);
                expect(r.count).toBe(hit.length);
                for (const m of hit) m.loc = o.loc;
                break;
              }
              case 'updateByBox': {
                const r = await store.update('Well', { surfaceLoc: { bounds: [...o.box] } }, geo(o.loc));
                const hit = model.filter((m) => inModelBox(m.loc, o.box));
                expect(r.count).toBe(hit.length);
                for (const m of hit) m.loc = o.loc;
                break;
              }
              case 'replace': {
                // Replace an existing document (if any) whole; a pwi held by another document rolls it back.
                const target = model.length ? model[o.target % model.length]! : undefined;
                const r = await store.replace('Well', [{ ...(target ? { id: target.id } : {}), pwi: o.pwi, ...geo(o.loc) }]);
                const clash = model.some((m) => m.pwi === o.pwi && m !== target);
                expect(r.success).toBe(!clash);
                if (!clash) {
                  if (target) {
                    target.pwi = o.pwi;
                    target.loc = o.loc;
                  } else model.push({ id: r.insertedIds[0]!, pwi: o.pwi, loc: o.loc });
                }
                break;
              }
              case 'delete': {
                const r = await store.delete('Well', { pwi: o.pwi });
                expect(r.count).toBe(model.filter((m) => m.pwi === o.pwi).length);
                model = model.filter((m) => m.pwi !== o.pwi);
                break;
              }
              case 'deleteByBox': {
                const r = await store.delete('Well', { surfaceLoc: { bounds: [...o.box] } });
                expect(r.count).toBe(model.filter((m) => inModelBox(m.loc, o.box)).length);
                model = model.filter((m) => !inModelBox(m.loc, o.box));
                break;
              }
            }
            for (const b of boxes) {
              const r = await store.dynamic.query('Well', { surfaceLoc: { bounds: b } });
              expect(r.data.map((d) => d.id), `${JSON.stringify(o)} then bounds ${JSON.stringify(b)}`).toEqual(
                model.filter((m) => inModelBox(m.loc, b)).map((m) => m.id),
              );
            }
            expect(rtreeRows(store)).toBe(model.filter((m) => m.loc).length);
          }
        } finally {
          store.close();
        }
      }),
      { numRuns: Math.max(30, Math.floor(fuzzRuns(300) / 3)) },
    );
  });
});
