/**
 * A pooled store over one database file, for servers: no request runs on the caller's thread.
 *
 * - Reads run in worker threads, each with a `DynamicStore` on its own connection (WAL lets readers run beside the
 *   writer). Queries that pinpoint rows (an equality or a short `in` on an indexed field, what compileSelect calls
 *   a pinpoint) have a lane of their own, one worker that runs nothing else, so a flood of scans never queues them;
 *   general workers run everything else, and pinpoint queries too when they are idle.
 * - Writes run in one writer thread: they stay serialised and atomic, and a wait for another process's lock blocks
 *   that thread only.
 * - Every request may have a deadline (`maxQueryMs`) and an AbortSignal. Past either, its work stops: a queued
 *   request is dropped, a running one's worker is terminated and replaced (a write's transaction then dies with
 *   its connection), a query waiting for its consumer is closed; the request answers TIMEOUT.
 * - A query's answer leaves the worker as slices of its JSON text (1,000 documents or ~1 MB), the next one only
 *   when the consumer asks (`queryStream`), so a slow reader holds one slice. A worker held that way by a slow
 *   reader is replaced in its lane after a moment.
 * - A worker that dies answers its request INTERNAL and is replaced.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { schemaAnswer, typesAnswer, type BuiltinCatalogue, type CatalogueShape } from '../catalogue/index.js';
import { isPlainObject } from '../catalogue/validate.js';
import { DynamicStore, iteratePages, type ChangesOptions, type WatchOptions } from '../dynamic.js';
import { DataStoreError, fail, internalFailure, type Envelope, type ErrorCode } from '../envelope.js';
import { LIMITS } from '../limits.js';
import { resolveSettings, type OpenOptions, type Settings } from '../settings.js';
import { StoreBusyError, type ChangeEvent } from '../backend.js';
import { NotAStoreError } from '../sqlite/connection.js';
import { deserializeError, GATE, WRITES, type FromWorker, type Op, type SerializedError, type ToWorker, type WorkerConfig, type WorkerOpenOptions } from './protocol.js';

export interface PoolOptions<C extends CatalogueShape = BuiltinCatalogue> extends OpenOptions<C> {
  /** Worker threads for general reads (default `os.availableParallelism()`); one more serves pinpoint queries. */
  readers?: number;
  /**
   * Longest a request may take in ms, from the call to its last chunk: queueing, and a streamed answer's reading,
   * included (default: no limit). Past it the work stops and it answers TIMEOUT.
   */
  maxQueryMs?: number;
  /** Requests waiting for a worker, per lane (pinpoint reads, other reads, writes), beyond which a new one answers TIMEOUT at once (default: no limit). */
  maxQueued?: number;
  /** Extra reader threads started to replace workers held by slow readers of streamed answers (default 16). */
  maxParked?: number;
  /** The worker script: dist/server-worker.js beside the bundle by default; tests pass a bundle of src/server/worker.ts. */
  workerScript?: string | URL;
}

/** Per-request control: an AbortSignal stops the request's work as its deadline would. */
export interface RequestControl {
  signal?: AbortSignal;
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
  /** Stops the query and frees its worker; a later step of the iteration throws TIMEOUT (harmless after the end). */
  cancel(): void;
}

/** What the pool is doing, for tests and monitoring. */
export interface PoolStats {
  /** Live workers by lane; `busy` run a request, `parked` wait for their consumer, `stopping` are exiting. */
  workers: { fast: number; general: number; writer: number; busy: number; parked: number; stopping: number };
  queued: number;
  /** Workers terminated because their request was stopped (deadline, abort, cancel). */
  stopped: number;
  /** Workers that died on their own. */
  crashed: number;
  timeouts: number;
  aborts: number;
}

type Lane = 'fast' | 'general' | 'write';
type AnyDoc = Record<string, unknown>;

/** A slice of a query's answer as JSON text; the last one has `end`. */
interface Batch {
  text: string;
  end: boolean;
}

type Head = { kind: 'done'; answer: unknown } | { kind: 'text'; batch: Batch };

