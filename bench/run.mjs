#!/usr/bin/env node
/**
 * consolidata benchmark: Well / DailyProduction workloads on seeded data, against hand-written SQL on the same
 * JSONB layout (the limit), timed in turn in one process, and in-memory peers (NeDB, LokiJS, mingo), each in a process
 * of its own (see groupsOf).
 *
 *   node bench/run.mjs            quick: 10k and 100k documents (< 3 min on 2 cores)
 *   node bench/run.mjs --full     adds 1M
 *   node bench/run.mjs --report   copies the latest results into bench/REPORT.md with the machine description
 *   node bench/run.mjs --testkit  consolidata/testing: per-test setup by re-inserting vs restoring a snapshot (bench/testkit.mjs)
 *   node bench/run.mjs --backend postgres   the workloads at 100k on PostgreSQL (a throwaway server, or --pg-url=…)
 *   node bench/run.mjs --backend citus      the same on a local Citus cluster (coordinator + 2 workers) beside PostgreSQL
 *                                  beside SQLite: consolidata and hand-written SQL on each; writes REPORT.md's PostgreSQL section
 *   node bench/run.mjs --sizes=100000 --only=agg-month-well,agg-month-basin   the aggregates alone: REPORT.md's aggregates section
 *   node bench/run.mjs --baseline=DIR   adds `base`: the library as built in DIR (another checkout, `npm run build`
 *                                  there), measured interleaved with this one in the same run; prints after/before
 *   dev: --sizes=10000 --systems=sql,consolidata --only=eq-pwi,bounds-100
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { BASINS, generateDaily, generateWells, pwiOf, prng } from './generate.mjs';
import { boxFor, haversine, polygonFor, ringsBox } from './geo.mjs';
import { writeAggregates, writeCitus, writeOutputs, writePostgres, writeReport } from './report.mjs';
import { aggregateRows } from './aggregate.mjs';
import { ms } from './report.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const RESULTS = path.join(HERE, 'results');

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
// `npm run bench -- --backend postgres` (two words) or --backend=postgres.
const BACKEND = opt('backend') ?? (argv.includes('--backend') ? argv[argv.indexOf('--backend') + 1] : 'sqlite');
if (BACKEND !== 'sqlite' && BACKEND !== 'postgres' && BACKEND !== 'citus') throw new Error(`--backend: expected sqlite, postgres or citus, got ${BACKEND}`);
const CITUS = BACKEND === 'citus';
const PG = BACKEND === 'postgres' || CITUS;

if (flag('report')) {
  await writeReport({ root: ROOT, results: RESULTS });
  process.exit(0);
}

// `--testkit`: consolidata/testing's per-test setup, re-insert vs restore (bench/testkit.mjs), on its own.
if (flag('testkit')) {
  await import('./testkit.mjs');
  process.exit(process.exitCode ?? 0);
}

// Re-run in a child with a large heap (the peers hold every document in memory) and an exposed gc for RSS readings.
if (!process.env.CONSOLIDATA_BENCH_CHILD) {
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=16384', fileURLToPath(import.meta.url), ...argv], {
    stdio: 'inherit',
    env: { ...process.env, CONSOLIDATA_BENCH_CHILD: '1' },
  });
  process.exit(r.status ?? 1);
}
const gc = globalThis.gc ?? (v8.setFlagsFromString('--expose-gc'), vm.runInNewContext('gc'));

// ---- the library, as built ------------------------------------------------------------------------------------
async function loadLibrary() {
  const entry = path.join(ROOT, 'dist', 'index.js');
  if (!fs.existsSync(entry)) throw new Error('dist/index.js is missing: run `npm run bench` (it builds first) or `npm run build`');
  return { ...(await import(pathToFileURL(entry).href)), entry: path.relative(ROOT, entry) };
}
const lib = await loadLibrary();
const { DataStore } = lib;
// `--baseline=DIR`: an earlier build of the library, measured beside this one (system `base`).
const BASELINE = opt('baseline') ? path.resolve(opt('baseline')) : null;
const baseLib = BASELINE ? await import(pathToFileURL(path.join(BASELINE, 'dist', 'index.js')).href) : null;
// A bench server's memory, as a small production one is configured (fsync on, commits not waited for, as SQLite's WAL).
const BENCH_PG = ['shared_buffers=256MB', 'max_wal_size=4GB', 'work_mem=16MB'];
// PostgreSQL: the built consolidata/postgres entry, and a server (a throwaway one unless --pg-url or PG_URL names one).
const postgres = PG ? await import(pathToFileURL(path.join(ROOT, 'dist', 'postgres.js')).href) : null;
const cluster = PG ? await (async () => {
  const url = opt('pg-url') ?? process.env.PG_URL;
  if (!url) return (await import('../scripts/pg-cluster.mjs')).startCluster({ throwaway: false, settings: BENCH_PG });
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const version = (await client.query('SELECT version() AS v')).rows[0].v.split(' on ')[0];
  await client.end();
  return { url, version, stop() {} };
})() : null;
// Citus: a coordinator and two workers of its own (--citus-url names one instead), beside the PostgreSQL server above.
const citus = CITUS ? (opt('citus-url') ? { url: opt('citus-url'), version: 'Citus', stop() {} } : await (await import('../scripts/pg-cluster.mjs')).startCitus({ throwaway: false, settings: BENCH_PG })) : null;

// ---- configuration ----------------------------------------------------------------------------------------------
const FULL = flag('full');
const SIZES = opt('sizes') ? opt('sizes').split(',').map(Number) : PG ? [100_000] : FULL ? [10_000, 100_000, 1_000_000] : [10_000, 100_000];
const SYSTEMS = (opt('systems') ?? (CITUS ? 'pgsql,pg,citus' : PG ? 'sql,consolidata,pgsql,pg' : BASELINE ? 'sql,consolidata,base' : 'sql,consolidata,cached,nedb,loki,loki-clone,mingo')).split(',');
if (SYSTEMS.includes('base') && !BASELINE) throw new Error('--systems: base needs --baseline=DIR (a checkout with dist/ built)');
// The in-memory peers that also run at 1M (each holds every document as live objects; NeDB and mingo at 1M take
// most of an hour between them and answer nothing the 100k run does not show): --peers-1m=loki,nedb,mingo.
const PEERS_1M = (opt('peers-1m') ?? 'loki,loki-clone').split(',').filter(Boolean);
const systemsAt = (n) => (n >= 1_000_000 ? SYSTEMS.filter((s) => !['nedb', 'loki', 'loki-clone', 'mingo'].includes(s) || PEERS_1M.includes(s)) : SYSTEMS);
const ONLY = opt('only')?.split(',');
const ONE_BY_ONE = 1000;
// Time per (workload, system) cell, by size: reps stop once it is spent (at least 3, at most 15; heavy ones at least 1).
const BUDGET_MS = (n) => (n <= 10_000 ? 150 : n <= 100_000 ? 250 : 1500);
const STORE_OPTIONS = { userId: 'bench', indexes: { Well: [{ fields: ['spudDate'] }, { fields: ['basinName'] }] } };
// `cached`: the store with its document cache (option documentCache), measured warm: the check pass fills it.
const CACHE_BYTES = 2 ** 30;
const optionsOf = (name) => (name === 'cached' ? { ...STORE_OPTIONS, documentCache: { maxBytes: CACHE_BYTES } } : STORE_OPTIONS);
const MODULES = {
  sql: './systems/sql.mjs',
  consolidata: './systems/consolidata.mjs',
  cached: './systems/consolidata.mjs',
  base: './systems/consolidata.mjs',
  nedb: './peers/nedb.mjs',
  loki: './peers/loki.mjs',
  'loki-clone': './peers/loki.mjs',
  mingo: './peers/mingo.mjs',
  pg: './systems/postgres.mjs',
  pgsql: './systems/pgsql.mjs',
  citus: './systems/citus.mjs',
};
/** The limit each system is measured against: hand-written SQL on the same database; Citus against one PostgreSQL server. */
const limitOf = (system) => (system === 'citus' ? 'pg' : system === 'pg' || system === 'pgsql' ? 'pgsql' : 'sql');

