/** The routing core: one parsed request in, one status + headers + envelope out, for every bridge. */
import { streams } from './pace.js';
import { didYouMean } from '../catalogue/index.js';
import { describe, isPlainObject } from '../catalogue/validate.js';
import { eventJson } from '../core/fanout.js';
import { textsOf, type TextSlices } from '../core/slices.js';
import { DataStoreError, envelope, fail, internalFailure, type Envelope, type EnvelopeError, type ErrorCode } from '../envelope.js';
import { createExplorer } from './explorer.js';
import { describeApi, referencePage } from './reference.js';
import { andThen, orCatch, type MaybePromise } from '../core/run.js';
import { dynamicOf, type StoreInput, type StoreLike } from '../core/store-like.js';
import { BodyError, listed, V1_REQUESTS, type Chunk, type CoreRequest, type CoreResponse, type HttpOptions } from './types.js';

export const DEFAULT_BASE_PATH = '/api';
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

type Json = Record<string, unknown>;
/** A value, or a promise of it where a step waits (the http layer does not import backend.ts, where its twin lives). */
type Handler = (store: StoreLike, body: Json, req: CoreRequest, site: Site) => MaybePromise<Envelope<unknown> | Streamed>;

/** The head of every successful streamed or text answer: only its status is read, and it is never changed. */
const SUCCESS: Envelope<unknown> = Object.freeze(envelope());

/** A query answer as text: its status comes from `head` (a success), its JSON text from `body` (streamed) or `text`. */
export interface Streamed {
  head: Envelope<unknown>;
  body?: AsyncIterable<Chunk>;
  text?: string;
  /** Headers replacing the JSON ones (an event stream, a page). */
  headers?: Record<string, string>;
  /** Aborted when the server ends a live stream (see CoreResponse.stop). */
  stop?: AbortSignal;
}

/** What a handler knows of the adapter serving it: the routes describing the API need its base path and auth. */
export interface Site {
  basePath: string;
  alwaysOk: boolean;
  /** The HTTP authentication scheme required (`basic`, `bearer`), from the challenge; undefined: open. */
  authScheme?: string;
  /** The generated description, by whether the store keeps a change feed: the catalogue never changes. */
  described: Map<boolean, Described>;
  /** Whether the store keeps a change feed, asked once: a feed is turned on when a store opens, not while it serves. */
  feed?: Promise<boolean>;
}

/** The OpenAPI document's JSON text, and its reference pages by the link to it they carry. */
export interface Described {
  json: string;
  pages: Map<string, string>;
}

interface Route {
  /** Method → handler; `json: false` marks routes that take no body. */
  methods: Record<string, { json: boolean; keys?: readonly string[]; run: Handler }>;
}

/** HTTP status of each error code; the OpenAPI description lists its responses from it. */
export const STATUS: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNKNOWN_TYPE: 400,
  UNKNOWN_FIELD: 400,
  INVALID_QUERY: 400,
  VALIDATION: 400,
  DUPLICATE_KEY: 409,
  ILLEGAL_OPERATION: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TIMEOUT: 503,
  CHANGES_PRUNED: 410,
  CHANGES_OVERFLOW: 503,
  STORE_FULL: 507,
  INVALID_CURSOR: 400,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

type V1Request = (typeof V1_REQUESTS)[number];

/** HTTP status of an envelope: 200 on success (the refused empty delete included), else by its first error's code. */
export function statusOf(env: Envelope<unknown>): number {
  if (env.success) return 200;
  if (env.errors.some((e) => e.code === 'INTERNAL')) return 500;
  const code = env.errors[0]?.code;
  return code ? STATUS[code] : 400;
}

function bad(message: string, field?: string): Envelope<unknown> {
  const error: EnvelopeError = { code: 'INVALID_REQUEST', message };
  if (field !== undefined) error.field = field;
  return fail([error]);
}

/** v1 documents may name their id `objectId`: it becomes `id` (when `id` is absent) and is dropped. */
function objectIdToId(doc: unknown): unknown {
  if (!isPlainObject(doc) || !('objectId' in doc)) return doc;
  const { objectId, ...rest } = doc;
  if (rest.id === undefined) rest.id = objectId;
  return rest;
}