interface Job {
  readonly id: number;
  readonly op: Op;
  readonly args: unknown[];
  readonly userId: string;
  readonly lane: Lane;
  state: 'queued' | 'running' | 'parked' | 'ended';
  /** True once the first batch reached the consumer: a failure then rejects the next pull instead. */
  started: boolean;
  slot?: Slot;
  waiter?: { resolve: (v: Head | Batch) => void; reject: (e: unknown) => void };
  /** The failure the next pull rejects with, once no pull was waiting when it happened. */
  failed?: Envelope<never>;
  timer?: NodeJS.Timeout;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Slot {
  readonly worker: Worker;
  readonly lane: Lane;
  state: 'starting' | 'idle' | 'busy' | 'parked' | 'releasing' | 'stopping';
  job?: Job;
  /** Parked longer than PARK_MS: no longer counted in its lane, so a replacement starts. */
  longParked: boolean;
  parkTimer?: NodeJS.Timeout;
  /** The writer's commit gate (protocol.ts GATE), one per writer thread so a dying writer never sees the next one's. */
  gate?: Int32Array;
  cause?: unknown;
  ready: Promise<void>;
  /** Settles once the thread has exited (and #onExit has counted it out). */
  exited: Promise<void>;
  onReady: (error?: unknown) => void;
}

const POOL_OPTIONS = ['readers', 'maxQueryMs', 'maxQueued', 'maxParked', 'workerScript'];
const LANES: readonly Lane[] = ['write', 'fast', 'general'];
/** A query's answer per message: at most this many documents or about this many characters of JSON. */
const BATCH_ROWS = 1000;
const BATCH_CHARS = 1 << 20;
/** How long a worker may wait for its consumer before its lane starts a replacement. */
const PARK_MS = 50;
/** The CPU priority of general readers (see WorkerConfig.nice). */
const GENERAL_NICE = 10;

// A cast until ERROR_CODES (src/envelope.ts) lists TIMEOUT.
const TIMEOUT = 'TIMEOUT' as ErrorCode;

/** Where the worker script is: dist/server-worker.js beside the bundle that holds this code (cli.js, http.js, http.cjs). */
function defaultWorkerScript(): URL {
  // import.meta first: an ES module can see a global __filename that is not its own (`node -e` defines one); the CJS
  // build has an empty import.meta and its own __filename.
  const here = (import.meta as { url?: string }).url ?? pathToFileURL(__filename).href;
  return new URL(here.endsWith('.mjs') ? './server-worker.mjs' : './server-worker.js', here);
}

class PoolCore {
  readonly settings: Settings;
  readonly #file: string;
  readonly #script: URL;
  readonly #workerOptions: WorkerOpenOptions;
  readonly #clock: (() => unknown) | undefined;
  readonly #onError: ((error: unknown, requestId: string) => void) | undefined;
  readonly #readers: number;
  readonly #maxQueryMs: number;
  readonly #maxQueued: number;
  readonly #maxParked: number;
  /** Answers `types` and `schema`: they read the catalogue, never the file. */
  readonly #queues: Record<Lane, Job[]> = { write: [], fast: [], general: [] };
  readonly #slots: Slot[] = [];
  readonly #lanes: Record<Lane, { failures: number; retryAt: number; retryTimer?: NodeJS.Timeout }> = {
    write: { failures: 0, retryAt: 0 },
    fast: { failures: 0, retryAt: 0 },
    general: { failures: 0, retryAt: 0 },
  };
  readonly #stats = { stopped: 0, crashed: 0, timeouts: 0, aborts: 0 };
  /** Workers on their way out (terminated, or retired), until they exit: close() waits for them. */
  readonly #leaving = new Set<Slot>();
  #started = false;
  #nextId = 1;
  closed = false;
  #closing: Promise<void> | undefined;
  #drained: (() => void) | undefined;

  constructor(file: string, options: PoolOptions<CatalogueShape>) {
    // validate
    if (typeof file !== 'string') throw new TypeError('createPool: file must be a string path');
    if (file === '' || file === ':memory:') throw new TypeError("createPool: a pool needs a database file (':memory:' would give every worker a database of its own)");
    if (options === null || typeof options !== 'object') throw new TypeError('createPool: options must be an object');
    this.settings = resolveSettings(options as OpenOptions<CatalogueShape>, 'createPool', POOL_OPTIONS);
    const { readers = availableParallelism(), maxQueryMs = Infinity, maxQueued = Infinity, maxParked = 16, workerScript, ...open } = options;
    if (!Number.isInteger(readers) || readers < 1) throw new RangeError('createPool: readers must be a positive integer');
    if (typeof maxQueryMs !== 'number' || !(maxQueryMs > 0)) throw new RangeError('createPool: maxQueryMs must be a positive number of ms');
    if (maxQueued !== Infinity && (!Number.isInteger(maxQueued) || maxQueued < 0)) throw new RangeError('createPool: maxQueued must be a non-negative integer');
    if (!Number.isInteger(maxParked) || maxParked < 0) throw new RangeError('createPool: maxParked must be a non-negative integer');
    if (typeof open.ids === 'function') throw new TypeError("createPool: ids must be an integer seed: a function cannot run in the pool's worker threads");
    const script = workerScript === undefined ? defaultWorkerScript() : workerScript instanceof URL ? workerScript : pathToFileURL(workerScript);
    if (script.protocol === 'file:' && !existsSync(fileURLToPath(script))) {
      throw new TypeError(`createPool: no worker script at ${fileURLToPath(script)} (dist/server-worker.js is built by tsup; tests bundle src/server/worker.ts)`);
    }
    // apply defaults
    const { clock, onError, ...cloneable } = open;
    const workerOptions = cloneable as WorkerOpenOptions;
    try {
      structuredClone(workerOptions);
    } catch {
      throw new TypeError('createPool: options must be plain data (catalogues, indexes, keys) besides clock and onError, to reach the worker threads');
    }
    this.#file = file;
    this.#script = script;
    this.#workerOptions = workerOptions;
    this.#clock = clock;
    this.#onError = onError;
    this.#readers = readers;
    this.#maxQueryMs = maxQueryMs;
    this.#maxQueued = maxQueued;
    this.#maxParked = maxParked;
  }

