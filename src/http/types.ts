/** The option and request types of the HTTP adapter, shared by the routing core and both bridges. */
import type { Envelope } from '../envelope.js';


/** The requests of the `/v1/data` route family (`request`, in any case). */
export const V1_REQUESTS = ['get', 'insert', 'replace', 'update', 'delete', 'types', 'schema', 'aggregate', 'count', 'distinct'] as const;

/** What `authenticate` sees of a request: enough to check credentials, never the body. */
export interface AuthRequest {
  method: string;
  /** The path, without the query string. */
  path: string;
  headers: Headers;
}

/** The authenticated user; `userId` becomes createdBy/updatedBy of the request's writes. */
export interface AuthResult {
  userId: string;
}

/** Returns the user of a request, or null to answer 401. A `challenge` property sets the `WWW-Authenticate` header. */
export type Authenticate = ((request: AuthRequest) => AuthResult | null | undefined | PromiseLike<AuthResult | null | undefined>) & {
  challenge?: string;
};

export interface HttpOptions {
  /** Prefix of every route (default `/api`); `''` serves at the root. */
  basePath?: string;
  /** Largest request body accepted, in bytes (default 16 MiB); larger bodies answer 413. */
  maxBodyBytes?: number;
  /** Answer HTTP 200 whatever the outcome, as the original service does (the envelope still tells). */
  alwaysOk?: boolean;
  /** Authentication hook; without it the API is open. See `basicAuth`, `bearerAuth`. */
  authenticate?: Authenticate;
  /**
   * Serve the data explorer (a page in the browser over this API) at this path, e.g. `'/explore'` or `'/'`; or
   * `{ path, dir }` with the folder of its built files (default: dist/explorer beside this module). Default: not served.
   */
  explorer?: string | { path: string; dir?: string };
  /** Called with every unexpected error and the request id of its 500 answer (which carries no details); default: none. */
  onError?: (error: unknown, requestId: string) => void;
}

/** A request as the routing core sees it; the body is read lazily, only once the route, auth and content type pass. */
export interface CoreRequest {
  method: string;
  path: string;
  searchParams: URLSearchParams;
  headers: Headers;
  /** One header's value, as `headers.get` answers it (a bridge may answer it without copying every header). */
  header(name: string): string | null;
  /** Raw bytes, or a value an upstream body parser already decoded (Express's `req.body`). */
  readBody: () => Promise<Uint8Array | { parsed: unknown }>;
  /** Aborted when the client goes away: a query's work then stops. A bridge may make it only when asked for. */
  signal?: AbortSignal;
  /** Whether the client has gone already, told without making the signal (absent: `signal.aborted`). */
  readonly aborted?: boolean;
}

/**
 * A piece of a streamed answer: text, bytes, or parts of bytes sent as one (a node bridge writes them in one writev,
 * so that parts shared by many answers — an SSE event's bytes — are never copied per answer).
 */
export type Chunk = string | Uint8Array | readonly Uint8Array[];

/** Texts already made, as a streamed body. */
export async function* listed(parts: readonly string[]): AsyncGenerator<string> {
  yield* parts;
}

/** A chunk as one string or array of bytes (its parts joined). */
export function joined(chunk: Chunk): string | Uint8Array {
  if (typeof chunk === 'string' || chunk instanceof Uint8Array) return chunk;
  if (chunk.length === 1) return chunk[0]!;
  const out = new Uint8Array(chunk.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of chunk) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export interface CoreResponse {
  status: number;
  headers: Record<string, string>;
  envelope: Envelope<unknown>;
  /** A streamed answer: the envelope's JSON text, chunk by chunk (`envelope` is then only its successful head). */
  body?: AsyncIterable<Chunk>;
  /** The envelope's JSON text, made already (a query's stored documents): sent in place of `envelope`, its head. */
  text?: string;
  /**
   * Aborted when a live stream ends on the server's side (its feed subscriber was dropped): the bridge stops waiting
   * for the client to take what was written, sends the rest of `body` (which says why) and closes.
   */
  stop?: AbortSignal;
}

/** Thrown by body readers: the request cannot be read (413 too large, 400 broken). */
export class BodyError extends Error {
  readonly status: 400 | 413;
  constructor(status: 400 | 413, message: string) {
    super(message);
    this.name = 'BodyError';
    this.status = status;
  }
}
