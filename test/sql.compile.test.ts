/** The one SQL compiler: a condition compiles once, each dialect writes it; fragments carry their values with their text. */
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../src/query/parse.js';
import { resolveSettings } from '../src/settings.js';
import { compileWhere, sortShape } from '../src/sql/compile.js';
import { bound, render, sql } from '../src/sql/fragment.js';
import { postgres } from '../src/postgres/dialect.js';
import { sqlite } from '../src/sqlite/dialect.js';

const settings = resolveSettings({}, 'test');
const ctx = { type: settings.catalogue.resolve('Well')!, strict: true };
const plan = (query: unknown, options: unknown = null) => parsePlan(ctx, query, options);
// Fields outside the catalogue: paths that may cross arrays.
const loose = (query: unknown) => parsePlan({ ...ctx, strict: false }, query, null).conditions;

describe('fragments', () => {
  it('a value used twice binds once per use with `?`, and once in all with numbered placeholders', () => {
    const p = bound('W1', 'text');
    const f = sql`a = ${p} OR b = ${p}`;
    expect(render(f, sqlite)).toEqual({ sql: 'a = ? OR b = ?', params: ['W1', 'W1'] });
    expect(render(f, postgres)).toEqual({ sql: 'a = $1::text OR b = $1::text', params: ['W1'] });
  });

  it('a fragment rendered into a statement numbers its values after those already bound', () => {
    const into: unknown[] = [7];
    expect(render(sql`x = ${bound(8, 'int')}`, postgres, into)).toEqual({ sql: 'x = $2::int', params: [7, 8] });
  });
});

describe('one compiler, two dialects', () => {
  it('an equality on a string field: the canonical expression of each engine, the value bound', () => {
    const conditions = plan({ pwi: 'W1' }).conditions;
    expect(render(compileWhere(sqlite, conditions, { type: 'Well', tree: true }), sqlite)).toEqual({ sql: `json_extract(doc, '$."pwi"') = ?`, params: ['W1'] });
    expect(render(compileWhere(postgres, conditions, { type: 'Well', tree: true }), postgres)).toEqual({ sql: `((doc ->> 'pwi') COLLATE "C") = $1::text`, params: ['W1'] });
  });

  it('a path through arrays tests the leaf directly and every fanned-out value, binding its operand for each test on SQLite', () => {
    const { sql: text, params } = render(compileWhere(sqlite, loose({ 'tags.0': 'x' }), { type: 'Well', tree: true }), sqlite);
    expect(text).toContain('ELSE EXISTS (SELECT 1 FROM (');
    expect(params).toEqual(['x', 'x']);
    const pg = render(compileWhere(postgres, loose({ 'tags.0': 'x' }), { type: 'Well', tree: true }), postgres);
    expect(pg.params).toEqual(['"x"']);
    expect(pg.sql.match(/\$1::jsonb/g)).toHaveLength(2);
  });

  it('a keyset page after a scalar sort key seeks on the field, then ties by insertion order', () => {
    const p = plan({}, { sortBy: 'fracStages', sortOrder: 1 });
    const after = sortShape(sqlite, p.sort).after({ rank: 1, key: 3, seq: 9, total: 20 });
    const x = `json_extract(doc, '$."fracStages"')`;
    expect(render(after, sqlite)).toEqual({ sql: `(${x} >= ? AND (${x} > ? OR rowid > ?))`, params: [3, 3, 9] });
    const pg = render(sortShape(postgres, p.sort).after({ rank: 1, key: 3, seq: 9, total: 20 }), postgres);
    expect(pg.params).toEqual([3, 9]);
    expect(pg.sql).toMatch(/^\(.* >= \$1::numeric AND \(.* > \$1::numeric OR seq > \$2::bigint\)\)$/);
  });
});
