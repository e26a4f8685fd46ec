/** One case table for the HTTP adapter, run over a socket (node handler) and through the Fetch handler. */
import { expect } from 'vitest';
import type { DataStore, Envelope } from '../../src/index.js';
import type { HttpOptions } from '../../src/http/index.js';
import { sqlite, type StoreBackend } from '../helpers/backends.js';

export const ENVELOPE_KEYS = [
  'data', 'cursor', 'hasCursor', 'empty', 'count', 'total', 'activityId', 'success', 'message', 'errors',
  'issues', 'hasErrors', 'insertedIds', 'idsNotFound', 'updatedIds', 'deletedIds', 'referencesRemoved',
  'referencesUpdated', 'referencesInserted',
].sort();

type Doc = Record<string, unknown>;

export interface Reply {
  status: number;
  headers: Headers;
  env: Envelope<Doc>;
}

export interface HttpCase {
  name: string;
  method: string;
  /** Path and query string, e.g. `/api/data/schema?type=Well`. */
  path: string;
  /** Sent as JSON (with `application/json`) unless `raw` is given. */
  body?: unknown;
  /** Bytes or text sent as is. */
  raw?: string | Uint8Array;
  /** Content type; default `application/json` when there is a body, `null` sends none. */
  contentType?: string | null;
  headers?: Record<string, string>;
  options?: HttpOptions;
  status: number;
  /** The first error's code, when the envelope must carry one. */
  code?: string;
  check?: (reply: Reply, store: DataStore) => void | Promise<void>;
}

/** Three Wells every case starts from, in a store of `backend` (SQLite in memory unless told). */
export async function seededStore(backend: StoreBackend = sqlite): Promise<DataStore> {
  const store = await backend.open({ userId: 'seed' });
  const env = await store.insert('Well', [
    { id: 'w1', pwi: 'W1', basinName: 'Permian', fracStages: 20, spudDate: '3/14/2021', surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] } },
    { id: 'w2', pwi: 'W2', basinName: 'Bakken', fracStages: 10, spudDate: '2019-01-01', surfaceLoc: { type: 'Point', coordinates: [-103.2, 47.9] } },
    { id: 'w3', pwi: 'W3', basinName: 'Permian', fracStages: 30, spudDate: '2022-06-01' },
  ]);
  if (!env.success) throw new Error(`seed failed: ${env.message}`);
  return store;
}

const pwis = (env: Envelope<Doc>) => env.data.map((d) => d.pwi);
const one = async (store: DataStore, pwi: string) => (await store.query('Well', { pwi })).data[0] as Doc | undefined;

