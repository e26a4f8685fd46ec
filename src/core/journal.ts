/**
 * The journal of a write request: its activity, time and user, and, with the activity log on, its ActivityLog
 * document: written by the backend in the request's transaction, or here in one of its own for a request that was
 * refused before it wrote anything (and for a load, which commits batch by batch).
 */
import { describe, isPlainObject } from '../catalogue/validate.js';
import type { Journal, StoredDoc, WriteCounts } from '../backend.js';
import { requestError, type Envelope, type EnvelopeError } from '../envelope.js';
import { LIMITS } from '../limits.js';
import type { Settings } from '../settings.js';
import { failure, run, type State } from './run.js';
import { stamp } from './stamp.js';

/** A write request's journal as the store keeps it: what the backend is given, and what became of its log entry. */
export interface RequestJournal extends Journal {
  /** True once the backend took the log entry into the request's transaction. */
  logged: boolean;
  /** The log entry of a request refused before it wrote anything, naming the error; absent without the activity log. */
  readonly refusal?: (error: EnvelopeError) => StoredDoc;
}

/** An ActivityLog's `method`: the HTTP method of the operation's route in the service's API. */
const METHODS: Record<string, string> = { insert: 'POST', insertMany: 'POST', load: 'POST', replace: 'PUT', update: 'PATCH', delete: 'DELETE', purge: 'DELETE' };

/** The activity of a write request: the caller's `options.activityId`, or a new ObjectId-style id. */
function activityOf(settings: Settings, options: unknown): string {
  if (options === undefined || options === null) return settings.newId();
  if (!isPlainObject(options)) throw requestError('INVALID_REQUEST', 'options: expected an object');
  const id = options.activityId;
  if (id === undefined || id === null) return settings.newId();
  if (typeof id !== 'string' || id === '' || id.length > LIMITS.nameLength) {
    throw requestError('INVALID_REQUEST', `options.activityId: expected a non-empty string of at most ${LIMITS.nameLength} characters, got ${describe(id)}`, {
      field: 'options.activityId',
    });
  }
  return id;
}

/**
 * The journal of a write request `op` on `types` by `userId`; a bad `options.activityId` throws its RequestError.
 * @example const journal = journalOf(settings, 'etl', 'insert', ['Well'], options);
 */
export function journalOf(settings: Settings, userId: string, op: string, types: readonly unknown[], options: unknown): RequestJournal {
  const activityId = activityOf(settings, options);
  const at = settings.now();
  if (!settings.activityLog) return { activityId, at, userId, logged: false };
  const started = performance.now();
  const dataTypes = [...new Set(types.map((t) => (typeof t === 'string' ? (settings.catalogue.resolve(t)?.name ?? t.slice(0, LIMITS.nameLength)) : String(t))))];
  const entry = (done: WriteCounts, error?: EnvelopeError) => {
    const end = settings.now();
    const doc: StoredDoc = {
      name: op,
      method: METHODS[op] ?? 'POST',
      dataTypes,
      numDocsCreated: done.created,
      numDocsModified: done.modified,
      numDocsDeleted: done.deleted,
      startTime: at,
      endTime: end,
      duration: performance.now() - started,
      hasError: !!error || done.errors.length > 0,
      toolName: settings.tool.name,
      toolVersion: settings.tool.version,
    };
    const first = error ?? done.errors[0];
    if (first) {
      doc.errorName = first.code;
      doc.errorMessage = done.errors.length > 1 ? `${first.message} (and ${done.errors.length - 1} more)` : first.message;
    }
    return stamp(settings, journal, doc);
  };
  const journal: RequestJournal = {
    activityId,
    at,
    userId,
    logged: false,
    log: (done) => {
      journal.logged = true;
      return entry(done);
    },
    refusal: (e) => entry({ created: 0, modified: 0, deleted: 0, errors: [] }, e),
  };
  return journal;
}

/**
 * Runs a write request under its activity id, which its envelope carries whatever the outcome. With the activity
 * log on, the backend writes the request's ActivityLog document in the request's transaction; a request that
 * wrote nothing because it was refused gets one in a transaction of its own.
 */
export async function journaled<T>(state: State, userId: string, op: string, type: unknown, options: unknown, fn: (journal: Journal) => Envelope<T> | Promise<Envelope<T>>): Promise<Envelope<T>> {
  let journal: RequestJournal | null = null;
  const env = await run(state, () => fn((journal = journalOf(state.settings, userId, op, [type], options))));
  if (journal === null) return env;
  const j: RequestJournal = journal;
  if (!env.success && !j.logged) await logRefusal(state, j, env);
  return { ...env, activityId: j.activityId };
}

/** The ActivityLog document of a refused request, in a transaction of its own. */
export function logRefusal(state: State, journal: RequestJournal, env: Envelope<unknown>): Promise<void> {
  return logApart(state, journal.refusal?.(env.errors[0] ?? { code: 'INTERNAL', message: env.message ?? 'refused' }));
}

/**
 * The ActivityLog document of a load, in a transaction of its own after the load's last one (a load commits batch
 * by batch: there is no one transaction to write it in). A failure to write it goes to onError.
 */
export function logLoad(state: State, journal: Journal, written: number, errors: readonly EnvelopeError[]): Promise<void> {
  return logApart(state, journal.log?.({ created: written, modified: 0, deleted: 0, errors }));
}

/**
 * Writes an ActivityLog document in a transaction of its own (none without the activity log). A failure to write it
 * goes to onError: the request's answer stays what it was.
 */
async function logApart(state: State, doc: StoredDoc | undefined): Promise<void> {
  const info = state.settings.catalogue.resolve('ActivityLog');
  if (!doc || !info) return;
  try {
    await state.backend.insert(info, [doc], false, 1);
  } catch (e) {
    failure(e, state.settings.onError);
  }
}
