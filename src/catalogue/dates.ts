/** Date inputs (ISO 8601, YYYY-MM-DD, M/D/YYYY, Date) normalised to ISO 8601 UTC with milliseconds. */

const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const MDY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

const DATE_FORMS = 'a date like 2024-05-01, 5/1/2024 or 2024-05-01T12:00:00Z';

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Days in month `mo` (1-12) of year `y`, Gregorian leap years included. */
function daysIn(y: number, mo: number): number {
  const leap = mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return DAYS[mo - 1]! + (leap ? 1 : 0);
}

/** Why these calendar fields name no instant (`February 2024 has 29 days`), or null when they do. */
function calendarError(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): string | null {
  if (mo < 1 || mo > 12) return `there is no month ${mo}`;
  if (d < 1) return `there is no day ${d}`;
  const days = daysIn(y, mo);
  if (d > days) return `${MONTHS[mo - 1]} ${y} has ${days} days`;
  if (h > 23) return `there is no hour ${h}`;
  if (mi > 59) return `there is no minute ${mi}`;
  if (s > 59) return `there is no second ${s}`;
  return null;
}

/** The number of the two (or four) ASCII digits at `at`; NaN-free because CANONICAL matched first. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) v = v * 10 + s.charCodeAt(i) - 48;
  return v;
}

/**
 * True when a string of the canonical shape (what the store writes and reads back) is a real instant, checked on
 * its digits: the form every stored document and most inputs carry costs no Date object.
 */
function isCanonicalDate(s: string): boolean {
  if (!CANONICAL.test(s)) return false;
  return calendarError(digits(s, 0, 4), digits(s, 5, 2), digits(s, 8, 2), digits(s, 11, 2), digits(s, 14, 2), digits(s, 17, 2)) === null;
}

/**
 * A trimmed text in one of the accepted forms: its instant (ms since the epoch), or why its calendar fields name
 * none (a string); null when it is not in an accepted form at all.
 */
function readDate(s: string): number | string | null {
  const mdy = MDY.exec(s);
  const iso = mdy ? null : ISO.exec(s);
  if (!mdy && !iso) return null;
  const [y, mo, d] = mdy ? [Number(mdy[3]), Number(mdy[1]), Number(mdy[2])] : [Number(iso![1]), Number(iso![2]), Number(iso![3])];
  const [h, mi, sec] = iso ? [Number(iso[4] ?? 0), Number(iso[5] ?? 0), Number(iso[6] ?? 0)] : [0, 0, 0];
  const problem = calendarError(y, mo, d, h, mi, sec);
  if (problem) return problem;
  const ms = iso?.[7] ? Math.floor(Number(`0.${iso[7]}`) * 1000) : 0;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  let t = new Date(0).setUTCFullYear(y, mo - 1, d) + ((h * 60 + mi) * 60 + sec) * 1000 + ms;
  const zone = iso?.[8];
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const offset = zone.slice(1).replace(':', '');
    const hours = Number(offset.slice(0, 2));
    const minutes = Number(offset.slice(2) || 0);
    if (hours > 23 || minutes > 59) return `${zone} is not a time zone offset`;
    t -= sign * (hours * 60 + minutes) * 60_000;
  }
  return t;
}

/** The ISO form of a date input, or null when it is not a date. Times without a zone are UTC. */
export function normalizeDate(input: unknown): string | null {
  if (input instanceof Date) return Number.isNaN(input.getTime()) ? null : input.toISOString();
  if (typeof input !== 'string') return null;
  if (isCanonicalDate(input)) return input;
  const t = readDate(input.trim());
  if (typeof t !== 'number') return null;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/**
 * Why `normalizeDate` refused `input`: text in a date form that names no day or time says which part does not
 * exist; anything else is told the accepted forms (`got` is how the caller shows the value).
 * @example dateError('2/30/2024', '"2/30/2024"') // '2/30/2024 is not a date: February 2024 has 29 days'
 */
export function dateError(input: unknown, got: string): string {
  const text = typeof input === 'string' ? input.trim() : '';
  const problem = text ? readDate(text) : null;
  return typeof problem === 'string' ? `${text} is not a date: ${problem}` : `expected ${DATE_FORMS}, got ${got}`;
}
