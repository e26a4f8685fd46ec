import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';
import { dateError, normalizeDate } from '../src/catalogue/dates.js';
import { parseRegex } from '../src/query/regex.js';
import { literalPrefix, prefixEnd } from '../src/sql/prefix.js';
import { ids } from './helpers/store.js';

describe('dates', () => {
  it.each([
    ['5/1/2024', '2024-05-01T00:00:00.000Z'],
    ['12/31/1999', '1999-12-31T00:00:00.000Z'],
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['2024-05-01T12:30:00Z', '2024-05-01T12:30:00.000Z'],
    ['2024-05-01T12:30:00.1234Z', '2024-05-01T12:30:00.123Z'],
    ['2024-05-01T12:30:00', '2024-05-01T12:30:00.000Z'],
    ['2024-05-01T12:30:00-05:00', '2024-05-01T17:30:00.000Z'],
    ['2024-05-01T01:00+0130', '2024-04-30T23:30:00.000Z'],
    ['2/29/2024', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    // Years before 100 are years, not 1900 + year.
    ['0024-05-01', '0024-05-01T00:00:00.000Z'],
  ])('normalises %s', (input, iso) => {
    expect(normalizeDate(input)).toBe(iso);
  });

  it.each(['2/30/2024', '13/1/2024', '2023-02-29', 'yesterday', '2024-05-01T25:00:00Z', '', '1714521600', '2024/05/01'])('refuses %j', (input) => {
    expect(normalizeDate(input)).toBeNull();
  });

  it.each([
    ['2/30/2024', 'February 2024 has 29 days'],
    ['2/29/2023', 'February 2023 has 28 days'],
    ['4/31/2024', 'April 2024 has 30 days'],
    ['13/1/2024', 'there is no month 13'],
    ['0/1/2024', 'there is no month 0'],
    ['1/0/2024', 'there is no day 0'],
    [' 2/30/2024 ', 'February 2024 has 29 days'],
    ['2023-02-29', 'February 2023 has 28 days'],
    ['1900-02-29', 'February 1900 has 28 days'],
    ['2024-00-10', 'there is no month 0'],
    ['2024-06-31T08:00', 'June 2024 has 30 days'],
    ['2024-05-01T25:00:00Z', 'there is no hour 25'],
    ['2024-05-01 12:60', 'there is no minute 60'],
    ['2024-05-01T12:30:61.5+02:00', 'there is no second 61'],
    ['2024-02-30T00:00:00.000Z', 'February 2024 has 29 days'],
    ['2024-05-01T12:00:00+24:00', '+24:00 is not a time zone offset'],
  ])('%j in a date form names no instant: "%s"', (input, reason) => {
    expect(normalizeDate(input)).toBeNull();
    expect(dateError(input, JSON.stringify(input))).toBe(`${input.trim()} is not a date: ${reason}`);
  });

  it.each([
    ['yesterday', '"yesterday"'],
    ['2024/05/01', '"2024/05/01"'],
    ['1714521600', '"1714521600"'],
    [20240501, '20240501'],
    [new Date(Number.NaN), 'a Date'],
  ])('%j is not a date at all: the message lists the accepted forms', (input, got) => {
    expect(normalizeDate(input)).toBeNull();
    expect(dateError(input, got)).toBe(`expected a date like 2024-05-01, 5/1/2024 or 2024-05-01T12:00:00Z, got ${got}`);
  });

  it('queries and documents say which date does not exist, at the path of the value', async () => {
    const store = DataStore.open();
    const query = await store.dynamic.query('Well', { spudDate: { gte: '2/30/2024' } });
    expect(query.errors).toMatchObject([{ code: 'INVALID_QUERY', field: 'spudDate.gte' }]);
    expect(query.errors[0]!.message).toBe('query.spudDate.gte: 2/30/2024 is not a date: February 2024 has 29 days');
    const insert = await store.dynamic.insert('Well', [{ pwi: 'W1', spudDate: '2023-02-29' }]);
    expect(insert.errors).toMatchObject([{ code: 'VALIDATION', field: 'spudDate', index: 0 }]);
    expect(insert.errors[0]!.message).toBe('document 0: spudDate: 2023-02-29 is not a date: February 2023 has 28 days');
    expect((await store.query('Well', {})).total).toBe(0);
    store.close();
  });
});

describe('regex', () => {
  const store = DataStore.open();
  beforeAll(async () => {
    await store.insert('Well', [{ pwi: 'A', name: 'a'.repeat(30_000) }, { pwi: 'B', name: 'Smith 1H' }]);
  });
  afterAll(() => store.close());

  it('splits /pattern/flags and refuses unknown flags and RE2-unsupported syntax', () => {
    expect(parseRegex('/^ab/i')).toEqual({ source: '^ab', flags: 'i' });
    expect(parseRegex('plain')).toEqual({ source: 'plain', flags: '' });
    expect(parseRegex('/a/g')).toMatch(/unsupported regex flag "g"/);
    expect(parseRegex('(a)\\1')).toMatch(/invalid regex/);
    expect(parseRegex('(?=a)')).toMatch(/invalid regex/);
  });

  it('reads RE2 syntax, not JavaScript\'s: \\x{…} and short class names, no \\u, \\c or \\C', () => {
    expect(parseRegex('^caf\\x{e9}$')).toEqual({ source: '^caf\\x{e9}$', flags: '' });
    expect(parseRegex('\\p{L}\\p{Greek}')).toEqual({ source: '\\p{L}\\p{Greek}', flags: '' });
    for (const js of ['caf\\u00e9', '\\u{e9}', '\\cA', '\\p{Letter}', '\\C']) expect(parseRegex(js)).toMatch(/^invalid regex/);
  });

  it('answers a catastrophic-backtracking pattern over a long string: RE2 runs in linear time', async () => {
    // A backtracking engine needs ~2^n steps for (a+)+$ against a run of a's followed by a non-match.
    const r = await store.query('Well', { name: { regex: '(a+)+$x' } });
    expect(r.success).toBe(true);
    expect(r.data).toEqual([]);
    expect(await ids(store, 'Well', { name: { regex: '^(a+)+$' } })).toHaveLength(1);
  });

  it('refuses a pattern whose program is past RE2\'s size bound, as INVALID_QUERY', async () => {
    // 2,250 characters, 750,000 instructions: each test of a value would walk them all.
    const r = await store.query('Well', { name: { regex: '(?:ab|cd){1000}'.repeat(150) } });
    expect(r.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: 'name.regex' });
    expect(r.message).toContain('pattern too large');
  });

  it('reports an invalid pattern as INVALID_QUERY naming the path', async () => {
    const r = await store.query('Well', { name: { regex: '(unclosed' } });
    expect(r.errors[0]).toMatchObject({ code: 'INVALID_QUERY', field: 'name.regex' });
    expect(r.message).toContain('query.name.regex');
  });
});

describe('regex literal prefixes', () => {
  it.each([
    ['^Smith 1', '', 'Smith 1'],
    ['^ab*', '', 'a'],
    ['^ab{2}', '', 'a'],
    ['^a.b', '', 'a'],
    ['^a|b', '', ''],
    ['^x(a|b)', '', ''],
    ['^abc', 'i', ''],
    ['^abc', 'm', ''],
    ['abc', '', ''],
    ['^a\\.b', '', 'a'],
  ])('%s with flags %j has prefix %j', (source, flags, prefix) => {
    expect(literalPrefix(source, flags)).toBe(prefix);
  });

  it('ends the range just above every string with the prefix', () => {
    expect(prefixEnd('ab')).toBe('ac');
    expect(prefixEnd('a\u{10ffff}')).toBe('b');
    expect(prefixEnd('\ud7ff')).toBe('\ue000');
  });
});
