/** Socket-level behaviour: deliberate timeouts, Node's own refusals as JSON envelopes, 401 closes without reading. */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../../src/index.js';
import { bearerAuth, configureServer, createNodeHandler } from '../../src/http/index.js';

let server: Server;
let port: number;
const store = DataStore.open();

beforeAll(async () => {
  // Node's own check interval (30 s) is left as it is: configureServer must make the timeouts fire when set.
  server = configureServer(createServer(createNodeHandler(store, { authenticate: bearerAuth({ secret: 'alice' }) })), {
    requestTimeoutMs: 2_000,
    headersTimeoutMs: 1_000,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  store.close();
});

/** Sends raw bytes, reads until the server closes the connection (or `ms`), returns what came back. */
function raw(bytes: string, ms = 3_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, ms);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}

const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { success: boolean; errors: { code: string; message: string }[] };

describe('the server socket', () => {
  it('sets its timeouts deliberately', () => {
    expect(server.requestTimeout).toBe(2_000);
    expect(server.headersTimeout).toBe(1_000);
    expect(server.keepAliveTimeout).toBe(5_000);
  });

  it('answers a request Node cannot parse with a 400 JSON envelope and closes', async () => {
    const r = await raw('THIS IS NOT HTTP\r\n\r\n');
    expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(r.text).toContain('content-type: application/json; charset=utf-8');
    const env = bodyOf(r.text);
    expect(env.success).toBe(false);
    expect(env.errors[0]!.code).toBe('INVALID_REQUEST');
    expect(r.closed).toBe(true);
  });

  it('answers headers larger than Node accepts with a 431 JSON envelope', async () => {
    const r = await raw(`GET /api/data/types HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(r.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(r.text).errors[0]!.message).toContain('headers are larger');
  });

  it('answers a request whose headers stall past headersTimeout with a 408 JSON envelope', async () => {
    const r = await raw('POST /api/data/query HTTP/1.1\r\nhost: x\r\nauthorization: Bearer sec', 8_000);
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(r.text).errors[0]!.code).toBe('INVALID_REQUEST');
  });

  it('closes a slowloris connection within its headersTimeout, well before Node\'s 30 s check interval', async () => {
    // The headers timeout is 1 s: the connection is closed within the 10 s this waits (with Node's own 30 s check
    // interval it stays open past them), and not before the timeout.
    const started = Date.now();
    const r = await raw('GET /api/data/types HTTP/1.1\r\nhost: x\r\nx-slow: a', 10_000);
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('after a 401 closes the connection without reading the body', async () => {
    // Declares 50 MB and sends a few bytes: the answer must come at once, and the socket must close.
    const r = await raw('POST /api/data HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 52428800\r\n\r\n{"type":"Well"');
    expect(r.text).toMatch(/^HTTP\/1\.1 401 /);
    expect(r.text.toLowerCase()).toContain('connection: close');
    expect(bodyOf(r.text).errors[0]!.code).toBe('UNAUTHORIZED');
    expect(r.closed).toBe(true);
  });
});
