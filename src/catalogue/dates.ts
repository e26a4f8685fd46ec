/** Date inputs (ISO 8601, YYYY-MM-DD, M/D/YYYY, Date) normalised to ISO 8601 UTC with milliseconds. */

const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const MDY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

export const DATE_FORMS = 'a date like 2024-05-01, 5/1/2024 or 2024-05-01T12:00:00Z';

function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number | null {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(t);
  // Date.UTC rolls 2/30 over to 3/1; a round trip catches impossible days.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return t;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

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
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  if (mo < 1 || mo > 12 || d < 1 || digits(s, 11, 2) > 23 || digits(s, 14, 2) > 59 || digits(s, 17, 2) > 59) return false;
  const leap = mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= DAYS[mo - 1]! + (leap ? 1 : 0);
}

/** The ISO form of a date input, or null when it is not a date. Times without a zone are UTC. */
export function normalizeDate(input: unknown): string | null {
  if (input instanceof Date) return Number.isNaN(input.getTime()) ? null : input.toISOString();
  if (typeof input !== 'string') return null;
  if (isCanonicalDate(input)) return input;
  const s = input.trim();
  let m = MDY.exec(s);
  if (m) {
    const t = utc(Number(m[3]), Number(m[1]), Number(m[2]));
    return t === null ? null : new Date(t).toISOString();
  }
  m = ISO.exec(s);
  if (!m) return null;
  const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  let t = utc(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), ms);
  if (t === null) return null;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || 0);
    if (hours > 23 || minutes > 59) return null;
    t -= sign * (hours * 60 + minutes) * 60_000;
  }
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
