import { readFileSync, readdirSync } from 'node:fs';
const dir = process.argv[2];
const f = readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))[0];
const p = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const counts = new Map();
for (const s of p.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
let total = 0;
for (const [id, c] of counts) {
  const n = byId.get(id);
  const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + c);
  total += c;
}
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 40));
for (const [k, c] of rows) console.log((100 * c / total).toFixed(1).padStart(5), k);
// inclusive by url file
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, c] of counts) {
  const seen = new Set();
  let cur = id;
  while (cur !== undefined) {
    const n = byId.get(cur);
    const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)[0]}:${n.callFrame.lineNumber}`;
    if (!seen.has(key)) { seen.add(key); incl.set(key, (incl.get(key) ?? 0) + c); }
    cur = parent.get(cur);
  }
}
console.log('--- inclusive');
for (const [k, c] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log((100 * c / total).toFixed(1).padStart(5), k);
