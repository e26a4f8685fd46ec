/**
 * The statements of writes, the journal and the change feed, once for every engine: what differs (how a document is
 * stored and read back, how a field is set at a path, how a JSON array fans out into rows, how the journal's request
 * context is set) is the dialect's (dialect.ts `Storage`). Every value is bound; identifiers come from the caller's
 * quoted table names only.
 */
import type { Step } from '../query/ast.js';
import type { Dialect, JournalContext } from './dialect.js';
import { bound, join, render, sql, type Compiled, type Param, type Sql } from './fragment.js';

/**
 * A documents table as a write names it: its quoted identifier, and a column the layout computes from each document
 * (Citus' `dk`, from the document as JSON), when it has one.
 */
export interface WriteTable {
  readonly name: string;
  readonly computed?: { readonly column: string; value(json: Sql): Sql | string };
}

/** One field a write sets: a checked path and its value. */
export interface PathSet {
  readonly steps: readonly Step[];
  readonly value: unknown;
}

/** The columns and values of a document stored from its JSON text `json`: `id`, the engine's columns, the computed one. */
function row(d: Dialect, t: WriteTable, id: Sql | Param, json: Sql): { columns: string; values: Sql } {
  const c = t.computed;
  const cells: (readonly [string, Sql | string])[] = [['id', sql`${id}`], ...d.stored(json), ...(c ? [[c.column, c.value(json)] as const] : [])];
  return { columns: cells.map(([k]) => k).join(', '), values: join(cells.map(([, v]) => v), ', ') };
}

/**
 * Inserts one document, from its JSON text.
 * @example insertDoc(sqlite, { name: '"docs_Well"' }, doc.id, JSON.stringify(doc)) // INSERT INTO "docs_Well" (id, doc) VALUES (?, jsonb(?))
 */
export function insertDoc(d: Dialect, t: WriteTable, id: unknown, text: string): Compiled {
  return once(d, 'insert', t, id, text, () => {
    const r = row(d, t, bound(id, 'text'), sql`${bound(text, 'text')}`);
    return sql`INSERT INTO ${t.name} (${r.columns}) VALUES (${r.values})`;
  });
}

/**
 * Rewrites the stored document of one id, from its JSON text.
 * @example putDoc(sqlite, { name: '"docs_Well"' }, doc.id, JSON.stringify(doc)) // UPDATE "docs_Well" SET doc = jsonb(?) WHERE id = ?
 */
export function putDoc(d: Dialect, t: WriteTable, id: unknown, text: string): Compiled {
  return once(d, 'put', t, text, id, () => sql`UPDATE ${t.name} SET ${assign(d.stored(sql`${bound(text, 'text')}`))} WHERE id = ${bound(id, 'text')}`);
}

/**
 * A statement of one document whose text depends on the table alone and binds `a` and `b` in that order: kept, it is
 * not rendered per document again (1.4 µs each, a few percent of a bulk load).
 */
function once(d: Dialect, kind: string, t: WriteTable, a: unknown, b: unknown, build: () => Sql): Compiled {
  const key = `${kind}\u0000${t.name}\u0000${t.computed?.column ?? ''}`;
  const known = texts.get(d)?.get(key);
  if (known) return { sql: known, params: [a, b] };
  const c = render(build(), d);
  if (c.params.length === 2 && c.params[0] === a && c.params[1] === b) {
    let byTable = texts.get(d);
    if (!byTable) texts.set(d, (byTable = new Map()));
    byTable.set(key, c.sql);
  }
  return c;
}

/** Texts of one-document statements by dialect, then kind and table (a table's computed column, when it has one, is part of the key). */
const texts = new WeakMap<Dialect, Map<string, string>>();

/**
 * Inserts the documents of a JSON array in its order, one statement for many; `skipConflicts`: a document colliding on
 * a unique key is skipped, and the rows answer the ids that went in.
 * @example insertArray(postgres, table, '[{"id":"W1"}]', false)
 */
export function insertArray(d: Dialect, t: WriteTable, json: string, skipConflicts: boolean): Compiled {
  const e = d.elements(bound(json, 'json'));
  const r = row(d, t, sql`${e.member('id')}`, sql`${e.item}`);
  return render(sql`INSERT INTO ${t.name} (${r.columns}) SELECT ${r.values} FROM ${e.from} ORDER BY ${e.at}${skipConflicts ? ` ${d.skipConflicts}` : ''}`, d);
}

/**
 * Rewrites stored documents with those of a JSON array, each the document of the same id.
 * @example putArray(postgres, table, '[{"id":"W1","name":"A"}]')
 */
export function putArray(d: Dialect, t: WriteTable, json: string): Compiled {
  const e = d.elements(bound(json, 'json'));
  const s = d.stored(sql`${e.item}`);
  return render(sql`UPDATE ${t.name} AS t SET ${assign(s)} FROM ${e.from} WHERE t.id = ${e.member('id')}`, d);
}

/** `column = value, …` of a document's stored columns. */
function assign(cells: readonly (readonly [string, Sql | string])[]): Sql {
  return join(cells.map(([c, v]) => sql`${c} = ${v}`), ', ');
}

/**
 * The stored documents of the rows matching `where`, in insertion order, as rows (seq, id, doc: JSON text); `lock`
 * takes them for the write that follows.
 * @example readDocs(sqlite, table, sql`id = ${bound('W1')}`, false)
 */
