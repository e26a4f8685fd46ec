import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { importCommand, progressPayload } from '../../src/cli/commands.js';
import { importExitCode, runImport } from '../../src/cli/import.js';
import { buildCli, runCli } from './build.js';
import { FakeTty, screen } from './terminal.js';
import { Collect, interruptedImport, ndjson } from '../helpers/import.js';

describe('import --upsert', () => {
  const docs = [
    { id: 'u-1', pwi: 'U1', basinName: 'Permian' },
    { id: 'u-2', pwi: 'U2' },
    { id: 'u-3', pwi: 'U3', fracStages: 12 },
  ];

  it('replaces by id: importing the same file twice leaves the same documents, exit 0 both times', async () => {
    const store = DataStore.open();
    for (let run = 0; run < 2; run++) {
      const errors = new Collect();
      const summary = await runImport({ store, type: 'Well', input: Readable.from([ndjson(docs)]), errors, batch: 2, upsert: true });
      expect(summary).toEqual({ read: 3, imported: 3, skipped: 0, aborted: false, interrupted: false });
      expect(importExitCode(summary)).toBe(0);
      expect(errors.text).toBe('');
    }
    const all = await store.query('Well', {});
    expect(all.data.map((d) => d.id)).toEqual(['u-1', 'u-2', 'u-3']);
    // A replaced document takes the file's content whole.
    await runImport({ store, type: 'Well', input: Readable.from([ndjson([{ id: 'u-1', pwi: 'U1', basinName: 'Delaware' }])]), errors: new Collect(), upsert: true });
    expect((await store.query('Well', { id: 'u-1' })).data[0]).toMatchObject({ pwi: 'U1', basinName: 'Delaware' });
    store.close();
  });

  it('without --upsert the second run skips every line as a duplicate key (DUPLICATE_KEY) and exits 2', async () => {
    const store = DataStore.open();
    await runImport({ store, type: 'Well', input: Readable.from([ndjson(docs)]), errors: new Collect() });
    const errors = new Collect();
    const summary = await runImport({ store, type: 'Well', input: Readable.from([ndjson(docs)]), errors });
    expect(summary).toEqual({ read: 3, imported: 0, skipped: 3, aborted: false, interrupted: false });
    expect(importExitCode(summary)).toBe(2);
    const lines = errors.text.trim().split('\n');
    expect(lines).toHaveLength(3);
    lines.forEach((l, i) => expect(l).toMatch(new RegExp(`^line ${i + 1}: a Well with .+ already exists$`)));
    expect((await store.query('Well', {})).total).toBe(3);
    store.close();
  });

  it('documents without id are inserted, so their unique keys collide on a second run (reported in line order, exit 2)', async () => {
    const store = DataStore.open();
    const noIds = [{ pwi: 'N1' }, { pwi: 'N2', fracStages: 'x' }, { pwi: 'N3' }, { pwi: 'N4' }];
    const first = await runImport({ store, type: 'Well', input: Readable.from([ndjson(noIds)]), errors: new Collect(), batch: 10, upsert: true });
    expect(first).toMatchObject({ imported: 3, skipped: 1 });
    const errors = new Collect();
    const second = await runImport({ store, type: 'Well', input: Readable.from([ndjson(noIds)]), errors, batch: 10, upsert: true });
    expect(second).toEqual({ read: 4, imported: 0, skipped: 4, aborted: false, interrupted: false });
    expect(importExitCode(second)).toBe(2);
    expect(errors.text.trim().split('\n').map((l) => l.replace(/: .*/, ''))).toEqual(['line 1', 'line 2', 'line 3', 'line 4']);
    expect(errors.text).toMatch(/\nline 2: fracStages/);
    expect(errors.text).toMatch(/line 1: a Well with pwi "N1" already exists/);
    expect((await store.query('Well', {})).total).toBe(3);
    store.close();
  });

  it('with --abort-on-error the first bad line stops the run and its batch is not written (exit 1)', async () => {
    const store = DataStore.open();
    await store.insert('Well', [{ id: 'x-0', pwi: 'TAKEN' }]);
    const input = ndjson([{ id: 'a-1', pwi: 'A1' }, { id: 'a-2', pwi: 'A2' }, { id: 'a-3', pwi: 'A3' }, { id: 'a-4', pwi: 'TAKEN' }, { id: 'a-5', pwi: 'A5' }]);
    const errors = new Collect();
    const summary = await runImport({ store, type: 'Well', input: Readable.from([input]), errors, batch: 2, upsert: true, abortOnError: true });
    expect(summary).toMatchObject({ aborted: true, imported: 2 });
    expect(importExitCode(summary)).toBe(1);
    expect(errors.text).toMatch(/^line 4: a Well with pwi "TAKEN" already exists\n$/);
    expect((await store.query('Well', {})).data.map((d) => d.id)).toEqual(['x-0', 'a-1', 'a-2']);
    store.close();
  });
});

