/**
 * Documents on their way in: validated against their type, then stamped with the base fields (ids, creation and
 * update stamps, activities). Every write of the store takes its documents from here.
 */
import type { TypeInfo } from '../catalogue/index.js';
import { describe, validateDocument } from '../catalogue/validate.js';
import type { Journal, StoredDoc } from '../backend.js';
import { requestError, RequestError, type EnvelopeError } from '../envelope.js';
import type { Settings } from '../settings.js';

/** Who stamps and when: the user a request writes as, its time and its activity (a request's journal has them). */
export type Stamps = Pick<Journal, 'userId' | 'at' | 'activityId'>;

/**
 * Sets the base fields on a validated document (a fresh object of the store's own), in place: a replacement keeps
 * the creation stamps of the stored document `keep`; with `given`, the document's own stamps stay where it has them.
 */
export function stamp(settings: Settings, s: Stamps, doc: StoredDoc, keep?: StoredDoc, given = false): StoredDoc {
  const { at: now, activityId } = s;
  const own = (field: string) => given && doc[field] !== undefined && doc[field] !== null;
  if (typeof doc.id !== 'string') doc.id = settings.newId();
  if (!own('createdAt')) doc.createdAt = keep ? keep.createdAt : (doc.createdAt ?? now);
  if (!own('createdBy')) doc.createdBy = keep ? keep.createdBy : (doc.createdBy ?? s.userId);
  if (!own('updatedAt')) doc.updatedAt = now;
  if (!own('updatedBy')) doc.updatedBy = s.userId;
  if (!own('modifiedTimestamp')) doc.modifiedTimestamp = Date.parse(now);
  doc.schemaVersion = settings.catalogue.version;
  // A replaced document keeps the activity that created it (absent when it was created before activities were kept).
  if (!own('createdActivityId')) doc.createdActivityId = keep ? (keep.createdActivityId ?? undefined) : (doc.createdActivityId ?? activityId);
  if (!own('lastUpdatedActivityId')) doc.lastUpdatedActivityId = activityId;
  return doc;
}

/** Validates every document first: one bad document fails the request before anything is written. */
export function validateAll(info: TypeInfo, docs: unknown, strict: boolean): StoredDoc[] {
  if (!Array.isArray(docs)) throw requestError('INVALID_REQUEST', `data: expected an array of documents, got ${describe(docs)}`, { field: 'data' });
  const errors: EnvelopeError[] = [];
  const out = docs.map((d, index) => {
    const r = validateDocument(info, d, { strict, index });
    errors.push(...r.errors);
    return r.doc;
  });
  if (errors.length) throw new RequestError(errors);
  return out;
}

/**
 * The documents of an insert, validated and stamped one at a time as the backend writes them inside its
 * transaction, so no validated copy of the whole request is ever held. Past the first invalid document nothing
 * more is handed out; the rest are still checked, and the end throws every problem found as one VALIDATION
 * error, which rolls the transaction back: a request with an invalid document writes nothing. Each iteration
 * starts over (a backend may run the request again after a lock wait).
 */
export function stamping(settings: Settings, info: TypeInfo, docs: readonly unknown[], s: Stamps): Iterable<StoredDoc> {
  const strict = settings.strict;
  return {
    *[Symbol.iterator]() {
      const errors: EnvelopeError[] = [];
      for (let index = 0; index < docs.length; index++) {
        const r = validateDocument(info, docs[index], { strict, index });
        if (r.errors.length) errors.push(...r.errors);
        else if (!errors.length) yield stamp(settings, s, r.doc);
      }
      if (errors.length) throw new RequestError(errors);
    },
  };
}

/** The stamps every write sets anew: a replacement that differs from the stored document only in them changes nothing. */
const WRITE_STAMPS = new Set(['updatedAt', 'updatedBy', 'modifiedTimestamp', 'lastUpdatedActivityId']);

/** True when a replacement equals the stored document, its write stamps aside (member order does not matter). */
export function sameDocument(stored: StoredDoc, doc: StoredDoc): boolean {
  const fields = (d: StoredDoc) => Object.keys(d).filter((k) => !WRITE_STAMPS.has(k) && d[k] !== undefined);
  const a = fields(stored);
  return a.length === fields(doc).length && a.every((k) => sameJson(stored[k], doc[k]));
}

/** Deep equality of JSON values; a member whose value is undefined counts as absent, as JSON.stringify has it. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((k) => x[k] !== undefined);
  return keys.length === Object.keys(y).filter((k) => y[k] !== undefined).length && keys.every((k) => sameJson(x[k], y[k]));
}
