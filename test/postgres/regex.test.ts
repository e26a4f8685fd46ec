/**
 * Property: a random RE2 pattern (literals, classes, Perl and POSIX classes, anchors, word boundaries, groups,
 * alternation, repeats; flags i, m, s) translated for PostgreSQL (src/postgres/regex.ts) matches, on PostgreSQL,
 * exactly the strings RE2 matches — over strings of the characters where the engines part ways (newlines,
 * case-fold orbits such as k/K/U+212A and s/S/U+017F, non-ASCII letters, astral code points).
 */
import fc from 'fast-check';
import { compileRegex } from '../../src/query/regex.js';
import { describe, expect, it } from 'vitest';
import { toPostgresRegex } from '../../src/postgres/regex.js';
import { pgCluster, postgresBackend } from '../helpers/backends.js';

postgresBackend();

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const CHARS = ['a', 'b', 'k', 'K', '\u212a', 's', 'S', '\u017f', 'é', 'É', 'ß', '\u1e9e', '😀', 'x', 'X', '.', '-', ' ', '\n', '\r', '\u2028', '_', '1', '9', 'σ', 'ς', 'Σ'];

const literal = fc.constantFrom('a', 'b', 'k', 'K', 's', 'x', 'é', 'É', 'ß', '😀', 'σ', '\\.', '\\-', ' ', '\\n', '\\x{212a}', '\\x41', '_', '1', '\\Q.-\\E');
const klass = fc.constantFrom('[abk]', '[^a]', '[a-z]', '[A-Z_]', '[[:alpha:]]', '[[:^digit:]]', '\\d', '\\w', '\\s', '\\W', '\\D', '\\S', '[\\w-]', '[^\\n]', '[é-ÿ]', '[]a]', '[^\\s\\d]', '[\\x{1F600}-\\x{1F64F}]', '.');
const anchor = fc.constantFrom('^', '$', '\\b', '\\A', '\\z');
const quantifier = fc.constantFrom('', '', '*', '+', '?', '{1,2}', '{2}', '*?', '+?', '{0,}');

const { pattern } = fc.letrec<{ pattern: string; term: string; atom: string }>((tie) => ({
  atom: fc.oneof({ depthSize: 'small' }, literal, klass, fc.tuple(fc.constantFrom('(', '(?:', '(?P<n>'), tie('pattern')).map(([open, p]) => `${open}${p})`)),
  term: fc.oneof(
    { weight: 5, arbitrary: fc.tuple(tie('atom'), quantifier).map(([a, q]) => a + q) },
    { weight: 1, arbitrary: anchor },
  ),
  pattern: fc.oneof(
    { weight: 4, arbitrary: fc.array(tie('term'), { minLength: 1, maxLength: 4 }).map((ts) => ts.join('')) },
    { weight: 1, arbitrary: fc.tuple(tie('pattern'), tie('pattern')).map(([a, b]) => `${a}|${b}`) },
  ),
}));

const flags = fc.subarray(['i', 'm', 's']).map((f) => f.join(''));
const strings = fc.array(fc.array(fc.constantFrom(...CHARS), { maxLength: 6 }).map((cs) => cs.join('')), { minLength: 20, maxLength: 40 });

describe('RE2 → PostgreSQL regex translation', () => {
  it(`matches what RE2 matches, on PostgreSQL (${RUNS} patterns)`, async () => {
    const { pool } = pgCluster();
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(pattern, flags, strings, async (source, f, texts) => {
        let re: ReturnType<typeof compileRegex>;
        try {
          re = compileRegex(source, f);
        } catch {
          // Not valid RE2 (a repeat of an anchor, say): the query parser refuses it before any backend sees it.
          return;
        }
        const t = toPostgresRegex(source, f);
        expect(t.ok, `${source} /${f}: ${t.ok ? '' : t.reason}`).toBe(true);
        if (!t.ok) return;
        const { rows } = await pool.query<{ m: boolean }>({ text: 'SELECT x COLLATE "C" ~ $1 AS m FROM unnest($2::text[]) WITH ORDINALITY AS u(x, n) ORDER BY n', values: [t.pattern, texts] });
        const got = rows.map((r) => r.m);
        const want = texts.map((s) => re.test(s));
        expect(got, JSON.stringify({ source, flags: f, pattern: t.pattern, texts })).toEqual(want);
        compared++;
      }),
      { numRuns: RUNS },
    );
    // Most drawn patterns are valid RE2: the property is about them, not about the parser.
    expect(compared).toBeGreaterThan(RUNS / 2);
  });
});
