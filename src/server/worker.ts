/**
 * A worker thread of the pool (pool.ts): one `DynamicStore` on a connection of its own to the file.
 *
 * A reader runs queries. A query without `limit` (the one whose answer can be the whole table) is planned by the
 * façade's parser and compiler, its rows are read with an iterator, and its answer is sent as slices of the
 * envelope's JSON text, the next slice only when the pool asks (`next`): memory stays one slice however large the
 * answer. A query with `limit` or `cursor` is answered by the façade itself (the keyset paging is its own), and its
 * envelope's text sent in slices too.
 *
 * The writer runs every write inside a transaction it opens itself (BEGIN IMMEDIATE, retried as the backend retries
 * its writes), so that it alone decides, through the commit gate (protocol.ts GATE), whether a write commits: never
 * once the pool has given up on it.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { TypeInfo } from '../catalogue/index.js';
import { isPlainObject } from '../catalogue/validate.js';
import { DynamicStore, type WriteOptions } from '../dynamic.js';
import { envelope, fail, RequestError, type Envelope } from '../envelope.js';
import { LIMITS } from '../limits.js';
import { parsePlan } from '../query/parse.js';
import { resolveSettings, type OpenOptions } from '../settings.js';
import { compileSelect, selectTarget } from '../sqlite/compile.js';
import { requestErrorOf } from '../sqlite/backend.js';
import { StatementCache, type Statement } from '../sqlite/connection.js';
import { GATE, serializeError, type FromWorker, type Op, type ToWorker, type WorkerConfig } from './protocol.js';

/** As in SqliteBackend: a lock wait is tried this many times (each waits busyTimeoutMs) before the write gives up. */
const BUSY_ATTEMPTS = 3;

const config = workerData as WorkerConfig;
const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);

/** The time the pool's clock gave for the write being run (only read when the pool has a clock). */
let now: unknown;

const options: OpenOptions = {
  ...config.options,
  ...(config.clock ? { clock: () => now as Date | string | number } : {}),
  // The cause of an INTERNAL answer goes to the pool's thread, where the application's onError runs.
  onError: (error, requestId) => post({ t: 'onError', requestId, error: serializeError(error) }),
};

/** A query's answer being sent, one slice per `next`. */
interface OpenAnswer {
  readonly id: number;
  next(): { text: string; end: boolean };
  close(): void;
}

const HEAD = '{"data":[';

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * The answer to a failure, as the façade answers: the request error an engine error means (a full database is
 * STORE_FULL, at the commit as in the write), else INTERNAL whose cause goes to onError only (no engine message, no stack).
 */
function failed(e: unknown): Envelope<never> {
  const known = requestErrorOf(e);
  if (known) return fail(known.errors);
  const requestId = randomBytes(6).toString('hex');
  post({ t: 'onError', requestId, error: serializeError(e) });
  return fail([{ code: 'INTERNAL', message: `internal error (request ${requestId})`, requestId }]);
}

if (config.nice) {
  try {
    setPriority(0, config.nice);
  } catch {
    // A priority the system refuses changes nothing but scheduling: run at the default one.
  }
}

/**
 * Why this thread must not serve, or null. re2 before 1.24.0 aborts the whole process when a thread loads it after
 * another thread that had loaded it has exited (uhop/node-re2#235), and the pool replaces threads: refusing to start
 * beats a process that dies at its first timeout.
 */
function unsafeRe2(): string | null {
  let version: string;
  try {
    version = (createRequire(import.meta.url)('re2/package.json') as { version: string }).version;
  } catch {
    return null;
  }
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > 1 || (major === 1 && minor >= 24)) return null;
  return `the pool needs re2 1.24.0 or later: re2 ${version} aborts the process when a worker thread is replaced (https://github.com/uhop/node-re2/issues/235)`;
}

let store: DynamicStore;
try {
  const unsafe = unsafeRe2();
  if (unsafe) throw new Error(unsafe);
  store = DynamicStore.open(config.file, options);
} catch (e) {
  post({ t: 'openFailed', error: serializeError(e) });
  port.close();
  throw e;
}
const settings = resolveSettings(options, 'pool worker');
const db = store.database;
const statements = new StatementCache(db);
const begin: Statement = db.prepare('BEGIN');
const beginImmediate: Statement = db.prepare('BEGIN IMMEDIATE');
const commit: Statement = db.prepare('COMMIT');
const rollback: Statement = db.prepare('ROLLBACK');
const gate = config.gate ? new Int32Array(config.gate) : undefined;
let open: OpenAnswer | undefined;

