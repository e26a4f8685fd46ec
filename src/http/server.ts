/** Socket-level settings of a node:http server that serves the store: deliberate timeouts, and JSON for Node's own errors. */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { fail } from '../envelope.js';

export interface ServerLimits {
  /** Time to receive a request's headers, in ms (default 10,000: a slow-headers client cannot hold a socket). */
  headersTimeoutMs?: number;
  /** Time to receive a whole request, body included, in ms (default 60,000). */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open, in ms (default 5,000). */
  keepAliveTimeoutMs?: number;
}

/** Node's own answers to requests it cannot parse, by its error code. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'request headers are larger than the server accepts'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'the request did not arrive in time'],
  ERR_HTTP_HEADERS_TIMEOUT: [408, 'Request Timeout', 'the request headers did not arrive in time'],
};

/**
 * Sets a server's timeouts deliberately (and how often Node checks them, so each fires when set: call it before
 * `listen`, which starts the checks) and answers the requests Node itself refuses (malformed, headers too large,
 * too slow) with the store's JSON envelope instead of Node's plain text, closing the connection after.
 * @example configureServer(http.createServer(createNodeHandler(store)), { requestTimeoutMs: 30_000 }).listen(8080, '127.0.0.1');
 */
export function configureServer<S extends Server>(server: S, limits: ServerLimits = {}): S {
  const ms = (v: number | undefined, fallback: number, name: string) => {
    const n = v ?? fallback;
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`configureServer: ${name} must be a non-negative integer`);
    return n;
  };
  server.headersTimeout = ms(limits.headersTimeoutMs, 10_000, 'headersTimeoutMs');
  server.requestTimeout = ms(limits.requestTimeoutMs, 60_000, 'requestTimeoutMs');
  server.keepAliveTimeout = ms(limits.keepAliveTimeoutMs, 5_000, 'keepAliveTimeoutMs');
  // Node enforces headers and request timeouts only when it sweeps its connections (every 30 s by default): sweep
  // often enough that each fires within a tenth of its value, and at least every second.
  const shortest = Math.min(...[server.headersTimeout, server.requestTimeout].filter((t) => t > 0), 10_000);
  (server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(shortest / 10)));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Nothing to answer on a socket the client already reset or that has written a response.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad Request', 'the request could not be parsed as HTTP'];
    const body = JSON.stringify(fail([{ code: 'INVALID_REQUEST', message }]));
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
