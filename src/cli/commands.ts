/** The `import` and `export` commands as functions: arguments in, messages on `stderr`, an exit code out. */
import { createReadStream, statSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { MultiBar, Presets } from 'cli-progress';
import { withDb } from './db.js';
import { runExport } from './export.js';
import { importExitCode, importSummaryText, runImport, type TextSink } from './import.js';

/** A stream messages go to; a bar is drawn on it only when it says it is a terminal. */
export type MessageStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface ImportCommand {
  type: string;
  /** A path, or "-" for `stdin`. */
  file: string;
  db: string;
  batch?: number;
  abortOnError?: boolean;
  atomic?: boolean;
  upsert?: boolean;
  /** Create the database file when it does not exist (default: refuse). */
  create?: boolean;
  /** Where bad lines, the progress bar (when it is a TTY) and the summary go. */
  stderr: MessageStream;
  stdin?: Readable;
  /** Aborted on Ctrl-C: the lines already read are written, the summary says `interrupted`, exit 130. */
  signal?: AbortSignal;
}

/**
 * `consolidata import`: answers the exit code (0 all imported, 2 some lines skipped, 1 failed or aborted, 130 interrupted).
 * On a terminal a progress bar is drawn and bad lines are printed above it through the bar's log, each on its
 * own line and in line order; elsewhere there is no bar and they stream as they come.
 * @example process.exitCode = await importCommand({ type: 'Well', file: 'wells.ndjson', db: 'wells.db', stderr: process.stderr });
 */
export async function importCommand(o: ImportCommand): Promise<number> {
  const say = (line: string) => o.stderr.write(`consolidata: ${line}\n`);
  let size = 0;
  try {
    if (o.file !== '-') size = statSync(o.file).size;
  } catch (e) {
    say(`${o.file}: ${(e as Error).message}`);
    return 1;
  }
  return withDb(o.db, { create: o.create, hint: 'pass --create to create it' }, say, async (store) => {
    let bars: MultiBar | undefined;
    try {
      const schema = await store.schema(o.type);
      if (!schema.success) {
        say(schema.message);
        return 1;
      }
      if (o.stderr.isTTY === true && size > 0) {
        bars = new MultiBar(
          { stream: o.stderr, format: 'importing {bar} {percentage}% | {documents} documents | {rate} documents/s | ETA {eta_left}', gracefulExit: false },
          Presets.shades_classic,
        );
      }
      const started = performance.now();
      const bar = bars?.create(size, 0, progressPayload(0, 0, size, 0));
      // With a bar, lines are logged through it: it clears its own line, prints them, and redraws itself below.
      const errors: TextSink = bars ? { write: (text: string) => bars!.log(text) } : o.stderr;
      const onAbort = () => errors.write('consolidata: interrupted: writing the lines already read, then stopping (Ctrl-C again quits at once)\n');
      o.signal?.addEventListener('abort', onAbort, { once: true });
      const input = o.file === '-' ? (o.stdin ?? process.stdin) : createReadStream(o.file);
      try {
        const summary = await runImport({
          store,
          type: o.type,
          input,
          errors,
          batch: o.batch,
          abortOnError: o.abortOnError,
          atomic: o.atomic,
          upsert: o.upsert,
          signal: o.signal,
          onProgress: (p) => bar?.update(p.bytes, progressPayload(p.bytes, p.documents, size, (performance.now() - started) / 1000)),
        });
        stopBars(bars);
        bars = undefined;
        o.stderr.write(`consolidata import ${importSummaryText(summary)}\n`);
        return importExitCode(summary);
      } finally {
        o.signal?.removeEventListener('abort', onAbort);
      }
    } catch (e) {
      stopBars(bars);
      say((e as Error).message);
      return 1;
    }
  });
}

/**
 * What the import bar shows beside its bar: documents read, documents per second, and the time left, from the
 * fraction of the file's bytes read (its size is known up front, its number of documents is not).
 * @example progressPayload(5_000_000, 20_000, 10_000_000, 4) // { documents: '20,000', rate: '5,000', eta_left: '4s' }
 */
export function progressPayload(bytes: number, documents: number, size: number, seconds: number): { documents: string; rate: string; eta_left: string } {
  const count = (n: number) => Math.round(n).toLocaleString('en-US');
  const left = bytes > 0 ? (seconds * (size - bytes)) / bytes : NaN;
  return { documents: count(documents), rate: seconds > 0 ? count(documents / seconds) : '0', eta_left: Number.isFinite(left) ? duration(left) : '…' };
}

/** Seconds as `45s`, `3m07s` or `1h05m`. */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
}

/** Prints what the bar still holds in its log, draws it one last time and ends its line. */
function stopBars(bars: MultiBar | undefined): void {
  if (!bars) return;
  bars.update();
  bars.stop();
}

export interface ExportCommand {
  type: string;
  db: string;
  query?: unknown;
  /** sortBy and sortOrder of the lines. */
  sort?: { sortBy?: unknown; sortOrder?: unknown };
  stdout: Writable;
  stderr: MessageStream;
}

/**
 * `consolidata export`: the matching documents as NDJSON on `stdout`; answers the exit code (0, or 1 failed).
 * @example process.exitCode = await exportCommand({ type: 'Well', db: 'wells.db', stdout: process.stdout, stderr: process.stderr });
 */
export async function exportCommand(o: ExportCommand): Promise<number> {
  const say = (line: string) => o.stderr.write(`consolidata: ${line}\n`);
  return withDb(o.db, { hint: 'check --db' }, say, async (store) => {
    const { exported, failure } = await runExport({ store, type: o.type, query: o.query, sort: o.sort, output: o.stdout });
    if (failure) {
      say(failure.message);
      return 1;
    }
    o.stderr.write(`consolidata export: ${exported} documents\n`);
    return 0;
  });
}