/** A v1 query may also say `objectId` for `id`; null means `{}`, as for a missing query. */
function v1Query(query: unknown): unknown {
  if (query === null || query === undefined) return {};
  return objectIdToId(query);
}

/**
 * Runs a query; a store that streams (the pool) answers chunk by chunk, so a large answer is never held whole. The
 * request is the store's control (RequestControl): its signal is made only if the store asks for it. A
 * store answering text (a DynamicStore) is sent its text as it is: its documents are never parsed and serialised
 * again, and when it answers at once (SQLite) so does this.
 */
function query(store: StoreLike, type: string, q: unknown, options: unknown, req: CoreRequest): MaybePromise<Envelope<unknown> | Streamed> {
  if (store.queryStream) {
    return andThen(store.queryStream(type, q, options, req), (stream) => stream.failure ?? (stream.whole !== undefined ? { head: SUCCESS, text: stream.whole } : { head: SUCCESS, body: stream }));
  }
  if (!store.queryText) return store.query(type, q, options, req);
  return andThen(store.queryText(type, q, options, TEXT_SLICES), taken);
}

/** A text answer as the route sends it: its one slice as it is (most answers), else its slices as a stream. */
function taken({ failure, slices }: { failure: Envelope<never> | null; slices: TextSlices }): Envelope<unknown> | Streamed {
  if (failure) return failure;
  // Read whole by the store already (no read stays open on a connection that serves other requests meanwhile).
  const parts = textsOf(slices);
  return parts.length === 1 ? { head: SUCCESS, text: parts[0] } : { head: SUCCESS, body: listed(parts) };
}

async function v1(store: StoreLike, body: Json, req: CoreRequest): Promise<Envelope<unknown> | Streamed> {
  const kind = typeof body.request === 'string' ? body.request.toLowerCase() : undefined;
  if (!kind || !(V1_REQUESTS as readonly string[]).includes(kind)) {
    return bad(`request: expected one of ${V1_REQUESTS.join(', ')}, got ${describe(body.request)}`, 'request');
  }
  const type = body.type as string;
  switch (kind as V1Request) {
    case 'get': {
      const options = body.options === null ? undefined : body.options;
      return query(store, type, v1Query(body.query), options, req);
    }
    case 'insert':
    case 'replace': {
      if (!Array.isArray(body.body)) return bad(`body: expected an array of documents, got ${describe(body.body)}`, 'body');
      const docs = body.body.map(objectIdToId);
      if (kind === 'replace') return store.replace(type, docs, activity(req));
      return store.insert(type, docs, activity(req, body.options ?? undefined));
    }
    case 'update': {
      // The service's older form puts the fields to set in `options`.
      const fields = body.body ?? body.options;
      return store.update(type, v1Query(body.query), fields, activity(req));
    }
    case 'delete':
      return store.delete(type, v1Query(body.query), activity(req));
    case 'aggregate':
      return store.aggregate(type, v1Query(body.query), body.options ?? undefined, req);
    case 'count':
      return store.count(type, v1Query(body.query), body.options ?? undefined, req);
    case 'distinct': {
      // The versioned family has no key of its own for the field: it travels as options.field.
      const { field, ...options } = isPlainObject(body.options) ? body.options : {};
      return store.distinct(type, field as string, v1Query(body.query), options, req);
    }
    case 'types':
      return store.types();
    case 'schema':
      return store.schema(type);
  }
}

/** A whole number from a query-string parameter, or the envelope refusing it; `undefined` when absent. */
function intParam(req: CoreRequest, name: string, header?: string): number | undefined | Envelope<unknown> {
  const raw = (header && req.header(header)) || req.searchParams.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw)) return bad(`${name}: expected a non-negative integer, got ${JSON.stringify(raw.slice(0, 40))}`, name);
  return Number(raw);
}

/** Heartbeat comments keep an idle event stream's connection (and the proxies on its way) open. */
const HEARTBEAT_MS = 15_000;

