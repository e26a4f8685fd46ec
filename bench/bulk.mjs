// Bulk loads at scale: N generated Wells (default 1,000,000) written to an NDJSON file, then loaded into a fresh
// store file by each way there is, each in its own child process (its time and peak RSS measured alone):
//   sql-rows    hand-written SQL, one transaction, every index and R*Tree trigger live (row by row)
//   sql-bulk    one transaction, every secondary index (unique ones too) and the R*Tree insert triggers dropped, rows
//               inserted (their points kept), indexes created, R*Trees filled one INSERT a point, triggers back
//   sql-str     the hand floor: as sql-bulk, the R*Trees packed in sort-tile-recursive order (src/sqlite/rtree-pack.ts,
//               the one packer there is, bundled from the source) — the load the store's targets are measured against
//   load        store.load(NDJSON reader, { atomic: true }): the store's bulk path
//   load-wal    the same with another connection open on the file, so the load stays in WAL (alone on its file it
//               runs with a rollback journal)
//   import      `consolidata import Well FILE --atomic` (the CLI, through load)
//   insert      store.insert('Well', all N documents) in one call (the array parsed first, not timed)
//   load-batched store.load(NDJSON reader) in batches of 1,000, one transaction each: indexes live, row by row
// plus the store's validation per document (the catalogue's checks on the same documents, in this process).
// By default the floor, load and import run (the targets' figures); --only picks others (all: --only all).
// Usage: node bench/bulk.mjs [--n 1000000] [--only load,sql-bulk] [--report]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateWells } from './generate.mjs';
import { writeSection } from './report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (hit) return hit.slice(name.length + 3);
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};

/** Streams the lines of an NDJSON file as parsed documents. */
async function* readNdjson(file) {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) if (line) yield JSON.parse(line);
}

const W = '"docs_Well"';

/** One way of loading, run inside the child process. Answers the documents written. */
const variants = {
  async 'sql-rows'({ file, db, Database }) {
    return handLoad(Database, db, file, false);
  },
  async 'sql-bulk'({ file, db, Database }) {
    return handLoad(Database, db, file, true);
  },
  async 'sql-str'({ file, db, Database, pack }) {
    return handLoad(Database, db, file, true, pack);
  },
  async load({ file, db, DataStore }) {
    const store = DataStore.open(db);
    const r = await store.dynamic.load('Well', readNdjson(file), { atomic: true, batchSize: 5000 });
    if (!r.success) throw new Error(r.message);
    await store.close();
    return r.count;
  },
  async 'load-wal'({ file, db, DataStore, Database }) {
    const other = new Database(db, { readonly: true });
    other.prepare(`SELECT count(*) FROM ${W}`).get();
    const store = DataStore.open(db);
    const r = await store.dynamic.load('Well', readNdjson(file), { atomic: true, batchSize: 5000 });
    if (!r.success) throw new Error(r.message);
    await store.close();
    other.close();
    return r.count;
  },
  async 'load-batched'({ file, db, DataStore }) {
    const store = DataStore.open(db);
    const r = await store.dynamic.load('Well', readNdjson(file), { batchSize: 1000 });
    if (!r.success) throw new Error(r.message);
    await store.close();
    return r.count;
  },
  async insert({ file, db, DataStore, mark }) {
    const docs = [];
    for await (const d of readNdjson(file)) docs.push(d);
    const store = DataStore.open(db);
    mark();
    const r = await store.dynamic.insert('Well', docs);
    if (!r.success) throw new Error(r.message);
    await store.close();
    return r.count;
  },
};

let seq = 0;
const newId = () => (Date.now() * 4096 + (seq++ % 4096)).toString(16).padStart(24, '0');

