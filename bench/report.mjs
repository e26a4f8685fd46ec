/** Bench outputs: the stdout table, results/latest.{json,meta.json,md,svg}, and the checked-in REPORT.md. */
import fs from 'node:fs';
import path from 'node:path';

const SYSTEMS = ['sql', 'consolidata', 'cached', 'nedb', 'loki', 'loki-clone', 'mingo'];
const LABEL = { sql: 'hand SQL', consolidata: 'consolidata', cached: 'consolidata + documentCache', nedb: 'NeDB', loki: 'LokiJS', 'loki-clone': 'LokiJS clone', mingo: 'mingo' };
const COLOR = { sql: '#7f7f7f', consolidata: '#1f77b4', cached: '#17becf', nedb: '#ff7f0e', loki: '#2ca02c', 'loki-clone': '#98df8a', mingo: '#9467bd' };
const PEERS = ['nedb', 'loki', 'loki-clone', 'mingo'];
const INDEXED = ['eq-pwi', 'in-100-pwi', 'range-spudDate', 'dp-history'];
const GEO = ['bounds-100', 'bounds-10k', 'polygon-hole', 'combined'];
const QUERY_SET = ['eq-pwi', 'in-100-pwi', 'range-spudDate', 'gt-lateralLength', 'regex-prefix', ...GEO, 'dp-history'];

export const ms = (v) => (v == null ? 'n/a' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v >= 0.01 ? v.toFixed(3) : v.toFixed(4));
const x = (v) => (v == null || !Number.isFinite(v) ? '–' : `${v >= 10 ? v.toFixed(0) : v.toFixed(2)}×`);
const sizeLabel = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);

function cell(rows, workload, size, system) {
  return rows.find((r) => r.workload === workload && r.size === size && r.system === system);
}

