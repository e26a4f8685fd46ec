import { Readable, Writable } from 'node:stream';
import { runImport, type ImportStore, type ImportSummary } from '../../src/cli/import.js';

/** A stream that keeps what is written to it as text: an import's error report, a command's output. */
export class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString('utf8');
    done();
  }
}

/** Documents as NDJSON, one a line. */
export const ndjson = (docs: unknown[]): string => docs.map((d) => JSON.stringify(d)).join('\n') + '\n';

/**
 * Imports `count` Wells (pwi `I0`, `I1`, …) read in 4 KiB chunks, 100 a batch, and aborts the run's signal after the
 * `stopAfter`th batch, as Ctrl-C does; `atomic` as the option.
 * @example const summary = await interruptedImport(store, 5000, 3);   // 300 read, 300 imported
 */
export function interruptedImport(store: ImportStore, count: number, stopAfter: number, atomic = false): Promise<ImportSummary> {
  const lines = Array.from({ length: count }, (_, i) => ({ pwi: `I${i}` }));
  const interrupt = new AbortController();
  let batches = 0;
  return runImport({
    store,
    type: 'Well',
    input: Readable.from(ndjson(lines).match(/[^]{1,4096}/g)!),
    errors: new Collect(),
    batch: 100,
    atomic,
    signal: interrupt.signal,
    onProgress: () => {
      if (++batches === stopAfter) interrupt.abort();
    },
  });
}
