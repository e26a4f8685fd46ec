/**
 * The document cache (option documentCache): a cached read answers what a read without it answers, as frozen objects;
 * every write invalidates it, whoever makes it (this store, another connection, another process, SQL run through
 * `store.database`); maxBytes bounds what it holds; bad option values are refused naming the option.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DataStore, type OpenOptions } from '../src/index.js';
import { createPool } from '../src/pool/pool.js';
import { openPostgres } from '../src/postgres/index.js';
import { removeBundles, workerScript } from './pool/helpers.js';
import { tempDir } from './helpers/store.js';

const CACHE = { documentCache: { maxBytes: 64 * 1024 * 1024 } };
const BASINS = ['Permian', 'Bakken', 'Eagle Ford', 'DJ'];

/** n Wells on a grid of points, with dates and basins enough for ranges, boxes and polygons. */
function wells(n: number, from = 0) {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      pwi: `W${String(i).padStart(5, '0')}`,
      basinName: BASINS[i % BASINS.length]!,
      spudDate: new Date(Date.UTC(2019, 0, 1 + (i % 365))).toISOString(),
      lateralLength: (i * 37) % 10_000,
      surfaceLoc: { type: 'Point' as const, coordinates: [-104 + (i % 50) * 0.1, 30 + Math.floor(i / 50) * 0.1] },
      extra: { tags: [`t${i % 7}`], nested: { depth: i } },
    };
  });
}

const POLYGON = [
  [[-103.5, 30.2], [-100.5, 30.2], [-100.5, 33], [-103.5, 33], [-103.5, 30.2]],
  [[-102.5, 31], [-101.5, 31], [-101.5, 32], [-102.5, 32], [-102.5, 31]],
];

/** Reads of every shape the store answers: whole, ranges, boxes, polygons, pages, cursors, sorts, projections, distances. */
const READS: [string, unknown, unknown?][] = [
  ['Well', {}],
  ['Well', { spudDate: { gte: '2019-03-01', lt: '2019-06-01' } }],
  ['Well', { surfaceLoc: { bounds: [-103, 31, -101, 33] } }],
  ['Well', { surfaceLoc: { polygon: POLYGON } }],
  ['Well', { basinName: 'Permian' }, { sortBy: 'spudDate', sortOrder: -1, limit: 25 }],
  ['Well', { basinName: { in: ['Bakken', 'DJ'] } }, { limit: 10, skip: 30 }],
  ['Well', {}, { skip: 490 }],
  ['Well', { lateralLength: { gt: 5000 } }, { sortBy: 'lateralLength', limit: 40 }],
  ['Well', { pwi: 'W00042' }],
  ['Well', { basinName: 'DJ' }, { fields: ['pwi', 'basinName'] }],
  ['Well', { surfaceLoc: { near: { point: [-102, 31], maxDistance: 30_000 } } }, { sortBy: 'surfaceLoc', distance: 'dist' }],
  ['Well', { surfaceLoc: { near: { point: [-102, 31], maxDistance: 30_000 } } }, { sortBy: 'surfaceLoc', limit: 5 }],
];

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** A file store with the cache and a plain store on the same file: the plain one answers as the file is now. */
function pair(options: OpenOptions = {}) {
  const tmp = tempDir();
  const file = tmp.file();
  const cached = DataStore.open(file, { ...options, ...CACHE });
  const plain = DataStore.open(file, options);
  cleanups.push(() => {
    cached.close();
    plain.close();
    tmp.cleanup();
  });
  return { file, cached, plain };
}

/** Every READS answer of a store, without its activity ids (each envelope's own). */
async function answers(store: DataStore, reads = READS) {
  const out = [];
  for (const [type, query, options] of reads) out.push(await store.dynamic.query(type, query, options));
  return out;
}

/** Every page of a query by cursor, and `iterate`'s documents. */
async function paged(store: DataStore, query: unknown, options: Record<string, unknown>) {
  const pages: unknown[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<DataStore['dynamic']['query']>> = await store.dynamic.query('Well', query, { ...options, ...(cursor ? { cursor } : {}) });
    pages.push(page.data);
    cursor = page.cursor;
  } while (cursor);
  const iterated = [];
  for await (const d of store.dynamic.iterate('Well', query, { ...options, batchSize: 37 })) iterated.push(d);
  return { pages, iterated };
}

/** The cached store answers every read as the plain one does. */
async function expectFresh(cached: DataStore, plain: DataStore) {
  expect(await answers(cached)).toEqual(await answers(plain));
}