/** One table per size: medians, the ratio to the limit, and how much faster consolidata is than each peer. */
function tables(rows, meta, workloads, { markdown }) {
  const out = [];
  for (const size of meta.sizes) {
    const present = SYSTEMS.filter((s) => meta.systems.includes(s));
    const head = ['workload', 'hits', ...present.map((s) => `${LABEL[s]} ms`), 'cd/sql', ...PEERS.filter((p) => present.includes(p)).map((p) => `${LABEL[p]}/cd`)];
    const body = [];
    for (const w of workloads) {
      const cd = cell(rows, w, size, 'consolidata');
      const any = present.map((s) => cell(rows, w, size, s)).find(Boolean);
      if (!any) continue;
      const hits = cell(rows, w, size, 'sql')?.hits ?? cd?.hits ?? '';
      const line = [w, typeof hits === 'number' ? String(Math.round(hits * 10) / 10) : String(hits)];
      for (const s of present) {
        const c = cell(rows, w, size, s);
        line.push(c?.medianMs == null ? 'n/a' : ms(c.medianMs) + (markdown && c.note && /scan/.test(c.note) ? '†' : ''));
      }
      line.push(x(cd?.ratioToLimit));
      for (const p of PEERS.filter((q) => present.includes(q))) {
        const c = cell(rows, w, size, p);
        line.push(c?.medianMs && cd?.medianMs ? x(c.medianMs / cd.medianMs) : 'n/a');
      }
      body.push(line);
    }
    if (markdown) {
      out.push(`### ${size.toLocaleString('en-US')} Well documents\n`);
      out.push(`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i < 2 ? '---' : '---:')).join('|')}|`);
      for (const l of body) out.push(`| ${l.join(' | ')} |`);
      out.push('');
    } else {
      const widths = head.map((h, i) => Math.max(h.length, ...body.map((l) => l[i].length)));
      out.push(`\n${size.toLocaleString('en-US')} Well documents (median ms per operation; cd/sql = consolidata ÷ hand SQL; peer/cd = how many times faster consolidata is)`);
      out.push(head.map((h, i) => (i < 2 ? h.padEnd(widths[i]) : h.padStart(widths[i]))).join('  '));
      for (const l of body) out.push(l.map((v, i) => (i < 2 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  '));
    }
  }
  return out.join('\n');
}

/** Hand-written SVG: one group of log-scale bars per workload, one bar per system, at the largest size run. */
function svg(rows, meta, workloads) {
  const size = Math.max(...meta.sizes);
  const present = SYSTEMS.filter((s) => meta.systems.includes(s));
  const groups = workloads.map((w) => ({ w, bars: present.map((s) => ({ s, v: cell(rows, w, size, s)?.medianMs ?? null })) })).filter((g) => g.bars.some((b) => b.v));
  const vals = groups.flatMap((g) => g.bars.map((b) => b.v)).filter((v) => v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...vals)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...vals)));
  const left = 150;
  const width = 640;
  const bar = 9;
  const gap = 10;
  const top = 46;
  const height = top + groups.length * (present.length * bar + gap) + 40;
  const sx = (v) => left + (Math.log10(v / lo) / Math.log10(hi / lo)) * width;
  const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + width + 130}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="16" font-size="13" font-weight="bold">Median time per operation, ${size.toLocaleString('en-US')} Well documents (log scale, ms; lower is better)</text>`,
  ];
  present.forEach((s, i) => parts.push(`<rect x="${left + i * 110}" y="26" width="10" height="10" fill="${COLOR[s]}"/><text x="${left + i * 110 + 14}" y="35">${LABEL[s]}</text>`));
  for (let d = lo; d <= hi; d *= 10) {
    parts.push(`<line x1="${sx(d)}" y1="${top - 4}" x2="${sx(d)}" y2="${height - 34}" stroke="#ddd"/><text x="${sx(d)}" y="${height - 20}" text-anchor="middle">${d >= 1 ? d : d.toPrecision(1)}</text>`);
  }
  let y = top;
  for (const g of groups) {
    parts.push(`<text x="${left - 6}" y="${y + (present.length * bar) / 2 + 4}" text-anchor="end">${esc(g.w)}</text>`);
    for (const b of g.bars) {
      if (b.v) parts.push(`<rect x="${left}" y="${y}" width="${Math.max(1, sx(b.v) - left).toFixed(1)}" height="${bar - 1}" fill="${COLOR[b.s]}"><title>${LABEL[b.s]}: ${ms(b.v)} ms</title></rect><text x="${sx(b.v) + 3}" y="${y + bar - 1}" font-size="8" fill="#555">${ms(b.v)}</text>`);
      else parts.push(`<text x="${left + 3}" y="${y + bar - 1}" font-size="8" fill="#999">${LABEL[b.s]} n/a</text>`);
      y += bar;
    }
    y += gap;
  }
  parts.push(`<text x="${left}" y="${height - 6}" fill="#555">ms per operation (insert-one: per document; bulk inserts: whole request)</text></svg>`);
  return parts.join('\n');
}

/** The Targets section: each target met / missed / not measured yet, with the figures. */
function targets(rows, meta) {
  const has = (n) => meta.sizes.includes(n);
  const big = has(1e6) ? 1e6 : Math.max(...meta.sizes);
  const lines = [];
  const v = (w, n, s) => cell(rows, w, n, s)?.medianMs;
  // 1. within 1.25× of hand-written SQL
  for (const n of [1e5, 1e6]) {
    if (!has(n)) { lines.push(`- **Within 1.25× of hand-written SQL at ${sizeLabel(n)}**: not measured yet (needs \`--full\`).`); continue; }
    const over = rows.filter((r) => r.size === n && r.system === 'consolidata' && r.ratioToLimit > 1.25);
    const all = rows.filter((r) => r.size === n && r.system === 'consolidata' && r.ratioToLimit != null);
    lines.push(`- **Within 1.25× of hand-written SQL at ${sizeLabel(n)}**: ${over.length ? `**missed** on ${over.length} of ${all.length} workloads — ${over.map((r) => `${r.workload} ${x(r.ratioToLimit)}`).join(', ')}` : `**met** on all ${all.length} workloads`}; met on ${all.filter((r) => r.ratioToLimit <= 1.25).map((r) => `${r.workload} ${x(r.ratioToLimit)}`).join(', ') || 'none'}.`);
  }
  // 2. faster than the peers; ≥10× on indexed and geo at 1M
  const slower = [];
  let compared = 0;
  for (const n of meta.sizes) for (const w of QUERY_SET) for (const p of PEERS) {
    const a = v(w, n, 'consolidata');
    const b = v(w, n, p);
    if (a && b) { compared++; if (b <= a) slower.push(`${w}@${sizeLabel(n)} vs ${LABEL[p]} (${ms(a)} vs ${ms(b)} ms)`); }
  }
  lines.push(`- **Faster than NeDB / LokiJS / mingo on queries**: ${slower.length ? `**missed** on ${slower.length} of ${compared} comparisons — ${slower.join('; ')}` : `**met** on all ${compared} comparisons`}.`);
  const tenX = (n) => {
    const misses = [];
    const figures = [];
    for (const w of [...INDEXED, ...GEO]) for (const p of PEERS) {
      const a = v(w, n, 'consolidata');
      const b = v(w, n, p);
      if (!a || !b) continue;
      figures.push(b / a);
      if (b / a < 10) misses.push(`${w} vs ${LABEL[p]} ${x(b / a)}`);
    }
    return { misses, figures };
  };
  if (has(1e6) && tenX(1e6).figures.length === 0) {
    lines.push(`- **≥10× faster than the peers on indexed and geo queries at 1M**: the peers did not run at 1M in this run (see Findings).`);
  } else if (has(1e6)) {
    const t = tenX(1e6);
    lines.push(`- **≥10× faster than the peers on indexed and geo queries at 1M**: ${t.misses.length ? `**missed** — ${t.misses.join(', ')}` : `**met** (smallest ${x(Math.min(...t.figures))})`}.`);
  } else {
    const t = tenX(big);
    lines.push(`- **≥10× faster than the peers on indexed and geo queries at 1M**: not measured yet. At ${sizeLabel(big)}: ${t.misses.length ? `under 10× on ${t.misses.join(', ')}` : `≥10× everywhere (smallest ${x(Math.min(...t.figures))})`}.`);
  }
  // 3. open + first indexed query
  const open = v('open-existing', big, 'consolidata');
  lines.push(has(1e6)
    ? `- **Open the 1M file + indexed query < 100 ms**: ${open < 100 ? '**met**' : '**missed**'} (${ms(open)} ms).`
    : `- **Open the 1M file + indexed query < 100 ms**: not measured yet. Opening the ${sizeLabel(big)} file + eq-pwi: ${ms(open)} ms (hand SQL ${ms(v('open-existing', big, 'sql'))} ms).`);
  // 4. growth of the indexed query cost
  const small = Math.min(...meta.sizes);
  const g = v('eq-pwi', big, 'consolidata') / v('eq-pwi', small, 'consolidata');
  const gs = v('eq-pwi', big, 'sql') / v('eq-pwi', small, 'sql');
  lines.push(has(1e6)
    ? `- **Indexed query cost growth 10k→1M ≤ 1.5×**: ${g <= 1.5 ? '**met**' : '**missed**'} (eq-pwi ${ms(v('eq-pwi', small, 'consolidata'))} → ${ms(v('eq-pwi', 1e6, 'consolidata'))} ms, ${x(g)}; hand SQL ${x(gs)}).`
    : `- **Indexed query cost growth 10k→1M ≤ 1.5×**: not measured yet. 10k→${sizeLabel(big)}: eq-pwi ${ms(v('eq-pwi', small, 'consolidata'))} → ${ms(v('eq-pwi', big, 'consolidata'))} ms (${x(g)}; hand SQL ${x(gs)}).`);
  // 5. the big-data issue's targets
  const RESULT_HEAVY = ['range-spudDate', 'gt-lateralLength', 'regex-prefix', 'bounds-10k', 'polygon-hole'];
  if (has(1e6) && v('range-spudDate', 1e6, 'loki')) {
    const cmp = RESULT_HEAVY.filter((w) => v(w, 1e6, 'loki') && v(w, 1e6, 'consolidata')).map((w) => ({ w, cd: v(w, 1e6, 'consolidata'), loki: v(w, 1e6, 'loki'), hits: cell(rows, w, 1e6, 'consolidata')?.hits }));
    const lost = cmp.filter((c) => c.cd > c.loki);
    lines.push(`- **Result-heavy queries at 1M at least as fast as LokiJS**: ${lost.length ? `**missed** on ${lost.length} of ${cmp.length}` : `**met** on all ${cmp.length}`} — ${cmp.map((c) => `${c.w} (${Math.round(c.hits)} hits) ${ms(c.cd)} vs ${ms(c.loki)} ms`).join('; ')}.`);
  } else {
    lines.push(`- **Result-heavy queries at 1M at least as fast as LokiJS**: not measured in this run (needs \`--full\` with LokiJS at 1M).`);
  }
  // The store with its document cache, read warm, against LokiJS's default mode (objects handed out as stored).
  const cachedAt = has(1e6) ? 1e6 : big;
  const warm = ['range-spudDate', 'bounds-10k', 'polygon-hole'].filter((w) => v(w, cachedAt, 'cached') && v(w, cachedAt, 'loki')).map((w) => ({ w, r: v(w, cachedAt, 'cached') / v(w, cachedAt, 'loki'), cd: v(w, cachedAt, 'cached'), loki: v(w, cachedAt, 'loki') }));
  const held = meta.memory.find((r) => r.size === cachedAt && r.cache)?.cache;
  if (warm.length) lines.push(`- **Result-heavy reads with documentCache within 1.5× of LokiJS** (at ${sizeLabel(cachedAt)}, warm): ${warm.map((c) => `${c.w} ${ms(c.cd)} vs ${ms(c.loki)} ms ${c.r <= 1.5 ? '**met**' : '**missed**'} (${x(c.r)})`).join('; ')}${held ? `; the cache held ${held.entries} documents, ${(held.bytes / 2 ** 20).toFixed(0)} MB of JSON text, heap +${held.heapGrowthMB.toFixed(0)} MB` : ''}.`);
  const named = [['eq-pwi', 1e5], ['combined', 1e5], ['bulk-insert', 1e4]].map(([w, n]) => ({ w, n, r: cell(rows, w, n, 'consolidata')?.ratioToLimit })).filter((c) => c.r != null);
  if (named.length) lines.push(`- **Per-request overhead ≤ 1.25× of hand SQL** (indexed equality and the combined query at 100k, an insert of 10k documents): ${named.map((c) => `${c.w}@${sizeLabel(c.n)} ${c.r <= 1.25 ? '**met**' : '**missed**'} (${x(c.r)})`).join(', ')}.`);
  const streamed = ['page-all', 'iterate-all', 'export-10pct'].map((w) => ({ w, r: cell(rows, w, big, 'consolidata')?.ratioToLimit, m: v(w, big, 'consolidata'), hits: cell(rows, w, big, 'consolidata')?.hits })).filter((c) => c.m);
  if (streamed.length) lines.push(`- **Cursor paging, iterate and export linear, near hand-written keyset SQL** (at ${sizeLabel(big)}): ${streamed.map((c) => `${c.w} ${c.hits} documents in ${ms(c.m)} ms (${x(c.r)})`).join('; ')}.`);
  return lines.join('\n');
}