// ---- measuring -------------------------------------------------------------------------------------------------
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const call = async (fn) => {
  const r = fn();
  return r && typeof r.then === 'function' ? await r : r;
};

/** Repeats `rep` (one timed unit of `inner` operations) until the budget is spent; returns ms per operation. */
async function repeat(rep, { setup, ...options }) {
  const r = repeater(rep, options);
  while (!r.done()) {
    if (setup) await setup();
    await r.rep();
  }
  return r.result();
}

/**
 * The reps of `repeat` one at a time: `rep()` times one, `done()` says whether the budget is spent (within the
 * bounds on reps), `result()` gives ms per operation.
 */
function repeater(rep, { inner = 1, budget, heavy = false, minReps = heavy ? 1 : 3 }) {
  const times = [];
  let spent = 0;
  // Page faults that read the disk during the timed reps (a mapped file or heap not in memory): where a slow
  // median's time may have gone, printed beside it.
  let faults = 0;
  const maxReps = heavy ? 5 : 15;
  return {
    done: () => !(times.length < maxReps && (times.length < minReps || spent < budget)),
    async rep() {
      const f0 = process.resourceUsage().majorPageFault;
      const t0 = performance.now();
      await rep();
      const dt = performance.now() - t0;
      faults += process.resourceUsage().majorPageFault - f0;
      times.push(dt / inner);
      spent += dt;
    },
    result: () => ({ ms: median(times), reps: times.length, majflt: faults / (times.length * inner) }),
  };
}

/** One system's query, measured as measureQueries does. */
async function measureQuery(fn, args, budget, checkN) {
  return (await measureQueries([fn], args, budget, checkN))[0];
}

/**
 * measureQuery for several systems at once, their timed batches interleaved: each round times one batch of every
 * system still short of its reps, starting one system further each round, so a drift of the machine (another
 * process, the page cache, frequency) falls on all of them alike instead of on whichever was measured then. A minor
 * collection before each batch leaves the young garbage of the batch before to be collected off the clock. (A full
 * collection before the batches of 100 ms or more was tried: every system's long batches then read 1.3-2x slower
 * than the run before, the short ones unchanged, so it measured the collection's aftermath, not the query.)
 */
async function measureQueries(fns, args, budget, checkN) {
  const runs = [];
  for (const fn of fns) {
    // Each system starts on a collected heap: the garbage of the one measured before is not collected on its clock.
    gc();
    runs.push(await sizeQuery(fn, args, budget, checkN));
  }
  // Untimed batches of each for one budget just before the timed rounds: while the others were sized, a system's
  // pages may have been let go again, and a deep call path is still being compiled. The store's query path settles
  // only after ~10,000 calls (an indexed equality: 31-53 us a call in its first 2,000, 14-17 after), hand SQL's
  // within 2,000; with one batch here, the timed batches began after ~1,700 calls and carried part of that warm-up.
  for (const r of runs) await r.warm();
  for (let round = 0; runs.some((r) => !r.done()); round++) {
    for (let i = 0; i < runs.length; i++) {
      const r = runs[(i + round) % runs.length];
      if (r.done()) continue;
      gc({ type: 'minor' });
      await r.rep();
    }
  }
  return runs.map((r) => r.result());
}