describe('documentCache', () => {
  it('answers every read shape as a store without it, from the cache the second time', async () => {
    const { cached, plain } = pair();
    await plain.insert('Well', wells(500));
    const first = await answers(cached);
    const missed = cached.documentCacheStats()!;
    expect(missed.misses).toBeGreaterThan(0);
    expect(missed.entries).toBe(500);
    const second = await answers(cached);
    const after = cached.documentCacheStats()!;
    expect(first).toEqual(await answers(plain));
    expect(second).toEqual(first);
    // The second round read no document from the database.
    expect(after.misses).toBe(missed.misses);
    expect(after.hits).toBeGreaterThan(missed.hits);
    expect(await paged(cached, { basinName: { in: ['Permian', 'DJ'] } }, { limit: 40 })).toEqual(await paged(plain, { basinName: { in: ['Permian', 'DJ'] } }, { limit: 40 }));
    expect(await paged(cached, {}, { sortBy: 'spudDate', limit: 64 })).toEqual(await paged(plain, {}, { sortBy: 'spudDate', limit: 64 }));
  });

  it('answers frozen documents, the same objects on each read; without it each read answers fresh copies', async () => {
    const { cached, plain } = pair();
    await plain.insert('Well', wells(3));
    const [a] = (await cached.query('Well', { pwi: 'W00001' })).data;
    const [b] = (await cached.query('Well', {})).data.slice(1);
    expect(b).toBe(a);
    expect(Object.isFrozen(a) && Object.isFrozen(a!.surfaceLoc) && Object.isFrozen(a!.extra!.tags)).toBe(true);
    // Test files are modules: strict mode, so writing to a frozen object throws.
    expect(() => {
      (a as Record<string, unknown>).basinName = 'x';
    }).toThrow(TypeError);
    const [c] = (await plain.query('Well', { pwi: 'W00001' })).data;
    const [d] = (await plain.query('Well', { pwi: 'W00001' })).data;
    expect(c).not.toBe(d);
    expect(Object.isFrozen(c)).toBe(false);
    expect(plain.documentCacheStats()).toBeNull();
  });

  it("sees each of this store's writes: insert, load, replace, update, delete, purge, restore", async () => {
    const { cached, plain } = pair();
    const warm = () => answers(cached);
    await cached.insert('Well', wells(200));
    await warm();
    await cached.insert('Well', wells(20, 200));
    await expectFresh(cached, plain);
    await cached.load('Well', wells(30, 220), { batchSize: 7 });
    await expectFresh(cached, plain);
    await cached.load('Well', wells(30, 250), { atomic: true });
    await expectFresh(cached, plain);
    const [w] = (await cached.query('Well', { pwi: 'W00042' })).data;
    await cached.replace('Well', [{ ...w!, basinName: 'Replaced', surfaceLoc: { type: 'Point', coordinates: [-102, 32] } }]);
    await expectFresh(cached, plain);
    await cached.update('Well', { basinName: 'Permian' }, { statusCurrent: 'Producing', 'extra.nested.depth': -1 });
    await expectFresh(cached, plain);
    await cached.delete('Well', { spudDate: { lt: '2019-02-01' } });
    await expectFresh(cached, plain);
    // The newest rows go, then their rowids are taken again by new documents.
    await cached.delete('Well', { pwi: { in: ['W00279', 'W00278'] } });
    await warm();
    await cached.insert('Well', [{ pwi: 'N1', basinName: 'Permian', spudDate: '2019-04-01' }, { pwi: 'N2', basinName: 'DJ', spudDate: '2019-04-02' }]);
    await expectFresh(cached, plain);
    await cached.dynamic.purge('Well', { basinName: 'DJ' });
    await expectFresh(cached, plain);
  });

  it('sees soft deletes and revivals, with history, the change feed and the activity log on', async () => {
    const options: OpenOptions = { softDelete: true, history: true, changeFeed: true, activityLog: true };
    const { cached, plain } = pair(options);
    await cached.insert('Well', wells(120));
    await answers(cached);
    const [w] = (await cached.query('Well', { pwi: 'W00007' })).data;
    await cached.delete('Well', { basinName: 'Bakken' });
    await expectFresh(cached, plain);
    const deleted = { includeDeleted: true, sortBy: 'pwi' } as const;
    expect((await cached.query('Well', { pwi: 'W00001' }, deleted)).data).toEqual((await plain.query('Well', { pwi: 'W00001' }, deleted)).data);
    await cached.replace('Well', [{ ...w!, basinName: 'Revived' }]);
    await expectFresh(cached, plain);
    const journal: [string, unknown, unknown?][] = [['VersionDocument', {}], ['ActivityLog', {}]];
    await answers(cached, journal);
    await cached.update('Well', { pwi: 'W00002' }, { name: 'renamed' });
    expect(await answers(cached, journal)).toEqual(await answers(plain, journal));
    expect((await cached.history('Well', w!.id)).data).toEqual((await plain.history('Well', w!.id)).data);
  });

  it('sees writes of another connection: a second store and raw SQL on the file', async () => {
    const { file, cached, plain } = pair();
    await plain.insert('Well', wells(200));
    await answers(cached);
    await plain.update('Well', { basinName: 'DJ' }, { statusCurrent: 'Shut-in' });
    await expectFresh(cached, plain);
    await answers(cached);
    const raw = new Database(file);
    try {
      raw.prepare(`UPDATE "docs_Well" SET doc = jsonb_set(doc, '$.basinName', 'Raw') WHERE json_extract(doc, '$.pwi') = 'W00003'`).run();
    } finally {
      raw.close();
    }
    const [w] = (await cached.query('Well', { pwi: 'W00003' })).data;
    expect(w!.basinName).toBe('Raw');
    await expectFresh(cached, plain);
  });

  it('sees writes of another process', async () => {
    const { file, cached, plain } = pair();
    await plain.insert('Well', wells(100));
    await answers(cached);
    const script = `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
      const db = new D(process.argv[1]);
      db.prepare("UPDATE docs_Well SET doc = jsonb_set(doc, '$.lateralLength', 99999)").run();
      db.prepare("DELETE FROM docs_Well WHERE json_extract(doc, '$.pwi') = 'W00099'").run();
      db.close();`;
    execFileSync(process.execPath, ['-e', script, file]);
    expect((await cached.query('Well', { lateralLength: 99999 })).total).toBe(99);
    await expectFresh(cached, plain);
  });

  it('sees SQL run on its own connection through store.database', async () => {
    const { cached, plain } = pair();
    await cached.insert('Well', wells(50));
    await answers(cached);
    cached.database.prepare(`UPDATE "docs_Well" SET doc = jsonb_set(doc, '$.basinName', 'Own') WHERE json_extract(doc, '$.pwi') = 'W00010'`).run();
    expect((await cached.query('Well', { pwi: 'W00010' })).data[0]!.basinName).toBe('Own');
    // Then a write of the store itself: the earlier SQL must not be taken for one of its own.
    await answers(cached);
    cached.database.prepare(`UPDATE "docs_Well" SET doc = jsonb_set(doc, '$.basinName', 'Own2') WHERE json_extract(doc, '$.pwi') = 'W00011'`).run();
    await cached.insert('DailyProduction', [{ pwi: 'W00011', prodDate: '2024-01-01' }]);
    expect((await cached.query('Well', { pwi: 'W00011' })).data[0]!.basinName).toBe('Own2');
    await expectFresh(cached, plain);
  });

  it('keeps nothing read inside a transaction held on store.database, which may roll back', async () => {
    const { cached, plain } = pair();
    await cached.insert('Well', wells(20));
    await answers(cached);
    cached.database.exec('BEGIN');
    cached.database.prepare(`UPDATE "docs_Well" SET doc = jsonb_set(doc, '$.basinName', 'Uncommitted') WHERE json_extract(doc, '$.pwi') = 'W00003'`).run();
    expect((await cached.query('Well', { pwi: 'W00003' })).data[0]!.basinName).toBe('Uncommitted');
    cached.database.exec('ROLLBACK');
    expect((await cached.query('Well', { pwi: 'W00003' })).data[0]!.basinName).not.toBe('Uncommitted');
    await expectFresh(cached, plain);
  });

  it('sees restore of an in-memory store', async () => {
    const store = DataStore.open(':memory:', CACHE);
    cleanups.push(() => store.close());
    await store.insert('Well', wells(40));
    const snap = store.snapshot();
    await store.update('Well', {}, { basinName: 'Changed' });
    expect((await store.query('Well', { pwi: 'W00001' })).data[0]!.basinName).toBe('Changed');
    store.restore(snap);
    expect((await store.query('Well', { pwi: 'W00001' })).data[0]!.basinName).toBe('Bakken');
  });

  it('holds at most maxBytes of JSON text, dropping the least recently used', async () => {
    const tmp = tempDir();
    const file = tmp.file();
    const maxBytes = 20_000;
    const store = DataStore.open(file, { documentCache: { maxBytes } });
    const plain = DataStore.open(file);
    cleanups.push(() => {
      store.close();
      plain.close();
      tmp.cleanup();
    });
    await store.insert('Well', wells(500));
    const text = (await plain.query('Well', {})).data.reduce((n, d) => n + JSON.stringify(d).length, 0);
    expect(text).toBeGreaterThan(10 * maxBytes);
    expect(await answers(store)).toEqual(await answers(plain));
    const stats = store.documentCacheStats()!;
    expect(stats.bytes).toBeLessThanOrEqual(maxBytes);
    expect(stats.entries).toBeGreaterThan(0);
    expect(stats.entries).toBeLessThan(500);
    expect(stats.maxBytes).toBe(maxBytes);
  });

  it("sees the writes of a pool's writer thread in its readers' caches", async () => {
    const tmp = tempDir();
    const file = tmp.file();
    const plain = DataStore.open(file);
    const pool = await createPool(file, { readers: 1, workerScript: await workerScript(), ...CACHE });
    cleanups.push(() => {
      plain.close();
      void pool.close().then(() => {
        removeBundles();
        tmp.cleanup();
      });
    });
    await pool.insert('Well', wells(300));
    const pages: [unknown, unknown][] = [
      [{ basinName: 'Permian' }, { limit: 50 }],
      [{ surfaceLoc: { bounds: [-103, 30, -101, 33] } }, { limit: 500 }],
      [{}, { sortBy: 'spudDate', limit: 20, skip: 100 }],
    ];
    const read = async (store: { query(t: string, q: unknown, o: unknown): Promise<{ data: unknown[]; total: number }> }) => {
      const out = [];
      for (const [q, o] of pages) out.push(await store.query('Well', q, o).then((r) => [r.data, r.total]));
      return out;
    };
    const dyn = (s: DataStore) => ({ query: (t: string, q: unknown, o: unknown) => s.dynamic.query(t, q, o) });
    const pooled = { query: (t: string, q: unknown, o: unknown) => pool.query(t as 'Well', q as never, o as never) };
    await read(pooled);
    await pool.update('Well', { basinName: 'Permian' }, { statusCurrent: 'Producing' });
    await pool.delete('Well', { pwi: { in: ['W00004', 'W00008'] } });
    expect(await read(pooled)).toEqual(await read(dyn(plain)));
  });

  it('runs the README example as written', async () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const block = /### Document cache\n[^]*?```ts\n([^]*?)```/.exec(readme)![1]!;
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    // The block is plain JavaScript besides its import: run it with DataStore given, on a file of the test's own.
    const code = block.replace(/^import .*$/m, '').replace("'wells.db'", JSON.stringify(tmp.file()));
    const AsyncFunction = (async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<Record<string, unknown>>;
    const out = await new AsyncFunction('DataStore', `${code}\nreturn { same, frozen, stats, status, store };`)(DataStore);
    cleanups.push(() => (out.store as DataStore).close());
    expect([out.same, out.frozen, out.status]).toEqual([true, true, 'Producing']);
    expect(out.stats).toMatchObject({ entries: 2, maxBytes: 268435456, hits: 2, misses: 2 });
  });

  it('refuses bad option values, naming the option', async () => {
    const bad: [unknown, RegExp, ErrorConstructor][] = [
      [1024, /documentCache must be \{ maxBytes: <positive integer of bytes> \}, got 1024/, TypeError],
      [null, /documentCache must be \{ maxBytes/, TypeError],
      [[1024], /documentCache must be \{ maxBytes/, TypeError],
      [{}, /documentCache\.maxBytes must be a positive integer of bytes, got undefined/, RangeError],
      [{ maxBytes: 0 }, /documentCache\.maxBytes must be a positive integer of bytes, got 0/, RangeError],
      [{ maxBytes: -5 }, /documentCache\.maxBytes/, RangeError],
      [{ maxBytes: 1.5 }, /documentCache\.maxBytes/, RangeError],
      [{ maxBytes: '1MB' }, /documentCache\.maxBytes must be a positive integer of bytes, got "1MB"/, RangeError],
      [{ maxBytes: 1024, maxbytes: 1 }, /documentCache: unknown option "maxbytes" \(did you mean "maxBytes"\?\)/, TypeError],
    ];
    for (const [value, message, kind] of bad) {
      expect(() => DataStore.open(':memory:', { documentCache: value } as OpenOptions)).toThrow(kind);
      expect(() => DataStore.open(':memory:', { documentCache: value } as OpenOptions)).toThrow(message);
    }
    await expect(openPostgres('postgres://nobody@127.0.0.1:1/none', { documentCache: { maxBytes: 1024 } })).rejects.toThrow(/openPostgres: documentCache keeps documents of a SQLite store/);
  });
});
