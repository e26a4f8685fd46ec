/**
 * The examples of the README's "Testing your app" section (examples/testing/) run as tests of this repository,
 * each in its own runner, against the built package (`consolidata/testing` resolved to dist/, or to a fresh build
 * of the sources when dist/ is older than them), and the section's code blocks are those files, byte for byte.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const examples = join(root, 'examples/testing');
const VITEST_EXAMPLE = 'wells.vitest.test.ts';
const JEST_EXAMPLE = 'wells.jest.test.cjs';
const SECTION = 'README-section.md';
const HEADING = '## Testing your app';

interface Run {
  code: number;
  output: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  // The child runners must not think they run inside this one.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VITEST|JEST_WORKER_ID$|NODE_OPTIONS$)/.test(k)));
  return new Promise((done) => {
    execFile(command, args, { cwd: root, env: { ...base, NO_COLOR: '1', FORCE_COLOR: '0', CI: '1', ...env }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}` });
    });
  });
}

/** The newest modification time of the library's sources. */
function newestSource(): number {
  const dir = join(root, 'src');
  return Math.max(...(readdirSync(dir, { recursive: true }) as string[]).map((f) => statSync(join(dir, f)).mtimeMs));
}

const BUILT = ['index.js', 'index.cjs', 'testing.js', 'testing.cjs'];

/**
 * CONSOLIDATA_DIST when set; else dist/ when it holds a build of the current sources with the testing entry; else a
 * fresh build made here, as tsup makes dist/.
 */
async function builtPackage(): Promise<{ dir: string; fresh: boolean; cleanup: () => void }> {
  if (process.env.CONSOLIDATA_DIST) return { dir: resolve(process.env.CONSOLIDATA_DIST), fresh: false, cleanup: () => {} };
  const dist = join(root, 'dist');
  const sources = newestSource();
  if (BUILT.every((f) => existsSync(join(dist, f)) && statSync(join(dist, f)).mtimeMs >= sources)) return { dir: dist, fresh: false, cleanup: () => {} };
  // Inside node_modules, so the build resolves better-sqlite3 and re2 as dist/ does, and apart from dist/.
  const cache = join(root, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'consolidata-testing-examples-'));
  const tsup = join(root, 'node_modules/.bin/tsup');
  const r = await run(tsup, ['src/index.ts', 'src/testing.ts', '--no-config', '--format', 'esm,cjs', '--target', 'node20', '--out-dir', dir, '--silent']);
  if (r.code !== 0 || !BUILT.every((f) => existsSync(join(dir, f)))) throw new Error(`building the package for the examples failed:\n${r.output}`);
  return { dir, fresh: true, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** How many tests a file declares (top-level `test(` or `it(` calls, indented or not). */
function declaredTests(file: string): number {
  return (readFileSync(join(examples, file), 'utf8').match(/^\s*(?:it|test)\(/gm) ?? []).length;
}

/** The fenced code blocks of a Markdown text, without their fences. */
function codeBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```\s*$/gm)].map((m) => m[1]!);
}

/** The README's "Testing your app" section: from its heading to the next heading of the same level. */
function readmeSection(readme: string): string | undefined {
  const start = readme.indexOf(`\n${HEADING}\n`);
  if (start < 0) return undefined;
  const rest = readme.slice(start + 1);
  const end = rest.slice(HEADING.length).search(/^## /m);
  return end < 0 ? rest : rest.slice(0, HEADING.length + end);
}

describe('the examples run against the built package', () => {
  let pkg: Awaited<ReturnType<typeof builtPackage>>;

  beforeAll(async () => {
    pkg = await builtPackage();
  });

  afterAll(() => pkg?.cleanup());

  it(`${VITEST_EXAMPLE} passes under vitest`, async () => {
    const vitest = join(root, 'node_modules/vitest/vitest.mjs');
    const r = await run(process.execPath, [vitest, 'run', '-c', join(examples, 'vitest.config.ts')], { CONSOLIDATA_DIST: pkg.dir });
    expect(r.output).toMatch(new RegExp(`Tests\\s+${declaredTests(VITEST_EXAMPLE)} passed`));
    expect(r.code, r.output).toBe(0);
  });

  it(`${JEST_EXAMPLE} passes under jest, through require('consolidata/testing')`, async () => {
    const jest = join(root, 'node_modules/jest/bin/jest.js');
    expect(existsSync(jest), 'jest is not installed: it is a devDependency (npm install)').toBe(true);
    const r = await run(process.execPath, [jest, '-c', join(examples, 'jest.config.cjs'), '--ci', '--runInBand'], { CONSOLIDATA_DIST: pkg.dir });
    expect(r.output).toMatch(new RegExp(`Tests:\\s+${declaredTests(JEST_EXAMPLE)} passed, ${declaredTests(JEST_EXAMPLE)} total`));
    expect(r.code, r.output).toBe(0);
  });
});

describe('the examples as documentation', () => {
  it(`${VITEST_EXAMPLE} typechecks against the library's types`, () => {
    const file = join(examples, VITEST_EXAMPLE);
    const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    const options = { ...config!.options, noEmit: true, paths: { 'consolidata/testing': [join(root, 'src/testing.ts')] } };
    const program = ts.createProgram([file], options);
    const problems = ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
  });

  it(`${SECTION} shows each example file whole, as one of its code blocks`, () => {
    const blocks = codeBlocks(readFileSync(join(examples, SECTION), 'utf8'));
    for (const file of [VITEST_EXAMPLE, JEST_EXAMPLE]) expect(blocks, file).toContain(readFileSync(join(examples, file), 'utf8'));
  });

  it(`README.md has the "Testing your app" section, its code blocks those of ${SECTION}`, () => {
    const section = readmeSection(readFileSync(join(root, 'README.md'), 'utf8'));
    expect(section, `README.md has no "${HEADING}" section: paste examples/testing/${SECTION}`).toBeDefined();
    expect(codeBlocks(section!)).toEqual(codeBlocks(readFileSync(join(examples, SECTION), 'utf8')));
  });
});