/** The type a query names, when the façade would accept it; anything else is for the façade to refuse (delegate). */
function typeOf(type: unknown): TypeInfo {
  const info = typeof type === 'string' && type !== '' && type.length <= LIMITS.nameLength ? settings.catalogue.resolve(type) : undefined;
  if (!info) throw new RequestError([]);
  return info;
}

/** True when options ask for a page (`limit`) or continue one (`cursor`): the façade's own keyset paging answers. */
function asksForPage(opts: unknown): boolean {
  if (!isPlainObject(opts)) return opts !== undefined && opts !== null;
  return (opts.limit !== undefined && opts.limit !== null && opts.limit !== 0) || (opts.cursor !== undefined && opts.cursor !== null);
}

/** Runs a query through the façade and sends its envelope: whole when refused, else as JSON text in slices. */
async function delegate(id: number, args: unknown[]): Promise<void> {
  const [type, query, opts] = args;
  const env = await store.query(type as string, query, opts);
  if (!env.success) {
    post({ t: 'done', id, answer: env });
    return;
  }
  open = textAnswer(id, JSON.stringify(env));
  sendNext();
}

/** Slices of a text: about batchChars characters each, never cutting a surrogate pair (each slice is encoded alone). */
function textAnswer(id: number, text: string): OpenAnswer {
  let at = 0;
  return {
    id,
    next() {
      let to = Math.min(text.length, at + config.batchChars);
      const last = text.charCodeAt(to - 1);
      if (to < text.length && last >= 0xd800 && last <= 0xdbff) to++;
      const slice = text.slice(at, to);
      at = to;
      return { text: slice, end: at >= text.length };
    },
    close() {
      at = text.length;
    },
  };
}

/**
 * The rows of an iterator as slices of the envelope's JSON: `{"data":[` and the first rows, further rows, then the
 * tail keys from the envelope builder itself, so the text is the one `JSON.stringify(await store.query(…))` makes.
 */
function rowsAnswer(id: number, rows: IterableIterator<string>, inTransaction: boolean, total: number, issues: string[]): OpenAnswer {
  let sent = 0;
  let head = HEAD;
  return {
    id,
    next() {
      let text = head;
      head = '';
      let count = 0;
      while (count < config.batchRows && text.length < config.batchChars) {
        const next = rows.next();
        if (next.done) {
          sent += count;
          const env = envelope({ data: [], total: inTransaction ? total : sent, issues });
          env.count = sent;
          env.empty = sent === 0;
          return { text: text + JSON.stringify(env).slice(HEAD.length), end: true };
        }
        // Parsed and serialised again: SQLite renders some values otherwise than JSON.stringify (a REAL as 1.0),
        // and the text must be the one the unstreamed envelope serialises to.
        const row = JSON.stringify(JSON.parse(next.value));
        text = sent + count === 0 ? text + row : `${text},${row}`;
        count++;
      }
      sent += count;
      return { text, end: false };
    },
    close() {
      try {
        rows.return?.();
      } finally {
        // COMMIT ends the read transaction; it cannot run while the statement is stepping, hence after return().
        if (inTransaction && db.inTransaction) commit.run();
      }
    },
  };
}

function startQuery(id: number, args: unknown[]): void {
  const [type, query, opts] = args;
  if (asksForPage(opts)) {
    void delegate(id, args).catch((e: unknown) => post({ t: 'done', id, answer: failed(e) }));
    return;
  }
  let info: TypeInfo;
  let plan: ReturnType<typeof parsePlan>;
  try {
    info = typeOf(type);
    plan = parsePlan({ type: info, strict: settings.strict }, query, opts);
  } catch {
    // The façade decides every refusal (it parses the same way), and answers whatever this worker cannot plan.
    void delegate(id, args).catch((err: unknown) => post({ t: 'done', id, answer: failed(err) }));
    return;
  }
  let inTransaction = false;
  try {
    // The statement the backend runs for an unlimited query (SqliteBackend#query), read row by row.
    const select = compileSelect(plan, selectTarget(settings, info.name));
    if (plan.limit > 0 || plan.after || select.keyed) {
      void delegate(id, args).catch((err: unknown) => post({ t: 'done', id, answer: failed(err) }));
      return;
    }
    let total = -1;
    for (let attempt = 1; ; attempt++) {
      try {
        if (select.paged) {
          // A skip: the page and its total come from one read transaction, held until the last slice.
          begin.run();
          inTransaction = true;
          total = statements.get(select.countSql).pluck(true).get(...select.countParams) as number;
        }
        break;
      } catch (e) {
        if (inTransaction && db.inTransaction) rollback.run();
        inTransaction = false;
        if (!isBusy(e) || attempt >= BUSY_ATTEMPTS) throw e;
      }
    }
    const rows = statements.get(select.sql).pluck(true).iterate(...select.params) as IterableIterator<string>;
    open = rowsAnswer(id, rows, inTransaction, total, [...plan.issues]);
  } catch (e) {
    if (inTransaction && db.inTransaction) rollback.run();
    post({ t: 'done', id, answer: failed(e) });
    return;
  }
  sendNext();
}

