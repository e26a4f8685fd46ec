/**
 * The worker lifecycle of the pool: starting a thread for a lane, parking one that waits for its consumer,
 * terminating one whose request was stopped, retiring an idle one, and knowing when each has exited. What a worker
 * is given to do is the scheduler's (scheduler.ts); this file only keeps the threads.
 */
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StoreBusyError } from '../backend.js';
import { NotAStoreError } from '../sqlite/index.js';
import { deserializeError, type FromWorker, type SerializedError, type ToWorker, type WorkerConfig, type WorkerOpenOptions } from './protocol.js';

/** Cheap reads (scheduler.ts FAST_ROWS), other reads, writes. */
export type Lane = 'fast' | 'general' | 'write';

export const LANES: readonly Lane[] = ['write', 'fast', 'general'];

/** A query's answer per message: at most this many documents or about this many characters of JSON. */
const BATCH_ROWS = 1000;
const BATCH_CHARS = 1 << 20;
/** The size of an answer's slices: the most that is held or sent at once. */
export const SLICE = { rows: BATCH_ROWS, chars: BATCH_CHARS } as const;
/** How long a worker may wait for its consumer before its lane starts a replacement. */
const PARK_MS = 50;
/** The CPU priority of general readers (see WorkerConfig.nice). */
const GENERAL_NICE = 10;

/** One worker thread and what it is doing. `J` is the scheduler's request. */
export interface Slot<J = unknown> {
  readonly worker: Worker;
  readonly lane: Lane;
  state: 'starting' | 'idle' | 'busy' | 'parked' | 'releasing' | 'stopping';
  job?: J;
  /** Parked longer than PARK_MS: no longer counted in its lane, so a replacement starts. */
  longParked: boolean;
  parkTimer?: NodeJS.Timeout;
  /** The writer's commit gate (protocol.ts GATE), one per writer thread so a dying writer never sees the next one's. */
  gate?: Int32Array;
  cause?: unknown;
  ready: Promise<void>;
  /** Settles once the thread has exited (and the exit was handled). */
  exited: Promise<void>;
  onReady: (error?: unknown) => void;
}

/** What the scheduler hears of its workers. */
export interface WorkerEvents<J> {
  message(slot: Slot<J>, m: FromWorker): void;
  /** A worker exited on its own (a crash, or a start that failed): not one that was stopped or retired. */
  died(slot: Slot<J>, code: number): void;
  /** Something changed that may let queued work run (a worker left, a parked one waited long). */
  changed(): void;
}

/** Where the worker script is: dist/pool-worker.js, beside the chunk of dist/ that holds this code (every entry shares it). */
export function defaultWorkerScript(): URL {
  // import.meta first: an ES module can see a global __filename that is not its own (`node -e` defines one); the CJS
  // build has import.meta.url shimmed (tsup.config.ts), and its own __filename besides.
  const here = (import.meta as { url?: string }).url ?? pathToFileURL(__filename).href;
  return new URL(here.endsWith('.mjs') ? './pool-worker.mjs' : './pool-worker.js', here);
}

/** The error a worker that could not open reported, as DataStore.open would have thrown it. */
function openError(s: SerializedError): Error {
  if (s.code === 'NOT_A_STORE') return new NotAStoreError(s.message);
  if (s.code === 'STORE_BUSY') return new StoreBusyError(s.message);
  return deserializeError(s);
}

/** The pool's threads: those serving (`slots`) and those on their way out (`leaving`). */
export class WorkerSet<J> {
  readonly slots: Slot<J>[] = [];
  /** Workers on their way out (terminated, or retired), until they exit: close() waits for them. */
  readonly leaving = new Set<Slot<J>>();

  constructor(
    private readonly spec: { file: string; script: URL; options: WorkerOpenOptions; clock: boolean },
    private readonly events: WorkerEvents<J>,
  ) {}

