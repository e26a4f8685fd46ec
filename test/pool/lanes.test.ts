/**
 * The pool's lanes by cost: only a query estimated to find few rows through an index takes the fast lane, whatever
 * its shape; a client that does not read its streamed answer holds no worker past maxParkMs.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamicStore } from '../../src/store.js';
import { DataStoreError } from '../../src/envelope.js';
import { createPool, type PooledStore } from '../../src/pool/pool.js';
import { FAST_ROWS } from '../../src/pool/scheduler.js';
import { openDatabase } from '../../src/sqlite/connection.js';
import { KeyEstimates, sampleSql } from '../../src/sqlite/estimate.js';
import { tempDir } from '../helpers/store.js';
import { removeBundles, until, workerScript } from './helpers.js';

/** WELLS pwis with PER_WELL days of production each: an `in` of k pwis finds k × PER_WELL rows. */
const WELLS = 30;
const PER_WELL = 200;
const dir = tempDir();
const file = dir.file('daily.db');
let script: string;
const pools: PooledStore[] = [];

const pwis = (n: number) => Array.from({ length: n }, (_, i) => `P${String(i).padStart(4, '0')}`);
/** Finds 10 × PER_WELL = 2,000 rows: two slices of an answer, more than FAST_ROWS. */
const BIG = { pwi: { in: pwis(10) } };

beforeAll(async () => {
  script = await workerScript();
  DynamicStore.open(file).close();
  const db = new Database(file);
  try {
    db.prepare(
      `WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM m WHERE i + 1 < ?)
       INSERT INTO docs_DailyProduction (id, doc)
       SELECT printf('d%06d', i), jsonb(json_object('id', printf('d%06d', i), 'pwi', printf('P%04d', i / ?), 'prodDate', date('2020-01-01', '+' || (i % ?) || ' days'))) FROM m`,
    ).run(WELLS * PER_WELL, PER_WELL, PER_WELL);
  } finally {
    db.close();
  }
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  dir.cleanup();
  removeBundles();
});

async function pool(options: Parameters<typeof createPool>[1] = {}): Promise<PooledStore> {
  const p = await createPool(file, { readers: 1, workerScript: script, ...options });
  pools.push(p);
  return p;
}

