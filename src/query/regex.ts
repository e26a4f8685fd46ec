/** Regex operands: `pattern` or `/pattern/flags`, compiled by RE2 so no pattern can stall the process. */
import RE2 from 're2';

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

const cache = new Map<string, RE2>();
/** Pattern characters held by the cache: bounded in bytes as well as entries (a compiled pattern grows with its text). */
let held = 0;
const MAX_ENTRIES = 256;
const MAX_CHARS = 256 * 1024;

function compile(source: string, flags: string): RE2 {
  const key = `${flags}/${source}`;
  let re = cache.get(key);
  if (!re) {
    re = new RE2(source, flags + 'u');
    while (cache.size && (cache.size >= MAX_ENTRIES || held + key.length > MAX_CHARS)) {
      const oldest = cache.keys().next().value!;
      cache.delete(oldest);
      held -= oldest.length;
    }
    cache.set(key, re);
    held += key.length;
  }
  return re;
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
