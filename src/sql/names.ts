/**
 * The identifier rules both engines share: how a name is quoted, and how a catalogue identifier is encoded into a
 * storage name that neither case folding (SQLite) nor truncation after a digest (PostgreSQL) can make collide.
 */

/**
 * Quotes an identifier: the one way an identifier enters SQL text.
 * @example ident('docs_Well') // '"docs_Well"'
 */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The injective, case-folding-proof encoding of one catalogue identifier into [a-z0-9_]: `_` → `__`, an upper-case
 * letter → `_` + its lower case. Parts joined with `.` (which no encoded part holds) never share a name.
 * @example encodeName('surfaceLoc') // 'surface_loc'
 */
export function encodeName(name: string): string {
  return name.replace(/[A-Z_]/g, (c) => (c === '_' ? '__' : `_${c.toLowerCase()}`));
}
