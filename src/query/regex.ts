/** Regex operands: `pattern` or `/pattern/flags`, compiled by RE2 (its JavaScript port, re2js) so no pattern can stall the process. */
import { RE2JS } from 're2js';
import { BoundedCache } from '../cache.js';

export interface RegexOperand { source: string; flags: string }

const ALLOWED_FLAGS = new Set(['i', 'm', 's']);

/** Splits `/p/flags` (flags from i, m, s); any other string is a pattern without flags. */
export function parseRegex(text: string): RegexOperand | string {
  let source = text;
  let flags = '';
  const m = /^\/(.*)\/([A-Za-z]*)$/s.exec(text);
  if (m) {
    source = m[1]!;
    flags = m[2]!;
    const seen = new Set<string>();
    for (const f of flags) {
      if (!ALLOWED_FLAGS.has(f)) return `unsupported regex flag "${f}" (use i, m or s)`;
      if (seen.has(f)) return `regex flag "${f}" given twice`;
      seen.add(f);
    }
  }
  const err = compileError(source, flags);
  return err === null ? { source, flags } : err;
}

/**
 * RE2's own bound on a pattern's program, in instructions: its default 8 MiB budget (two thirds of it for the
 * forward program, 8 bytes an instruction). re2js has none, and a test's cost grows with the program's size.
 */
const MAX_PROGRAM = 699_000;
const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL };

/**
 * The compiled pattern, uncached; throws on a pattern RE2 refuses (syntax, or a program past RE2's size bound).
 * @example compileRegex('^smith', 'i').test('SMITH 1H') // true
 */
export function compileRegex(source: string, flags: string): RE2JS {
  let bits = 0;
  for (const f of flags) bits |= FLAG_BITS[f] ?? 0;
  const re = RE2JS.compile(source, bits);
  if (re.programSize() > MAX_PROGRAM) throw new Error('pattern too large - compile failed');
  return re;
}

/** Compiled patterns, bounded in program instructions as well as entries: memory grows with them (~100 bytes each). */
const cache = new BoundedCache<RE2JS>(256, 1_000_000);

function compile(source: string, flags: string): RE2JS {
  const key = `${flags}/${source}`;
  let re = cache.get(key);
  if (!re) cache.set(key, (re = compileRegex(source, flags)), re.programSize());
  return re;
}

/** Program instructions held by compiled patterns (the cache's budget is 1,000,000), for tests and diagnostics. */
export function heldInstructions(): number {
  return cache.size.held;
}

function compileError(source: string, flags: string): string | null {
  try {
    compile(source, flags);
    return null;
  } catch (e) {
    return `invalid regex /${source}/${flags}: ${(e as Error).message} (RE2 syntax: no backreferences or lookaround)`;
  }
}

/** SQL function body: 1 when `value` is a string the pattern matches. */
export function regexTest(source: unknown, flags: unknown, value: unknown): number {
  if (typeof value !== 'string' || typeof source !== 'string' || typeof flags !== 'string') return 0;
  return compile(source, flags).test(value) ? 1 : 0;
}
