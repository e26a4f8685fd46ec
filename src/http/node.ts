/** node:http bridge over the routing core: a `(req, res, next?)` handler, so Express/Connect middleware too. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BoundedBody } from './body.js';
import { streams } from './pace.js';
import { createRouter } from './route.js';
import type { StoreInput } from '../core/store-like.js';
import { BodyError, joined, type Chunk, type CoreRequest, type CoreResponse, type HttpOptions } from './types.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

/**
 * Reads a node request body, stopping (and pausing the socket) as soon as it crosses `limit` or nests too deep
 * (BoundedBody). A client that leaves mid-body is an 'error' (ECONNRESET, after 'aborted'): its listener is enough.
 */
export function readNodeBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new BodyError(413, 'too large'));
  return new Promise((resolve, reject) => {
    const body = new BoundedBody(limit);
    // Once the body has ended the request is done with: its listeners go with it, none is removed on the hot path.
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      try {
        body.push(chunk);
      } catch (e) {
        stop();
        req.pause();
        reject(e);
      }
    };
    const onEnd = () => resolve(body.bytes());
    const onError = (e: Error) => {
      stop();
      reject(new BodyError(400, `could not be read (${e.message})`));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** A request's headers as Fetch Headers (what `authenticate` is given). */
export function toHeaders(req: IncomingMessage): Headers {
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

/** Characters Headers refuses in a value: such a header is absent from toHeaders' copy. */
const REFUSED_VALUE = /[\0\r\n]|[^\0-\xff]/;

/** One header's value as toHeaders' copy answers it (Headers.get), read without making the copy. */
export function headerOf(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(', ') : value;
  if (REFUSED_VALUE.test(text)) return null;
  // Trimmed as Headers trims (tabs and spaces), the regex only when there is something to trim (most values).
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  return first === 0x20 || first === 0x09 || last === 0x20 || last === 0x09 ? text.replace(/^[\t ]+|[\t ]+$/g, '') : text;
}

/**
 * A request-target whose path and query read the same split as parsed by `new URL` (about 3 µs a request): an
 * origin-form path of characters URL keeps as they are, no dot segment (`/.`, `%2e`), no fragment, no backslash.
 */
const PLAIN_TARGET = /^(?!.*(?:\/\.|%2e))\/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*)?$/i;

/** The path and query (`?…`, as URL's `search`) of a request-target, as `new URL(target, 'http://localhost')` reads them. */
export function splitTarget(target: string): { path: string; query: string } {
  if (PLAIN_TARGET.test(target)) {
    const q = target.indexOf('?');
    // The query with its `?`, as URL's `search`: URLSearchParams drops one, and a second is a key's.
    return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q) };
  }
  let url: URL;
  try {
    url = new URL(target, 'http://localhost');
  } catch {
    // A request-target URL cannot parse (absolute-form with a bad host): answer, never throw into the server.
    url = new URL('http://localhost/\u0000');
  }
  return { path: url.pathname, query: url.search };
}

/** Resolves when the response can take more (drain), never will (close), or the server ends the stream (`stop`). */
function drained(res: ServerResponse, stop: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    // Closed already: no 'drain' or 'close' is coming.
    if (stop?.aborted || res.destroyed || res.writableEnded) return resolve();
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    stop?.addEventListener('abort', done, { once: true });
  });
}

/** A chunk's size, in UTF-16 units for text (close enough to bytes for a budget). */
function sizeOf(chunk: Chunk): number {
  if (typeof chunk === 'string') return chunk.length;
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  let n = 0;
  for (const part of chunk) n += part.byteLength;
  return n;
}

/** Writes a chunk, its parts corked into one writev (never joined into a copy); false when the socket is full. */
function write(res: ServerResponse, chunk: Chunk): boolean {
  if (typeof chunk === 'string' || chunk instanceof Uint8Array) return res.write(chunk);
  res.cork();
  let ok = true;
  for (const part of chunk) ok = res.write(part);
  res.uncork();
  return ok;
}

/**
 * Writes a streamed answer chunk by chunk, waiting for the socket to drain: a slow reader holds one chunk. An answer
 * that fits in its first chunk (most do) goes out whole, with a content-length, as an unstreamed one. A live stream the
 * server ends (`out.stop`) is sent the rest of its body and closed; what its client has not taken is let go.
 */
