/** The body of an update checked into the fields it sets: every problem of the body is reported together. */
import { checkValue, describe, isPlainObject, jsonValue } from '../catalogue/validate.js';
import type { FieldSet } from '../backend.js';
import { collect, requestError, RequestError, type EnvelopeError } from '../envelope.js';
import { parseFieldPath, type ParseContext } from '../query/parse.js';

/**
 * The checked fields of an update body: dotted paths into untyped fields allowed, no `$` operators, no id, no index.
 * @example fieldSets(ctx, { statusCurrent: 'Producing', 'meta.source': 'scada' })
 */
export function fieldSets(ctx: ParseContext, body: unknown): FieldSet[] {
  if (!isPlainObject(body) || Object.keys(body).length === 0) {
    throw requestError('VALIDATION', `body: expected an object of fields to set, got ${Array.isArray(body) ? 'an array' : isPlainObject(body) ? 'an empty object' : describe(body)}`, { field: 'body' });
  }
  const errors: EnvelopeError[] = [];
  const sets: FieldSet[] = [];
  const seen: string[] = [];
  for (const [key, raw] of Object.entries(body)) {
    if (raw === undefined) continue;
    const label = `body.${key.length > 64 ? `${key.slice(0, 61)}...` : key}`;
    collect(errors, () => {
      if (key.startsWith('$')) {
        const what = /^\$(inc|mul|push|pull|addToSet|pop|min|max|rename|unset|currentDate)$/i.test(key) ? `${key} is not supported, and ` : '';
        throw requestError('VALIDATION', `${label}: ${what}the body holds the fields to set directly: { statusCurrent: 'Producing' }, not { $set: { statusCurrent: 'Producing' } }`, { field: key.slice(0, 64) });
      }
      const path = parseFieldPath(ctx, key, label);
      const top = path.steps[0]!.name;
      if (top === 'id') throw requestError('VALIDATION', `${label}: the id of a document cannot change`, { field: key });
      if (path.steps.some((s) => s.indexes.length)) throw requestError('VALIDATION', `${label}: array elements cannot be set by index; set the whole array`, { field: key });
      const clash = seen.find((s) => s === key || s.startsWith(`${key}.`) || key.startsWith(`${s}.`));
      if (clash) throw requestError('VALIDATION', `${label}: conflicts with body.${clash}`, { field: key });
      seen.push(key);
      if (path.steps.length === 1) {
        const r = path.field ? checkValue(path.field, raw) : jsonValue(raw);
        if (!r.ok) throw requestError('VALIDATION', `${label}: ${r.reason}`, { field: key });
        sets.push({ steps: path.steps, value: r.value });
        return;
      }
      const cat = path.field?.category;
      if (cat && !['any', 'dict', 'nested'].includes(cat)) {
        throw requestError('VALIDATION', `${label}: "${top}" is a ${path.field!.kind}; set the whole field, not a part of it`, { field: key });
      }
      // The value lands steps - 1 levels down: it may nest only as deep as a document may.
      const r = jsonValue(raw, path.steps.length - 1);
      if (!r.ok) throw requestError('VALIDATION', `${label}: ${r.reason}`, { field: key });
      sets.push({ steps: path.steps, value: r.value });
    });
  }
  if (errors.length) throw new RequestError(errors);
  return sets;
}
