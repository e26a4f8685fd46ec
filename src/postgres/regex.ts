/**
 * RE2 patterns (what the store documents and checks, src/query/regex.ts) → PostgreSQL ARE patterns that match exactly
 * the same strings, or the reason there is none.
 *
 * PostgreSQL's engine differs from RE2 by default: its `.` and `[^a]` follow newline modes, `\b` is a backspace,
 * `\w` and case-insensitivity follow the collation, and `\p{…}` does not exist. So nothing is passed through as
 * written: every character is emitted as an explicit code point or a bracket of code-point ranges, `.` as `[^\n]`
 * (or `.` with the `s` flag, in ARE's default mode), multi-line anchors as lookarounds on `\n` only (RE2 breaks lines
 * only there), and the `i` flag as RE2's own case-fold orbits (RE2 itself decides who belongs to one), computed here.
 * Patterns are run under COLLATE "C", where ARE's word characters are ASCII letters, digits and `_` — RE2's `\w` —
 * so `\b` maps to `\y`. What cannot be matched the same way (Unicode classes `\p`, inline flags `(?i)`, `\B` — RE2
 * also finds it between the bytes of one character —, octal escapes, `\C`, repeat counts over 255, ARE's limit) is
 * refused with a reason naming it.
 */
import { compileRegex } from '../query/regex.js';

export type Translated = { readonly ok: true; readonly pattern: string } | { readonly ok: false; readonly reason: string };

type Ranges = [number, number][];

const MAX_CP = 0x10ffff;
/** ARE's largest repeat count (DUPMAX); RE2 allows 1000. */
const MAX_REPEAT = 255;

class Refused extends Error {}

function refuse(what: string): never {
  throw new Refused(what);
}

// ---- character sets ------------------------------------------------------------------------------------------

function normalize(ranges: Ranges): Ranges {
  const sorted = ranges.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Ranges = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function complement(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [a, b] of normalize(ranges)) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

const DIGIT: Ranges = [[0x30, 0x39]];
const SPACE: Ranges = [[9, 10], [12, 13], [32, 32]];
const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const PERL: Record<string, Ranges> = { d: DIGIT, s: SPACE, w: WORD };

/** RE2's POSIX classes (ASCII only). */
const POSIX: Record<string, Ranges> = {
  alnum: [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]],
  alpha: [[0x41, 0x5a], [0x61, 0x7a]],
  ascii: [[0, 0x7f]],
  blank: [[9, 9], [32, 32]],
  cntrl: [[0, 0x1f], [0x7f, 0x7f]],
  digit: DIGIT,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]],
  space: [[9, 13], [32, 32]],
  upper: [[0x41, 0x5a]],
  word: WORD,
  xdigit: [[0x30, 0x39], [0x41, 0x46], [0x61, 0x66]],
};

// ---- case folding, as RE2 does it ----------------------------------------------------------------------------

/** Code points linked by a one-code-point upper/lower mapping: a superset of each RE2 fold orbit, narrowed below. */
let components: Map<number, number[]> | undefined;
/** Every code point in a component of two or more, ascending. */
let cased: number[] = [];

function caseComponents(): Map<number, number[]> {
  if (components) return components;
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    let r = x;
    while (parent.has(r) && parent.get(r) !== r) r = parent.get(r)!;
    parent.set(x, r);
    return r;
  };
  const union = (a: number, b: number) => {
    if (!parent.has(a)) parent.set(a, a);
    if (!parent.has(b)) parent.set(b, b);
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra, rb);
  };
  // Cased letters live below U+20000 (the last are Adlam's, U+1E9xx).
  for (let cp = 0; cp < 0x20000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const s = String.fromCodePoint(cp);
    for (const t of [s.toLowerCase(), s.toUpperCase()]) {
      if (t === s) continue;
      const cps = Array.from(t);
      if (cps.length === 1) union(cp, cps[0]!.codePointAt(0)!);
    }
  }
  const groups = new Map<number, number[]>();
  for (const cp of parent.keys()) {
    const r = find(cp);
    let g = groups.get(r);
    if (!g) groups.set(r, (g = []));
    g.push(cp);
  }
  components = new Map();
  for (const g of groups.values()) {
    g.sort((a, b) => a - b);
    for (const cp of g) components.set(cp, g);
  }
  cased = [...components.keys()].sort((a, b) => a - b);
  return components;
}

const orbits = new Map<number, number[]>();

/**
 * The code points RE2 matches with `cp` under the `i` flag (itself included), asked of RE2 itself.
 * @example foldOrbit(0x6b) // [0x4b, 0x6b, 0x212a]: K, k and the Kelvin sign
 */
export function foldOrbit(cp: number): number[] {
  const component = caseComponents().get(cp);
  if (!component) return [cp];
  let orbit = orbits.get(cp);
  if (!orbit) {
    const re = compileRegex(`^\\x{${cp.toString(16)}}$`, 'i');
    orbit = component.filter((x) => x === cp || re.test(String.fromCodePoint(x)));
    orbits.set(cp, orbit);
  }
  return orbit;
}