describe('import --abort-on-error', () => {
  it('a malformed line stops the run; the summary counts the batches already written (exit 1)', async () => {
    const store = DataStore.open();
    const errors = new Collect();
    const input = ndjson([{ pwi: 'E1' }, { pwi: 'E2' }, { pwi: 'E3' }, { pwi: 'E4' }]) + '{oops\n' + ndjson([{ pwi: 'E6' }]);
    const summary = await runImport({ store, type: 'Well', input: Readable.from([input]), errors, batch: 2, abortOnError: true });
    expect(summary).toEqual({ read: 5, imported: 4, skipped: 1, aborted: true, interrupted: false });
    expect(importExitCode(summary)).toBe(1);
    expect(errors.text).toMatch(/^line 5: malformed JSON/);
    expect((await store.query('Well', {})).total).toBe(4);
    store.close();
  });
});

describe('import interrupted (Ctrl-C)', () => {
  it('stops reading once the signal is aborted, writes what was read and says so (exit 130)', async () => {
    const store = DataStore.open();
    const summary = await interruptedImport(store, 5000, 3);
    expect(summary.interrupted).toBe(true);
    expect(importExitCode(summary)).toBe(130);
    expect(summary.imported).toBe(300);
    expect(summary.read).toBe(300);
    expect((await store.query('Well', {})).total).toBe(300);
    store.close();
  });
});

describe('import --atomic', () => {
  it('writes the whole file in one transaction; a bad line anywhere writes nothing (exit 1)', async () => {
    const store = DataStore.open();
    const good = Array.from({ length: 250 }, (_, i) => ({ pwi: `T${i}` }));
    const errors = new Collect();
    const bad = await runImport({ store, type: 'Well', input: Readable.from([ndjson([...good, { pwi: 'T-bad', spudDate: 'soon' }])]), errors, batch: 100, atomic: true });
    expect(bad).toMatchObject({ read: 251, imported: 0, skipped: 1, aborted: true });
    expect(importExitCode(bad)).toBe(1);
    expect(errors.text).toMatch(/^line 251: spudDate: expected a date/);
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(0);
    const ok = await runImport({ store, type: 'Well', input: Readable.from([ndjson(good)]), errors: new Collect(), batch: 100, atomic: true });
    expect(ok).toEqual({ read: 250, imported: 250, skipped: 0, aborted: false, interrupted: false });
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(250);
    store.close();
  });

  it('interrupted, writes nothing (exit 130); refuses to combine with --upsert', async () => {
    const store = DataStore.open();
    const summary = await interruptedImport(store, 1000, 2, true);
    expect(summary).toMatchObject({ interrupted: true, imported: 0, aborted: false });
    expect(importExitCode(summary)).toBe(130);
    expect((await store.query('Well', {}, { limit: 1 })).total).toBe(0);
    await expect(runImport({ store, type: 'Well', input: Readable.from(['{}']), errors: new Collect(), atomic: true, upsert: true })).rejects.toThrow(RangeError);
    store.close();
  });
});

describe('import --atomic through the built CLI', () => {
  let cli: Awaited<ReturnType<typeof buildCli>>;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'consolidata-atomic-'));
    cli = await buildCli();
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    cli?.remove();
  });

  /** A file of `n` good Well lines with `bad` lines put in at their 1-based line numbers. */
  const file = (name: string, n: number, bad: Record<number, string>) => {
    const lines: string[] = [];
    for (let i = 0; lines.length < n + Object.keys(bad).length; i++) lines.push(bad[lines.length + 1] ?? JSON.stringify({ pwi: `G${i}` }));
    const path = join(dir, name);
    writeFileSync(path, lines.join('\n') + '\n');
    return path;
  };
  const wells = (db: string) => {
    const store = DataStore.open(db);
    try {
      return store.dynamic.query('Well', {}, { limit: 1 });
    } finally {
      store.close();
    }
  };

  it.each([
    ['malformed JSON', '{"pwi":"oops"', /^line 150: malformed JSON/],
    ['not an object', '[1,2]', /^line 150: expected a JSON object$/],
    ['a document the store refuses', '{"pwi":"R","fracStages":"x"}', /^line 150: fracStages: expected an integer/],
  ])('the first bad line (%s) ends the run, names its line, writes nothing and exits 1', async (_kind, line, message) => {
    const db = join(dir, `atomic-${_kind.replace(/\W/g, '')}.db`);
    const path = file(`${_kind.replace(/\W/g, '')}.ndjson`, 200, { 150: line, 180: '[1,2]' });
    const r = await runCli(cli.path, ['import', 'Well', path, '--db', db, '--create', '--atomic', '--batch', '100'], dir);
    expect(r.code).toBe(1);
    const out = r.stderr.trim().split('\n');
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(message);
    expect(out[1]).toMatch(/^consolidata import aborted: 0 imported, 1 skipped, 150 read$/);
    expect((await wells(db)).total).toBe(0);
  });

  it('stops at the first of several bad lines of a large file, not at the first the store refuses', async () => {
    const db = join(dir, 'atomic-large.db');
    const path = file('large.ndjson', 5004, { 102: '{"pwi":', 1003: '[1,2]', 2004: '{"pwi":"R","fracStages":"x"}' });
    const r = await runCli(cli.path, ['import', 'Well', path, '--db', db, '--create', '--atomic'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^line 102: malformed JSON [^\n]*\nconsolidata import aborted: 0 imported, 1 skipped, 102 read\n$/);
    expect((await wells(db)).total).toBe(0);
  });
});

