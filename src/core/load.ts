/**
 * `load`: documents from an (async) iterable, validated, stamped and inserted `batchSize` at a time, so memory stays
 * flat for any source; one transaction per batch, or one for the whole source (`atomic`, the backend's bulk path).
 */
import type { TypeInfo } from '../catalogue/index.js';
import { validateDocument } from '../catalogue/validate.js';
import type { Backend, StoredDoc } from '../backend.js';
import { envelope, fail, RequestError, type Envelope, type EnvelopeError } from '../envelope.js';
import { journalOf, logLoad, logRefusal, type RequestJournal } from './journal.js';
import { ensureOpen, failure, resolveType, type State } from './run.js';
import { stamp } from './stamp.js';
import type { ReplaceOptions } from './store.js';

export interface LoadOptions extends ReplaceOptions {
  /** Documents per transaction (default 1,000); with `atomic`, per insert inside the one transaction. */
  batchSize?: number;
  /**
   * One transaction for the whole source: any refused document writes nothing at all (default false). Only a
   * load in one transaction takes the bulk path (indexes rebuilt once at the end, see README "Writes").
   */
  atomic?: boolean;
  /**
   * The first refused document ends the load: its batch is not written (each batch is then all or nothing) and
   * nothing more is read; earlier batches stay, unless `atomic` (default false: skip it and go on).
   */
  stopOnError?: boolean;
  /** Errors listed in the answer at most (default 100); `message` counts them all. */
  maxErrors?: number;
  /** Called with the errors of every refused document (all of them, beyond `maxErrors`), batch by batch in source order. */
  onError?: (error: EnvelopeError) => void;
  /** Called after each batch is written (or, atomic, inserted in the open transaction): documents read, written, refused. */
  onBatch?: (progress: { read: number; written: number; refused: number }) => void;
}

/** Wraps an error the load's source threw, so that it reaches the caller as it was. */
class SourceError {
  constructor(readonly error: unknown) {}
}

/** "1 document", "2 documents". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** An async iterator over a sync iterable, without the per-item promise a `for await` over it would add beyond one. */
function toAsync<T>(iterable: Iterable<T>): AsyncIterator<T> {
  const it = iterable[Symbol.iterator]();
  return {
    next: async () => it.next(),
    return: async () => it.return?.() ?? { done: true, value: undefined },
  };
}

