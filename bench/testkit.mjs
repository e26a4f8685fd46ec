#!/usr/bin/env node
/**
 * consolidata/testing: the per-test setup of a store seeded with 10,000 documents (100 sample Wells, 99 days of
 * DailyProduction each), three ways, over the built package (dist/):
 *   re-insert      createTestStore({ seed }): a fresh in-memory store and the documents inserted in one transaction
 *   restore        store.restore(snapshot): the same store put back to a snapshot taken after seeding
 *   fromSnapshot   DataStore.fromSnapshot(snapshot): a new store opened from the snapshot
 * and, for a test that starts from nothing, DataStore.open(): a new empty in-memory store.
 * Each iteration first writes to the store (as a test would), untimed. Prints the median µs of each, the ratio
 * re-insert / restore (the target is at least 50×) and the restore cost per 1,000 documents. About 15 s.
 *
 *   npm run bench -- --testkit           (builds first)
 *   node bench/testkit.mjs               over dist/ as it is; CONSOLIDATA_DIST=dir for another build
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.resolve(process.env.CONSOLIDATA_DIST || path.join(ROOT, 'dist'));
const entry = path.join(DIST, 'testing.js');
if (!fs.existsSync(entry)) {
  console.error(`${path.relative(ROOT, entry) || entry} is missing: run \`npm run bench -- --testkit\` (it builds first) or \`npm run build\``);
  process.exit(1);
}
const { createTestStore, DataStore, sampleData, unwrap } = await import(pathToFileURL(entry).href);

const WELLS = 100;
const DAYS = 99;
const TARGET = 50;
const seed = sampleData(20240101, { wells: WELLS, days: DAYS });
const DOCS = seed.Well.length + seed.DailyProduction.length;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Runs `setup` (timed) after `dirty` (untimed) until both `minReps` and `budgetMs` are reached (or `maxReps`),
 * after `warmup` untimed rounds; returns the median and the count, in µs.
 */
async function measure({ setup, dirty, warmup, minReps, maxReps, budgetMs }) {
  for (let i = 0; i < warmup; i++) {
    await dirty(i);
    await setup();
  }
  const times = [];
  let spent = 0;
  while (times.length < maxReps && (times.length < minReps || spent < budgetMs)) {
    await dirty(times.length);
    const t0 = performance.now();
    await setup();
    const dt = performance.now() - t0;
    times.push(dt * 1000);
    spent += dt;
  }
  return { us: median(times), reps: times.length, min: Math.min(...times), max: Math.max(...times) };
}

const started = performance.now();
console.log(`consolidata/testing bench over ${path.relative(ROOT, DIST) || DIST}: per-test setup of a store with ${DOCS.toLocaleString('en-US')} documents (${WELLS} Wells, ${(WELLS * DAYS).toLocaleString('en-US')} DailyProduction)`);

// The store every test would use, seeded once, and its snapshot.
const store = await createTestStore({ seed });
const snapshot = store.snapshot();
const write = async (i) => unwrap(await store.insert('Well', [{ pwi: `BENCH-${i}` }]));
const count = async (s) => (await s.query('Well', {}, { limit: 1 })).total + (await s.query('DailyProduction', {}, { limit: 1 })).total;

// re-insert: what a test does without snapshots. The previous test's store is closed untimed.
let previous;
const reinsert = await measure({
  dirty: async () => previous?.close(),
  setup: async () => {
    previous = await createTestStore({ seed });
  },
  warmup: 2,
  minReps: 15,
  maxReps: 60,
  budgetMs: 6000,
});
if ((await count(previous)) !== DOCS) throw new Error('re-insert: the store does not hold every document');
previous.close();

const restore = await measure({
  dirty: write,
  setup: () => store.restore(snapshot),
  warmup: 20,
  minReps: 300,
  maxReps: 3000,
  budgetMs: 1500,
});
if ((await count(store)) !== DOCS) throw new Error('restore: the store does not hold the snapshot');

let copy;
const fromSnapshot = await measure({
  dirty: async () => copy?.close(),
  setup: () => {
    copy = DataStore.fromSnapshot(snapshot);
  },
  warmup: 10,
  minReps: 100,
  maxReps: 2000,
  budgetMs: 1500,
});
if ((await count(copy)) !== DOCS) throw new Error('fromSnapshot: the copy does not hold the snapshot');
copy.close();
store.close();

// An empty store per test: a new in-memory database that creates its schema.
let empty;
const open = await measure({
  dirty: async () => empty?.close(),
  setup: () => {
    empty = DataStore.open();
  },
  warmup: 10,
  minReps: 100,
  maxReps: 2000,
  budgetMs: 1500,
});
if ((await count(empty)) !== 0) throw new Error('open: a new store is not empty');
empty.close();

const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(0)} µs`);
const rows = [
  ['re-insert (createTestStore({ seed }))', reinsert],
  ['restore (store.restore(snapshot))', restore],
  ['fromSnapshot (DataStore.fromSnapshot)', fromSnapshot],
  ['empty store (DataStore.open())', open],
];
console.log(`snapshot: ${(snapshot.length / 2 ** 20).toFixed(1)} MiB`);
console.log('');
console.log(`${'setup'.padEnd(40)}${'median µs'.padStart(12)}${'median'.padStart(10)}${'reps'.padStart(7)}`);
for (const [name, m] of rows) console.log(`${name.padEnd(40)}${m.us.toFixed(0).padStart(12)}${fmt(m.us).padStart(10)}${String(m.reps).padStart(7)}`);
console.log('');
const ratio = reinsert.us / restore.us;
console.log(`restore is ${ratio.toFixed(0)}× faster than re-inserting (target ≥ ${TARGET}×: ${ratio >= TARGET ? 'met' : 'NOT MET'}); fromSnapshot ${(reinsert.us / fromSnapshot.us).toFixed(0)}×`);
console.log(`restore costs ${(restore.us / (DOCS / 1000)).toFixed(0)} µs per 1,000 documents (bound: under 1,000 µs)`);
console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exitCode = ratio >= TARGET ? 0 : 1;
