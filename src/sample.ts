/**
 * Deterministic sample data: a few hundred Wells and a year of DailyProduction for each, from a seeded PRNG
 * (`sampleData`, what `serve --sample` loads), and a handful of hand-written named documents (`fixtures`).
 */
import { deepFreeze } from './catalogue/documents.js';
import type { DocInput } from './catalogue/index.js';
import { prng } from './ids.js';

const BASINS = [
  { basin: 'Permian', state: 'Texas', counties: ['Midland', 'Martin', 'Howard', 'Reeves'], formations: ['Wolfcamp A', 'Wolfcamp B', 'Spraberry'], lon: [-103.6, -101.2], lat: [31.0, 32.6] },
  { basin: 'Eagle Ford', state: 'Texas', counties: ['Karnes', 'DeWitt', 'La Salle'], formations: ['Eagle Ford', 'Austin Chalk'], lon: [-99.6, -97.2], lat: [28.2, 29.4] },
  { basin: 'Bakken', state: 'North Dakota', counties: ['McKenzie', 'Williams', 'Mountrail'], formations: ['Middle Bakken', 'Three Forks'], lon: [-104.0, -102.2], lat: [47.4, 48.6] },
  { basin: 'DJ', state: 'Colorado', counties: ['Weld', 'Adams'], formations: ['Niobrara', 'Codell'], lon: [-105.0, -103.8], lat: [39.8, 40.9] },
] as const;
const OPERATORS = ['Mesa Ridge Energy', 'Sundance Petroleum', 'Copperline Resources', 'Blue Heron Oil', 'Tallgrass E&P'];
const STATUSES = ['Producing', 'Producing', 'Producing', 'Shut-In', 'Temporarily Abandoned'];

/** Sample documents by type name, as `createTestStore({ seed })` and `store.dynamic.insertMany` take them. */
export interface SampleData {
  Well: DocInput<'Well'>[];
  DailyProduction: DocInput<'DailyProduction'>[];
  /** @deprecated the same array as `Well` (the earlier name; not enumerable, so a seed does not see it). */
  readonly wells: DocInput<'Well'>[];
  /** @deprecated the same array as `DailyProduction` (the earlier name; not enumerable, so a seed does not see it). */
  readonly daily: DocInput<'DailyProduction'>[];
}

/** How much `sampleData` generates: Wells, and days of DailyProduction per Well (so `wells × days` of them). */
export interface SampleSizes {
  /** Number of Wells (default 240). */
  wells?: number;
  /** Days of DailyProduction per Well, from 2024-01-01 (default 365). */
  days?: number;
}

const DAY = 86_400_000;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function count(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new RangeError(`sampleData: ${name} must be a non-negative integer, got ${String(value)}`);
  return value as number;
}

/**
 * Sample Wells in four basins (Permian, Eagle Ford, Bakken, DJ), with surface and bottom-hole locations, and a
 * year of DailyProduction each: the same seed always gives the same documents. `sampleData()` is what
 * `serve --sample` loads: 240 Wells and 87,600 DailyProduction. No ids or base fields are set: the store adds them.
 * The documents come by type name, so they are a seed as they are.
 * @example
 * const { Well, DailyProduction } = sampleData();                 // 240 Wells, 87,600 DailyProduction
 * const store = await createTestStore({ seed: sampleData(7, { wells: 20, days: 30 }) }); // 20 Wells, 600 DailyProduction
 */
