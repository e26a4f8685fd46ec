/**
 * What the node bridge reads of a request without copying or parsing it whole: a request-target's path and query
 * parameters without `new URL` where a split gives the same (splitTarget), one header without a Headers copy
 * (headerOf), and the abort signal made only when a handler asks for it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { createNodeHandler, headerOf, splitTarget, toHeaders } from '../../src/http/node.js';
import type { RequestControl, StoreLike } from '../../src/core/store-like.js';
import { DataStore } from '../../src/index.js';

/** The path and parameters as `new URL` reads them, a target it cannot parse as the bridge answers it. */
function byUrl(target: string): { path: string; params: [string, string][] } {
  let url: URL;
  try {
    url = new URL(target, 'http://localhost');
  } catch {
    url = new URL('http://localhost/\u0000');
  }
  return { path: url.pathname, params: [...url.searchParams] };
}

const split = (target: string) => {
  const { path, query } = splitTarget(target);
  return { path, params: [...new URLSearchParams(query)] };
};

const ODD = [
  '/api/data/types',
  '/api/data/changes?type=Well&since=4&query=%7B%22pwi%22%3A1%7D',
  '/api/./data/types',
  '/api/x/../data/types',
  '/api/%2e%2E/api/data/types',
  '/api/data/types#frag?x=1',
  '/api/data/types?a=b#c',
  '//evil/api/data/types',
  '/\\evil/api',
  '/api\\data\\types',
  '/api/data/ty pes?q=a b',
  '/api/da\tta/types',
  '/api/da\u00e9ta?\u00e9=\u00e8',
  "/api/'quote'?x='y'",
  '/api/data/types?x=%zz&y=%2',
  '/api/data/types??x=1',
  '/api/data/types?a+b=c+d',
  'http://host:8080/api/data/types?x=1',
  'http://[zz/api/data/types',
  '*',
  '',
  '/',
  '/api/data/types/.',
  '/api/"<>`{}|^[]',
];

describe('splitTarget', () => {
  it.each(ODD)('reads %j as new URL does', (target) => {
    expect(split(target)).toEqual(byUrl(target));
  });

  it('reads any target of URL characters, dots, slashes and escapes as new URL does', () => {
    const part = fc.constantFrom('/', '.', '..', '%2e', '%2E', '?', '#', '\\', '&', '=', '+', '%', '%20', ' ', 'a', 'Z', '0', '~', "'", '"', '\t', 'é', '日', ':', '@', ';', ',', '[', ']', '|', '%zz');
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), fc.boolean(), (parts, rooted) => {
        const target = (rooted ? '/' : '') + parts.join('');
        expect(split(target)).toEqual(byUrl(target));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('node bridge request-targets', () => {
  it('routes a target with dot segments and a query as new URL reads it', async () => {
    const store = DataStore.open(':memory:');
    const server = http.createServer(createNodeHandler(store));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const get = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () => s.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
        let text = '';
        s.on('data', (d) => (text += d));
        s.on('end', () => resolve(text.split('\r\n')[0]!));
        s.on('error', reject);
      });
    try {
      expect(await get('/api/x/../data/types')).toBe('HTTP/1.1 200 OK');
      expect(await get('/api/%2e/data/types?x=1')).toBe('HTTP/1.1 200 OK');
      expect(await get('/api/data/schema?type=Well')).toBe('HTTP/1.1 200 OK');
      expect(await get('/api/data/schema?type=Nope')).toBe('HTTP/1.1 400 Bad Request');
      expect(await get('//api/data/types')).toBe('HTTP/1.1 404 Not Found');
    } finally {
      await new Promise((r) => server.close(r));
      await store.close();
    }
  });
});

describe('headerOf', () => {
  it('answers each header as the Headers copy does', () => {
    const headers: Record<string, string | string[]> = {
      'content-type': 'application/json; charset=utf-8',
      'x-activity-id': ' \tpadded\t ',
      accept: 'text/event-stream',
      'set-cookie': ['a=1', 'b=2'],
      'x-latin': 'caf\u00e9\u00a0',
      'x-nul': 'a\u0000b',
      'x-wide': '\u65e5',
      'x-empty': '',
    };
    const req = { headers } as unknown as IncomingMessage;
    const copy = toHeaders(req);
    for (const name of [...Object.keys(headers), 'absent']) expect(headerOf(req, name), name).toBe(copy.get(name));
  });
});

/**
 * Serves the store `build` makes, sends `request` as raw bytes and leaves 50 ms later; resolves once the response has
 * closed and `settled()` holds (or a second has passed). `left` resolves when the client has gone.
 */
async function leaveMidRequest(build: (left: Promise<void>) => { store: StoreLike; options?: Parameters<typeof createNodeHandler>[1] }, request: string, settled: () => boolean): Promise<void> {
  let gone!: () => void;
  const left = new Promise<void>((r) => (gone = r));
  const { store, options } = build(left);
  const handler = createNodeHandler(store, options);
  const server = http.createServer((req, res) => {
    res.once('close', () => gone());
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    const s = connect(port, '127.0.0.1', () => {
      s.write(request);
      setTimeout(() => s.destroy(), 50);
    });
    await left;
    for (let i = 0; i < 100 && !settled(); i++) await new Promise((r) => setTimeout(r, 10));
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe('the request signal of the node bridge', () => {
  it('is aborted when asked for after the client left', async () => {
    let seen: boolean | undefined;
    await leaveMidRequest(
      (left) => {
        const store = {
          query: () => Promise.reject(new Error('not asked')),
          watch: () => undefined,
          async changes(_type: string, options: { signal?: AbortSignal }) {
            seen = options.signal?.aborted;
            return { success: true, data: [], errors: [] };
          },
          withUser: () => store,
        } as unknown as StoreLike;
        // Holds the request until its client has gone: the route then asks for the signal.
        const authenticate = async () => {
          await left;
          return { userId: 'u' };
        };
        return { store, options: { authenticate } };
      },
      // A long poll of the change feed: it passes the signal on, and has no body to read.
      `GET /api/data/changes?type=Well&wait=1000 HTTP/1.1\r\nHost: x\r\n\r\n`,
      () => seen !== undefined,
    );
    expect(seen).toBe(true);
  });

  it("is a query's control: `aborted` tells whether the client left, its signal then aborted too", async () => {
    const seen: { before?: boolean; after?: boolean; signal?: boolean } = {};
    const body = JSON.stringify({ type: 'Well', query: { pwi: 'W1' } });
    await leaveMidRequest(
      (left) => {
        const store = {
          query: () => Promise.reject(new Error('not asked')),
          async queryStream(_type: string, _q: unknown, _o: unknown, control: RequestControl) {
            seen.before = control.aborted;
            await left;
            seen.after = control.aborted;
            seen.signal = control.signal?.aborted;
            return { failure: { success: false, data: [], errors: [{ code: 'TIMEOUT', message: 'gone' }] }, [Symbol.asyncIterator]: () => undefined };
          },
          withUser: () => store,
        } as unknown as StoreLike;
        return { store };
      },
      `POST /api/data/query HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      () => seen.signal !== undefined,
    );
    expect(seen).toEqual({ before: false, after: true, signal: true });
  });
});