/** Ends the open answer, if any. */
function closeAnswer(): void {
  const a = open;
  open = undefined;
  a?.close();
}

/** Sends the next slice of the open answer. */
function sendNext(): void {
  const a = open!;
  let slice: { text: string; end: boolean };
  try {
    slice = a.next();
  } catch (e) {
    try {
      closeAnswer();
    } catch {
      // The answer is INTERNAL already; a failing close adds nothing the pool could act on.
    }
    post({ t: 'fail', id: a.id, envelope: failed(e) });
    return;
  }
  if (slice.end) closeAnswer();
  post({ t: 'text', id: a.id, text: slice.text, end: slice.end });
}

/** Takes the write lock, waiting for another connection as the backend does; false when it stayed locked. */
function lock(): boolean {
  for (let attempt = 1; attempt <= BUSY_ATTEMPTS; attempt++) {
    try {
      beginImmediate.run();
      return true;
    } catch (e) {
      if (!isBusy(e)) throw e;
    }
  }
  return false;
}

function call(target: DynamicStore, op: Op, args: unknown[]): Promise<unknown> {
  switch (op) {
    case 'insert':
      return target.insert(args[0] as string, args[1], args[2]);
    case 'replace':
      return target.replace(args[0] as string, args[1], args[2] as WriteOptions);
    case 'update':
      return target.update(args[0] as string, args[1], args[2], args[3] as WriteOptions);
    case 'delete':
      return target.delete(args[0] as string, args[1], args[2] as WriteOptions);
    case 'insertMany':
      return target.insertMany(args[0] as { type: string; docs: unknown }[], args[1] as WriteOptions);
    default:
      throw new TypeError(`pool worker: ${op} is not a write`);
  }
}

async function runWrite(id: number, op: Op, args: unknown[], userId: string): Promise<void> {
  // The pool gave up on this write while the message was on its way: it is terminating this thread.
  if (gate && Atomics.load(gate, 0) !== GATE.RUNNING) return;
  let answer: unknown;
  try {
    const target = userId === store.userId ? store : store.withUser(userId);
    // The write runs inside this transaction (the store's own becomes a savepoint), so the commit below is the one
    // moment it becomes durable, and the gate decides it.
    if (!lock()) {
      post({ t: 'done', id, answer: fail([{ code: 'INTERNAL', message: `the database stayed locked by another connection through ${BUSY_ATTEMPTS} waits; nothing was written` }]) });
      return;
    }
    answer = await call(target, op, args);
  } catch (e) {
    answer = failed(e);
  }
  if (!db.inTransaction) {
    post({ t: 'done', id, answer });
    return;
  }
  if (gate && Atomics.compareExchange(gate, 0, GATE.RUNNING, GATE.COMMITTING) !== GATE.RUNNING) {
    // Cancelled: the pool answered TIMEOUT (or the caller aborted) and nothing may be written.
    rollback.run();
    return;
  }
  try {
    commit.run();
  } catch (e) {
    if (db.inTransaction) rollback.run();
    answer = failed(e);
  }
  post({ t: 'done', id, answer });
}

function onMessage(m: ToWorker): void {
  switch (m.t) {
    case 'run':
      now = m.now;
      if (m.op === 'query') startQuery(m.id, m.args);
      else void runWrite(m.id, m.op, m.args, m.userId);
      return;
    case 'next':
      if (open?.id === m.id) sendNext();
      return;
    case 'cancel':
      if (open?.id === m.id) closeAnswer();
      post({ t: 'released', id: m.id });
      return;
    case 'close':
      closeAnswer();
      void store.close().finally(() => port.close());
      return;
  }
}

port.on('message', (m: ToWorker) => {
  try {
    onMessage(m);
  } catch (e) {
    // Whatever failed, the request is answered (failed: INTERNAL unless the engine said more) and this thread keeps serving.
    if (m.t === 'run' || m.t === 'next') {
      try {
        closeAnswer();
        if (db.inTransaction) rollback.run();
      } catch {
        // Already answering INTERNAL.
      }
      post(m.t === 'run' ? { t: 'done', id: m.id, answer: failed(e) } : { t: 'fail', id: m.id, envelope: failed(e) });
    }
  }
});
post({ t: 'ready' });