function markdown(rows, meta, workloads, queries) {
  const m = meta.machine;
  const mem = meta.memory.map((r) => `| ${sizeLabel(r.size)} | ${LABEL[r.system]} | ${r.rssGrowthMB.toFixed(0)} | ${r.bytesOnDisk ? (r.bytesOnDisk / 2 ** 20).toFixed(0) : '–'} |`);
  return [
    `Run ${meta.date} (${meta.mode}, ${meta.seconds.toFixed(0)} s), library ${meta.library}.`,
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGB.toFixed(0)} GB, ${m.os}; Node ${m.node}, SQLite ${m.sqlite}; ${Object.entries(meta.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    '',
    `Median ms per operation (one request; insert-one per document). cd/sql = consolidata ÷ hand-written SQL (the limit, 1.00× = parity). peer/cd = how many times faster consolidata is than that peer. † = the peer has no equivalent: full scan with a JS predicate. n/a = not supported. Hand SQL and the stores are timed in turn in one process; each peer runs in a process of its own after them, so no system's figures carry another's heap.`,
    '',
    tables(rows, meta, workloads, { markdown: true }),
    '**Workloads.** ' + [
      'bulk-insert: all Wells in one request (fresh store each rep);',
      ...queries.map((q) => `${q.id}: ${q.what};`),
      'open-existing: open the file just written and answer one eq-pwi query (NeDB/LokiJS load their own files);',
      'dp-bulk-insert: DailyProduction rows (a tenth of the Wells count: wells × 100 days) in one request, one run;',
      'dp-history: one well\'s ~100 daily rows sorted by prodDate;',
      'insert-one: 1,000 single-document requests, after 1,000 untimed ones and their removal, the systems in turn 100 at a time, median per document;',
      'update-many: statusCurrent on all Haynesville wells (~6%);',
      'delete-many: wells spudded in half a month (~0.2%).',
    ].join(' '),
    '',
    'Every query returns whole documents (consolidata and hand SQL parse `json(doc)`; NeDB returns copies; LokiJS and mingo return their stored objects). Counts are cross-checked on every workload.',
    '',
    '**Memory** (RSS growth while loading each system, approximate — hand SQL and the stores share one process, each peer has one of its own):',
    '',
    '| size | system | RSS growth MB | file MB |',
    '|---|---|---:|---:|',
    ...mem,
    '',
    `Peak RSS of the largest bench process: ${meta.peakRssMB.sampled.toFixed(0)} MB sampled, ${meta.peakRssMB.maxRSS.toFixed(0)} MB maxRSS.`,
    '',
    `**Mismatches:** ${meta.mismatches.length ? meta.mismatches.map((l) => `\n- ${l}`).join('') : 'none.'}`,
    '',
    '## Targets',
    '',
    targets(rows, meta),
    '',
  ].join('\n');
}

export function writeOutputs({ results, rows, meta, workloads, queries }) {
  fs.mkdirSync(results, { recursive: true });
  console.log(tables(rows, meta, workloads, { markdown: false }));
  fs.writeFileSync(path.join(results, 'latest.json'), JSON.stringify(rows, null, 1));
  fs.writeFileSync(path.join(results, 'latest.meta.json'), JSON.stringify({ ...meta, workloads, queries: queries.map(({ id, what }) => ({ id, what })) }, null, 1));
  fs.writeFileSync(path.join(results, 'latest.md'), `# consolidata benchmark — latest run\n\n![chart](latest.svg)\n\n${markdown(rows, meta, workloads, queries)}`);
  fs.writeFileSync(path.join(results, 'latest.svg'), svg(rows, meta, workloads));
  console.log(`\nwrote ${['latest.json', 'latest.meta.json', 'latest.md', 'latest.svg'].map((f) => path.join(path.relative(process.cwd(), results), f)).join(', ')}`);
}

/**
 * Writes one section of another bench (`lines` open with `<!-- name -->` and close with `<!-- /name -->`) into
 * bench/REPORT.md: in its place when it is there, else inside the hand-kept Findings (which `bench/run.mjs --report`
 * preserves), else at the end.
 * @example writeSection(root, 'journal', ['<!-- journal -->', '…', '<!-- /journal -->'])
 */
export function writeSection(root, name, lines) {
  const file = path.join(root, 'bench', 'REPORT.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# consolidata benchmark report\n';
  const text = lines.join('\n');
  const section = new RegExp(`<!-- ${name} -->[\\s\\S]*<!-- /${name} -->`);
  const out = section.test(old)
    ? old.replace(section, () => text)
    : old.includes('<!-- /findings -->')
      ? old.replace('<!-- /findings -->', () => `${text}\n<!-- /findings -->`)
      : `${old.trimEnd()}\n\n${text}\n`;
  fs.writeFileSync(file, out);
}

/** bench/REPORT.md from the latest results; a hand-written "Findings" section between the markers is kept. */
export async function writeReport({ root, results }) {
  const rows = JSON.parse(fs.readFileSync(path.join(results, 'latest.json'), 'utf8'));
  const meta = JSON.parse(fs.readFileSync(path.join(results, 'latest.meta.json'), 'utf8'));
  const file = path.join(root, 'bench', 'REPORT.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const kept = /<!-- findings -->[\s\S]*<!-- \/findings -->/.exec(old)?.[0] ?? '<!-- findings -->\n<!-- /findings -->';
  // The PostgreSQL section is written by `--backend postgres` runs (writePostgres) and kept as it is here.
  const postgres = POSTGRES_SECTION.exec(old)?.[0];
  const citus = CITUS_SECTION.exec(old)?.[0];
  const text = [
    '# consolidata benchmark report',
    '',
    `Written by \`node bench/run.mjs --report\` from the ${meta.mode} run of ${meta.date}${meta.mode === 'quick' ? ' (10k and 100k documents; the 1M figures come from `npm run bench -- --full`, to be added)' : ''}. Re-run: \`npm run bench\` (quick) or \`npm run bench -- --full\`, then \`node bench/run.mjs --report\`.`,
    '',
    `**Machine:** ${meta.machine.cpu}, ${meta.machine.cores} cores, ${meta.machine.memoryGB.toFixed(1)} GB RAM, ${meta.machine.os}; Node ${meta.machine.node}; SQLite ${meta.machine.sqlite} (better-sqlite3 ${meta.versions['better-sqlite3']}).`,
    '',
    '![every workload and system, ms per operation](REPORT.svg)',
    '',
    markdown(rows, meta, meta.workloads, meta.queries),
    '## Findings',
    '',
    kept,
    '',
    ...(postgres ? [postgres, ''] : []),
    ...(citus ? [citus, ''] : []),
  ].join('\n');
  fs.writeFileSync(file, text);
  // The chart of the same run, beside the report (the one other file the report checks in).
  fs.writeFileSync(path.join(root, 'bench', 'REPORT.svg'), svg(rows, meta, meta.workloads));
  console.log(`wrote ${path.relative(process.cwd(), file)} and its chart, bench/REPORT.svg`);
}

const POSTGRES_SECTION = /<!-- postgres -->[\s\S]*<!-- \/postgres -->/;
const CITUS_SECTION = /<!-- citus -->[\s\S]*<!-- \/citus -->/;

/**
 * `--backend citus`: consolidata on a local Citus cluster (coordinator + 2 workers, `citus: true`) beside consolidata
 * and hand-written SQL on one PostgreSQL server, written to results/citus.{json,meta.json} and to REPORT.md's Citus
 * section (only that section changes; the findings under it are kept).
 */
export async function writeCitus({ root, results, rows, meta, workloads }) {
  fs.mkdirSync(results, { recursive: true });
  fs.writeFileSync(path.join(results, 'citus.json'), JSON.stringify(rows, null, 1));
  fs.writeFileSync(path.join(results, 'citus.meta.json'), JSON.stringify(meta, null, 1));
  const m = meta.machine;
  const file = path.join(root, 'bench', 'REPORT.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const kept = /<!-- citus-findings -->[\s\S]*<!-- \/citus-findings -->/.exec(old)?.[0] ?? '<!-- citus-findings -->\n<!-- /citus-findings -->';
  const get = (w, n, sys) => rows.find((r) => r.workload === w && r.size === n && r.system === sys);
  const v = (c) => (c?.medianMs == null ? 'n/a' : ms(c.medianMs));
  const ratio = (a, b) => (a?.medianMs && b?.medianMs ? x(a.medianMs / b.medianMs) : '–');
  const lines = [
    '<!-- citus -->',
    '## Citus',
    '',
    `Written by \`npm run bench -- --backend citus\` (${meta.seconds.toFixed(0)} s, ${meta.date}); re-running it rewrites this section's table only.`,
    `${m.citus ?? 'Citus'} on ${m.postgres ?? 'PostgreSQL'}: a coordinator and two workers on this one machine (${m.cpu}, ${m.cores} cores), 32 shards a`,
    'table, every server as the PostgreSQL one (Unix socket, `shared_buffers = 256MB`, `synchronous_commit = off`). Median ms per operation;',
    'citus/pg = consolidata on Citus ÷ consolidata on one PostgreSQL server; pg/pgsql as in the PostgreSQL section.',
    '',
  ];
  for (const n of meta.sizes) {
    lines.push(`### ${n.toLocaleString('en-US')} Well documents`, '');
    lines.push('| workload | hits | PostgreSQL hand SQL ms | PostgreSQL consolidata ms | pg/pgsql | Citus consolidata ms | citus/pg |');
    lines.push('|---|---|---:|---:|---:|---:|---:|');
    for (const w of workloads) {
      const [pgsql, pg, citus] = ['pgsql', 'pg', 'citus'].map((s) => get(w, n, s));
      if (![pgsql, pg, citus].some((c) => c?.medianMs)) continue;
      const hits = pgsql?.hits ?? pg?.hits ?? '';
      lines.push(`| ${w} | ${typeof hits === 'number' ? Math.round(hits * 10) / 10 : hits} | ${v(pgsql)} | ${v(pg)} | ${ratio(pg, pgsql)} | ${v(citus)} | ${ratio(citus, pg)} |`);
    }
    lines.push('');
  }
  lines.push(`**Mismatches:** ${meta.mismatches.length ? meta.mismatches.join('; ') : 'none.'}`, '', kept, '<!-- /citus -->');
  const section = lines.join('\n');
  const text = CITUS_SECTION.test(old) ? old.replace(CITUS_SECTION, () => section) : `${old.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(file, text);
  console.log(`wrote the Citus section of ${path.relative(process.cwd(), file)}`);
}

/**
 * `--backend postgres`: consolidata and hand-written SQL on PostgreSQL beside the same on SQLite, one table per size,
 * written to results/postgres.{json,meta.json} and to REPORT.md's PostgreSQL section (only that section changes).
 */
export async function writePostgres({ root, results, rows, meta, workloads }) {
  fs.mkdirSync(results, { recursive: true });
  fs.writeFileSync(path.join(results, 'postgres.json'), JSON.stringify(rows, null, 1));
  fs.writeFileSync(path.join(results, 'postgres.meta.json'), JSON.stringify(meta, null, 1));
  const m = meta.machine;
  const lines = [
    '<!-- postgres -->',
    '## PostgreSQL',
    '',
    `Written by \`npm run bench -- --backend postgres\` (${meta.seconds.toFixed(0)} s, ${meta.date}); re-running it rewrites this section only.`,
    `${m.postgres ?? 'PostgreSQL'} on the same machine (${m.cpu}, ${m.cores} cores), a server the bench starts: Unix socket, \`shared_buffers = 256MB\`,`,
    `fsync on and \`synchronous_commit = off\` (as SQLite's files run: WAL, \`synchronous = NORMAL\`); node-postgres ${meta.versions.pg}, pools of 4.`,
    '`ANALYZE` runs once the data is in, as autovacuum would on a live server. Hand SQL = statements written by hand on the',
    "store's own layout, each side on its own database (SQLite file, PostgreSQL schema); counts are cross-checked on every",
    'workload between all four.',
    '',
    'Median ms per operation. pg/pgsql = consolidata on PostgreSQL ÷ hand-written SQL on PostgreSQL (the limit there);',
    'cd/sql the same on SQLite; pg/cd = consolidata on PostgreSQL ÷ consolidata on SQLite.',
    '',
  ];
  const get = (w, n, sys) => rows.find((r) => r.workload === w && r.size === n && r.system === sys);
  const v = (c) => (c?.medianMs == null ? 'n/a' : ms(c.medianMs));
  const ratio = (a, b) => (a?.medianMs && b?.medianMs ? x(a.medianMs / b.medianMs) : '–');
  for (const n of meta.sizes) {
    lines.push(`### ${n.toLocaleString('en-US')} Well documents`, '');
    lines.push('| workload | hits | SQLite hand SQL ms | SQLite consolidata ms | cd/sql | PostgreSQL hand SQL ms | PostgreSQL consolidata ms | pg/pgsql | pg/cd |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const w of workloads) {
      const [sql, cd, pgsql, pg] = ['sql', 'consolidata', 'pgsql', 'pg'].map((s) => get(w, n, s));
      if (![sql, cd, pgsql, pg].some((c) => c?.medianMs)) continue;
      const hits = pgsql?.hits ?? sql?.hits ?? '';
      lines.push(`| ${w} | ${typeof hits === 'number' ? Math.round(hits * 10) / 10 : hits} | ${v(sql)} | ${v(cd)} | ${ratio(cd, sql)} | ${v(pgsql)} | ${v(pg)} | ${ratio(pg, pgsql)} | ${ratio(pg, cd)} |`);
    }
    lines.push('');
  }
  const sizes = meta.memory.filter((r) => r.system === 'pg' || r.system === 'pgsql' || r.system === 'sql');
  if (sizes.length) {
    lines.push('Storage of the Well documents: ' + sizes.map((r) => `${r.system === 'sql' ? 'SQLite file' : r.system === 'pg' ? 'PostgreSQL table (consolidata)' : 'PostgreSQL table (hand SQL)'} ${(r.bytesOnDisk / 2 ** 20).toFixed(0)} MB at ${sizeLabel(r.size)}`).join(', ') + ' (tables with their indexes and TOAST).', '');
  }
  lines.push(`**Mismatches:** ${meta.mismatches.length ? meta.mismatches.join('; ') : 'none.'}`, '', '<!-- /postgres -->');
  const section = lines.join('\n');
  const file = path.join(root, 'bench', 'REPORT.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# consolidata benchmark report\n';
  const text = POSTGRES_SECTION.test(old) ? old.replace(POSTGRES_SECTION, () => section) : `${old.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(file, text);
  console.log(section.replace(/<!-- \/?postgres -->\n?/g, ''));
  console.log(`wrote ${path.relative(process.cwd(), file)} (PostgreSQL section), ${path.join(path.relative(process.cwd(), results), 'postgres.json')}`);
}

/**
 * The aggregate workloads (bench/aggregate.mjs): merged by size into results/aggregates.json, so runs of one size
 * each keep the others', and written to REPORT.md's aggregates section with every target marked met or missed.
 */
export function writeAggregates({ root, results, rows, meta }) {
  fs.mkdirSync(results, { recursive: true });
  const file = path.join(results, 'aggregates.json');
  const kept = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : { rows: [], runs: {} };
  // REPORT.md's own table is the record of what this run does not redo (results/ is not committed): the medians of
  // the sizes, backends and systems it does not re-run are kept as printed.
  const printed = printedAggregates(root);
  kept.runs = { ...printed.runs, ...kept.runs };
  const mine = rows.filter((r) => r.workload.startsWith('agg-'));
  const sizes = new Set(mine.map((r) => r.size));
  const key = (r) => `${r.workload} ${r.size} ${r.system}`;
  const merged = [...kept.rows.filter((r) => !mine.some((m) => key(m) === key(r))), ...mine];
  for (const n of sizes) kept.runs[`${meta.backend}:${n}`] = { date: meta.date, seconds: meta.seconds };
  fs.writeFileSync(file, JSON.stringify({ rows: merged, runs: kept.runs }, null, 1));
  const get = (w, n, sys) => merged.find((r) => r.workload === w && r.size === n && r.system === sys)?.medianMs ?? null;
  const times = (a, b) => (a != null && b != null ? `${x(a / b)}` : '–');
  const upTo = (a, b, target) => (a != null && b != null ? `${x(a / b)} ${a / b <= target ? 'met' : '**missed**'}` : '–');
  const atLeast = (a, b, target) => (a != null && b != null ? `${x(b / a)} ${b / a >= target ? 'met' : '**missed**'}` : '–');
  const WHAT = { 'agg-month-well': 'per well and month', 'agg-month-basin': 'per basin and month' };
  const lines = [
    '<!-- aggregates -->',
    '### Aggregates: monthly oil per well and per basin',
    '',
    'Written by `npm run bench -- --sizes=N --only=agg-month-well,agg-month-basin` (add `--backend postgres` for the pg columns); each size shows its',
    `latest run (${Object.entries(kept.runs).map(([k, v]) => `${k} on ${v.date.slice(0, 10)}`).join(', ')}). N DailyProduction rows (N/100 wells × 100 days, each`,
    "carrying its well's basin under `extra.basin`), loaded into a fresh store of each system outside the timing; one aggregate is",
    '`store.aggregate(\'DailyProduction\', {}, { groupBy: [key, { field: \'prodDate\', interval: \'month\' }], metrics: { oil: { sum: \'oilVol\' } } })`,',
    'against hand-written `GROUP BY` SQL on the same database, mingo\'s `$group` + `$sort` pipeline and a LokiJS `mapReduce`. Every system\'s',
    `groups and oil total are compared (mismatches: ${meta.mismatches.filter((l) => l.includes(' agg-')).join('; ') || 'none'}). Median ms per aggregate; targets: ≤ 1.25× hand SQL, ≥ 10× faster than each peer.`,
    '',
    '| rows | aggregate | consolidata | hand SQL | ÷ hand SQL (≤ 1.25×) | mingo | faster (≥ 10×) | LokiJS | faster (≥ 10×) | pg | pgsql | pg ÷ pgsql |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  // A row's cells after its size and aggregate: each the systems it shows, and how it shows their medians.
  const CELLS = [
    [['consolidata'], (cd) => ms(cd)],
    [['sql'], (sql) => ms(sql)],
    [['consolidata', 'sql'], (cd, sql) => upTo(cd, sql, 1.25)],
    [['mingo'], (mingo) => ms(mingo)],
    [['consolidata', 'mingo'], (cd, mingo) => atLeast(cd, mingo, 10)],
    [['loki'], (loki) => ms(loki)],
    [['consolidata', 'loki'], (cd, loki) => atLeast(cd, loki, 10)],
    [['pg'], (pg) => ms(pg)],
    [['pgsql'], (pgsql) => ms(pgsql)],
    [['pg', 'pgsql'], (pg, pgsql) => (pg != null ? upTo(pg, pgsql, 1.25) : times(pg, pgsql))],
  ];
  for (const n of [...new Set([...merged.map((r) => r.size), ...printed.sizes])].sort((a, b) => a - b)) {
    for (const w of Object.keys(WHAT)) {
      // A cell showing a system this run measured at this size is computed anew; any other stays as printed.
      const old = printed.cells.get(`${n} ${WHAT[w]}`);
      const rerun = (sys) => mine.some((r) => r.workload === w && r.size === n && r.system === sys);
      const median = (sys) => {
        const at = CELLS.findIndex(([s]) => s.length === 1 && s[0] === sys);
        return old && !rerun(sys) ? (old[at] === 'n/a' ? null : Number(old[at])) : get(w, n, sys);
      };
      const cells = CELLS.map(([systems, show], i) => (old && !systems.some(rerun) ? old[i] : show(...systems.map(median))));
      lines.push(`| ${n.toLocaleString('en-US')} | ${WHAT[w]} | ${cells.join(' | ')} |`);
    }
  }
  lines.push('', '<!-- /aggregates -->');
  writeSection(root, 'aggregates', lines);
  console.log(`wrote the aggregates section of ${path.relative(process.cwd(), path.join(root, 'bench', 'REPORT.md'))}`);
}

/**
 * The aggregates table REPORT.md holds now: each row's cells after its size and aggregate (by `${size} ${aggregate}`),
 * the sizes it has, and the runs its text names (`sqlite:10000 on 2026-11-24`).
 */
function printedAggregates(root) {
  const file = path.join(root, 'bench', 'REPORT.md');
  const text = fs.existsSync(file) ? /<!-- aggregates -->[\s\S]*<!-- \/aggregates -->/.exec(fs.readFileSync(file, 'utf8'))?.[0] ?? '' : '';
  const cells = new Map();
  const sizes = new Set();
  for (const line of text.split('\n')) {
    const m = /^\| ([\d,]+) \| ([^|]+?) \| (.*) \|$/.exec(line);
    if (!m) continue;
    const n = Number(m[1].replaceAll(',', ''));
    sizes.add(n);
    cells.set(`${n} ${m[2]}`, m[3].split(' | '));
  }
  const runs = {};
  for (const [, key, date] of text.matchAll(/(\w+:\d+) on (\d{4}-\d\d-\d\d)/g)) runs[key] = { date };
  return { cells, sizes, runs };
}
