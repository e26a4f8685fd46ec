// HTTP at the floor: `consolidata serve` (its worker pool, and one thread with --workers 0) against a minimal
// hand-written node:http + better-sqlite3 server (bench/floor-server.mjs) on the same 100k-Well database, in one run:
// an indexed pwi equality (a random well each request) and the first 50-document page with its total. Bodies are
// checked byte for byte first (the page's signed cursor aside: each server signs its own). Rounds interleave the
// servers; the table gives the median of the rounds and their range.
// Targets: serve ≥ 0.8× the hand server's requests/s on the equality, ahead of it on the page with the pool, p99 no
// worse. `--baseline DIR` (a checkout with dist/ built) serves that build too, in the same rounds: before and after a
// change measured in one run, on the same machine at the same moments.
// Usage: node bench/floor.mjs [--wells 100000] [--seconds 20] [--rounds 3] [--connections 20] [--baseline DIR] [--report]
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cachedWells } from './database.mjs';
import { pwiOf } from './generate.mjs';
import { writeSection } from './report.mjs';
import { servedAt } from './served.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const WELLS = arg('wells', 100_000);
const SECONDS = arg('seconds', 20);
const ROUNDS = arg('rounds', 3);
const CONNECTIONS = arg('connections', 20);
const root = fileURLToPath(new URL('..', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'consolidata-floor-'));
const db = join(dir, 'floor.db');
copyFileSync(await cachedWells(root, WELLS), db);
const children = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A server in a child process, once it says where it listens. */
async function start(args) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const base = (await servedAt(child)).replace(/\/api$/, '');
  return { base, pid: child.pid };
}

const cli = join(root, 'dist/cli.js');
const baseIndex = process.argv.indexOf('--baseline');
const baseline = baseIndex > 0 ? resolve(process.argv[baseIndex + 1], 'dist/cli.js') : null;
if (baseline && !existsSync(baseline)) throw new Error(`--baseline: ${baseline} is missing (build that checkout first: npm run build)`);
/** `consolidata serve` of one build, with its pool and on one thread; `of` names the build in the labels. */
const serveOf = async (cliPath, prefix = '', of = '') => [
  { name: `${prefix}pool`, label: `\`consolidata serve\` (worker pool)${of}`, ...(await start([cliPath, 'serve', '--db', db, '--port', '0'])) },
  { name: `${prefix}single`, label: `\`consolidata serve --workers 0\`${of}`, ...(await start([cliPath, 'serve', '--db', db, '--port', '0', '--workers', '0'])) },
];
const servers = [
  { name: 'hand', label: 'hand-written node:http + better-sqlite3', ...(await start([join(root, 'bench/floor-server.mjs'), db])) },
  ...(await serveOf(cli)),
  ...(baseline ? await serveOf(baseline, 'base-', ', the baseline build') : []),
];

let n = 0;
const json = { 'content-type': 'application/json' };
const pwiBody = (i) => JSON.stringify({ type: 'Well', query: { pwi: pwiOf(i) } });
const workloads = [
  { name: 'eq-pwi', label: 'indexed pwi equality', sample: () => pwiBody(12_345), request: { method: 'POST', path: '/api/data/query', headers: json, setupRequest: (r) => ({ ...r, body: pwiBody((n++ * 7919) % WELLS) }) } },
  { name: 'page-50', label: 'first page of 50 Wells with its total', sample: () => JSON.stringify({ type: 'Well', query: {}, options: { limit: 50 } }), request: { method: 'POST', path: '/api/data/query', headers: json, body: JSON.stringify({ type: 'Well', query: {}, options: { limit: 50 } }) } },
];

