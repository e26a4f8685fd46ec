/**
 * How every request of the store runs: the state a store shares with its views, the checks a request passes first
 * (open, after an atomic load), and the answer to a failure. The other files of src/core/ are given this state.
 */
import type { TypeInfo } from '../catalogue/index.js';
import { orCatch, type Backend } from '../backend.js';
import { fail, internalFailure, RequestError, type Envelope } from '../envelope.js';
import type { ParseContext } from '../query/parse.js';
import type { Settings } from '../settings.js';
import type { Condition } from '../query/ast.js';
import type { Fanout } from './fanout.js';

/** State shared by a store and its `withUser` views. */
export interface State {
  readonly backend: Backend;
  readonly settings: Settings;
  closed: boolean;
  /** Set while an atomic load holds its transaction open: other requests wait for it (on one connection they would join it). */
  gate: Promise<unknown> | null;
  /** Per type with soft delete, the condition leaving soft-deleted documents out (see scope), parsed once. */
  readonly live: Map<string, readonly Condition[]>;
  /** The one reader of the change feed every watch and long poll of the store shares, made on first use. */
  fanout?: Fanout;
}

/** Throws the TypeError of a call on a closed store. */
export function ensureOpen(state: State): void {
  if (state.closed) throw new TypeError('The DataStore is closed');
}

/**
 * Runs one request: misuse throws now; bad input becomes a failed envelope, anything unexpected an INTERNAL one
 * whose cause goes to onError only (an answer never carries an engine message or a stack).
 */
export function run<T>(state: State, fn: () => Envelope<T> | Promise<Envelope<T>>): Promise<Envelope<T>> {
  const out = runNow(state, fn);
  return out instanceof Promise ? out : Promise.resolve(out);
}

/**
 * `run`, answering at once when `fn` does (SQLite's backend answers without a promise): a server's hot path takes
 * the answer in the same task instead of a turn of the microtask queue per step.
 * @example const env = runNow(state, () => answer(plan)); // an Envelope, or a Promise of one
 */
export function runNow<T>(state: State, fn: () => Envelope<T> | Promise<Envelope<T>>): Envelope<T> | Promise<Envelope<T>> {
  ensureOpen(state);
  // An atomic load holds the connection's one transaction: run after it, never inside it.
  const gate = state.gate;
  if (gate) return gate.then(() => run(state, fn));
  return orCatch(fn, (e) => failure<T>(e, state.settings.onError));
}

/**
 * The answer to a failure: a RequestError's errors, or INTERNAL with a request id and the cause sent to onError only.
 * The one place a thrown error becomes an envelope, for the store and the pool's threads alike.
 * @example return failure(e, settings.onError);
 */
export function failure<T>(e: unknown, onError: Settings['onError']): Envelope<T> {
  return e instanceof RequestError ? fail<T>(e.errors) : internalFailure<T>(e, onError);
}

/** A type by the name a request gave (or UNKNOWN_TYPE). */
export function resolveType(state: State, type: unknown): TypeInfo {
  return state.settings.catalogue.require(type);
}

/** What the query parser needs to know of the store for a type. */
export function parseContext(state: State, info: TypeInfo): ParseContext {
  return { type: info, strict: state.settings.strict, cursorKey: state.backend.cursorKey };
}

// Written beside MaybePromise, for the engines' backends too.
export { andThen, orCatch, type MaybePromise } from '../backend.js';