  /** Starts a worker for a lane; it is `starting` until it says it is ready. */
  spawn(lane: Lane): Slot<J> {
    const gate = lane === 'write' ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
    const config: WorkerConfig = {
      file: this.spec.file,
      options: this.spec.options,
      role: lane === 'write' ? 'writer' : 'reader',
      batchRows: BATCH_ROWS,
      batchChars: BATCH_CHARS,
      clock: this.spec.clock,
      // Elsewhere setpriority(0) would lower the whole process, not the thread.
      nice: lane === 'general' && process.platform === 'linux' ? GENERAL_NICE : 0,
      ...(gate ? { gate: gate.buffer as SharedArrayBuffer } : {}),
    };
    const worker = new Worker(this.spec.script, { workerData: config });
    let onReady!: (error?: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => (onReady = (e) => (e === undefined ? resolve() : reject(e))));
    // Nobody awaits a replacement's start: its failure is handled on exit, never an unhandled rejection.
    ready.catch(() => undefined);
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const slot: Slot<J> = { worker, lane, state: 'starting', longParked: false, ready, onReady, exited, ...(gate ? { gate } : {}) };
    this.slots.push(slot);
    worker.on('message', (m: FromWorker) => {
      if (m.t === 'openFailed') slot.cause = openError(m.error);
      else this.events.message(slot, m);
    });
    // The first cause wins: a worker that could not open says why before its uncaught error ends it.
    worker.on('error', (e) => (slot.cause ??= e));
    worker.on('messageerror', (e) => (slot.cause ??= e));
    // Whoever awaits `exited` resumes after this listener has run: promise reactions wait for the event's listeners.
    worker.on('exit', (code) => this.#onExit(slot, code));
    return slot;
  }

  #onExit(slot: Slot<J>, code: number): void {
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    this.unpark(slot);
    if (slot.state === 'stopping') {
      this.leaving.delete(slot);
      this.events.changed();
      return;
    }
    this.events.died(slot, code);
  }

  post(slot: Slot<J>, m: ToWorker): void {
    slot.worker.postMessage(m);
  }

  /** The worker waits for its consumer; past PARK_MS its lane may start a replacement. */
  park(slot: Slot<J>): void {
    slot.state = 'parked';
    slot.parkTimer = setTimeout(() => {
      slot.longParked = true;
      this.events.changed();
    }, PARK_MS);
    slot.parkTimer.unref();
  }

  unpark(slot: Slot<J>): void {
    if (slot.parkTimer) clearTimeout(slot.parkTimer);
    slot.parkTimer = undefined;
    slot.longParked = false;
  }

  /** Terminates a worker whose request was stopped: the work really stops. */
  terminate(slot: Slot<J>): void {
    this.#stopSlot(slot);
    // Its exit is awaited by nobody but close(): a failure to terminate is not the request's concern.
    void slot.worker.terminate().catch(() => undefined);
  }

  /** Asks an idle worker to close its store and exit. */
  retire(slot: Slot<J>): void {
    this.#stopSlot(slot);
    try {
      this.post(slot, { t: 'close' });
    } catch {
      void slot.worker.terminate().catch(() => undefined);
    }
  }

  #stopSlot(slot: Slot<J>): void {
    this.unpark(slot);
    slot.state = 'stopping';
    slot.job = undefined;
    this.leaving.add(slot);
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
  }

  /** Workers of a lane able to take work soon: all but those stopping and those held long by a slow consumer. */
  active(lane: Lane): number {
    let n = 0;
    for (const s of this.slots) if (s.lane === lane && !(s.state === 'parked' && s.longParked)) n++;
    return n;
  }

  /** Reader threads serving (any read lane). */
  readers(): number {
    let n = 0;
    for (const s of this.slots) if (s.lane !== 'write') n++;
    return n;
  }

  /** Every worker leaves (a starting one is terminated, the others retire); one still running after 5 s is terminated. */
  async exitAll(): Promise<void> {
    for (const slot of [...this.slots]) {
      if (slot.state === 'starting') this.terminate(slot);
      else this.retire(slot);
    }
    // A worker that does not exit in time (a native step still running) is terminated.
    const late = setTimeout(() => {
      for (const s of this.leaving) void s.worker.terminate().catch(() => undefined);
    }, 5000);
    await Promise.all([...this.leaving].map((s) => s.exited));
    clearTimeout(late);
  }
}
