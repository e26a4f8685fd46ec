import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = p.startTime;
const samples = p.samples.map((s, i) => { t += p.timeDeltas[i]; return { s, t }; });
// find busy windows: consecutive non-idle samples spanning > 80 ms
const idle = (id) => byId.get(id).callFrame.functionName === '(idle)';
let start = null; const wins = [];
for (const x of samples) {
  if (!idle(x.s)) { if (start === null) start = x; }
  else if (start) { if (x.t - start.t > 60000) wins.push([start.t, x.t]); start = null; }
}
console.log('busy windows > 60ms:', wins.map(([a, b]) => `${((a - p.startTime) / 1e6).toFixed(2)}s+${((b - a) / 1000).toFixed(0)}ms`).join(' '));
for (const [a, b] of wins.filter(([a, b]) => b - a > 400000)) {
  const incl = new Map();
  let n = 0;
  for (const x of samples) {
    if (x.t < a || x.t > b) continue;
    n++;
    const seen = new Set();
    for (let cur = x.s; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur).callFrame;
      const k = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
      if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + 1); }
    }
  }
  console.log(`--- window ${((a - p.startTime) / 1e6).toFixed(2)}s, ${n} samples`);
  for (const [k, c] of [...incl].sort((x, y) => y[1] - x[1]).slice(0, 25)) console.log((100 * c / n).toFixed(0).padStart(4), k);
}
