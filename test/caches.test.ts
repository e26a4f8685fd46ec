/** Caches keyed by client input are bounded in bytes, not only in entries. */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { heldPositions, inPolygon, polygonHandle } from '../src/geo/polygons.js';
import { heldInstructions, regexTest } from '../src/query/regex.js';
import { StatementCache } from '../src/sqlite/connection.js';

describe('bounded caches', () => {
  it('the statement cache drops the oldest statements past its byte budget, and never keeps one larger than it', () => {
    const db = new Database(':memory:');
    const cache = new StatementCache(db, 500, 10_000);
    for (let i = 0; i < 50; i++) cache.get(`SELECT ${i} AS "${'x'.repeat(900)}"`);
    expect(cache.size.held).toBeLessThanOrEqual(10_000);
    expect(cache.size.entries).toBeLessThan(50);
    const huge = `SELECT 1 AS "${'y'.repeat(20_000)}"`;
    expect(cache.get(huge).pluck().get()).toBe(1);
    expect(cache.size.held).toBeLessThanOrEqual(10_000);
    db.close();
  });

  it('prepared polygons are held up to a budget of positions; the newest stays usable', () => {
    const square = (i: number, n: number) => {
      const ring = Array.from({ length: n }, (_, k) => [i + Math.cos((2 * Math.PI * k) / n) * 0.5, Math.sin((2 * Math.PI * k) / n) * 0.5]);
      return [[...ring, ring[0]!]];
    };
    let last = 0;
    for (let i = 0; i < 200; i++) last = polygonHandle(square(i / 1000, 9_000));
    expect(heldPositions()).toBeLessThanOrEqual(1_000_000);
    expect(inPolygon(last, 0.199, 0)).toBe(1);
  });

  it('compiled regex patterns are held up to a budget of program instructions; the newest stays usable', () => {
    // ~100,000 instructions each, from 1,501 characters: text length says little about a pattern's memory.
    const big = (i: number) => `${i}${'(?:a|b|c){1000}'.repeat(100)}`;
    for (let i = 0; i < 12; i++) regexTest(big(i), '', 'x');
    expect(heldInstructions()).toBeLessThanOrEqual(1_000_000);
    expect(regexTest(big(11), '', `11${'c'.repeat(100_000)}`)).toBe(1);
  });
});