export function readDocs(d: Dialect, t: WriteTable, where: Sql | string, lock: boolean): Compiled {
  return render(sql`SELECT seq, id, ${d.docText} AS doc FROM ${t.name} WHERE ${where} ORDER BY seq${lock ? d.lock : ''}`, d);
}

/**
 * A condition on ids: one id, or any of several.
 * @example ids(postgres, ['W1', 'W2']) // id = ANY($1::text[])
 */
export function ids(d: Dialect, values: readonly string[]): Sql {
  return values.length === 1 ? sql`id = ${bound(values[0], 'text')}` : d.anyText('id', values);
}

/**
 * Sets fields (each at its path) and top-level stamps on every row matching `where`.
 * @example updateSet(sqlite, table, where, [{ steps, value: 'A' }], { updatedAt: '2024-05-01T00:00:00.000Z' })
 */
export function updateSet(d: Dialect, t: WriteTable, where: Sql | string, sets: readonly PathSet[], stamps: Readonly<Record<string, unknown>>): Compiled {
  return render(sql`UPDATE ${t.name} SET ${d.setFields(sets, stamps)} WHERE ${where}`, d);
}

/**
 * The id of some row matching `where` where a parent of a path `sets` writes holds a value that is not an object, or no row.
 * @example firstBadParent(sqlite, table, where, sets)
 */
export function firstBadParent(d: Dialect, t: WriteTable, where: Sql | string, sets: readonly PathSet[]): Compiled | null {
  const checks: string[] = [];
  for (const s of sets) {
    for (let i = 1; i < s.steps.length; i++) {
      const type = d.doc.at(d.doc.root, s.steps.slice(0, i)).type;
      checks.push(`(${type} IS NOT NULL AND ${type} <> 'object')`);
    }
  }
  return checks.length ? render(sql`SELECT id FROM ${t.name} WHERE (${where}) AND (${checks.join(' OR ')}) LIMIT 1`, d) : null;
}

/**
 * Deletes every row matching `where` (and `guard`, a condition on nothing of the row).
 * @example deleteWhere(sqlite, table, where, notSoft(sqlite, '"cd_meta"', 'Well'))
 */
export function deleteWhere(d: Dialect, t: WriteTable, where: Sql | string, guard: string | null = null): Compiled {
  return render(guard === null ? sql`DELETE FROM ${t.name} WHERE ${where}` : sql`DELETE FROM ${t.name} WHERE (${where}) AND ${guard}`, d);
}

/**
 * True while the database does not name `type` among those whose deletes are soft (the JSON list in `meta`), read
 * by the statement it stands in, so at once with its own writes.
 * @example notSoft(sqlite, '"cd_meta"', 'Well') // NOT EXISTS (SELECT 1 FROM "cd_meta" AS m WHERE m.key = 'softDelete' AND EXISTS (SELECT 1 FROM json_each(m.value) AS e WHERE e.value = 'Well'))
 */
export function notSoft(d: Dialect, meta: string, type: string): string {
  return `NOT EXISTS (SELECT 1 FROM ${meta} AS m WHERE m.key = 'softDelete' AND ${d.listHas('m.value', type)})`;
}

/**
 * The statements that set the request's context for the journal's triggers, and clear it before the commit (null
 * where it ends with the transaction); `distributed`: the triggers run on the workers of a Citus cluster too.
 * @example context(sqlite, { op: 'update', activity: 'a1', at, ms, by: 'u1' }).set
 */
export function context(d: Dialect, ctx: JournalContext, distributed = false): { set: Compiled; clear: Compiled | null } {
  const c = d.context(ctx, distributed);
  return { set: render(c.set, d), clear: c.clear === null ? null : render(c.clear, d) };
}

/**
 * Change events after seq `after`, oldest first, at most `limit`: of one type and matching `where` when given.
 * Rows (seq, type, op, id, doc: JSON text, activity, at).
 * @example feedRead(sqlite, '"cd_changes"', 0, 100, 'Well', null)
 */
export function feedRead(d: Dialect, changes: string, after: number, limit: number, type: string | null, where: Sql | string | null): Compiled {
  const of = type === null ? '' : sql` AND type = ${bound(type, 'text')}${where === null ? '' : sql` AND (${where})`}`;
  return render(
    sql`SELECT seq, type, op, id, ${d.docText} AS doc, activity, at FROM ${changes} WHERE seq > ${bound(after, d.seqCast)}${of} ORDER BY seq LIMIT ${bound(limit, 'int')}`,
    d,
  );
}

/**
 * The feed's oldest and newest seq (NULLs when empty). One aggregate per subquery: each is a seek at an end of the seq
 * key (both engines), where min and max together scan the table.
 * @example feedBounds('"cd_changes"')
 */
export function feedBounds(changes: string): string {
  return `SELECT (SELECT min(seq) FROM ${changes}) AS first, (SELECT max(seq) FROM ${changes}) AS last`;
}

/**
 * The value of one of the database's own facts (a row of `meta`: key, value), as a row of one column, or none.
 * @example metaValue('"cd_meta"', 'softDelete')
 */
export function metaValue(meta: string, key: 'softDelete'): string {
  return `SELECT value FROM ${meta} WHERE key = '${key}'`;
}
