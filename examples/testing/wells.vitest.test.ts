import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestStore, fixedClock, fixtures, unwrap, type SqliteDataStore } from 'consolidata/testing';

let store: SqliteDataStore;
let seeded: Buffer;

beforeAll(async () => {
  // Once per file: the fixtures go in in one transaction, with a clock that stands still and seeded ids.
  store = await createTestStore({
    seed: { Well: fixtures.wells, DailyProduction: fixtures.daily },
    clock: fixedClock('2024-06-01T00:00:00.000Z'),
    ids: 42,
  });
  seeded = store.snapshot();
});

// Before every test: back to the seeded data (well under a millisecond per 1,000 documents).
beforeEach(() => store.restore(seeded));

afterAll(() => store.close());

describe('wells', () => {
  it('finds the Permian wells by location', async () => {
    const wells = unwrap(await store.query('Well', { surfaceLoc: { bounds: fixtures.bounds.permian } }, { sortBy: 'pwi' }));
    expect(wells.map((w) => w.name)).toEqual(['Hawk 1H', 'Falcon 2H', 'Cedar 3H']);
  });

  it('shuts a well in', async () => {
    unwrap(await store.update('Well', { pwi: 'FX-001' }, { statusCurrent: 'Shut-In' }));
    const [well] = unwrap(await store.query('Well', { pwi: 'FX-001' }));
    expect(well?.statusCurrent).toBe('Shut-In');
    expect(well?.updatedAt).toBe('2024-06-01T00:00:00.000Z');
  });

  it('starts every test from the snapshot', async () => {
    const shutIn = unwrap(await store.query('Well', { statusCurrent: 'Shut-In' }));
    expect(shutIn.map((w) => w.pwi)).toEqual(['FX-003']);
  });

  it('refuses a second FX-001', async () => {
    const env = await store.insert('Well', [{ pwi: 'FX-001', name: 'Hawk 1H (again)' }]);
    expect(env.success).toBe(false);
    expect(env.errors[0]?.code).toBe('DUPLICATE_KEY');
  });
});