/**
 * The change feed: `GET /data/changes?type=Well&since=41&query={…}`. As Server-Sent Events when the client accepts
 * text/event-stream (each event `id: seq`, so a reconnecting EventSource resumes from Last-Event-ID), else one JSON
 * envelope of the events after `since`, waiting up to `wait` ms (default 25,000) for the first (long-poll).
 */
async function changes(store: StoreLike, req: CoreRequest): Promise<Envelope<unknown> | Streamed> {
  if (!store.watch || !store.changes) return fail([{ code: 'NOT_FOUND', message: 'this store has no change feed' }]);
  const type = req.searchParams.get('type') ?? undefined;
  const since = intParam(req, 'since', 'last-event-id');
  if (typeof since === 'object') return since;
  let query: unknown;
  const text = req.searchParams.get('query');
  if (text !== null) {
    try {
      query = JSON.parse(text);
    } catch {
      return bad('query: expected a JSON query object', 'query');
    }
  }
  if (!(req.header('accept') ?? '').includes('text/event-stream')) {
    const wait = intParam(req, 'wait');
    const limit = intParam(req, 'limit');
    if (typeof wait === 'object') return wait;
    if (typeof limit === 'object') return limit;
    return store.changes(type, { since, query, limit, waitMs: wait ?? 25_000, signal: req.signal });
  }
  // Opening a stream costs the main thread about what writing OPEN_COST bytes does: 500 opened at once share the
  // streams' budget of a turn (pace.ts) and other requests are read in between, not after all of them.
  const turn = streams.take(OPEN_COST);
  if (turn) await turn;
  // Opened here, so a refusal (feed off, bad query, pruned `since`) is an envelope, not a broken stream.
  const probe = await store.changes(type, { since, query, limit: 1 });
  if (!probe.success) return probe;
  const stop = new AbortController();
  const events = store.watch(type, { since, query, signal: req.signal, onDrop: () => stop.abort() });
  return { head: envelope(), body: eventStream(events), stop: stop.signal, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } };
}

/** What opening an SSE stream counts against the streams' budget of a turn (pace.ts): ~0.4 ms measured, as 16 KiB. */
const OPEN_COST = 16 * 1024;

/** A store's watch; `nextBatch`, where it has one, hands the events there are in one step (ChangeStream.nextBatch). */
type Watch = ReturnType<NonNullable<StoreLike['watch']>>;

/** Most bytes of events sent in one chunk: a stream behind is sent its backlog in writes of about this size. */
const CHUNK_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/**
 * Each change event's SSE bytes, made once whatever the number of streams sending it: subscribers of the same type
 * and query are handed the same event objects by the store's one reader, so a commit costs one serialisation and one
 * encoding per event, and each stream's write only copies bytes.
 */
const sseEvents = new WeakMap<object, Uint8Array>();
function sseEvent(e: { seq: number }): Uint8Array {
  let bytes = sseEvents.get(e);
  if (bytes === undefined) {
    bytes = encoder.encode(`id: ${e.seq}\nevent: change\ndata: ${eventJson(e)}\n\n`);
    sseEvents.set(e, bytes);
  }
  return bytes;
}

/** Resolves null after the microtasks queued now: events already buffered arrive before it. */
const afterBuffered = () => new Promise<null>((resolve) => setTimeout(() => resolve(null), 0));

/**
 * Server-Sent Events of a feed, with a heartbeat comment while it is idle. The events already buffered go out in one
 * chunk (one write per commit per stream, not one per event), up to CHUNK_BYTES. A stream whose subscriber was dropped
 * for falling behind (CHANGES_OVERFLOW) ends with a comment saying so (the route's `stop`, aborted by the watch's
 * onDrop, keeps the bridge from waiting on a client that stopped reading): the client reconnects with its
 * Last-Event-ID and misses nothing.
 */
