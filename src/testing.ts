/**
 * `consolidata/testing`: a real store for unit tests. `createTestStore` opens an in-memory store and seeds it in one
 * transaction; `store.snapshot()` / `store.restore(snapshot)` / `DataStore.fromSnapshot` put it back in well under a
 * millisecond per thousand documents; `fixedClock` and the `ids` option make timestamps and ids repeat across runs;
 * `sampleData` and `fixtures` are ready-made documents.
 * @example
 * const store = await createTestStore({ seed: { Well: fixtures.wells }, clock: fixedClock('2024-01-01'), ids: 1 });
 * const snapshot = store.snapshot();
 * beforeEach(() => store.restore(snapshot));
 */
import { isPlainObject } from './catalogue/validate.js';
import type { BuiltinCatalogue, CatalogueShape, DocInput, TypeName } from './catalogue/index.js';
import { DataStoreError, type Envelope } from './envelope.js';
import { type DataStore, SqliteDataStore, type OpenOptions } from './store.js';

export { DataStore, SqliteDataStore, type OpenOptions, type InsertOptions } from './store.js';
export { DataStoreError, unwrap, type Envelope, type EnvelopeError, type ErrorCode } from './envelope.js';
export { sampleData, fixtures, type SampleData, type SampleSizes } from './sample.js';
// The answers' types, so that tests name them from the entry they open the store with.
export type { Projected } from './query/types.js';
export type {
  Doc, DocInput, BuiltinDocuments,
  WorkspaceDefinition, DailyProduction, MonthlyProduction, Well, Setting, Schedule, Annotation, Link, Plugin, WellStat,
  JobResult, CronJob, WellIdentifier, DeclineCurveAnalysisModel, VersionDocument, Job, Notification, AppSetting,
  TypeCurveGenerator, EconomicsProject, Petron, AnnotationTag, RealTimeProduction, ActivityLog, UnitsDefinition, Comment,
} from './catalogue/index.js';

/** Documents by type name, as `createTestStore` seeds them: `{ Well: [...], DailyProduction: [...] }`. */
export type SeedDocs<C extends CatalogueShape = BuiltinCatalogue> = { [T in TypeName<C>]?: readonly DocInput<T, C>[] };

/**
 * A function that seeds the new store itself. It may be async; when it returns (or resolves to) an envelope or an
 * array of envelopes, a failed one fails the seed, so `seed: (s) => s.insert('Well', wells)` needs nothing more.
 */
export type SeedFunction<C extends CatalogueShape = BuiltinCatalogue> = (store: SqliteDataStore<C>) => unknown;

export interface TestStoreOptions<C extends CatalogueShape = BuiltinCatalogue> extends OpenOptions<C> {
  /** Documents to insert, by type (one transaction, all or nothing), or a function of the store that seeds it. */
  seed?: SeedDocs<NoInfer<C>> | SeedFunction<NoInfer<C>>;
}

function isEnvelope(v: unknown): v is Envelope<unknown> {
  return isPlainObject(v) && typeof v.success === 'boolean' && Array.isArray(v.errors) && 'insertedIds' in v;
}

/** A DataStoreError for a failed envelope, its message saying that the seed failed and why (its first errors). */
function seedError(env: Envelope<unknown>, what: string): DataStoreError {
  const error = new DataStoreError(env);
  const shown = env.errors.slice(0, 3).map((e) => e.message);
  const more = env.errors.length > shown.length ? ` (and ${env.errors.length - shown.length} more)` : '';
  error.message = `createTestStore: ${what} failed, the store was closed: ${shown.length ? shown.join('; ') + more : error.message}`;
  return error;
}

async function seedWith<C extends CatalogueShape>(store: DataStore<C>, seed: SeedDocs<C>): Promise<void> {
  const parts = Object.entries(seed)
    .filter(([, docs]) => docs !== undefined)
    .map(([type, docs]) => ({ type, docs: docs as unknown }));
  if (!parts.length) return;
  const envelopes = await store.dynamic.insertMany(parts);
  if (envelopes.length === parts.length && envelopes.every((e) => e.success)) return;
  // The last answer is the part that failed (those before it only say they were rolled back)...
  const last = envelopes.length - 1;
  if (last >= 0 && !envelopes[last]!.success) throw seedError(envelopes[last]!, `seeding ${parts[last]!.type}`);
  // ...unless that part failed before it could answer: then the answers stop at the part before it. Insert it
  // again alone, into this store that is about to be closed, for the envelope that tells why.
  const part = parts[Math.min(envelopes.length, parts.length - 1)]!;
  const env = await store.dynamic.insert(part.type, part.docs, { atomic: true });
  const why = env.success ? { ...env, success: false, errors: [{ code: 'INTERNAL' as const, message: `the seed was rolled back at ${part.type}` }] } : env;
  throw seedError(why, `seeding ${part.type}`);
}

