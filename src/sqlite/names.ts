/**
 * Storage names: every table, R*Tree, trigger and index the store makes is named here, in one place.
 *
 * A name is built from catalogue identifiers ([A-Za-z_][A-Za-z0-9_]*), which may share underscores and differ only
 * in case, while SQLite compares names case-insensitively. Each identifier is therefore encoded injectively into
 * [a-z0-9_] (`_` → `__`, an upper-case letter → `_` + its lower case) and the parts are joined with `.`, which no
 * encoded part contains: no two (type, field) pairs, or (type, fields) lists, can share a name.
 */

import { encodeName } from '../sql/names.js';

export { encodeName, ident } from '../sql/names.js';

/** Table of a type's documents (type names are unique case-insensitively, see Catalogue). */
export function docsTable(type: string): string {
  return `docs_${type}`;
}

/** R*Tree of one GeoPoint field of a type. */
export function rtreeTable(type: string, field: string): string {
  return `rtree.${encodeName(type)}.${encodeName(field)}`;
}

/** A trigger keeping an R*Tree: `ai`, `au` or `ad` (after insert, update, delete). */
export function rtreeTrigger(type: string, field: string, op: 'ai' | 'au' | 'ad'): string {
  return `${rtreeTable(type, field)}:${op}`;
}

/** An expression index over fields of a type: `ux` unique, `ix` plain. */
export function indexName(prefix: 'ux' | 'ix', type: string, fields: readonly string[]): string {
  return `${prefix}.${encodeName(type)}.${fields.map(encodeName).join('.')}`;
}

/** A unique key that holds among live documents only (a type with soft delete): a partial index. */
export function liveIndexName(type: string, fields: readonly string[]): string {
  return `${indexName('ux', type, fields)}~live`;
}

/** A trigger of the journal: `feed` (change events) or `history` (VersionDocuments) of a type, after `ai`/`au`/`ad`. */
export function journalTrigger(type: string, feature: 'feed' | 'history', op: 'ai' | 'au' | 'ad'): string {
  return `jr.${encodeName(type)}.${feature}:${op}`;
}

/** The change feed's events, in commit order (seq). */
export const CHANGES_TABLE = 'cd_changes';

/** The one row telling the journal's triggers which request is writing (operation, activity, time, user). */
export const CONTEXT_TABLE = 'cd_context';
