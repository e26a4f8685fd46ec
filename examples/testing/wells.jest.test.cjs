const { DataStore, createTestStore, fixedClock, fixtures, sampleData, unwrap } = require('consolidata/testing');

let seeded;
let store;

beforeAll(async () => {
  // Once per file: 20 sample Wells with 30 days of production each, and the named fixtures.
  const sample = sampleData(7, { wells: 20, days: 30 });
  const template = await createTestStore({
    seed: { Well: [...fixtures.wells, ...sample.Well], DailyProduction: [...fixtures.daily, ...sample.DailyProduction] },
  });
  seeded = template.snapshot();
  template.close();
});

// Before every test: a store of its own, copied from the snapshot, with its own clock and id sequence.
beforeEach(() => {
  store = DataStore.fromSnapshot(seeded, { clock: fixedClock('2024-06-01T00:00:00.000Z'), ids: 7 });
});

afterEach(() => store.close());

test('the daily production of Hawk 1H', async () => {
  const days = unwrap(await store.query('DailyProduction', { pwi: 'FX-001' }, { sortBy: 'prodDate' }));
  expect(days.map((d) => d.oilVol)).toEqual([612.4, 605.9, 598.3]);
});

test('deleting a well', async () => {
  const env = await store.delete('Well', { pwi: 'FX-002' });
  expect(env.count).toBe(1);
  expect(unwrap(await store.query('Well', {})).length).toBe(24);
});

test('every test gets the seeded data back', async () => {
  const page = await store.query('Well', { basinName: 'Permian' }, { limit: 1 });
  expect(page.total).toBeGreaterThanOrEqual(3);
  expect(unwrap(await store.query('Well', { pwi: 'FX-002' }))).toHaveLength(1);
});

test('new documents get the same ids and times in every run', async () => {
  const env = await store.insert('Well', [{ pwi: 'NEW-1' }]);
  const [well] = unwrap(await store.query('Well', { pwi: 'NEW-1' }));
  expect(well.createdAt).toBe('2024-06-01T00:00:00.000Z');
  const again = DataStore.fromSnapshot(seeded, { clock: fixedClock('2024-06-01T00:00:00.000Z'), ids: 7 });
  expect(await again.insert('Well', [{ pwi: 'NEW-1' }])).toEqual(env);
  again.close();
});

test('a seed the store refuses rejects with its error', async () => {
  const seed = { Well: [{ pwi: 'A' }, { pwi: 'A' }] };
  await expect(createTestStore({ seed })).rejects.toMatchObject({ name: 'DataStoreError', code: 'DUPLICATE_KEY' });
});