async function seedBy<C extends CatalogueShape>(store: SqliteDataStore<C>, seed: SeedFunction<C>): Promise<void> {
  const result = await seed(store);
  const answers = Array.isArray(result) ? result : [result];
  for (const env of answers) {
    if (isEnvelope(env) && !env.success) throw seedError(env, 'the seed function');
  }
}

/**
 * A fresh in-memory `DataStore`, seeded. Takes every option of `DataStore.open` (`clock`, `ids`, `indexes`, …)
 * plus `seed`: documents by type, inserted in one transaction (all or nothing), or a function of the store (sync
 * or async). It always answers a Promise, seed or not: `const store = await createTestStore({ seed })`.
 *
 * A seed the store refuses (a validation error, an unknown type or field, a duplicate key) rejects with the
 * `DataStoreError` of its envelope (`code`, `envelope`); so does a seed function that throws (with its error) or
 * returns a failed envelope. The half-made store is closed, never handed out. Bad options throw at once, as
 * `DataStore.open` does.
 * @example
 * const store = await createTestStore({ seed: { Well: fixtures.wells, DailyProduction: fixtures.daily } });
 * const seeded = await createTestStore({ seed: async (s) => unwrap(await s.insert('Well', [{ pwi: 'W1' }])) });
 */
export function createTestStore<C extends CatalogueShape = BuiltinCatalogue>(options: TestStoreOptions<C> = {}): Promise<SqliteDataStore<C>> {
  if (options === null || typeof options !== 'object') throw new TypeError('createTestStore: options must be an object');
  const { seed, ...open } = options;
  if (seed !== undefined && typeof seed !== 'function' && !isPlainObject(seed)) {
    throw new TypeError('createTestStore: seed must be an object of documents by type ({ Well: [...] }) or a function of the store');
  }
  const store = SqliteDataStore.open<C>(':memory:', open as OpenOptions<C>);
  if (seed === undefined) return Promise.resolve(store);
  const seeding = (async () => (typeof seed === 'function' ? seedBy(store, seed as SeedFunction<C>) : seedWith(store, seed as SeedDocs<C>)))();
  return seeding.then(
    () => store,
    (e: unknown) => {
      store.close();
      throw e;
    },
  );
}

/** A clock for the `clock` option: each call answers the current time (ms since the epoch), then moves it on. */
export interface TestClock {
  (): number;
  /** Moves the clock on by `ms` (without a call). */
  advance(ms: number): void;
  /** Sets the time the next call answers. */
  set(time: Date | string | number): void;
}

function toMs(time: Date | string | number, what: string): number {
  const ms = time instanceof Date ? time.getTime() : typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : NaN;
  if (!Number.isFinite(ms)) throw new RangeError(`${what}: expected a Date, an ISO 8601 string or ms since the epoch, got ${String(time)}`);
  return ms;
}

/**
 * A deterministic clock for `DataStore.open` / `createTestStore`: it starts at `start` (default
 * 2024-01-01T00:00:00.000Z) and every call moves it on by `stepMs` (default 0: the time stands still). The store
 * reads the clock once per write request (`createdAt`, `updatedAt`, `modifiedTimestamp`) and, with a numeric
 * `ids` seed, once per generated id. Give each store its own clock.
 * @example const store = DataStore.open(':memory:', { clock: fixedClock('2024-01-01', 1000), ids: 1 });
 */
export function fixedClock(start: Date | string | number = Date.UTC(2024, 0, 1), stepMs = 0): TestClock {
  let now = toMs(start, 'fixedClock');
  if (typeof stepMs !== 'number' || !Number.isFinite(stepMs) || stepMs < 0) throw new RangeError(`fixedClock: stepMs must be a non-negative number, got ${String(stepMs)}`);
  const clock = (() => {
    const t = now;
    now += stepMs;
    return t;
  }) as TestClock;
  clock.advance = (ms: number) => {
    if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new RangeError(`advance: ms must be a finite number, got ${String(ms)}`);
    now += ms;
  };
  clock.set = (time) => {
    now = toMs(time, 'set');
  };
  return clock;
}
