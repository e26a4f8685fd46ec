/**
 * PostgreSQL names and literals, built here and nowhere else. Identifiers come only from catalogue names (encoded as
 * on SQLite, see src/sql/names.ts) and the chosen schema; PostgreSQL cuts identifiers at 63 bytes, so a longer
 * name keeps its start and gets a digest of the whole, and no two names can meet in one.
 */
import { createHash } from 'node:crypto';
import { encodeName, ident } from '../sql/names.js';

export { ident };

/** The longest identifier PostgreSQL keeps whole (NAMEDATALEN - 1). */
const MAX_IDENT_BYTES = 63;

/**
 * A name PostgreSQL keeps as written: at most 63 bytes, longer ones shortened with a digest of the whole.
 * @example fitName('docs_Well') // 'docs_Well'
 */
export function fitName(name: string): string {
  if (Buffer.byteLength(name, 'utf8') <= MAX_IDENT_BYTES) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 16);
  // Catalogue names are ASCII, so slicing characters slices bytes.
  return `${name.slice(0, MAX_IDENT_BYTES - 17)}~${digest}`;
}

/**
 * A name in a schema, both quoted.
 * @example qualified('public', 'docs_Well') // '"public"."docs_Well"'
 */
export function qualified(schema: string, name: string): string {
  return `${ident(schema)}.${ident(name)}`;
}

/**
 * Table of a type's documents.
 * @example docsTable('Well') // 'docs_Well'
 */
export function docsTable(type: string): string {
  return fitName(`docs_${type}`);
}

/**
 * An expression index over fields of a type: `ux` unique, `ix` plain, as on SQLite.
 * @example indexName('ux', 'Well', ['pwi']) // 'ux._well.pwi'
 */
export function indexName(prefix: 'ux' | 'ix', type: string, fields: readonly string[]): string {
  return fitName(`${prefix}.${encodeName(type)}.${fields.map(encodeName).join('.')}`);
}

/**
 * A unique key that holds among live documents only (soft delete): a partial index.
 * @example liveIndexName('Well', ['pwi']) // 'ux._well.pwi~live'
 */
export function liveIndexName(type: string, fields: readonly string[]): string {
  return fitName(`ux.${encodeName(type)}.${fields.map(encodeName).join('.')}~live`);
}

/**
 * The GiST index on the point of one GeoPoint field.
 * @example geoIndexName('Well', 'surfaceLoc') // 'gx._well.surface_loc'
 */
export function geoIndexName(type: string, field: string): string {
  return fitName(`gx.${encodeName(type)}.${encodeName(field)}`);
}

/** The store's own table in a schema: layout and schema fingerprint. */
export const META_TABLE = 'cd_meta';

const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * A JSON member name as an SQL string literal. Names come from checked field paths (letters, digits, `_` and `-`),
 * so the literal needs no escaping; anything else is a bug, refused loudly rather than quoted.
 * @example key('pwi') // "'pwi'"
 */
export function key(name: string): string {
  if (!KEY.test(name)) throw new TypeError(`not a checked field name: ${JSON.stringify(name)}`);
  return `'${name}'`;
}
