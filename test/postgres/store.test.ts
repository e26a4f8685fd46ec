/**
 * What only the PostgreSQL backend has to get right: its pool, its schema, text PostgreSQL cannot hold, the exact JSON
 * text beside jsonb, keys named from the server's own indexes, lock waits, large requests, and the indexes it uses.
 */
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { DataStore, StoreBusyError } from '../../src/index.js';
import { citusStatements, distributionOf, openPostgres } from '../../src/postgres/index.js';
import { pgCluster, postgresBackend } from '../helpers/backends.js';

postgresBackend();

let pool: pg.Pool;
let url: string;
let schemas = 0;
/** A schema of its own for each test. */
const fresh = () => `s${++schemas}`;

beforeAll(() => {
  ({ pool } = pgCluster());
  url = pgCluster().cluster.url;
});

describe('pool', () => {
  it('a store opened from a connection string ends its pool on close', async () => {
    const store = await openPostgres(url, { schema: fresh() });
    expect((await store.insert('Well', [{ pwi: 'A' }])).success).toBe(true);
    const count = async () => Number((await pool.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'consolidata'`)).rows[0].n);
    expect(await count()).toBeGreaterThan(0);
    await store.close();
    // Backends exit shortly after their client disconnects.
    for (let i = 0; i < 100 && (await count()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await count()).toBe(0);
    expect(() => store.query('Well', {})).toThrow(TypeError);
  });

  it('a store over a pool of yours leaves it open on close', async () => {
    const mine = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const store = await openPostgres(mine, { schema: fresh() });
      await store.close();
      expect((await mine.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await mine.end();
    }
  });

  it('takes its schema from the connection string\'s `schema` parameter unless the option names one; SQLite-only members throw', async () => {
    const named = await openPostgres(`${url}&schema=from_url`);
    const option = await openPostgres(`${url}&schema=from_url`, { schema: 'from_option' });
    try {
      await named.insert('Well', [{ pwi: 'A' }]);
      await option.insert('Well', [{ pwi: 'B' }]);
      const { rows } = await pool.query(`SELECT (SELECT count(*)::int FROM from_url."docs_Well") AS a, (SELECT count(*)::int FROM from_option."docs_Well") AS b`);
      expect(rows[0]).toEqual({ a: 1, b: 1 });
      // Not in the PostgreSQL store's type; a caller that reaches them anyway gets the TypeError that says why.
      // @ts-expect-error snapshot is a member of SQLite stores only
      expect(() => named.snapshot()).toThrow(/snapshot is only available on SQLite stores/);
      // @ts-expect-error database is a member of SQLite stores only
      expect(() => named.database).toThrow(/database is only available on SQLite stores/);
      // @ts-expect-error database is a member of SQLite stores only
      expect(() => named.dynamic.database).toThrow(/database is only available on SQLite stores/);
    } finally {
      await named.close();
      await option.close();
    }
  });

  it('refuses bad options at once', async () => {
    await expect(openPostgres(url, { schema: '' })).rejects.toThrow(TypeError);
    await expect(openPostgres(url, { pool: { max: 0 } })).rejects.toThrow(RangeError);
    await expect(openPostgres(url, { schem: 'x' } as never)).rejects.toThrow(/did you mean "schema"/);
    await expect(openPostgres(42 as never)).rejects.toThrow(TypeError);
  });
});

describe('schema', () => {
  it('is created when missing, by two stores opening it at once, and adds later indexes without dropping any', async () => {
    const schema = fresh();
    const [a, b] = await Promise.all([openPostgres(pool, { schema }), openPostgres(pool, { schema })]);
    await a.insert('Well', [{ pwi: 'A' }]);
    expect((await b.query('Well', {})).total).toBe(1);
    await Promise.all([a.close(), b.close()]);
    const c = await openPostgres(pool, { schema, indexes: { Well: [{ fields: ['basinName'] }] } });
    await c.close();
    const d = await openPostgres(pool, { schema });
    await d.close();
    const { rows } = await pool.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'docs_Well' ORDER BY indexname`, [schema]);
    expect(rows.map((r) => r.indexname)).toEqual(expect.arrayContaining(['ix._well.basin_name', 'ux._well.pwi', 'ux._well.id', 'gx._well.surface_loc']));
  });

  it('refuses a database that is not UTF8', async () => {
    await pool.query(`CREATE DATABASE ascii_db TEMPLATE template0 ENCODING 'SQL_ASCII'`);
    const ascii = url.replace('/postgres?', '/ascii_db?');
    await expect(openPostgres(ascii)).rejects.toThrow(/needs a UTF8 database/);
  });
});

describe('text PostgreSQL cannot hold', () => {
  it('a document holding U+0000 or an unpaired surrogate is a VALIDATION error naming index and field; nothing is written', async () => {
    const store = await openPostgres(pool, { schema: fresh() });
    try {
      const r = await store.insert('Well', [{ pwi: 'ok' }, { pwi: 'a\u0000b' }, { pwi: 'x', extra: { ['k\ud800']: 1 } }]);
      expect(r.success).toBe(false);
      expect(r.errors.map((e) => [e.code, e.index, e.field])).toEqual([
        ['VALIDATION', 1, 'pwi'],
        ['VALIDATION', 2, 'extra'],
      ]);
      expect((await store.query('Well', {})).total).toBe(0);
      await store.insert('Well', [{ pwi: 'A' }]);
      const u = await store.update('Well', { pwi: 'A' }, { 'extra.note': 'x\u0000' });
      expect(u.errors[0]).toMatchObject({ code: 'VALIDATION', field: 'extra.note' });
    } finally {
      await store.close();
    }
  });

  it('query operands holding them answer as no stored value equals them, and compare by UTF-8 bytes', async () => {
    const store = await openPostgres(pool, { schema: fresh() });
    try {
      await store.insert('Well', [{ id: 'a', pwi: 'a' }, { id: 'b', pwi: 'b' }, { id: 'c', pwi: 'b\u0001' }, { id: 'd', pwi: 'c' }]);
      const ids = async (query: Record<string, unknown>) => (await store.dynamic.query('Well', query)).data.map((d) => d.id);
      expect(await ids({ pwi: 'b\u0000' })).toEqual([]);
      expect(await ids({ pwi: { ne: 'b\u0000' } })).toEqual(['a', 'b', 'c', 'd']);
      expect(await ids({ pwi: { in: ['a', 'b\u0000', '\ud800'] } })).toEqual(['a']);
      // 'b' < 'b\0…' < 'b\u0001': nothing stored lies between.
      expect(await ids({ pwi: { lt: 'b\u0000x' } })).toEqual(['a', 'b']);
      expect(await ids({ pwi: { gte: 'b\u0000x' } })).toEqual(['c', 'd']);
      expect(await ids({ 'extra.k': { lte: '\ud800' } })).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('the exact JSON text', () => {
  it('documents come back with their keys in the order written, after an update and a replace too', async () => {
    const store = await openPostgres(pool, { schema: fresh() });
    try {
      await store.insert('Well', [{ id: 'w', pwi: 'W', extra: { z: 1, a: { y: 2, b: 3 } }, basinName: 'Permian' }]);
      const [doc] = (await store.query('Well', {})).data;
      expect(Object.keys(doc!.extra as object)).toEqual(['z', 'a']);
      await store.update('Well', { pwi: 'W' }, { 'extra.a.c': 4, 'extra.m': 5, basinName: 'Bakken' });
      const [after] = (await store.query('Well', {})).data;
      expect(JSON.stringify(after!.extra)).toBe('{"z":1,"a":{"y":2,"b":3,"c":4},"m":5}');
      expect(Object.keys(after!).indexOf('basinName')).toBe(Object.keys(doc!).indexOf('basinName'));
      // Whole-object equality keeps key order: { b, y } is not { y, b }.
      expect((await store.query('Well', { 'extra.a': { eq: { y: 2, b: 3, c: 4 } } })).total).toBe(1);
      expect((await store.query('Well', { 'extra.a': { eq: { b: 3, y: 2, c: 4 } } })).total).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe('the exact JSON text after writes', () => {
  it('inserts, updates (top-level fields, dotted paths) and replaces leave the JSON text SQLite leaves, key order included', async () => {
    const options = { clock: () => '2024-06-01T00:00:00.000Z', ids: 7, strict: false };
    const pgStore = await openPostgres(pool, { ...options, schema: fresh() });
    const sqliteStore = DataStore.open(':memory:', options);
    try {
      for (const store of [pgStore, sqliteStore]) {
        await store.dynamic.insert('Well', [
          { pwi: 'A', extra: { z: 1, a: { y: 2 } }, basinName: 'Permian', u: { b: 1, a: [1, { d: 1, c: 2 }] } },
          { pwi: 'B', fracStages: 3 },
        ]);
        await store.update('Well', { pwi: { in: ['A', 'B'] } }, { statusCurrent: 'Producing', basinName: 'Bakken' });
        await store.update('Well', { pwi: 'A' }, { 'extra.a.x': [1, 'é'], 'extra.n.m': null });
        await store.dynamic.replace('Well', [{ id: (await store.query('Well', { pwi: 'B' })).data[0]!.id, pwi: 'B', note: 'x\u2028y', extra: { q: 1 } }]);
      }
      const text = async (store: DataStore) => (await store.query('Well', {})).data.map((d) => JSON.stringify(d));
      expect(await text(pgStore)).toEqual(await text(sqliteStore));
    } finally {
      await pgStore.close();
      await sqliteStore.close();
    }
  });
});

describe('keys named from the server', () => {
  it('DUPLICATE_KEY names a unique index made by hand, which the options do not list', async () => {
    const schema = fresh();
    const store = await openPostgres(pool, { schema });
    try {
      await pool.query(`CREATE UNIQUE INDEX by_hand ON ${schema}."docs_Well" ((doc ->> 'wellId'))`);
      await store.insert('Well', [{ pwi: 'A', wellId: 'X' }]);
      const r = await store.insert('Well', [{ pwi: 'B' }, { pwi: 'C', wellId: 'X' }]);
      expect(r.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 1, key: { wellId: 'X' } }]);
      expect(r.count).toBe(1);
      const u = await store.update('Well', { pwi: 'B' }, { wellId: 'X' });
      expect(u.errors[0]).toMatchObject({ code: 'DUPLICATE_KEY' });
      expect(u.errors[0]!.message).toContain('wellId');
    } finally {
      await store.close();
    }
  });
});

describe('large requests', () => {
  it('an insert of 12,000 documents in several statements reports collisions in each and keeps insertion order', async () => {
    const store = await openPostgres(pool, { schema: fresh() });
    try {
      await store.insert('Well', [{ pwi: 'P-11999' }]);
      const docs = Array.from({ length: 12_000 }, (_, i) => ({ pwi: `P-${i}` }));
      docs[7000] = { pwi: 'P-10' };
      const r = await store.insert('Well', docs);
      expect(r.errors.map((e) => [e.code, e.index])).toEqual([
        ['DUPLICATE_KEY', 7000],
        ['DUPLICATE_KEY', 11999],
      ]);
      expect(r.count).toBe(11_998);
      const page = await store.query('Well', {}, { skip: 7001, limit: 2 });
      expect(page.data.map((d) => d.pwi)).toEqual(['P-7001', 'P-7002']);
      const atomic = await store.insert('Well', [...docs.slice(0, 100).map((d) => ({ pwi: `Q${d.pwi}` })), { pwi: 'P-5' }], { atomic: true });
      expect(atomic.errors).toMatchObject([{ code: 'DUPLICATE_KEY', index: 100 }]);
      expect((await store.query('Well', { pwi: { regex: '^QP' } })).total).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('insertMany is all or nothing across types', async () => {
    const store = await openPostgres(pool, { schema: fresh() });
    try {
      await store.insert('DailyProduction', [{ pwi: 'A', prodDate: '1/1/2024' }]);
      const r = await store.dynamic.insertMany([
        { type: 'Well', docs: [{ pwi: 'A' }] },
        { type: 'DailyProduction', docs: [{ pwi: 'A', prodDate: '2024-01-01' }] },
      ]);
      expect(r.map((e) => e.errors[0]?.code)).toEqual(['DUPLICATE_KEY', 'DUPLICATE_KEY']);
      expect((await store.query('Well', {})).total).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe('load', () => {
  async function* wells(n: number, bad: (i: number) => Record<string, unknown> | null = () => null) {
    for (let i = 0; i < n; i++) yield bad(i) ?? { pwi: `W${i}`, fracStages: i % 40 };
  }

  it('atomic: one transaction held across batches; a refused document anywhere writes nothing, and the pool gets its client back', async () => {
    const mine = new pg.Pool({ connectionString: url, max: 2 });
    const store = await openPostgres(mine, { schema: fresh() });
    try {
      await store.insert('Well', [{ pwi: 'W2999' }]);
      const refused = await store.load('Well', wells(3_000), { batchSize: 400, atomic: true });
      expect(refused).toMatchObject({ success: false, count: 0 });
      expect(refused.errors[0]).toMatchObject({ code: 'DUPLICATE_KEY', index: 2_999 });
      expect((await store.query('Well', {})).total).toBe(1);
      await store.delete('Well', { pwi: 'W2999' });
      const ok = await store.load('Well', wells(3_000), { batchSize: 400, atomic: true });
      expect(ok).toMatchObject({ success: true, count: 3_000 });
      expect((await store.query('Well', {}, { limit: 1 })).total).toBe(3_000);
      expect(mine.totalCount - mine.idleCount).toBe(0);
    } finally {
      await store.close();
      await mine.end();
    }
  });
});

describe('lock waits', () => {
  it('a write that waits past busyTimeoutMs on every attempt answers INTERNAL saying so, and writes nothing', async () => {
    const schema = fresh();
    const mine = new pg.Pool({ connectionString: url, max: 2 });
    const store = await openPostgres(mine, { schema, busyTimeoutMs: 20 });
    const holder = await pool.connect();
    try {
      await store.insert('Well', [{ pwi: 'A' }]);
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${schema}."docs_Well" FOR UPDATE`);
      const r = await store.update('Well', { pwi: 'A' }, { statusCurrent: 'Shut-In' });
      expect(r.errors[0]).toMatchObject({ code: 'INTERNAL' });
      expect(r.errors[0]!.message).toMatch(/stayed locked by another connection/);
      await holder.query('ROLLBACK');
      expect((await store.query('Well', {})).data[0]!.statusCurrent).toBeUndefined();
    } finally {
      holder.release();
      await store.close();
      await mine.end();
    }
  });
});

describe('opening a schema another connection is writing', () => {
  it('opens without waiting when the schema is unchanged; a new index waits, then STORE_BUSY changes nothing', async () => {
    const schema = fresh();
    const first = await openPostgres(pool, { schema });
    await first.insert('Well', [{ pwi: 'A' }]);
    await first.close();
    const indexes = { Well: [{ fields: ['basinName'] }] };
    const basinIndex = async () =>
      (await pool.query(`SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'ix._well.basin_name'`, [schema])).rowCount;
    const holder = await pool.connect();
    try {
      // A write in progress: CREATE INDEX must wait for its transaction to end.
      await holder.query('BEGIN');
      await holder.query(`UPDATE ${schema}."docs_Well" SET doc = doc`);
      const same = await openPostgres(pool, { schema, busyTimeoutMs: 20 });
      expect((await same.query('Well', {})).total).toBe(1);
      await same.close();
      // Your pool (lock_timeout set per transaction) and the store's own (set per connection) alike.
      for (const source of [pool, url]) {
        let error: unknown;
        try {
          await openPostgres(source, { schema, busyTimeoutMs: 20, indexes });
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(StoreBusyError);
        expect((error as StoreBusyError).code).toBe('STORE_BUSY');
        expect((error as Error).message).toMatch(/^openPostgres: another connection held a lock on the store's tables through 4 waits of 20 ms .*nothing was changed/);
      }
      expect(await basinIndex()).toBe(0);
      await holder.query('ROLLBACK');
      const later = await openPostgres(pool, { schema, busyTimeoutMs: 20, indexes });
      await later.close();
      expect(await basinIndex()).toBe(1);
    } finally {
      holder.release();
    }
  });
});

describe('plans', () => {
  it('equality, in and sort use the expression indexes; bounds and polygons the GiST index', async () => {
    const store = await openPostgres(pool, { schema: fresh(), indexes: { Well: [{ fields: ['spudDate'] }] } });
    try {
      // Enough rows that an index beats a scan.
      const wells = Array.from({ length: 3000 }, (_, i) => ({ pwi: `W${i}`, spudDate: new Date(Date.UTC(2020, 0, 1 + (i % 900))), surfaceLoc: { type: 'Point' as const, coordinates: [(i % 360) - 180, (i % 180) - 90] } }));
      await store.insert('Well', wells);
      await pool.query('ANALYZE');
      const plan = async (query: unknown, options?: unknown) => (await store.dynamic.explain('Well', query, options)).plan.join('\n');
      expect(await plan({ pwi: 'W7' })).toContain('ux._well.pwi');
      expect(await plan({ pwi: { in: ['W1', 'W2'] } })).toContain('ux._well.pwi');
      expect(await plan({}, { sortBy: 'spudDate', sortOrder: -1, limit: 5 })).toContain('ix._well.spud_date');
      expect(await plan({ surfaceLoc: { bounds: [0, 0, 1, 1] } })).toContain('gx._well.surface_loc');
      expect(await plan({ surfaceLoc: { polygon: [[[0, 0], [1, 0], [1, 1], [0, 0]]] } })).toContain('gx._well.surface_loc');
    } finally {
      await store.close();
    }
  });
});

describe('regex', () => {
  it('patterns PostgreSQL cannot match as RE2 does are INVALID_QUERY saying why; the others answer as RE2', async () => {
    const store = await openPostgres(pool, { schema: fresh() });
    try {
      await store.insert('Well', [{ id: 'k', pwi: 'K' }, { id: 'kelvin', pwi: '\u212a' }, { id: 'word', pwi: 'a b' }, { id: 'e', pwi: 'é' }]);
      const r = await store.query('Well', { pwi: { regex: '\\pL' } });
      expect(r.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: 'pwi.regex' });
      expect(r.errors[0]!.message).toContain('Unicode classes');
      const inline = await store.query('Well', { pwi: { regex: '(?i)k' } });
      expect(inline.errors[0]!.message).toContain('inline flags');
      const nonBoundary = await store.query('Well', { pwi: { regex: 'a\\B' } });
      expect(nonBoundary.errors[0]!.message).toContain('inside multi-byte characters');
      const ids = async (regex: string) => (await store.query('Well', { pwi: { regex } })).data.map((d) => d.id);
      // RE2's case folding: k, K and the Kelvin sign are one orbit.
      expect(await ids('/^k$/i')).toEqual(['k', 'kelvin']);
      expect(await ids('\\bb')).toEqual(['word']);
      expect(await ids('^\\w$')).toEqual(['k']);
      expect(await ids('^.$')).toEqual(['k', 'kelvin', 'e']);
    } finally {
      await store.close();
    }
  });
});

describe('Citus layout', () => {
  it('on PostgreSQL without the Citus extension, citus: true refuses to open, saying so, and creates nothing', async () => {
    const schema = fresh();
    const refused = await openPostgres(pool, { schema, citus: true }).then(() => null, (e: unknown) => e as Error);
    expect(refused).toBeInstanceOf(Error);
    expect(refused!.message).toContain('no Citus extension');
    expect((await pool.query('SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1', [schema])).rows[0].n).toBe(0);
  });

  it('names the distribution column of every built-in type and the statements that distribute them, Well first', () => {
    const dist = distributionOf();
    expect(dist.get('Well')).toEqual({ field: 'pwi' });
    expect(dist.get('DailyProduction')).toEqual({ field: 'pwi' });
    expect(dist.get('WellIdentifier')).toEqual({ field: 'identifier' });
    expect(dist.get('Comment')).toEqual({ field: 'id' });
    const sql = citusStatements('public');
    expect(sql[0]).toMatch(/^SELECT create_distributed_table\('"public"\."docs_Well"', 'dk'\) WHERE NOT EXISTS/);
    expect(sql.some((s) => s.startsWith(`SELECT create_distributed_table('"public"."docs_DailyProduction"', 'dk', colocate_with => '"public"."docs_Well"')`))).toBe(true);
    expect(sql.some((s) => s.startsWith(`SELECT create_distributed_table('"public"."docs_Comment"', 'dk')`))).toBe(true);
  });
});

describe('the change feed', () => {
  it('refuses a polygon query at the first next() of a watch, even one joining a reader already polling', async () => {
    const store = await openPostgres(pool, { schema: fresh(), changeFeed: true });
    try {
      const running = store.watch('Well', { pollMs: 5 });
      const pending = running.next();
      await new Promise((r) => setTimeout(r, 50));
      const polygon = [[[-100, 30], [-90, 30], [-90, 40], [-100, 30]]];
      const refused = await store.watch('Well', { query: { surfaceLoc: { polygon } } }).next().then(() => null, (e: unknown) => e);
      expect(refused).toMatchObject({ code: 'INVALID_QUERY' });
      await running.return();
      expect(await pending).toEqual({ done: true, value: undefined });
    } finally {
      await store.close();
    }
  });
});

describe('soft delete turned on while a delete runs', () => {
  it('the delete of a store that took the type for hard-deleted waits for the schema change, then stamps', async () => {
    const schema = fresh();
    const writer = await openPostgres(pool, { schema });
    await writer.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    const waiting = async () => Number((await pool.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type IN ('Lock', 'Advisory') AND datname = current_database()`)).rows[0].n);
    const until = async (n: number) => {
      for (let i = 0; i < 500 && (await waiting()) < n; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await waiting()).toBeGreaterThanOrEqual(n);
    };
    let removed = 0;
    const onRemove = () => removed++;
    pool.on('remove', onRemove);
    const holder = await pool.connect();
    try {
      // A write in progress holds the table: turning soft delete on (its partial unique indexes) waits, under its lock.
      await holder.query('BEGIN');
      await holder.query(`UPDATE ${schema}."docs_Well" SET doc = doc`);
      const turning = openPostgres(url, { schema, softDelete: ['Well'], busyTimeoutMs: 30_000 });
      await until(1);
      const deleting = writer.delete('Well', { pwi: 'A' });
      await until(2);
      await holder.query('ROLLBACK');
      const turner = await turning;
      expect((await deleting).count).toBe(1);
      const { rows } = await pool.query(`SELECT doc->>'pwi' AS pwi, doc->>'deletedAt' IS NOT NULL AS deleted FROM ${schema}."docs_Well" ORDER BY 1`);
      expect(rows).toEqual([{ pwi: 'A', deleted: true }, { pwi: 'B', deleted: false }]);
      // The delete's first attempt was steered, not failed: its connection went back to the pool, not destroyed.
      expect(removed).toBe(0);
      await turner.close();
    } finally {
      pool.off('remove', onRemove);
      holder.release();
      await writer.close();
    }
  });
});

describe('a server that reads backslashes in string literals as escapes', () => {
  it('deletes as any other (standard_conforming_strings = off): the statements hold no backslash', async () => {
    const old = new pg.Pool({ connectionString: url, max: 2, options: '-c standard_conforming_strings=off' });
    try {
      const store = await openPostgres(old, { schema: fresh() });
      await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
      expect(await store.delete('Well', { pwi: 'A' })).toMatchObject({ success: true, count: 1 });
      expect((await store.query('Well', {})).data.map((d) => d.pwi)).toEqual(['B']);
      await store.close();
    } finally {
      await old.end();
    }
  });
});
