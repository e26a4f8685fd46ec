#!/usr/bin/env node
/**
 * What the journal costs, and how fast the change feed is (README "Journal"), on file stores in one run:
 *   - insert of 10,000 Wells into a store of 100,000, and an update matching a third of them, with the journal off,
 *     with history + activity log, and with history + activity log + change feed (medians, ratios to off);
 *   - queries on a store whose Wells are half soft-deleted vs one holding only the live half;
 *   - watch latency: a second process inserts a Well every 20 ms; the time from its commit to this process's watch.
 * Usage: node bench/journal.mjs [--n 100000] [--report]   (npm run bench:journal; builds first)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateWells, pwiOf } from './generate.mjs';
import { writeSection } from './report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { DataStore } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href);
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg('n', 100_000));
const REPS = 5;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'consolidata-journal-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const must = (env) => {
  if (!env.success) throw new Error(env.message);
  return env;
};

// ---- child: the other process of the latency row -----------------------------------------------------------------
if (process.argv[2] === '--writer') {
  const store = DataStore.open(process.argv[3], { changeFeed: true });
  const count = Number(process.argv[4]);
  for (let i = 0; i < count; i++) {
    await new Promise((r) => setTimeout(r, 20));
    await store.insert('Well', [{ pwi: `LAT-${i}` }]);
    // The commit's moment, on the clock both processes share.
    process.stdout.write(`${i} ${performance.timeOrigin + performance.now()}\n`);
  }
  store.close();
  process.exit(0);
}

const CONFIGS = {
  off: {},
  'history + log': { history: ['Well'], activityLog: true },
  'history + log + feed': { history: ['Well'], activityLog: true, changeFeed: true },
};
const base = generateWells(N);
const rows = [];

console.log(`journal bench: ${N.toLocaleString('en-US')} Wells, ${REPS} reps per cell, ${new Date().toISOString()}`);
for (const [name, options] of Object.entries(CONFIGS)) {
  const file = path.join(tmp, `${name.replace(/\W+/g, '-')}.db`);
  const store = DataStore.open(file, { userId: 'bench', ...options });
  must(await store.insert('Well', base));
  const insert = [];
  const update = [];
  for (let rep = 0; rep < REPS; rep++) {
    const batch = generateWells(10_000, { from: N + rep * 10_000 });
    let t = performance.now();
    must(await store.insert('Well', batch));
    insert.push(performance.now() - t);
    t = performance.now();
    const u = must(await store.update('Well', { statusCurrent: { in: ['Producing', 'Shut-in'] } }, { operatorName: `op-${rep}` }));
    update.push(performance.now() - t);
    rows.push({ kind: 'write', config: name, matched: u.count });
  }
  rows.push({ kind: 'insert', config: name, ms: median(insert) });
  rows.push({ kind: 'update', config: name, ms: median(update), matched: rows.find((r) => r.kind === 'write' && r.config === name).matched });
  console.log(`  ${name.padEnd(22)} insert 10k ${median(insert).toFixed(0).padStart(6)} ms   update-many ${median(update).toFixed(0).padStart(6)} ms`);
  store.close();
}

// ---- soft-deleted documents --------------------------------------------------------------------------------------
const QUERIES = [
  { id: 'eq-pwi', run: (s, i) => s.query('Well', { pwi: pwiOf((i * 7919) % N) }) },
  { id: 'range-spudDate', run: (s) => s.query('Well', { spudDate: { gte: '2015-01-01T00:00:00.000Z', lt: '2015-04-01T00:00:00.000Z' } }) },
  { id: 'eq-basin-limit-50', run: (s) => s.query('Well', { basinName: 'Permian' }, { limit: 50 }) },
  { id: 'gt-lateralLength', run: (s) => s.query('Well', { lateralLength: { gt: 14_000 } }) },
  { id: 'bounds', run: (s) => s.query('Well', { surfaceLoc: { bounds: [-104, 31, -101, 33] } }) },
];
const indexes = { Well: [{ fields: ['spudDate'] }, { fields: ['basinName'] }] };
const live = DataStore.open(path.join(tmp, 'live.db'), { indexes, softDelete: ['Well'] });
must(await live.insert('Well', base));
const half = DataStore.open(path.join(tmp, 'half.db'), { indexes, softDelete: ['Well'] });
// The same live documents, and as many soft-deleted ones with other keys.
must(await half.insert('Well', base));
must(await half.insert('Well', generateWells(N, { from: N, seed: 43 })));
must(await half.delete('Well', { pwi: { gte: pwiOf(N) } }));
const soft = [];
for (const q of QUERIES) {
  const a = [];
  const b = [];
  let hits = 0;
  for (let rep = 0; rep < 15; rep++) {
    let t = performance.now();
    const r1 = must(await q.run(live, rep));
    a.push(performance.now() - t);
    t = performance.now();
    const r2 = must(await q.run(half, rep));
    b.push(performance.now() - t);
    if (r1.count !== r2.count || r1.total !== r2.total) throw new Error(`${q.id}: ${r1.count} live vs ${r2.count} beside deleted ones`);
    hits = r1.count;
  }
  soft.push({ id: q.id, hits, live: median(a), half: median(b) });
  console.log(`  ${q.id.padEnd(22)} ${median(a).toFixed(2).padStart(8)} ms live only   ${median(b).toFixed(2).padStart(8)} ms with as many deleted   ${(median(b) / median(a)).toFixed(2)}×  (${hits} hits)`);
}
live.close();
half.close();

// ---- watch latency from another process ---------------------------------------------------------------------------
const feedFile = path.join(tmp, 'feed.db');
const watcher = DataStore.open(feedFile, { changeFeed: true });
const COUNT = 200;
const received = new Map();
const watching = (async () => {
  for await (const e of watcher.watch('Well')) {
    received.set(Number(e.doc.pwi.slice(4)), performance.timeOrigin + performance.now());
    if (received.size === COUNT) break;
  }
})();
const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--writer', feedFile, String(COUNT)], { stdio: ['ignore', 'pipe', 'inherit'] });
const committed = new Map();
let buf = '';
child.stdout.on('data', (d) => {
  buf += d;
  const lines = buf.split('\n');
  buf = lines.pop();
  for (const l of lines) {
    const [i, t] = l.split(' ').map(Number);
    committed.set(i, t);
  }
});
await new Promise((r) => child.on('exit', r));
await watching;
watcher.close();
const latencies = [...committed].map(([i, t]) => received.get(i) - t).filter(Number.isFinite);
const latency = { median: median(latencies), p90: [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.9)], n: latencies.length };
console.log(`  watch latency from another process: median ${latency.median.toFixed(1)} ms, p90 ${latency.p90.toFixed(1)} ms (${latency.n} events, polling every 25 ms)`);
fs.rmSync(tmp, { recursive: true, force: true });

// ---- report ---------------------------------------------------------------------------------------------------------
if (process.argv.includes('--report')) {
  const cell = (kind, config) => rows.find((r) => r.kind === kind && r.config === config);
  const off = (kind) => cell(kind, 'off').ms;
  const matched = cell('update', 'off').matched;
  const lines = [
    '<!-- journal -->',
    `**Journal** (\`npm run bench:journal -- --report\`, ${new Date().toISOString()}): file stores of ${N.toLocaleString('en-US')} generated Wells; medians of ${REPS} (writes) or 15 (queries) in one run.`,
    '',
    `| write | ${Object.keys(CONFIGS).join(' | ')} |`,
    `|---|${Object.keys(CONFIGS).map(() => '---:').join('|')}|`,
    ...['insert', 'update'].map(
      (kind) =>
        `| ${kind === 'insert' ? 'insert 10,000 Wells' : `update matching ${matched.toLocaleString('en-US')} Wells`} | ${Object.keys(CONFIGS)
          .map((c) => `${cell(kind, c).ms.toFixed(0)} ms${c === 'off' ? '' : ` (${(cell(kind, c).ms / off(kind)).toFixed(2)}×)`}`)
          .join(' | ')} |`,
    ),
    '',
    `| query (soft delete on) | hits | live only, ms | with as many soft-deleted, ms | ratio |`,
    '|---|---:|---:|---:|---:|',
    ...soft.map((s) => `| ${s.id} | ${s.hits.toLocaleString('en-US')} | ${s.live.toFixed(2)} | ${s.half.toFixed(2)} | ${(s.half / s.live).toFixed(2)}× |`),
    '',
    `Change feed: a second process's insert reaches \`watch()\` in a median of ${latency.median.toFixed(1)} ms (p90 ${latency.p90.toFixed(1)} ms, ${latency.n} events, the default 25 ms poll; target ≤ 100 ms: ${latency.median <= 100 ? 'met' : 'missed'}).`,
    '<!-- /journal -->',
  ];
  writeSection(root, 'journal', lines);
  console.log(lines.slice(1, -1).join('\n'));
}
