/** The one response shape of every operation, as the service answers. */

export const ERROR_CODES = [
  'INVALID_REQUEST',
  'UNKNOWN_TYPE',
  'UNKNOWN_FIELD',
  'INVALID_QUERY',
  'VALIDATION',
  'DUPLICATE_KEY',
  'ILLEGAL_OPERATION',
  'UNAUTHORIZED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'TIMEOUT',
  'CHANGES_PRUNED',
  'CHANGES_OVERFLOW',
  'STORE_FULL',
  'INVALID_CURSOR',
  'UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface EnvelopeError {
  message: string;
  code: ErrorCode;
  /** Position of the offending document in the request's array. */
  index?: number;
  /** Field path of the offending value. */
  field?: string;
  /** The colliding unique key, for DUPLICATE_KEY. */
  key?: Record<string, unknown>;
  /** For INTERNAL: the id `onError` was called with, to find the cause in the server's log. */
  requestId?: string;
}

export interface Envelope<T = unknown> {
  data: T[];
  /** Continues this answer after its last document (pass it back as options.cursor); null when nothing follows. */
  cursor: string | null;
  hasCursor: boolean;
  empty: boolean;
  count: number;
  total: number;
  activityId: string | null;
  success: boolean;
  message: string;
  errors: EnvelopeError[];
  issues: string[];
  hasErrors: boolean;
  insertedIds: string[];
  idsNotFound: string[];
  updatedIds: string[];
  deletedIds: string[];
  referencesRemoved: string[];
  referencesUpdated: string[];
  referencesInserted: string[];
}

export interface EnvelopeParts<T> {
  data?: T[];
  cursor?: string | null;
  count?: number;
  total?: number;
  message?: string;
  errors?: EnvelopeError[];
  issues?: string[];
  insertedIds?: string[];
  idsNotFound?: string[];
  success?: boolean;
  activityId?: string | null;
}

/** Builds a complete envelope; `success` defaults to "no errors". */
export function envelope<T>(parts: EnvelopeParts<T> = {}): Envelope<T> {
  const data = parts.data ?? [];
  const errors = parts.errors ?? [];
  const count = parts.count ?? data.length;
  return {
    data,
    cursor: parts.cursor ?? null,
    hasCursor: typeof parts.cursor === 'string',
    empty: data.length === 0,
    count,
    total: parts.total ?? count,
    activityId: parts.activityId ?? null,
    success: parts.success ?? errors.length === 0,
    message: parts.message ?? '',
    errors,
    issues: parts.issues ?? [],
    hasErrors: errors.length > 0,
    insertedIds: parts.insertedIds ?? [],
    idsNotFound: parts.idsNotFound ?? [],
    updatedIds: [],
    deletedIds: [],
    referencesRemoved: [],
    referencesUpdated: [],
    referencesInserted: [],
  };
}

/** A failed envelope; the message summarises the first error unless given. */
export function fail<T = never>(errors: EnvelopeError[], message?: string): Envelope<T> {
  const first = errors[0]?.message ?? 'request failed';
  const msg = message ?? (errors.length > 1 ? `${first} (and ${errors.length - 1} more)` : first);
  return envelope<T>({ errors, message: msg, success: false, count: 0 });
}

/**
 * The answer to an unexpected error: INTERNAL with a fresh request id, the cause handed to `onError` with that id only
 * (an answer never carries an engine's message or a stack). The one builder of INTERNAL answers, for every path.
 * @example return internalFailure(e, settings.onError);
 */
export function internalFailure<T = never>(cause: unknown, onError?: (error: unknown, requestId: string) => void): Envelope<T> {
  // Web Crypto, not node:crypto: the routing core also runs under the Fetch bridge (Bun, Deno, workers).
  const requestId = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, '0')).join('');
  try {
    onError?.(cause, requestId);
  } catch {
    // A throwing hook must not turn an answer into a crash of the host.
  }
  return fail<T>([{ code: 'INTERNAL', message: `internal error (request ${requestId})`, requestId }]);
}

/** Thrown inside the library to abort a request with an envelope error. */
export class RequestError extends Error {
  readonly errors: EnvelopeError[];
  constructor(errors: EnvelopeError | EnvelopeError[]) {
    const list = Array.isArray(errors) ? errors : [errors];
    super(list[0]?.message ?? 'request failed');
    this.name = 'RequestError';
    this.errors = list;
  }
}

/** Runs fn; the errors of a RequestError it throws are added to `errors` (so one answer lists every problem). */
export function collect<T>(errors: EnvelopeError[], fn: () => T): T | undefined {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof RequestError)) throw e;
    errors.push(...e.errors);
    return undefined;
  }
}

export function requestError(code: ErrorCode, message: string, extra: Partial<EnvelopeError> = {}): RequestError {
  return new RequestError({ message, code, ...extra });
}

/**
 * Error thrown by `unwrap` for a failed envelope; carries the envelope and the first error's code.
 *
 * Recognise it with `DataStoreError.is(e)` (or `e instanceof DataStoreError`): both check a brand,
 * `Symbol.for('consolidata.DataStoreError')`, not the class identity, so they hold across the ESM and CJS
 * builds (an app that `import`s consolidata while a dependency `require`s it gets two classes) and across
 * two installed copies of the package.
 * @example
 * try {
 *   const wells = unwrap(await store.query('Well', { basinName: 'Permian' }));
 * } catch (e) {
 *   if (!DataStoreError.is(e)) throw e;
 *   console.error(e.code, e.envelope.errors); // e is a DataStoreError here
 * }
 */
export class DataStoreError extends Error {
  /** The brand every instance carries (non-enumerable, `true`); a registered symbol, shared by every copy. */
  static readonly #brand = Symbol.for('consolidata.DataStoreError');

  readonly code: ErrorCode;
  readonly envelope: Envelope<unknown>;
  constructor(env: Envelope<unknown>) {
    super(env.message || env.errors[0]?.message || 'request failed');
    this.name = 'DataStoreError';
    this.code = env.errors[0]?.code ?? 'INTERNAL';
    this.envelope = env;
    Object.defineProperty(this, DataStoreError.#brand, { value: true });
  }

  /**
   * Whether `value` is a DataStoreError thrown by any build (ESM or CJS) or copy of consolidata.
   * @example if (DataStoreError.is(e) && e.code === 'DUPLICATE_KEY') return existing;
   */
  static is(value: unknown): value is DataStoreError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DataStoreError.#brand] === true;
  }

  /**
   * `e instanceof DataStoreError` is `DataStoreError.is(e)`, so it too holds across builds and copies.
   * A subclass keeps the ordinary prototype check (`e instanceof MySubclass` is true only for its own instances).
   */
  static [Symbol.hasInstance](value: unknown): value is DataStoreError {
    if (this !== DataStoreError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return DataStoreError.is(value);
  }
}

/**
 * The data of a successful envelope, or throws a `DataStoreError` carrying it.
 * @example const wells = unwrap(await store.query('Well', { basinName: 'Permian' }));
 */
export function unwrap<T>(env: Envelope<T>): T[] {
  if (!env.success) throw new DataStoreError(env);
  return env.data;
}