  /** Starts the writer (it brings the file's schema up to date), then the readers; rejects with the first that cannot open. */
  async start(): Promise<void> {
    try {
      await this.#spawn('write').ready;
      // Readers start once the schema is in place, so they do not all try to create it at once.
      this.#started = true;
      this.#schedule();
      await Promise.all(this.#slots.map((s) => s.ready));
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  // ---- requests ------------------------------------------------------------------------

  /** Queues a request; `head` is its first answer: a whole envelope, or the first slice of a query's answer. */
  submit(op: Op, args: unknown[], userId: string, control: RequestControl | undefined): { job: Job | undefined; head: Promise<Head> } {
    this.open();
    const signal = controlSignal(control);
    const lane: Lane = WRITES.has(op) ? 'write' : this.#pinpoints(args[0], args[1]) ? 'fast' : 'general';
    const job: Job = { id: this.#nextId++, op, args, userId, lane, state: 'queued', started: false };
    const head = new Promise<Head>((resolve, reject) => (job.waiter = { resolve: resolve as (v: Head | Batch) => void, reject }));
    if (signal?.aborted) {
      this.#stats.aborts++;
      this.#settle(job, this.#cancelled(job, 'aborted'));
      return { job: undefined, head };
    }
    // Bounded per lane: a flood of scans never gets a pinpoint query or a write refused.
    const queued = this.#queues[lane].length;
    if (queued >= this.#maxQueued) {
      this.#settle(job, fail([{ code: TIMEOUT, message: `the store is busy: ${queued} requests are waiting for a worker (maxQueued); try again later` }]));
      return { job: undefined, head };
    }
    if (this.#maxQueryMs !== Infinity) {
      job.timer = setTimeout(() => {
        if (this.stop(job, this.#cancelled(job, 'timeout'))) this.#stats.timeouts++;
      }, this.#maxQueryMs);
    }
    if (signal) {
      job.signal = signal;
      job.onAbort = () => {
        if (this.stop(job, this.#cancelled(job, 'aborted'))) this.#stats.aborts++;
      };
      signal.addEventListener('abort', job.onAbort, { once: true });
    }
    this.#queues[lane].push(job);
    this.#schedule();
    return { job, head };
  }

  /** The next slice of a query whose consumer wants more; rejects with a DataStoreError when the query failed. */
  pull(job: Job): Promise<Batch> {
    if (job.failed) return Promise.reject(new DataStoreError(job.failed));
    const slot = job.slot;
    if (job.state !== 'parked' || !slot) return Promise.reject(new TypeError('query stream: the next batch was asked for twice at once'));
    return new Promise<Batch>((resolve, reject) => {
      job.waiter = { resolve: resolve as (v: Head | Batch) => void, reject };
      job.state = 'running';
      this.#unpark(slot);
      slot.state = 'busy';
      slot.worker.ref();
      this.#post(slot, { t: 'next', id: job.id });
    });
  }

  /** The consumer lost interest: the query stops, as on abort, with nobody left to answer. */
  cancel(job: Job): void {
    void this.stop(job, this.#cancelled(job, 'aborted'));
  }

  /**
   * Stops a request's work and answers it `env`: dropped from its queue, its worker terminated, or its answer closed.
   * False when there was nothing to stop: it had ended, or it is a write already committing (its answer follows).
   */
  stop(job: Job, env: Envelope<never>): boolean {
    const slot = job.slot;
    switch (job.state) {
      case 'ended':
        return false;
      case 'queued': {
        const q = this.#queues[job.lane];
        const at = q.indexOf(job);
        if (at >= 0) q.splice(at, 1);
        break;
      }
      case 'running':
        if (slot?.gate && Atomics.compareExchange(slot.gate, 0, GATE.RUNNING, GATE.CANCELLED) === GATE.COMMITTING) {
          // The writer is committing: the write is durable, and its true answer is on its way.
          return false;
        }
        if (slot) this.#kill(slot);
        break;
      case 'parked':
        if (slot) {
          // The worker waits for `next`: closing its answer is enough, no thread need die.
          this.#unpark(slot);
          slot.state = 'releasing';
          slot.job = undefined;
          this.#post(slot, { t: 'cancel', id: job.id });
        }
        break;
    }
    this.#settle(job, env);
    return true;
  }

  /** Answers a job (the first answer, a failure, or a failure of its next pull) and forgets it. */
  #settle(job: Job, env: Envelope<never>): void {
    this.#end(job);
    const waiter = job.waiter;
    job.waiter = undefined;
    if (!job.started) waiter?.resolve({ kind: 'done', answer: env });
    else if (waiter) waiter.reject(new DataStoreError(env));
    else job.failed = env;
  }

  #end(job: Job): void {
    job.state = 'ended';
    if (job.timer) clearTimeout(job.timer);
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    job.timer = undefined;
    job.onAbort = undefined;
    if (job.slot?.job === job) job.slot.job = undefined;
    this.#checkDrained();
  }

  #cancelled(job: Job, why: 'timeout' | 'aborted' | 'closed'): Envelope<never> {
    const write = job.lane === 'write';
    const tail = write ? '; nothing was written' : '';
    if (why === 'closed') return fail([{ code: 'INTERNAL', message: `the store was closed before this request was answered${tail}` }]);
    const message =
      why === 'timeout'
        ? `the request took longer than maxQueryMs (${this.#maxQueryMs} ms) and was stopped${tail}`
        : `the request was cancelled by its caller and stopped${tail}`;
    return fail([{ code: TIMEOUT, message }]);
  }

  /** Whether a query pinpoints rows: an equality (or an `in` of at most 100 values) on a field that leads an index. */
  #pinpoints(type: unknown, query: unknown): boolean {
    if (typeof type !== 'string' || type.length > LIMITS.nameLength || !isPlainObject(query)) return false;
    const info = this.settings.catalogue.resolve(type);
    const keyed = info && this.settings.keyed.get(info.name);
    if (!keyed) return false;
    let seen = 0;
    // Bounded: the parser refuses more conditions than this anyway, and a hostile query may have a million keys.
    for (const key in query) {
      if (++seen > LIMITS.conditions) return false;
      if (key.length > LIMITS.nameLength || !keyed.has(key) || !Object.hasOwn(query, key)) continue;
      let v = query[key];
      if (isPlainObject(v)) {
        const ops = Object.keys(v);
        if (ops.length !== 1) continue;
        const op = ops[0]!.toLowerCase();
        v = op === 'eq' || op === 'in' ? v[ops[0]!] : undefined;
      }
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return true;
      if (Array.isArray(v) && v.length > 0 && v.length <= 100) return true;
    }
    return false;
  }

  // ---- workers -------------------------------------------------------------------------

  #spawn(lane: Lane): Slot {
    const gate = lane === 'write' ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
    const config: WorkerConfig = {
      file: this.#file,
      options: this.#workerOptions,
      role: lane === 'write' ? 'writer' : 'reader',
      batchRows: BATCH_ROWS,
      batchChars: BATCH_CHARS,
      clock: this.#clock !== undefined,
      // Elsewhere setpriority(0) would lower the whole process, not the thread.
      nice: lane === 'general' && process.platform === 'linux' ? GENERAL_NICE : 0,
      ...(gate ? { gate: gate.buffer as SharedArrayBuffer } : {}),
    };
    const worker = new Worker(this.#script, { workerData: config });
    let onReady!: (error?: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => (onReady = (e) => (e === undefined ? resolve() : reject(e))));
    // Nobody awaits a replacement's start: its failure is handled on exit, never an unhandled rejection.
    ready.catch(() => undefined);
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const slot: Slot = { worker, lane, state: 'starting', longParked: false, ready, onReady, exited, ...(gate ? { gate } : {}) };
    this.#slots.push(slot);
    worker.on('message', (m: FromWorker) => this.#onMessage(slot, m));
    // The first cause wins: a worker that could not open says why before its uncaught error ends it.
    worker.on('error', (e) => (slot.cause ??= e));
    worker.on('messageerror', (e) => (slot.cause ??= e));
    // Whoever awaits `exited` resumes after this listener has run: promise reactions wait for the event's listeners.
    worker.on('exit', (code) => this.#onExit(slot, code));
    return slot;
  }

  #onMessage(slot: Slot, m: FromWorker): void {
    if (m.t === 'onError') {
      this.#report(deserializeError(m.error), m.requestId);
      return;
    }
    if (slot.state === 'stopping') return;
    switch (m.t) {
      case 'ready':
        slot.state = 'idle';
        slot.worker.unref();
        this.#lanes[slot.lane].failures = 0;
        slot.onReady();
        this.#schedule();
        return;
      case 'openFailed':
        slot.cause = openError(m.error);
        return;
      case 'released':
        if (slot.state === 'releasing') this.#release(slot);
        return;
      case 'done':
      case 'fail': {
        const job = slot.job;
        if (!job || job.id !== m.id) return;
        this.#release(slot);
        if (m.t === 'fail') {
          this.#settle(job, m.envelope as Envelope<never>);
          return;
        }
        this.#end(job);
        const waiter = job.waiter;
        job.waiter = undefined;
        waiter?.resolve({ kind: 'done', answer: m.answer });
        return;
      }
      case 'text': {
        const job = slot.job;
        if (!job || job.id !== m.id) return;
        const batch: Batch = { text: m.text, end: m.end };
        if (m.end) {
          this.#release(slot);
          this.#end(job);
        } else {
          job.state = 'parked';
          this.#park(slot);
        }
        const first = !job.started;
        job.started = true;
        const waiter = job.waiter;
        job.waiter = undefined;
        waiter?.resolve(first ? { kind: 'text', batch } : batch);
        return;
      }
    }
  }

  #onExit(slot: Slot, code: number): void {
    const at = this.#slots.indexOf(slot);
    if (at >= 0) this.#slots.splice(at, 1);
    this.#unpark(slot);
    if (slot.state === 'stopping') {
      this.#leaving.delete(slot);
      this.#checkDrained();
      this.#schedule();
      return;
    }
    const cause = slot.cause ?? new Error(`a pool worker exited with code ${code}`);
    if (slot.state === 'starting') {
      slot.onReady(cause);
      this.#startFailed(slot.lane, cause);
    } else {
      this.#stats.crashed++;
      const job = slot.job;
      if (job && job.state !== 'ended') this.#settle(job, this.#internal(cause));
    }
    this.#schedule();
  }

  /** A worker could not start: back off, and after three failures in a row answer its lane's queue rather than hold it. */
  #startFailed(lane: Lane, cause: unknown): void {
    const l = this.#lanes[lane];
    l.failures++;
    l.retryAt = Date.now() + Math.min(10_000, 250 * 2 ** l.failures);
    if (this.closed || l.failures < 3) return;
    for (const job of this.#queues[lane].splice(0)) this.#settle(job, this.#internal(cause));
  }

  #post(slot: Slot, m: ToWorker): void {
    slot.worker.postMessage(m);
  }

  #dispatch(slot: Slot, job: Job): void {
    job.state = 'running';
    job.slot = slot;
    slot.job = job;
    slot.state = 'busy';
    slot.worker.ref();
    let now: unknown;
    if (WRITES.has(job.op) && this.#clock) {
      try {
        now = this.#clock();
      } catch (e) {
        this.#release(slot);
        this.#settle(job, this.#internal(e));
        return;
      }
    }
    if (slot.gate) Atomics.store(slot.gate, 0, GATE.RUNNING);
    try {
      this.#post(slot, { t: 'run', id: job.id, op: job.op, args: job.args, userId: job.userId, ...(now !== undefined ? { now } : {}) });
    } catch {
      // A function, symbol or class instance cannot be structured-cloned into the worker.
      this.#release(slot);
      this.#settle(job, fail([{ code: 'INVALID_REQUEST', message: "request: holds a value that cannot reach the store's worker threads (a function, symbol or class instance); send JSON values" }]));
    }
  }

  /** A worker is free again: back to work, or retired when its lane has more workers than it needs. */
  #release(slot: Slot): void {
    this.#unpark(slot);
    slot.job = undefined;
    if (slot.gate) Atomics.store(slot.gate, 0, GATE.IDLE);
    slot.state = 'idle';
    slot.worker.unref();
    if (this.closed || this.#active(slot.lane) > this.#target(slot.lane)) {
      this.#retire(slot);
      return;
    }
    this.#schedule();
  }

  #park(slot: Slot): void {
    slot.state = 'parked';
    slot.parkTimer = setTimeout(() => {
      slot.longParked = true;
      this.#schedule();
    }, PARK_MS);
    slot.parkTimer.unref();
  }

  #unpark(slot: Slot): void {
    if (slot.parkTimer) clearTimeout(slot.parkTimer);
    slot.parkTimer = undefined;
    slot.longParked = false;
  }

  /** Terminates a worker whose request was stopped (the work really stops), and starts its replacement. */
  #kill(slot: Slot): void {
    this.#stats.stopped++;
    this.#stopSlot(slot);
    // Its exit is awaited by nobody but close(): a failure to terminate is not the request's concern.
    void slot.worker.terminate().catch(() => undefined);
    this.#schedule();
  }