async function* eventStream(events: Watch): AsyncGenerator<Chunk> {
  // Two chunks at once: the bridges send the head when a second chunk shows the answer is a stream.
  yield 'retry: 1000\n\n';
  yield ': consolidata change feed\n\n';
  // The events there are now, up to about `bytes` of JSON, in one step where the store's watch can (nextBatch).
  const batch: (bytes: number) => Promise<{ seq: number }[]> = events.nextBatch
    ? (bytes) => events.nextBatch!(bytes)
    : async () => {
        const step = await events.next();
        return step.done ? [] : [step.value];
      };
  // A step may fail while the stream waits to be pulled (its rejection is read once it is): never unhandled.
  const next = (bytes: number) => {
    const p = batch(bytes);
    p.catch(() => undefined);
    return p;
  };
  let pending = next(CHUNK_BYTES);
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const beat = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), HEARTBEAT_MS)));
      const first = await Promise.race([pending, beat]);
      clearTimeout(timer);
      if (first === null) {
        yield ': heartbeat\n\n';
        continue;
      }
      if (!first.length) return;
      const parts: Uint8Array[] = [];
      let size = 0;
      const add = (got: { seq: number }[]) => {
        for (const e of got) {
          const bytes = sseEvent(e);
          parts.push(bytes);
          size += bytes.byteLength;
        }
      };
      add(first);
      pending = next(CHUNK_BYTES - size);
      let ended = false;
      // One per chunk, not one per event: a commit of 10,000 events to 500 streams made 5,000,000 timers.
      const flushed = afterBuffered();
      while (size < CHUNK_BYTES) {
        const more = await Promise.race([pending, flushed]);
        if (more === null) break;
        if (!more.length) {
          ended = true;
          break;
        }
        add(more);
        pending = next(Math.max(1, CHUNK_BYTES - size));
      }
      // The events' own bytes, shared by every stream sending them: a stream's chunk is never a copy of them.
      yield parts;
      if (ended) return;
    }
  } catch (e) {
    if (!(DataStoreError.is(e) && e.code === 'CHANGES_OVERFLOW')) throw e;
    yield `: dropped: ${e.message.replace(/\n/g, ' ')}; reconnect with Last-Event-ID\n\n`;
  } finally {
    await events.return(undefined);
  }
}

/** Every route under the base path; `satisfies` keeps its keys, so the OpenAPI description must cover each. */
const ROUTES = {
  '/data/changes': {
    methods: { GET: { json: false, run: (s, _b, req) => changes(s, req) } },
  },
  '/data/query': {
    methods: {
      POST: { json: true, keys: ['type', 'query', 'options'], run: (s, b, req) => query(s, b.type as string, b.query, b.options, req) },
    },
  },
  '/data/aggregate': {
    methods: { POST: { json: true, keys: ['type', 'query', 'options'], run: (s, b, req) => s.aggregate(b.type as string, b.query, b.options, req) } },
  },
  '/data/count': {
    methods: { POST: { json: true, keys: ['type', 'query', 'options'], run: (s, b, req) => s.count(b.type as string, b.query, b.options, req) } },
  },
  '/data/distinct': {
    methods: { POST: { json: true, keys: ['type', 'field', 'query', 'options'], run: (s, b, req) => s.distinct(b.type as string, b.field as string, b.query, b.options, req) } },
  },
  '/data': {
    methods: {
      POST: { json: true, keys: ['type', 'data', 'options'], run: (s, b, req) => s.insert(b.type as string, b.data, activity(req, b.options)) },
      PUT: { json: true, keys: ['type', 'data'], run: (s, b, req) => s.replace(b.type as string, b.data, activity(req)) },
      PATCH: { json: true, keys: ['type', 'query', 'body'], run: (s, b, req) => s.update(b.type as string, b.query, b.body, activity(req)) },
      DELETE: { json: true, keys: ['type', 'query'], run: (s, b, req) => s.delete(b.type as string, b.query, activity(req)) },
    },
  },
  '/data/types': {
    methods: { GET: { json: false, run: (s) => s.types() } },
  },
  '/data/schema': {
    methods: {
      GET: { json: false, run: (s, _b, req) => s.schema(req.searchParams.get('type') as string) },
      POST: { json: true, keys: ['type'], run: (s, b) => s.schema(b.type as string) },
    },
  },
  '/v1/data': {
    methods: { POST: { json: true, keys: ['type', 'request', 'query', 'options', 'body'], run: (s, b, req) => v1(s, b, req) } },
  },
  '/openapi.json': {
    methods: { GET: { json: false, run: (s, _b, _req, site) => describeApi(s, site) } },
  },
  '/docs': {
    methods: { GET: { json: false, run: (s, _b, req, site) => referencePage(s, site, req) } },
  },
} satisfies Record<string, Route>;