/**
 * A query's check pass, which records the hit count per argument (up to `checkN` arguments or the budget), the
 * other arguments once each, and batches sized to ~20 ms on warm calls that cycle through the arguments; then
 * `rep()` times one batch until `done()`, and `result()`.
 */
async function sizeQuery(fn, args, budget, checkN) {
  const hits = [];
  const t0 = performance.now();
  for (const a of args.slice(0, checkN)) {
    hits.push(await call(() => fn(...a)));
    if (performance.now() - t0 > budget) break;
  }
  const one = (performance.now() - t0) / hits.length;
  // The arguments the check pass left out, once each, untimed (within the budget): the batches cycle through all of
  // them, and a file whose pages the OS let go while other systems ran reads them back here rather than in the
  // first timed batches. Slow there, a system got batches of a few calls, each on a key not read before.
  const w0 = performance.now();
  for (const a of args.slice(hits.length)) {
    await call(() => fn(...a));
    if (performance.now() - w0 > budget) break;
  }
  let k = 0;
  const batch = async (size) => {
    for (let i = 0; i < size; i++) {
      const a = args[k++ % args.length];
      await call(() => fn(...a));
    }
  };
  // Batches of ~20 ms (at most 1,000 calls), sized on warm calls by doubling: the check pass's first calls also
  // prepare statements and compile code, and sized from them alone a system with costly first calls was timed in
  // batches of a few cold calls.
  let inner = 1;
  while (one <= budget && inner < 1000) {
    const t = performance.now();
    await batch(inner);
    const dt = performance.now() - t;
    if (dt >= 20) {
      inner = Math.max(1, Math.round((inner * 20) / dt));
      break;
    }
    inner = Math.min(1000, inner * 2);
  }
  // A call slower than the budget still gets three reps, unless three would take more than ten budgets: one
  // sample of a call of seconds was what a collection or the page cache did then.
  const reps = repeater(() => batch(inner), { inner, budget, minReps: one > budget && one * 3 > 10 * budget ? 1 : 3 });
  const warm = async () => {
    const t = performance.now();
    do await batch(inner);
    while (performance.now() - t < budget);
  };
  return { ...reps, warm, result: () => ({ ...reps.result(), hits, inner }) };
}

// ---- workloads -------------------------------------------------------------------------------------------------
/** Query parameters picked from the generated data, so hit counts are known and printed. */
function plan(n, wells) {
  const r = prng(n);
  const pts = wells.map((d) => d.surfaceLoc.coordinates);
  const basin = (name) => BASINS.find((b) => b.name === name);
  const dj = basin('DJ');
  const permian = basin('Permian');
  const ana = basin('Anadarko');
  const small = boxFor(pts, dj.lon + 0.3, dj.lat + 0.2, 100);
  const large = boxFor(pts, permian.lon, permian.lat, Math.min(10_000, n / 10));
  const poly = polygonFor(pts, ana.lon, ana.lat, Math.round(n / 25));
  // The spudDate below which a tenth of the wells lie: the export workload's query.
  const cut = wells.map((d) => d.spudDate).filter(Boolean).sort()[Math.floor(n / 10)];
  const sample = (k) => Array.from({ length: k }, () => pwiOf(Math.floor(r() * n)));
  // near: 100 random wells, each the centre of a 2-mile circle and of a 10-nearest search within 10 miles.
  const centres = Array.from({ length: 100 }, () => pts[Math.floor(r() * n)]);
  const within = (c, m) => pts.reduce((k, p) => k + (haversine(c, p) <= m ? 1 : 0), 0);
  return {
    pwis: sample(200).map((p) => [p]),
    inLists: Array.from({ length: 20 }, () => [sample(100)]),
    range: [['2019-01-01T00:00:00.000Z', '2019-04-01T00:00:00.000Z']],
    lateral: [[14_000]],
    prefix: [['Smith']],
    small: [[small.box]],
    large: [[large.box]],
    polygon: [[poly.rings, ringsBox(poly.rings)]],
    combined: [[large.box, 'Producing']],
    dpPwis: Array.from({ length: 50 }, () => [pwiOf(Math.floor(r() * Math.max(1, n / 1000)))]),
    exportCut: [[cut]],
    pageSize: [[1000]],
    near: centres.map((c) => [c, 3218.688]),
    knn: centres.map((c) => [c, 16_093.44]),
    expected: { 'near-2mi': centres.map((c) => within(c, 3218.688)), 'knn-10': centres.map((c) => `${Math.min(10, within(c, 16_093.44))}/${within(c, 16_093.44)}`), 'bounds-100': small.hits, 'bounds-10k': large.hits, polygon: poly.hits, 'export-10pct': wells.filter((d) => d.spudDate && d.spudDate < cut).length, 'page-all': n, 'iterate-all': n },
  };
}