describe('import on a terminal', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'consolidata-tty-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints bad lines above the progress bar, each on its own line, in line order; the summary comes last', async () => {
    const db = join(dir, 'tty.db');
    DataStore.open(db).close();
    // Enough batches that the bar redraws between bad lines.
    const text: string[] = [];
    const expected: string[] = [];
    for (let i = 1; i <= 20_000; i++) {
      if (i % 2500 === 0) {
        text.push(`{"pwi":"T${i}"`);
        expected.push(`line ${i}: malformed JSON`);
      } else if (i % 2500 === 1250) {
        text.push(`{"pwi":"T${i}","fracStages":"x"}`);
        expected.push(`line ${i}: fracStages: expected an integer`);
      } else text.push(`{"pwi":"T${i}"}`);
    }
    const file = join(dir, 'tty.ndjson');
    writeFileSync(file, text.join('\n'));
    const tty = new FakeTty();
    const code = await importCommand({ type: 'Well', file, db, batch: 250, stderr: tty });
    expect(code).toBe(2);
    const shown = screen(tty.text);
    // The bar was drawn (this is the terminal path) and redrawn as the import went.
    expect(tty.text.split('importing ').length - 1).toBeGreaterThan(1);
    const bad = shown.filter((l) => /line \d+:/.test(l));
    expect(bad).toHaveLength(expected.length);
    // Each on its own line: starting with "line N:", no bar before or after it.
    bad.forEach((l, i) => {
      expect(l.startsWith(expected[i]!), `screen line ${JSON.stringify(l)} should start with ${JSON.stringify(expected[i])}`).toBe(true);
      expect(l).not.toMatch(/importing|█|░/);
    });
    const first = shown.indexOf(bad[0]!);
    expect(shown.slice(first, first + bad.length)).toEqual(bad);
    // Documents, not bytes: all 20,000 lines were read, and none is left.
    expect(shown.at(-2)).toMatch(/^importing \S+ 100% \| 20,000 documents \| [\d,]+ documents\/s \| ETA 0s$/);
    expect(shown.at(-1)).toBe('consolidata import done: 19984 imported, 16 skipped, 20000 read');
  });

  it('the bar counts documents and their rate, and tells the time left from the fraction of bytes read', () => {
    // Half the bytes in 4 s: 4 s more.
    expect(progressPayload(5_000_000, 20_000, 10_000_000, 4)).toEqual({ documents: '20,000', rate: '5,000', eta_left: '4s' });
    // A tenth in 20 s: 180 s more; a hundredth in 50 s: 4,950 s more.
    expect(progressPayload(1_000, 37, 10_000, 20).eta_left).toBe('3m00s');
    expect(progressPayload(1, 1, 100, 50).eta_left).toBe('1h22m');
    // Nothing read yet: no rate, no estimate.
    expect(progressPayload(0, 0, 10_000, 0)).toEqual({ documents: '0', rate: '0', eta_left: '…' });
  });

  it('without a terminal there is no bar: bad lines stream as they come, then the summary', async () => {
    const db = join(dir, 'plain.db');
    DataStore.open(db).close();
    const file = join(dir, 'plain.ndjson');
    writeFileSync(file, ['{"pwi":"P1"}', '{oops', '{"pwi":"P1"}', '7', '{"pwi":"P2"}'].join('\n'));
    const out = new Collect();
    const code = await importCommand({ type: 'Well', file, db, batch: 1, stderr: out });
    expect(code).toBe(2);
    expect(out.text).not.toMatch(/\x1b|importing/);
    expect(out.text.trim().split('\n').map((l) => l.replace(/^(line \d+|consolidata import done): .*/, '$1'))).toEqual([
      'line 2',
      'line 3',
      'line 4',
      'consolidata import done',
    ]);
  });
});
