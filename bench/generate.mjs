/** Seeded, deterministic Well and DailyProduction documents with a realistic shape (~1 KB per Well). */

/** mulberry32: small, fast, good enough for benchmark data; same seed → same documents. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Wells cluster in basins (weight = share of wells); 5% are scattered over the whole box.
export const BASINS = [
  { name: 'Permian', lon: -102.5, lat: 31.8, sd: 0.9, w: 0.28, states: ['Texas', 'New Mexico'], counties: ['Midland', 'Martin', 'Howard', 'Reeves', 'Loving', 'Eddy', 'Lea'], formations: ['Wolfcamp A', 'Wolfcamp B', 'Spraberry', 'Bone Spring'] },
  { name: 'Eagle Ford', lon: -98.5, lat: 28.7, sd: 0.6, w: 0.12, states: ['Texas'], counties: ['Karnes', 'Dimmit', 'La Salle', 'Webb', 'Gonzales'], formations: ['Eagle Ford', 'Austin Chalk'] },
  { name: 'Williston', lon: -103.3, lat: 47.9, sd: 0.7, w: 0.11, states: ['North Dakota', 'Montana'], counties: ['McKenzie', 'Williams', 'Mountrail', 'Dunn', 'Richland'], formations: ['Bakken', 'Three Forks'] },
  { name: 'DJ', lon: -104.6, lat: 40.4, sd: 0.5, w: 0.09, states: ['Colorado'], counties: ['Weld', 'Adams', 'Arapahoe'], formations: ['Niobrara', 'Codell'] },
  { name: 'Anadarko', lon: -98.5, lat: 35.6, sd: 0.8, w: 0.1, states: ['Oklahoma'], counties: ['Canadian', 'Kingfisher', 'Grady', 'Blaine'], formations: ['Meramec', 'Woodford', 'Osage'] },
  { name: 'Appalachian', lon: -79.5, lat: 40.9, sd: 1.0, w: 0.1, states: ['Pennsylvania', 'West Virginia', 'Ohio'], counties: ['Washington', 'Greene', 'Susquehanna', 'Marshall', 'Belmont'], formations: ['Marcellus', 'Utica'] },
  { name: 'Haynesville', lon: -93.7, lat: 32.3, sd: 0.5, w: 0.06, states: ['Louisiana', 'Texas'], counties: ['De Soto', 'Caddo', 'Harrison', 'Panola'], formations: ['Haynesville', 'Bossier'] },
  { name: 'San Juan', lon: -107.8, lat: 36.6, sd: 0.5, w: 0.04, states: ['New Mexico', 'Colorado'], counties: ['San Juan', 'Rio Arriba', 'La Plata'], formations: ['Mancos', 'Fruitland Coal'] },
  { name: 'Powder River', lon: -105.8, lat: 43.8, sd: 0.6, w: 0.04, states: ['Wyoming'], counties: ['Converse', 'Campbell', 'Johnson'], formations: ['Turner', 'Parkman', 'Niobrara'] },
  { name: 'Uinta', lon: -109.9, lat: 40.2, sd: 0.4, w: 0.03, states: ['Utah'], counties: ['Uintah', 'Duchesne'], formations: ['Green River', 'Wasatch'] },
];
export const BOX = { minX: -125, maxX: -67, minY: 25, maxY: 49 };

const OPERATORS = Array.from({ length: 60 }, (_, i) =>
  `${['Apex', 'Blue Mesa', 'Cimarron', 'Diamondback', 'Eagle Rock', 'Frontier', 'Granite', 'High Plains', 'Iron Horse', 'Juniper', 'Kestrel', 'Lone Star'][i % 12]} ${['Energy', 'Resources', 'Oil & Gas', 'Petroleum', 'Operating'][Math.floor(i / 12)]}`);
const SURNAMES = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
  'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee',
  'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson', 'Walker', 'Young',
  'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores', 'Green', 'Adams', 'Nelson', 'Baker',
  'Hall', 'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts', 'Smithson', 'Smithers', 'Blacksmith', 'Goldsmith',
  'Parker', 'Evans', 'Edwards', 'Collins', 'Stewart', 'Morris', 'Rogers', 'Reed', 'Cook', 'Morgan', 'Bell', 'Murphy',
  'Bailey', 'Cooper', 'Richardson', 'Cox', 'Howard', 'Ward', 'Peterson', 'Gray', 'James', 'Watson', 'Brooks', 'Kelly',
  'Sanders', 'Price', 'Bennett', 'Wood', 'Barnes', 'Ross', 'Henderson', 'Coleman', 'Jenkins', 'Perry', 'Powell', 'Long',
  'Patterson', 'Hughes', 'Washington', 'Butler', 'Simmons', 'Foster', 'Bryant', 'Alexander', 'Russell', 'Griffin'];
export const STATUSES = ['Producing', 'Producing', 'Producing', 'Producing', 'Shut-in', 'Drilling', 'Completed', 'Permitted', 'Plugged'];
const DAY = 86400000;
const T0 = Date.UTC(2005, 0, 1);
const T1 = Date.UTC(2025, 0, 1);

function gauss(r) {
  let u = 0;
  while (u === 0) u = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}
const pick = (r, a) => a[Math.floor(r() * a.length)];
const iso = (t) => new Date(Math.floor(t / DAY) * DAY).toISOString();
const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;
const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

/** Unique key of well i; the bench looks wells up by it. */
export const pwiOf = (i) => `PWI-${String(i).padStart(8, '0')}`;