const QUERIES = [
  { id: 'eq-pwi', what: 'indexed equality on pwi', method: 'eqPwi', args: (P) => P.pwis, check: 10 },
  { id: 'in-100-pwi', what: '`in` with 100 pwi values', method: 'inPwi', args: (P) => P.inLists, check: 3 },
  { id: 'range-spudDate', what: 'spudDate in one quarter (indexed)', method: 'dateRange', args: (P) => P.range, check: 1 },
  { id: 'gt-lateralLength', what: 'lateralLength > 14000 (unindexed)', method: 'numGt', args: (P) => P.lateral, check: 1 },
  { id: 'regex-prefix', what: 'name /^Smith/', method: 'regexPrefix', args: (P) => P.prefix, check: 1 },
  { id: 'bounds-100', what: 'bounds box, ~100 hits', method: 'bounds', args: (P) => P.small, check: 1 },
  { id: 'bounds-10k', what: 'bounds box, ~10% of docs (≤10k)', method: 'bounds', args: (P) => P.large, check: 1 },
  { id: 'polygon-hole', what: 'polygon with a hole', method: 'polygon', args: (P) => P.polygon, check: 1 },
  { id: 'combined', what: 'bounds + eq + sort + limit 50 + total', method: 'combined', args: (P) => P.combined, check: 1 },
  // Distance on a GeoPoint field (an extension of the service's API): near 2 miles, and the 10 nearest within 10 miles
  // (page and total), around 100 random wells; hand SQL runs the same R*Tree box and haversine, the scans run it on every row.
  { id: 'near-2mi', what: 'near: wells within 2 miles of a well (100 wells)', method: 'near', args: (P) => P.near, check: 100, systems: ['sql', 'consolidata'] },
  { id: 'knn-10', what: '10 nearest wells within 10 miles, sorted by distance, + total (100 wells)', method: 'nearest', args: (P) => P.knn, check: 100, systems: ['sql', 'consolidata'] },
  { id: 'near-2mi-scan', what: 'near-2mi as a brute-force haversine scan (no R*Tree)', method: 'nearScan', args: (P) => P.near, check: 3, systems: ['sql'] },
  { id: 'knn-10-scan', what: 'knn-10 as a brute-force haversine scan and sort (no R*Tree)', method: 'nearestScan', args: (P) => P.knn, check: 3, systems: ['sql'] },
  // Whole results, read by pages and streams: memory stays flat (only hand SQL and the store have cursors).
  { id: 'page-all', what: 'every document, pages of 1,000 by cursor (hand SQL: keyset on rowid)', method: 'pageAll', args: (P) => P.pageSize, check: 1, systems: ['sql', 'consolidata'] },
  { id: 'iterate-all', what: 'every document through iterate() (hand SQL: one statement, row by row)', method: 'iterateAll', args: () => [[]], check: 1, systems: ['sql', 'consolidata'] },
  { id: 'export-10pct', what: 'NDJSON export of the 10% earliest-spudded wells (hand SQL: keyset on rowid)', method: 'exportRange', args: (P) => P.exportCut, check: 1, systems: ['sql', 'consolidata'] },
  // The same geo queries without the R*Tree: what the index buys, on the same SQL otherwise.
  { id: 'bounds-10k-scan', what: 'bounds-10k as a full scan (no R*Tree)', method: 'boundsScan', args: (P) => P.large, check: 1, systems: ['sql'] },
  { id: 'polygon-hole-scan', what: 'polygon-hole as a full scan (no R*Tree)', method: 'polygonScan', args: (P) => P.polygon, check: 1, systems: ['sql'] },
];
// Aggregates over DailyProduction rows of their own (as many as the size), in a fresh store of each system.
const AGGREGATE_WORKLOADS = [
  { id: 'agg-month-well', what: 'monthly oil per well: sum of oilVol by pwi and month', method: 'monthlyPerWell' },
  { id: 'agg-month-basin', what: 'monthly oil per basin: sum of oilVol by extra.basin and month', method: 'monthlyPerBasin' },
];
const WORKLOADS = ['bulk-insert', ...QUERIES.map((q) => q.id), 'open-existing', 'dp-bulk-insert', 'dp-history', 'insert-one', 'update-many', 'delete-many', ...AGGREGATE_WORKLOADS.map((a) => a.id)];
const run = (id) => !ONLY || ONLY.includes(id);

// ---- the run ---------------------------------------------------------------------------------------------------
const results = [];
const mismatches = [];
const memory = [];
let peakSampledRss = 0;
const sampleRss = () => (peakSampledRss = Math.max(peakSampledRss, process.memoryUsage().rss));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'consolidata-bench-'));
const started = performance.now();

