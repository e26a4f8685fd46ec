/**
 * The stream protocol of the pool, on the caller's side: a query's answer arrives as slices of its JSON text, and
 * the next slice is asked of the worker only when the consumer wants it (`pull`), so a slow reader holds one slice.
 */
import type { Envelope } from '../envelope.js';

/** A slice of a query's answer as JSON text; the last one has `end`. */
export interface Batch {
  text: string;
  end: boolean;
}

/** A request's first answer: a whole envelope, or the first slice of a query's answer. */
export type Head = { kind: 'done'; answer: unknown } | { kind: 'text'; batch: Batch };

/** What a stream needs of the scheduler: the next slice of its request, or to stop it. */
export interface Puller<J> {
  pull(job: J): Promise<Batch>;
  cancel(job: J): void;
}

/**
 * A query's answer as JSON text, pulled batch by batch. Concatenated, the chunks are exactly
 * `JSON.stringify(await store.query(…))`. A refused query (`failure` set) yields its envelope in one chunk.
 * A failure after the first chunk (TIMEOUT, a worker that died) makes the iteration throw a `DataStoreError`.
 * Iterate it to the end, break out of it, or `cancel()` it: until then it holds a worker.
 */
export interface QueryStream extends AsyncIterable<string> {
  /** The refusal envelope (bad query, TIMEOUT before the first row), or null when rows follow. */
  readonly failure: Envelope<Record<string, unknown>> | null;
  /** The whole answer's text when it came in one slice (most do): nothing more to pull, no worker held. */
  readonly whole: string | undefined;
  /** Stops the query and frees its worker; a later step of the iteration throws TIMEOUT (harmless after the end). */
  cancel(): void;
}

/** The text chunks of a query's answer, each pulled from the worker when the consumer asks for it. */
async function* chunks<J>(puller: Puller<J>, job: J, first: Batch): AsyncGenerator<string, void, undefined> {
  let finished = false;
  try {
    let batch = first;
    for (;;) {
      if (batch.end) {
        finished = true;
        yield batch.text;
        return;
      }
      yield batch.text;
      batch = await puller.pull(job);
    }
  } finally {
    // Broken out of, or failed: the query stops and its worker is freed.
    if (!finished) puller.cancel(job);
  }
}

/** The QueryStream of one request, from its first answer on. */
export class PoolQueryStream<J> implements QueryStream {
  readonly failure: Envelope<Record<string, unknown>> | null;
  readonly whole: string | undefined;
  readonly #puller: Puller<J>;
  readonly #job: J | undefined;
  readonly #first: Batch;
  #iterated = false;

  constructor(puller: Puller<J>, job: J | undefined, head: Head) {
    this.#puller = puller;
    this.#job = job;
    const whole = head.kind === 'done' ? (head.answer as Envelope<Record<string, unknown>>) : undefined;
    this.failure = whole && !whole.success ? whole : null;
    this.#first = head.kind === 'text' ? head.batch : { text: JSON.stringify(whole), end: true };
    this.whole = this.failure === null && this.#first.end ? this.#first.text : undefined;
  }

  cancel(): void {
    if (this.#job) this.#puller.cancel(this.#job);
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    if (this.#iterated) throw new TypeError('a query stream can be iterated once');
    this.#iterated = true;
    return chunks(this.#puller, this.#job!, this.#first);
  }
}

/** The answer of a whole query from its stream: its slices joined and parsed, or the failure a pull ended in. */
export async function wholeAnswer<J>(puller: Puller<J>, job: J | undefined, head: Head): Promise<Envelope<Record<string, unknown>>> {
  if (head.kind === 'done') return head.answer as Envelope<Record<string, unknown>>;
  const texts: string[] = [];
  let batch = head.batch;
  for (;;) {
    texts.push(batch.text);
    if (batch.end) break;
    batch = await puller.pull(job!);
  }
  return JSON.parse(texts.join('')) as Envelope<Record<string, unknown>>;
}