/** `n` Well documents (indexes `from`…`from+n-1`), the same for the same arguments. */
export function generateWells(n, { seed = 42, from = 0 } = {}) {
  const out = new Array(n);
  for (let k = 0; k < n; k++) {
    const i = from + k;
    const r = prng(seed * 1000003 + i);
    let b = BASINS[BASINS.length - 1];
    let u = r();
    for (const c of BASINS) if ((u -= c.w) < 0) { b = c; break; }
    const scattered = r() < 0.05;
    const lon = scattered ? BOX.minX + r() * (BOX.maxX - BOX.minX) : clamp(b.lon + gauss(r) * b.sd, BOX.minX, BOX.maxX);
    const lat = scattered ? BOX.minY + r() * (BOX.maxY - BOX.minY) : clamp(b.lat + gauss(r) * b.sd * 0.8, BOX.minY, BOX.maxY);
    const lateral = r() < 0.15 ? 0 : round(4000 + r() * 9000 + Math.max(0, gauss(r)) * 1500, 1);
    const azimuth = r() * 2 * Math.PI;
    const deg = lateral / 364000;
    const spud = T0 + r() * (T1 - T0 - 400 * DAY);
    const completion = spud + (20 + r() * 100) * DAY;
    const firstProd = completion + (5 + r() * 55) * DAY;
    const status = pick(r, STATUSES);
    const state = pick(r, b.states);
    const county = pick(r, b.counties);
    const api = `${String(10 + Math.floor(r() * 40)).padStart(2, '0')}${String(Math.floor(r() * 500)).padStart(3, '0')}${String(i % 100000).padStart(5, '0')}0000`;
    out[k] = {
      pwi: pwiOf(i),
      wellId: api,
      rigId: `RIG-${Math.floor(r() * 400)}`,
      name: `${pick(r, SURNAMES)} ${1 + Math.floor(r() * 36)}-${1 + Math.floor(r() * 40)} ${['Unit', 'Fed', 'State', 'A', 'B'][Math.floor(r() * 5)]} ${1 + Math.floor(r() * 12)}H`,
      operatorName: pick(r, OPERATORS),
      isVirtual: false,
      entityType: 'Well',
      primaryProduct: r() < 0.7 ? 'Oil' : 'Gas',
      statusCurrent: status,
      statusCurrentDate: iso(firstProd + r() * 800 * DAY),
      permitDate: iso(spud - (30 + r() * 170) * DAY),
      spudDate: iso(spud),
      completionDate: iso(completion),
      rigReleaseDate: iso(spud + (10 + r() * 20) * DAY),
      firstProductionDate: iso(firstProd),
      lastProductionDate: iso(Math.min(T1, firstProd + r() * 3000 * DAY)),
      leaseName: `${pick(r, SURNAMES)} ${['Ranch', 'Trust', 'Estate', 'Farms'][Math.floor(r() * 4)]}`,
      leaseNumber: String(10000 + Math.floor(r() * 90000)),
      wellNumber: `${1 + Math.floor(r() * 20)}H`,
      fieldName: `${b.name} ${pick(r, ['North', 'South', 'East', 'West', 'Central'])}`,
      basinName: b.name,
      reservoirName: pick(r, b.formations),
      formationName: pick(r, b.formations),
      stateName: state,
      countyName: county,
      countryName: 'United States',
      lateralLength: lateral,
      fracStages: lateral ? Math.round(lateral / 220 + r() * 10) : 0,
      totalProppant: round(lateral * (1200 + r() * 1500), 0),
      totalFluidPumped: round(lateral * (30 + r() * 40), 0),
      perforationUpper: round(6000 + r() * 5000, 1),
      totalDepth: round(8000 + r() * 14000, 1),
      measuredDepth: round(9000 + lateral + r() * 12000, 1),
      surfaceLoc: { type: 'Point', coordinates: [round(lon, 6), round(lat, 6)] },
      bottomHoleLoc: { type: 'Point', coordinates: [round(clamp(lon + Math.cos(azimuth) * deg, -180, 180), 6), round(clamp(lat + Math.sin(azimuth) * deg, -90, 90), 6)] },
      prod: { oilCum: round(r() * 600000, 1), gasCum: round(r() * 3e6, 1), waterCum: round(r() * 900000, 1), months: Math.floor(r() * 200) },
      typeWeight: round(r(), 4),
      reserveCategory: pick(r, ['PDP', 'PDNP', 'PUD', 'PROB']),
      groups: [`basin:${b.name}`, `op:${Math.floor(r() * 60)}`, ...(r() < 0.3 ? ['pilot'] : [])],
      extra: { source: pick(r, ['IHS', 'Enverus', 'state']), vintage: 2015 + Math.floor(r() * 10), qa: r() < 0.9 },
    };
  }
  return out;
}

