/**
 * A one-thread SQLite store answers a query in the task its body arrives in: the store's text answer, the router and
 * the node bridge take each step's value at once instead of a promise per step; the pool hands an answer that came
 * in one slice as its text. Every answer is byte for byte what it was (test/http/text.test.ts, test/query.text.test.ts).
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { envelope } from '../../src/envelope.js';
import { tailText } from '../../src/core/slices.js';
import { createRouter } from '../../src/http/route.js';
import { createNodeHandler } from '../../src/http/node.js';
import type { CoreRequest } from '../../src/http/types.js';
import { uniqueAlone, resolveSettings } from '../../src/settings.js';

let store: DataStore;
beforeAll(async () => {
  store = DataStore.open(':memory:', { clock: () => 1_700_000_000_000, ids: 1 });
  const r = await store.dynamic.insert('Well', [{ pwi: 'W-1', name: 'One' }, { pwi: 'W-2', name: 'Two' }]);
  expect(r.errors).toEqual([]);
});
afterAll(() => store.close());

const size = { rows: 1000, chars: 1 << 20 };

/** A query's text as its slices make it. */
function joined(answer: { slices: { next(): { text: string; end: boolean } } }): string {
  let text = '';
  for (let s = answer.slices.next(); ; s = answer.slices.next()) {
    text += s.text;
    if (s.end) return text;
  }
}

describe('DynamicStore#queryText on SQLite', () => {
  it.each([
    ['a pinpoint by a unique key', { pwi: 'W-2' }, undefined],
    ['a pinpoint by id', { id: '__id__' }, undefined],
    ['an unlimited scan (streamed)', {}, undefined],
    ['a page with its cursor', {}, { limit: 1 }],
    ['a refusal', { pwi: { gte: 3 } }, undefined],
  ])('answers %s without a promise, as the text of its envelope', async (_name, query, options) => {
    const id = (await store.dynamic.query('Well', { pwi: 'W-1' })).data[0]!.id as string;
    const q = JSON.parse(JSON.stringify(query).replace('__id__', id));
    const answer = store.dynamic.queryText('Well', q, options, size);
    expect(answer).not.toBeInstanceOf(Promise);
    const sync = answer as Exclude<typeof answer, Promise<unknown>>;
    // Taken first: a streamed answer holds the connection until its last slice.
    const text = joined(sync);
    const env = await store.dynamic.query('Well', q, options);
    expect(sync.failure === null).toBe(env.success);
    expect(text).toBe(JSON.stringify(env));
  });

  it('throws on a closed store, as query does', async () => {
    const s = DataStore.open(':memory:');
    await s.close();
    expect(() => s.dynamic.queryText('Well', {}, undefined, size)).toThrow(TypeError);
    expect(() => s.dynamic.query('Well', {})).toThrow(TypeError);
  });
});

describe('tailText', () => {
  it("is the end of the envelope builder's own text for any count, total, issues and cursor", () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.array(fc.string()), fc.option(fc.string(), { nil: undefined }), fc.boolean(), (count, total, issues, cursor, nullCursor) => {
        const c = nullCursor ? null : cursor;
        const env = envelope({ data: [], total, issues, cursor: c });
        env.count = count;
        env.empty = count === 0;
        expect(tailText(count, total, { issues, cursor: c })).toBe(JSON.stringify(env).slice('{"data":['.length));
      }),
    );
  });
});

describe('uniqueAlone', () => {
  it('holds for id and single-field unique keys, not for a compound key or a plain field', () => {
    const settings = resolveSettings({ uniqueKeys: { Well: [['pwi'], ['name', 'wellId']] } }, 'test');
    expect(['id', 'pwi', 'name', 'wellId'].map((f) => uniqueAlone(settings, 'Well', f))).toEqual([true, true, false, false]);
    expect(uniqueAlone(resolveSettings({}, 'test'), 'DailyProduction', 'pwi')).toBe(false);
  });
});

/** A request to the router, its body given. */
function request(path: string, body?: string, method = 'POST'): CoreRequest {
  return {
    method,
    path,
    searchParams: new URLSearchParams(),
    get headers(): Headers {
      throw new Error('no route here reads every header');
    },
    header: (name) => (name === 'content-type' ? 'application/json' : null),
    readBody: () => Promise.resolve(new TextEncoder().encode(body ?? '')),
  };
}

describe('the router', () => {
  it('answers what needs no body and no store at once: an unknown route (404) and a wrong method (405)', () => {
    const router = createRouter(store);
    const missing = router.handle(request('/api/nowhere'));
    const method = router.handle(request('/api/data/query', undefined, 'GET'));
    expect(missing).not.toBeInstanceOf(Promise);
    expect(method).not.toBeInstanceOf(Promise);
    expect((missing as { envelope: { errors: { code: string }[] } }).envelope.errors[0]!.code).toBe('NOT_FOUND');
    expect((method as { envelope: { errors: { code: string }[] } }).envelope.errors[0]!.code).toBe('METHOD_NOT_ALLOWED');
  });

  it("answers a query as the store's text, in the step its body is read in", async () => {
    const router = createRouter(store);
    const out = await router.handle(request('/api/data/query', JSON.stringify({ type: 'Well', query: { pwi: 'W-1' } })));
    expect(out.status).toBe(200);
    expect(out.text).toBe(JSON.stringify(await store.dynamic.query('Well', { pwi: 'W-1' })));
  });

  it('answers a failing store INTERNAL, with no rejection', async () => {
    const broken = { ...store.dynamic, queryText: () => { throw new Error('engine detail'); }, query: store.dynamic.query.bind(store.dynamic), withUser: () => broken };
    const router = createRouter(broken as never);
    const out = await router.handle(request('/api/data/query', JSON.stringify({ type: 'Well', query: {} })));
    expect(out.status).toBe(500);
    expect(out.envelope.errors[0]!.code).toBe('INTERNAL');
    expect(JSON.stringify(out.envelope)).not.toContain('engine detail');
  });
});

describe('the node bridge', () => {
  it("writes a one-thread store's answer before the turn its body ended in is over (no timer, no I/O between)", async () => {
    const handler = createNodeHandler(store);
    const body = Buffer.from(JSON.stringify({ type: 'Well', query: { pwi: 'W-2' } }));
    const req = Object.assign(new EventEmitter(), { method: 'POST', url: '/api/data/query', headers: { 'content-type': 'application/json' }, readableEnded: false, socket: {}, pause() {}, resume() {} });
    let written: { status: number; headers: Record<string, unknown>; text: string } | undefined;
    let status = 0;
    let headers: Record<string, unknown> = {};
    const res = Object.assign(new EventEmitter(), {
      headersSent: false,
      destroyed: false,
      writableFinished: false,
      writeHead(s: number, h: Record<string, unknown>) {
        status = s;
        headers = h;
      },
      end(text: string) {
        written = { status, headers, text };
      },
    });
    handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    req.emit('data', body);
    req.emit('end');
    // Written by the promise jobs the body's end queued: before any macrotask.
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-length': Buffer.byteLength(written!.text) },
      text: JSON.stringify(await store.dynamic.query('Well', { pwi: 'W-2' })),
    });
  });
});
