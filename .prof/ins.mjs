import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DataStore } from '/work/wt-m/dist/index.js';
import { generateWells } from '/work/wt-m/bench/generate.mjs';
const dir = mkdtempSync(join(tmpdir(), 'ins-'));
const db = join(dir, 'f.db');
copyFileSync('/work/wt-m/bench/results/wells-100000.db', db);
const store = DataStore.open(db);
await store.query('Well', { pwi: 'x' });
const docs = [...generateWells(3000, { seed: 777, from: 200000 })].map((d, i) => ({ ...d, pwi: `ZZ${i}`, id: undefined }));
const times = [];
for (const d of docs.slice(0, 2000)) {
  const t = performance.now();
  const r = await store.insert('Well', [d]);
  if (!r.success) throw new Error(JSON.stringify(r.errors));
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
const q = (p) => times[Math.floor(p * times.length)].toFixed(3);
console.log('store p50', q(0.5), 'p90', q(0.9), 'p99', q(0.99), 'mean', (times.reduce((a, b) => a + b) / times.length).toFixed(3));
await store.close();
