/** Builds the CLI (src/cli/main.ts) into a plain Node script, as tsup builds dist/cli.js, for tests that spawn it. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

export const root = resolve(import.meta.dirname, '../..');

/**
 * Bundles the CLI from the current sources into a fresh folder under node_modules/.cache (so the bundle resolves its
 * dependencies, and test files running in parallel never share one); dependencies stay external, as in dist/cli.js.
 * @example const cli = await buildCli(); afterAll(() => cli.remove());
 */
export async function buildCli(): Promise<{ path: string; remove: () => void }> {
  const base = join(root, 'node_modules/.cache');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'consolidata-cli-'));
  const path = join(dir, 'cli.mjs');
  // The pool's worker script goes beside the CLI, as dist/pool-worker.js beside dist/cli.js.
  await build({
    entryPoints: { cli: join(root, 'src/cli/main.ts'), 'pool-worker': join(root, 'src/pool/worker.ts') },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'error',
  });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to its end. */
export function runCli(cli: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((done) => {
    // The exit code and signal come from the child itself: a non-zero exit is an outcome here, not an error.
    const child = execFile(process.execPath, [cli, ...args], { cwd, maxBuffer: 64 * 1024 * 1024 }, (_err, stdout, stderr) =>
      done({ code: child.exitCode, signal: child.signalCode, stdout, stderr }),
    );
  });
}

export interface Served {
  url: string;
  child: ChildProcess;
  /** Everything the server wrote on stdout and stderr so far. */
  output: () => string;
  /** SIGTERM, then its exit code. */
  stop: () => Promise<number | null>;
}

/** Starts `consolidata serve ARGS` (add `--port 0`) and waits for the URL it prints. */
export function startServe(cli: string, args: string[], cwd: string): Promise<Served> {
  const child = spawn(process.execPath, [cli, 'serve', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolveServed, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /at (http:\/\/[^\s]+\/api)/.exec(out);
      if (m) {
        resolveServed({
          url: m[1]!,
          child,
          output: () => out,
          stop: () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`serve ${args.join(' ')} exited early with ${code}:\n${out}`)));
  });
}
