/**
 * The pool's scheduler: requests queue per lane (cheap reads, other reads, writes), run on a free worker of their
 * lane (general readers also take cheap reads when idle), and are stopped past their deadline or on abort: a
 * queued one dropped, a running one's worker terminated and replaced, a parked one closed. It keeps the lanes
 * staffed (workers.ts keeps the threads) and answers every request exactly once. A pinpoint (one document at most,
 * by a unique key) is read on this thread, through its own store: two hops between threads cost more than its read.
 */
import { existsSync } from 'node:fs';
import { types } from 'node:util';
import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { schemaAnswer, typesAnswer, type CatalogueShape } from '../catalogue/index.js';
import { isPlainObject } from '../catalogue/validate.js';
import { DynamicStore } from '../store.js';
import { andThen, orCatch } from '../backend.js';
import { textsOf } from '../core/slices.js';
import { DataStoreError, fail, internalFailure, type Envelope } from '../envelope.js';
import { LIMITS } from '../limits.js';
import { includeDeletedOf, parseQuery } from '../query/parse.js';
import { KeyEstimates, openDatabase, type Db } from '../sqlite/index.js';
import { pinpoint, resolveSettings, uniqueAlone, type OpenOptions, type Settings } from '../settings.js';
import type { RequestControl } from '../core/store-like.js';
import type { PoolOptions, PoolStats } from './pool.js';
import { deserializeError, GATE, WRITES, type FromWorker, type Op, type WorkerOpenOptions } from './protocol.js';
import type { Batch, Head, Puller } from './stream.js';
import { defaultWorkerScript, LANES, SLICE, WorkerSet, type Lane, type Slot } from './workers.js';

/** One request, from its call to its last answer. */
export interface Job {
  readonly id: number;
  readonly op: Op;
  readonly args: unknown[];
  readonly userId: string;
  readonly lane: Lane;
  state: 'queued' | 'running' | 'parked' | 'ended';
  /** True once the first batch reached the consumer: a failure then rejects the next pull instead. */
  started: boolean;
  slot?: Slot<Job>;
  waiter?: { resolve: (v: Head | Batch) => void; reject: (e: unknown) => void };
  /** The failure the next pull rejects with, once no pull was waiting when it happened. */
  failed?: Envelope<never>;
  timer?: NodeJS.Timeout;
  /** Cuts a parked answer whose consumer does not ask for more within maxParkMs. */
  parkTimer?: NodeJS.Timeout;
  signal?: AbortSignal;
  onAbort?: () => void;
}

const POOL_OPTIONS = ['readers', 'maxQueryMs', 'maxQueued', 'maxParked', 'maxParkMs', 'workerScript'];

/**
 * Whether a value is JSON-like data — primitives, and arrays and plain objects of them, at most LIMITS.depth deep —
 * which reaches a worker as it is. A function, a symbol, a class instance or a proxy does not: such a request goes to
 * a worker's lane, to be refused there as ever. A getter that throws makes it not so (it would throw there too).
 */
function plainData(value: unknown, depth = 0): boolean {
  try {
    if (value === null || typeof value !== 'object') return typeof value !== 'function' && typeof value !== 'symbol';
    if (depth >= LIMITS.depth || types.isProxy(value) || !(Array.isArray(value) || isPlainObject(value))) return false;
    // Own enumerable keys only (a sparse array's holes are not walked), as a structured clone takes them.
    for (const key in value) if (!plainData((value as Record<string, unknown>)[key], depth + 1)) return false;
    return true;
  } catch {
    return false;
  }
}

/** Whether a query's options (plain data: see plainData) may ask for soft-deleted documents too: as the store reads them, or not readable. */
function includesDeleted(options: unknown): boolean {
  try {
    return isPlainObject(options) && includeDeletedOf(options.includeDeleted);
  } catch {
    // Refused where every query is, on a worker.
    return true;
  }
}

