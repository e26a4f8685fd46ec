// HTTP load: the CLI server in a child process, autocannon at 64 connections over a mix of queries and
// writes, once per server configuration in the same run: the single-thread server (`serve --workers 0`) and the
// worker-thread pool (`serve`, its default). Prints errors, non-2xx answers, latency and the server's RSS over
// time; exits 1 on any error. `--report` writes the figures into bench/REPORT.md (its HTTP load section).
// Then the HTTP floor (bench/floor.mjs): serve against a minimal hand-written server on 100k Wells.
// Usage: node bench/load.mjs [--seconds 60] [--connections 64] [--only pool|single|floor] [--report]
import { spawn, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { writeSection } from './report.mjs';
import { servedAt } from './served.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const seconds = Number(arg('seconds', 60));
const connections = Number(arg('connections', 64));
const only = arg('only', undefined);
const writeReport = process.argv.includes('--report');
const cli = new URL('../dist/cli.js', import.meta.url).pathname;
const configs = [
  { name: 'single', label: 'one thread (`serve --workers 0`)', args: ['--workers', '0'] },
  { name: 'pool', label: `worker-thread pool (\`serve\`: ${cpus().length} reader threads, a pinpoint thread, a writer)`, args: [] },
].filter((c) => !only || c.name === only);

/** One configuration: a fresh database with the sample data, `seconds` of load, the server stopped. */
async function run(config) {
  const dir = mkdtempSync(join(tmpdir(), 'consolidata-load-'));
  const server = spawn(process.execPath, [cli, 'serve', '--db', join(dir, 'load.db'), '--port', '0', '--sample', ...config.args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await servedAt(server);

  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024;
  const samples = [];
  const sampler = setInterval(() => samples.push(rss()), 1000);

  let n = 0;
  const json = { 'content-type': 'application/json' };
  const basins = ['Permian', 'Bakken', 'Eagle Ford', 'DJ'];
  // A mix: 70% queries (indexed, bounds, date range with paging), 20% inserts, 10% updates.
  const requests = [
    { method: 'POST', path: '/api/data/query', headers: json, setupRequest: (r) => ({ ...r, body: JSON.stringify({ type: 'Well', query: { pwi: `SMP-${String((n++ % 240) + 1).padStart(4, '0')}` } }) }) },
    { method: 'POST', path: '/api/data/query', headers: json, body: JSON.stringify({ type: 'Well', query: { surfaceLoc: { bounds: [-104, 31, -101, 33] } }, options: { limit: 20 } }) },
    { method: 'POST', path: '/api/data/query', headers: json, body: JSON.stringify({ type: 'DailyProduction', query: { prodDate: { gte: '2024-03-01', lt: '2024-03-08' } }, options: { limit: 50, sortBy: 'prodDate' } }) },
    { method: 'POST', path: '/api/v1/data', headers: json, setupRequest: (r) => ({ ...r, body: JSON.stringify({ type: 'Well', request: 'get', query: { basinName: basins[n++ % 4] }, options: { limit: 10 } }) }) },
    { method: 'POST', path: '/api/data/query', headers: json, body: JSON.stringify({ type: 'Well', query: { name: { regex: '^Hawk 1' } }, options: { limit: 10 } }) },
    { method: 'POST', path: '/api/data/query', headers: json, body: JSON.stringify({ type: 'Well', query: { fracStages: { gte: 30 } }, options: { limit: 10, sortBy: 'fracStages', sortOrder: -1 } }) },
    { method: 'POST', path: '/api/data/query', headers: json, body: JSON.stringify({ type: 'Well', query: {}, options: { limit: 5, skip: 100 } }) },
    { method: 'POST', path: '/api/data', headers: json, setupRequest: (r) => ({ ...r, body: JSON.stringify({ type: 'Well', data: [{ pwi: `LOAD-${process.pid}-${n++}`, basinName: basins[n % 4], surfaceLoc: { type: 'Point', coordinates: [-100 + (n % 1000) / 100, 30 + (n % 700) / 100] } }] }) }) },
    { method: 'POST', path: '/api/data', headers: json, setupRequest: (r) => ({ ...r, body: JSON.stringify({ type: 'Comment', data: [{ extra: { n: n++ } }] }) }) },
    { method: 'PATCH', path: '/api/data', headers: json, setupRequest: (r) => ({ ...r, body: JSON.stringify({ type: 'Well', query: { pwi: `SMP-${String((n++ % 240) + 1).padStart(4, '0')}` }, body: { statusCurrent: n % 2 ? 'Producing' : 'Shut-in' } }) }) },
  ];

  const result = await autocannon({ url: base.replace(/\/api$/, ''), connections, duration: seconds, requests });
  clearInterval(sampler);
  server.kill('SIGTERM');
  await new Promise((r) => server.on('exit', r));
  rmSync(dir, { recursive: true, force: true });

  const tenth = samples[Math.min(9, samples.length - 1)];
  return {
    config: config.name,
    seconds,
    connections,
    requests: result.requests.total,
    requestsPerSec: result.requests.average,
    latencyMs: { p50: result.latency.p50, p97_5: result.latency.p97_5, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    rssMb: { at10s: Math.round(tenth), end: Math.round(samples.at(-1)), max: Math.round(Math.max(...samples)) },
  };
}

const started = new Date();
const reports = [];
for (const config of configs) {
  const r = await run(config);
  console.log(JSON.stringify(r, null, 2));
  reports.push({ ...r, label: config.label });
}
let failed = reports.some((r) => r.errors || r.timeouts || r.non2xx);
if (!only || only === 'floor') {
  const floor = spawnSync(process.execPath, [new URL('./floor.mjs', import.meta.url).pathname, ...(writeReport ? ['--report'] : [])], { stdio: 'inherit' });
  failed ||= floor.status !== 0;
}

// With --only floor no configuration ran: the load section keeps the figures of the last run that measured them.
if (writeReport && reports.length) {
  const n = (x) => Math.round(x).toLocaleString('en-US');
  const single = reports.find((r) => r.config === 'single');
  const lines = [
    '<!-- load -->',
    '**HTTP load** (`npm run load -- --report`, ' + started.toISOString() + `: the CLI server with the sample data in a child process, autocannon at ${connections} connections for ${seconds} s per configuration, one configuration after the other in one run; 70% queries — indexed, bounds, date range with paging, regex, sort — 20% inserts, 10% updates, over both route families):`,
    '',
    '| server | requests | req/s | vs one thread | p50 ms | p97.5 ms | p99 ms | max ms | errors | timeouts | non-2xx | RSS at 10 s / end / max MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...reports.map((r) => `| ${r.label} | ${n(r.requests)} | ${n(r.requestsPerSec)} | ${single ? (r.requestsPerSec / single.requestsPerSec).toFixed(2) + '×' : '–'} | ${r.latencyMs.p50} | ${r.latencyMs.p97_5} | ${r.latencyMs.p99} | ${n(r.latencyMs.max)} | ${r.errors} | ${r.timeouts} | ${r.non2xx} | ${r.rssMb.at10s} / ${r.rssMb.end} / ${r.rssMb.max} |`),
    '<!-- /load -->',
  ];
  writeSection(new URL('..', import.meta.url).pathname, 'load', lines);
  console.log(lines.slice(1, -1).join('\n'));
}
process.exit(failed ? 1 : 0);
