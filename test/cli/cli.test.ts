import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { runExport } from '../../src/cli/export.js';
import { importExitCode, runImport } from '../../src/cli/import.js';
import { sampleSummary } from '../../src/cli/serve.js';
import { sampleData } from '../../src/sample.js';
import { buildCli, root, runCli, startServe } from './build.js';
import { Collect } from '../helpers/import.js';

const NDJSON = [
  '{"pwi":"A1","basinName":"Permian","fracStages":12}',
  '',
  '{"pwi":"A2","basinName":"Bakken"',                 // line 3: malformed JSON
  '{"pwi":"A3","fracStages":"many"}',                  // line 4: refused by the store (VALIDATION)
  '{"pwi":"A4","spudDate":"3/14/2021","surfaceLoc":{"type":"Point","coordinates":[-101.9,31.8]}}',
  '{"pwi":"A1"}',                                      // line 6: duplicate key
  '[1,2]',                                             // line 7: not an object
  '{"pwi":"A5","extra":{"source":"test"}}',
].join('\n');

const strip = (d: Record<string, unknown>) => {
  const { id, createdAt, createdBy, updatedAt, updatedBy, modifiedTimestamp, schemaVersion, createdActivityId, lastUpdatedActivityId, ...rest } = d;
  return rest;
};