function record(workload, size, system, m, extra = {}) {
  sampleRss();
  const row = { workload, size, system, medianMs: m.ms, opsPerSec: m.ms > 0 ? 1000 / m.ms : null, ratioToLimit: null, reps: m.reps, majflt: m.majflt, ...extra };
  results.push(row);
  const fmt = m.ms >= 100 ? m.ms.toFixed(0) : m.ms >= 1 ? m.ms.toFixed(2) : m.ms.toFixed(4);
  const faults = m.majflt >= 0.5 ? `  [${Math.round(m.majflt)} disk faults per op]` : '';
  console.log(`  ${workload.padEnd(17)} ${system.padEnd(12)} ${fmt.padStart(10)} ms  ×${String(m.reps).padEnd(3)} ${extra.hits !== undefined ? `hits ${extra.hits}` : ''}${faults}${extra.note ? `  (${extra.note})` : ''}`);
}
function na(workload, size, system, note) {
  results.push({ workload, size, system, medianMs: null, opsPerSec: null, ratioToLimit: null, note });
}
/** A workload's hit counts per system, kept to be compared once every system has run (some in processes of their own). */
const countsLog = [];
function checkCounts(workload, size, counts) {
  countsLog.push({ workload, size, counts });
}
/** Every workload's counts, merged over the processes that measured them, each compared with the reference. */
function compareCounts(log) {
  const merged = new Map();
  for (const { workload, size, counts } of log) {
    const key = `${workload}@${size}`;
    merged.set(key, { workload, size, counts: { ...merged.get(key)?.counts, ...counts } });
  }
  for (const { workload, size, counts } of merged.values()) compareOne(workload, size, counts);
}
function compareOne(workload, size, counts) {
  // The reference: the computed answer, else hand-written SQL on SQLite, else on PostgreSQL (the Citus run has no SQLite).
  const refName = counts.expected !== undefined ? 'expected' : counts.sql !== undefined ? 'sql' : counts.pgsql !== undefined ? 'pgsql' : 'consolidata';
  const ref = counts[refName];
  for (const [sys, c] of Object.entries(counts)) {
    // Per-argument hit lists are compared on the arguments both systems ran.
    const same = Array.isArray(c) && Array.isArray(ref) ? c.every((v, i) => i >= ref.length || String(v) === String(ref[i])) : String(Array.isArray(c) ? c[0] : c) === String(Array.isArray(ref) ? ref[0] : ref);
    if (!same) {
      const line = `MISMATCH ${workload} @${size}: ${sys} = ${c}, ${refName} = ${ref}`;
      console.log(`\n!!!!!!!! ${line} !!!!!!!!\n`);
      mismatches.push(line);
    }
  }
}

/**
 * The aggregate workloads at size `n`: `n` DailyProduction rows loaded into a fresh store of each system that has
 * them (outside the timing), then each aggregate measured; every system's groups and oil total are compared.
 */
