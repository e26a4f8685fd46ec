/** `consolidata import`: documents from a JSON array or NDJSON stream into a store, in batches. */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { LoadOptions, ReplaceOptions } from '../core/store.js';
import type { Envelope, EnvelopeError } from '../envelope.js';
import type { StoreLike } from '../core/store-like.js';

/** Where bad lines are reported: anything with `write(text)` (stderr, or a progress bar's log). */
export interface TextSink {
  write(text: string): unknown;
}

/** A store that loads from a stream: a `DynamicStore`, or a `DataStore` (its `dynamic` view is used). */
export type ImportStore = Loader | { readonly dynamic: Loader };

interface Loader extends StoreLike {
  load(type: string, source: AsyncIterable<unknown>, options?: LoadOptions): Promise<Envelope<never>>;
  replace(type: string, docs: unknown, options?: ReplaceOptions): Promise<Envelope<unknown>>;
}

/** An import restores documents as the file has them: the stamps an exported document carries are kept. */
const RESTORE = { keepStamps: true } as const;

function loaderOf(store: ImportStore): Loader {
  return 'dynamic' in store ? store.dynamic : store;
}

export interface ImportOptions {
  store: ImportStore;
  type: string;
  input: Readable;
  /** Where bad lines are reported, one `line N: message\n` each, in line order (stderr in the CLI). */
  errors: TextSink;
  /** Documents per request (one transaction each); default 1000. */
  batch?: number;
  /** Stop at the first bad line (its batch is not written); default: report it and go on. */
  abortOnError?: boolean;
  /**
   * The whole file in one transaction (the store's bulk path: indexes rebuilt once, at the end): the first bad
   * line of any kind (malformed JSON, not an object, refused by the store) ends the run and nothing is written.
   * Not with `upsert`.
   */
  atomic?: boolean;
  /**
   * Replace documents by `id` instead of inserting them (the store's `replace`, an upsert by id), so running
   * the same import again changes nothing. Documents without an `id` are inserted with a fresh one.
   */
  upsert?: boolean;
  /** Stops reading when aborted (Ctrl-C): the lines already read are written, then the summary says `interrupted`. */
  signal?: AbortSignal;
  /** Called after each batch with the bytes and documents (lines or elements) read so far, for a progress bar. */
  onProgress?: (progress: { bytes: number; documents: number }) => void;
}

export interface ImportSummary {
  /** Non-blank lines (NDJSON) or array elements (JSON array) read. */
  read: number;
  /** Documents written (inserted, or inserted and replaced under `upsert`). */
  imported: number;
  skipped: number;
  /** True when `abortOnError` or `atomic` stopped the run, or the store refused the whole request (unknown type…). */
  aborted: boolean;
  /** True when `signal` stopped the run before the end of the input. */
  interrupted: boolean;
}

interface Item {
  line: number;
  doc: unknown;
}

class Abort extends Error {}

/** Exit code of an import: 130 interrupted (as a shell reports SIGINT), 1 aborted, 2 done but some lines skipped, 0 all in. */
export function importExitCode(summary: ImportSummary): number {
  if (summary.interrupted) return 130;
  if (summary.aborted) return 1;
  return summary.skipped > 0 ? 2 : 0;
}

/** The summary line of an import, e.g. `done: 3 imported, 4 skipped, 7 read`. */
export function importSummaryText(summary: ImportSummary): string {
  const verb = summary.interrupted ? 'interrupted' : summary.aborted ? 'aborted' : 'done';
  return `${verb}: ${summary.imported} imported, ${summary.skipped} skipped, ${summary.read} read`;
}

/**
 * Imports a JSON array or NDJSON stream; bad lines (malformed JSON, documents the store refuses) are
 * reported on `errors` with their line number and skipped, or end the run under `abortOnError` and `atomic`.
 * @example const summary = await runImport({ store, type: 'Well', input: fs.createReadStream('wells.ndjson'), errors: process.stderr });
 */