describe('runImport / runExport', () => {
  it('imports NDJSON, reports and skips bad lines by number, and exports the same documents back', async () => {
    const store = DataStore.open();
    const errors = new Collect();
    const summary = await runImport({ store, type: 'Well', input: Readable.from([NDJSON]), errors, batch: 2 });
    expect(summary).toEqual({ read: 7, imported: 3, skipped: 4, aborted: false, interrupted: false });
    expect(importExitCode(summary)).toBe(2);
    const lines = errors.text.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^line 3: malformed JSON/);
    expect(lines[1]).toMatch(/^line 4: fracStages: expected an integer/);
    expect(lines[2]).toMatch(/^line 6: a Well with pwi "A1" already exists/);
    expect(lines[3]).toBe('line 7: expected a JSON object');

    const out = new Collect();
    const { exported } = await runExport({ store, type: 'Well', output: out, pageSize: 2 });
    expect(exported).toBe(3);
    const back = out.text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(back.map(strip)).toEqual([
      { pwi: 'A1', basinName: 'Permian', fracStages: 12 },
      { pwi: 'A4', spudDate: '2021-03-14T00:00:00.000Z', surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] } },
      { pwi: 'A5', extra: { source: 'test' } },
    ]);
    expect(back.every((d) => typeof d.id === 'string' && d.createdBy === 'consolidata')).toBe(true);

    // Re-importing the export into another store gives the same documents, ids included.
    const copy = DataStore.open();
    const again = await runImport({ store: copy, type: 'Well', input: Readable.from([out.text]), errors: new Collect() });
    expect(again).toEqual({ read: 3, imported: 3, skipped: 0, aborted: false, interrupted: false });
    expect(importExitCode(again)).toBe(0);
    expect((await copy.query('Well', {})).data).toEqual((await store.query('Well', {})).data.map((d) => ({ ...d, updatedAt: expect.any(String), modifiedTimestamp: expect.any(Number), lastUpdatedActivityId: expect.any(String) })));
    store.close();
    copy.close();
  });

  it('--abort-on-error stops at the first bad line; its batch is not written, earlier batches stay', async () => {
    const store = DataStore.open();
    const errors = new Collect();
    const input = ['{"pwi":"B1"}', '{"pwi":"B2"}', '{"pwi":"B3"}', '{"pwi":"B4","fracStages":"x"}', '{"pwi":"B5"}'].join('\n');
    const summary = await runImport({ store, type: 'Well', input: Readable.from([input]), errors, batch: 2, abortOnError: true });
    expect(summary.aborted).toBe(true);
    expect(importExitCode(summary)).toBe(1);
    expect(summary.imported).toBe(2);
    expect(errors.text).toMatch(/^line 4: fracStages/);
    expect((await store.query('Well', {})).data.map((d) => d.pwi)).toEqual(['B1', 'B2']);
    store.close();
  });

  it('--abort-on-error on a duplicate writes nothing of that batch', async () => {
    const store = DataStore.open();
    const errors = new Collect();
    const input = ['{"pwi":"C1"}', '{"pwi":"C2"}', '{"pwi":"C1"}'].join('\n');
    const summary = await runImport({ store, type: 'Well', input: Readable.from([input]), errors, batch: 10, abortOnError: true });
    expect(summary).toMatchObject({ aborted: true, imported: 0 });
    expect(errors.text).toMatch(/^line 3: a Well with pwi "C1" already exists/);
    expect((await store.query('Well', {})).total).toBe(0);
    store.close();
  });

  it('imports a JSON array file, naming bad elements by position', async () => {
    const store = DataStore.open();
    const errors = new Collect();
    const input = JSON.stringify([{ pwi: 'D1' }, 'nope', { pwi: 'D2', bogus: 1 }, { pwi: 'D3' }], null, 2);
    const summary = await runImport({ store, type: 'Well', input: Readable.from([input]), errors });
    expect(summary).toEqual({ read: 4, imported: 2, skipped: 2, aborted: false, interrupted: false });
    expect(errors.text).toMatch(/^element 1: expected a JSON object\nelement 2: Well has no field "bogus"/);
    store.close();
  });

  it('an unknown type aborts the import', async () => {
    const store = DataStore.open();
    const errors = new Collect();
    const summary = await runImport({ store, type: 'Wel', input: Readable.from(['{"pwi":"x"}\n']), errors });
    expect(summary.aborted).toBe(true);
    expect(errors.text).toMatch(/unknown type "Wel"/);
    store.close();
  });

  it('export honours a query and reports a bad one', async () => {
    const store = DataStore.open();
    await store.insert('Well', [{ pwi: 'E1', basinName: 'Permian' }, { pwi: 'E2', basinName: 'Bakken' }, { pwi: 'E3', basinName: 'Permian' }]);
    const out = new Collect();
    expect((await runExport({ store, type: 'Well', query: { basinName: 'Permian' }, output: out, pageSize: 1 })).exported).toBe(2);
    expect(out.text.trim().split('\n').map((l) => JSON.parse(l).pwi)).toEqual(['E1', 'E3']);
    const bad = await runExport({ store, type: 'Well', query: { basin: 'x' }, output: new Collect() });
    expect(bad.failure?.errors[0]?.code).toBe('UNKNOWN_FIELD');
    store.close();
  });

  it('export orders by several sort keys and by distance, paging by cursor', async () => {
    const store = DataStore.open();
    const at = (lon: number) => ({ type: 'Point' as const, coordinates: [lon, 35.5] });
    await store.insert('Well', [
      { basinName: 'B', fracStages: 1, surfaceLoc: at(-97.2) },
      { basinName: 'A', fracStages: 2, surfaceLoc: at(-97.4) },
      { basinName: 'A', fracStages: 7, surfaceLoc: at(-97.3) },
      { basinName: 'C', fracStages: 3, surfaceLoc: at(-90) },
    ]);
    const lines = (out: Collect) => out.text.trim().split('\n').map((l) => JSON.parse(l) as { basinName: string; fracStages: number });
    const byKeys = new Collect();
    await runExport({ store, type: 'Well', sort: { sortBy: ['basinName', 'fracStages'], sortOrder: [1, -1] }, output: byKeys, pageSize: 1 });
    expect(lines(byKeys).map((d) => `${d.basinName}${d.fracStages}`)).toEqual(['A7', 'A2', 'B1', 'C3']);
    const nearest = new Collect();
    const query = { surfaceLoc: { near: { point: [-97.5, 35.5], maxDistance: 50_000 } } };
    await runExport({ store, type: 'Well', query, sort: { sortBy: 'surfaceLoc' }, output: nearest, pageSize: 1 });
    expect(lines(nearest).map((d) => d.fracStages)).toEqual([2, 7, 1]);
    store.close();
  });

  it('export waits for a slow output (backpressure)', async () => {
    const store = DataStore.open();
    await store.insert('Well', Array.from({ length: 50 }, (_, i) => ({ pwi: `P${i}` })));
    const out = new PassThrough({ highWaterMark: 16 });
    const chunks: string[] = [];
    const done = runExport({ store, type: 'Well', output: out, pageSize: 5 });
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    expect((await done).exported).toBe(50);
    expect(chunks.join('').trim().split('\n')).toHaveLength(50);
    store.close();
  });
});

