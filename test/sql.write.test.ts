/** The write statements of the one SQL compiler: each dialect's text and values, then run on SQLite. */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePlan } from '../src/query/parse.js';
import { resolveSettings } from '../src/settings.js';
import { compileWhere } from '../src/sql/compile.js';
import { bound, sql } from '../src/sql/fragment.js';
import { context, deleteWhere, feedRead, firstBadParent, ids, insertArray, insertDoc, notSoft, putArray, putDoc, readDocs, updateSet } from '../src/sql/write.js';
import { postgres } from '../src/postgres/dialect.js';
import { sqlite } from '../src/sqlite/dialect.js';
import { SqliteBackend } from '../src/sqlite/backend.js';

const settings = resolveSettings({}, 'test');
const ctx = { type: settings.catalogue.resolve('Well')!, strict: true };
const where = (query: unknown) => compileWhere(sqlite, parsePlan(ctx, query, null).conditions, { type: 'Well', tree: true });
const table = { name: '"docs_Well"' };
const step = (name: string) => ({ name, indexes: [] });

describe('write statements, as each dialect writes them', () => {
  it('an insert binds the id and the JSON text once, each engine storing it in its columns', () => {
    expect(insertDoc(sqlite, table, 'W1', '{"id":"W1"}')).toEqual({ sql: 'INSERT INTO "docs_Well" (id, doc) VALUES (?, jsonb(?))', params: ['W1', '{"id":"W1"}'] });
    expect(insertDoc(postgres, table, 'W1', '{"id":"W1"}')).toEqual({
      sql: 'INSERT INTO "docs_Well" (id, doc, body) VALUES ($1::text, $2::text::jsonb, $2::text::text)',
      params: ['W1', '{"id":"W1"}'],
    });
  });

  it('one document is rewritten by its id, the text bound before the id', () => {
    expect(putDoc(sqlite, table, 'W1', '{"id":"W1"}')).toEqual({ sql: 'UPDATE "docs_Well" SET doc = jsonb(?) WHERE id = ?', params: ['{"id":"W1"}', 'W1'] });
    expect(putDoc(postgres, table, 'W1', '{"id":"W1"}')).toEqual({ sql: 'UPDATE "docs_Well" SET doc = $1::text::jsonb, body = $1::text::text WHERE id = $2::text', params: ['{"id":"W1"}', 'W1'] });
  });

  it("a layout's computed column goes last, from the same bound document", () => {
    const citus = { name: '"docs_Well"', computed: { column: 'dk', value: (j: unknown) => sql`(${j as string}::json ->> 'id')` } };
    expect(insertDoc(postgres, citus, 'W1', '{}').sql).toBe(`INSERT INTO "docs_Well" (id, doc, body, dk) VALUES ($1::text, $2::text::jsonb, $2::text::text, ($2::text::json ->> 'id'))`);
  });

  it('many documents go in one statement from one bound JSON array, in its order; skipping conflicts answers the ids written', () => {
    expect(insertArray(postgres, table, '[]', true)).toEqual({
      sql: `INSERT INTO "docs_Well" (id, doc, body) SELECT (e.j ->> 'id'), e.j::jsonb, e.j::text FROM json_array_elements($1::json) WITH ORDINALITY AS e(j, n) ORDER BY e.n ON CONFLICT DO NOTHING RETURNING id`,
      params: ['[]'],
    });
    expect(putArray(postgres, table, '[]').sql).toBe(`UPDATE "docs_Well" AS t SET doc = e.j::jsonb, body = e.j::text FROM json_array_elements($1::json) WITH ORDINALITY AS e(j, n) WHERE t.id = (e.j ->> 'id')`);
  });

  it('an update sets every path and stamp, values bound before the conditions', () => {
    const w = where({ pwi: 'W1' });
    const sets = [{ steps: [step('wellName')], value: 'A' }, { steps: [step('location'), step('county')], value: 'Kern' }];
    expect(updateSet(sqlite, table, w, sets, { updatedAt: 'T' })).toEqual({
      sql: `UPDATE "docs_Well" SET doc = jsonb_set(doc, '$."wellName"', json(?), '$."location"."county"', json(?), '$."updatedAt"', json(?)) WHERE json_extract(doc, '$."pwi"') = ?`,
      params: ['"A"', '"Kern"', '"T"', 'W1'],
    });
    // PostgreSQL sets top-level fields in SQL (one bound object); a dotted path is the backend's to rewrite.
    const pg = updateSet(postgres, table, compileWhere(postgres, parsePlan(ctx, { pwi: 'W1' }, null).conditions, { type: '', tree: true }), sets.slice(0, 1), { updatedAt: 'T' });
    expect(pg.params).toEqual(['{"wellName":"A","updatedAt":"T"}', 'W1']);
    expect(pg.sql).toMatch(/^UPDATE "docs_Well" SET body = \(SELECT .* doc = doc \|\| \$1::text::jsonb WHERE .* = \$2::text$/);
    expect(() => updateSet(postgres, table, 'true', sets, {})).toThrow(TypeError);
  });

  it('a dotted path checks its parents first; top-level fields need no check', () => {
    const sets = [{ steps: [step('location'), step('county')], value: 'Kern' }];
    expect(firstBadParent(sqlite, table, where({ pwi: 'W1' }), sets)).toEqual({
      sql: `SELECT id FROM "docs_Well" WHERE (json_extract(doc, '$."pwi"') = ?) AND ((json_type(doc, '$."location"') IS NOT NULL AND json_type(doc, '$."location"') <> 'object')) LIMIT 1`,
      params: ['W1'],
    });
    expect(firstBadParent(sqlite, table, '1', [{ steps: [step('wellName')], value: 1 }])).toBeNull();
  });

  it('a delete guarded by soft delete removes nothing of a type the list names, by exact name, case and all', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE cd_meta (key TEXT PRIMARY KEY, value TEXT); CREATE TABLE "docs_A_B" (id TEXT); INSERT INTO "docs_A_B" VALUES ('x')`);
    const remove = (type: string) => {
      const { sql: text, params } = deleteWhere(sqlite, { name: '"docs_A_B"' }, '1', notSoft(sqlite, 'cd_meta', type));
      return db.prepare(text).run(...params).changes;
    };
    db.exec(`INSERT INTO cd_meta VALUES ('softDelete', '["AxB","a_b","Well"]')`);
    expect(remove('A_B')).toBe(1);
    db.exec(`INSERT INTO "docs_A_B" VALUES ('x'); UPDATE cd_meta SET value = '["A_B"]'`);
    expect(remove('A_B')).toBe(0);
    // PostgreSQL's test holds no backslash: it parses whatever standard_conforming_strings says.
    expect(notSoft(postgres, '"s"."cd_meta"', "O'Well")).toBe(`NOT EXISTS (SELECT 1 FROM "s"."cd_meta" AS m WHERE m.key = 'softDelete' AND (m.value)::jsonb ? 'O''Well')`);
    db.close();
  });

  it("the journal's request context: bound on SQLite and cleared before the commit; a literal on PostgreSQL, ending with the transaction, propagated to Citus' workers", () => {
    const c = { op: 'update', activity: 'a1', at: '2024-05-01T00:00:00.000Z', ms: 1714521600000, by: "o'brien" };
    expect(context(sqlite, c).set).toEqual({
      sql: 'UPDATE cd_context SET op = ?, activity = ?, at = ?, ms = ?, by = ? WHERE k = 1',
      params: ['update', 'a1', '2024-05-01T00:00:00.000Z', 1714521600000, "o'brien"],
    });
    expect(context(sqlite, c).clear?.sql).toMatch(/^UPDATE cd_context SET op = NULL/);
    const pg = context(postgres, c);
    const literal = `'${JSON.stringify(c).replace(/'/g, "''")}'`;
    expect(pg.set).toEqual({ sql: `SET LOCAL consolidata.ctx = ${literal}`, params: [] });
    expect(pg.clear).toBeNull();
    // On Citus the workers' triggers read it too: the transaction propagates its SET LOCALs to them.
    expect(context(postgres, c, true).set).toEqual({ sql: `SET LOCAL citus.propagate_set_commands = 'local'; SET LOCAL consolidata.ctx = ${literal}`, params: [] });
  });

  it('the feed reads events after a seq, of a type and its conditions when given', () => {
    expect(feedRead(postgres, '"cd_changes"', 5, 100, 'Well', sql`x = ${bound('y', 'text')}`)).toEqual({
      sql: 'SELECT seq, type, op, id, body AS doc, activity, at FROM "cd_changes" WHERE seq > $1::bigint AND type = $2::text AND (x = $3::text) ORDER BY seq LIMIT $4::int',
      params: [5, 'Well', 'y', 100],
    });
    expect(feedRead(sqlite, '"cd_changes"', 5, 100, null, null)).toEqual({
      sql: 'SELECT seq, type, op, id, json(doc) AS doc, activity, at FROM "cd_changes" WHERE seq > ? ORDER BY seq LIMIT ?',
      params: [5, 100],
    });
  });
});