/** Hand-written SQL on the store's layout: parse, stamp, insert, with the same pragmas the store sets. */
async function handLoad(Database, dbFile, file, bulk, pack) {
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('temp_store = MEMORY');
  db.pragma(`cache_size = -${bulk ? 256 * 1024 : 64 * 1024}`);
  db.pragma('mmap_size = 2147483648');
  const ins = db.prepare(`INSERT INTO ${W} (id, doc) VALUES (?, jsonb(?))`);
  const now = new Date().toISOString();
  const modified = Date.parse(now);
  db.exec('BEGIN IMMEDIATE');
  let saved = [];
  if (bulk) {
    saved = db.prepare(`SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'docs_Well' AND sql IS NOT NULL AND (type = 'index' OR (type = 'trigger' AND name LIKE '%:ai'))`).all();
    for (const o of saved) db.exec(`DROP ${o.type === 'index' ? 'INDEX' : 'TRIGGER'} "${o.name}"`);
  }
  let n = 0;
  // With the triggers gone, each row's points are kept as it goes in (no second read of the documents).
  const trees = {};
  for (const name of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rtree._well.%' AND sql LIKE '%USING rtree%'`).pluck().all()) {
    trees[name.slice('rtree._well.'.length).replace(/_([a-z])/g, (_, c) => c.toUpperCase())] = [];
  }
  for await (const d of readNdjson(file)) {
    const doc = { id: newId(), ...d, createdAt: now, createdBy: 'bench', updatedAt: now, updatedBy: 'bench', modifiedTimestamp: modified, schemaVersion: '5.0.0' };
    const rowid = Number(ins.run(doc.id, JSON.stringify(doc)).lastInsertRowid);
    if (bulk) {
      for (const f in trees) {
        const c = doc[f]?.coordinates;
        if (c) trees[f].push(rowid, c[0], c[1]);
      }
    }
    n++;
  }
  if (bulk) {
    for (const o of saved.filter((x) => x.type === 'index')) db.exec(o.sql);
    for (const [f, p] of Object.entries(trees)) {
      const table = `rtree._well.${f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
      if (pack) {
        const n = p.length / 3;
        const ids = new Float64Array(n);
        const boxes = new Float32Array(n * 4);
        for (let i = 0; i < n; i++) {
          ids[i] = p[i * 3];
          boxes[i * 4] = pack.floatDown(p[i * 3 + 1]);
          boxes[i * 4 + 1] = pack.floatUp(p[i * 3 + 1]);
          boxes[i * 4 + 2] = pack.floatDown(p[i * 3 + 2]);
          boxes[i * 4 + 3] = pack.floatUp(p[i * 3 + 2]);
        }
        p.length = 0;
        pack.packRtree(db, table, { ids, boxes });
        continue;
      }
      const put = db.prepare(`INSERT INTO "${table}" VALUES (?, ?, ?, ?, ?)`);
      for (let i = 0; i < p.length; i += 3) put.run(p[i], p[i + 1], p[i + 1], p[i + 2], p[i + 2]);
    }
    for (const o of saved.filter((x) => x.type === 'trigger')) db.exec(o.sql);
  }
  db.exec('COMMIT');
  db.close();
  return n;
}

/**
 * Peak resident memory of a process (MB), polled from /proc while it runs, in two parts: `own` (anonymous and
 * shared memory: heaps, SQLite's page cache, buffers) and `all` (VmHWM, which also counts the pages of the database
 * file the connection maps for reads: the operating system's page cache of that file, reclaimable).
 */
function watchRss(pid) {
  let own = 0;
  let all = 0;
  const read = () => {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      own = Math.max(own, (kb('RssAnon') + kb('RssShmem')) / 1024);
      all = Math.max(all, kb('VmHWM') / 1024);
    } catch {
      // Exited.
    }
  };
  const timer = setInterval(read, 50);
  return () => {
    clearInterval(timer);
    return { own: Math.round(own), all: Math.round(all) };
  };
}

async function child(name, file, db) {
  const { DataStore } = await import(path.join(root, 'dist/index.js'));
  const { default: Database } = await import('better-sqlite3');
  const pack = name === 'sql-str' ? await fromSource(`export { packRtree, floatDown, floatUp } from './src/sqlite/rtree-pack.ts';`) : undefined;
  DataStore.open(db).close();
  let start = performance.now();
  const rssBefore = process.memoryUsage().rss;
  const count = await variants[name]({ file, db, DataStore, Database, pack, mark: () => (start = performance.now()) });
  const seconds = (performance.now() - start) / 1000;
  const check = new Database(db, { readonly: true });
  const stored = check.prepare(`SELECT count(*) FROM ${W}`).pluck().get();
  const tree = check.prepare(`SELECT count(*) FROM "rtree._well.surface_loc"`).pluck().get();
  const indexes = check.prepare(`SELECT count(*) FROM sqlite_master WHERE tbl_name = 'docs_Well' AND type IN ('index', 'trigger')`).pluck().get();
  check.close();
  process.stdout.write(JSON.stringify({ name, count, seconds, stored, tree, indexes, rssStartMb: Math.round(rssBefore / 2 ** 20) }) + '\n');
}

async function main() {
  const n = Number(arg('n', 1_000_000));
  const only = arg('only', '')?.split(',').filter(Boolean);
  const all = ['sql-rows', 'sql-bulk', 'sql-str', 'load', 'load-wal', 'import', 'insert', 'load-batched'];
  const names = only?.includes('all') ? all : all.filter((x) => (only?.length ? only.includes(x) : ['sql-str', 'load', 'import'].includes(x)));
  const dir = fs.mkdtempSync(path.join(tmpdir(), 'consolidata-bulk-'));
  const file = path.join(dir, 'wells.ndjson');
  const started = new Date();
  try {
    let t = performance.now();
    const out = fs.openSync(file, 'w');
    for (let from = 0; from < n; from += 50_000) {
      fs.writeSync(out, generateWells(Math.min(50_000, n - from), { from }).map((d) => JSON.stringify(d)).join('\n') + '\n');
    }
    fs.closeSync(out);
    console.error(`generated ${n.toLocaleString('en-US')} Wells (${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MB NDJSON) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const validation = await validationCost(file, Math.min(n, 100_000));
    const rows = [];
    for (const name of names) {
      const db = path.join(dir, `${name}.db`);
      for (const s of ['', '-wal', '-shm']) fs.rmSync(db + s, { force: true });
      t = performance.now();
      const isImport = name === 'import';
      const args = isImport
        ? [path.join(root, 'dist/cli.js'), 'import', 'Well', file, '--db', db, '--create', '--atomic']
        : // Only the one-call insert holds every document at once; the others run with Node's default heap, as users do.
          [...(name === 'insert' ? ['--max-old-space-size=16384'] : []), fileURLToPath(import.meta.url), '--child', name, file, db];
      const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      const peak = watchRss(proc.pid);
      let stdout = '';
      proc.stdout.on('data', (d) => (stdout += d));
      const code = await new Promise((r) => proc.on('exit', (c) => r(c)));
      const { own: rssMb, all: rssAllMb } = peak();
      const wall = (performance.now() - t) / 1000;
      if (code !== 0) throw new Error(`${name} exited ${code}`);
      let row;
      if (isImport) {
        const { default: Database } = await import('better-sqlite3');
        const check = new Database(db, { readonly: true });
        const stored = check.prepare(`SELECT count(*) FROM ${W}`).pluck().get();
        check.close();
        row = { name, count: stored, seconds: wall, stored };
      } else row = JSON.parse(stdout.trim().split('\n').pop());
      if (row.stored !== n) throw new Error(`${name}: ${row.stored} documents stored, expected ${n}`);
      row.rssMb = rssMb;
      row.rssAllMb = rssAllMb;
      row.docsPerSec = Math.round(n / row.seconds);
      rows.push(row);
      console.error(`${name.padEnd(13)} ${row.seconds.toFixed(1).padStart(7)} s  ${String(row.docsPerSec).padStart(7)} docs/s  peak RSS ${rssMb} MB own, ${rssAllMb} MB with mapped file pages`);
      for (const s of ['', '-wal', '-shm']) fs.rmSync(db + s, { force: true });
    }
    const report = { n, date: started.toISOString(), validationUsPerDoc: validation, rows };
    const floor = floorOf(report);
    if (Number.isFinite(floor)) {
      for (const x of rows) if (!x.name.startsWith('sql-')) console.error(`${x.name.padEnd(13)} ${(x.seconds / floor).toFixed(2)}× the floor (${floor.toFixed(1)} s)`);
    }
    console.log(JSON.stringify(report, null, 1));
    if (process.argv.includes('--report')) writeReport(report);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Modules of the source that the package does not export, bundled for this process (`contents`: an entry). */
async function fromSource(contents) {
  const { build } = await import('esbuild');
  const out = path.join(tmpdir(), `consolidata-bench-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  await build({ stdin: { contents, resolveDir: root, loader: 'ts' }, bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'warning', external: ['better-sqlite3'] });
  try {
    return await import(out);
  } finally {
    fs.rmSync(out, { force: true });
  }
}

/** Median µs per document of the catalogue's validation, on the first documents of the file (5 passes). */
async function validationCost(file, count) {
  const { validateDocument, catalogueOf } = await fromSource(`export { validateDocument } from './src/catalogue/validate.ts'; export { catalogueOf } from './src/catalogue/index.ts';`);
  const info = catalogueOf().resolve('Well');
  const docs = [];
  for await (const d of readNdjson(file)) {
    docs.push(d);
    if (docs.length >= count) break;
  }
  const times = [];
  for (let rep = 0; rep < 5; rep++) {
    const t = performance.now();
    for (let i = 0; i < docs.length; i++) if (validateDocument(info, docs[i], { strict: true, index: i }).errors.length) throw new Error('invalid document');
    times.push(((performance.now() - t) * 1000) / docs.length);
  }
  times.sort((a, b) => a - b);
  const median = times[2];
  console.error(`validation: ${median.toFixed(2)} µs per document (median of 5 passes over ${docs.length.toLocaleString('en-US')})`);
  return Number(median.toFixed(2));
}

/** The floor the store's loads are measured against: hand SQL with STR-packed trees, else the best hand load run. */
function floorOf(r) {
  const str = r.rows.find((x) => x.name === 'sql-str');
  return str ? str.seconds : Math.min(...r.rows.filter((x) => x.name.startsWith('sql-')).map((x) => x.seconds));
}

/** The targets for bulk loads, each met or missed with its figure. */
function bulkTargets(r, floor) {
  const row = (name) => r.rows.find((x) => x.name === name);
  const mark = (ok) => (ok ? '**met**' : '**missed**');
  const ways = ['load', 'load-wal', 'import', 'insert'].map(row).filter(Boolean);
  const lines = [];
  if (Number.isFinite(floor)) lines.push(`- **Within 1.1× of the hand-written WAL floor (STR-packed R*Trees) in the same run**: ${ways.map((x) => `${x.name} ${mark(x.seconds / floor <= 1.1)} (${(x.seconds / floor).toFixed(2)}×, ${x.seconds.toFixed(1)} s against ${floor.toFixed(1)} s)`).join(', ')}.`);
  const load = row('load');
  if (load) lines.push(`- **RSS growth loading from NDJSON ≤ 400 MB**: ${mark(load.rssMb - (load.rssStartMb ?? 0) <= 400)} (load: own memory ${load.rssStartMb} → ${load.rssMb} MB at its peak; the mapped pages of the file it writes come on top and are the OS's cache)${row('import') ? `; import ${row('import').rssMb} MB at its peak` : ''}.`);
  lines.push(`- **Validation ≤ 8 µs per document**: ${mark(r.validationUsPerDoc <= 8)} (${r.validationUsPerDoc} µs).`);
  return lines.join('\n');
}

function writeReport(r) {
  const best = floorOf(r);
  const label = {
    'sql-rows': 'hand SQL, row by row (indexes live)',
    'sql-bulk': 'hand SQL, indexes dropped and rebuilt, R*Trees filled a point at a time',
    'sql-str': 'hand SQL, indexes dropped and rebuilt, R*Trees STR-packed (the floor)',
    load: '`store.load(ndjson, { atomic: true })`, alone on its file (rollback journal)',
    'load-wal': '`store.load(ndjson, { atomic: true })` with another connection open (WAL)',
    import: '`consolidata import Well FILE --atomic`',
    insert: "`store.insert('Well', docs)`, one call",
    'load-batched': '`store.load(ndjson)`, batches of 1,000',
  };
  const lines = [
    '<!-- bulk -->',
    `**Bulk loads** (\`npm run bench:bulk -- --report\`, ${r.date}): ${r.n.toLocaleString('en-US')} generated Wells (~1.3 KB each) from an NDJSON file into a fresh store file with every default index and both R*Trees, each way in its own process (peak resident memory of that process: its own — heaps, SQLite's cache — and with the pages of the database file it maps for reads, which the OS reclaims; \`insert\` is timed from the call, its array parsed before). Store validation: ${r.validationUsPerDoc} µs per document (target ≤ 8).`,
    '',
    '| load | seconds | docs/s | vs the floor | peak RSS own MB | with mapped file MB |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.rows.map((x) => `| ${label[x.name]} | ${x.seconds.toFixed(1)} | ${x.docsPerSec.toLocaleString('en-US')} | ${Number.isFinite(best) ? (x.seconds / best).toFixed(2) + '×' : '–'} | ${x.rssMb.toLocaleString('en-US')} | ${x.rssAllMb.toLocaleString('en-US')} |`),
    '',
    bulkTargets(r, best),
    '<!-- /bulk -->',
  ];
  writeSection(root, 'bulk', lines);
  console.error(lines.slice(1, -1).join('\n'));
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4], process.argv[5]);
else await main();
