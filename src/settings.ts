/** The open options every backend takes: validated once, defaults applied, turned into the settings a store runs with. */
import {
  catalogueOf,
  CATALOGUE_VERSION,
  DEFAULT_INDEXED_FIELDS,
  DEFAULT_UNIQUE_KEYS,
  didYouMean,
  TYPES,
  type BuiltinCatalogue,
  type Catalogue,
  type CatalogueShape,
  type TypeInfo,
} from './catalogue/index.js';
import { normalizeDate } from './catalogue/dates.js';
import { describe } from './catalogue/validate.js';
import { newId, seededIds } from './ids.js';
import { VERSION } from './version.js';

export interface IndexSpec {
  fields: readonly string[];
  unique?: boolean;
}

/**
 * The indexes a type gets, in order, from its unique keys and plain indexes: each checked against the type's fields,
 * and one left out when an earlier one already serves it (the same kind on the same fields, or a plain index on the
 * first field of an earlier one). `served` names keys the table itself already holds (PostgreSQL's unique id).
 * Both backends build their DDL from this list.
 */
export function indexesOf(
  info: TypeInfo,
  opts: { uniqueKeys: Readonly<Record<string, readonly (readonly string[])[]>>; indexes: Readonly<Record<string, readonly IndexSpec[]>> },
  served: readonly IndexSpec[] = [],
): IndexSpec[] {
  const key = (unique: boolean, fields: readonly string[]) => `${unique ? 'ux' : 'ix'}\u0000${fields.join('\u0000')}`;
  const covered = new Set(served.map((s) => key(s.unique === true, s.fields)));
  const wanted: IndexSpec[] = [...(opts.uniqueKeys[info.name] ?? []).map((fields) => ({ fields, unique: true })), ...(opts.indexes[info.name] ?? [])];
  const out: IndexSpec[] = [];
  for (const spec of wanted) {
    const what = spec.unique ? 'a unique key' : 'an index';
    for (const f of spec.fields) {
      if (!info.fields.has(f)) throw new RangeError(`${what} of ${info.name} names an unknown field "${f}"`);
    }
    if (spec.fields.length === 0) throw new RangeError(`${what} of ${info.name} has no fields`);
    const k = key(spec.unique === true, spec.fields);
    if (covered.has(k)) continue;
    covered.add(k);
    covered.add(key(false, spec.fields.slice(0, 1)));
    out.push(spec);
  }
  return out;
}

