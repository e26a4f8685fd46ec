/** `consolidata import`: documents from a JSON array or NDJSON stream into a store, in batches. */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { EnvelopeError } from '../envelope.js';
import type { StoreLike } from '../http/types.js';

export interface ImportOptions {
  store: StoreLike;
  type: string;
  input: Readable;
  /** Where bad lines are reported (stderr in the CLI). */
  errors: Writable;
  /** Documents per insert request (one transaction each); default 1000. */
  batch?: number;
  /** Stop at the first bad line (its batch is not written); default: report it and go on. */
  abortOnError?: boolean;
  /** Called after each batch with the bytes read so far (for a progress bar). */
  onProgress?: (bytesRead: number) => void;
}

export interface ImportSummary {
  /** Non-blank lines (NDJSON) or array elements (JSON array) read. */
  read: number;
  imported: number;
  skipped: number;
  /** True when `abortOnError` stopped the run, or the store refused the whole request (unknown type…). */
  aborted: boolean;
}

interface Item {
  line: number;
  doc: unknown;
}

class Abort extends Error {}

/** Exit code of an import: 0 all in, 2 done but some lines skipped, 1 aborted. */
export function importExitCode(summary: ImportSummary): number {
  if (summary.aborted) return 1;
  return summary.skipped > 0 ? 2 : 0;
}

/**
 * Imports a JSON array or NDJSON stream; bad lines (malformed JSON, documents the store refuses) are
 * reported on `errors` with their line number and skipped, or end the run under `abortOnError`.
 * @example const summary = await runImport({ store, type: 'Well', input: fs.createReadStream('wells.ndjson'), errors: process.stderr });
 */
export async function runImport(opts: ImportOptions): Promise<ImportSummary> {
  const batchSize = opts.batch ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batch must be a positive integer');
  const summary: ImportSummary = { read: 0, imported: 0, skipped: 0, aborted: false };
  let bytes = 0;
  opts.input.on('data', (chunk: Buffer | string) => {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
  });
  const report = (where: string, message: string) => opts.errors.write(`${where}: ${message}\n`);
  const skip = (where: string, message: string) => {
    report(where, message);
    if (opts.abortOnError) throw new Abort();
    summary.skipped++;
  };

  let label = 'line';
  let pending: Item[] = [];
  const flush = async () => {
    if (pending.length) await insertBatch(opts, pending, label, summary, skip);
    pending = [];
    opts.onProgress?.(bytes);
  };

  try {
    const lines = createInterface({ input: opts.input, crlfDelay: Infinity });
    let lineNo = 0;
    let arrayText: string[] | undefined;
    for await (const line of lines) {
      lineNo++;
      if (arrayText) {
        arrayText.push(line);
        continue;
      }
      const text = lineNo === 1 ? line.replace(/^\uFEFF/, '') : line;
      if (text.trim() === '') continue;
      if (summary.read === 0 && text.trimStart().startsWith('[')) {
        // A JSON array file is parsed whole; its "lines" are element positions.
        arrayText = [text];
        continue;
      }
      summary.read++;
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (e) {
        skip(`line ${lineNo}`, `malformed JSON (${(e as Error).message})`);
        continue;
      }
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
        skip(`line ${lineNo}`, 'expected a JSON object');
        continue;
      }
      pending.push({ line: lineNo, doc });
      if (pending.length >= batchSize) await flush();
    }
    if (arrayText) {
      label = 'element';
      let docs: unknown;
      try {
        docs = JSON.parse(arrayText.join('\n'));
      } catch (e) {
        report('file', `malformed JSON array (${(e as Error).message})`);
        summary.aborted = true;
        return summary;
      }
      if (!Array.isArray(docs)) throw new Error('unreachable: a file starting with [ parsed to a non-array');
      for (const [i, doc] of docs.entries()) {
        summary.read++;
        if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
          skip(`element ${i}`, 'expected a JSON object');
          continue;
        }
        pending.push({ line: i, doc });
        if (pending.length >= batchSize) await flush();
      }
    }
    await flush();
  } catch (e) {
    if (!(e instanceof Abort)) throw e;
    summary.aborted = true;
  }
  return summary;
}

/** Inserts one batch; documents the store refuses are reported by line and the rest retried. */
async function insertBatch(
  opts: ImportOptions,
  items: Item[],
  label: string,
  summary: ImportSummary,
  skip: (where: string, message: string) => void,
): Promise<void> {
  let rest = items;
  // Each round removes at least one refused document, so this ends.
  while (rest.length) {
    const env = await opts.store.insert(opts.type, rest.map((i) => i.doc), { atomic: opts.abortOnError === true });
    summary.imported += env.count;
    if (env.success) return;
    const byIndex = new Map<number, EnvelopeError[]>();
    for (const e of env.errors) {
      if (e.index === undefined || !rest[e.index]) {
        // Not about one document (an unknown type…): nothing in this file can go in.
        opts.errors.write(`error: ${e.message}\n`);
        throw new Abort();
      }
      byIndex.set(e.index, [...(byIndex.get(e.index) ?? []), e]);
    }
    // The store's messages say "document <batch index>:"; the report names the file line instead.
    for (const [index, errs] of [...byIndex].sort((a, b) => a[0] - b[0])) {
      skip(`${label} ${rest[index]!.line}`, errs.map((e) => e.message.replace(/^document \d+: /, '')).join('; '));
    }
    // Duplicates of a non-atomic insert: the others already went in.
    if (env.errors.every((e) => e.code === 'DUPLICATE_KEY')) return;
    rest = rest.filter((_, i) => !byIndex.has(i));
  }
}
