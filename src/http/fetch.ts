/** Fetch bridge: `Request → Response` over the routing core (Hono, Bun, Deno, Next route handlers). */
import { BoundedBody } from './body.js';
import { createRouter } from './route.js';
import type { StoreInput } from '../core/store-like.js';
import { BodyError, joined, type Chunk, type HttpOptions } from './types.js';

/** Reads a Fetch body, cancelling the stream as soon as it crosses `limit` or nests too deep (BoundedBody). */
export async function readFetchBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw new BodyError(413, 'too large');
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const body = new BoundedBody(limit);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      body.push(value);
    }
  } catch (e) {
    if (e instanceof BodyError) {
      await reader.cancel().catch(() => undefined);
      throw e;
    }
    throw new BodyError(400, `could not be read (${(e as Error)?.message ?? e})`);
  }
  return body.bytes();
}

/** A streamed answer as a Fetch body: a chunk is read from the store only when the client's side pulls one. */
function textStream(chunks: AsyncIterable<Chunk>): ReadableStream<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await it.next();
        if (done) controller.close();
        else {
          const bytes = joined(value);
          controller.enqueue(typeof bytes === 'string' ? encoder.encode(bytes) : bytes);
        }
      } catch (e) {
        // A failure after the status was sent: the body errors, the client sees it cut.
        controller.error(e);
      }
    },
    async cancel() {
      await it.return?.();
    },
  });
}

/**
 * A Fetch handler serving both route families of the API under `basePath`.
 * @example
 * const handle = createFetchHandler(store, { basePath: '/api' });
 * app.all('/api/*', (c) => handle(c.req.raw));   // Hono
 */
export function createFetchHandler(store: StoreInput, options: HttpOptions = {}): (request: Request) => Promise<Response> {
  const router = createRouter(store, options);
  return async (request) => {
    const url = new URL(request.url);
    const out = await router.handle({
      method: request.method,
      path: url.pathname,
      searchParams: url.searchParams,
      headers: request.headers,
      header: (name) => request.headers.get(name),
      readBody: () => readFetchBody(request, router.maxBodyBytes),
      signal: request.signal,
    });
    return new Response(out.body ? textStream(out.body) : (out.text ?? JSON.stringify(out.envelope)), { status: out.status, headers: out.headers });
  };
}