export async function runImport(opts: ImportOptions): Promise<ImportSummary> {
  const batchSize = opts.batch ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batch must be a positive integer');
  if (opts.atomic && opts.upsert) throw new RangeError('atomic and upsert cannot be combined: an upsert import replaces batch by batch');
  const summary: ImportSummary = { read: 0, imported: 0, skipped: 0, aborted: false, interrupted: false };
  let bytes = 0;
  opts.input.on('data', (chunk: Buffer | string) => {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
  });
  /** Problems waiting to be printed with the store's, in line order, when their batch is done. */
  let held: { line: number; text: string }[] = [];
  const printHeld = () => {
    held.sort((x, y) => x.line - y.line);
    for (const h of held) opts.errors.write(h.text);
    held = [];
  };
  // An atomic run writes nothing once a line is bad, so it ends there as --abort-on-error does.
  const stopsAtFirst = opts.abortOnError === true || opts.atomic === true;
  const skip = (label: string, line: number, message: string) => {
    held.push({ line, text: `${label} ${line}: ${message}\n` });
    summary.skipped++;
    if (stopsAtFirst) {
      printHeld();
      throw new Abort();
    }
  };
  // Checked before each line is taken: on Ctrl-C the lines already read are written, nothing more is read.
  const interrupted = () => {
    if (!opts.signal?.aborted) return false;
    summary.interrupted = true;
    return true;
  };

  let label = 'line';
  /** The file line (NDJSON) or element (array) of each document handed to the store, by its position. */
  const lineOf: number[] = [];
  const lines = createInterface({ input: opts.input, crlfDelay: Infinity });

  /** Interrupted: what was read is written, unless the import is atomic: then nothing is. */
  const stop = () => {
    if (opts.atomic) throw new Abort();
  };

  /** The documents of the file, with their lines noted; malformed lines and non-objects are reported and skipped. */
  async function* documents(): AsyncGenerator<unknown> {
    let lineNo = 0;
    let arrayText: string[] | undefined;
    for await (const line of lines) {
      if (interrupted()) return stop();
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
        skip('line', lineNo, `malformed JSON (${(e as Error).message})`);
        continue;
      }
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
        skip('line', lineNo, 'expected a JSON object');
        continue;
      }
      lineOf.push(lineNo);
      yield doc;
    }
    if (summary.interrupted) return stop();
    if (!arrayText) return;
    label = 'element';
    let docs: unknown;
    try {
      docs = JSON.parse(arrayText.join('\n'));
    } catch (e) {
      opts.errors.write(`file: malformed JSON array (${(e as Error).message})\n`);
      throw new Abort();
    }
    if (!Array.isArray(docs)) throw new Error('unreachable: a file starting with [ parsed to a non-array');
    for (const [i, doc] of docs.entries()) {
      if (interrupted()) return stop();
      summary.read++;
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
        skip('element', i, 'expected a JSON object');
        continue;
      }
      lineOf.push(i);
      yield doc;
    }
  }

  try {
    if (opts.upsert) {
      let pending: Item[] = [];
      const flush = async () => {
        if (pending.length) await upsertBatch(opts, pending, label, summary, skip);
        pending = [];
        printHeld();
        opts.onProgress?.({ bytes, documents: summary.read });
      };
      let n = 0;
      for await (const doc of documents()) {
        pending.push({ line: lineOf[n++]!, doc });
        if (pending.length >= batchSize) await flush();
      }
      await flush();
    } else {
      let done = 0;
      const env = await loaderOf(opts.store).load(opts.type, documents(), {
        ...RESTORE,
        batchSize,
        atomic: opts.atomic === true,
        stopOnError: opts.abortOnError === true,
        // Refusals come through onError, as each batch is written; the answer keeps none of them.
        maxErrors: 0,
        onError: (e) => held.push({ line: lineOf[e.index!]!, text: `${label} ${lineOf[e.index!]}: ${e.message.replace(/^document \d+: /, '')}\n` }),
        onBatch: (p) => {
          // One refusal per document: several problems of one document are one skipped line.
          summary.skipped += p.refused - done;
          done = p.refused;
          // Counted as batches commit: a bad line that throws out of the source leaves no answer to count from.
          summary.imported = p.written;
          printHeld();
          opts.onProgress?.({ bytes, documents: summary.read });
        },
      });
      summary.imported = env.count;
      if (!env.success) {
        printHeld();
        // Errors in the answer are not about one document (an unknown type…): nothing in this file can go in.
        for (const e of env.errors) opts.errors.write(`error: ${e.message}\n`);
        if (env.errors.length || opts.abortOnError || opts.atomic) summary.aborted = true;
      }
    }
  } catch (e) {
    if (!(e instanceof Abort)) throw e;
    if (!summary.interrupted) summary.aborted = true;
  } finally {
    printHeld();
    lines.close();
    if (summary.interrupted || summary.aborted) opts.input.destroy();
  }
  return summary;
}

/** Reports the refused documents of a failed request by line; answers the indexes they had in `rest`. */
function refused(
  opts: ImportOptions,
  rest: Item[],
  errors: EnvelopeError[],
  label: string,
  skip: (label: string, line: number, message: string) => void,
): Set<number> {
  const byIndex = new Map<number, EnvelopeError[]>();
  for (const e of errors) {
    if (e.index === undefined || !rest[e.index]) {
      // Not about one document (an unknown type…): nothing in this file can go in.
      opts.errors.write(`error: ${e.message}\n`);
      throw new Abort();
    }
    byIndex.set(e.index, [...(byIndex.get(e.index) ?? []), e]);
  }
  // The store's messages say "document <batch index>:"; the report names the file line instead.
  for (const [index, errs] of [...byIndex].sort((a, b) => a[0] - b[0])) {
    skip(label, rest[index]!.line, errs.map((e) => e.message.replace(/^document \d+: /, '')).join('; '));
  }
  return new Set(byIndex.keys());
}

/**
 * Replaces one batch by id: the store's `replace` is all or nothing, so a refused document rolls the batch back.
 * Invalid documents are all named at once and dropped; a duplicate key (the store names only the first) sends
 * the rest of the batch one document at a time, so a batch of collisions costs one request each, not one per pair.
 */
async function upsertBatch(
  opts: ImportOptions,
  items: Item[],
  label: string,
  summary: ImportSummary,
  skip: (label: string, line: number, message: string) => void,
): Promise<void> {
  let rest = items;
  while (rest.length) {
    const env = await loaderOf(opts.store).replace(opts.type, rest.map((i) => i.doc), RESTORE);
    if (env.success) {
      summary.imported += env.count;
      return;
    }
    const bad = refused(opts, rest, env.errors, label, skip);
    rest = rest.filter((_, i) => !bad.has(i));
    if (env.errors.some((e) => e.code === 'DUPLICATE_KEY')) {
      for (const item of rest) {
        const one = await loaderOf(opts.store).replace(opts.type, [item.doc], RESTORE);
        if (one.success) summary.imported += one.count;
        else refused(opts, [item], one.errors, label, skip);
      }
      return;
    }
  }
}