describe('write statements, run', () => {
  let backend: SqliteBackend | undefined;
  afterEach(() => backend?.close());

  it('insert, rewrite, read back and delete documents on SQLite', () => {
    backend = new SqliteBackend(':memory:', settings);
    const db = backend.database;
    const run = (c: { sql: string; params: unknown[] }) => db.prepare(c.sql).run(...c.params);
    const read = (c: { sql: string; params: unknown[] }) => db.prepare(c.sql).all(...c.params) as { seq: number; id: string; doc: string }[];
    run(insertDoc(sqlite, table, 'W1', '{"id":"W1","pwi":"P1"}'));
    run(insertArray(sqlite, table, '[{"id":"W3","pwi":"P3"},{"id":"W2","pwi":"P2"}]', false));
    // Rows keep the array's order.
    expect(read(readDocs(sqlite, table, '1', false)).map((r) => r.id)).toEqual(['W1', 'W3', 'W2']);
    expect(run(putArray(sqlite, table, '[{"id":"W2","pwi":"P9"},{"id":"W1","pwi":"P7"}]')).changes).toBe(2);
    expect(run(putDoc(sqlite, table, 'W1', '{"id":"W1","pwi":"P8"}')).changes).toBe(1);
    expect(read(readDocs(sqlite, table, ids(sqlite, ['W1', 'W2']), false)).map((r) => JSON.parse(r.doc))).toEqual([
      { id: 'W1', pwi: 'P8' },
      { id: 'W2', pwi: 'P9' },
    ]);
    expect(run(deleteWhere(sqlite, table, where({ pwi: 'P8' }))).changes).toBe(1);
    expect(read(readDocs(sqlite, table, '1', false)).map((r) => r.id)).toEqual(['W3', 'W2']);
  });
});
