/**
 * What the pool (pool.ts) and its worker threads (worker.ts) say to each other. Messages are structured-cloned:
 * plain data only, and errors travel as their name, message, stack and code (an Error's own fields do not clone).
 */
import type { OpenOptions } from '../settings.js';

/** The store operations a worker runs; `types` and `schema` never leave the pool's thread (they read no database). */
export type Op = 'query' | 'insert' | 'replace' | 'update' | 'delete' | 'insertMany';

export const WRITES: ReadonlySet<Op> = new Set(['insert', 'replace', 'update', 'delete', 'insertMany']);

/** What a worker is for: reads (any number of them, each its own connection) or the one writer. */
export type Role = 'reader' | 'writer';

/** The open options a worker can receive: the cloneable ones (the pool keeps `clock` and `onError` on its thread). */
export type WorkerOpenOptions = Omit<OpenOptions, 'clock' | 'onError' | 'ids'> & { ids?: number };

export interface WorkerConfig {
  file: string;
  options: WorkerOpenOptions;
  role: Role;
  /** A query's answer travels in slices of at most this many documents… */
  batchRows: number;
  /** …or about this many characters of JSON text, whichever comes first. */
  batchChars: number;
  /** True when the pool has a clock: each write then carries the time the clock gave (`now`). */
  clock: boolean;
  /**
   * A CPU priority (nice) the thread lowers itself to, or 0. General readers run at 10 on Linux, where it applies
   * to the calling thread: scans then yield the CPU to the event loop and to cheap queries on a busy machine.
   */
  nice: number;
  /** The writer's commit gate (see GATE), shared with the pool; absent for readers. */
  gate?: SharedArrayBuffer;
}

/**
 * States of the writer's commit gate, an Int32Array of one cell the pool and the writer both change with
 * compareExchange: whoever moves RUNNING first decides. The pool moves it to CANCELLED (deadline, abort): the
 * writer then rolls back. The writer moves it to COMMITTING just before COMMIT: the pool then waits for the answer
 * instead of answering TIMEOUT. So a write answered TIMEOUT was never committed, and a committed one is answered.
 */
export const GATE = { IDLE: 0, RUNNING: 1, CANCELLED: 2, COMMITTING: 3 } as const;

export type ToWorker =
  | { t: 'run'; id: number; op: Op; args: unknown[]; userId: string; now?: unknown }
  /** The consumer wants the next batch of a query's rows. */
  | { t: 'next'; id: number }
  /** Close a query whose rows are waiting for `next`; answered `released`. */
  | { t: 'cancel'; id: number }
  | { t: 'close' };

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

export type FromWorker =
  | { t: 'ready' }
  | { t: 'openFailed'; error: SerializedError }
  /** A whole answer: a write's envelope (an array of them for insertMany), or a refused query's. */
  | { t: 'done'; id: number; answer: unknown }
  /**
   * The next slice of a query's answer as JSON text (whole documents, never a cut character); concatenated, the
   * slices are the envelope's JSON. The worker sends the next one when asked (`next`).
   */
  | { t: 'text'; id: number; text: string; end: boolean }
  /** A query failed after its first slice: the envelope says why (INTERNAL, never an engine message). */
  | { t: 'fail'; id: number; envelope: unknown }
  /** A cancelled query is closed: the worker is free. */
  | { t: 'released'; id: number }
  /** The cause of an INTERNAL answer, for the pool's `onError`. */
  | { t: 'onError'; requestId: string; error: SerializedError };

/** An error as a message can carry it. */
export function serializeError(e: unknown): SerializedError {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return { name: e.name, message: e.message, stack: e.stack, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { name: 'Error', message: String(e) };
}

/** An Error again on the pool's side, with the worker's stack (its cause is in another thread). */
export function deserializeError(s: SerializedError): Error {
  const e = new Error(s.message);
  e.name = s.name;
  if (s.stack) e.stack = s.stack;
  if (s.code) (e as { code?: string }).code = s.code;
  return e;
}
