import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { basicAuth, bearerAuth, createFetchHandler, createNodeHandler } from '../../src/http/index.js';
import { seededStore } from './cases.js';

const servers: Server[] = [];
const stores: DataStore[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
  for (const s of stores.splice(0)) s.close();
});

async function listen(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function store(): Promise<DataStore> {
  const s = await seededStore();
  stores.push(s);
  return s;
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('auth over a socket', () => {
  it('basic auth: 401 with a Basic challenge without or with wrong credentials, the app id as actor with good ones', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s, { authenticate: basicAuth({ 'etl-app': 's3cret', other: 'x' }) }));
    const insert = { type: 'Well', data: [{ pwi: 'B1' }] };

    const none = await fetch(`${origin}/api/data`, json(insert));
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="consolidata", charset="UTF-8"');
    expect((await none.json()).errors[0].code).toBe('UNAUTHORIZED');

    for (const bad of [basic('etl-app', 'wrong'), basic('nobody', 's3cret'), basic('etl-app', ''), 'Basic !!!', 'Bearer s3cret']) {
      const res = await fetch(`${origin}/api/data`, json(insert, { authorization: bad }));
      expect(res.status, bad).toBe(401);
    }
    expect((await s.query('Well', { pwi: 'B1' })).total).toBe(0);

    const ok = await fetch(`${origin}/api/data`, json(insert, { authorization: basic('etl-app', 's3cret') }));
    expect(ok.status).toBe(200);
    const doc = (await s.query('Well', { pwi: 'B1' })).data[0]!;
    expect(doc.createdBy).toBe('etl-app');

    const patch = await fetch(`${origin}/api/data`, { ...json({ type: 'Well', query: { pwi: 'B1' }, body: { name: 'n' } }, { authorization: basic('other', 'x') }), method: 'PATCH' });
    expect(patch.status).toBe(200);
    const after = (await s.query('Well', { pwi: 'B1' })).data[0]!;
    expect(after.createdBy).toBe('etl-app');
    expect(after.updatedBy).toBe('other');
  });

  it('a secret containing ":" still works (only the first colon splits)', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s, { authenticate: basicAuth({ app: 'a:b:c' }) }));
    const res = await fetch(`${origin}/api/data/types`, { headers: { authorization: basic('app', 'a:b:c') } });
    expect(res.status).toBe(200);
  });

  it('bearer auth: 401 with a Bearer challenge, tokens map to users', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s, { authenticate: bearerAuth({ 'tok-alice': 'alice', 'tok-bob': 'bob' }) }));
    const none = await fetch(`${origin}/api/v1/data`, json({ type: 'Well', request: 'insert', body: [{ pwi: 'T1' }] }));
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="consolidata"');
    const wrong = await fetch(`${origin}/api/data/types`, { headers: { authorization: 'Bearer tok-alicE' } });
    expect(wrong.status).toBe(401);
    const ok = await fetch(`${origin}/api/v1/data`, json({ type: 'Well', request: 'insert', body: [{ pwi: 'T1' }] }, { authorization: 'bearer tok-bob' }));
    expect(ok.status).toBe(200);
    expect((await s.query('Well', { pwi: 'T1' })).data[0]!.createdBy).toBe('bob');
  });

  it('bearer auth from an array: the user is the token position', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s, { authenticate: bearerAuth(['first', 'second']) }));
    const ok = await fetch(`${origin}/api/data`, json({ type: 'Well', data: [{ pwi: 'T2' }] }, { authorization: 'Bearer second' }));
    expect(ok.status).toBe(200);
    expect((await s.query('Well', { pwi: 'T2' })).data[0]!.createdBy).toBe('token:1');
  });

  it('without auth the API is open and the store user is the actor', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s));
    const res = await fetch(`${origin}/api/data`, json({ type: 'Well', data: [{ pwi: 'O1' }] }));
    expect(res.status).toBe(200);
    expect((await s.query('Well', { pwi: 'O1' })).data[0]!.createdBy).toBe('seed');
  });

  it('auth is checked before the body is read: an unauthenticated oversized body is 401', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s, { authenticate: bearerAuth(['t']), maxBodyBytes: 10 }));
    const res = await fetch(`${origin}/api/data`, json({ type: 'Well', data: [] }));
    expect(res.status).toBe(401);
  });

  it('helpers refuse bad configuration', () => {
    expect(() => basicAuth({ app: '' })).toThrow(TypeError);
    expect(() => basicAuth({ 'a:b': 'x' })).toThrow(TypeError);
    expect(() => bearerAuth([''])).toThrow(TypeError);
  });
});

