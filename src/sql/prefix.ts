/** The literal prefix of an anchored pattern, and the range of strings it starts: how a regex condition uses an index. */

/**
 * The literal text every match of an anchored, case-sensitive pattern starts with.
 * @example literalPrefix('^Smith 1', '') // 'Smith 1'
 */
export function literalPrefix(source: string, flags: string): string {
  // An alternation anywhere may let a match start elsewhere (`^a|b`): no prefix then.
  if (flags.includes('i') || flags.includes('m') || !source.startsWith('^') || source.includes('|')) return '';
  let prefix = /^[^\\.*+?()[\]{}|^$]*/.exec(source.slice(1))![0];
  // A quantifier after the run applies to its last character, which is then not certain.
  if (/^[*+?{]/.test(source.slice(1 + prefix.length))) prefix = [...prefix].slice(0, -1).join('');
  return prefix;
}

/**
 * The smallest string above every string that starts with `prefix` (last code point + 1), or null when there is none:
 * UTF-8 byte order is code point order.
 * @example prefixEnd('ab') // 'ac'
 */
export function prefixEnd(prefix: string): string | null {
  const chars = [...prefix];
  while (chars.length) {
    let next = chars.pop()!.codePointAt(0)! + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return chars.join('') + String.fromCodePoint(next);
  }
  return null;
}
