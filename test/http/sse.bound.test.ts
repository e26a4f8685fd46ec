/**
 * A slow or silent SSE subscriber is dropped past the store's bound of unread bytes (`feedBufferBytes`): the server
 * never holds more for it, the other streams keep every event, and the cut client resumes from its Last-Event-ID.
 */
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataStore } from '../../src/index.js';
import { createFetchHandler, createNodeHandler } from '../../src/http/index.js';
import { Fanout, type Subscriber } from '../../src/core/fanout.js';

const BOUND = 256 * 1024;
/** About 5 KB per event: 200 make a write of about 1 MB. */
const wells = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ pwi: `W${from + i}`, name: 'x'.repeat(5000) }));

/** The body of a chunked HTTP answer read so far (a chunk cut short by the connection's end counts what arrived). */
function dechunk(raw: string): string {
  let at = raw.indexOf('\r\n\r\n');
  if (at < 0) return '';
  at += 4;
  let body = '';
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) return body;
    const size = parseInt(raw.slice(at, eol), 16);
    if (!(size > 0)) return body;
    body += raw.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/** The ids of the complete events in an SSE text (an event cut short by the connection's end is not one). */
const ids = (text: string) => [...text.matchAll(/^id: (\d+)\nevent: change\ndata: [^\n]*\n\n/gm)].map((m) => Number(m[1]));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A raw SSE request: its socket, and the text it read (while it reads). */
function stream(port: number, headers = ''): { socket: Socket; text: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let raw = '';
  socket.on('data', (d: Buffer) => (raw += d.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(`GET /api/data/changes?type=Well HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n${headers}\r\n`);
  return { socket, text: () => dechunk(raw), closed };
}

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
  vi.restoreAllMocks();
});

describe('a silent SSE subscriber', () => {
  it('is cut past feedBufferBytes, the server holding at most that for it, while another stream gets every event', async () => {
    const store = DataStore.open(':memory:', { changeFeed: true, feedBufferBytes: BOUND });
    const responses: ServerResponse[] = [];
    const handler = createNodeHandler(store);
    const server = createServer((req, res) => (responses.push(res), handler(req, res)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const subscribe = vi.spyOn(Fanout.prototype, 'subscribe');
    cleanup.push(() => store.close(), () => new Promise((r) => server.close(r)), () => server.closeAllConnections());

    const silent = stream(port);
    await vi.waitFor(() => expect(silent.text()).toContain(': consolidata change feed'));
    // It stops reading: what the server sends piles up in the kernel's buffers, then in the server's.
    silent.socket.pause();
    const silentSubs = subscribe.mock.results.map((r) => r.value as Subscriber);
    const silentRes = responses[0]!;
    const reader = stream(port);
    await vi.waitFor(() => expect(reader.text()).toContain(': consolidata change feed'));

    // What the server holds for the silent stream: its subscriber's events, and the bytes queued on its response.
    const held = () => silentSubs.reduce((n, s) => n + s.bytes, 0) + silentRes.writableLength;
    const seen: number[] = [];
    let written = 0;
    for (let batch = 0; batch < 60 && !silentRes.destroyed; batch++) {
      await store.insert('Well', wells(written, 200));
      written += 200;
      await vi.waitFor(() => expect(ids(reader.text()).at(-1)).toBe(written));
      seen.push(held());
    }
    expect(silentRes.destroyed).toBe(true);
    // Bounded: the bound and one insert's events (a batch is checked before it is handed over: one commit larger than
    // the bound still reaches a stream that keeps up), and a chunk of about 64 KB queued on the response.
    expect(Math.max(...seen)).toBeLessThanOrEqual(BOUND + 200 * 6000 + 64 * 1024 + 6000);
    expect(held()).toBe(0);
    expect(silentSubs.every((s) => s.bytes === 0)).toBe(true);
    // The other stream was handed every event, once, in order, and the store's reader writes to it alone.
    expect(ids(reader.text())).toEqual(range(1, written));

    // The cut client reads what reached it, then resumes from the last whole event: nothing lost, nothing twice.
    silent.socket.resume();
    await silent.closed;
    const got = ids(silent.text());
    expect(got).toEqual(range(1, got.length));
    const resumed = stream(port, `last-event-id: ${got.length}\r\n`);
    await vi.waitFor(() => expect(ids(resumed.text()).at(-1)).toBe(written));
    expect(ids(resumed.text())).toEqual(range(got.length + 1, written));
    resumed.socket.destroy();
    reader.socket.destroy();
  });

  it('ends with a comment saying why once it reads again, and resumes from Last-Event-ID with nothing lost', async () => {
    const store = DataStore.open(':memory:', { changeFeed: true, feedBufferBytes: BOUND });
    cleanup.push(() => store.close());
    const handle = createFetchHandler(store);
    const ac = new AbortController();
    cleanup.push(() => ac.abort());
    const res = await handle(new Request('http://x/api/data/changes?type=Well', { headers: { accept: 'text/event-stream' }, signal: ac.signal }));
    const body = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': consolidata change feed')) text += decoder.decode((await body.read()).value);
    // Level with the store's reader, which hands it every new event from then on.
    await store.insert('Well', wells(0, 1));
    while (ids(text).at(-1) !== 1) text += decoder.decode((await body.read()).value);
    // Not pulled while two commits of 1 MB are written: the second finds it holding more than the bound.
    await store.insert('Well', wells(1, 200));
    await new Promise((r) => setTimeout(r, 100));
    await store.insert('Well', wells(201, 200));
    await new Promise((r) => setTimeout(r, 100));
    for (;;) {
      const { value, done } = await body.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text).toMatch(/\n: dropped: the change feed's reader fell more than \d+ events or 262144 bytes behind/);
    const got = ids(text);
    expect(got.length).toBeLessThan(401);
    expect(got).toEqual(range(1, got.length));
    const again = await handle(new Request('http://x/api/data/changes?type=Well', { headers: { accept: 'text/event-stream', 'last-event-id': String(got.length) }, signal: ac.signal }));
    const rest = again.body!.getReader();
    let more = '';
    while (ids(more).at(-1) !== 401) more += decoder.decode((await rest.read()).value);
    expect(ids(more)).toEqual(range(got.length + 1, 401));
    await rest.cancel();
  });
});