/** Route path → its methods, as the OpenAPI description's operation table must have them. */
export type RouteMethods = { [P in keyof typeof ROUTES]: keyof (typeof ROUTES)[P]['methods'] & string };

/** `/api/` → `/api`; `''` and `/` → `''`. */
export function normaliseBasePath(basePath: string): string {
  if (typeof basePath !== 'string') throw new TypeError('basePath must be a string');
  let p = basePath.trim();
  if (p && !p.startsWith('/')) p = `/${p}`;
  return p.replace(/\/+$/, '');
}

/** `application/json` with an optional utf-8 charset, any case. */
export function isJsonContentType(value: string | null): boolean {
  if (!value) return false;
  // What clients send nearly always, answered without splitting it.
  if (value === 'application/json') return true;
  const [type, ...params] = value.split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') return false;
  for (const p of params) {
    const [name, raw] = p.split('=').map((s) => s.trim());
    if (name === 'charset' && raw?.replace(/^"|"$/g, '') !== 'utf-8' && raw?.replace(/^"|"$/g, '') !== 'utf8') return false;
  }
  return true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes (bounded in size and depth by their reader, BoundedBody) → the request's JSON object, or the envelope saying why not. */
export function parseJsonBody(source: Uint8Array | { parsed: unknown }): { ok: true; value: Json } | { ok: false; envelope: Envelope<unknown> } {
  let value: unknown;
  if (source instanceof Uint8Array) {
    let text: string;
    try {
      text = utf8.decode(source);
    } catch {
      return { ok: false, envelope: bad('request body: not valid UTF-8') };
    }
    try {
      value = JSON.parse(text);
    } catch (e) {
      if (text.trim() === '') return { ok: false, envelope: bad('request body: expected a JSON object, got an empty body') };
      return { ok: false, envelope: bad(`request body: malformed JSON (${(e as Error).message})`) };
    }
  } else {
    value = source.parsed;
  }
  if (!isPlainObject(value)) return { ok: false, envelope: bad(`request body: expected a JSON object, got ${describe(value)}`) };
  return { ok: true, value };
}

function unknownKeys(body: Json, keys: readonly string[]): Envelope<unknown> | undefined {
  const extra = Object.keys(body).filter((k) => !keys.includes(k));
  if (!extra.length) return undefined;
  return fail(
    extra.map((k): EnvelopeError => ({ code: 'INVALID_REQUEST', field: k, message: `request body: unknown key "${k}"${didYouMean(k, keys)}; expected ${keys.join(', ')}` })),
  );
}

/**
 * A write's options with the caller's activity id (header `x-activity-id`), so one business operation spanning
 * several requests shares one id. Options that are not an object are passed on as they are, for the store to refuse.
 */
function activity(req: CoreRequest, options?: unknown): { activityId?: string } | undefined {
  const id = req.header('x-activity-id');
  const given = options as { activityId?: string } | undefined;
  if (id === null || (options !== undefined && options !== null && !isPlainObject(options))) return given;
  return { ...(options ?? {}), activityId: id };
}

/** The headers of a JSON answer: one object for every answer that adds none (a bridge copies, never changes, them). */
const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });

/** Answers with more documents than this are written in slices (see envelopeText). */
const STREAM_ROWS = 1000;

/** The slices a one-thread store's text answer is taken in: as an answer of documents is written (envelopeText). */
const TEXT_SLICES = { rows: STREAM_ROWS, chars: 1 << 20 };

