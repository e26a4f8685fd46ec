/** Deterministic sample data: a few hundred Wells and a year of DailyProduction for each, from a seeded PRNG. */

/** mulberry32: a tiny seeded PRNG, so the same seed always gives the same data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASINS = [
  { basin: 'Permian', state: 'Texas', counties: ['Midland', 'Martin', 'Howard', 'Reeves'], formations: ['Wolfcamp A', 'Wolfcamp B', 'Spraberry'], lon: [-103.6, -101.2], lat: [31.0, 32.6] },
  { basin: 'Eagle Ford', state: 'Texas', counties: ['Karnes', 'DeWitt', 'La Salle'], formations: ['Eagle Ford', 'Austin Chalk'], lon: [-99.6, -97.2], lat: [28.2, 29.4] },
  { basin: 'Bakken', state: 'North Dakota', counties: ['McKenzie', 'Williams', 'Mountrail'], formations: ['Middle Bakken', 'Three Forks'], lon: [-104.0, -102.2], lat: [47.4, 48.6] },
  { basin: 'DJ', state: 'Colorado', counties: ['Weld', 'Adams'], formations: ['Niobrara', 'Codell'], lon: [-105.0, -103.8], lat: [39.8, 40.9] },
] as const;
const OPERATORS = ['Mesa Ridge Energy', 'Sundance Petroleum', 'Copperline Resources', 'Blue Heron Oil', 'Tallgrass E&P'];
const STATUSES = ['Producing', 'Producing', 'Producing', 'Shut-In', 'Temporarily Abandoned'];

export interface SampleData {
  wells: Record<string, unknown>[];
  daily: Record<string, unknown>[];
}

const DAY = 86_400_000;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Sample Wells (with surface and bottom-hole locations) and a year of DailyProduction each.
 * @example const { wells, daily } = sampleData(); await store.insert('Well', wells);
 */
export function sampleData(seed = 20240101, wellCount = 240, days = 365): SampleData {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const between = (lo: number, hi: number) => lo + rnd() * (hi - lo);
  const wells: Record<string, unknown>[] = [];
  const daily: Record<string, unknown>[] = [];
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
  return { wells, daily };
}
