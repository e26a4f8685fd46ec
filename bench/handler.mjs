// The HTTP adapter's own work a request, without sockets: `createNodeHandler` (dist/) answering in-memory requests on a
// copy of the 100k-Well database, an indexed pwi equality (a random well each request) or the first page of 50, in one
// process, medians of batches. With `--baseline=DIR` (a checkout with dist/ built) both builds are measured in the same
// process, their batches alternating, so the machine's drift falls on both alike; the ratio is the median of the
// rounds' ratios. What it leaves out is node:http's own parsing and writing, which `npm run load` (bench/floor.mjs)
// measures with the rest: this measures what the library's code costs, where the floor's figures move with the machine.
// Usage: node bench/handler.mjs [--baseline=DIR] [--pool] [--workload=eq-pwi|page-50] [--rounds=20] [--batch=2000]
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cachedWells } from './database.mjs';
import { pwiOf } from './generate.mjs';

const opt = (name, def) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def;
const ROUNDS = Number(opt('rounds', 20));
const BATCH = Number(opt('batch', 2000));
const WORKLOAD = opt('workload', 'eq-pwi');
const POOL = process.argv.includes('--pool');
const WELLS = 100_000;
const root = fileURLToPath(new URL('..', import.meta.url));
const builds = { this: join(root, 'dist') };
if (opt('baseline')) builds.base = join(resolve(opt('baseline')), 'dist');

const dir = mkdtempSync(join(tmpdir(), 'consolidata-handler-'));
const source = await cachedWells(root, WELLS);

/** What the handler reads of a node request: its head, then its body as one chunk and its end. */
class Request extends EventEmitter {
  constructor(body) {
    super();
    this.method = 'POST';
    this.url = '/api/data/query';
    this.headers = { host: 'localhost', 'content-type': 'application/json', 'content-length': String(body.length) };
    this.readableEnded = false;
    this.socket = null;
  }
  pause() {}
  resume() {}
}

/** What the handler writes: the status and headers, then the whole answer (the length computed, as node:http would). */
class Response extends EventEmitter {
  constructor(done) {
    super();
    this.headersSent = false;
    this.destroyed = false;
    this.writableFinished = false;
    this.done = done;
  }
  writeHead(status, headers) {
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }
  end(text) {
    this.writableFinished = true;
    Buffer.byteLength(text);
    this.done(text);
    this.emit('close');
  }
  destroy() {
    this.destroyed = true;
    this.done(null);
  }
}

let n = 0;
const PAGE = JSON.stringify({ type: 'Well', query: {}, options: { limit: 50 } });
const body = () => Buffer.from(WORKLOAD === 'page-50' ? PAGE : JSON.stringify({ type: 'Well', query: { pwi: pwiOf((n++ * 7919) % WELLS) } }));

/** One request through `handler`, answered: resolves with the answer's text. */
function one(handler) {
  return new Promise((done) => {
    const bytes = body();
    const req = new Request(bytes);
    handler(req, new Response(done));
    process.nextTick(() => {
      req.emit('data', bytes);
      req.readableEnded = true;
      req.emit('end');
    });
  });
}

const systems = [];
for (const [name, dist] of Object.entries(builds)) {
  const file = join(dir, `${name}.db`);
  copyFileSync(source, file);
  const http = await import(pathToFileURL(join(dist, 'http.js')).href);
  const { DynamicStore } = await import(pathToFileURL(join(dist, 'index.js')).href);
  const store = POOL ? await http.createPool(file, { workerScript: join(dist, 'pool-worker.js') }) : DynamicStore.open(file);
  const handler = http.createNodeHandler(store);
  const first = await one(handler);
  if (!first?.includes('"success":true')) throw new Error(`${name}: ${String(first).slice(0, 300)}`);
  systems.push({ name, store, handler, per: [] });
}

// Warm: the code of both builds compiled and their caches filled before any batch is timed.
for (const s of systems) for (let i = 0; i < 10 * BATCH; i++) await one(s.handler);
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < systems.length; i++) {
    const s = systems[(i + round) % systems.length];
    const t0 = performance.now();
    for (let j = 0; j < BATCH; j++) await one(s.handler);
    s.per.push(((performance.now() - t0) * 1000) / BATCH);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${WORKLOAD} through createNodeHandler (${POOL ? 'a pool' : 'one thread'}), ${ROUNDS} rounds of ${BATCH}, µs a request:`);
for (const s of systems) console.log(`  ${s.name.padEnd(4)} median ${median(s.per).toFixed(2)} (${Math.min(...s.per).toFixed(2)}–${Math.max(...s.per).toFixed(2)})`);
if (systems.length === 2) console.log(`  this ÷ base: ${median(systems[0].per.map((x, i) => x / systems[1].per[i])).toFixed(3)} (median of the rounds' ratios)`);
for (const s of systems) await s.store.close();
rmSync(dir, { recursive: true, force: true });
