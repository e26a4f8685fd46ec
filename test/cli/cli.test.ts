import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { runExport } from '../../src/cli/export.js';
import { importExitCode, runImport } from '../../src/cli/import.js';
import { sampleData } from '../../src/sample.js';

const run = promisify(execFile);

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString('utf8');
    done();
  }
}

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
  const { id, createdAt, createdBy, updatedAt, updatedBy, modifiedTimestamp, schemaVersion, ...rest } = d;
  return rest;
};

describe('runImport / runExport', () => {
  it('imports NDJSON, reports and skips bad lines by number, and exports the same documents back', async () => {
    const store = DataStore.open();
    const errors = new Collect();
    const summary = await runImport({ store, type: 'Well', input: Readable.from([NDJSON]), errors, batch: 2 });
    expect(summary).toEqual({ read: 7, imported: 3, skipped: 4, aborted: false });
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
    expect(again).toEqual({ read: 3, imported: 3, skipped: 0, aborted: false });
    expect(importExitCode(again)).toBe(0);
    expect((await copy.query('Well', {})).data).toEqual((await store.query('Well', {})).data.map((d) => ({ ...d, updatedAt: expect.any(String), modifiedTimestamp: expect.any(Number) })));
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
    expect(summary).toEqual({ read: 4, imported: 2, skipped: 2, aborted: false });
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
    expect(a.wells).toHaveLength(5);
    expect(a.daily).toHaveLength(50);
    const store = DataStore.open();
    expect((await store.insert('Well', a.wells)).success).toBe(true);
    expect((await store.insert('DailyProduction', a.daily)).success).toBe(true);
    const inBox = await store.query('Well', { surfaceLoc: { bounds: [-106, 27, -96, 49] } });
    expect(inBox.total).toBe(5);
    store.close();
  });
});

describe('the built CLI', () => {
  const root = resolve(import.meta.dirname, '../..');
  // Built inside node_modules so the bundle resolves its dependencies, and apart from dist/.
  const outDir = join(root, 'node_modules/.cache/consolidata-cli-test');
  const cli = join(outDir, 'main.js');
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'consolidata-cli-'));
    await run('npx', ['tsup', 'src/cli/main.ts', '--no-config', '--format', 'esm', '--target', 'node20', '--out-dir', outDir, '--silent'], { cwd: root });
    expect(existsSync(cli)).toBe(true);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function node(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolvePromise) => {
      execFile('node', [cli, ...args], { cwd: dir }, (err, stdout, stderr) => {
        resolvePromise({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  it('import reports the bad lines and exits 2; export prints the documents as NDJSON', async () => {
    const file = join(dir, 'wells.ndjson');
    writeFileSync(file, NDJSON);
    const db = join(dir, 'cli.db');
    const imp = await node(['import', 'Well', file, '--db', db, '--batch', '2']);
    expect(imp.code).toBe(2);
    expect(imp.stderr).toMatch(/line 3: malformed JSON/);
    expect(imp.stderr).toMatch(/line 4: fracStages/);
    expect(imp.stderr).toMatch(/3 imported, 4 skipped, 7 read/);
    const exp = await node(['export', 'Well', '--db', db, '--query', '{"pwi":{"in":["A1","A5"]}}']);
    expect(exp.code).toBe(0);
    expect(exp.stdout.trim().split('\n').map((l) => JSON.parse(l).pwi)).toEqual(['A1', 'A5']);
    const abort = await node(['import', 'Well', file, '--db', join(dir, 'abort.db'), '--abort-on-error']);
    expect(abort.code).toBe(1);
    expect(abort.stderr).toMatch(/line 3: malformed JSON/);
    const bad = await node(['export', 'Well', '--db', db, '--query', '{oops']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--query: malformed JSON/);
  });

  it('serve prints its URL, answers, and shuts down on SIGTERM', async () => {
    const db = join(dir, 'serve.db');
    const child = spawn('node', [cli, 'serve', '--db', db, '--port', '0'], { cwd: dir });
    const url = await new Promise<string>((resolveUrl, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /at (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(out);
        if (m) resolveUrl(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`serve exited early with ${code}`)));
    });
    const res = await fetch(`${url}/data/types`);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toContain('Well');
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