describe('the fast lane takes cheap queries only', () => {
  it('a big `in` on an indexed field goes to the general lane; a small one and an equality to the fast lane', async () => {
    expect(BIG.pwi.in.length * PER_WELL).toBeGreaterThan(FAST_ROWS);
    const p = await pool();
    expect((await p.query('DailyProduction', BIG)).total).toBe(10 * PER_WELL);
    expect(p.stats().routed).toEqual({ main: 0, fast: 0, general: 1, write: 0 });
    expect((await p.query('DailyProduction', { pwi: { in: pwis(2) } })).total).toBe(2 * PER_WELL);
    expect((await p.query('DailyProduction', { pwi: 'P0003' })).total).toBe(PER_WELL);
    expect(p.stats().routed).toEqual({ main: 0, fast: 2, general: 1, write: 0 });
    // No index serves it, or it does not parse: not cheap.
    await p.query('DailyProduction', { wellName: 'x' });
    expect((await p.query('DailyProduction', { pwi: { near: 1 } })).errors[0]!.code).toBe('INVALID_QUERY');
    expect(p.stats().routed).toEqual({ main: 0, fast: 2, general: 3, write: 0 });
  });

  it('rows per key come from sqlite_stat1 when the file has been analysed, else from a walk of the index: the same figure here', () => {
    const db = openDatabase(file, 1000, 0);
    try {
      expect(new KeyEstimates(db).rowsPerKey('DailyProduction', 'pwi')).toBe(PER_WELL);
      db.exec('ANALYZE');
      expect(new KeyEstimates(db).rowsPerKey('DailyProduction', 'pwi')).toBe(PER_WELL);
      expect(db.prepare('SELECT count(*) AS n FROM sqlite_stat1').get()).not.toEqual({ n: 0 });
      // A type with no rows finds none.
      expect(new KeyEstimates(db).rowsPerKey('MonthlyProduction', 'pwi')).toBe(0);
    } finally {
      db.exec('DROP TABLE IF EXISTS sqlite_stat1');
      db.close();
    }
  });

  it('the walk reads the index in order and stops, with soft delete too (its unique keys are partial indexes of live documents)', () => {
    const soft = dir.file('soft.db');
    DynamicStore.open(soft, { softDelete: ['DailyProduction'] }).close();
    for (const [path, live] of [[file, false], [soft, true]] as const) {
      const db = openDatabase(path, 1000, 0);
      try {
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${sampleSql('DailyProduction', 'pwi', live)}`).all() as { detail: string }[];
        const details = plan.map((r) => r.detail).join(' | ');
        expect(details).toMatch(/SCAN docs_DailyProduction USING (COVERING )?INDEX/);
        expect(details).not.toMatch(/FOR ORDER BY/);
      } finally {
        db.close();
      }
    }
  });
});

describe("pinpoints on the pool's own thread", () => {
  it('an equality on a unique key is read on the main thread, answered as a worker answers it, soft delete applied', async () => {
    const wells = dir.file('pinpoint.db');
    const q = await createPool(wells, { readers: 1, workerScript: script, softDelete: ['Well'] });
    pools.push(q);
    expect((await q.insert('Well', [{ pwi: 'W1' }, { pwi: 'W2' }])).count).toBe(2);
    expect((await q.delete('Well', { pwi: 'W1' })).count).toBe(1);
    const here = await q.query('Well', { pwi: 'W2' });
    // The same document through a worker (an `in` is never a pinpoint): the same answer.
    const there = await q.query('Well', { pwi: { in: ['W2'] } });
    expect(q.stats().routed).toEqual({ main: 1, fast: 1, general: 0, write: 2 });
    expect(here).toEqual(there);
    expect(here.data.map((d) => d.pwi)).toEqual(['W2']);
    // Soft-deleted: not found here either. With includeDeleted it is no pinpoint (the unique index holds live
    // documents only): a worker finds it.
    expect((await q.query('Well', { pwi: 'W1' })).count).toBe(0);
    expect((await q.query('Well', { pwi: 'W1' }, { includeDeleted: true })).data.map((d) => d.pwi)).toEqual(['W1']);
    expect(q.stats().routed).toEqual({ main: 2, fast: 2, general: 0, write: 2 });
    // A write through the writer thread is seen by the next pinpoint.
    await q.insert('Well', [{ pwi: 'W3' }]);
    expect((await q.query('Well', { id: (await q.query('Well', { pwi: 'W3' })).data[0]!.id })).count).toBe(1);
    expect(q.stats().routed.main).toBe(4);
    // A document past one slice (~1 MB of text) comes whole, as its text.
    await q.insert('Well', [{ pwi: 'BIG', extra: { text: 'é😀'.repeat(600_000) } }]);
    const whole = await q.queryStream('Well', { pwi: 'BIG' });
    expect(whole.whole).toBe(JSON.stringify(await q.query('Well', { pwi: { in: ['BIG'] } })));
    // A refusal is answered here as there.
    const bad = await q.query('Well', { pwi: 'W2' }, { limit: -1 });
    expect(bad.errors[0]!.code).toBe('INVALID_REQUEST');
    expect(bad.errors).toEqual((await q.query('Well', { pwi: { in: ['W2'] } }, { limit: -1 })).errors);
    expect(q.stats().routed.main).toBe(6);
    // includeDeleted: null reads as false, a pinpoint still; one the store cannot read is refused by a worker.
    expect((await q.query('Well', { pwi: 'W2' }, { includeDeleted: null })).count).toBe(1);
    expect(q.stats().routed.main).toBe(7);
    expect((await q.query('Well', { pwi: 'W2' }, { includeDeleted: 'yes' })).errors).toEqual([
      { code: 'INVALID_REQUEST', field: 'options.includeDeleted', message: 'options.includeDeleted: expected true or false, got "yes"' },
    ]);
    expect(q.stats().routed.main).toBe(7);
  });

  it('options a worker could not be sent, or an aborted signal, are answered as on any lane', async () => {
    const q = await createPool(dir.file('pinpoint-odd.db'), { readers: 1, workerScript: script });
    pools.push(q);
    await q.insert('Well', [{ pwi: 'W1' }]);
    const refused = "request: holds a value that cannot reach the store's worker threads (a function, symbol or class instance); send JSON values";
    const r = await q.query('Well', { pwi: 'W1' }, { limit: 1, odd: () => 1 } as never);
    expect(r.errors).toEqual([{ code: 'INVALID_REQUEST', message: refused }]);
    // A getter that throws is an answer too, never a rejection.
    const getter = await q.query('Well', { pwi: 'W1' }, {
      get limit(): number {
        throw new Error('no');
      },
    });
    expect(getter.errors).toEqual([{ code: 'INVALID_REQUEST', message: refused }]);
    // A proxy looks like a plain object, and cannot be sent either.
    const proxied = await q.query('Well', new Proxy({ pwi: 'W1' }, {}));
    expect(proxied.errors).toEqual([{ code: 'INVALID_REQUEST', message: refused }]);
    const aborted = await q.query('Well', { pwi: 'W1' }, undefined, { signal: AbortSignal.abort() });
    expect(aborted.errors[0]!.code).toBe('TIMEOUT');
    expect(q.stats().routed).toEqual({ main: 0, fast: 4, general: 0, write: 1 });
  });
  it('a pinpoint never asks for its signal (an HTTP request makes one only when asked): `aborted` says whether it was given up', async () => {
    const q = await createPool(dir.file('pinpoint-control.db'), { readers: 1, workerScript: script });
    pools.push(q);
    await q.insert('Well', [{ pwi: 'W1' }]);
    let asked = 0;
    const control = (aborted: boolean | undefined, signal = new AbortController().signal) => ({
      aborted,
      get signal(): AbortSignal {
        asked++;
        return signal;
      },
    });
    expect((await q.query('Well', { pwi: 'W1' }, undefined, control(false))).count).toBe(1);
    expect((await (await q.queryStream('Well', { pwi: 'W1' }, undefined, control(false))).whole)?.length).toBeGreaterThan(0);
    expect(asked).toBe(0);
    expect(q.stats().routed).toEqual({ main: 2, fast: 0, general: 0, write: 1 });
    // Given up before it was read: TIMEOUT, as on any lane, whatever the signal says.
    expect((await q.query('Well', { pwi: 'W1' }, undefined, control(true))).errors[0]!.code).toBe('TIMEOUT');
    // Without `aborted`, the signal tells.
    expect((await q.query('Well', { pwi: 'W1' }, undefined, control(undefined, AbortSignal.abort()))).errors[0]!.code).toBe('TIMEOUT');
    expect((await q.query('Well', { pwi: 'W1' }, undefined, control(undefined))).count).toBe(1);
    expect(q.stats().routed.main).toBe(3);
    // A request that may wait reads its signal, to stop on it.
    asked = 0;
    expect((await q.query('Well', { pwi: { in: ['W1'] } }, undefined, control(false))).count).toBe(1);
    expect(asked).toBe(1);
    // A control that is not one is refused, pinpoint or not.
    await expect(q.query('Well', { pwi: 'W1' }, undefined, { aborted: 'no' } as never)).rejects.toThrow(new TypeError('control.aborted: expected a boolean'));
    await expect(q.queryStream('Well', { pwi: 'W1' }, undefined, { signal: 'no' } as never)).rejects.toThrow(new TypeError('control.signal: expected an AbortSignal'));
    await expect(q.query('Well', { pwi: { in: ['W1'] } }, undefined, null as never)).rejects.toThrow(new TypeError('control: expected { signal?: AbortSignal, aborted?: boolean }'));
    // A signal given as a value is checked at once, even where `aborted` spares reading it.
    await expect(q.query('Well', { pwi: 'W1' }, undefined, { aborted: false, signal: 'no' } as never)).rejects.toThrow(new TypeError('control.signal: expected an AbortSignal'));
  });
});

describe('clients that do not read', () => {
  it('20 answers parked and never read leave a pinpoint query answered while they stay parked', async () => {
    // The deadline only makes a queued pinpoint query answer TIMEOUT instead of hanging the test.
    const p = await pool({ maxParked: 2, maxQueryMs: 30_000 });
    const streams = Array.from({ length: 20 }, () => p.queryStream('DailyProduction', BIG));
    // One general worker and its two replacements hold an answer each; the rest queue for the general lane.
    await until(() => p.stats().workers.parked === 3, 20_000, 'three answers to park');
    const pinpoint = await p.query('DailyProduction', { pwi: 'P0007' });
    expect(pinpoint.success).toBe(true);
    expect(pinpoint.total).toBe(PER_WELL);
    expect(p.stats().workers.parked).toBe(3);
    expect(p.stats().queued).toBe(17);
    for (const s of streams) void s.then((q) => q.cancel());
  });

  it('an answer parked longer than maxParkMs is cut: its worker is freed, and the next pull throws TIMEOUT', async () => {
    const p = await pool({ maxParkMs: 200 });
    const stream = await p.queryStream('DailyProduction', BIG);
    expect(stream.failure).toBeNull();
    await until(() => p.stats().timeouts === 1 && p.stats().workers.parked === 0, 20_000, 'the parked answer to be cut');
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    const error = await it.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(DataStoreError.is(error)).toBe(true);
    expect((error as DataStoreError).envelope.errors).toEqual([
      { code: 'TIMEOUT', message: 'the answer waited longer than maxParkMs (200 ms) for its reader to ask for more, and was stopped' },
    ]);
    // The freed worker serves the next query.
    expect((await p.query('DailyProduction', { pwi: { in: pwis(3) } })).total).toBe(3 * PER_WELL);
  });
});
