// Where the time of the floor's requests goes: `consolidata serve` (dist/) under `node --cpu-prof` on a copy of the
// 100k-Well database, autocannon on one request of bench/floor.mjs, then each thread's profile (main, and the pool's
// workers) read back as busy µs per request: every frame's self and inclusive time, our own frames (dist/) first.
// Usage: node bench/floor-profile.mjs [--hand | --workers 0] [--workload eq-pwi|page-50] [--seconds 10] [--connections 20] [--top 40]
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cachedWells } from './database.mjs';
import { pwiOf } from './generate.mjs';
import { servedAt } from './served.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const WELLS = 100_000;
const SECONDS = Number(arg('seconds', 10));
const CONNECTIONS = Number(arg('connections', 20));
const TOP = Number(arg('top', 40));
const workers = arg('workers', undefined);
const workload = arg('workload', 'eq-pwi');
const root = fileURLToPath(new URL('..', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'consolidata-floor-profile-'));
const db = join(dir, 'floor.db');
copyFileSync(await cachedWells(root, WELLS), db);
const profiles = join(dir, 'profiles');
const hand = process.argv.includes('--hand');
const server = hand ? [join(root, 'bench/floor-server.mjs'), db] : [join(root, 'dist/cli.js'), 'serve', '--db', db, '--port', '0', ...(workers === undefined ? [] : ['--workers', workers])];
// The hand server has no SIGINT handler of its own: without one it dies before the profile is written.
const exitOnInt = ['--import', `data:text/javascript,process.on('SIGINT',()=>process.exit(0))`];
const args = ['--cpu-prof', '--cpu-prof-dir', profiles, ...(hand ? exitOnInt : []), ...server];
const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
const base = (await servedAt(child)).replace(/\/api$/, '');

let n = 0;
const json = { 'content-type': 'application/json' };
const pwiBody = (i) => JSON.stringify({ type: 'Well', query: { pwi: pwiOf(i) } });
const requests = {
  'eq-pwi': { method: 'POST', path: '/api/data/query', headers: json, setupRequest: (r) => ({ ...r, body: pwiBody((n++ * 7919) % WELLS) }) },
  'page-50': { method: 'POST', path: '/api/data/query', headers: json, body: JSON.stringify({ type: 'Well', query: {}, options: { limit: 50 } }) },
};
// A warm-up outside the profile's count would still be in it: the first second's compilation is spread over every request.
const r = await autocannon({ url: base, connections: CONNECTIONS, duration: SECONDS, requests: [requests[workload]] });
const served = r.requests.total;
child.kill('SIGINT');
await new Promise((resolve) => child.once('exit', resolve));

/** Busy µs per request of each frame of one profile: self and inclusive (a frame counted once per sample, recursion aside). */
function read(file) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of p.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const name = (node) => {
    const f = node.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^node:/, '')}:${f.lineNumber + 1}` : '';
    return `${f.functionName || '(anonymous)'} ${where}`.trim();
  };
  const self = new Map();
  const incl = new Map();
  let busy = 0;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    const node = byId.get(p.samples[i]);
    if (node.callFrame.functionName === '(idle)') continue;
    busy += dt;
    const key = name(node);
    self.set(key, (self.get(key) ?? 0) + dt);
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const k = name(byId.get(id));
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
  }
  return { self, incl, busy, total };
}

const per = (us) => (us / served).toFixed(1).padStart(7);
console.log(`${workload}, ${hand ? 'the hand server' : `serve ${workers === undefined ? '(pool)' : `--workers ${workers}`}`}: ${served} requests in ${SECONDS} s (${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms)`);
for (const file of readdirSync(profiles).sort()) {
  const { self, incl, busy, total } = read(join(profiles, file));
  console.log(`\n${file}: busy ${per(busy)} µs/request (${((100 * busy) / total).toFixed(0)}% of its ${(total / 1e6).toFixed(1)} s)`);
  console.log('  incl µs   self µs  frame');
  const rows = [...incl.entries()].filter(([k]) => k !== '(root)').sort((a, b) => b[1] - a[1]).slice(0, TOP);
  for (const [k, us] of rows) console.log(`  ${per(us)}  ${per(self.get(k) ?? 0)}  ${k}`);
  console.log('  top self:');
  for (const [k, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${per(incl.get(k) ?? 0)}  ${per(us)}  ${k}`);
}
rmSync(dir, { recursive: true, force: true });
