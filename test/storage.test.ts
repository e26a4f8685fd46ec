/** Storage names, files that are not stores, older layouts, and the key a collision names. */
import { writeFileSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DataStore, DynamicStore, NotAStoreError, StoreBusyError, type SqliteDataStore, type SqliteDynamicStore } from '../src/index.js';
import { openPostgres } from '../src/postgres/index.js';
import { encodeName, indexName, rtreeTable } from '../src/sqlite/names.js';
import { tempDir } from './helpers/store.js';

const point = (x: number, y: number) => ({ type: 'Point' as const, coordinates: [x, y] });

describe('storage names', () => {
  it('encode identifiers injectively and case-proof', () => {
    expect(encodeName('surfaceLoc')).toBe('surface_loc');
    expect(encodeName('A_b')).toBe('_a__b');
    const names = [rtreeTable('A', 'b_c'), rtreeTable('A_b', 'c'), rtreeTable('T', 'loc'), rtreeTable('T', 'Loc')];
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
    expect(indexName('ix', 'A', ['a', 'b'])).not.toBe(indexName('ix', 'A', ['a_b']));
  });

  it('give types A{b_c} and A_b{c} their own R*Trees: each finds its own points', async () => {
    const types = { A: { b_c: 'GeoPoint' }, A_b: { c: 'GeoPoint' } } as const;
    const store = DynamicStore.open(':memory:', { types });
    try {
      expect((await store.insert('A', [{ id: 'a', b_c: point(1, 1) }])).success).toBe(true);
      expect((await store.insert('A_b', [{ id: 'ab', c: point(5, 5) }])).success).toBe(true);
      expect((await store.query('A', { b_c: { bounds: [0, 0, 2, 2] } })).data.map((d) => d.id)).toEqual(['a']);
      expect((await store.query('A_b', { c: { bounds: [4, 4, 6, 6] } })).data.map((d) => d.id)).toEqual(['ab']);
      expect((await store.query('A_b', { c: { bounds: [0, 0, 2, 2] } })).data).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('give GeoPoint fields differing only in case their own R*Trees', async () => {
    const store = DynamicStore.open(':memory:', { types: { T: { loc: 'GeoPoint', Loc: 'GeoPoint' } } });
    try {
      await store.insert('T', [{ id: 't', loc: point(1, 1), Loc: point(50, 50) }]);
      expect((await store.query('T', { loc: { bounds: [0, 0, 2, 2] } })).data.map((d) => d.id)).toEqual(['t']);
      expect((await store.query('T', { Loc: { bounds: [0, 0, 2, 2] } })).data).toEqual([]);
      expect((await store.query('T', { Loc: { bounds: [49, 49, 51, 51] } })).data.map((d) => d.id)).toEqual(['t']);
    } finally {
      store.close();
    }
  });
});

describe('opening a file that is not a store', () => {
  it("refuses someone else's SQLite tables and changes nothing", () => {
    const t = tempDir();
    try {
      const other = new Database(t.file());
      other.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
      other.close();
      let error: unknown;
      try {
        DataStore.open(t.file());
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(NotAStoreError);
      expect((error as NotAStoreError).code).toBe('NOT_A_STORE');
      expect((error as Error).message).toMatch(/not a consolidata store.*customers/);
      const after = new Database(t.file(), { readonly: true });
      expect(after.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all()).toEqual(['customers']);
      after.close();
    } finally {
      t.cleanup();
    }
  });

  it('refuses a file that is not SQLite at all', () => {
    const t = tempDir();
    try {
      writeFileSync(t.file(), 'name,id\nW1,1\n'.repeat(100));
      expect(() => DataStore.open(t.file())).toThrow(/is not a SQLite database/);
      expect(existsSync(`${t.file()}-wal`)).toBe(false);
    } finally {
      t.cleanup();
    }
  });

  it('names the file and its missing directory when the directory does not exist (TypeError), and creates nothing', () => {
    const t = tempDir();
    try {
      const file = `${t.dir}/no/such/dir/x.db`;
      expect(() => DataStore.open(file)).toThrow(TypeError);
      expect(() => DataStore.open(file)).toThrow(`${file}: cannot open: the directory ${t.dir}/no/such/dir does not exist`);
      expect(() => DataStore.open('no/such/dir/x.db')).toThrow('no/such/dir/x.db: cannot open: the directory no/such/dir does not exist');
      expect(existsSync(`${t.dir}/no`)).toBe(false);
      // A path SQLite cannot open for another reason (here a directory) is named too, the error's code kept.
      expect(() => DataStore.open(t.dir)).toThrow(expect.objectContaining({ code: 'SQLITE_CANTOPEN', message: `${t.dir}: unable to open database file` }));
    } finally {
      t.cleanup();
    }
  });

  it('opens an empty SQLite file as a new store', async () => {
    const t = tempDir();
    try {
      new Database(t.file()).close();
      const store = DataStore.open(t.file());
      expect((await store.insert('Well', [{ pwi: 'W1' }])).success).toBe(true);
      store.close();
    } finally {
      t.cleanup();
    }
  });
});

describe('new in-memory stores', () => {
  const schemaOf = (store: SqliteDataStore | SqliteDynamicStore) =>
    (store.database.prepare(`SELECT type, name, sql FROM sqlite_master ORDER BY type, name`).all() as { type: string; name: string; sql: string | null }[]).map((o) => `${o.type} ${o.name} ${o.sql ?? ''}`);

  it('of one schema hold the same schema as the first and share nothing; other options get their own', async () => {
    // Opened first with each set of options: a later store of the same options must hold the same schema and none of its rows.
    const first = DataStore.open();
    const indexed = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['basinName'] }] } });
    const journaled = DataStore.open(':memory:', { history: ['Well'], softDelete: ['Well'] });
    const custom = DynamicStore.open(':memory:', { types: { Pad: { loc: 'GeoPoint' } } });
    await first.insert('Well', [{ id: 'w1', pwi: 'P1' }]);
    const second = DataStore.open();
    expect(schemaOf(second)).toEqual(schemaOf(first));
    expect((await second.query('Well', {})).total).toBe(0);
    // A unique key of the copy holds: the first store's row is not in it.
    expect((await second.insert('Well', [{ id: 'w2', pwi: 'P1' }])).success).toBe(true);
    expect((await second.insert('Well', [{ id: 'w3', pwi: 'P1' }])).errors[0]?.code).toBe('DUPLICATE_KEY');
    expect((await first.query('Well', {})).data.map((d) => d.id)).toEqual(['w1']);

    const indexedAgain = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['basinName'] }] } });
    expect(schemaOf(indexedAgain)).toEqual(schemaOf(indexed));
    expect(schemaOf(indexedAgain).some((o) => o.includes('ix._well.basin_name'))).toBe(true);
    expect(schemaOf(DataStore.open()).some((o) => o.includes('ix._well.basin_name'))).toBe(false);

    // History and soft delete come with the copy: the triggers keep versions, a delete stamps.
    const journaledAgain = DataStore.open(':memory:', { history: ['Well'], softDelete: ['Well'] });
    expect(schemaOf(journaledAgain)).toEqual(schemaOf(journaled));
    const ins = await journaledAgain.insert('Well', [{ pwi: 'J1' }]);
    await journaledAgain.update('Well', { pwi: 'J1' }, { statusCurrent: 'Shut-In' });
    await journaledAgain.delete('Well', { pwi: 'J1' });
    expect((await journaledAgain.dynamic.query('VersionDocument', { oid: ins.insertedIds[0] })).total).toBe(3);
    expect((await journaledAgain.query('Well', {}, { includeDeleted: true })).total).toBe(1);
    expect((await second.delete('Well', { pwi: 'P1' })).count).toBe(1);
    expect((await second.query('Well', {}, { includeDeleted: true })).total).toBe(0);

    const customAgain = DynamicStore.open(':memory:', { types: { Pad: { loc: 'GeoPoint' } } });
    expect(schemaOf(customAgain)).toEqual(schemaOf(custom));
    await customAgain.insert('Pad', [{ id: 'p', loc: point(1, 1) }]);
    expect((await customAgain.query('Pad', { loc: { bounds: [0, 0, 2, 2] } })).data.map((d) => d.id)).toEqual(['p']);
    for (const s of [first, second, indexed, indexedAgain, journaled, journaledAgain, custom, customAgain]) s.close();
  });
});