export interface OpenOptions<C extends CatalogueShape = BuiltinCatalogue> {
  /** Default actor for createdBy/updatedBy. */
  userId?: string;
  /** Unknown top-level fields are errors in documents and queries (default true). */
  strict?: boolean;
  /** Extra indexes per type. */
  indexes?: { [T in keyof NoInfer<C>]?: readonly IndexSpec[] };
  /** Replaces the default unique keys of the named types. */
  uniqueKeys?: { [T in keyof NoInfer<C>]?: readonly (readonly string[])[] };
  /** A catalogue of your own; defaults to the built-in one. */
  types?: C;
  /** The `schemaVersion` written on documents (default: the built-in catalogue's version). */
  schemaVersion?: string;
  /** How long a write waits for another connection's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /**
   * Bytes of a file store mapped for reads (SQLite's `mmap_size`; default 2 GiB, the most the bundled SQLite maps).
   * 0 reads through `read()` only: for files the OS does not keep cached (README "Cold files"). SQLite stores only.
   */
  mmapSize?: number;
  /**
   * Keeps parsed documents in memory, up to about `maxBytes` bytes of their JSON text, so repeated reads skip
   * reading and parsing them (README "Document cache"). Answers are then frozen objects shared between reads.
   * Off by default. SQLite stores only.
   */
  documentCache?: { maxBytes: number };
  /** The time of each write (createdAt, updatedAt, modifiedTimestamp); default the system clock. For reproducible tests. */
  clock?: () => Date | string | number;
  /** Generated ids: a function returning a fresh non-empty string, or a seed for a deterministic source (see `seededIds`). */
  ids?: (() => string) | number;
  /** Called with every unexpected error and the request id its INTERNAL answer carries (the answer says only "internal error"). */
  onError?: (error: unknown, requestId: string) => void;
  /**
   * Called once a write request (insert, insertMany, replace, update, delete) has done all its work, just before its
   * transaction commits; `false` rolls it back and the write answers TIMEOUT with nothing written. For a host that
   * gives up on writes at a deadline it enforces itself (the worker pool decides each write's fate this way).
   */
  beforeCommit?: () => boolean;
  /**
   * Version history: every insert, replace, update and delete of the named types (`true`: every type but
   * VersionDocument and ActivityLog) also writes a VersionDocument in its transaction. Kept by triggers in the
   * file: once on, every writer of the file records it (README "Version history").
   */
  history?: true | readonly (keyof NoInfer<C> & string)[];
  /** The change feed (`watch`): every write of every type also writes a change event in its transaction. Default false. */
  changeFeed?: boolean;
  /** Change events kept (the oldest are pruned, 1,000 at a time, past this many). Default 100,000. */
  changeRetention?: number;
  /**
   * Bytes of change events (as JSON) a subscriber of the feed (a watch, a long poll, an SSE stream) may hold unread;
   * past it, it is dropped with CHANGES_OVERFLOW and resumes from its last seq. Default 8 MiB.
   */
  feedBufferBytes?: number;
  /** One ActivityLog document per write request, in the request's transaction (refusals in their own). Default false. */
  activityLog?: boolean;
  /**
   * Soft delete for the named types (`true`: every type but VersionDocument and ActivityLog): `delete` stamps
   * deletedAt/deletedBy/deletedActivityId/deletedTimestamp instead of removing, queries and writes ignore such
   * documents, unique keys hold among the others only, `purge` removes for real. Kept in the file once on.
   */
  softDelete?: true | readonly (keyof NoInfer<C> & string)[];
  /** The tool ActivityLog documents name (default: consolidata and its version). */
  tool?: { name: string; version?: string };
}

/**
 * Bytes of change events a feed subscriber may hold unread by default: a bulk write of about 5,000 Wells reaches a
 * reader that keeps up, while a stalled one is dropped before it holds more (events are shared by every subscriber).
 */
export const FEED_BUFFER_BYTES = 8 * 1024 * 1024;

/** Bytes of a file store mapped for reads by default (see README "Memory"): the most the bundled SQLite maps. */
export const MMAP_BYTES = 2 ** 31;

export const OPTION_NAMES = [
  'userId', 'strict', 'indexes', 'uniqueKeys', 'types', 'schemaVersion', 'busyTimeoutMs', 'mmapSize', 'documentCache', 'clock', 'ids', 'onError',
  'beforeCommit', 'history', 'changeFeed', 'changeRetention', 'feedBufferBytes', 'activityLog', 'tool', 'softDelete',
];

/** Types whose writes are never journaled: they are the journal. */
export const JOURNAL_TYPES: readonly string[] = ['VersionDocument', 'ActivityLog'];