/** `n` DailyProduction rows: `n / days` wells × `days` consecutive days with an exponential decline. */
export function generateDaily(n, { seed = 7, days = 100 } = {}) {
  const out = [];
  const wells = Math.max(1, Math.ceil(n / days));
  for (let w = 0; w < wells && out.length < n; w++) {
    const r = prng(seed * 7919 + w);
    const start = T0 + Math.floor(r() * 6000) * DAY;
    const qi = 200 + r() * 1500;
    const gor = 0.5 + r() * 3;
    const wor = 0.3 + r() * 2;
    const D = 0.002 + r() * 0.004;
    let oilCum = 0;
    for (let d = 0; d < days && out.length < n; d++) {
      const oil = round(qi * Math.exp(-D * d) * (0.9 + r() * 0.2), 2);
      oilCum += oil;
      out.push({
        pwi: pwiOf(w),
        wellName: `Well ${w}`,
        prodDate: iso(start + d * DAY),
        daysOn: 1,
        uptime: 86400,
        oilRate: oil,
        gasRate: round(oil * gor, 2),
        waterRate: round(oil * wor, 2),
        oilVol: oil,
        gasVol: round(oil * gor, 2),
        waterVol: round(oil * wor, 2),
        oilCum: round(oilCum, 2),
        tubingPressure: round(300 + r() * 700, 1),
        casingPressure: round(500 + r() * 900, 1),
      });
    }
  }
  return out;
}