describe('mmapSize', () => {
  it('maps 2 GiB of a file store by default; 0 reads through read() alone, with the same answers', async () => {
    const t = tempDir();
    try {
      const mapped = DataStore.open(t.file());
      // Asked for 2 GiB; SQLite caps the map at its compiled maximum (SQLITE_MAX_MMAP_SIZE, 0x7fff0000).
      expect(mapped.database.pragma('mmap_size', { simple: true })).toBe(0x7fff0000);
      await mapped.insert('Well', [{ id: 'w1', pwi: 'P1' }, { id: 'w2', pwi: 'P2' }]);
      mapped.close();
      const plain = DataStore.open(t.file(), { mmapSize: 0 });
      expect(plain.database.pragma('mmap_size', { simple: true })).toBe(0);
      expect((await plain.query('Well', { pwi: 'P2' })).data.map((d) => d.id)).toEqual(['w2']);
      plain.close();
    } finally {
      t.cleanup();
    }
  });

  it('refuses a size that is not a non-negative integer, and on PostgreSQL refuses it at all', async () => {
    for (const bad of [-1, 1.5, Number.NaN, '0'] as unknown[]) {
      expect(() => DataStore.open(':memory:', { mmapSize: bad as number })).toThrow(RangeError);
    }
    expect(() => DataStore.open(':memory:', { mmapSize: -1 })).toThrow(/DataStore.open: mmapSize must be a non-negative integer of bytes/);
    await expect(openPostgres('postgres://nobody@127.0.0.1:1/none', { mmapSize: 0 })).rejects.toThrow(/openPostgres: mmapSize maps a SQLite file/);
  });
});

