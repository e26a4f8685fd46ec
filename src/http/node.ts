/** node:http bridge over the routing core: a `(req, res, next?)` handler, so Express/Connect middleware too. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRouter } from './route.js';
import { BodyError, type HttpOptions, type StoreInput } from './types.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/** Reads a node request body, stopping (and pausing the socket) as soon as it crosses `limit`. */
export function readNodeBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new BodyError(413, 'too large'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(new BodyError(413, 'too large'));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (e: Error) => {
      cleanup();
      reject(new BodyError(400, `could not be read (${e.message})`));
    };
    const onAborted = () => onError(new Error('client aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    try {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.set(name, value);
    } catch {
      // A header value Headers refuses (non-Latin-1) cannot be a credential or content type we accept.
    }
  }
  return headers;
}

/**
 * A node:http handler serving both route families under `basePath`; outside it, calls `next()` (or answers 404).
 * An upstream body parser's `req.body` is used when it already consumed the stream.
 * @example
 * http.createServer(createNodeHandler(store)).listen(8080, '127.0.0.1');
 * app.use(createNodeHandler(store, { authenticate: basicAuth({ app: 'secret' }) }));   // Express
 */
export function createNodeHandler(store: StoreInput, options: HttpOptions = {}): NodeHandler {
  const router = createRouter(store, options);
  return (req, res, next) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      // A request-target URL cannot parse (absolute-form with a bad host): answer, never throw into the server.
      url = new URL('http://localhost/\u0000');
    }
    if (next && router.subPath(url.pathname) === undefined) {
      next();
      return;
    }
    const preParsed = (req as { body?: unknown }).body;
    const readBody = async () =>
      preParsed !== undefined && req.readableEnded ? { parsed: preParsed } : readNodeBody(req, router.maxBodyBytes);
    res.on('error', () => undefined);
    router
      .handle({ method: req.method ?? 'GET', path: url.pathname, searchParams: url.searchParams, headers: toHeaders(req), readBody })
      .catch((e: unknown) => router.internal(e))
      .then((out) => {
        if (res.headersSent || res.destroyed) return;
        const text = JSON.stringify(out.envelope);
        res.writeHead(out.status, { ...out.headers, 'content-length': Buffer.byteLength(text) });
        res.end(text);
        // An unread body (too large, or unauthenticated) is not drained: close the connection instead of reading it.
        if (out.headers.connection === 'close') res.once('finish', () => req.socket?.destroySoon?.());
      });
  };
}