/** A set with every member's fold orbit added (RE2 folds each range of a class as it is added). */
function fold(ranges: Ranges): Ranges {
  caseComponents();
  const out: Ranges = ranges.map(([a, b]) => [a, b]);
  for (const [a, b] of ranges) {
    // Binary search the first cased code point in [a, b], then walk.
    let lo = 0;
    let hi = cased.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cased[mid]! < a) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < cased.length && cased[k]! <= b; k++) for (const x of foldOrbit(cased[k]!)) out.push([x, x]);
  }
  return normalize(out);
}

// ---- emitting ARE --------------------------------------------------------------------------------------------

function hex8(cp: number): string {
  return `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** One character as ARE text: ASCII letters and digits as themselves, every other code point as `\Uxxxxxxxx`. */
function char(cp: number): string {
  return /^[A-Za-z0-9]$/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : hex8(cp);
}

/** A bracket expression of explicit ranges; surrogates (never in text) are left out, an empty set matches nothing. */
function bracket(ranges: Ranges): string {
  const parts: string[] = [];
  for (const [a, b] of normalize(ranges)) {
    const pieces: [number, number][] = a <= 0xdfff && b >= 0xd800 ? [[a, 0xd7ff], [0xe000, b]] : [[a, b]];
    for (const [x, y] of pieces) {
      if (x > y) continue;
      parts.push(x === y ? char(x) : `${char(x)}-${char(y)}`);
    }
  }
  // Every valid character is outside: a set that matches nothing.
  return parts.length ? `[${parts.join('')}]` : `[^${char(0)}-${char(0xd7ff)}${char(0xe000)}-${char(MAX_CP)}]`;
}

// ---- the translator ------------------------------------------------------------------------------------------

const ESCAPED_CHARS: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, a: 7 };

class Translator {
  readonly #cps: number[];
  #i = 0;
  readonly #fold: boolean;
  readonly #dotAll: boolean;
  readonly #multiline: boolean;
  readonly #out: string[] = [];

  constructor(source: string, flags: string) {
    this.#cps = Array.from(source, (c) => c.codePointAt(0)!);
    this.#fold = flags.includes('i');
    this.#dotAll = flags.includes('s');
    this.#multiline = flags.includes('m');
  }

  #peek(k = 0): string | undefined {
    const cp = this.#cps[this.#i + k];
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  #rest(): string {
    return String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 300));
  }

  /** A literal character, as its fold orbit under `i`. */
  #literal(cp: number): string {
    if (cp === 0 || (cp >= 0xd800 && cp <= 0xdfff)) refuse('U+0000 or an unpaired surrogate, which PostgreSQL text cannot hold');
    if (this.#fold) {
      const orbit = foldOrbit(cp);
      if (orbit.length > 1) return bracket(orbit.map((x) => [x, x]));
    }
    return char(cp);
  }

  /** A set of code points (a class, a Perl or POSIX class), folded under `i`; `negated` complements after folding. */
  #set(ranges: Ranges, negated = false): Ranges {
    const folded = this.#fold ? fold(ranges) : normalize(ranges);
    return negated ? complement(folded) : folded;
  }

  translate(): string {
    while (this.#i < this.#cps.length) {
      const c = this.#peek()!;
      switch (c) {
        case '\\':
          this.#out.push(this.#escape());
          break;
        case '[':
          this.#out.push(bracket(this.#class()));
          break;
        case '.':
          this.#i++;
          // ARE's default mode: `.` matches every character, \n included.
          this.#out.push(this.#dotAll ? '.' : '[^\\n]');
          break;
        case '^':
          this.#i++;
          // RE2 breaks lines at \n only (ARE's newline mode would also change `.` and `[^…]`).
          this.#out.push(this.#multiline ? '(?:^|(?<=\\n))' : '^');
          break;
        case '$':
          this.#i++;
          this.#out.push(this.#multiline ? '(?=\\n|$)' : '$');
          break;
        case '(':
          this.#out.push(this.#group());
          break;
        case ')':
        case '|':
          this.#i++;
          this.#out.push(c);
          break;
        case '*':
        case '+':
        case '?':
          this.#i++;
          this.#out.push(c);
          this.#lazy();
          break;
        case '{': {
          const m = /^\{(\d+)(,(\d*))?\}/.exec(this.#rest());
          if (!m) {
            // Not a repeat: RE2 reads `{` as itself.
            this.#i++;
            this.#out.push(char(0x7b));
            break;
          }
          const counts = [m[1]!, m[3] ?? ''].filter((n) => n !== '').map(Number);
          if (counts.some((n) => n > MAX_REPEAT)) refuse(`a repeat count over ${MAX_REPEAT} (${m[0]}), PostgreSQL's limit`);
          this.#i += Array.from(m[0]).length;
          this.#out.push(m[0]);
          this.#lazy();
          break;
        }
        default:
          this.#i++;
          this.#out.push(this.#literal(this.#cps[this.#i - 1]!));
      }
    }
    return this.#out.join('');
  }

  /** A lazy quantifier's `?`: it changes which match is found, never whether one is. */
  #lazy(): void {
    if (this.#peek() === '?') this.#i++;
  }

  #group(): string {
    this.#i++;
    if (this.#peek() !== '?') return '(?:';
    const m = /^\?(:|P<[A-Za-z0-9_]+>|<[A-Za-z0-9_]+>)/.exec(this.#rest());
    if (!m) refuse('inline flags such as (?i); give flags as /pattern/flags');
    this.#i += m[0].length;
    return '(?:';
  }

  /** An escape outside a class. */
  #escape(): string {
    const e = this.#peek(1);
    if (e === undefined) refuse('a trailing backslash');
    const lower = e.toLowerCase();
    if (lower in PERL && (e === lower || e === e.toUpperCase())) {
      this.#i += 2;
      return bracket(this.#set(PERL[lower]!, e !== lower));
    }
    switch (e) {
      case 'b':
        this.#i += 2;
        return '\\y';
      case 'B':
        // RE2 runs on UTF-8 bytes: its \B also holds between the bytes of one multi-byte character.
        refuse('\\B, which RE2 also finds inside multi-byte characters');
      case 'A':
        this.#i += 2;
        return '\\A';
      case 'z':
        this.#i += 2;
        return '\\Z';
      case 'Q': {
        this.#i += 2;
        let text = '';
        while (this.#i < this.#cps.length && !(this.#peek() === '\\' && this.#peek(1) === 'E')) text += this.#literal(this.#cps[this.#i++]!);
        if (this.#i < this.#cps.length) this.#i += 2;
        return text;
      }
      default:
        return this.#literal(this.#escapedChar());
    }
  }

  /** An escape that stands for one character (\n, \x41, \x{263a}, \.), or a refusal naming what it is. */
  #escapedChar(): number {
    const e = this.#peek(1)!;
    if (e in ESCAPED_CHARS) {
      this.#i += 2;
      return ESCAPED_CHARS[e]!;
    }
    if (e === 'x') {
      const m = /^\\x(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{2}))/.exec(this.#rest());
      if (!m) refuse('a malformed \\x escape');
      this.#i += m[0].length;
      return parseInt(m[1] ?? m[2]!, 16);
    }
    if (e === 'p' || e === 'P') refuse('Unicode classes (\\p, \\P)');
    if (e === 'C') refuse('\\C (any byte)');
    if (/[0-9]/.test(e)) refuse('octal escapes');
    if (/[A-Za-z]/.test(e)) refuse(`the escape \\${e}`);
    this.#i += 2;
    return this.#cps[this.#i - 1]!;
  }

  /** A bracket class: its set of code points. */
  #class(): Ranges {
    this.#i++;
    let negated = false;
    if (this.#peek() === '^') {
      negated = true;
      this.#i++;
    }
    const parts: Ranges = [];
    let first = true;
    for (;;) {
      const c = this.#peek();
      if (c === undefined) refuse('an unclosed class');
      if (c === ']' && !first) {
        this.#i++;
        break;
      }
      first = false;
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(this.#rest());
      if (posix) {
        const set = POSIX[posix[2]!];
        if (!set) refuse(`the class [:${posix[2]}:]`);
        this.#i += posix[0].length;
        parts.push(...this.#set(set, posix[1] === '^'));
        continue;
      }
      if (c === '\\') {
        const e = this.#peek(1);
        const lower = e?.toLowerCase();
        if (e !== undefined && lower! in PERL) {
          this.#i += 2;
          parts.push(...this.#set(PERL[lower!]!, e !== lower));
          continue;
        }
      }
      const lo = this.#classChar();
      if (this.#peek() === '-' && this.#peek(1) !== ']' && this.#peek(1) !== undefined) {
        this.#i++;
        const hi = this.#classChar();
        parts.push(...this.#set([[lo, hi]]));
      } else parts.push(...this.#set([[lo, lo]]));
    }
    return negated ? complement(parts) : normalize(parts);
  }

  #classChar(): number {
    if (this.#peek() === '\\') return this.#escapedChar();
    return this.#cps[this.#i++]!;
  }
}

/**
 * The ARE pattern PostgreSQL matches exactly the strings RE2 matches with `source` and `flags` (i, m, s), to be run
 * under COLLATE "C"; or why there is none. `source` must already be valid RE2 (the query parser checks that).
 * @example toPostgresRegex('^p-\\d', 'i') // { ok: true, pattern: '^[Pp]\\U0000002d[0-9]' }
 */
export function toPostgresRegex(source: string, flags: string): Translated {
  try {
    return { ok: true, pattern: new Translator(source, flags).translate() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.message };
    throw e;
  }
}
