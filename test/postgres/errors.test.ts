/** Which engine errors are a unique key's collision, and which of the store's indexes they name (one node and Citus). */
import { describe, expect, it } from 'vitest';
import { indexOfShard, uniqueViolation } from '../../src/postgres/errors.js';

const known = new Map<string, readonly string[]>([
  ['ux._well.id', ['id']],
  ['ux._well.pwi', ['pwi']],
  ['ux._daily_production.pwi.prod_date.a_rather_long_name_of_a_unique_key_on_it', ['pwi', 'prodDate']],
]);

describe('uniqueViolation', () => {
  it("names PostgreSQL's index (23505 with its constraint field)", () => {
    expect(uniqueViolation({ code: '23505', constraint: 'ux._well.pwi', message: 'duplicate key value violates unique constraint "ux._well.pwi"' })).toEqual({ index: 'ux._well.pwi' });
  });

  it('reads the index from the message when a relayed 23505 has no constraint field, and from an XX000 of the COPY path', () => {
    const message = 'duplicate key value violates unique constraint "ux._well.pwi_102010"';
    expect(uniqueViolation({ code: '23505', message })).toEqual({ index: 'ux._well.pwi_102010' });
    expect(uniqueViolation({ code: 'XX000', message })).toEqual({ index: 'ux._well.pwi_102010' });
  });

  it('is undefined for any other error, an XX000 included', () => {
    expect(uniqueViolation({ code: 'XX000', message: 'cannot push down this subquery' })).toBeUndefined();
    expect(uniqueViolation({ code: '23503', message: 'foreign key' })).toBeUndefined();
    expect(uniqueViolation(new Error('duplicate key value violates unique constraint "x"'))).toBeUndefined();
    expect(uniqueViolation(null)).toBeUndefined();
  });
});

describe('indexOfShard', () => {
  it("answers a known name as is, and a shard's name (id suffix, or truncated with a hash) as its index", () => {
    expect(indexOfShard('ux._well.pwi', known)).toBe('ux._well.pwi');
    expect(indexOfShard('ux._well.pwi_102010', known)).toBe('ux._well.pwi');
    expect(indexOfShard('ux._daily_production.pwi.prod_date.a_rather_long_name_of_a_uni_-1234567_102019', known)).toBe(
      'ux._daily_production.pwi.prod_date.a_rather_long_name_of_a_unique_key_on_it',
    );
    expect(indexOfShard('someone_else', known)).toBe('someone_else');
  });
});