  /** Asks an idle worker to close its store and exit. */
  #retire(slot: Slot): void {
    this.#stopSlot(slot);
    try {
      this.#post(slot, { t: 'close' });
    } catch {
      void slot.worker.terminate().catch(() => undefined);
    }
  }

  #stopSlot(slot: Slot): void {
    this.#unpark(slot);
    slot.state = 'stopping';
    slot.job = undefined;
    this.#leaving.add(slot);
    const at = this.#slots.indexOf(slot);
    if (at >= 0) this.#slots.splice(at, 1);
  }

  /** Workers of a lane able to take work soon: all but those stopping and those held long by a slow consumer. */
  #active(lane: Lane): number {
    let n = 0;
    for (const s of this.#slots) if (s.lane === lane && !(s.state === 'parked' && s.longParked)) n++;
    return n;
  }

  #target(lane: Lane): number {
    return lane === 'general' ? this.#readers : 1;
  }

  #schedule(): void {
    if (this.closed) return;
    for (const lane of LANES) {
      for (const slot of this.#slots) {
        if (slot.lane !== lane || slot.state !== 'idle') continue;
        const job = this.#queues[lane].shift() ?? (lane === 'general' ? this.#queues.fast.shift() : undefined);
        if (!job) break;
        this.#dispatch(slot, job);
      }
      const l = this.#lanes[lane];
      while ((lane === 'write' || this.#started) && this.#active(lane) < this.#target(lane) && this.#roomFor(lane)) {
        if (Date.now() < l.retryAt) {
          l.retryTimer ??= setTimeout(() => {
            l.retryTimer = undefined;
            this.#schedule();
          }, l.retryAt - Date.now()).unref();
          break;
        }
        this.#spawn(lane);
      }
    }
  }

  /** Reader threads are capped: the lanes' own plus maxParked replacements for workers held by slow consumers. */
  #roomFor(lane: Lane): boolean {
    if (lane === 'write') return true;
    let readers = 0;
    for (const s of this.#slots) if (s.lane !== 'write') readers++;
    return readers < this.#readers + 1 + this.#maxParked;
  }

  // ---- errors and closing ----------------------------------------------------------------

  #internal(cause: unknown): Envelope<never> {
    return internalFailure(cause, (error, requestId) => this.#report(error, requestId));
  }

  #report(error: unknown, requestId: string): void {
    try {
      this.#onError?.(error, requestId);
    } catch {
      // A throwing hook must not turn an answer into a crash of the host.
    }
  }

  /** Throws once the pool is closed: calling a closed store is misuse. */
  open(): void {
    if (this.closed) throw new TypeError('The DataStore is closed');
  }

  types(): Promise<Envelope<string>> {
    this.open();
    return Promise.resolve(typesAnswer(this.settings.catalogue));
  }

  /** A connection of this thread to the file, for the change feed: polling it is a cheap read (data_version). */
  #feed: DynamicStore | undefined;

  feed(): DynamicStore {
    this.open();
    this.#feed ??= DynamicStore.open(this.#file, { ...this.#workerOptions, clock: this.#clock, onError: this.#onError } as OpenOptions<CatalogueShape>);
    return this.#feed;
  }

  schema(type: string): Promise<Envelope<{ name: string; type: string }>> {
    this.open();
    return Promise.resolve(schemaAnswer(this.settings.catalogue, type));
  }

  stats(): PoolStats {
    const count = (lane: Lane) => this.#slots.filter((s) => s.lane === lane).length;
    return {
      workers: {
        fast: count('fast'),
        general: count('general'),
        writer: count('write'),
        busy: this.#slots.filter((s) => s.state === 'busy').length,
        parked: this.#slots.filter((s) => s.state === 'parked').length,
        stopping: this.#leaving.size,
      },
      queued: this.#queues.write.length + this.#queues.fast.length + this.#queues.general.length,
      ...this.#stats,
    };
  }

  #running(): number {
    let n = 0;
    for (const s of this.#slots) if (s.job) n++;
    return n;
  }

  #checkDrained(): void {
    if (this.#drained && this.#running() === 0) this.#drained();
  }

  /**
   * Closes the pool: queued requests answer that the store closed, reads in progress stop, writes in progress finish;
   * then every worker closes its store (the last one checkpoints the WAL) and exits.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.closed = true;
      // Watches end with their store.
      void this.#feed?.close();
      for (const lane of LANES) for (const job of this.#queues[lane].splice(0)) this.#settle(job, this.#cancelled(job, 'closed'));
      for (const slot of [...this.#slots]) {
        const job = slot.job;
        if (job && job.lane !== 'write') void this.stop(job, this.#cancelled(job, 'closed'));
      }
      if (this.#running() > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
      for (const l of Object.values(this.#lanes)) if (l.retryTimer) clearTimeout(l.retryTimer);
      for (const slot of [...this.#slots]) {
        if (slot.state === 'starting') {
          this.#stopSlot(slot);
          void slot.worker.terminate().catch(() => undefined);
        } else this.#retire(slot);
      }
      // A worker that does not exit in time (a native step still running) is terminated.
      const late = setTimeout(() => {
        for (const s of this.#leaving) void s.worker.terminate().catch(() => undefined);
      }, 5000);
      await Promise.all([...this.#leaving].map((s) => s.exited));
      clearTimeout(late);
    })();
    return this.#closing;
  }
}

function controlSignal(control: RequestControl | undefined): AbortSignal | undefined {
  if (control === undefined) return undefined;
  if (control === null || typeof control !== 'object') throw new TypeError('control: expected { signal?: AbortSignal }');
  const { signal } = control;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('control.signal: expected an AbortSignal');
  return signal;
}

function openError(s: SerializedError): Error {
  if (s.code === 'NOT_A_STORE') return new NotAStoreError(s.message);
  if (s.code === 'STORE_BUSY') return new StoreBusyError(s.message);
  return deserializeError(s);
}

/** The text chunks of a query's answer, each pulled from the worker when the consumer asks for it. */
async function* chunks(core: PoolCore, job: Job, first: Batch): AsyncGenerator<string, void, undefined> {
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
      batch = await core.pull(job);
    }
  } finally {
    // Broken out of, or failed: the query stops and its worker is freed.
    if (!finished) core.cancel(job);
  }
}