/** DynamicStore#load: the store's `state`, writing as `userId`. */
export async function load(state: State, userId: string, type: string, source: Iterable<unknown> | AsyncIterable<unknown>, options?: LoadOptions): Promise<Envelope<never>> {
  ensureOpen(state);
  const iterable = source as { [Symbol.iterator]?: unknown; [Symbol.asyncIterator]?: unknown } | null;
  if (!iterable || (typeof iterable[Symbol.asyncIterator] !== 'function' && typeof iterable[Symbol.iterator] !== 'function')) {
    throw new TypeError('load: source must be an iterable or async iterable of documents');
  }
  const o = options ?? {};
  const batchSize = o.batchSize ?? 1000;
  const maxErrors = o.maxErrors ?? 100;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError('load: batchSize must be a positive integer');
  if (!Number.isSafeInteger(maxErrors) || maxErrors < 0) throw new RangeError('load: maxErrors must be a non-negative integer');
  for (const k of ['onError', 'onBatch'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw new TypeError(`load: ${k} must be a function`);
  }
  const atomic = o.atomic === true;
  const stopOnError = o.stopOnError === true;
  const keepStamps = o.keepStamps === true;
  const { backend, settings } = state;
  let info: TypeInfo;
  let journal: RequestJournal;
  try {
    journal = journalOf(settings, userId, 'load', [type], o.activityId === undefined ? undefined : { activityId: o.activityId });
  } catch (e) {
    if (e instanceof RequestError) return fail(e.errors);
    throw e;
  }
  const activityId = journal.activityId;
  try {
    info = resolveType(state, type);
  } catch (e) {
    if (!(e instanceof RequestError)) throw e;
    const env = { ...fail<never>(e.errors), activityId };
    await logRefusal(state, journal, env);
    return env;
  }
  if (atomic && !backend.capabilities.bulk) return fail([{ code: 'INVALID_REQUEST', message: 'load: this backend cannot load atomically yet; load in batches' }]);
  await state.gate;
  let release = () => {};
  if (atomic) state.gate = new Promise<void>((resolve) => (release = resolve));
  const errors: EnvelopeError[] = [];
  let refused = 0;
  let read = 0;
  let written = 0;
  /** Refusals of the batch being read, reported in source order once its documents are written. */
  let found: EnvelopeError[] = [];
  const report = (list: EnvelopeError[]) => {
    list.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    for (const e of list) {
      if (errors.length < maxErrors) errors.push(e);
      o.onError?.(e);
    }
  };
  let writer: ReturnType<Backend['bulk']> | undefined;
  try {
    writer = atomic ? backend.bulk() : undefined;
    let batch: StoredDoc[] = [];
    let positions: number[] = [];
    /** Documents accepted since the last batch report (an atomic load has written most of them already). */
    let accepted = 0;
    /** Writes the documents read so far; refusals wait in `found` for the batch's report. */
    const write = async () => {
      const docs = batch;
      const at = positions;
      batch = [];
      positions = [];
      // Written unless a refusal already dooms it: an atomic load rolls back, a stopping one drops its batch.
      if (docs.length && !((atomic || stopOnError) && refused)) {
        const r = writer ? await writer.insert(info, docs) : await backend.insert(info, docs, stopOnError);
        if (!r.rolledBack) written += r.insertedIds.length;
        // One error per colliding document.
        refused += r.errors.length;
        for (const e of r.errors) {
          const pos = at[e.index ?? 0]!;
          found.push({ ...e, index: pos, message: e.message.replace(/^document \d+:/, `document ${pos}:`) });
        }
      }
    };
    const flush = async () => {
      if (!accepted && !found.length) return;
      accepted = 0;
      await write();
      report(found);
      found = [];
      o.onBatch?.({ read, written: atomic ? 0 : written, refused });
    };
    // One time for the whole load: its documents are stamped as one request.
    const stamps = { userId, activityId, at: settings.now() };
    const it = (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator]?.() ?? toAsync(iterable as Iterable<unknown>);
    for (;;) {
      let step: IteratorResult<unknown>;
      try {
        step = await it.next();
      } catch (e) {
        throw new SourceError(e);
      }
      if (step.done) break;
      const r = validateDocument(info, step.value, { strict: settings.strict, index: read });
      if (r.errors.length) {
        refused++;
        found.push(...r.errors);
      } else {
        batch.push(stamp(settings, stamps, r.doc, undefined, keepStamps));
        positions.push(read);
        accepted++;
      }
      read++;
      if (stopOnError && refused) break;
      if (accepted >= batchSize) await flush();
      // One transaction holds the whole atomic load: the writer takes documents as they come (its chunk); the
      // batch then paces only the reports.
      else if (writer?.chunk && batch.length >= writer.chunk) await write();
      if (stopOnError && refused) break;
      // Atomic and already refused: once the answer's error list is full, reading on changes nothing.
      if (atomic && refused && errors.length + found.length >= maxErrors) break;
    }
    if (stopOnError && refused) {
      batch = [];
      await it.return?.();
    }
    await flush();
    if (writer) {
      if (refused) {
        await writer.rollback();
        written = 0;
      } else await writer.commit();
    }
  } catch (e) {
    try {
      await writer?.rollback();
    } catch {
      // The transaction is gone with the failure that ended it.
    }
    // The source's own failure is the caller's to handle, as it threw it; what was committed stays committed.
    if (e instanceof SourceError) {
      await logLoad(state, journal, atomic ? 0 : written, [{ code: 'INVALID_REQUEST', message: 'load: the source threw' }]);
      throw e.error;
    }
    const env = { ...failure<never>(e, settings.onError), count: atomic ? 0 : written, total: read, activityId };
    await logLoad(state, journal, env.count, env.errors);
    return env;
  } finally {
    if (atomic) {
      state.gate = null;
      release();
    }
  }
  const message = refused
    ? atomic
      ? `0 of ${read} loaded; ${plural(refused, 'document')} refused; nothing was written (atomic)`
      : `${written} of ${read} loaded; ${plural(refused, 'document')} refused${stopOnError ? '; stopped at the first' : ''}`
    : `${written} of ${read} loaded`;
  await logLoad(state, journal, written, errors);
  return envelope<never>({ count: written, total: read, errors, success: refused === 0, message, activityId });
}
