import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestStore, DataStore, DataStoreError, type SqliteDataStore, fixedClock, fixtures, sampleData, unwrap, type TestStoreOptions } from '../src/testing.js';
import { NotAStoreError } from '../src/index.js';
import { tempDir } from './helpers/store.js';

const seedFixtures = { Well: fixtures.wells, DailyProduction: fixtures.daily };

/** pwis of the Wells a query matches, sorted. */
async function pwis(store: DataStore, query: Record<string, unknown> = {}): Promise<string[]> {
  return unwrap(await store.dynamic.query('Well', query)).map((w) => w.pwi as string).sort();
}


afterEach(() => vi.restoreAllMocks());

describe('snapshot and restore', () => {
  it('restore puts the store back: writes after the snapshot are gone, and the snapshot can be used again', async () => {
    const store = await createTestStore({ seed: seedFixtures });
    const snap = store.snapshot();
    const bytes = Buffer.from(snap);
    unwrap(await store.insert('Well', [{ pwi: 'NEW-1' }]));
    unwrap(await store.delete('Well', { pwi: 'FX-002' }));
    unwrap(await store.update('DailyProduction', { pwi: 'FX-001' }, { oilVol: 1 }));
    store.restore(snap);
    expect(await pwis(store)).toEqual(['FX-001', 'FX-002', 'FX-003', 'FX-004', 'FX-005']);
    expect(unwrap(await store.query('DailyProduction', { pwi: 'FX-001' }, { sortBy: 'prodDate' })).map((d) => d.oilVol)).toEqual([612.4, 605.9, 598.3]);
    // Writes after a restore do not reach the snapshot: it restores the seeded data again.
    unwrap(await store.delete('Well', { pwi: 'FX-001' }));
    expect(Buffer.from(snap).equals(bytes)).toBe(true);
    store.restore(snap);
    expect(await pwis(store)).toHaveLength(5);
    // Views made before the restore see the restored data.
    const alice = store.withUser('alice');
    unwrap(await alice.insert('Well', [{ pwi: 'BY-ALICE' }]));
    store.restore(snap);
    expect(unwrap(await alice.query('Well', { pwi: 'BY-ALICE' }))).toEqual([]);
    store.close();
  });

  it('a restored store and its source share nothing: each keeps working after the other writes or closes', async () => {
    const source = await createTestStore({ seed: seedFixtures });
    const restored = await createTestStore();
    restored.restore(source.snapshot());
    expect(await pwis(restored)).toEqual(await pwis(source));

    unwrap(await source.insert('Well', [{ pwi: 'ONLY-SOURCE', surfaceLoc: { type: 'Point', coordinates: [-102, 32] } }]));
    unwrap(await source.update('Well', { pwi: 'FX-001' }, { statusCurrent: 'Shut-In' }));
    expect(await pwis(restored, { pwi: 'ONLY-SOURCE' })).toEqual([]);
    expect(await pwis(restored, { statusCurrent: 'Shut-In' })).toEqual(['FX-003']);

    unwrap(await restored.insert('Well', [{ pwi: 'ONLY-RESTORED', surfaceLoc: { type: 'Point', coordinates: [-102, 32] } }]));
    unwrap(await restored.delete('Well', { pwi: 'FX-002' }));
    expect(await pwis(source, { pwi: 'ONLY-RESTORED' })).toEqual([]);
    expect(await pwis(source, { pwi: 'FX-002' })).toEqual(['FX-002']);

    // Both go on answering, geo included, each with its own writes.
    expect(await pwis(source, { surfaceLoc: { bounds: fixtures.bounds.permian } })).toEqual(['FX-001', 'FX-002', 'FX-003', 'ONLY-SOURCE']);
    expect(await pwis(restored, { surfaceLoc: { bounds: fixtures.bounds.permian } })).toEqual(['FX-001', 'FX-003', 'ONLY-RESTORED']);
    source.close();
    unwrap(await restored.insert('Well', [{ pwi: 'AFTER-CLOSE' }]));
    expect(await pwis(restored)).toHaveLength(6);
    restored.close();
  });

  it('fromSnapshot copies are independent of each other, of the source and of the snapshot', async () => {
    const source = await createTestStore({ seed: seedFixtures });
    const snap = source.snapshot();
    const bytes = Buffer.from(snap);
    const a = DataStore.fromSnapshot(snap);
    const b = DataStore.fromSnapshot(snap);
    unwrap(await a.delete('Well', { basinName: 'Permian' }));
    unwrap(await b.insert('Well', [{ pwi: 'ONLY-B' }]));
    unwrap(await source.update('Well', {}, { statusCurrent: 'Plugged' }));
    expect(await pwis(a)).toEqual(['FX-004', 'FX-005']);
    expect(await pwis(b)).toEqual(['FX-001', 'FX-002', 'FX-003', 'FX-004', 'FX-005', 'ONLY-B']);
    expect(await pwis(a, { statusCurrent: 'Plugged' })).toEqual([]);
    expect(await pwis(source, { statusCurrent: 'Plugged' })).toHaveLength(5);
    expect(Buffer.from(snap).equals(bytes)).toBe(true);
    // A copy is a store of its own: in memory (restorable), with the options it was given.
    const bob: SqliteDataStore = DataStore.fromSnapshot(snap, { userId: 'bob' });
    unwrap(await bob.insert('Well', [{ pwi: 'BY-BOB' }]));
    expect(unwrap(await bob.query('Well', { pwi: 'BY-BOB' }))[0]?.createdBy).toBe('bob');
    bob.restore(snap);
    expect(await pwis(bob)).toHaveLength(5);
    for (const s of [source, a, b, bob]) s.close();
  });

  it('geo queries work after a restore: the R*Trees come back with the documents and follow later writes', async () => {
    const store = await createTestStore({ seed: seedFixtures });
    const snap = store.snapshot();
    const before = rtreeRows(store);
    expect(before).toBe(8); // surfaceLoc and bottomHoleLoc of FX-001..004; FX-005 has no location
    unwrap(await store.insert('Well', [{ pwi: 'GONE', surfaceLoc: { type: 'Point', coordinates: [-102, 32] } }]));
    unwrap(await store.delete('Well', { pwi: 'FX-001' }));
    store.restore(snap);
    expect(rtreeRows(store)).toBe(before);
    expect(await pwis(store, { surfaceLoc: { bounds: fixtures.bounds.permian } })).toEqual(['FX-001', 'FX-002', 'FX-003']);
    expect(await pwis(store, { surfaceLoc: { bounds: fixtures.bounds.bakken } })).toEqual(['FX-004']);
    // A triangle around Hawk 1H and Falcon 2H (not Cedar 3H).
    const triangle = [[[-102.5, 31.5], [-101.5, 31.5], [-101.9, 32.8], [-102.5, 31.5]]];
    expect(await pwis(store, { surfaceLoc: { polygon: triangle } })).toEqual(['FX-001', 'FX-002']);
    // The triggers that keep the trees came back too: new, moved and deleted points are found (or not) at once.
    unwrap(await store.insert('Well', [{ pwi: 'NEW', surfaceLoc: { type: 'Point', coordinates: [-102, 32] } }]));
    unwrap(await store.update('Well', { pwi: 'FX-002' }, { surfaceLoc: { type: 'Point', coordinates: [-103.3, 47.9] } }));
    unwrap(await store.delete('Well', { pwi: 'FX-003' }));
    expect(await pwis(store, { surfaceLoc: { bounds: fixtures.bounds.permian } })).toEqual(['FX-001', 'NEW']);
    expect(await pwis(store, { surfaceLoc: { bounds: fixtures.bounds.bakken } })).toEqual(['FX-002', 'FX-004']);
    expect(await pwis(store, { surfaceLoc: { polygon: triangle } })).toEqual(['FX-001', 'NEW']);
    // The queries go through the R*Tree of the restored database: emptied by hand, it finds nothing.
    const copy = DataStore.fromSnapshot(snap);
    expect(await pwis(copy, { surfaceLoc: { bounds: fixtures.bounds.permian } })).toEqual(['FX-001', 'FX-002', 'FX-003']);
    for (const table of rtrees(copy)) copy.database.exec(`DELETE FROM "${table}"`);
    expect(await pwis(copy, { surfaceLoc: { bounds: fixtures.bounds.permian } })).toEqual([]);
    expect(await pwis(copy, { surfaceLoc: { polygon: triangle } })).toEqual([]);
    store.close();
    copy.close();
  });

  it('unique and plain indexes work after a restore: a duplicate key is refused with DUPLICATE_KEY', async () => {
    const indexes = (s: SqliteDataStore) => s.database.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name`).pluck().all() as string[];
    const options = { indexes: { Well: [{ fields: ['basinName'] }] } };
    const plain = await createTestStore();
    const store = await createTestStore({ ...options, seed: seedFixtures });
    const snap = store.snapshot();
    const names = indexes(store);
    expect(names).toHaveLength(indexes(plain).length + 1);
    unwrap(await store.delete('Well', { pwi: 'FX-001' }));
    store.restore(snap);
    expect(indexes(store)).toEqual(names);
    const dup = await store.insert('Well', [{ pwi: 'FX-001' }]);
    expect(dup.success).toBe(false);
    expect(dup.errors).toEqual([expect.objectContaining({ code: 'DUPLICATE_KEY', key: { pwi: 'FX-001' } })]);
    const day = await store.insert('DailyProduction', [{ pwi: 'FX-001', prodDate: '2024-01-02' }]);
    expect(day.errors[0]?.code).toBe('DUPLICATE_KEY');
    // A copy opened with the same options has the same indexes, and they hold.
    const copy = DataStore.fromSnapshot(snap, options);
    expect(indexes(copy)).toEqual(names);
    expect((await copy.insert('Well', [{ pwi: 'FX-004' }])).errors[0]?.code).toBe('DUPLICATE_KEY');
    for (const s of [plain, store, copy]) s.close();
  });

  it('restoring a 10k-document store again and again brings back exactly the seeded data (its speed: npm run bench -- --testkit)', async () => {
    const sample = sampleData(3, { wells: 100, days: 99 });
    const store = await createTestStore({ seed: sample });
    const snap = store.snapshot();
    for (let i = 0; i < 5; i++) {
      unwrap(await store.insert('Well', [{ pwi: `EXTRA-${i}` }]));
      unwrap(await store.delete('DailyProduction', { pwi: sample.Well[0]!.pwi as string }));
      store.restore(snap);
      expect((await store.query('Well', {}, { limit: 1 })).total).toBe(100);
      expect((await store.query('Well', { pwi: `EXTRA-${i}` })).total).toBe(0);
      expect((await store.query('DailyProduction', {}, { limit: 1 })).total).toBe(9900);
    }
    store.close();
  });

  it('restore refuses a file store with a TypeError, and leaves it as it was', async () => {
    const tmp = tempDir();
    try {
      const memory = await createTestStore({ seed: seedFixtures });
      const file = DataStore.open(tmp.file());
      unwrap(await file.insert('Well', [{ pwi: 'ON-DISK' }]));
      expect(() => file.restore(memory.snapshot())).toThrow(TypeError);
      expect(() => file.restore(memory.snapshot())).toThrow(/in-memory/);
      expect(await pwis(file)).toEqual(['ON-DISK']);
      unwrap(await file.insert('Well', [{ pwi: 'STILL-WRITABLE' }]));
      expect(await pwis(file)).toEqual(['ON-DISK', 'STILL-WRITABLE']);
      for (const s of [memory, file]) s.close();
    } finally {
      tmp.cleanup();
    }
  });

  it('snapshot and restore of a closed store throw; so does restore of something that is not a snapshot', async () => {
    const store = await createTestStore({ seed: seedFixtures });
    const snap = store.snapshot();
    expect(() => store.restore('not a snapshot' as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => DataStore.fromSnapshot({} as Uint8Array)).toThrow(TypeError);
    store.close();
    expect(() => store.snapshot()).toThrow(TypeError);
    expect(() => store.snapshot()).toThrow(/closed/);
    expect(() => store.restore(snap)).toThrow(/closed/);
  });
});

describe('deterministic runs', () => {
  /** One run of a scenario: every envelope it answers, as JSON. */
  async function run(options: TestStoreOptions): Promise<string> {
    const store = await createTestStore({ ...options, seed: seedFixtures });
    const envelopes = [
      await store.insert('Well', [{ pwi: 'D-1', basinName: 'DJ' }, { pwi: 'D-2', createdAt: '2020-01-01' }]),
      await store.insert('Well', [{ pwi: 'D-1' }]),
      await store.update('Well', { basinName: 'Permian' }, { statusCurrent: 'Shut-In' }),
      await store.replace('Well', [{ pwi: 'D-3' }]),
      await store.query('Well', {}, { sortBy: 'pwi' }),
      await store.query('DailyProduction', { pwi: 'FX-001' }),
      // A page with a cursor: signed with a key made from the ids seed, so it repeats too.
      await store.query('Well', {}, { sortBy: 'pwi', limit: 2 }),
    ];
    store.close();
    return JSON.stringify(envelopes);
  }

  it('two runs with the same clock and ids answer byte-identical envelopes', async () => {
    const options = () => ({ clock: fixedClock('2024-06-01T00:00:00.000Z', 1000), ids: 42 });
    const first = await run(options());
    const second = await run(options());
    expect(second).toBe(first);
    const docs = (JSON.parse(first) as { data: Record<string, unknown>[] }[])[4]!.data;
    expect(docs).toHaveLength(8);
    expect(new Set(docs.map((d) => d.id)).size).toBe(8);
    expect(docs.find((d) => d.pwi === 'FX-001')).toMatchObject({ createdAt: expect.stringMatching(/^2024-06-01T00:00:/), statusCurrent: 'Shut-In' });
    expect(docs.find((d) => d.pwi === 'D-2')?.createdAt).toBe('2020-01-01T00:00:00.000Z');
    expect((JSON.parse(first) as { hasCursor: boolean }[])[6]!.hasCursor).toBe(true);
    // The options are what makes it repeat: another seed gives other ids, the system clock other times.
    expect(await run({ ...options(), ids: 43 })).not.toBe(first);
    expect(await run({ ids: 42 })).not.toBe(first);
  });

  it('an id function and a clock stamp every generated field', async () => {
    let n = 0;
    const store = await createTestStore({ clock: fixedClock(Date.UTC(2024, 0, 1)), ids: () => `well-${++n}` });
    const env = await store.insert('Well', [{ pwi: 'A' }, { pwi: 'B' }]);
    // The request's activity takes the first id, its documents the next ones.
    expect(env.activityId).toBe('well-1');
    expect(env.insertedIds).toEqual(['well-2', 'well-3']);
    const [a] = unwrap(await store.query('Well', { pwi: 'A' }));
    expect(a).toMatchObject({
      id: 'well-2',
      createdAt: '2024-01-01T00:00:00.000Z',
      updatedAt: '2024-01-01T00:00:00.000Z',
      modifiedTimestamp: Date.UTC(2024, 0, 1),
      createdActivityId: 'well-1',
      lastUpdatedActivityId: 'well-1',
    });
    store.close();
  });

  it('fixedClock starts where told, steps per call, and can be moved', () => {
    const clock = fixedClock('2024-06-01', 500);
    expect([clock(), clock(), clock()]).toEqual([0, 500, 1000].map((d) => Date.UTC(2024, 5, 1) + d));
    clock.advance(60_000);
    expect(clock()).toBe(Date.UTC(2024, 5, 1, 0, 1, 1, 500));
    clock.set(new Date(Date.UTC(2030, 0, 1)));
    expect(clock()).toBe(Date.UTC(2030, 0, 1));
    const still = fixedClock();
    expect([still(), still()]).toEqual([Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 1)]);
    expect(() => fixedClock('not a date')).toThrow(RangeError);
    expect(() => fixedClock(0, -1)).toThrow(RangeError);
  });
});

describe('createTestStore', () => {
  it('seeds documents by type, in one transaction', async () => {
    const store = await createTestStore({ seed: seedFixtures, userId: 'fixtures' });
    expect(store).toBeInstanceOf(DataStore);
    expect(store.closed).toBe(false);
    expect((await store.query('Well', {})).total).toBe(5);
    expect((await store.query('DailyProduction', {})).total).toBe(9);
    expect(unwrap(await store.query('Well', { pwi: 'FX-005' }))[0]).toMatchObject({ name: 'Lone Star 5H', statusCurrent: null, createdBy: 'fixtures' });
    store.close();
    const empty = await createTestStore();
    expect((await empty.query('Well', {})).total).toBe(0);
    empty.close();
  });

  it('seeds by a function of the store, sync or async', async () => {
    const sync = await createTestStore({ seed: (s) => void s.insert('Well', fixtures.wells) });
    expect(await pwis(sync)).toHaveLength(5);
    const async = await createTestStore({
      seed: async (s) => {
        unwrap(await s.insert('Well', [{ pwi: 'A' }]));
        unwrap(await s.withUser('loader').insert('Well', [{ pwi: 'B' }]));
      },
    });
    expect(unwrap(await async.query('Well', {}, { sortBy: 'pwi' })).map((w) => [w.pwi, w.createdBy])).toEqual([['A', 'consolidata'], ['B', 'loader']]);
    // A function may answer its envelopes: a successful one is fine.
    const answered = await createTestStore({ seed: (s) => s.insert('Well', [{ pwi: 'C' }]) });
    expect(await pwis(answered)).toEqual(['C']);
    for (const s of [sync, async, answered]) s.close();
  });

  it('a refused seed rejects with the DataStoreError of its envelope, and the half-made store is closed', async () => {
    const opened: DataStore[] = [];
    const open = DataStore.open.bind(DataStore);
    vi.spyOn(DataStore, 'open').mockImplementation((...args) => {
      const s = open(...(args as Parameters<typeof open>));
      opened.push(s as DataStore);
      return s;
    });
    const cases: [TestStoreOptions['seed'], string, RegExp][] = [
      [{ Well: [{ pwi: 'A' }, { pwi: 'A' }] }, 'DUPLICATE_KEY', /seeding Well failed.*pwi "A" already exists/],
      [{ Well: fixtures.wells, DailyProduction: [{ pwi: 'X', oilVol: 'lots' as unknown as number }] }, 'VALIDATION', /seeding DailyProduction failed.*oilVol/],
      [{ Well: fixtures.wells, Wel: [{}] } as unknown as TestStoreOptions['seed'], 'UNKNOWN_TYPE', /seeding Wel failed.*did you mean "Well"/],
      [{ Well: [{ pwi: 'A', spudDatee: '2020-01-01' }] } as unknown as TestStoreOptions['seed'], 'UNKNOWN_FIELD', /spudDatee/],
      [(s: DataStore) => s.insert('Well', [{ pwi: 'A' }, { pwi: 'A' }]), 'DUPLICATE_KEY', /the seed function failed/],
    ];
    for (const [seed, code, message] of cases) {
      const error = await createTestStore({ seed }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DataStoreError);
      expect(error).toMatchObject({ code, envelope: { success: false } });
      expect((error as Error).message).toMatch(message);
      expect(opened.at(-1)!.closed).toBe(true);
    }
    expect(opened).toHaveLength(cases.length);
  });

  it('a seed function that throws rejects with its error, and the store is closed', async () => {
    let seen: DataStore | undefined;
    const boom = new Error('fixture file missing');
    await expect(
      createTestStore({
        seed: async (s) => {
          seen = s;
          unwrap(await s.insert('Well', [{ pwi: 'A' }]));
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(seen!.closed).toBe(true);
    await expect(createTestStore({ seed: async (s) => unwrap(await s.insert('Well', [{ pwi: 7 as unknown as string }])) })).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('bad options throw at once, as DataStore.open does', () => {
    expect(() => createTestStore({ seed: 'wells.json' as unknown as TestStoreOptions['seed'] })).toThrow(TypeError);
    expect(() => createTestStore({ sed: {} } as TestStoreOptions)).toThrow(/unknown option "sed"/);
    expect(() => createTestStore(null as unknown as TestStoreOptions)).toThrow(TypeError);
  });
});

describe('sampleData and fixtures', () => {
  it('sampleData() is what serve --sample loads: 240 Wells in four basins and 87,600 DailyProduction, unchanged', () => {
    const { Well: wells, DailyProduction: daily } = sampleData();
    expect(wells).toHaveLength(240);
    expect(daily).toHaveLength(87_600);
    expect(new Set(wells.map((w) => w.basinName))).toEqual(new Set(['Permian', 'Eagle Ford', 'Bakken', 'DJ']));
    expect(wells.every((w) => w.surfaceLoc?.type === 'Point' && w.bottomHoleLoc?.type === 'Point')).toBe(true);
    // The digest of the data as generated before sizes existed: the CLI's sample must not change.
    const digest = createHash('sha256').update(JSON.stringify({ wells, daily })).digest('hex');
    expect(digest).toBe('54b8ff96f1b85b538fb3efa19752265aaa53467d1b8d8c21d09a1a20bba52039');
  });

  it('sampleData(seed, sizes) sizes the data; the old positional form gives the same', () => {
    const small = sampleData(7, { wells: 5, days: 10 });
    expect(small.Well).toHaveLength(5);
    expect(small.DailyProduction).toHaveLength(50);
    expect(sampleData(7, 5, 10)).toEqual(small);
    expect(sampleData(7, { wells: 5, days: 10 })).toEqual(small);
    expect(sampleData(8, { wells: 5, days: 10 })).not.toEqual(small);
    expect(sampleData(7, { wells: 2 }).DailyProduction).toHaveLength(730);
    expect(sampleData(7, { days: 0 }).DailyProduction).toHaveLength(0);
    expect(() => sampleData(7, { wells: -1 })).toThrow(RangeError);
    expect(() => sampleData(7, { days: 1.5 })).toThrow(RangeError);
    expect(() => sampleData(Number.NaN)).toThrow(TypeError);
  });

  it('sampleData(seed, sizes) is a seed as it is: createTestStore holds its documents by type', async () => {
    const small = sampleData(7, { wells: 5, days: 10 });
    expect(Object.keys(small)).toEqual(['Well', 'DailyProduction']);
    const store = await createTestStore({ seed: small });
    const pwis = (docs: readonly { pwi?: unknown }[]) => docs.map((d) => d.pwi);
    expect(pwis(unwrap(await store.query('Well', {}, { sortBy: 'pwi' })))).toEqual(pwis(small.Well));
    expect((await store.query('DailyProduction', {}, { limit: 1 })).total).toBe(50);
    expect(pwis(unwrap(await store.query('DailyProduction', { prodDate: '2024-01-10' }, { sortBy: 'pwi' })))).toEqual(pwis(small.Well));
    // The earlier names still read the same arrays (deprecated, not enumerable).
    expect([small.wells, small.daily]).toEqual([small.Well, small.DailyProduction]);
    expect(small.wells).toBe(small.Well);
    store.close();
  });

  it('fixtures: named Wells in two basins with locations, one with null fields, and their daily production', async () => {
    expect(fixtures.wells.map((w) => [w.pwi, w.name, w.basinName])).toEqual([
      ['FX-001', 'Hawk 1H', 'Permian'],
      ['FX-002', 'Falcon 2H', 'Permian'],
      ['FX-003', 'Cedar 3H', 'Permian'],
      ['FX-004', 'Ridge 4H', 'Bakken'],
      ['FX-005', 'Lone Star 5H', 'Bakken'],
    ]);
    expect(fixtures.wells[4]).toMatchObject({ surfaceLoc: null, statusCurrent: null, spudDate: null });
    expect(fixtures.daily).toHaveLength(9);
    // Frozen all the way down: a test cannot change what the next one seeds.
    expect(Object.isFrozen(fixtures.wells)).toBe(true);
    expect(Object.isFrozen(fixtures.wells[0]!.surfaceLoc!.coordinates)).toBe(true);
    expect(() => ((fixtures.wells[0] as { name: string }).name = 'Changed')).toThrow(TypeError);
    const store = await createTestStore({ seed: seedFixtures });
    expect(await pwis(store, { surfaceLoc: { bounds: fixtures.bounds.permian } })).toEqual(['FX-001', 'FX-002', 'FX-003']);
    expect(await pwis(store, { surfaceLoc: { bounds: fixtures.bounds.bakken } })).toEqual(['FX-004']);
    expect(unwrap(await store.query('DailyProduction', { daysOn: 0 })).map((d) => [d.pwi, d.prodDate, d.oilVol])).toEqual([['FX-002', '2024-01-02T00:00:00.000Z', 0]]);
    store.close();
  });
});

/** The R*Tree tables of a store (one per GeoPoint field of every type), whatever the schema names them. */
function rtrees(store: SqliteDataStore): string[] {
  return store.database.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING rtree%'`).pluck().all() as string[];
}

/** The entries of every R*Tree of a store. */
function rtreeRows(store: SqliteDataStore): number {
  return rtrees(store).reduce((n, t) => n + (store.database.prepare(`SELECT count(*) FROM "${t}"`).pluck().get() as number), 0);
}

describe('restore and soft delete', () => {
  it("a restored store deletes as the snapshot's database says: softly or not", async () => {
    const soft = DataStore.open(':memory:', { softDelete: ['Well'] });
    const hard = DataStore.open(':memory:');
    await soft.insert('Well', [{ pwi: 'S' }]);
    await hard.insert('Well', [{ pwi: 'H' }]);
    const softSnap = soft.snapshot();
    // The soft store restored from a database without soft delete removes for good (its unique indexes are full ones).
    soft.restore(hard.snapshot());
    expect((await soft.delete('Well', { pwi: 'H' })).count).toBe(1);
    expect((await soft.query('Well', {}, { includeDeleted: true })).count).toBe(0);
    // And the other way: restored from a soft delete database, it stamps.
    hard.restore(softSnap);
    expect((await hard.delete('Well', { pwi: 'S' })).count).toBe(1);
    expect((await hard.query('Well', {}, { includeDeleted: true })).data.map((d) => typeof d.deletedAt)).toEqual(['string']);
    soft.close();
    hard.close();
  });

  it('bytes of a database that is not a store are refused with NOT_A_STORE, and the store goes on as it was', async () => {
    const store = await createTestStore({ seed: seedFixtures });
    const other = new Database(':memory:');
    other.exec('CREATE TABLE t (x)');
    for (const bytes of [other.serialize(), Buffer.from('not a database at all, only some text of no use'), Buffer.from([1, 2, 3])]) {
      expect(() => store.restore(bytes)).toThrow(expect.objectContaining({ constructor: NotAStoreError, code: 'NOT_A_STORE' }));
    }
    expect(await pwis(store)).toEqual(['FX-001', 'FX-002', 'FX-003', 'FX-004', 'FX-005']);
    other.close();
    store.close();
  });
});