/** What a store runs with, whatever its backend. */
export interface Settings {
  readonly catalogue: Catalogue;
  readonly strict: boolean;
  readonly userId: string;
  /** Unique keys per canonical type name (`id` is unique everywhere besides). */
  readonly uniqueKeys: Readonly<Record<string, readonly (readonly string[])[]>>;
  /** Plain indexes per canonical type name. */
  readonly indexes: Readonly<Record<string, readonly IndexSpec[]>>;
  /** Per type, the fields that lead an index: an equality on one of them finds few rows. */
  readonly keyed: ReadonlyMap<string, ReadonlySet<string>>;
  readonly busyTimeoutMs: number;
  /** Bytes of a file store mapped for reads. */
  readonly mmapSize: number;
  /** The document cache's bound in bytes of JSON text, or null when it is off. */
  readonly documentCache: { readonly maxBytes: number } | null;
  /** The time of a write, as stored (ISO 8601 UTC). */
  readonly now: () => string;
  /** A fresh id for a document that has none. */
  readonly newId: () => string;
  /** The `ids` seed of a deterministic store: its cursor key is made from it, so its cursors repeat as its ids do. */
  readonly idSeed: number | undefined;
  readonly onError: ((error: unknown, requestId: string) => void) | undefined;
  /** See OpenOptions.beforeCommit. */
  readonly beforeCommit: (() => boolean) | undefined;
  /** Types whose writes write a VersionDocument (canonical names). */
  readonly history: readonly string[];
  readonly changeFeed: boolean;
  readonly changeRetention: number;
  readonly feedBufferBytes: number;
  readonly activityLog: boolean;
  /** Types whose deletes are soft (canonical names), as the options say (the file may add more: see the backend). */
  readonly softDelete: readonly string[];
  readonly tool: { readonly name: string; readonly version: string };
}

/**
 * Whether `field` alone is a unique key of `type` (a canonical name), `id` included: an equality to a value on it
 * finds one document at most. The one statement of that rule, for the pool's lanes and the store's reads.
 * @example uniqueAlone(settings, 'Well', 'pwi') // true with the default unique keys
 */
export function uniqueAlone(settings: Pick<Settings, 'uniqueKeys'>, type: string, field: string): boolean {
  return field === 'id' || settings.uniqueKeys[type]?.some((k) => k.length === 1 && k[0] === field) === true;
}

/** What `pinpoint` reads of a parsed condition. */
interface PinpointCondition {
  readonly op: string;
  readonly value?: unknown;
  readonly path: { readonly scalar: boolean; readonly text: string };
}

/**
 * Whether a query's conditions find one document at most (soft-deleted ones besides, with includeDeleted): an
 * equality, to a value, on a field that alone is a unique key of `type`. The one statement of that rule, for the
 * store's one-statement reads and the pool's reads on its own thread.
 * @example pinpoint(settings, 'Well', parseQuery(ctx, { pwi: 'W1' }).conditions) // true
 */
export function pinpoint(settings: Pick<Settings, 'uniqueKeys'>, type: string, conditions: readonly PinpointCondition[]): boolean {
  return conditions.some((c) => c.op === 'eq' && c.value !== null && c.path.scalar && uniqueAlone(settings, type, c.path.text));
}

/**
 * Validates open options (misuse throws TypeError/RangeError at once, with a typo hint) and applies the defaults.
 * @example const settings = resolveSettings({ userId: 'etl' }, 'DataStore.open');
 */