/** A request's signal, read only once it may wait: a node bridge makes its signal when it is first asked for. */
export function signalOf(control: RequestControl | undefined): AbortSignal | undefined {
  const signal = control?.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('control.signal: expected an AbortSignal');
  return signal;
}

/** Whether a request was given up before it was asked, told by `aborted` where the control has it, without its signal. */
function givenUp(control: RequestControl | undefined): boolean {
  const aborted = control?.aborted;
  return aborted === undefined ? signalOf(control)?.aborted === true : aborted === true;
}

/** Estimated rows at most which a query is cheap and takes the fast lane: one slice of an answer (BATCH_ROWS). */
export const FAST_ROWS = 1000;

export class Scheduler implements Puller<Job> {
  readonly settings: Settings;
  readonly #file: string;
  readonly #workerOptions: WorkerOpenOptions;
  readonly #workers: WorkerSet<Job>;
  readonly #clock: (() => unknown) | undefined;
  readonly #onError: ((error: unknown, requestId: string) => void) | undefined;
  readonly #readers: number;
  readonly #maxQueryMs: number;
  readonly #maxQueued: number;
  readonly #maxParked: number;
  readonly #maxParkMs: number;
  /** This thread's read connection, for the lanes' cost estimates; opened on the first query. */
  #db: Db | undefined;
  #estimates: KeyEstimates | undefined;
  readonly #queues: Record<Lane, Job[]> = { write: [], fast: [], general: [] };
  readonly #lanes: Record<Lane, { failures: number; retryAt: number; retryTimer?: NodeJS.Timeout }> = {
    write: { failures: 0, retryAt: 0 },
    fast: { failures: 0, retryAt: 0 },
    general: { failures: 0, retryAt: 0 },
  };
  readonly #stats = { stopped: 0, crashed: 0, timeouts: 0, aborts: 0 };
  readonly #routed: Record<Lane | 'main', number> = { main: 0, write: 0, fast: 0, general: 0 };
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
    const { readers = availableParallelism(), maxQueryMs = Infinity, maxQueued = Infinity, maxParked = 16, maxParkMs = 30_000, workerScript, ...open } = options;
    if (!Number.isInteger(readers) || readers < 1) throw new RangeError('createPool: readers must be a positive integer');
    if (typeof maxQueryMs !== 'number' || !(maxQueryMs > 0)) throw new RangeError('createPool: maxQueryMs must be a positive number of ms');
    if (maxQueued !== Infinity && (!Number.isInteger(maxQueued) || maxQueued < 0)) throw new RangeError('createPool: maxQueued must be a non-negative integer');
    if (!Number.isInteger(maxParked) || maxParked < 0) throw new RangeError('createPool: maxParked must be a non-negative integer');
    if (typeof maxParkMs !== 'number' || !(maxParkMs > 0)) throw new RangeError('createPool: maxParkMs must be a positive number of ms');
    if (typeof open.ids === 'function') throw new TypeError("createPool: ids must be an integer seed: a function cannot run in the pool's worker threads");
    const script = workerScript === undefined ? defaultWorkerScript() : workerScript instanceof URL ? workerScript : pathToFileURL(workerScript);
    if (script.protocol === 'file:' && !existsSync(fileURLToPath(script))) {
      throw new TypeError(`createPool: no worker script at ${fileURLToPath(script)} (dist/pool-worker.js is built by tsup; tests bundle src/pool/worker.ts)`);
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
    this.#workerOptions = workerOptions;
    this.#workers = new WorkerSet<Job>(
      { file, script, options: workerOptions, clock: clock !== undefined },
      { message: (slot, m) => this.#onMessage(slot, m), died: (slot, code) => this.#died(slot, code), changed: () => this.#changed() },
    );
    this.#clock = clock;
    this.#onError = onError;
    this.#readers = readers;
    this.#maxQueryMs = maxQueryMs;
    this.#maxQueued = maxQueued;
    this.#maxParked = maxParked;
    this.#maxParkMs = maxParkMs;
  }

  /** Starts the writer (it brings the file's schema up to date), then the readers; rejects with the first that cannot open. */
  async start(): Promise<void> {
    try {
      await this.#workers.spawn('write').ready;
      // Readers start once the schema is in place, so they do not all try to create it at once.
      this.#started = true;
      this.#schedule();
      await Promise.all(this.#workers.slots.map((s) => s.ready));
      // This thread's store, for pinpoints: opened once the writer has brought the schema up to date, so opening
      // writes nothing and waits for no lock; a file it cannot open fails the start as a worker's would.
      this.local();
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  // ---- requests ------------------------------------------------------------------------

  /**
   * Queues a request; `head` is its first answer: a whole envelope, or the first slice of a query's answer. A
   * pinpoint's is there at once (no promise): it was read in the call, and its control's signal never asked for.
   */
  submit(op: Op, args: unknown[], userId: string, control: RequestControl | undefined): { job: Job | undefined; head: Head | Promise<Head> } {
    this.open();
    const route = WRITES.has(op) ? 'write' : op === 'query' ? this.#readLane(args[0], args[1]) : 'general';
    // Read here when a worker could be sent it (one it could not be sent is refused there, as elsewhere), and not
    // with includeDeleted: with soft deletes a unique key's index holds live documents only, so that is no pinpoint.
    if (route === 'main' && plainData(args[1]) && plainData(args[2]) && !includesDeleted(args[2]) && !givenUp(control)) {
      this.#routed.main++;
      return { job: undefined, head: this.#readHere(args) };
    }
    const signal = signalOf(control);
    const lane: Lane = route === 'main' ? 'fast' : route;
    this.#routed[lane]++;
    const job: Job = { id: this.#nextId++, op, args, userId, lane, state: 'queued', started: false };
    const head = new Promise<Head>((resolve, reject) => (job.waiter = { resolve: resolve as (v: Head | Batch) => void, reject }));
    if (signal?.aborted || control?.aborted === true) {
      this.#stats.aborts++;
      this.#settle(job, this.#cancelled(job, 'aborted'));
      return { job: undefined, head };
    }
    // Bounded per lane: a flood of scans never gets a cheap query or a write refused.
    const queued = this.#queues[lane].length;
    if (queued >= this.#maxQueued) {
      this.#settle(job, fail([{ code: 'TIMEOUT', message: `the store is busy: ${queued} requests are waiting for a worker (maxQueued); try again later` }]));
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
    clearTimeout(job.parkTimer);
    return new Promise<Batch>((resolve, reject) => {
      job.waiter = { resolve: resolve as (v: Head | Batch) => void, reject };
      job.state = 'running';
      this.#workers.unpark(slot);
      slot.state = 'busy';
      slot.worker.ref();
      this.#workers.post(slot, { t: 'next', id: job.id });
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
          this.#workers.unpark(slot);
          slot.state = 'releasing';
          slot.job = undefined;
          this.#workers.post(slot, { t: 'cancel', id: job.id });
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
    clearTimeout(job.parkTimer);
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    job.timer = undefined;
    job.onAbort = undefined;
    if (job.slot?.job === job) job.slot.job = undefined;
    this.#checkDrained();
  }

  #cancelled(job: Job, why: 'timeout' | 'parked' | 'aborted' | 'closed'): Envelope<never> {
    const write = job.lane === 'write';
    const tail = write ? '; nothing was written' : '';
    if (why === 'closed') return fail([{ code: 'INTERNAL', message: `the store was closed before this request was answered${tail}` }]);
    const message =
      why === 'timeout'
        ? `the request took longer than maxQueryMs (${this.#maxQueryMs} ms) and was stopped${tail}`
        : why === 'parked'
          ? `the answer waited longer than maxParkMs (${this.#maxParkMs} ms) for its reader to ask for more, and was stopped`
          : `the request was cancelled by its caller and stopped${tail}`;
    return fail([{ code: 'TIMEOUT', message }]);
  }

  /**
   * Where a query runs. A pinpoint (see `pinpoint`) on this thread ('main'). A cheap query on the fast lane, the one
   * rule of that lane: an equality or `in` on a field leading an index whose estimated matches (values × rows per
   * key, KeyEstimates) are at most FAST_ROWS. Anything else, and a query that does not parse, on the general lane.
   */
  #readLane(type: unknown, query: unknown): 'main' | 'fast' | 'general' {
    if (typeof type !== 'string' || type.length > LIMITS.nameLength) return 'general';
    const info = this.settings.catalogue.resolve(type);
    const keyed = info && this.settings.keyed.get(info.name);
    if (!info || !keyed) return 'general';
    // On the event loop: a hostile query of a million keys is refused by its worker, not listed here.
    let keys = 0;
    if (isPlainObject(query)) for (const _ in query) if (++keys > LIMITS.conditions) return 'general';
    let conditions;
    try {
      conditions = parseQuery({ type: info, strict: this.settings.strict }, query ?? {}).conditions;
    } catch {
      return 'general';
    }
    if (pinpoint(this.settings, info.name, conditions)) return 'main';
    for (const c of conditions) {
      if (!c.path.scalar || c.path.steps.length !== 1) continue;
      const field = c.path.steps[0]!.name;
      if (!keyed.has(field)) continue;
      const values = c.op === 'eq' && c.value !== null ? 1 : c.op === 'in' ? c.values.length : 0;
      if (values === 0) continue;
      // A unique key of one field finds one row per value; any other index is estimated from the file.
      const unique = uniqueAlone(this.settings, info.name, field);
      const perKey = unique ? 1 : this.#keyEstimates().rowsPerKey(info.name, field, this.settings.softDelete.includes(info.name));
      if (values * perKey <= FAST_ROWS) return 'fast';
    }
    return 'general';
  }

  /**
   * A pinpoint read on this thread's own store, whole (one document at most: one slice). Without a deadline or an
   * abort: a read of one row by a unique index has nothing to stop.
   */
  #readHere(args: unknown[]): Head | Promise<Head> {
    const [type, query, options] = args;
    return orCatch(
      () =>
        andThen(this.local().queryText(type as string, query, options, SLICE), ({ failure, slices }): Head =>
          failure ? { kind: 'done', answer: failure } : { kind: 'text', batch: { text: textsOf(slices).join(''), end: true } },
        ),
      (e): Head => ({ kind: 'done', answer: this.#internal(e) }),
    );
  }

  #keyEstimates(): KeyEstimates {
    if (!this.#estimates) {
      this.#db = openDatabase(this.#file, this.settings.busyTimeoutMs, 0);
      this.#estimates = new KeyEstimates(this.#db);
    }
    return this.#estimates;
  }

  // ---- workers ---------------------------------------------------------------------------

  #onMessage(slot: Slot<Job>, m: FromWorker): void {
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
          this.#workers.park(slot);
          // A reader that does not read holds no worker for long: its answer is cut.
          job.parkTimer = setTimeout(() => {
            if (job.state === 'parked' && this.stop(job, this.#cancelled(job, 'parked'))) this.#stats.timeouts++;
          }, this.#maxParkMs);
          job.parkTimer.unref();
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

  /** A worker exited on its own: a start that failed, or a crash (its request answers INTERNAL). */
  #died(slot: Slot<Job>, code: number): void {
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

  /** A worker left, or waited long for its consumer: work may be able to run. */
  #changed(): void {
    this.#checkDrained();
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

  #dispatch(slot: Slot<Job>, job: Job): void {
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
      this.#workers.post(slot, { t: 'run', id: job.id, op: job.op, args: job.args, userId: job.userId, ...(now !== undefined ? { now } : {}) });
    } catch {
      // A function, symbol or class instance cannot be structured-cloned into the worker.
      this.#release(slot);
      this.#settle(job, fail([{ code: 'INVALID_REQUEST', message: "request: holds a value that cannot reach the store's worker threads (a function, symbol or class instance); send JSON values" }]));
    }
  }

  /** A worker is free again: back to work, or retired when its lane has more workers than it needs. */
  #release(slot: Slot<Job>): void {
    this.#workers.unpark(slot);
    slot.job = undefined;
    if (slot.gate) Atomics.store(slot.gate, 0, GATE.IDLE);
    slot.state = 'idle';
    slot.worker.unref();
    if (this.closed || this.#workers.active(slot.lane) > this.#target(slot.lane)) {
      this.#workers.retire(slot);
      return;
    }
    this.#schedule();
  }

  /** Terminates a worker whose request was stopped (the work really stops), and starts its replacement. */
  #kill(slot: Slot<Job>): void {
    this.#stats.stopped++;
    this.#workers.terminate(slot);
    this.#schedule();
  }

  #target(lane: Lane): number {
    return lane === 'general' ? this.#readers : 1;
  }

  #schedule(): void {
    if (this.closed) return;
    for (const lane of LANES) {
      for (const slot of this.#workers.slots) {
        if (slot.lane !== lane || slot.state !== 'idle') continue;
        const job = this.#queues[lane].shift() ?? (lane === 'general' ? this.#queues.fast.shift() : undefined);
        if (!job) break;
        this.#dispatch(slot, job);
      }
      const l = this.#lanes[lane];
      while ((lane === 'write' || this.#started) && this.#workers.active(lane) < this.#target(lane) && this.#roomFor(lane)) {
        if (Date.now() < l.retryAt) {
          l.retryTimer ??= setTimeout(() => {
            l.retryTimer = undefined;
            this.#schedule();
          }, l.retryAt - Date.now()).unref();
          break;
        }
        this.#workers.spawn(lane);
      }
    }
  }

  /** Reader threads are capped: the lanes' own plus maxParked replacements for workers held by slow consumers. */
  #roomFor(lane: Lane): boolean {
    return lane === 'write' || this.#workers.readers() < this.#readers + 1 + this.#maxParked;
  }

  // ---- errors and closing ----------------------------------------------------------------

  #internal(cause: unknown): Envelope<never> {
    return internalFailure(cause, this.#onError);
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

  /**
   * This thread's own store over the file, for the change feed (polling it is a cheap read of data_version) and
   * pinpoint reads (#readHere).
   */
  #local: DynamicStore | undefined;

  local(): DynamicStore {
    this.open();
    this.#local ??= DynamicStore.open(this.#file, { ...this.#workerOptions, clock: this.#clock, onError: this.#onError } as OpenOptions<CatalogueShape>);
    return this.#local;
  }

  schema(type: string): Promise<Envelope<{ name: string; type: string }>> {
    this.open();
    return Promise.resolve(schemaAnswer(this.settings.catalogue, type));
  }

  stats(): PoolStats {
    const slots = this.#workers.slots;
    const count = (lane: Lane) => slots.filter((s) => s.lane === lane).length;
    return {
      workers: {
        fast: count('fast'),
        general: count('general'),
        writer: count('write'),
        busy: slots.filter((s) => s.state === 'busy').length,
        parked: slots.filter((s) => s.state === 'parked').length,
        stopping: this.#workers.leaving.size,
      },
      queued: this.#queues.write.length + this.#queues.fast.length + this.#queues.general.length,
      routed: { ...this.#routed },
      ...this.#stats,
    };
  }

  #running(): number {
    let n = 0;
    for (const s of this.#workers.slots) if (s.job) n++;
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
      void this.#local?.close().catch(() => undefined);
      this.#db?.close();
      for (const lane of LANES) for (const job of this.#queues[lane].splice(0)) this.#settle(job, this.#cancelled(job, 'closed'));
      for (const slot of [...this.#workers.slots]) {
        const job = slot.job;
        if (job && job.lane !== 'write') void this.stop(job, this.#cancelled(job, 'closed'));
      }
      if (this.#running() > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
      for (const l of Object.values(this.#lanes)) if (l.retryTimer) clearTimeout(l.retryTimer);
      await this.#workers.exitAll();
    })();
    return this.#closing;
  }
}