class PoolQueryStream implements QueryStream {
  readonly failure: Envelope<AnyDoc> | null;
  readonly #core: PoolCore;
  readonly #job: Job | undefined;
  readonly #first: Batch;
  #iterated = false;

  constructor(core: PoolCore, job: Job | undefined, head: Head) {
    this.#core = core;
    this.#job = job;
    const whole = head.kind === 'done' ? (head.answer as Envelope<AnyDoc>) : undefined;
    this.failure = whole && !whole.success ? whole : null;
    this.#first = head.kind === 'text' ? head.batch : { text: JSON.stringify(whole), end: true };
  }

  cancel(): void {
    if (this.#job) this.#core.cancel(this.#job);
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    if (this.#iterated) throw new TypeError('a query stream can be iterated once');
    this.#iterated = true;
    return chunks(this.#core, this.#job!, this.#first);
  }
}

/**
 * A store over a database file whose requests run in worker threads (see the module comment): the untyped
 * operations of `DynamicStore`, each taking an optional `{ signal }`, plus `queryStream`. Satisfies the HTTP
 * adapter's `StoreLike`. Create it with `createPool`.
 * @example
 * const store = await createPool('wells.db', { maxQueryMs: 30_000 });
 * const page = await store.query('Well', { basinName: 'Permian' }, { limit: 50 });
 * await store.close();
 */
export class PooledStore {
  readonly #core: PoolCore;
  readonly #userId: string;

  private constructor(core: PoolCore, userId: string) {
    this.#core = core;
    this.#userId = userId;
  }

  /** See `createPool`. */
  static async open<C extends CatalogueShape = BuiltinCatalogue>(file: string, options: PoolOptions<C> = {}): Promise<PooledStore> {
    const core = new PoolCore(file, options as PoolOptions<CatalogueShape>);
    await core.start();
    return new PooledStore(core, core.settings.userId);
  }

  /** The same pool acting as another user (createdBy/updatedBy of its writes). */
  withUser(userId: string): PooledStore {
    if (typeof userId !== 'string' || userId === '') throw new TypeError('withUser: userId must be a non-empty string');
    return new PooledStore(this.#core, userId);
  }

  /** The user this view writes as. */
  get userId(): string {
    return this.#userId;
  }

  /** True once `close()` was called (on this view or any other). */
  get closed(): boolean {
    return this.#core.closed;
  }

  /**
   * Documents matching `query`, as `DynamicStore#query` answers them, read in a worker; `total` counts every match.
   * @example await store.query('Well', { pwi: 'W1' }, undefined, { signal: AbortSignal.timeout(1000) })
   */
  async query(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<AnyDoc>> {
    const { job, head } = this.#core.submit('query', [type, query, options], this.#userId, control);
    const first = await head;
    if (first.kind === 'done') return first.answer as Envelope<AnyDoc>;
    const texts: string[] = [];
    let batch = first.batch;
    try {
      for (;;) {
        texts.push(batch.text);
        if (batch.end) break;
        batch = await this.#core.pull(job!);
      }
    } catch (e) {
      if (DataStoreError.is(e)) return e.envelope as Envelope<AnyDoc>;
      throw e;
    }
    return JSON.parse(texts.join('')) as Envelope<AnyDoc>;
  }

  /**
   * Every document matching `query`, read a page at a time in the readers (see `DynamicStore#iterate`).
   * @example for await (const well of store.iterate('Well', { basinName: 'Permian' })) write(well);
   */
  async *iterate(type: string, query?: unknown, options?: unknown, control?: RequestControl): AsyncGenerator<AnyDoc, void, undefined> {
    this.#core.open();
    yield* iteratePages((o) => this.query(type, query, o, control), options);
  }

  /**
   * A query's answer as JSON text chunks, pulled one batch (≤1,000 documents or ~1 MB) at a time: resolves once the
   * first batch (or the refusal) is ready, so `failure` tells the status before anything is written.
   * @example
   * const answer = await store.queryStream('Well', {}, undefined, { signal });
   * res.writeHead(answer.failure ? statusOf(answer.failure) : 200, headers);
   * for await (const chunk of answer) if (!res.write(chunk)) await once(res, 'drain');
   * res.end();
   */
  async queryStream(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<QueryStream> {
    const { job, head } = this.#core.submit('query', [type, query, options], this.#userId, control);
    return new PoolQueryStream(this.#core, job, await head);
  }

  /**
   * Inserts documents in the writer thread (see `DynamicStore#insert`).
   * @example await store.insert('Well', [{ pwi: 'W1' }], { atomic: true })
   */
  insert(type: string, docs: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<never>> {
    return this.#write('insert', [type, docs, options], control);
  }

  /**
   * Inserts documents of several types in one transaction, all or nothing (see `DynamicStore#insertMany`).
   * @example await store.insertMany([{ type: 'Well', docs: wells }, { type: 'DailyProduction', docs: daily }])
   */
  async insertMany(parts: readonly { type: string; docs: unknown }[], options?: { activityId?: string }, control?: RequestControl): Promise<Envelope<never>[]> {
    const { head } = this.#core.submit('insertMany', [parts, options], this.#userId, control);
    const answer = ((await head) as { answer: unknown }).answer;
    return Array.isArray(answer) ? (answer as Envelope<never>[]) : [answer as Envelope<never>];
  }

  /**
   * Upserts by id (see `DynamicStore#replace`).
   * @example await store.replace('Well', [{ id, pwi: 'W1' }])
   */
  replace(type: string, docs: unknown, options?: { activityId?: string }, control?: RequestControl): Promise<Envelope<never>> {
    return this.#write('replace', [type, docs, options], control);
  }

  /**
   * Sets fields on every match (see `DynamicStore#update`).
   * @example await store.update('Well', { pwi: 'W1' }, { statusCurrent: 'Producing' })
   */
  update(type: string, query: unknown, body: unknown, options?: { activityId?: string }, control?: RequestControl): Promise<Envelope<never>> {
    return this.#write('update', [type, query, body, options], control);
  }

  /**
   * Deletes every match; an empty query is refused (see `DynamicStore#delete`).
   * @example await store.delete('Well', { pwi: 'W1' })
   */
  delete(type: string, query: unknown, options?: { activityId?: string }, control?: RequestControl): Promise<Envelope<never>> {
    return this.#write('delete', [type, query, options], control);
  }

  /** Names of every type; answered at once, without a worker (the catalogue is not in the file). */
  types(): Promise<Envelope<string>> {
    return this.#core.types();
  }

  /** The change feed as an async iterator (see DynamicStore.watch), read on this thread's own connection. */
  watch(type?: string, options?: WatchOptions): AsyncGenerator<ChangeEvent, void, undefined> {
    return this.#core.feed().watch(type, options);
  }

  /** The change feed's long-poll form (see DynamicStore.changes). */
  changes(type?: string, options?: ChangesOptions): Promise<Envelope<ChangeEvent>> {
    return this.#core.feed().changes(type, options);
  }

  /** A type's fields and kinds; answered at once, without a worker. */
  schema(type: string): Promise<Envelope<{ name: string; type: string }>> {
    return this.#core.schema(type);
  }

  /** Workers, queue and stop counts, for tests and monitoring. */
  stats(): PoolStats {
    return this.#core.stats();
  }

  /**
   * Closes the pool (see PoolCore#close): further calls throw; resolves once every worker has exited.
   * @example process.on('SIGTERM', () => void store.close());
   */
  close(): Promise<void> {
    return this.#core.close();
  }

  async #write(op: Op, args: unknown[], control: RequestControl | undefined): Promise<Envelope<never>> {
    const { head } = this.#core.submit(op, args, this.#userId, control);
    return ((await head) as { answer: unknown }).answer as Envelope<never>;
  }
}

/**
 * Opens a pooled store over a database file (created if missing): reads in `readers` worker threads plus one for
 * pinpoint queries, writes in one writer thread, each request bounded by `maxQueryMs`. Resolves once every worker
 * has opened the file; rejects as `DataStore.open` would (NotAStoreError for a file that is not a store).
 * @example
 * const store = await createPool('wells.db', { readers: 2, maxQueryMs: 30_000 });
 * http.createServer(createNodeHandler(store)).listen(8080, '127.0.0.1');
 */
export function createPool<C extends CatalogueShape = BuiltinCatalogue>(file: string, options: PoolOptions<C> = {}): Promise<PooledStore> {
  return PooledStore.open(file, options);
}