export function sampleData(seed?: number, sizes?: SampleSizes): SampleData;
/** @deprecated the positional form of `sampleData(seed, { wells, days })`. */
export function sampleData(seed: number | undefined, wells: number, days?: number): SampleData;
export function sampleData(seed = 20240101, sizes: SampleSizes | number = {}, legacyDays?: number): SampleData {
  if (typeof seed !== 'number' || !Number.isFinite(seed)) throw new TypeError(`sampleData: seed must be a number, got ${String(seed)}`);
  if (typeof sizes !== 'number' && (sizes === null || typeof sizes !== 'object')) throw new TypeError('sampleData: sizes must be an object { wells?, days? }');
  const wellCount = typeof sizes === 'number' ? count(sizes, 'wells', 240) : count(sizes.wells, 'sizes.wells', 240);
  const days = typeof sizes === 'number' ? count(legacyDays, 'days', 365) : count(sizes.days, 'sizes.days', 365);
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const between = (lo: number, hi: number) => lo + rnd() * (hi - lo);
  const wells: DocInput<'Well'>[] = [];
  const daily: DocInput<'DailyProduction'>[] = [];
  const start = Date.UTC(2024, 0, 1);
  for (let i = 0; i < wellCount; i++) {
    const b = pick(BASINS);
    const pwi = `SMP-${String(i + 1).padStart(4, '0')}`;
    const lon = round(between(b.lon[0], b.lon[1]), 5);
    const lat = round(between(b.lat[0], b.lat[1]), 5);
    const lateral = Math.round(between(4000, 12000));
    const azimuth = rnd() * 2 * Math.PI;
    const spud = start - Math.round(between(120, 1500)) * DAY;
    const completion = spud + Math.round(between(30, 90)) * DAY;
    const gasOil = between(0.8, 4); // Mcf per bbl
    const qi = between(300, 1500); // initial oil rate, bbl/d
    const decline = between(0.0015, 0.004); // nominal daily decline
    const b2 = between(0.6, 1.2); // Arps hyperbolic exponent
    wells.push({
      pwi,
      wellId: `42-${String(100000 + i * 37).padStart(6, '0')}`,
      name: `${pick(['Hawk', 'Mesa', 'Cedar', 'Falcon', 'Ridge', 'Lone Star'])} ${i + 1}H`,
      operatorName: pick(OPERATORS),
      basinName: b.basin,
      stateName: b.state,
      countyName: pick(b.counties),
      countryName: 'United States',
      formationName: pick(b.formations),
      fieldName: `${b.basin} Field`,
      primaryProduct: gasOil > 3 ? 'Gas' : 'Oil',
      statusCurrent: pick(STATUSES),
      spudDate: new Date(spud).toISOString(),
      completionDate: new Date(completion).toISOString(),
      firstProductionDate: new Date(completion + 10 * DAY).toISOString(),
      lateralLength: lateral,
      fracStages: Math.round(lateral / between(180, 260)),
      totalDepth: Math.round(between(7000, 11000) + lateral),
      measuredDepth: Math.round(between(7000, 11000) + lateral + 500),
      surfaceLoc: { type: 'Point', coordinates: [lon, lat] },
      bottomHoleLoc: {
        type: 'Point',
        coordinates: [round(lon + (Math.cos(azimuth) * lateral) / 300000, 5), round(lat + (Math.sin(azimuth) * lateral) / 364000, 5)],
      },
      groups: [b.basin, pick(OPERATORS)],
    });
    const onlineDays = (start - completion) / DAY;
    for (let d = 0; d < days; d++) {
      const t = onlineDays + d;
      const down = rnd() < 0.03;
      const oil = down ? 0 : round(qi / (1 + b2 * decline * t) ** (1 / b2) * between(0.93, 1.07));
      const gas = round(oil * gasOil * between(0.95, 1.05));
      const water = round(oil * between(0.6, 2.5));
      daily.push({
        pwi,
        wellId: wells[i]!.wellId,
        prodDate: new Date(start + d * DAY).toISOString(),
        daysOn: down ? 0 : 1,
        oilVol: oil,
        gasVol: gas,
        waterVol: water,
        boeVol: round(oil + gas / 6),
        tubingPressure: down ? 0 : round(between(150, 900)),
        casingPressure: down ? 0 : round(between(200, 1200)),
      });
    }
  }
  const data = { Well: wells, DailyProduction: daily } as SampleData;
  // The earlier names still read, for code written against them; seeds and insertMany iterate the type names only.
  Object.defineProperties(data, { wells: { value: wells, enumerable: false }, daily: { value: daily, enumerable: false } });
  return data;
}

const point = (lon: number, lat: number) => ({ type: 'Point' as const, coordinates: [lon, lat] });

/**
 * A handful of hand-written documents with names a test can refer to (frozen, so one test cannot change what the next
 * one reads: copy one to change it).
 *
 * | pwi | name | basin | surfaceLoc | notes |
 * |---|---|---|---|---|
 * | FX-001 | Hawk 1H | Permian | -102.1, 31.9 | Producing, spud 2021-03-14, 42 stages |
 * | FX-002 | Falcon 2H | Permian | -101.9, 32.3 | Producing, spud 2022-06-01, 38 stages |
 * | FX-003 | Cedar 3H | Permian | -103.5, 31.4 | Shut-In, spud 2019-11-20, 30 stages |
 * | FX-004 | Ridge 4H | Bakken | -103.2, 47.8 | Producing, spud 2020-08-05, 50 stages |
 * | FX-005 | Lone Star 5H | Bakken | null | status, operator, dates, depths and locations null |
 *
 * `daily`: DailyProduction of FX-001, FX-002 and FX-004 on 2024-01-01, -02 and -03 (9 documents; FX-002 was down
 * on 2024-01-02: zero volumes, `daysOn` 0). `bounds`: boxes for `{ surfaceLoc: { bounds } }` holding exactly the
 * Permian wells with a location (FX-001..003) and the Bakken one (FX-004).
 * @example await createTestStore({ seed: { Well: fixtures.wells, DailyProduction: fixtures.daily } })
 */
