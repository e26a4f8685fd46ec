/**
 * The untyped store operations the HTTP adapter and the CLI call: what a `DynamicStore` (`DataStore#dynamic`) and a
 * pool (`createPool`) both offer.
 */
import type { Envelope } from '../envelope.js';
import type { SliceSize, TextSlices } from './slices.js';

/**
 * Per-request control the adapter passes to a store: `signal` aborts when the client goes away. `aborted` says whether
 * it has already gone, for a store that needs to know only that: a request answered at once, in the call, has nothing
 * to stop later, and the node bridge makes its signal (an AbortController, ~4 µs) only when a store asks for it. The
 * adapter passes its request object itself, whose `signal` and `aborted` are getters: read them from the control, do
 * not copy it (a spread leaves them behind).
 */
export interface RequestControl {
  signal?: AbortSignal;
  /** True once the caller has given the request up; absent: read `signal.aborted`. */
  readonly aborted?: boolean;
}

/** A query's answer as JSON text chunks (the pool's `queryStream`): `failure` is a refusal, else the chunks follow. */
export interface QueryStreamLike extends AsyncIterable<string> {
  readonly failure: Envelope<unknown> | null;
  /** The whole answer's text when it came in one slice: the adapter sends it as it is, without iterating. */
  readonly whole?: string;
}

/** The untyped store operations the adapter calls: a `DynamicStore` (`DataStore#dynamic`), or a pool (`createPool`). */
export interface StoreLike {
  query(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<unknown>>;
  insert(type: string, docs: unknown, options?: { atomic?: boolean; activityId?: string }): Promise<Envelope<unknown>>;
  replace(type: string, docs: unknown, options?: { activityId?: string }): Promise<Envelope<unknown>>;
  update(type: string, query: unknown, body: unknown, options?: { activityId?: string }): Promise<Envelope<unknown>>;
  delete(type: string, query: unknown, options?: { activityId?: string }): Promise<Envelope<unknown>>;
  types(): Promise<Envelope<unknown>>;
  schema(type: string): Promise<Envelope<unknown>>;
  /** Rows of groups and metrics (`POST /data/aggregate`; README "Aggregates"). */
  aggregate(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<unknown>>;
  /** The number of matches (`POST /data/count`). */
  count(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<unknown>>;
  /** A field's values over the matches (`POST /data/distinct`). */
  distinct(type: string, field: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<Envelope<unknown>>;
  withUser(userId: string): StoreLike;
  /** The change feed (`GET /data/changes`); absent: the route answers that the store has none. */
  watch?(type?: string, options?: { since?: number; query?: unknown; signal?: AbortSignal; onDrop?: (error: unknown) => void }): AsyncGenerator<{ seq: number }, void, undefined> & { nextBatch?(maxBytes: number): Promise<{ seq: number }[]> };
  changes?(type?: string, options?: { since?: number; query?: unknown; limit?: number; waitMs?: number; signal?: AbortSignal }): Promise<Envelope<unknown>>;
  /**
   * A query's answer as slices of its envelope's JSON text (DynamicStore#queryText), read whole before it is given:
   * the adapter sends them as they are, so no document is parsed and serialised again on its way out. When a store
   * has it, the adapters answer queries through it, not through `query`: a wrapper that changes what `query` answers
   * (a tenant's scope) changes `queryText` too, or leaves it out. A store answering at once (SQLite) answers without a
   * promise, and the adapter answers in the same task.
   */
  queryText?(type: string, query: unknown, options: unknown, size: SliceSize): { failure: Envelope<never> | null; slices: TextSlices } | Promise<{ failure: Envelope<never> | null; slices: TextSlices }>;
  /** A store that streams a query's answer (the pool): the adapter then writes it chunk by chunk, never whole. */
  queryStream?(type: string, query?: unknown, options?: unknown, control?: RequestControl): Promise<QueryStreamLike>;
}

/** What the adapter and the CLI accept: a `DataStore` of any catalogue (its `dynamic` view is used) or a `DynamicStore`. */
export type StoreInput = StoreLike | { readonly dynamic: StoreLike };

/** The untyped view of a store the adapter was given. */
export function dynamicOf(store: StoreInput): StoreLike {
  if (store && typeof store === 'object' && 'dynamic' in store && store.dynamic && typeof store.dynamic.query === 'function') return store.dynamic;
  return store as StoreLike;
}