describe('sampleData', () => {
  it('is deterministic per seed and valid for the store', async () => {
    const a = sampleData(7, 5, 10);
    expect(sampleData(7, 5, 10)).toEqual(a);
    expect(sampleData(8, 5, 10)).not.toEqual(a);
    expect(a.Well).toHaveLength(5);
    expect(a.DailyProduction).toHaveLength(50);
    const store = DataStore.open();
    expect((await store.insert('Well', a.Well)).success).toBe(true);
    expect((await store.insert('DailyProduction', a.DailyProduction)).success).toBe(true);
    const inBox = await store.query('Well', { surfaceLoc: { bounds: [-106, 27, -96, 49] } });
    expect(inBox.total).toBe(5);
    store.close();
  });
});

describe('the built CLI', () => {
  let cli: Awaited<ReturnType<typeof buildCli>>;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'consolidata-cli-'));
    cli = await buildCli();
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    cli?.remove();
  });

  const node = (args: string[], cwd = dir) => runCli(cli.path, args, cwd);

  it('--version and -V print the package version and exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await node([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it('import reports the bad lines and exits 2; export prints the documents as NDJSON', async () => {
    const file = join(dir, 'wells.ndjson');
    writeFileSync(file, NDJSON);
    const db = join(dir, 'cli.db');
    const imp = await node(['import', 'Well', file, '--db', db, '--batch', '2', '--create']);
    expect(imp.code).toBe(2);
    expect(imp.stderr).toMatch(/line 3: malformed JSON/);
    expect(imp.stderr).toMatch(/line 4: fracStages/);
    expect(imp.stderr).toMatch(/3 imported, 4 skipped, 7 read/);
    const exp = await node(['export', 'Well', '--db', db, '--query', '{"pwi":{"in":["A1","A5"]}}']);
    expect(exp.code).toBe(0);
    expect(exp.stdout.trim().split('\n').map((l) => JSON.parse(l).pwi)).toEqual(['A1', 'A5']);
    const abort = await node(['import', 'Well', file, '--db', join(dir, 'abort.db'), '--create', '--abort-on-error']);
    expect(abort.code).toBe(1);
    expect(abort.stderr).toMatch(/line 3: malformed JSON/);
    const sorted = await node(['export', 'Well', '--db', db, '--query', '{"pwi":{"in":["A1","A5"]}}', '--sort-by', 'pwi,fracStages', '--sort-order', '-1,1']);
    expect(sorted.code).toBe(0);
    expect(sorted.stdout.trim().split('\n').map((l) => JSON.parse(l).pwi)).toEqual(['A5', 'A1']);
    const badSort = await node(['export', 'Well', '--db', db, '--sort-by', 'pwi', '--sort-order', 'desc']);
    expect(badSort.code).toBe(1);
    expect(badSort.stderr).toMatch(/options\.sortOrder: expected 1, -1 or 0/);
    const bad = await node(['export', 'Well', '--db', db, '--query', '{oops']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--query: malformed JSON/);
  });

  it('with stderr not a terminal, bad lines stream in line order without a bar, then the summary', async () => {
    const file = join(dir, 'order.ndjson');
    writeFileSync(file, NDJSON);
    const r = await node(['import', 'Well', file, '--db', join(dir, 'order.db'), '--create', '--batch', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/\x1b|importing/);
    expect(r.stderr.trim().split('\n').map((l) => l.replace(/: .*/, ''))).toEqual(['line 3', 'line 4', 'line 6', 'line 7', 'consolidata import done']);
  });

  it('import and export on a database file that does not exist exit 1 and create nothing; import --create makes it', async () => {
    const empty = mkdtempSync(join(dir, 'missing-'));
    const file = join(dir, 'one.ndjson');
    writeFileSync(file, '{"pwi":"M1"}\n');
    const imp = await node(['import', 'Well', file, '--db', 'nope.db'], empty);
    expect(imp.code).toBe(1);
    expect(imp.stderr).toBe('consolidata: nope.db: no such database file (pass --create to create it)\n');
    const exp = await node(['export', 'Well', '--db', 'nope.db'], empty);
    expect(exp.code).toBe(1);
    expect(exp.stderr).toBe('consolidata: nope.db: no such database file (check --db)\n');
    expect(exp.stdout).toBe('');
    expect(readdirSync(empty)).toEqual([]);
    const created = await node(['import', 'Well', file, '--db', 'new.db', '--create'], empty);
    expect(created.code).toBe(0);
    expect((await node(['export', 'Well', '--db', 'new.db'], empty)).stdout).toMatch(/"pwi":"M1"/);
  });

  it('import --upsert twice leaves the same documents (exit 0); a plain import of the same file skips them as duplicates (exit 2)', async () => {
    const file = join(dir, 'ids.ndjson');
    writeFileSync(file, ['{"id":"w-1","pwi":"W1"}', '{"id":"w-2","pwi":"W2"}', '{"id":"w-3","pwi":"W3"}'].join('\n'));
    const db = join(dir, 'upsert.db');
    for (const create of [['--create'], []]) {
      const r = await node(['import', 'Well', file, '--db', db, '--upsert', ...create]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('consolidata import done: 3 imported, 0 skipped, 3 read\n');
    }
    const again = await node(['import', 'Well', file, '--db', db]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^line 1: a Well with .* already exists\nline 2: .*\nline 3: .*\nconsolidata import done: 0 imported, 3 skipped, 3 read\n$/);
    const exp = await node(['export', 'Well', '--db', db]);
    expect(exp.stdout.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['w-1', 'w-2', 'w-3']);
  });

  it('export, import into a new database, export again: byte for byte the same; import --upsert of it changes nothing', async () => {
    const source = join(dir, 'round-source.db');
    const store = DataStore.open(source, { history: ['Well'], changeFeed: true });
    await store.withUser('alice').insert('Well', [
      { pwi: 'R1', basinName: 'Permian', surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] }, extra: { a: [1, { b: 2.5 }], note: 'é' } },
      { pwi: 'R2', spudDate: '5/1/2024' },
    ]);
    await store.update('Well', { pwi: 'R2' }, { statusCurrent: 'Producing' });
    await store.close();
    const exported = await node(['export', 'Well', '--db', source]);
    expect(exported.stdout.trim().split('\n')).toHaveLength(2);
    const file = join(dir, 'round.ndjson');
    writeFileSync(file, exported.stdout);
    for (const upsert of [[], ['--upsert']]) {
      const target = join(dir, `round-target${upsert.length}.db`);
      expect((await node(['import', 'Well', file, '--db', target, '--create', ...upsert])).code).toBe(0);
      expect((await node(['export', 'Well', '--db', target])).stdout).toBe(exported.stdout);
    }
    // Into the database it came from: every document is unchanged, so nothing is written.
    const again = await node(['import', 'Well', file, '--db', source, '--upsert']);
    expect([again.code, again.stderr]).toEqual([0, 'consolidata import done: 2 imported, 0 skipped, 2 read\n']);
    expect((await node(['export', 'Well', '--db', source])).stdout).toBe(exported.stdout);
    const check = DataStore.open(source);
    expect((await check.query('VersionDocument', {})).data.map((v) => v.event)).toEqual(['insert', 'insert', 'update']);
    expect((await check.dynamic.changes(undefined, { since: 0 })).data.map((e) => e.op)).toEqual(['insert', 'insert', 'update']);
    await check.close();
  });

  it('import stops on SIGINT after the batch in flight, prints what was committed and exits 130', async () => {
    const file = join(dir, 'big.ndjson');
    const total = 100_000;
    writeFileSync(file, Array.from({ length: total }, (_, i) => `{"pwi":"S${i}","basinName":"Permian","fracStages":${i % 40}}`).join('\n'));
    const db = join(dir, 'sigint.db');
    const probe = DataStore.open(db);
    try {
      const child = spawn(process.execPath, [cli.path, 'import', 'Well', file, '--db', db, '--batch', '200'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      // Some batches are in: interrupt.
      const deadline = Date.now() + 20_000;
      while ((await probe.query('Well', {}, { limit: 1 })).total < 1000) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no batch committed in time; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      const m = /consolidata import interrupted: (\d+) imported, 0 skipped, (\d+) read\n$/.exec(stderr);
      expect(m, stderr).not.toBeNull();
      const imported = Number(m![1]);
      expect(Number(m![2])).toBe(imported);
      expect(imported).toBeGreaterThanOrEqual(1000);
      expect(imported).toBeLessThan(total);
      expect((await probe.query('Well', {}, { limit: 1 })).total).toBe(imported);
    } finally {
      probe.close();
    }
  });

  it('serve creates a missing file, prints its URL, answers, and shuts down on SIGTERM', async () => {
    const db = join(dir, 'serve.db');
    expect(existsSync(db)).toBe(false);
    const served = await startServe(cli.path, ['--db', db, '--port', '0'], dir);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    expect(existsSync(db)).toBe(true);
    const res = await fetch(`${served.url}/data/types`);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toContain('Well');
    expect(await served.stop()).toBe(0);
  });

  it('serve --history --change-feed --activity-log --soft-delete turns the journal on, served at /data/changes', async () => {
    const db = join(dir, 'journal.db');
    const served = await startServe(cli.path, ['--db', db, '--port', '0', '--history', 'Well', '--change-feed', '--activity-log', '--soft-delete', 'all'], dir);
    const post = async (path: string, method: string, body: unknown) =>
      (await (await fetch(`${served.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as {
        data: Record<string, unknown>[];
        count: number;
        insertedIds: string[];
      };
    const ins = await post('/data', 'POST', { type: 'Well', data: [{ pwi: 'W1' }] });
    expect((await post('/data', 'DELETE', { type: 'Well', query: { pwi: 'W1' } })).count).toBe(1);
    const feed = (await (await fetch(`${served.url}/data/changes?type=Well&since=0&wait=0`)).json()) as { data: { op: string; id: string }[] };
    expect(feed.data.map((e) => [e.op, e.id])).toEqual([
      ['insert', ins.insertedIds[0]],
      ['delete', ins.insertedIds[0]],
    ]);
    expect((await post('/data/query', 'POST', { type: 'VersionDocument', query: { oid: ins.insertedIds[0] } })).count).toBe(2);
    expect((await post('/data/query', 'POST', { type: 'ActivityLog', query: {} })).count).toBe(2);
    // Soft: the Well is still there for includeDeleted.
    expect((await post('/data/query', 'POST', { type: 'Well', query: {}, options: { includeDeleted: true } })).count).toBe(1);
    expect(await served.stop()).toBe(0);
  });

  it('serve --feed-buffer-bytes takes a positive byte count', async () => {
    const zero = await node(['serve', '--db', join(dir, 'feedbuf.db'), '--port', '0', '--change-feed', '--feed-buffer-bytes', '0']);
    expect(zero.code).toBe(1);
    expect(zero.stderr).toMatch(/--feed-buffer-bytes must be an integer from 1/);
    expect(existsSync(join(dir, 'feedbuf.db'))).toBe(false);
  });

  it('serve on a file in a directory that does not exist says so, naming the path, and exits 1', async () => {
    const r = await node(['serve', '--db', 'no/such/dir/x.db', '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('consolidata: no/such/dir/x.db: cannot open: the directory no/such/dir does not exist\n');
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it('serve --mmap-size takes a non-negative byte count, and a PostgreSQL database refuses it before connecting', async () => {
    const neg = await node(['serve', '--db', join(dir, 'mmap.db'), '--port', '0', '--mmap-size', '-1']);
    expect(neg.code).toBe(1);
    expect(neg.stderr).toMatch(/--mmap-size must be an integer from 0/);
    expect(existsSync(join(dir, 'mmap.db'))).toBe(false);
    // Port 1 on loopback: were it to connect, the message would be a connection error instead.
    const pg = await node(['serve', '--db', 'postgres://nobody@127.0.0.1:1/none', '--port', '0', '--mmap-size', '0']);
    expect(pg.code).toBe(1);
    expect(pg.stderr).toBe('consolidata: --mmap-size maps a SQLite file; a PostgreSQL database has no such setting\n');
  });

  it('serve --sample loads the sample once and says how many documents, as the README does', async () => {
    const db = join(dir, 'sample.db');
    const { Well: wells, DailyProduction: daily } = sampleData();
    const first = await startServe(cli.path, ['--db', db, '--port', '0', '--sample'], dir);
    expect(await first.stop()).toBe(0);
    const summary = sampleSummary([{ type: 'Well', count: wells.length }, { type: 'DailyProduction', count: daily.length }]);
    expect(summary).toBe('87,840 sample documents (240 Well, 87,600 DailyProduction)');
    expect(first.output()).toContain(`loaded ${summary} into ${db}\n`);
    const second = await startServe(cli.path, ['--db', db, '--port', '0', '--sample'], dir);
    const total = async (type: string) => {
      const res = await fetch(`${second.url}/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type, options: { limit: 1 } }) });
      return ((await res.json()) as { total: number }).total;
    };
    expect([await total('Well'), await total('DailyProduction')]).toEqual([wells.length, daily.length]);
    expect(await second.stop()).toBe(0);
    expect(second.output()).not.toMatch(/loaded/);
  });
});