export const fixtures = deepFreeze({
  wells: [
    {
      pwi: 'FX-001', wellId: '42-329-00001', name: 'Hawk 1H', operatorName: 'Mesa Ridge Energy',
      basinName: 'Permian', stateName: 'Texas', countyName: 'Midland', formationName: 'Wolfcamp A',
      statusCurrent: 'Producing', primaryProduct: 'Oil', spudDate: '2021-03-14T00:00:00.000Z',
      completionDate: '2021-05-02T00:00:00.000Z', lateralLength: 9800, fracStages: 42, totalDepth: 19400,
      surfaceLoc: point(-102.1, 31.9), bottomHoleLoc: point(-102.07, 31.92), groups: ['Permian', 'Mesa Ridge Energy'],
    },
    {
      pwi: 'FX-002', wellId: '42-317-00002', name: 'Falcon 2H', operatorName: 'Sundance Petroleum',
      basinName: 'Permian', stateName: 'Texas', countyName: 'Martin', formationName: 'Spraberry',
      statusCurrent: 'Producing', primaryProduct: 'Oil', spudDate: '2022-06-01T00:00:00.000Z',
      completionDate: '2022-07-15T00:00:00.000Z', lateralLength: 10400, fracStages: 38, totalDepth: 20100,
      surfaceLoc: point(-101.9, 32.3), bottomHoleLoc: point(-101.87, 32.33), groups: ['Permian', 'Sundance Petroleum'],
    },
    {
      pwi: 'FX-003', wellId: '42-389-00003', name: 'Cedar 3H', operatorName: 'Mesa Ridge Energy',
      basinName: 'Permian', stateName: 'Texas', countyName: 'Reeves', formationName: 'Wolfcamp B',
      statusCurrent: 'Shut-In', primaryProduct: 'Gas', spudDate: '2019-11-20T00:00:00.000Z',
      completionDate: '2020-01-10T00:00:00.000Z', lateralLength: 7500, fracStages: 30, totalDepth: 17600,
      surfaceLoc: point(-103.5, 31.4), bottomHoleLoc: point(-103.47, 31.38), groups: ['Permian', 'Mesa Ridge Energy'],
    },
    {
      pwi: 'FX-004', wellId: '33-053-00004', name: 'Ridge 4H', operatorName: 'Blue Heron Oil',
      basinName: 'Bakken', stateName: 'North Dakota', countyName: 'McKenzie', formationName: 'Middle Bakken',
      statusCurrent: 'Producing', primaryProduct: 'Oil', spudDate: '2020-08-05T00:00:00.000Z',
      completionDate: '2020-10-01T00:00:00.000Z', lateralLength: 11200, fracStages: 50, totalDepth: 21500,
      surfaceLoc: point(-103.2, 47.8), bottomHoleLoc: point(-103.16, 47.83), groups: ['Bakken', 'Blue Heron Oil'],
    },
    {
      pwi: 'FX-005', wellId: '33-105-00005', name: 'Lone Star 5H', operatorName: null,
      basinName: 'Bakken', stateName: 'North Dakota', countyName: 'Williams', formationName: null,
      statusCurrent: null, primaryProduct: null, spudDate: null,
      completionDate: null, lateralLength: null, fracStages: null, totalDepth: null,
      surfaceLoc: null, bottomHoleLoc: null, groups: ['Bakken'],
    },
  ] satisfies DocInput<'Well'>[] as readonly DocInput<'Well'>[],
  daily: (
    [
      ['FX-001', '42-329-00001', [[612.4, 1040.1, 880.2, 210.5, 455.0], [605.9, 1031.7, 871.4, 208.8, 452.1], [598.3, 1019.0, 866.0, 207.2, 449.6]]],
      ['FX-002', '42-317-00002', [[540.2, 890.3, 1020.7, 188.1, 402.3], [0, 0, 0, 0, 0], [551.6, 902.8, 1033.9, 190.4, 405.8]]],
      ['FX-004', '33-053-00004', [[820.0, 1476.0, 610.4, 305.2, 640.7], [811.3, 1460.3, 603.9, 303.0, 636.2], [802.9, 1445.2, 598.1, 300.8, 631.9]]],
    ] as const
  ).flatMap(([pwi, wellId, days]) =>
    days.map(([oilVol, gasVol, waterVol, tubingPressure, casingPressure], d) => ({
      pwi,
      wellId,
      prodDate: new Date(Date.UTC(2024, 0, 1 + d)).toISOString(),
      daysOn: oilVol === 0 ? 0 : 1,
      oilVol,
      gasVol,
      waterVol,
      boeVol: round(oilVol + gasVol / 6),
      tubingPressure,
      casingPressure,
    })),
  ) satisfies DocInput<'DailyProduction'>[] as readonly DocInput<'DailyProduction'>[],
  bounds: {
    /** [-104, 31, -101, 33]: FX-001, FX-002 and FX-003. */
    permian: [-104, 31, -101, 33] as [number, number, number, number],
    /** [-104.5, 47, -102, 49]: FX-004 (FX-005 has no location). */
    bakken: [-104.5, 47, -102, 49] as [number, number, number, number],
  },
});