export const CASES: HttpCase[] = [
  // ---- unversioned family ----------------------------------------------------------------
  {
    name: 'POST /data/query filters, sorts and pages',
    method: 'POST', path: '/api/data/query',
    body: { type: 'Well', query: { basinName: 'Permian' }, options: { sortBy: 'fracStages', sortOrder: -1, limit: 1 } },
    status: 200,
    check: ({ env }) => {
      expect(pwis(env)).toEqual(['W3']);
      expect(env.count).toBe(1);
      expect(env.total).toBe(2);
    },
  },
  {
    name: 'POST /data/query with a geo bounds operator',
    method: 'POST', path: '/api/data/query',
    body: { type: 'well', query: { surfaceLoc: { bounds: [-102, 31, -101, 32] } } },
    status: 200,
    check: ({ env }) => expect(pwis(env)).toEqual(['W1']),
  },
  {
    name: 'POST /data/query without query returns everything',
    method: 'POST', path: '/api/data/query', body: { type: 'Well' }, status: 200,
    check: ({ env }) => expect(env.total).toBe(3),
  },
  {
    name: 'POST /data/aggregate groups, sums and sorts by a metric',
    method: 'POST', path: '/api/data/aggregate',
    body: { type: 'Well', query: { fracStages: { gte: 10 } }, options: { groupBy: ['basinName', { field: 'spudDate', interval: 'year' }], metrics: { stages: { sum: 'fracStages' }, wells: { count: '*' } }, sortBy: 'stages', sortOrder: -1, limit: 2 } },
    status: 200,
    check: ({ env }) => {
      expect(env.data).toEqual([
        { basinName: 'Permian', spudDate: '2022-01-01T00:00:00.000Z', stages: 30, wells: 1 },
        { basinName: 'Permian', spudDate: '2021-01-01T00:00:00.000Z', stages: 20, wells: 1 },
      ]);
      expect([env.total, env.hasCursor]).toEqual([3, true]);
    },
  },
  {
    name: 'POST /data/aggregate: avg of a String field is 400 INVALID_REQUEST',
    method: 'POST', path: '/api/data/aggregate', body: { type: 'Well', options: { metrics: { x: { avg: 'basinName' } } } },
    status: 400, code: 'INVALID_REQUEST',
  },
  {
    name: 'POST /data/count counts the matches',
    method: 'POST', path: '/api/data/count', body: { type: 'Well', query: { basinName: 'Permian' } },
    status: 200,
    check: ({ env }) => expect([env.count, env.total, env.data]).toEqual([2, 2, []]),
  },
  {
    name: 'POST /data/distinct answers the values in order',
    method: 'POST', path: '/api/data/distinct', body: { type: 'Well', field: 'basinName' },
    status: 200,
    check: ({ env }) => expect(env.data).toEqual(['Bakken', 'Permian']),
  },
  {
    name: 'v1 aggregate, count and distinct',
    method: 'POST', path: '/api/v1/data',
    body: { type: 'Well', request: 'Aggregate', query: null, options: { groupBy: ['basinName'], metrics: { n: { count: '*' } } } },
    status: 200,
    check: ({ env }) => expect(env.data).toEqual([{ basinName: 'Bakken', n: 1 }, { basinName: 'Permian', n: 2 }]),
  },
  {
    name: 'v1 distinct takes its field in options.field',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'distinct', options: { field: 'pwi' } },
    status: 200,
    check: ({ env }) => expect(env.data).toEqual(['W1', 'W2', 'W3']),
  },
  {
    name: 'POST /data/query: bad operand is 400 INVALID_QUERY',
    method: 'POST', path: '/api/data/query', body: { type: 'Well', query: { fracStages: { gt: 'abc' } } },
    status: 400, code: 'INVALID_QUERY',
  },
  {
    name: 'POST /data/query: unknown type is 400 UNKNOWN_TYPE',
    method: 'POST', path: '/api/data/query', body: { type: 'Wel', query: {} }, status: 400, code: 'UNKNOWN_TYPE',
  },
  {
    name: 'POST /data/query: unknown field is 400 UNKNOWN_FIELD',
    method: 'POST', path: '/api/data/query', body: { type: 'Well', query: { basin: 'x' } }, status: 400, code: 'UNKNOWN_FIELD',
  },
  {
    name: 'POST /data/query: a misspelt request key is 400 with a hint',
    method: 'POST', path: '/api/data/query', body: { type: 'Well', qeury: {} }, status: 400, code: 'INVALID_REQUEST',
    check: ({ env }) => expect(env.errors[0]!.message).toContain('did you mean "query"'),
  },
  {
    name: 'POST /data inserts',
    method: 'POST', path: '/api/data', body: { type: 'Well', data: [{ pwi: 'W4' }, { pwi: 'W5' }] }, status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(2);
      expect(env.insertedIds).toHaveLength(2);
      expect((await one(store, 'W4'))?.createdBy).toBe('seed');
    },
  },
  {
    name: 'POST /data: invalid document is 400 VALIDATION and nothing is written',
    method: 'POST', path: '/api/data', body: { type: 'Well', data: [{ pwi: 'W6' }, { pwi: 'W7', fracStages: 'many' }] },
    status: 400, code: 'VALIDATION',
    check: async ({ env }, store) => {
      expect(env.errors[0]).toMatchObject({ index: 1, field: 'fracStages' });
      expect(await one(store, 'W6')).toBeUndefined();
    },
  },
  {
    name: 'POST /data: a partial insert is 409 and lists what went in',
    method: 'POST', path: '/api/data', body: { type: 'Well', data: [{ pwi: 'W1' }, { pwi: 'W8' }] },
    status: 409, code: 'DUPLICATE_KEY',
    check: async ({ env }, store) => {
      expect(env.success).toBe(false);
      expect(env.count).toBe(1);
      expect(env.insertedIds).toHaveLength(1);
      expect(env.errors[0]).toMatchObject({ index: 0, code: 'DUPLICATE_KEY' });
      expect(await one(store, 'W8')).toBeDefined();
    },
  },
  {
    name: 'POST /data with options.atomic rolls back on a collision',
    method: 'POST', path: '/api/data', body: { type: 'Well', data: [{ pwi: 'W9' }, { pwi: 'W1' }], options: { atomic: true } },
    status: 409, code: 'DUPLICATE_KEY',
    check: async ({ env }, store) => {
      expect(env.count).toBe(0);
      expect(await one(store, 'W9')).toBeUndefined();
    },
  },
  {
    name: 'POST /data: data not an array is 400 INVALID_REQUEST',
    method: 'POST', path: '/api/data', body: { type: 'Well', data: { pwi: 'W1' } }, status: 400, code: 'INVALID_REQUEST',
  },
  {
    name: 'PUT /data replaces by id and inserts the rest',
    method: 'PUT', path: '/api/data', body: { type: 'Well', data: [{ id: 'w1', pwi: 'W1', basinName: 'Delaware' }, { pwi: 'W10' }] },
    status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(2);
      expect(env.insertedIds).toHaveLength(1);
      const w1 = await one(store, 'W1');
      expect(w1?.basinName).toBe('Delaware');
      expect(w1?.fracStages).toBeUndefined();
    },
  },
  {
    name: 'PUT /data: a key collision is 409',
    method: 'PUT', path: '/api/data', body: { type: 'Well', data: [{ pwi: 'W2' }] }, status: 409, code: 'DUPLICATE_KEY',
  },
  {
    name: 'PATCH /data updates matches',
    method: 'PATCH', path: '/api/data', body: { type: 'Well', query: { basinName: 'Permian' }, body: { statusCurrent: 'Producing' } },
    status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(2);
      expect((await one(store, 'W3'))?.statusCurrent).toBe('Producing');
    },
  },
  {
    name: 'PATCH /data: an empty body is 400 VALIDATION',
    method: 'PATCH', path: '/api/data', body: { type: 'Well', query: {}, body: {} }, status: 400, code: 'VALIDATION',
  },
  {
    name: 'DELETE /data deletes matches',
    method: 'DELETE', path: '/api/data', body: { type: 'Well', query: { pwi: 'W2' } }, status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(1);
      expect(await one(store, 'W2')).toBeUndefined();
    },
  },
  {
    name: 'DELETE /data with an empty query is refused but 200',
    method: 'DELETE', path: '/api/data', body: { type: 'Well', query: {} }, status: 200,
    check: async ({ env }, store) => {
      expect(env.success).toBe(true);
      expect(env.count).toBe(0);
      expect(env.message).toMatch(/illegal/i);
      expect((await store.query('Well', {})).total).toBe(3);
    },
  },
  {
    name: 'DELETE /data without a JSON body is 415',
    method: 'DELETE', path: '/api/data', contentType: null, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'GET /data/types lists every type',
    method: 'GET', path: '/api/data/types', status: 200,
    check: ({ env }) => {
      expect(env.data).toContain('Well');
      expect(env.data).toContain('DailyProduction');
    },
  },
  {
    name: 'GET /data/schema?type=T',
    method: 'GET', path: '/api/data/schema?type=well', status: 200,
    check: ({ env }) => expect(env.data).toContainEqual({ name: 'surfaceLoc', type: 'GeoPoint' }),
  },
  {
    name: 'GET /data/schema without type is 400',
    method: 'GET', path: '/api/data/schema', status: 400, code: 'INVALID_REQUEST',
  },
  {
    name: 'POST /data/schema {type}',
    method: 'POST', path: '/api/data/schema', body: { type: 'DailyProduction' }, status: 200,
    check: ({ env }) => expect(env.data).toContainEqual({ name: 'prodDate', type: 'DateTime' }),
  },
  {
    name: 'a trailing slash is the same route',
    method: 'GET', path: '/api/data/types/', status: 200,
  },
  // ---- versioned family ------------------------------------------------------------------
  {
    name: 'v1 get with options',
    method: 'POST', path: '/api/v1/data',
    body: { type: 'Well', request: 'get', query: { fracStages: { Gte: 20 } }, options: { limit: 1, skip: 1, sortBy: 'fracStages', sortOrder: 1 } },
    status: 200,
    check: ({ env }) => {
      expect(pwis(env)).toEqual(['W3']);
      expect(env.total).toBe(2);
    },
  },
  {
    name: 'v1 GET (any case) with null query and options returns everything',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'GET', query: null, options: null }, status: 200,
    check: ({ env }) => expect(env.total).toBe(3),
  },
  {
    name: 'v1 get by objectId',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'get', query: { objectId: 'w2' } }, status: 200,
    check: ({ env }) => expect(pwis(env)).toEqual(['W2']),
  },
  {
    name: 'v1 insert maps objectId to id',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'Insert', body: [{ objectId: 'w11', pwi: 'W11' }] }, status: 200,
    check: async ({ env }, store) => {
      expect(env.insertedIds).toEqual(['w11']);
      const doc = await one(store, 'W11');
      expect(doc?.id).toBe('w11');
      expect(doc).not.toHaveProperty('objectId');
    },
  },
  {
    name: 'v1 insert duplicate is 409',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'insert', body: [{ pwi: 'W1' }] }, status: 409, code: 'DUPLICATE_KEY',
  },
  {
    name: 'v1 insert with body not an array is 400',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'insert', body: { pwi: 'X' } }, status: 400, code: 'INVALID_REQUEST',
    check: ({ env }) => expect(env.errors[0]!.field).toBe('body'),
  },
  {
    name: 'v1 replace: objectId documents are replaced, the rest inserted',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'replace', body: [{ objectId: 'w2', pwi: 'W2', basinName: 'Williston' }, { pwi: 'W12' }] },
    status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(2);
      expect(env.insertedIds).toHaveLength(1);
      expect((await one(store, 'W2'))?.basinName).toBe('Williston');
    },
  },
  {
    name: 'v1 update with body',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'update', query: { pwi: 'W1' }, body: { statusCurrent: 'Shut-In' } }, status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(1);
      expect((await one(store, 'W1'))?.statusCurrent).toBe('Shut-In');
    },
  },
  {
    name: 'v1 update with the fields in options (older form)',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'update', query: { pwi: 'W2' }, options: { statusCurrent: 'Drilling' } }, status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(1);
      expect((await one(store, 'W2'))?.statusCurrent).toBe('Drilling');
    },
  },
  {
    name: 'v1 delete',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'delete', query: { pwi: 'W3' } }, status: 200,
    check: ({ env }) => expect(env.count).toBe(1),
  },
  {
    name: 'v1 delete by objectId',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'delete', query: { objectId: 'w1' } }, status: 200,
    check: async ({ env }, store) => {
      expect(env.count).toBe(1);
      expect(await one(store, 'W1')).toBeUndefined();
    },
  },
  {
    name: 'v1 delete with a null query is refused but 200',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'delete', query: null }, status: 200,
    check: ({ env }) => {
      expect(env.count).toBe(0);
      expect(env.message).toMatch(/illegal/i);
    },
  },
  {
    name: 'v1 types',
    method: 'POST', path: '/api/v1/data', body: { request: 'types' }, status: 200,
    check: ({ env }) => expect(env.data).toContain('Petron'),
  },
  {
    name: 'v1 schema',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'schema' }, status: 200,
    check: ({ env }) => expect(env.data[0]).toEqual({ name: 'id', type: 'String' }),
  },
  {
    name: 'v1 unknown request kind is 400',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'upsert' }, status: 400, code: 'INVALID_REQUEST',
    check: ({ env }) => expect(env.errors[0]!.field).toBe('request'),
  },
  {
    name: 'v1 unknown query operator is 400',
    method: 'POST', path: '/api/v1/data', body: { type: 'Well', request: 'get', query: { fracStages: { Between: 1 } } }, status: 400, code: 'INVALID_QUERY',
  },
  // ---- transport -------------------------------------------------------------------------
  { name: 'unknown route under basePath is 404', method: 'GET', path: '/api/nope', status: 404, code: 'NOT_FOUND' },
  { name: 'unknown route outside basePath is 404', method: 'GET', path: '/elsewhere', status: 404, code: 'NOT_FOUND' },
  {
    name: 'wrong method is 405 with Allow',
    method: 'GET', path: '/api/data', status: 405, code: 'METHOD_NOT_ALLOWED',
    check: ({ headers }) => expect(headers.get('allow')).toBe('POST, PUT, PATCH, DELETE'),
  },
  {
    name: 'POST on /data/types is 405 with Allow: GET',
    method: 'POST', path: '/api/data/types', body: {}, status: 405, code: 'METHOD_NOT_ALLOWED',
    check: ({ headers }) => expect(headers.get('allow')).toBe('GET'),
  },
  {
    name: 'malformed JSON is 400',
    method: 'POST', path: '/api/data/query', raw: '{"type": "Well", ', status: 400, code: 'INVALID_REQUEST',
    check: ({ env }) => expect(env.message).toMatch(/malformed JSON/),
  },
  {
    name: 'an empty JSON body is 400',
    method: 'POST', path: '/api/data/query', raw: '', status: 400, code: 'INVALID_REQUEST',
  },
  {
    name: 'a JSON body that is not an object is 400',
    method: 'POST', path: '/api/data', body: [{ type: 'Well' }], status: 400, code: 'INVALID_REQUEST',
    check: ({ env }) => expect(env.message).toMatch(/expected a JSON object, got an array/),
  },
  {
    name: 'invalid UTF-8 is 400',
    method: 'POST', path: '/api/data/query', raw: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), status: 400, code: 'INVALID_REQUEST',
    check: ({ env }) => expect(env.message).toMatch(/UTF-8/),
  },
  {
    name: 'a form post is 415',
    method: 'POST', path: '/api/data', raw: 'type=Well&data=x', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'text/plain JSON is 415',
    method: 'POST', path: '/api/data/query', raw: '{"type":"Well"}', contentType: 'text/plain', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'application/json; charset=UTF-8 in any case is accepted',
    method: 'POST', path: '/api/data/query', raw: '{"type":"Well"}', contentType: 'Application/JSON; Charset=UTF-8', status: 200,
  },
  {
    name: 'a non-UTF-8 charset is 415',
    method: 'POST', path: '/api/data/query', raw: '{"type":"Well"}', contentType: 'application/json; charset=latin1', status: 415, code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'a body over maxBodyBytes is 413',
    method: 'POST', path: '/api/data', body: { type: 'Well', data: [{ pwi: 'x'.repeat(2000) }] }, options: { maxBodyBytes: 1024 },
    status: 413, code: 'PAYLOAD_TOO_LARGE',
    check: async (_r, store) => expect((await store.query('Well', {})).total).toBe(3),
  },
  {
    name: 'alwaysOk answers 200 on a failure, the envelope still tells',
    method: 'POST', path: '/api/data/query', body: { type: 'Nope' }, options: { alwaysOk: true }, status: 200, code: 'UNKNOWN_TYPE',
    check: ({ env }) => expect(env.success).toBe(false),
  },
  {
    name: 'alwaysOk answers 200 on an unknown route',
    method: 'GET', path: '/api/nope', options: { alwaysOk: true }, status: 200, code: 'NOT_FOUND',
  },
  {
    name: 'a custom basePath',
    method: 'GET', path: '/v5/data/types', options: { basePath: '/v5/' }, status: 200,
  },
  {
    name: 'an authenticate hook that throws is 500 without details',
    method: 'GET', path: '/api/data/types', options: { authenticate: () => { throw new Error('secret detail'); } },
    status: 500, code: 'INTERNAL',
    check: ({ env }) => expect(JSON.stringify(env)).not.toContain('secret detail'),
  },
  {
    name: 'an async authenticate hook makes its user the actor',
    method: 'POST', path: '/api/data', body: { type: 'Well', data: [{ pwi: 'W13' }] },
    options: { authenticate: async (req) => (req.headers.get('x-user') ? { userId: req.headers.get('x-user')! } : null) },
    headers: { 'x-user': 'carol' },
    status: 200,
    check: async (_r, store) => {
      const doc = await one(store, 'W13');
      expect(doc?.createdBy).toBe('carol');
      expect(doc?.updatedBy).toBe('carol');
    },
  },
  {
    name: 'an authenticate hook answering null is 401 with WWW-Authenticate',
    method: 'GET', path: '/api/data/types', options: { authenticate: () => null }, status: 401, code: 'UNAUTHORIZED',
    check: ({ headers }) => expect(headers.get('www-authenticate')).toMatch(/^Bearer/),
  },
];

/** The checks every reply must pass, whatever the case. */
export function checkReply(c: HttpCase, reply: Reply): void {
  expect(reply.status, c.name).toBe(c.status);
  expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(Object.keys(reply.env).sort()).toEqual(ENVELOPE_KEYS);
  expect(reply.env.hasErrors).toBe(reply.env.errors.length > 0);
  if (c.code) expect(reply.env.errors[0]?.code).toBe(c.code);
  else expect(reply.env.success).toBe(true);
}

/** The fetch `RequestInit` of a case. */
export function requestInit(c: HttpCase): RequestInit {
  const headers: Record<string, string> = { ...c.headers };
  let body: string | Uint8Array | undefined;
  if (c.raw !== undefined) body = c.raw;
  else if (c.body !== undefined) body = JSON.stringify(c.body);
  const type = c.contentType === undefined ? (body !== undefined ? 'application/json' : null) : c.contentType;
  if (type) headers['content-type'] = type;
  return { method: c.method, headers, body: body as BodyInit | undefined };
}