describe('body limit while streaming', () => {
  function chunked(origin: string, chunks: number, size: number): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${origin}/api/data`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write('{"type":"Well","data":[{"pwi":"');
      for (let i = 0; i < chunks; i++) req.write('x'.repeat(size));
      req.end('"}]}');
    });
  }

  it('node handler: a chunked body without Content-Length crossing the limit is 413', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s, { maxBodyBytes: 1000 }));
    const { status, body } = await chunked(origin, 4, 400);
    expect(status).toBe(413);
    expect(JSON.parse(body).errors[0].code).toBe('PAYLOAD_TOO_LARGE');
    expect((await s.query('Well', {})).total).toBe(3);
    // The server keeps serving.
    expect((await fetch(`${origin}/api/data/types`)).status).toBe(200);
  });

  it('node handler: a chunked body under the limit is accepted', async () => {
    const s = await store();
    const origin = await listen(createNodeHandler(s, { maxBodyBytes: 1000 }));
    const { status } = await chunked(origin, 2, 100);
    expect(status).toBe(200);
    expect((await s.query('Well', { pwi: 'x'.repeat(200) })).total).toBe(1);
  });

  it('fetch handler: a streamed body crossing the limit is 413 and the stream is cancelled', async () => {
    const s = await store();
    const handle = createFetchHandler(s, { maxBodyBytes: 1000 });
    let pulled = 0;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode('x'.repeat(400)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const req = new Request('http://localhost/api/data', { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    const res = await handle(req);
    expect(res.status).toBe(413);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);
  });

  it('a declared Content-Length over the limit is 413 before reading', async () => {
    const s = await store();
    const handle = createFetchHandler(s, { maxBodyBytes: 10 });
    const res = await handle(new Request('http://localhost/api/data/query', { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '11' }, body: '{"type":"W"}' }));
    expect(res.status).toBe(413);
  });
});

describe('failures inside', () => {
  it('a closed store answers 500 INTERNAL, without a stack, and the server lives on', async () => {
    const s = DataStore.open();
    const errors: [unknown, string][] = [];
    const origin = await listen(createNodeHandler(s, { onError: (e, id) => errors.push([e, id]) }));
    s.close();
    const res = await fetch(`${origin}/api/data/types`);
    expect(res.status).toBe(500);
    const env = await res.json();
    expect(env.errors[0].code).toBe('INTERNAL');
    expect(env.errors[0].requestId).toMatch(/^[0-9a-f]{12}$/);
    expect(env.message).toBe(`internal error (request ${env.errors[0].requestId})`);
    expect(JSON.stringify(env)).not.toMatch(/at .*\.ts|closed/);
    expect(errors).toHaveLength(1);
    expect(errors[0]![0]).toBeInstanceOf(TypeError);
    expect(errors[0]![1]).toBe(env.errors[0].requestId);
    expect((await fetch(`${origin}/api/nope`)).status).toBe(404);
  });

  it('refuses bad options at construction', () => {
    const s = DataStore.open();
    stores.push(s);
    expect(() => createNodeHandler(s, { maxBodyBytes: -1 })).toThrow(RangeError);
    expect(() => createFetchHandler(s, { authenticate: 'yes' as never })).toThrow(TypeError);
  });
});

describe('Express mounting', () => {
  it('serves the API and leaves express routes alone', async () => {
    const s = await store();
    const app = express();
    app.use(createNodeHandler(s));
    app.get('/health', (_req, res) => {
      res.json({ ok: true });
    });
    const origin = await listen(app);
    const types = await fetch(`${origin}/api/data/types`);
    expect(types.status).toBe(200);
    expect((await types.json()).data).toContain('Well');
    const q = await fetch(`${origin}/api/data/query`, json({ type: 'Well', query: { pwi: 'W2' } }));
    expect((await q.json()).data.map((d: { pwi: string }) => d.pwi)).toEqual(['W2']);
    const health = await fetch(`${origin}/health`);
    expect(await health.json()).toEqual({ ok: true });
    // Unknown paths outside basePath fall through to express's own 404.
    const other = await fetch(`${origin}/other`);
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).not.toMatch(/application\/json/);
    // Unknown paths inside basePath are the adapter's 404 envelope.
    const inside = await fetch(`${origin}/api/other`);
    expect(inside.status).toBe(404);
    expect((await inside.json()).errors[0].code).toBe('NOT_FOUND');
  });

  it('uses a body express.json() already parsed', async () => {
    const s = await store();
    const app = express();
    app.use(express.json());
    app.use(createNodeHandler(s));
    const origin = await listen(app);
    const res = await fetch(`${origin}/api/data`, json({ type: 'Well', data: [{ pwi: 'E1' }] }));
    expect(res.status).toBe(200);
    expect((await s.query('Well', { pwi: 'E1' })).total).toBe(1);
  });

  it('mounted under a prefix with basePath ""', async () => {
    const s = await store();
    const app = express();
    app.use('/store', createNodeHandler(s, { basePath: '' }));
    const origin = await listen(app);
    const res = await fetch(`${origin}/store/v1/data`, json({ type: 'Well', request: 'get', query: { pwi: 'W1' } }));
    expect(res.status).toBe(200);
    expect((await res.json()).count).toBe(1);
  });
});

describe('long answers', () => {
  it('are written document by document in slices, over node:http and the Fetch bridge, and read as the same JSON', async () => {
    const s = DataStore.open();
    stores.push(s);
    const docs = Array.from({ length: 3_000 }, (_, i) => ({ pwi: `L${i}`, extra: { note: 'x'.repeat(500) } }));
    expect((await s.insert('Well', docs)).count).toBe(3_000);
    const expected = await s.dynamic.query('Well', {});
    const url = await listen(createNodeHandler(s));
    const res = await fetch(`${url}/api/data/query`, json({ type: 'Well', query: {} }));
    // More than one slice: chunked, without a content-length.
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const text = await res.text();
    expect(text).toBe(JSON.stringify(expected));
    const viaFetch = await createFetchHandler(s)(new Request('http://x/api/data/query', json({ type: 'Well', query: {} })));
    expect(await viaFetch.text()).toBe(text);
    // A short answer is still one string with its length.
    const short = await fetch(`${url}/api/data/query`, json({ type: 'Well', query: {}, options: { limit: 10 } }));
    expect(Number(short.headers.get('content-length'))).toBe(Buffer.byteLength(await short.text()));
  });
});