describe('opening a file another connection is writing', () => {
  it('opens without waiting when the schema is unchanged; a schema change waits, then STORE_BUSY changes nothing', async () => {
    const t = tempDir();
    try {
      const store = DataStore.open(t.file());
      await store.insert('Well', [{ id: 'w1', pwi: 'P1', name: 'one' }]);
      store.close();
      const writer = new Database(t.file());
      writer.exec('BEGIN IMMEDIATE');
      writer.prepare(`INSERT INTO "docs_Well" (id, doc) VALUES ('w2', jsonb('{"id":"w2"}'))`).run();
      try {
        // Same schema: nothing to write, so the writer's lock is no obstacle.
        const same = DataStore.open(t.file(), { busyTimeoutMs: 20 });
        expect((await same.query('Well', {})).data.map((d) => d.id)).toEqual(['w1']);
        same.close();
        let error: unknown;
        try {
          DataStore.open(t.file(), { busyTimeoutMs: 20, indexes: { Well: [{ fields: ['spudDate'] }] } });
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(StoreBusyError);
        expect((error as StoreBusyError).code).toBe('STORE_BUSY');
        expect((error as Error).message).toMatch(/held the write lock through 3 waits of 20 ms.*nothing was changed/);
        expect((error as Error).message).not.toMatch(/database is locked/);
      } finally {
        writer.exec('COMMIT');
        writer.close();
      }
      const indexes = () => {
        const db = new Database(t.file(), { readonly: true });
        const names = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '%spudDate%'`).pluck().all();
        db.close();
        return names;
      };
      expect(indexes()).toEqual([]);
      // Once the lock is gone, the same open brings the schema up to date.
      const after = DataStore.open(t.file(), { indexes: { Well: [{ fields: ['spudDate'] }] } });
      expect((await after.query('Well', {})).data.map((d) => d.id)).toEqual(['w1', 'w2']);
      after.close();
      expect(indexes()).toHaveLength(1);
    } finally {
      t.cleanup();
    }
  });
});

describe('a file of the first layout (names from raw identifiers)', () => {
  /** The DDL the first layout wrote for Wells, with one document in it. */
  function legacyFile(file: string): void {
    const db = new Database(file);
    const x = `json_extract(new.doc, '$."surfaceLoc"."coordinates"[0]')`;
    const y = `json_extract(new.doc, '$."surfaceLoc"."coordinates"[1]')`;
    db.exec(`
      CREATE TABLE cd_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO cd_meta VALUES ('schema', 'an older fingerprint');
      CREATE TABLE "docs_Well" (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc BLOB NOT NULL);
      CREATE UNIQUE INDEX "ux_Well_pwi" ON "docs_Well" (json_extract(doc, '$."pwi"'));
      CREATE UNIQUE INDEX "ux_Well_wellId" ON "docs_Well" (json_extract(doc, '$."wellId"'));
      CREATE INDEX "ix_Well_basinName" ON "docs_Well" (json_extract(doc, '$."basinName"'));
      CREATE VIRTUAL TABLE "rtree_Well_surfaceLoc" USING rtree(id, minX, maxX, minY, maxY);
      CREATE TRIGGER "rtree_Well_surfaceLoc_ai" AFTER INSERT ON "docs_Well" BEGIN
        INSERT INTO "rtree_Well_surfaceLoc" SELECT new.rowid, ${x}, ${x}, ${y}, ${y} WHERE ${x} IS NOT NULL;
      END;
    `);
    db.prepare(`INSERT INTO "docs_Well" (id, doc) VALUES (?, jsonb(?))`).run('w1', JSON.stringify({ id: 'w1', pwi: 'P1', wellId: 'X', basinName: 'Permian', surfaceLoc: point(-101, 31) }));
    db.close();
  }

  it('is migrated on open: encoded names, filled R*Trees, every index kept, nothing lost', async () => {
    const t = tempDir();
    try {
      legacyFile(t.file());
      const store = DataStore.open(t.file());
      const names = store.database.prepare(`SELECT name FROM sqlite_master WHERE type IN ('index', 'table', 'trigger')`).pluck().all() as string[];
      expect(names.filter((n) => /^(rtree|ux|ix)_/.test(n))).toEqual([]);
      expect(names).toContain(rtreeTable('Well', 'surfaceLoc'));
      // An index the options no longer list is kept under its new name, and still enforced.
      expect(names).toContain(indexName('ux', 'Well', ['wellId']));
      expect(names).toContain(indexName('ix', 'Well', ['basinName']));
      expect((await store.query('Well', { surfaceLoc: { bounds: [-102, 30, -100, 32] } })).data.map((d) => d.id)).toEqual(['w1']);
      const dup = await store.insert('Well', [{ pwi: 'P2', wellId: 'X' }]);
      expect(dup.errors[0]?.code).toBe('DUPLICATE_KEY');
      expect(dup.errors[0]?.key).toEqual({ wellId: 'X' });
      await store.insert('Well', [{ id: 'w2', pwi: 'P3', surfaceLoc: point(-101.5, 31.5) }]);
      expect((await store.query('Well', { surfaceLoc: { bounds: [-102, 30, -100, 32] } })).data.map((d) => d.id)).toEqual(['w1', 'w2']);
      store.close();
      // A second open finds the new layout and changes nothing.
      const again = DataStore.open(t.file());
      expect((await again.query('Well', {})).total).toBe(2);
      again.close();
    } finally {
      t.cleanup();
    }
  });
});

describe('DUPLICATE_KEY', () => {
  it('names the unique key that collided, also one the options no longer list', async () => {
    const t = tempDir();
    try {
      const first = DataStore.open(t.file(), { indexes: { Well: [{ fields: ['wellId'], unique: true }] } });
      await first.insert('Well', [{ pwi: 'A', wellId: '1' }]);
      first.close();
      const store = DataStore.open(t.file());
      const r = await store.insert('Well', [{ pwi: 'B', wellId: '1' }]);
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatchObject({ code: 'DUPLICATE_KEY', index: 0, key: { wellId: '1' } });
      expect(r.errors[0]!.message).toMatch(/wellId "1"/);
      await store.insert('Well', [{ pwi: 'B', wellId: '2' }]);
      const u = await store.update('Well', { pwi: 'B' }, { wellId: '1' });
      expect(u.errors[0]?.code).toBe('DUPLICATE_KEY');
      expect(u.errors[0]?.message).toMatch(/wellId/);
      const id = await store.insert('Well', [{ id: (await store.query('Well', { pwi: 'A' })).data[0]!.id!, pwi: 'C' }]);
      expect(id.errors[0]).toMatchObject({ code: 'DUPLICATE_KEY', key: { id: expect.any(String) } });
      store.close();
    } finally {
      t.cleanup();
    }
  });
});

describe('insertMany', () => {
  it('writes every part in one transaction, or none: a refused later part rolls back the earlier ones', async () => {
    const store = DynamicStore.open();
    try {
      const r = await store.insertMany([
        { type: 'Well', docs: [{ pwi: 'A' }] },
        { type: 'DailyProduction', docs: [{ pwi: 'A', oilRate: 'lots' }] },
      ]);
      expect(r.map((e) => e.success)).toEqual([false, false]);
      expect(r[1]!.errors[0]).toMatchObject({ code: 'VALIDATION', field: 'oilRate' });
      expect(r[0]!.errors[0]!.message).toMatch(/part 0 was rolled back: part 1 failed/);
      expect((await store.query('Well', {})).total).toBe(0);
      const ok = await store.insertMany([{ type: 'Well', docs: [{ pwi: 'A' }] }, { type: 'DailyProduction', docs: [{ pwi: 'A', oilRate: 5 }] }]);
      expect(ok.map((e) => e.count)).toEqual([1, 1]);
    } finally {
      store.close();
    }
  });
});

describe('snapshots of file stores', () => {
  it('open in memory with fromSnapshot (the WAL header is turned into a rollback-journal one)', async () => {
    const t = tempDir();
    try {
      const file = DynamicStore.open(t.file());
      await file.insert('Well', [{ pwi: 'A', surfaceLoc: point(1, 1) }]);
      const snap = file.snapshot();
      file.close();
      const copy = DynamicStore.fromSnapshot(snap);
      expect((await copy.query('Well', { surfaceLoc: { bounds: [0, 0, 2, 2] } })).data.map((d) => d.pwi)).toEqual(['A']);
      copy.close();
    } finally {
      t.cleanup();
    }
  });
});
