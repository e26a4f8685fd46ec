import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { createFetchHandler, createNodeHandler } from '../../src/http/index.js';
import { hostileCases, type HostileCase } from '../helpers/hostile.js';

const store = DataStore.open();
const handle = createFetchHandler(store, { maxBodyBytes: 1024 * 1024 });
let server: Server;
let origin = '';
let before = '';

beforeAll(async () => {
  await store.insert('Well', [{ pwi: 'seed', extra: { x: 1 } }]);
  before = JSON.stringify((await store.query('Well', {})).data);
  server = createServer(createNodeHandler(store, { maxBodyBytes: 1024 * 1024 }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  store.close();
});

const UNVERSIONED: Record<HostileCase['op'], [string, string]> = {
  query: ['POST', '/api/data/query'],
  insert: ['POST', '/api/data'],
  replace: ['PUT', '/api/data'],
  update: ['PATCH', '/api/data'],
  delete: ['DELETE', '/api/data'],
  schema: ['POST', '/api/data/schema'],
};

function unversioned(c: HostileCase): Request {
  const [method, path] = UNVERSIONED[c.op];
  const body = c.op === 'query' ? { type: c.type, query: c.query, options: c.options } : c.op === 'update' ? { type: c.type, query: c.query, body: c.body } : c.op === 'delete' ? { type: c.type, query: c.query } : c.op === 'schema' ? { type: c.type } : { type: c.type, data: c.data };
  return new Request(`http://localhost${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function versioned(c: HostileCase): Request {
  const request = c.op === 'query' ? 'get' : c.op;
  const body = { type: c.type, request, query: c.query, options: c.options, body: c.op === 'update' ? c.body : c.data };
  return new Request('http://localhost/api/v1/data', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function expectRefused(res: Response): Promise<void> {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  const env = await res.json();
  expect(env.success).toBe(false);
  expect(env.errors[0].code).not.toBe('INTERNAL');
  expect(env.message.length).toBeGreaterThan(8);
  expect(JSON.stringify((await store.query('Well', {})).data)).toBe(before);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

// A null v1 query is `{}` there, so an empty-query case is not hostile in that family.
const cases = hostileCases();

describe('hostile input over HTTP', () => {
  it.each(cases.map((c) => [c.name, c] as const))('unversioned: %s', async (_n, c) => {
    await expectRefused(await handle(unversioned(c)));
  });

  it.each(cases.map((c) => [c.name, c] as const))('v1: %s', async (_n, c) => {
    await expectRefused(await handle(versioned(c)));
  });

  const raw: [string, BodyInit, string?][] = [
    ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0x74, 0xff, 0xfe, 0x22, 0x7d])],
    ['lone surrogate escape is fine JSON but a bad type', '{"type":"\\ud800","query":{}}'],
    ['deeply nested JSON', `{"type":"Well","query":{"extra":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`],
    ['1e400 as a number', '{"type":"Well","data":[{"pwi":"H","lateralLength":1e400}]}'],
    ['NaN literal', '{"type":"Well","data":[{"pwi":"H","lateralLength":NaN}]}'],
    ['trailing garbage', '{"type":"Well","query":{}} x'],
    ['JSON array body', '[{"type":"Well"}]'],
    ['JSON string body', '"Well"'],
    ['empty body', ''],
    ['oversize body', JSON.stringify({ type: 'Well', data: [{ pwi: 'H', name: 'x'.repeat(2 * 1024 * 1024) }] })],
    ['form post', 'type=Well', 'application/x-www-form-urlencoded'],
    ['text/plain JSON', '{"type":"Well","query":{}}', 'text/plain'],
  ];

  it.each(raw)('raw body over a socket: %s', async (_n, body, contentType = 'application/json') => {
    const res = await fetch(`${origin}/api/data`, { method: 'POST', headers: { 'content-type': contentType }, body });
    await expectRefused(res);
  });

  it('refuses a body nested past the depth bound before parsing it, naming the bound', async () => {
    // Well-formed JSON nested 400,000 levels: JSON.parse alone would spend time and memory growing with it.
    for (const body of [`${'['.repeat(400_000)}${']'.repeat(400_000)}`, `{"type":"Well","data":[{"pwi":"H","extra":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}]}`]) {
      const res = await fetch(`${origin}/api/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
      const env = await res.json();
      expect(env.errors[0].code).toBe('INVALID_REQUEST');
      expect(env.message).toMatch(/^request body: nested deeper than 68 levels; documents and values nest at most 64 \(LIMITS\.depth\)$/);
    }
    expect(JSON.stringify((await store.query('Well', {})).data)).toBe(before);
  });

  it('refuses a deep body while it arrives: answered from its first bytes, the rest never read, the connection closed', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(origin);
    // Declares the whole 1 MB body the server accepts, sends its first KB (all `[`), and waits for the answer.
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect(Number(port), '127.0.0.1', () => {
        s.write(`POST /api/data/query HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${1024 * 1024}\r\n\r\n`);
        s.write(`{"type":"Well","query":{"extra":${'['.repeat(1000)}`);
      });
      let text = '';
      s.on('data', (d) => (text += d));
      s.on('end', () => resolve(text));
      s.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.toLowerCase()).toContain('connection: close');
    const env = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(env.errors[0].code).toBe('INVALID_REQUEST');
    expect(env.message).toBe('request body: nested deeper than 68 levels; documents and values nest at most 64 (LIMITS.depth)');
    expect(JSON.stringify((await store.query('Well', {})).data)).toBe(before);
  });

  it('after refusing a body it did not read, the server half-closes and goes on taking what still comes, so the client is not reset', async () => {
    const { connect } = await import('node:net');
    const lingering = createServer(createNodeHandler(store));
    const accepted: import('node:net').Socket[] = [];
    lingering.on('connection', (c) => accepted.push(c));
    await new Promise<void>((r) => lingering.listen(0, '127.0.0.1', r));
    const { port } = lingering.address() as AddressInfo;
    try {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      let text = '';
      const ended = new Promise<void>((r) => s.once('end', r));
      s.on('data', (d) => (text += d));
      s.write(`POST /api/data/query HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${1024 * 1024}\r\n\r\n`);
      s.write(`{"type":"Well","query":{"extra":${'['.repeat(1000)}`);
      // The answer, then the server's FIN: its side of the connection is closed for writing.
      await ended;
      expect(text.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      // Still reading: what the client sends after the answer is taken, not answered with a reset.
      await new Promise((r) => setImmediate(r));
      expect(accepted[0]!.destroyed).toBe(false);
      const closed = new Promise<boolean>((r) => s.once('close', r));
      s.end(Buffer.alloc(64 * 1024, '['));
      expect(await closed).toBe(false);
    } finally {
      await new Promise((r) => lingering.close(r));
    }
  });

  it('the Fetch bridge refuses a deep body without reading the rest of its stream', async () => {
    const fetchHandler = createFetchHandler(store);
    let pulled = 0;
    const chunk = new TextEncoder().encode('['.repeat(1000));
    // An endless body of `[`: answered at all only if reading stops at the bound.
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(pulled === 1 ? new TextEncoder().encode('{"type":"Well","query":') : chunk);
      },
    });
    const res = await fetchHandler(new Request('http://x/api/data/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit));
    expect(res.status).toBe(400);
    const env = await res.json();
    expect(env.errors[0].code).toBe('INVALID_REQUEST');
    expect(env.message).toMatch(/^request body: nested deeper than 68 levels/);
    expect(pulled).toBeLessThan(10);
  });

  it('brackets inside strings do not count toward the depth bound, and the deepest valid document goes in', async () => {
    let extra: unknown = 1;
    for (let i = 0; i < 64; i++) extra = { a: extra };
    const docs = [{ pwi: 'deepest', extra, name: '[[[['.repeat(100) }];
    const res = await fetch(`${origin}/api/v1/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'insert', type: 'Well', body: docs }) });
    expect((await res.json()).insertedIds).toHaveLength(1);
    await store.delete('Well', { pwi: 'deepest' });
  });

  it('answers a request-target that is not a URL with an envelope, not a crash', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(origin);
    const head = await new Promise<string>((resolve, reject) => {
      const s = connect(Number(port), '127.0.0.1', () => s.write('GET http://[zz/api/data/types HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      let text = '';
      s.on('data', (d) => (text += d));
      s.on('end', () => resolve(text));
      s.on('error', reject);
    });
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(head).toContain('"code":"NOT_FOUND"');
  });

  it('still serves after the corpus', async () => {
    const res = await fetch(`${origin}/api/data/types`);
    expect(res.status).toBe(200);
    expect((await res.json()).data).toContain('Well');
  });
});