async function aggregates(n, systems) {
  const t0 = performance.now();
  const rows = aggregateRows(n);
  console.log(`\n== aggregates over ${n.toLocaleString('en-US')} DailyProduction rows, generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const counts = Object.fromEntries(AGGREGATE_WORKLOADS.map((a) => [a.id, {}]));
  // A baseline build may predate store.aggregate (its module is consolidata's own).
  for (const name of systems.filter((x) => x !== 'base')) {
    const { create } = await import(MODULES[name]);
    const s = await create({ file: path.join(tmp, `${name}-agg-${n}.db`), DataStore, storeOptions: STORE_OPTIONS, pgUrl: cluster?.url, citusUrl: citus?.url, postgres });
    // A system without the aggregates (NeDB, a baseline build, Citus) is left out of them.
    if (typeof s.monthlyPerWell !== 'function') continue;
    await s.reset();
    if (s.dpBulkInsert) await call(() => s.dpBulkInsert(s.prepare?.dpBulkInsert ? s.prepare.dpBulkInsert(rows) : rows));
    else s.loadDaily(rows);
    await s.analyze?.();
    gc();
    for (const a of AGGREGATE_WORKLOADS) {
      if (!run(a.id)) continue;
      const m = await measureQuery(() => s[a.method](), [[]], BUDGET_MS(n) * 4, 1);
      counts[a.id][name] = m.hits;
      record(a.id, n, name, m, { hits: m.hits[0] });
    }
    await call(() => s.close());
    gc();
  }
  for (const a of AGGREGATE_WORKLOADS) if (run(a.id)) checkCounts(a.id, n, counts[a.id]);
}

/**
 * The document cache after the queries: what it holds (its estimate, and the heap it took: the heap's growth since
 * the load, every store's other memory being the same then), and warm result-heavy reads against LokiJS.
 */
function cacheSummary(n, store) {
  gc();
  const stats = store.documentCacheStats();
  const heapMB = (process.memoryUsage().heapUsed - heapAfterLoad) / 2 ** 20;
  memory.push({ size: n, system: 'cached', rssGrowthMB: heapMB, bytesOnDisk: null, cache: { ...stats, heapGrowthMB: heapMB } });
  console.log(`   document cache: ${stats.entries.toLocaleString('en-US')} documents, ${(stats.bytes / 2 ** 20).toFixed(0)} MB of JSON text (maxBytes ${(stats.maxBytes / 2 ** 20).toFixed(0)} MB), heap +${heapMB.toFixed(0)} MB since the load; ${stats.hits.toLocaleString('en-US')} hits, ${stats.misses.toLocaleString('en-US')} misses`);
  for (const w of ['range-spudDate', 'bounds-10k', 'polygon-hole']) {
    const at = (system) => results.find((r) => r.workload === w && r.size === n && r.system === system)?.medianMs;
    const [cached, plain] = ['cached', 'consolidata'].map(at);
    // LokiJS runs in a process of its own, after this one: the report sets the cache beside it.
    console.log(`   ${w.padEnd(15)} cached ${ms(cached)} ms, uncached ${ms(plain)} ms: cached/uncached ${cached && plain ? `${(cached / plain).toFixed(2)}×` : 'n/a'}`);
  }
}
let heapAfterLoad = 0;

/** Every workload at size `n` for `systems`, in this process: they share its heap and are timed in turn. */
async function measureSize(n, systems) {
  if (AGGREGATE_WORKLOADS.some((a) => run(a.id))) await aggregates(n, systems);
  // A run of the aggregates alone needs no Wells.
  if (ONLY?.every((id) => AGGREGATE_WORKLOADS.some((a) => a.id === id))) return;
  const t0 = performance.now();
  const wells = generateWells(n);
  const daily = generateDaily(n / 10);
  const oneDocs = generateWells(ONE_BY_ONE, { from: 90_000_000 });
  // Inserted and removed untimed before insert-one, whose target is warm single inserts: the first writes after the
  // bulk load also compile the write path and restart the load's WAL.
  const warmDocs = generateWells(ONE_BY_ONE, { from: 80_000_000 });
  const P = plan(n, wells);
  const budget = BUDGET_MS(n);
  console.log(`\n== ${n.toLocaleString('en-US')} Well documents (+ ${daily.length.toLocaleString('en-US')} DailyProduction), generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  console.log(`   boxes: bounds-100 ${P.expected['bounds-100']} hits, bounds-10k ${P.expected['bounds-10k']} hits; polygon-hole ${P.expected.polygon} hits (computed in JS)`);

  const sys = {};
  const SYSTEMS_N = systems;
  for (const name of SYSTEMS_N) {
    const { create } = await import(MODULES[name]);
    sys[name] = await create({ file: path.join(tmp, `${name}-${n}.db`), DataStore: name === 'base' ? baseLib.DataStore : DataStore, storeOptions: optionsOf(name), clone: name === 'loki-clone', pgUrl: cluster?.url, citusUrl: citus?.url, postgres });
  }
  const each = async (fn) => { for (const name of SYSTEMS_N) await fn(name, sys[name]); };

  // bulk insert: every rep starts from an empty store; the last one is the data the other workloads use.
  await each(async (name, s) => {
    gc();
    const before = process.memoryUsage().rss;
    if (!s.bulkInsert || !run('bulk-insert')) {
      await s.reset();
      if (s.bulkInsert) await s.bulkInsert(s.prepare?.bulkInsert ? s.prepare.bulkInsert(wells) : wells);
      else s.load(wells);
      if (!s.bulkInsert) na('bulk-insert', n, name, 'no storage: the array is the data');
    } else {
      let docs;
      let count;
      const m = await repeat(async () => { count = await call(() => s.bulkInsert(docs)); }, {
        budget: budget * 4,
        heavy: true,
        setup: async () => { await s.reset(); docs = s.prepare?.bulkInsert ? s.prepare.bulkInsert(wells) : wells; gc(); },
      });
      record('bulk-insert', n, name, m, { hits: count, docsPerSec: (n / m.ms) * 1000, note: s.notes?.['bulk-insert'] });
      if (count !== n) checkCounts('bulk-insert', n, { expected: n, [name]: count });
    }
    // PostgreSQL plans from statistics: gathered once the data is in, as autovacuum would on a live server.
    await s.analyze?.();
    gc();
    memory.push({ size: n, system: name, rssGrowthMB: (process.memoryUsage().rss - before) / 2 ** 20, bytesOnDisk: s.fileBytes?.() ?? (s.bytes ? await s.bytes() : null) });
  });
  gc();
  heapAfterLoad = process.memoryUsage().heapUsed;

  for (const q of QUERIES) {
    if (!run(q.id)) continue;
    const counts = {};
    const names = SYSTEMS_N.filter((name) => !q.systems || q.systems.includes(name));
    const measured = await measureQueries(names.map((name) => (...a) => sys[name][q.method](...a)), q.args(P), budget, q.check);
    names.forEach((name, i) => {
      const m = measured[i];
      counts[name] = m.hits;
      const hits = typeof m.hits[0] === 'number' ? m.hits.reduce((a, b) => a + b, 0) / m.hits.length : m.hits[0];
      record(q.id, n, name, m, { hits, note: sys[name].notes?.[q.id === 'bounds-100' || q.id === 'bounds-10k' ? 'bounds' : q.id === 'polygon-hole' ? 'polygon' : q.id] });
    });
    // Geo hit counts are also known from the generated coordinates (the first check-pass argument).
    if (P.expected[q.id] !== undefined) counts.expected = P.expected[q.id];
    if (q.id === 'bounds-10k-scan') counts.expected = P.expected['bounds-10k'];
    if (q.id === 'near-2mi-scan' || q.id === 'knn-10-scan') counts.expected = P.expected[q.id.slice(0, -5)];
    if (q.id === 'polygon-hole' || q.id === 'polygon-hole-scan') counts.expected = P.expected.polygon;
    checkCounts(q.id, n, counts);
  }
  if (sys.cached) cacheSummary(n, sys.cached.store);

  if (run('open-existing')) {
    const counts = {};
    await each(async (name, s) => {
      if (!s.openAndQuery) return na('open-existing', n, name, 'no persistence');
      // LokiJS saves its whole database as one JSON string: at 1M it is past V8's string limit, and Node aborts.
      if ((name === 'loki' || name === 'loki-clone') && n >= 1_000_000) return na('open-existing', n, name, 'cannot save 1M: its file is one JSON string, past V8’s limit');
      let hits;
      const pwi = P.pwis[0][0];
      const m = await repeat(async () => { hits = await call(() => s.openAndQuery(pwi)); }, { budget: budget * 2, heavy: true, setup: async () => { await call(() => s.closeForOpen()); gc(); } });
      counts[name] = hits;
      const opens = name === 'pg' || name === 'pgsql' ? 'connects a new pool (the store also checks its schema)' : `opens the ${n.toLocaleString('en-US')}-document file`;
      record('open-existing', n, name, m, { hits, note: s.notes?.['open-existing'] ?? `${opens}, then one eq-pwi query` });
    });
    checkCounts('open-existing', n, counts);
  }

  if (run('dp-bulk-insert') || run('dp-history')) {
    const counts = {};
    await each(async (name, s) => {
      if (!s.dpBulkInsert) {
        s.loadDaily(daily);
        return na('dp-bulk-insert', n, name, 'no storage');
      }
      const rows = s.prepare?.dpBulkInsert ? s.prepare.dpBulkInsert(daily) : daily;
      gc();
      let count;
      const t = performance.now();
      count = await call(() => s.dpBulkInsert(rows));
      const m = { ms: performance.now() - t, reps: 1 };
      counts[name] = count;
      await s.analyze?.();
      record('dp-bulk-insert', n, name, m, { hits: count, docsPerSec: (daily.length / m.ms) * 1000, note: 'one run (a second would collide on the unique key)' });
    });
    checkCounts('dp-bulk-insert', n, counts);
    const hc = {};
    const measured = await measureQueries(SYSTEMS_N.map((name) => (pwi) => sys[name].dpHistory(pwi)), P.dpPwis, budget, 10);
    SYSTEMS_N.forEach((name, i) => {
      const m = measured[i];
      hc[name] = m.hits;
      record('dp-history', n, name, m, { hits: m.hits.reduce((a, b) => a + b, 0) / m.hits.length });
    });
    checkCounts('dp-history', n, hc);
  }

  if (run('insert-one')) {
    const counts = {};
    const pwis = oneDocs.map((d) => d.pwi);
    const names = SYSTEMS_N.filter((name) => {
      if (!sys[name].insertOne) na('insert-one', n, name, 'no storage');
      return !!sys[name].insertOne;
    });
    const runs = [];
    for (const name of names) {
      const s = sys[name];
      for (const d of s.prepare?.insertOne ? warmDocs.map(s.prepare.insertOne) : warmDocs) await call(() => s.insertOne(d));
      await call(() => s.removePwis(warmDocs.map((d) => d.pwi)));
      runs.push({ name, s, docs: s.prepare?.insertOne ? oneDocs.map(s.prepare.insertOne) : oneDocs, times: [], count: 0 });
    }
    gc();
    // In chunks of 100 documents, the systems in turn (one further each chunk): a drift of the machine falls on all alike.
    const CHUNK = 100;
    for (let at = 0, round = 0; at < ONE_BY_ONE; at += CHUNK, round++) {
      for (let i = 0; i < runs.length; i++) {
        const r = runs[(i + round) % runs.length];
        gc({ type: 'minor' });
        for (const d of r.docs.slice(at, at + CHUNK)) {
          const t = performance.now();
          r.count += await call(() => r.s.insertOne(d));
          r.times.push(performance.now() - t);
        }
      }
    }
    for (const { name, s, times, count } of runs) {
      counts[name] = count;
      record('insert-one', n, name, { ms: median(times), reps: times.length }, { hits: count, note: `per document, ${ONE_BY_ONE} single-document requests; mean ${(times.reduce((a, b) => a + b, 0) / times.length).toFixed(4)} ms` });
      await call(() => s.removePwis(pwis));
    }
    checkCounts('insert-one', n, counts);
  }

  if (run('update-many')) {
    const counts = {};
    await each(async (name, s) => {
      if (!s.updateMany) return na('update-many', n, name, 'no storage');
      let rep = 0;
      let first;
      const m = await repeat(async () => {
        const c = await call(() => s.updateMany('Haynesville', `Shut-in ${rep++}`));
        first ??= c;
      }, { budget, heavy: true });
      counts[name] = first;
      record('update-many', n, name, m, { hits: first, note: 'set statusCurrent on every Haynesville well' });
    });
    checkCounts('update-many', n, counts);
  }

  if (run('delete-many')) {
    const counts = {};
    await each(async (name, s) => {
      if (!s.deleteMany) return na('delete-many', n, name, 'no storage');
      let rep = 0;
      const c = [];
      const m = await repeat(async () => {
        const month = String(1 + rep++).padStart(2, '0');
        c.push(await call(() => s.deleteMany(`2012-${month}-01T00:00:00.000Z`, `2012-${month}-16T00:00:00.000Z`)));
      }, { budget, heavy: true });
      counts[name] = c[0];
      record('delete-many', n, name, m, { hits: c[0], note: 'spudDate in half a month; each rep another month' });
    });
    checkCounts('delete-many', n, counts);
  }

  await each((name, s) => s.close());
  gc();
  sampleRss();
  console.log(`   size ${n.toLocaleString('en-US')} (${systems.join(', ')}) done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/**
 * Which systems share a process. The in-memory peers each run in a process of their own, after the stores: they
 * hold every document as live objects (LokiJS and its clone mode together took the 1M run of 2026-11-25 to 11.4 GB),
 * and a heap that size is collected on the clock of whichever system runs then and takes the page cache from the
 * stores' files. In quick runs at 100k the store's eq-pwi read 1.20x hand SQL with hand SQL alone beside it and
 * 1.33-1.34x with the peers loaded. Hand SQL and the stores stay in one process, timed in turn, so the ratio to the
 * limit is measured as before; a peer's figures come from its own process, minutes apart. A process given `--part`
 * is one of these: it writes what it measured to that file for the run that started it.
 */
const PEERS = ['nedb', 'loki', 'loki-clone', 'mingo'];
const PART = opt('part');
const groupsOf = (systems) =>
  PART || PG || BASELINE ? [systems] : [systems.filter((s) => !PEERS.includes(s)), ...systems.filter((s) => PEERS.includes(s)).map((s) => [s])].filter((g) => g.length);
let partsMaxRss = 0;

/** measureSize in a child process (this script with `--part`), its rows, memory and counts merged into this run's. */
function measureApart(n, systems) {
  const file = path.join(tmp, `part-${n}-${systems.join('+')}.json`);
  const args = [...argv.filter((a) => !/^--(sizes|systems|part)=/.test(a) && a !== '--full'), `--sizes=${n}`, `--systems=${systems.join(',')}`, `--part=${file}`];
  const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], { stdio: 'inherit', env: process.env });
  if (r.status !== 0) throw new Error(`bench: the process measuring ${systems.join(', ')} at ${n} ended with ${r.status ?? r.signal}`);
  const part = JSON.parse(fs.readFileSync(file, 'utf8'));
  results.push(...part.results);
  memory.push(...part.memory);
  countsLog.push(...part.counts);
  peakSampledRss = Math.max(peakSampledRss, part.peakRss);
  partsMaxRss = Math.max(partsMaxRss, part.maxRss);
}

for (const n of SIZES) {
  const groups = groupsOf(systemsAt(n));
  for (const group of groups) {
    if (groups.length === 1) await measureSize(n, group);
    else measureApart(n, group);
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
if (PART) {
  fs.writeFileSync(PART, JSON.stringify({ results, memory, counts: countsLog, peakRss: peakSampledRss, maxRss: process.resourceUsage().maxRSS * 1024 }));
  process.exit(0);
}
compareCounts(countsLog);

// ratios to the limit
for (const r of results) {
  const limit = results.find((x) => x.workload === r.workload && x.size === r.size && x.system === limitOf(r.system));
  if (limit?.medianMs && r.medianMs) r.ratioToLimit = r.medianMs / limit.medianMs;
}
const sqliteVersion = (() => { const d = DataStore.open(); const v = d.database.prepare('select sqlite_version()').pluck().get(); d.close(); return v; })();
const meta = {
  date: new Date().toISOString(),
  mode: FULL ? `full: 10k and 100k with every system; 1M with ${systemsAt(1_000_000).map((x) => ({ sql: 'hand SQL', nedb: 'NeDB', loki: 'LokiJS' })[x] ?? x).join(', ')}` : opt('sizes') || opt('systems') || ONLY ? 'partial' : 'quick',
  sizes: SIZES,
  systems: SYSTEMS,
  peersAt1M: SIZES.some((n) => n >= 1_000_000) ? PEERS_1M : [],
  library: lib.entry,
  seconds: (performance.now() - started) / 1000,
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, memoryGB: os.totalmem() / 2 ** 30, os: `${os.type()} ${os.release()} ${os.arch()}`, node: process.version, sqlite: sqliteVersion, ...(cluster ? { postgres: cluster.version } : {}) },
  versions: Object.fromEntries(['better-sqlite3', '@seald-io/nedb', 'lokijs', 'mingo'].map((p) => [p, JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', p, 'package.json'), 'utf8')).version])),
  memory,
  peakRssMB: { sampled: peakSampledRss / 2 ** 20, maxRSS: Math.max(process.resourceUsage().maxRSS * 1024, partsMaxRss) / 2 ** 20 },
  mismatches,
};
cluster?.stop();
citus?.stop();
const aggregatesOnly = ONLY?.every((id) => AGGREGATE_WORKLOADS.some((a) => a.id === id));
// A baseline run compares two builds: it is printed, never written over the results or the report.
if (!BASELINE && results.some((r) => r.workload.startsWith('agg-'))) writeAggregates({ root: ROOT, results: RESULTS, rows: results, meta: { ...meta, backend: BACKEND } });
if (aggregatesOnly) {
  // A run of the aggregates alone leaves the other results (and REPORT.md's other sections) as they are.
} else if (CITUS) await writeCitus({ root: ROOT, results: RESULTS, rows: results, meta: { ...meta, mode: 'citus', machine: { ...meta.machine, citus: citus.version } }, workloads: WORKLOADS });
else if (PG) await writePostgres({ root: ROOT, results: RESULTS, rows: results, meta: { ...meta, mode: 'postgres', versions: { ...meta.versions, pg: JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'pg', 'package.json'), 'utf8')).version } }, workloads: WORKLOADS, queries: QUERIES });
else if (!BASELINE) writeOutputs({ results: RESULTS, rows: results, meta, workloads: WORKLOADS, queries: QUERIES });
if (BASELINE) {
  // Before (base) and after (this build), interleaved per workload in this run: after/before per workload and size.
  console.log(`\nthis build vs ${BASELINE} (median ms, after/before):`);
  for (const r of results.filter((x) => x.system === 'consolidata' && x.medianMs)) {
    const b = results.find((x) => x.system === 'base' && x.workload === r.workload && x.size === r.size);
    if (b?.medianMs) console.log(`  ${r.workload.padEnd(22)} ${String(r.size).padStart(8)}  before ${b.medianMs.toFixed(3).padStart(10)}  after ${r.medianMs.toFixed(3).padStart(10)}  ${(r.medianMs / b.medianMs).toFixed(2)}x`);
  }
}
console.log(`\nmismatches: ${mismatches.length ? mismatches.join('; ') : 'none'}`);
console.log(`peak RSS: sampled ${meta.peakRssMB.sampled.toFixed(0)} MB, maxRSS ${meta.peakRssMB.maxRSS.toFixed(0)} MB; ${meta.seconds.toFixed(0)} s in all`);