async function writeStreamed(res: ServerResponse, out: CoreResponse, body: AsyncIterable<Chunk>): Promise<void> {
  const chunks = body[Symbol.asyncIterator]();
  try {
    const first = await chunks.next();
    const second = first.done ? first : await chunks.next();
    if (second.done) {
      const text = first.done ? '' : joined(first.value);
      res.writeHead(out.status, { ...out.headers, 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(out.status, out.headers);
    let next: IteratorResult<Chunk> = first;
    let peeked: IteratorResult<Chunk> | undefined = second;
    while (!next.done) {
      // The client left: return() ends the iteration, which stops the query's work.
      if (res.destroyed) {
        await chunks.return?.();
        return;
      }
      // The turn's budget of bytes, shared by every stream (pace.ts): 500 streams never write 500 chunks in one task.
      const turn = streams.take(sizeOf(next.value));
      if (turn) {
        await turn;
        // The client may have left while this stream waited its turn.
        if (res.destroyed) {
          await chunks.return?.();
          return;
        }
      }
      if (!write(res, next.value)) await drained(res, out.stop);
      // A turn of the event loop between chunks: a stream whose chunks are ready (a feed's backlog, to a socket that
      // takes it) would otherwise write them all in one task, and 500 of them hold every other request for seconds.
      // Not before the second, already read: it goes out with the head, in the same write.
      else if (!peeked) await new Promise((resolve) => setImmediate(resolve));
      next = peeked ?? (await chunks.next());
      peeked = undefined;
    }
    res.end();
    // Ended by the server while its client was not reading: what is still queued would wait for it forever.
    if (out.stop?.aborted && res.writableLength > 0) res.destroy();
  } catch {
    // The answer failed after its status was sent (TIMEOUT, a worker that died): cut it, so the client sees a
    // truncated answer, never a complete wrong one.
    res.destroy();
  }
}

/** How long a connection closed on an unread body goes on taking (and dropping) what its client still sends. */
const LINGER_MS = 2000;

/**
 * Closes a connection whose request body was left unread, after its answer: half-closed, then what the client still
 * sends is read and dropped (at most `limit` bytes, for at most LINGER_MS) before it is destroyed. Closed at once with
 * unread bytes, the connection is reset, and a client still sending may lose the answer (RFC 9112, 9.6).
 */
function lingeringClose(req: IncomingMessage, limit: number): void {
  const socket = req.socket;
  if (!socket || socket.destroyed) return;
  // node:http's own close of a `connection: close` answer (destroySoon) destroys the socket once written: let it linger.
  socket.removeListener('finish', socket.destroy);
  socket.end();
  let left = limit;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  req.on('data', (chunk: Buffer) => {
    left -= chunk.byteLength;
    if (left < 0) socket.destroy();
  });
  req.resume();
}

/** Writes a response: whole with its length, or streamed. Nothing thrown here may reach the host process: the answer is cut. */
function send(req: IncomingMessage, res: ServerResponse, out: CoreResponse, maxBodyBytes: number): void {
  try {
    if (res.headersSent || res.destroyed) return;
    if (out.body) {
      void writeStreamed(res, out, out.body);
      return;
    }
    const text = out.text ?? JSON.stringify(out.envelope);
    res.writeHead(out.status, { ...out.headers, 'content-length': Buffer.byteLength(text) });
    res.end(text);
    // An unread body (too large, nested too deep, or unauthenticated) is not drained: the connection closes.
    if (out.headers.connection === 'close') res.once('finish', () => lingeringClose(req, maxBodyBytes));
  } catch {
    res.destroy();
  }
}

/** A response's errors (a client gone mid-write) end its answer, nothing more. */
const ignore = () => undefined;

/** The request a response answers, for its one 'close' listener (no closure a request). */
const ANSWERING = Symbol('consolidata.request');
type Answering = ServerResponse & { [ANSWERING]?: NodeRequest };

/** A response closed: when before the whole answer was written, its client left, and the query's work stops. */
function onClose(this: Answering): void {
  if (!this.writableFinished) this[ANSWERING]?.leave();
}

/**
 * A node request as the routing core reads it. A class, not an object of closures: one allocation a request, and the
 * query string, the headers' copy and the abort signal made only when a route asks for them.
 */
class NodeRequest implements CoreRequest {
  readonly method: string;
  readonly path: string;
  readonly #req: IncomingMessage;
  readonly #query: string;
  readonly #limit: number;
  #searchParams: URLSearchParams | undefined;
  #headers: Headers | undefined;
  #abort: AbortController | undefined;
  #gone = false;

  constructor(req: IncomingMessage, target: { path: string; query: string }, limit: number) {
    this.method = req.method ?? 'GET';
    this.path = target.path;
    this.#req = req;
    this.#query = target.query;
    this.#limit = limit;
  }

  get searchParams(): URLSearchParams {
    return (this.#searchParams ??= new URLSearchParams(this.#query));
  }

  header(name: string): string | null {
    return headerOf(this.#req, name);
  }

  /** Copied only for what reads them whole (authenticate). */
  get headers(): Headers {
    return (this.#headers ??= toHeaders(this.#req));
  }

  /** The body; an upstream body parser's `req.body` when it already consumed the stream. */
  readBody(): Promise<Uint8Array | { parsed: unknown }> {
    const preParsed = (this.#req as { body?: unknown }).body;
    return preParsed !== undefined && this.#req.readableEnded ? Promise.resolve({ parsed: preParsed }) : readNodeBody(this.#req, this.#limit);
  }

  get signal(): AbortSignal {
    if (!this.#abort) {
      this.#abort = new AbortController();
      if (this.#gone) this.#abort.abort();
    }
    return this.#abort.signal;
  }

  get aborted(): boolean {
    return this.#gone;
  }

  /** The client left before its answer was written: a signal made or to be made is aborted. */
  leave(): void {
    this.#gone = true;
    this.#abort?.abort();
  }
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
  const limit = router.maxBodyBytes;
  return (req, res, next) => {
    const target = splitTarget(req.url ?? '/');
    if (next && !router.owns(target.path)) {
      next();
      return;
    }
    res.on('error', ignore);
    const request = new NodeRequest(req, target, limit);
    // The client went away before the whole answer was written: the query's work stops.
    (res as Answering)[ANSWERING] = request;
    res.on('close', onClose);
    const out = router.handle(request);
    // Answered at once (a one-thread SQLite store, its body read), it is written in this task.
    if (!(out instanceof Promise)) send(req, res, out, limit);
    else out.then((o) => send(req, res, o, limit), () => res.destroy());
  };
}
