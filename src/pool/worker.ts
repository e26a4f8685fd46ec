/**
 * A worker thread of the pool (pool.ts): one `DynamicStore` on a connection of its own to the file, running the
 * store's own operations and nothing else.
 *
 * A reader runs queries through the store's `queryText`: the answer leaves as slices of the envelope's JSON
 * text, the next slice only when the pool asks (`next`), and a query without `limit` reads its documents as its
 * slices are taken, so memory stays one slice however large the answer.
 *
 * The writer runs each write as the store's own operation (which validates, stamps, journals and writes). The commit
 * gate (protocol.ts GATE) decides its fate through the store's `beforeCommit`, asked as the write's transaction is
 * about to commit: a write the pool answered TIMEOUT never commits, a committed one is always answered.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { failure } from '../core/run.js';
import type { TextSlices } from '../core/slices.js';
import type { Envelope } from '../envelope.js';
import type { OpenOptions } from '../settings.js';
import { requestErrorOf } from '../sqlite/index.js';
import { DynamicStore, type SqliteDynamicStore } from '../store.js';
import { GATE, serializeError, SUMMARIES, type FromWorker, type Op, type ToWorker, type WorkerConfig } from './protocol.js';

const config = workerData as WorkerConfig;
const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);

/** The time the pool's clock gave for the write being run (only read when the pool has a clock). */
let now: unknown;

const gate = config.gate ? new Int32Array(config.gate) : undefined;

/**
 * Takes the current write's fate from the pool: true when this thread may commit and answer it (the gate was moved
 * RUNNING → COMMITTING here, now or by an earlier transaction of the same write), false when the pool cancelled it.
 */
function claim(): boolean {
  if (!gate) return true;
  const was = Atomics.compareExchange(gate, 0, GATE.RUNNING, GATE.COMMITTING);
  return was === GATE.RUNNING || was === GATE.COMMITTING;
}

const options: OpenOptions = {
  ...config.options,
  ...(config.clock ? { clock: () => now as Date | string | number } : {}),
  ...(gate ? { beforeCommit: claim } : {}),
  // The cause of an INTERNAL answer goes to the pool's thread, where the application's onError runs.
  onError: (error, requestId) => post({ t: 'onError', requestId, error: serializeError(error) }),
};

/** A query's answer being sent, one slice per `next`. */
interface OpenAnswer {
  readonly id: number;
  readonly slices: TextSlices;
}

/**
 * The answer to a failure past the store's own handling (a slice read): the request error the engine's error means
 * (a full database is STORE_FULL), then the store's own answer to a failure.
 */
function failed(e: unknown): Envelope<never> {
  return failure(requestErrorOf(e) ?? e, options.onError);
}

if (config.nice) {
  try {
    setPriority(0, config.nice);
  } catch {
    // A priority the system refuses changes nothing but scheduling: run at the default one.
  }
}

let store: SqliteDynamicStore;
try {
  store = DynamicStore.open(config.file, options);
} catch (e) {
  post({ t: 'openFailed', error: serializeError(e) });
  port.close();
  throw e;
}
const size = { rows: config.batchRows, chars: config.batchChars };
let open: OpenAnswer | undefined;

/** Runs a query through the façade and sends its answer: whole when refused, else as JSON text in slices. */
async function startQuery(id: number, args: unknown[]): Promise<void> {
  const [type, query, opts] = args;
  // Held open between slices: this thread's connection serves nothing else while its answer is sent.
  const { failure, slices } = await store.queryText(type as string, query, opts, size, true);
  if (failure) {
    post({ t: 'done', id, answer: failure });
    return;
  }
  open = { id, slices };
  sendNext();
}

/** Ends the open answer, if any. */
function closeAnswer(): void {
  const a = open;
  open = undefined;
  a?.slices.close();
}

/** Sends the next slice of the open answer. */
function sendNext(): void {
  const a = open!;
  let slice: { text: string; end: boolean };
  try {
    slice = a.slices.next();
  } catch (e) {
    try {
      closeAnswer();
    } catch {
      // The answer is INTERNAL already; a failing close adds nothing the pool could act on.
    }
    post({ t: 'fail', id: a.id, envelope: failed(e) });
    return;
  }
  if (slice.end) closeAnswer();
  post({ t: 'text', id: a.id, text: slice.text, end: slice.end });
}

/**
 * The store's operation of that name on the arguments the pool sent, in its parameters' order (pool.ts): a summary
 * (aggregate, count, distinct: a small envelope, sent whole) or a write.
 */
function call(target: DynamicStore, op: Exclude<Op, 'query'>, args: unknown[]): Promise<unknown> {
  return (target[op] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
}

async function runWrite(id: number, op: Exclude<Op, 'query'>, args: unknown[], userId: string): Promise<void> {
  // The pool gave up on this write while the message was on its way: it is terminating this thread.
  if (gate && Atomics.load(gate, 0) !== GATE.RUNNING) return;
  let answer: unknown;
  try {
    answer = await call(userId === store.userId ? store : store.withUser(userId), op, args);
  } catch (e) {
    answer = failed(e);
  }
  // A write that committed claimed the gate already; one that wrote nothing claims it to answer. Cancelled: the pool
  // answered TIMEOUT (or the caller aborted) and nothing was written.
  if (claim()) post({ t: 'done', id, answer });
}

function onMessage(m: ToWorker): void {
  switch (m.t) {
    case 'run':
      now = m.now;
      if (m.op === 'query') void startQuery(m.id, m.args).catch((e: unknown) => post({ t: 'done', id: m.id, answer: failed(e) }));
      else if (SUMMARIES.has(m.op)) void call(store, m.op, m.args).then((answer) => post({ t: 'done', id: m.id, answer }), (e: unknown) => post({ t: 'done', id: m.id, answer: failed(e) }));
      // Whatever fails past the write's own handling (a rollback that throws) still answers, never an unhandled rejection.
      else void runWrite(m.id, m.op, m.args, m.userId).catch((e: unknown) => post({ t: 'done', id: m.id, answer: failed(e) }));
      return;
    case 'next':
      if (open?.id === m.id) sendNext();
      return;
    case 'cancel':
      if (open?.id === m.id) closeAnswer();
      post({ t: 'released', id: m.id });
      return;
    case 'close':
      closeAnswer();
      void store.close().finally(() => port.close());
      return;
  }
}

port.on('message', (m: ToWorker) => {
  try {
    onMessage(m);
  } catch (e) {
    // Whatever failed, the request is answered (failed: INTERNAL unless the engine said more) and this thread keeps serving.
    if (m.t === 'run' || m.t === 'next') {
      try {
        closeAnswer();
      } catch {
        // Already answering INTERNAL.
      }
      post(m.t === 'run' ? { t: 'done', id: m.id, answer: failed(e) } : { t: 'fail', id: m.id, envelope: failed(e) });
    }
  }
});
post({ t: 'ready' });