export function resolveSettings(options: OpenOptions<CatalogueShape>, caller: string, extra: readonly string[] = []): Settings {
  // validate
  if (options === null || typeof options !== 'object') throw new TypeError(`${caller}: options must be an object`);
  const known = [...OPTION_NAMES, ...extra];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${caller}: unknown option "${key}"${didYouMean(key, known)}`);
  }
  const userId = options.userId ?? 'consolidata';
  if (typeof userId !== 'string' || userId === '') throw new TypeError(`${caller}: userId must be a non-empty string`);
  const busy = options.busyTimeoutMs ?? 5000;
  if (typeof busy !== 'number' || !Number.isFinite(busy) || busy < 0) throw new RangeError(`${caller}: busyTimeoutMs must be a non-negative number`);
  const mmapSize = options.mmapSize ?? MMAP_BYTES;
  if (!Number.isSafeInteger(mmapSize) || mmapSize < 0) throw new RangeError(`${caller}: mmapSize must be a non-negative integer of bytes`);
  const documentCache = documentCacheOf(options.documentCache, caller);
  if (options.clock !== undefined && typeof options.clock !== 'function') throw new TypeError(`${caller}: clock must be a function returning a Date, an ISO string or ms since the epoch`);
  if (options.ids !== undefined && typeof options.ids !== 'function' && !Number.isSafeInteger(options.ids)) {
    throw new TypeError(`${caller}: ids must be a function returning a string, or an integer seed`);
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') throw new TypeError(`${caller}: onError must be a function`);
  if (options.beforeCommit !== undefined && typeof options.beforeCommit !== 'function') throw new TypeError(`${caller}: beforeCommit must be a function returning a boolean`);
  if (options.history !== undefined && options.history !== true && !Array.isArray(options.history)) {
    throw new TypeError(`${caller}: history must be true or an array of type names`);
  }
  for (const k of ['changeFeed', 'activityLog'] as const) {
    if (options[k] !== undefined && typeof options[k] !== 'boolean') throw new TypeError(`${caller}: ${k} must be a boolean`);
  }
  const retention = options.changeRetention ?? 100_000;
  if (!Number.isSafeInteger(retention) || retention < 1) throw new RangeError(`${caller}: changeRetention must be a positive integer`);
  const feedBufferBytes = options.feedBufferBytes ?? FEED_BUFFER_BYTES;
  if (!Number.isSafeInteger(feedBufferBytes) || feedBufferBytes < 1) throw new RangeError(`${caller}: feedBufferBytes must be a positive integer of bytes`);
  const tool = options.tool ?? { name: 'consolidata' };
  if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string' || (tool.version !== undefined && typeof tool.version !== 'string')) {
    throw new TypeError(`${caller}: tool must be { name: string, version?: string }`);
  }
  // apply defaults
  const catalogue = catalogueOf(options.types ?? TYPES, options.schemaVersion ?? CATALOGUE_VERSION);
  const uniqueKeys: Record<string, readonly (readonly string[])[]> = { ...DEFAULT_UNIQUE_KEYS };
  for (const [t, keys] of Object.entries(options.uniqueKeys ?? {})) uniqueKeys[canonical(catalogue, t)] = keys as string[][];
  const indexes: Record<string, IndexSpec[]> = defaultIndexes(catalogue);
  for (const [t, specs] of Object.entries(options.indexes ?? {})) {
    const name = canonical(catalogue, t);
    indexes[name] = [...(indexes[name] ?? []), ...((specs as IndexSpec[]) ?? [])];
  }
  for (const t of Object.keys(uniqueKeys)) if (!catalogue.resolve(t)) delete uniqueKeys[t];
  // A list option's types: `true` every type but the journal's, else the ones named, each once.
  const typesOf = (list: true | readonly string[] | undefined) =>
    list === true ? catalogue.names.filter((n) => !JOURNAL_TYPES.includes(n)) : [...new Set((list ?? []).map((t) => canonical(catalogue, t)))];
  const history = typesOf(options.history);
  for (const t of history) {
    if (JOURNAL_TYPES.includes(t)) throw new RangeError(`${caller}: history cannot be kept of ${t}: its documents are the journal`);
  }
  if (options.softDelete !== undefined && options.softDelete !== true && !Array.isArray(options.softDelete)) {
    throw new TypeError(`${caller}: softDelete must be true or an array of type names`);
  }
  const softDelete = typesOf(options.softDelete);
  for (const t of softDelete) {
    if (JOURNAL_TYPES.includes(t)) throw new RangeError(`${caller}: ${t} documents cannot be soft-deleted: they are the journal`);
    if (!catalogue.resolve(t)!.fields.has('deletedAt')) throw new RangeError(`${caller}: soft delete of ${t} needs its deletedAt field`);
  }
  if (history.length && !catalogue.resolve('VersionDocument')) throw new RangeError(`${caller}: history needs a VersionDocument type in the catalogue`);
  if (options.activityLog && !catalogue.resolve('ActivityLog')) throw new RangeError(`${caller}: activityLog needs an ActivityLog type in the catalogue`);
  if (history.length && catalogue.resolve('VersionDocument')!.fields.has('oid')) {
    // store.history(type, id) finds a document's versions by their `oid`.
    indexes.VersionDocument = [...(indexes.VersionDocument ?? []), { fields: ['oid'] }];
  }
  // interpret
  const now = clockOf(options.clock);
  const ids = options.ids;
  const keyed = new Map(
    catalogue.names.map((n) => [n, new Set([...(uniqueKeys[n] ?? []), ...(indexes[n] ?? []).map((i) => i.fields)].map((f) => f[0]!))]),
  );
  return {
    catalogue,
    strict: options.strict ?? true,
    userId,
    uniqueKeys,
    indexes,
    keyed,
    busyTimeoutMs: busy,
    mmapSize,
    documentCache,
    now,
    newId: typeof ids === 'function' ? checkedIds(ids) : typeof ids === 'number' ? seededIds(ids, () => Date.parse(now())) : () => newId(),
    idSeed: typeof ids === 'number' ? ids : undefined,
    onError: options.onError,
    beforeCommit: options.beforeCommit,
    history,
    changeFeed: options.changeFeed ?? false,
    changeRetention: retention,
    feedBufferBytes,
    activityLog: options.activityLog ?? false,
    softDelete,
    tool: { name: tool.name, version: tool.version ?? VERSION },
  };
}

/** The documentCache option checked: `{ maxBytes }`, a positive integer of bytes; null when absent. */
function documentCacheOf(option: unknown, caller: string): { maxBytes: number } | null {
  if (option === undefined) return null;
  const shape = `${caller}: documentCache must be { maxBytes: <positive integer of bytes> }`;
  if (option === null || typeof option !== 'object' || Array.isArray(option)) throw new TypeError(`${shape}, got ${describe(option)}`);
  for (const key of Object.keys(option)) {
    if (key !== 'maxBytes') throw new TypeError(`${caller}: documentCache: unknown option "${key}"${didYouMean(key, ['maxBytes'])}`);
  }
  const maxBytes = (option as { maxBytes?: unknown }).maxBytes;
  if (!Number.isSafeInteger(maxBytes) || (maxBytes as number) < 1) throw new RangeError(`${caller}: documentCache.maxBytes must be a positive integer of bytes, got ${describe(maxBytes)}`);
  return { maxBytes: maxBytes as number };
}

function defaultIndexes(catalogue: Catalogue): Record<string, IndexSpec[]> {
  const out: Record<string, IndexSpec[]> = {};
  for (const name of catalogue.names) {
    const info = catalogue.resolve(name)!;
    out[name] = DEFAULT_INDEXED_FIELDS.filter((f) => info.fields.has(f)).map((f) => ({ fields: [f] }));
  }
  return out;
}

function canonical(catalogue: Catalogue, type: string): string {
  const info = catalogue.resolve(type);
  if (!info) throw new RangeError(`unknown type "${type}" in options${didYouMean(type, catalogue.names)}`);
  return info.name;
}

/** The store's clock as ISO strings; a clock that answers something else is a TypeError (INTERNAL for the request). */
function clockOf(clock: OpenOptions['clock']): () => string {
  if (!clock) return () => new Date().toISOString();
  return () => {
    const t = clock();
    const iso = typeof t === 'number' ? (Number.isFinite(t) ? new Date(t).toISOString() : null) : normalizeDate(t);
    if (iso === null) throw new TypeError(`clock returned ${describe(t)}, not a Date, ISO string or ms since the epoch`);
    return iso;
  };
}

function checkedIds(ids: () => string): () => string {
  return () => {
    const id = ids();
    if (typeof id !== 'string' || id === '') throw new TypeError(`ids returned ${describe(id)}, not a non-empty string`);
    return id;
  };
}