/**
 * The JSON text of an envelope in slices of about `sliceChars`: the same text JSON.stringify would make, built
 * document by document, so an answer of any size is written without ever being one string.
 */
export async function* envelopeText(env: Envelope<unknown>, sliceChars = 1 << 20): AsyncGenerator<string> {
  const { data, ...tail } = env;
  let text = '{"data":[';
  for (let i = 0; i < data.length; i++) {
    text += (i ? ',' : '') + JSON.stringify(data[i]);
    if (text.length >= sliceChars) {
      yield text;
      text = '';
    }
  }
  yield `${text}],${JSON.stringify(tail).slice(1)}`;
}

/**
 * Builds the routing core shared by `createFetchHandler` and `createNodeHandler`.
 * @example const route = createRouter(store, { basePath: '/api' }); const { status, envelope } = await route.handle(req);
 */
export function createRouter(input: StoreInput, options: HttpOptions = {}) {
  // validate
  const store = input ? dynamicOf(input) : undefined;
  if (!store || typeof store.query !== 'function') throw new TypeError('createRouter: expected a DataStore or DynamicStore');
  const untyped: StoreLike = store;
  if (options === null || typeof options !== 'object') throw new TypeError('HTTP adapter: options must be an object');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (typeof maxBodyBytes !== 'number' || !Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new RangeError('HTTP adapter: maxBodyBytes must be a non-negative integer');
  }
  if (options.authenticate !== undefined && typeof options.authenticate !== 'function') {
    throw new TypeError('HTTP adapter: authenticate must be a function');
  }
  // apply defaults
  const basePath = normaliseBasePath(options.basePath ?? DEFAULT_BASE_PATH);
  const alwaysOk = options.alwaysOk === true;
  const authenticate = options.authenticate;
  const challenge = authenticate?.challenge ?? 'Bearer realm="consolidata"';
  const explorerOption = typeof options.explorer === 'string' ? { path: options.explorer } : options.explorer;
  if (explorerOption !== undefined && (explorerOption === null || typeof explorerOption !== 'object' || typeof explorerOption.path !== 'string')) {
    throw new TypeError('HTTP adapter: explorer must be a path such as "/explore", or { path, dir }');
  }
  const explorer = explorerOption && createExplorer({ path: normaliseBasePath(explorerOption.path), basePath, dir: explorerOption.dir });
  const site: Site = { basePath, alwaysOk, described: new Map() };
  if (authenticate) site.authScheme = challenge.split(' ')[0]!.toLowerCase();

  /** The route path under basePath, or undefined when the path is outside it. */
  function subPath(path: string): string | undefined {
    if (basePath === '') return path;
    if (path === basePath) return '';
    return path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : undefined;
  }

  /** Whether this router answers a path: the API's routes under basePath, or the explorer's files. */
  function owns(path: string): boolean {
    return subPath(path) !== undefined || explorer?.owns(path) === true;
  }

  function respond(env: Envelope<unknown>, headers?: Record<string, string>): CoreResponse {
    const out: CoreResponse = { status: alwaysOk ? 200 : statusOf(env), headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS, envelope: env };
    // A long answer is written document by document, never as one string (which has a length limit, ~512 MB).
    if (env.data.length > STREAM_ROWS) out.body = envelopeText(env);
    return out;
  }

  function failWith(code: ErrorCode, message: string, headers?: Record<string, string>): CoreResponse {
    return respond(fail([{ code, message }]), headers);
  }

  /**
   * A request's response: at once when every step answers at once (a one-thread SQLite store, once the body is
   * read), else a promise of it; never a rejection (a failure is its envelope).
   */
  function handle(req: CoreRequest): MaybePromise<CoreResponse> {
    return orCatch(() => dispatch(req), caught);
  }

  /** A request to its route and method, through authentication; the answers of a path or method not served. */
  function dispatch(req: CoreRequest): MaybePromise<CoreResponse> {
    const sub = subPath(req.path);
    const key = sub === undefined ? undefined : sub.endsWith('/') ? sub.slice(0, -1) : sub;
    const route: Route | undefined = key !== undefined && Object.hasOwn(ROUTES, key) ? ROUTES[key as keyof typeof ROUTES] : undefined;
    // Paths under the API's own prefix stay the API's (404, 405), even with the explorer at the root.
    if (!route && (sub === undefined || basePath === '') && explorer?.owns(req.path)) return explore(req);
    if (!route) return failWith('NOT_FOUND', `no route ${req.method} ${req.path}`);
    const method = req.method.toUpperCase();
    const entry = Object.hasOwn(route.methods, method) ? route.methods[method] : undefined;
    if (!entry) {
      const allow = Object.keys(route.methods).join(', ');
      return failWith('METHOD_NOT_ALLOWED', `${method} is not allowed on ${req.path}; use ${allow}`, { allow });
    }
    if (!authenticate) return serve(entry, untyped, req);
    return andThen(authenticate({ method, path: req.path, headers: req.headers }), (user) => {
      if (!user || typeof user.userId !== 'string' || user.userId === '') {
        // The body is never read for an unauthenticated request: the connection closes instead of draining it.
        return failWith('UNAUTHORIZED', 'authentication required', { 'www-authenticate': challenge, connection: 'close' });
      }
      return serve(entry, untyped.withUser(user.userId), req);
      // A promise resolving to a promise is that promise's value.
    }) as MaybePromise<CoreResponse>;
  }

  /** The explorer's page or files, behind the same credentials as the API: a browser asks for them once, then sends them on every call. */
  async function explore(req: CoreRequest): Promise<CoreResponse> {
    if (authenticate && !(await authenticate({ method: req.method.toUpperCase(), path: req.path, headers: req.headers }))?.userId) {
      return failWith('UNAUTHORIZED', 'authentication required', { 'www-authenticate': challenge });
    }
    return (await explorer!.answer(req.path, req.method.toUpperCase()))!;
  }

  /** A route's answer for an admitted request: its JSON body read and checked first, where the route takes one. */
  function serve(entry: Route['methods'][string], target: StoreLike, req: CoreRequest): MaybePromise<CoreResponse> {
    if (!entry.json) return andThen(entry.run(target, {}, req, site), answered);
    const type = req.header('content-type');
    if (!isJsonContentType(type)) {
      return failWith('UNSUPPORTED_MEDIA_TYPE', `request body must be application/json, got ${type ? JSON.stringify(type) : 'no content type'}`);
    }
    return req.readBody().then((raw) => {
      const parsed = parseJsonBody(raw);
      if (!parsed.ok) return respond(parsed.envelope);
      const rejected = entry.keys && unknownKeys(parsed.value, entry.keys);
      if (rejected) return respond(rejected);
      return andThen(entry.run(target, parsed.value, req, site), answered);
    });
  }

  /** The response of a route's answer: an envelope, or a text or streamed one with its success head. */
  function answered(answer: Envelope<unknown> | Streamed): CoreResponse {
    if (!('head' in answer)) return respond(answer);
    const head = respond(answer.head);
    if (answer.headers) head.headers = answer.headers;
    if (answer.body) head.body = answer.body;
    else head.text = answer.text;
    if (answer.stop) head.stop = answer.stop;
    return head;
  }

  /** A request's failure: an unreadable body's answer (its connection closes), or INTERNAL. */
  function caught(e: unknown): CoreResponse {
    if (e instanceof BodyError) {
      return e.status === 413
        ? failWith('PAYLOAD_TOO_LARGE', `request body is larger than ${maxBodyBytes} bytes`, { connection: 'close' })
        : // The rest of the body is unread (nested too deep) or unreadable: the connection closes instead of draining it.
          failWith('INVALID_REQUEST', `request body: ${e.message}`, { connection: 'close' });
    }
    return internal(e);
  }

  /** An unexpected error: its cause goes to onError with a request id; the answer carries only that id. */
  function internal(e: unknown): CoreResponse {
    return respond(internalFailure(e, options.onError));
  }

  return { basePath, maxBodyBytes, subPath, owns, handle, failWith, internal };
}
