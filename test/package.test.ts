/**
 * The published package as a consumer gets it. Packs once (`npm pack`) a copy of the sources without dist/, as a fresh
 * clone or a git install has them (npm's `prepare` builds), and checks that one tarball:
 *  - attw (@arethetypeswrong/cli, what `attw --pack` runs on the tarball it packs): every entry point's types resolve,
 *    and match the JS, in every resolution mode (node10, node16 from CJS and from ESM, bundler);
 *  - publint: package.json fields point at published files of the right format, no errors or warnings;
 *  - a strict TypeScript consumer with `skipLibCheck: false` and only @types/node installed compiles code importing
 *    `consolidata` and `consolidata/http` from an ES module and from a CommonJS module (no @types/better-sqlite3,
 *    re2js, @turf/* or cli-progress types needed);
 *  - at runtime, in an app with the tarball installed: every entry of a format shares one copy of the store (one
 *    DataStore class, one DataStoreError), and a DataStoreError thrown by the CJS build is recognised by the ESM build
 *    and vice versa.
 * CI runs attw and publint through this file (.ci/run → npm test).
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStoreError, unwrap, type Envelope } from '../src/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const nodeModules = join(root, 'node_modules');

/** Runs a command to completion; throws with its output unless it exits 0 (or `allowFailure`). */
function run(command: string, args: string[], options: SpawnSyncOptions & { allowFailure?: boolean } = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw result.error;
  if (result.status !== 0 && !options.allowFailure) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}\n${String(result.stdout ?? '')}\n${String(result.stderr ?? '')}`);
  }
  return { status: result.status, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') };
}

let work: string;
let tarball: string;
/** The tarball's files, as `npm pack --json` lists them. */
let packedFiles: { path: string; size: number }[];
/** What `npm pack` printed, the build's output included. */
let packLog: string;
/** An app outside the repo with the tarball installed as node_modules/consolidata and its dependencies linked from ours. */
let installed: string;

/** Installs the tarball in a new app under `work`: unpacked, with the package's dependencies linked from the repo's. */
function installTarball(): string {
  const dir = join(work, 'app');
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  run('tar', ['-xzf', tarball, '-C', modules]);
  renameSync(join(modules, 'package'), join(modules, 'consolidata'));
  const pkg = JSON.parse(readFileSync(join(modules, 'consolidata', 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  for (const name of Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies })) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(nodeModules, name), join(modules, name), 'dir');
  }
  return dir;
}

/** What a fresh clone holds that the build and the tarball read (no dist/: that is the `prepare` script's to make). */
const cloneSources = ['package.json', 'tsconfig.json', 'tsup.config.ts', 'scripts', 'src', 'README.md', 'LICENSE'];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'consolidata-package-'));
  // Packed as a fresh clone or a git install packs: npm runs `prepare` (the build), then packs what it made.
  const clone = join(work, 'clone');
  for (const source of cloneSources) cpSync(join(root, source), join(clone, source), { recursive: true });
  symlinkSync(nodeModules, join(clone, 'node_modules'), 'dir');
  const pack = run('npm', ['pack', '--json', '--pack-destination', work], { cwd: clone });
  packLog = pack.stdout + pack.stderr;
  const packed = JSON.parse(pack.stdout) as { filename: string; files: typeof packedFiles }[];
  tarball = join(work, packed[0]!.filename);
  packedFiles = packed[0]!.files;
  installed = installTarball();
}, 240_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('a clone without dist/ packs the built package: every entry in both formats, its declarations, the CLI', () => {
    const paths = packedFiles.map((f) => f.path);
    const entries = ['index', 'http', 'testing', 'postgres'].flatMap((name) => ['js', 'cjs', 'd.ts', 'd.cts'].map((ext) => `dist/${name}.${ext}`));
    const explorer = ['index.html', 'app.js', 'app.css', 'counties-10m.json'].map((f) => `dist/explorer/${f}`);
    expect(paths).toEqual(expect.arrayContaining([...entries, ...explorer, 'dist/cli.js', 'dist/pool-worker.js', 'package.json', 'README.md', 'LICENSE']));
  });

  it('the build before a script (prepare, start, bench…) prints nothing when it succeeds', () => {
    // tsup's log lines: "CLI tsup v8…", "ESM dist/index.js 1 KB", "CJS ⚡️ Build success".
    expect(packLog).not.toMatch(/\b(?:CLI|ESM|CJS)\s/);
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const buildFirst = Object.entries(scripts).filter(([name, line]) => name !== 'build' && /\btsup\b|prepare\.mjs/.test(line));
    expect(buildFirst.map(([name]) => name)).toEqual(expect.arrayContaining(['prepare', 'start', 'bench', 'load']));
    for (const [name, line] of buildFirst) expect(line, `npm run ${name}`).toMatch(/^node scripts\/prepare\.mjs(?: && |$)/);
  });

  it('ships no source maps, and no code points at one', () => {
    expect(packedFiles.filter((f) => f.path.endsWith('.map')).map((f) => f.path)).toEqual([]);
    const code = packedFiles.filter((f) => /\.c?js$/.test(f.path)).map((f) => f.path);
    expect(code).toContain('dist/index.cjs');
    const unpacked = join(installed, 'node_modules', 'consolidata');
    expect(code.filter((file) => readFileSync(join(unpacked, file), 'utf8').includes('sourceMappingURL'))).toEqual([]);
  });

  it('attw: types resolve in every resolution mode, for every entry point', () => {
    // attw exits before a piped stdout drains (its JSON is cut at 64 KiB): write it to a file.
    const reportFile = join(work, 'attw.json');
    const fd = openSync(reportFile, 'w');
    const attw = join(nodeModules, '@arethetypeswrong/cli/dist/index.js');
    let status: number | null;
    try {
      status = run(process.execPath, [attw, tarball, '--format', 'json'], { stdio: ['ignore', fd, 'pipe'], allowFailure: true }).status;
    } finally {
      closeSync(fd);
    }
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as {
      analysis: {
        types: unknown;
        entrypoints: Record<string, { resolutions: Record<string, unknown> }>;
        problems?: { kind: string; entrypoint?: string; resolutionKind?: string }[];
      };
    };
    const { analysis } = report;
    expect(analysis.types, 'attw found no types in the package').toBeTruthy();
    expect(Object.keys(analysis.entrypoints)).toEqual(expect.arrayContaining(['.', './http']));
    for (const [entry, { resolutions }] of Object.entries(analysis.entrypoints)) {
      expect(Object.keys(resolutions).sort(), `resolution modes checked for ${entry}`).toEqual(['bundler', 'node10', 'node16-cjs', 'node16-esm']);
    }
    const problems = (analysis.problems ?? []).map((p) => `${p.kind} for "${p.entrypoint ?? '*'}" in ${p.resolutionKind ?? 'every mode'}`);
    expect(problems, `attw problems (see https://github.com/arethetypeswrong/arethetypeswrong.github.io/tree/main/docs/problems): ${problems.join('; ')}`).toEqual([]);
    expect(status, 'attw exit status').toBe(0);
  });

  it('publint: no errors, no warnings', async () => {
    const bytes = readFileSync(tarball);
    const tarballBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const { messages, pkg } = await publint({ pack: { tarball: tarballBuffer }, level: 'suggestion' });
    const shown = (type: string) => messages.filter((m) => m.type === type).map((m) => `${m.code}: ${formatMessage(m, pkg, { color: false })}`);
    expect(shown('error'), 'publint errors').toEqual([]);
    expect(shown('warning'), 'publint warnings').toEqual([]);
  });

  it('declarations import nothing a consumer may lack (only their own files and node: builtins)', () => {
    const dir = join(work, 'unpacked');
    mkdirSync(dir);
    run('tar', ['-xzf', tarball, '-C', dir]);
    const dist = join(dir, 'package', 'dist');
    const leaks: string[] = [];
    for (const file of readdirSync(dist).filter((f) => /\.d\.c?ts$/.test(f))) {
      const text = readFileSync(join(dist, file), 'utf8');
      for (const [, spec] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g)) {
        if (!spec!.startsWith('./') && !spec!.startsWith('node:')) leaks.push(`${file}: '${spec}'`);
      }
      for (const [, types] of text.matchAll(/\/\/\/\s*<reference\s+types="([^"]+)"/g)) {
        if (types !== 'node') leaks.push(`${file}: reference types="${types}"`);
      }
    }
    expect(leaks, 'type packages the declarations need (inline them in tsup.config.ts, or make them dependencies)').toEqual([]);
  });

  it('typechecks in a strict consumer with skipLibCheck off and only @types/node installed', () => {
    // Outside the repo, so nothing of ours (node_modules/@types/better-sqlite3…) is on the resolution path.
    const app = join(work, 'consumer');
    expect(app.startsWith(root), 'the consumer must not sit inside the repo (TMPDIR points into it)').toBe(false);
    mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
    run('tar', ['-xzf', tarball, '-C', join(app, 'node_modules')]);
    renameSync(join(app, 'node_modules', 'package'), join(app, 'node_modules', 'consolidata'));
    symlinkSync(join(nodeModules, '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir');
    for (const [name, text] of Object.entries(consumerFiles)) writeFileSync(join(app, name), text);

    const tsc = run(process.execPath, [join(nodeModules, 'typescript', 'bin', 'tsc'), '-p', app, '--pretty', 'false'], {
      cwd: app,
      allowFailure: true,
    });
    expect(tsc.stdout + tsc.stderr, 'tsc output').toBe('');
    expect(tsc.status, 'tsc exit status').toBe(0);
  });

  it('every entry of a format shares one copy of the store: one DataStore, one DataStoreError', () => {
    // By identity, through the entries that export them; in both formats.
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(process.cwd() + '/package.json');
      const cjs = [require('consolidata'), require('consolidata/testing')];
      const esm = [await import('consolidata'), await import('consolidata/testing')];
      for (const e of ['consolidata/http', 'consolidata/postgres']) { require(e); await import(e); }
      const failed = { data: [], success: false, message: 'boom', errors: [{ code: 'VALIDATION', message: 'boom' }] };
      let thrown;
      try { cjs[1].unwrap(failed); } catch (e) { thrown = e; }
      console.log(JSON.stringify({
        cjsDataStore: cjs[0].DataStore === cjs[1].DataStore,
        cjsDataStoreError: cjs[0].DataStoreError === cjs[1].DataStoreError,
        esmDataStore: esm[0].DataStore === esm[1].DataStore,
        esmDataStoreError: esm[0].DataStoreError === esm[1].DataStoreError,
        cjsTestingErrorIsIndexClass: Object.getPrototypeOf(thrown) === cjs[0].DataStoreError.prototype,
        classes: Object.keys(cjs[0]).filter((k) => typeof cjs[0][k] === 'function' && /^class\\b/.test(String(cjs[0][k]))),
      }));
    `;
    const child = run(process.execPath, ['--input-type=module', '-e', script], { cwd: installed, allowFailure: true });
    expect(child.stderr, 'child stderr').toBe('');
    const { classes, ...shared } = JSON.parse(child.stdout) as { classes: string[] };
    expect(shared).toEqual({
      cjsDataStore: true,
      cjsDataStoreError: true,
      esmDataStore: true,
      esmDataStoreError: true,
      cjsTestingErrorIsIndexClass: true,
    });
    expect(classes).toEqual(expect.arrayContaining(['DataStore', 'DataStoreError']));
    // The entries that do not export them (http, postgres) import them too: each public class is declared in one file per format.
    const dist = join(installed, 'node_modules', 'consolidata', 'dist');
    for (const ext of ['.js', '.cjs']) {
      const declaredIn = new Map<string, string[]>();
      for (const file of readdirSync(dist).filter((f) => f.endsWith(ext))) {
        // esbuild writes `var DataStore = class _DataStore …`, the CJS transform `var Catalogue = (_class = class {`.
        const declaration = /\b(?:var|let|const)\s+([\w$]+)\s*=\s*(?:\(\s*[\w$]+\s*=\s*)?class\b|^\s*class\s+([\w$]+)/gm;
        for (const [, assigned, declared] of readFileSync(join(dist, file), 'utf8').matchAll(declaration)) {
          const name = (assigned ?? declared)!;
          declaredIn.set(name, [...(declaredIn.get(name) ?? []), file]);
        }
      }
      expect(classes.map((name) => `${name}: ${(declaredIn.get(name) ?? []).length}`), `files declaring each public class (${ext})`).toEqual(
        classes.map((name) => `${name}: 1`),
      );
    }
  });

  it('the consolidata command runs from the tarball, with the pool\'s worker script beside it', () => {
    const bin = join(installed, 'node_modules', 'consolidata', 'dist', 'cli.js');
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n'), 'dist/cli.js starts with a hashbang').toBe(true);
    expect(statSync(bin).mode & 0o111, 'dist/cli.js is executable').not.toBe(0);
    expect(existsSync(join(dirname(bin), 'pool-worker.js')), 'dist/pool-worker.js is packed').toBe(true);
    const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(run(process.execPath, [bin, '--version'], { cwd: installed }).stdout.trim()).toBe(version.version);
  });

  it('a DataStoreError from the CJS build is one for the ESM build, and vice versa', () => {
    // One process loading both builds of the installed tarball (require → dist/index.cjs, import → dist/index.js).
    const script = `
      import { createRequire } from 'node:module';
      const cjs = createRequire(process.cwd() + '/package.json')('consolidata');
      const esm = await import('consolidata');
      const failed = { data: [], success: false, message: 'boom', errors: [{ code: 'VALIDATION', message: 'boom' }] };
      const thrownBy = (build) => { try { build.unwrap(failed); } catch (e) { return e; } throw new Error('unwrap did not throw'); };
      const fromCjs = thrownBy(cjs);
      const fromEsm = thrownBy(esm);
      const is = (build, value) => typeof build.DataStoreError.is === 'function' && build.DataStoreError.is(value) === true;
      console.log(JSON.stringify({
        twoClasses: cjs.DataStoreError !== esm.DataStoreError,
        codes: [fromCjs.code, fromEsm.code],
        esmIsCjsError: is(esm, fromCjs),
        cjsIsEsmError: is(cjs, fromEsm),
        cjsErrorInstanceofEsm: fromCjs instanceof esm.DataStoreError,
        esmErrorInstanceofCjs: fromEsm instanceof cjs.DataStoreError,
        stillErrors: fromCjs instanceof Error && fromEsm instanceof Error,
        plainErrorIs: is(esm, new Error('boom')) || is(cjs, new Error('boom')),
        lookalikeIs: is(esm, { name: 'DataStoreError', code: 'VALIDATION' }),
        plainErrorInstanceof: new Error('boom') instanceof esm.DataStoreError,
      }));
    `;
    const child = run(process.execPath, ['--input-type=module', '-e', script], { cwd: installed, allowFailure: true });
    expect(child.stderr, 'child stderr').toBe('');
    expect(JSON.parse(child.stdout)).toEqual({
      twoClasses: true,
      codes: ['VALIDATION', 'VALIDATION'],
      esmIsCjsError: true,
      cjsIsEsmError: true,
      cjsErrorInstanceofEsm: true,
      esmErrorInstanceofCjs: true,
      stillErrors: true,
      plainErrorIs: false,
      lookalikeIs: false,
      plainErrorInstanceof: false,
    });
  });

  it('createPool from consolidata/http finds its worker script in dist, from the ESM and the CJS build', () => {
    // The pool starts worker threads from dist/pool-worker.js: a query answered proves the script shipped. A CJS
    // script (no --input-type: the worker threads would inherit it and refuse to load their file).
    const script = `
      (async () => {
        const { join } = require('node:path');
        const cjs = require('consolidata/http');
        const esm = await import('consolidata/http');
        const counts = [];
        for (const [name, build] of [['esm', esm], ['cjs', cjs]]) {
          const store = await build.createPool(join(${JSON.stringify(work)}, name + '.db'), { readers: 1 });
          await store.insert('Well', [{ pwi: name }]);
          counts.push((await store.query('Well', {})).total);
          await store.close();
        }
        console.log(JSON.stringify(counts));
      })();
    `;
    const child = run(process.execPath, ['-e', script], { cwd: installed, allowFailure: true });
    expect(child.stderr, 'child stderr').toBe('');
    expect(JSON.parse(child.stdout)).toEqual([1, 1]);
  });
});

describe('DataStoreError brand', () => {
  const failed = { success: false, message: 'boom', errors: [{ code: 'NOT_FOUND', message: 'boom' }], data: [] } as unknown as Envelope<never>;
  const thrown = (): unknown => {
    try {
      unwrap(failed);
    } catch (e) {
      return e;
    }
    throw new Error('unwrap did not throw');
  };

  it('narrows with is() and instanceof, and rejects other values', () => {
    const e = thrown();
    expect(DataStoreError.is(e) && e.code).toBe('NOT_FOUND');
    expect(e instanceof DataStoreError && e.envelope).toBe(failed);
    for (const other of [new Error('boom'), { name: 'DataStoreError' }, null, undefined, 'DataStoreError']) {
      expect(DataStoreError.is(other)).toBe(false);
      expect(other instanceof DataStoreError).toBe(false);
    }
    // The brand: a registered symbol, own, true and not enumerable (so not in logs or object spreads).
    const brand = Symbol.for('consolidata.DataStoreError');
    expect(Object.getOwnPropertyDescriptor(e, brand)).toEqual({ value: true, writable: false, enumerable: false, configurable: false });
  });

  it('a subclass keeps the ordinary instanceof', () => {
    class NotFound extends DataStoreError {}
    const sub = new NotFound(failed);
    expect(sub instanceof NotFound && sub instanceof DataStoreError && DataStoreError.is(sub)).toBe(true);
    expect(thrown() instanceof NotFound).toBe(false);
  });
});

/** The consumer: an ES module app and a CommonJS module, strict, skipLibCheck off, @types/node as the only types. */
const consumerFiles: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
      typeRoots: ['./node_modules/@types'],
    },
    files: ['esm.mts', 'cjs.cts'],
  }),
  // Resolves the "import" conditions: dist/index.d.ts, dist/http.d.ts.
  'esm.mts': `
import { DataStoreError, unwrap, type Envelope, type SqliteDataStore } from 'consolidata';
import { createFetchHandler, createNodeHandler, createPool, type HttpOptions, type PooledStore } from 'consolidata/http';

export async function wellCount(store: SqliteDataStore): Promise<number> {
  // better-sqlite3's Database type: it has to ship inside consolidata.
  const tables = store.database.prepare('select count(*) as n from sqlite_master').get() as { n: number };
  try {
    return unwrap(await store.query('Well', {})).length + tables.n;
  } catch (e) {
    if (DataStoreError.is(e)) return e.envelope.errors.length;
    if (e instanceof DataStoreError) return e.code.length;
    throw e;
  }
}
export const failed = (env: Envelope<unknown>): boolean => !env.success;
export const http = { createFetchHandler, createNodeHandler };
export type Options = HttpOptions;
export const pooled = (file: string): Promise<PooledStore> => createPool(file, { readers: 1 });
`,
  // Resolves the "require" conditions: dist/index.d.cts, dist/http.d.cts.
  'cjs.cts': `
import { DataStoreError, type SqliteDataStore } from 'consolidata';
import { createNodeHandler, createPool, type PooledStore } from 'consolidata/http';

export const pooled = (file: string): Promise<PooledStore> => createPool(file);
export const databaseName = (store: SqliteDataStore): string => store.database.name;
export const isStoreError = (e: unknown): e is DataStoreError => DataStoreError.is(e);
export const handler = createNodeHandler;
`,
};