// The same bodies from every server (a cursor is signed by each server's own key: its text is left out).
const masked = (text) => text.replace(/"cursor":"[^"]*"/, '"cursor":"…"');
for (const w of workloads) {
  const bodies = await Promise.all(servers.map(async (s) => masked(await (await fetch(`${s.base}/api/data/query`, { method: 'POST', headers: json, body: w.sample() })).text())));
  const differ = servers.filter((_, i) => bodies[i] !== bodies[0]).map((s) => s.name);
  if (differ.length) throw new Error(`${w.name}: ${differ.join(', ')} answer other bodies than the hand server:\n${bodies.map((b) => b.slice(-300)).join('\n')}`);
}

// CPU time a request costs, all threads of the server's process together and of this process (autocannon's client), read
// from /proc: with the client on the same machine, a server uses fewer cores' worth of time only by spending less per request.
const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICK) * 1e6;
};
const clientCpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const runs = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const w of workloads) {
    // Each round starts one server further: a drift of the machine within a round falls on every server in turn.
    for (const s of servers.map((_, i) => servers[(i + round - 1) % servers.length])) {
      const [server0, client0] = [cpuOf(s.pid), clientCpu()];
      const r = await autocannon({ url: s.base, connections: CONNECTIONS, duration: SECONDS, requests: [w.request] });
      const served = r.requests.total;
      const cpu = (cpuOf(s.pid) - server0) / served;
      const client = (clientCpu() - client0) / served;
      const run = { round, workload: w.name, server: s.name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, errors: r.errors + r.timeouts + r.non2xx, cpu, client };
      runs.push(run);
      console.log(JSON.stringify(run));
    }
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x) => Math.round(x).toLocaleString('en-US');
const rows = [];
for (const w of workloads) {
  const hand = median(runs.filter((r) => r.workload === w.name && r.server === 'hand').map((r) => r.rps));
  const handP99 = median(runs.filter((r) => r.workload === w.name && r.server === 'hand').map((r) => r.p99));
  for (const s of servers) {
    const mine = runs.filter((r) => r.workload === w.name && r.server === s.name);
    const rps = median(mine.map((r) => r.rps));
    const p99 = median(mine.map((r) => r.p99));
    const target = s.name === 'hand' ? '' : w.name === 'eq-pwi' ? (rps >= 0.8 * hand ? 'met' : 'missed') + ' (≥ 0.8×)' : s.name.endsWith('pool') ? (rps > hand ? 'met' : 'missed') + ' (> 1×)' : '';
    const p99Target = s.name === 'hand' ? '' : p99 <= handP99 ? 'met' : 'missed';
    const cpu = `${fmt(median(mine.map((r) => r.cpu)))} + ${fmt(median(mine.map((r) => r.client)))}`;
    rows.push(`| ${w.label} | ${s.label} | ${fmt(rps)} (${fmt(Math.min(...mine.map((r) => r.rps)))}–${fmt(Math.max(...mine.map((r) => r.rps)))}) | ${(rps / hand).toFixed(2)}× | ${target} | ${p99} | ${p99Target} | ${Math.max(...mine.map((r) => r.max))} | ${mine.reduce((a, r) => a + r.errors, 0)} | ${cpu} |`);
  }
}
const table = [
  `**HTTP at the floor** (\`npm run load\`, ${new Date().toISOString()}: ${WELLS.toLocaleString('en-US')} Wells, autocannon ${CONNECTIONS} connections × ${SECONDS} s, ${ROUNDS} rounds interleaving the servers; requests/s as the median of the rounds (range); bodies byte-identical but the cursor's signature; CPU µs a request: the server's process, all its threads, + the client's):`,
  '',
  '| request | server | req/s | vs hand | target | p99 ms | p99 ≤ hand | max ms | errors | CPU µs/request |',
  '|---|---|---:|---:|---|---:|---|---:|---:|---:|',
  ...rows,
];
console.log(table.join('\n'));
if (process.argv.includes('--report')) writeSection(root, 'floor', ['<!-- floor -->', ...table, '<!-- /floor -->']);
process.exit(runs.some((r) => r.errors) ? 1 : 0);
