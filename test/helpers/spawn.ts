import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

let bundled: Promise<string> | undefined;

/** Bundles test/helpers/worker.ts (with the library's sources) into a plain Node script, once per test file. */
export function workerScript(): Promise<string> {
  bundled ??= (async () => {
    // Inside the project, so the bundle resolves better-sqlite3 and re2js from node_modules.
    const dir = new URL('../../node_modules/.cache/', import.meta.url).pathname;
    mkdirSync(dir, { recursive: true });
    const out = join(mkdtempSync(join(dir, 'worker-')), 'worker.mjs');
    await build({
      entryPoints: [new URL('./worker.ts', import.meta.url).pathname],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: out,
      external: ['better-sqlite3', 're2js', '@turf/*'],
    });
    return out;
  })();
  return bundled;
}

export interface Worker {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

export async function startWorker(args: string[]): Promise<Worker> {
  const script = await workerScript();
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe']});
  const lines: string[] = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts);
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      if (buf) lines.push(buf);
      if (err) lines.push(...err.trim().split('\n').map((l) => `stderr ${l}`));
      resolve(code);
    }),
  );
  return { child, lines, exited };
}

/**
 * SIGKILLs a worker a random moment (up to `maxDelayMs`) after its first `ack` line, so the kill lands among writes
 * in flight; resolves once it has exited. A worker that exits before acknowledging anything fails the test.
 */
export async function killAfterFirstAck(w: Worker, maxDelayMs: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (w.lines.some((l) => l.startsWith('ack'))) {
        clearInterval(timer);
        setTimeout(resolve, Math.floor(Math.random() * maxDelayMs));
      }
    }, 5);
    void w.exited.then(() => {
      clearInterval(timer);
      reject(new Error(`the worker exited before it was killed:\n${w.lines.join('\n')}`));
    });
  });
  w.child.kill('SIGKILL');
  await w.exited;
}
