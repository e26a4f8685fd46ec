/** The schema of a store in SQLite: documents tables, expression indexes, R*Trees and their triggers, created or migrated on open. */
import { createHash } from 'node:crypto';
import { newCursorKey } from '../query/cursor.js';
import type { Catalogue, TypeInfo } from '../catalogue/index.js';
import { fieldExpr } from './dialect.js';
import { literal } from '../sql/fragment.js';
import { indexesOf, type IndexSpec } from '../settings.js';
import { NotAStoreError, type Db } from './connection.js';
import { journalSchema, type JournalOptions } from './journal.js';
import { docsTable, ident, indexName, liveIndexName, rtreeTable, rtreeTrigger } from './names.js';

export interface SchemaOptions {
  /** Unique keys per type (field lists); `id` is always unique. */
  uniqueKeys: Readonly<Record<string, readonly (readonly string[])[]>>;
  /** Plain indexes per type, beyond the unique ones. */
  indexes: Readonly<Record<string, readonly IndexSpec[]>>;
  /** Version history and the change feed (journal.ts); absent: none. */
  journal?: JournalOptions;
  /** Types with soft delete: their unique keys hold among live documents only (the file may name more). */
  softDelete?: readonly string[];
}

/** What a soft-deleted document has and a live one lacks: the term of every partial unique index and live query. */
export const LIVE = `${fieldExpr('deletedAt')} IS NULL`;

/** The JSON expressions of a point's coordinates in a row (`new`, `old`, an alias), and the test that it is one. */
function pointExprs(field: string, row: string) {
  const x = `json_extract(${row}.doc, '$."${field}"."coordinates"[0]')`;
  const y = `json_extract(${row}.doc, '$."${field}"."coordinates"[1]')`;
  const isPoint = `json_type(${row}.doc, '$."${field}"."coordinates"[0]') IN ('integer', 'real') AND json_type(${row}.doc, '$."${field}"."coordinates"[1]') IN ('integer', 'real')`;
  return { x, y, isPoint };
}

function pointTriggers(type: string, field: string): string[] {
  const t = ident(docsTable(type));
  const r = ident(rtreeTable(type, field));
  const add = (row: string) => {
    const { x, y, isPoint } = pointExprs(field, row);
    return `INSERT INTO ${r} SELECT ${row}.rowid, ${x}, ${x}, ${y}, ${y} WHERE ${isPoint};`;
  };
  const d = pointExprs(field, 'd');
  const name = (op: 'ai' | 'au' | 'ad') => ident(rtreeTrigger(type, field, op));
  // Triggers keep the tree in the same transaction as the document, for every connection and process.
  return [
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${r} USING rtree(id, minX, maxX, minY, maxY)`,
    // A tree made for documents already there (a field that became a GeoPoint, a migrated file) starts filled.
    `INSERT INTO ${r} SELECT d.rowid, ${d.x}, ${d.x}, ${d.y}, ${d.y} FROM ${t} AS d WHERE ${d.isPoint} AND NOT EXISTS (SELECT 1 FROM ${r})`,
    `CREATE TRIGGER IF NOT EXISTS ${name('ai')} AFTER INSERT ON ${t} BEGIN ${add('new')} END`,
    `CREATE TRIGGER IF NOT EXISTS ${name('au')} AFTER UPDATE OF doc ON ${t} WHEN json_extract(old.doc, '$."${field}"') IS NOT json_extract(new.doc, '$."${field}"') ` +
      `BEGIN DELETE FROM ${r} WHERE id = old.rowid; ${add('new')} END`,
    `CREATE TRIGGER IF NOT EXISTS ${name('ad')} AFTER DELETE ON ${t} BEGIN DELETE FROM ${r} WHERE id = old.rowid; END`,
  ];
}

/** DDL for one type: documents table, unique and plain expression indexes, an R*Tree per GeoPoint field. */
function typeSchema(info: TypeInfo, opts: SchemaOptions): string[] {
  const t = ident(docsTable(info.name));
  const sql = [`CREATE TABLE IF NOT EXISTS ${t} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc BLOB NOT NULL)`];
  const soft = opts.softDelete?.includes(info.name) ?? false;
  for (const spec of indexesOf(info, opts)) {
    const columns = spec.fields.map(fieldExpr).join(', ');
    if (spec.unique && soft) {
      // A deleted document's key may be used again: the key holds among live documents. The partial index is
      // made first, then the full one (of a file from before soft delete) goes.
      sql.push(`CREATE UNIQUE INDEX IF NOT EXISTS ${ident(liveIndexName(info.name, spec.fields))} ON ${t} (${columns}) WHERE ${LIVE}`);
      sql.push(`DROP INDEX IF EXISTS ${ident(indexName('ux', info.name, spec.fields))}`);
      continue;
    }
    const name = indexName(spec.unique ? 'ux' : 'ix', info.name, spec.fields);
    sql.push(`CREATE ${spec.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(name)} ON ${t} (${columns})`);
  }
  for (const field of info.geoPointFields) sql.push(...pointTriggers(info.name, field));
  return sql;
}

interface SchemaPlan {
  statements: string[];
  fingerprint: string;
}

/** The layout of names and tables this code writes; older files are migrated on open (see migrate). */
const LAYOUT = '2';

const plans = new WeakMap<Catalogue, Map<string, SchemaPlan>>();

/** The DDL for a catalogue and options, built once per process: opening a file again costs one row read. */
function schemaPlan(catalogue: Catalogue, opts: SchemaOptions): SchemaPlan {
  const key = JSON.stringify(opts);
  let byOpts = plans.get(catalogue);
  if (!byOpts) plans.set(catalogue, (byOpts = new Map()));
  let plan = byOpts.get(key);
  if (!plan) {
    const statements = catalogue.names.flatMap((name) => typeSchema(catalogue.resolve(name)!, opts));
    if (opts.journal) statements.push(...journalSchema(catalogue, opts.journal));
    if (opts.softDelete?.length) {
      statements.push(`INSERT INTO cd_meta (key, value) VALUES ('softDelete', ${literal(JSON.stringify(opts.softDelete))}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
    }
    plan = { statements, fingerprint: createHash('sha256').update(`${LAYOUT}\n${statements.join(';\n')}`).digest('hex') };
    if (byOpts.size < 64) byOpts.set(key, plan);
  }
  return plan;
}

function meta(db: Db, key: string): string | undefined {
  return db.prepare(`SELECT value FROM cd_meta WHERE key = ?`).pluck().get(key) as string | undefined;
}

/**
 * The key that signs the store's cursors (src/query/cursor.ts): random, made by the first open of the database and
 * kept in cd_meta, so every connection, thread and process of the file signs alike and cursors outlive a restart.
 * Making it is one small write, once per database.
 */
export function cursorKey(db: Db, seed: number | undefined): Buffer {
  let key = meta(db, 'cursorKey');
  if (key === undefined) {
    // Two openers at once: the first one's key is kept, and both read it back.
    db.prepare(`INSERT INTO cd_meta (key, value) VALUES ('cursorKey', ?) ON CONFLICT (key) DO NOTHING`).run(newCursorKey(seed));
    key = meta(db, 'cursorKey')!;
  }
  return Buffer.from(key, 'base64');
}

/**
 * What the file holds: 'store' (ours, with its fingerprint), 'empty', or a NotAStoreError for a file that is not
 * SQLite or holds tables of someone else's and none of ours: it is refused rather than converted.
 */
function inspect(db: Db, label: string): { fingerprint?: string; layout?: string; softDelete?: string[] } {
  let tables: string[];
  try {
    tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`).pluck().all() as string[];
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') throw new NotAStoreError(`${label} is not a SQLite database`, { cause: e });
    throw e;
  }
  if (tables.length === 0) return {};
  const fingerprint = tables.includes('cd_meta') ? meta(db, 'schema') : undefined;
  if (fingerprint === undefined) {
    const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, … (${tables.length} tables)` : '');
    throw new NotAStoreError(`${label} is not a consolidata store: it holds other tables (${shown}); open a new or empty file instead`);
  }
  return { fingerprint, layout: meta(db, 'layout') ?? '1', softDelete: softDeleteOf(db) };
}

/** The types a store's database names soft (cd_meta). */
export function softDeleteOf(db: Db): string[] {
  const soft = meta(db, 'softDelete');
  return soft ? (JSON.parse(soft) as string[]) : [];
}

/** Layout 1 → 2: R*Trees, their triggers and indexes named from raw identifiers (which could collide) get encoded names. */
function migrate(db: Db): void {
  const objects = db.prepare(`SELECT type, name, tbl_name AS tbl, sql FROM sqlite_master`).all() as { type: string; name: string; tbl: string; sql: string | null }[];
  for (const o of objects) {
    if (o.type === 'trigger' && o.name.startsWith('rtree_')) db.exec(`DROP TRIGGER IF EXISTS ${ident(o.name)}`);
  }
  for (const o of objects) {
    // The new trees are created and filled from the documents by the schema statements that follow.
    if (o.type === 'table' && o.name.startsWith('rtree_') && /USING\s+rtree/i.test(o.sql ?? '')) db.exec(`DROP TABLE IF EXISTS ${ident(o.name)}`);
  }
  for (const o of objects) {
    if (o.type !== 'index' || !o.sql || !/^(ux|ix)_/.test(o.name) || !o.tbl.startsWith('docs_')) continue;
    const fields = fieldsOfIndexSql(o.sql);
    if (!fields.length) continue;
    // Indexes the options no longer list are kept, under their new name, as every index is: never dropped.
    db.exec(`DROP INDEX ${ident(o.name)}`);
    const unique = /^CREATE\s+UNIQUE/i.test(o.sql);
    const name = indexName(unique ? 'ux' : 'ix', o.tbl.slice('docs_'.length), fields);
    db.exec(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(name)} ON ${ident(o.tbl)} (${fields.map(fieldExpr).join(', ')})`);
  }
}

/** The top-level fields an expression index of the store covers, read from its DDL (`json_extract(doc, '$."pwi"')`). */
export function fieldsOfIndexSql(sql: string): string[] {
  // A partial index's WHERE clause (soft delete's live term) is no part of its key.
  const on = sql.replace(/\sWHERE\s[\s\S]*$/i, '');
  return [...on.matchAll(/json_extract\(doc, '\$\."([A-Za-z_][A-Za-z0-9_]*)"'\)/g)].map((m) => m[1]!);
}

const keyCache = new WeakMap<Db, Map<string, readonly string[]>>();

/**
 * The fields of the unique key a constraint error names, read from the file itself, so it is right for every unique
 * index the file has, including ones the options no longer list. `id` for the table's own id constraint.
 */
export function collidingKey(db: Db, error: Error): readonly string[] {
  const name = /index '([^']+)'/.exec(error.message)?.[1];
  if (!name) return ['id'];
  let byName = keyCache.get(db);
  if (!byName) keyCache.set(db, (byName = new Map()));
  let fields = byName.get(name);
  if (!fields) {
    const sql = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`).pluck().get(name) as string | undefined;
    fields = sql ? fieldsOfIndexSql(sql) : [];
    if (!fields.length) fields = ['id'];
    byName.set(name, fields);
  }
  return fields;
}

/** The plan for the options, with soft delete on for the types a database already keeps it for (`kept`) too. */
function planWith(catalogue: Catalogue, opts: SchemaOptions, kept: readonly string[]): { plan: SchemaPlan; soft: string[] } {
  // Soft delete, once on for a type, stays on for every writer of the file: its unique keys are partial.
  const soft = [...new Set([...kept, ...(opts.softDelete ?? [])])].filter((t) => catalogue.resolve(t)).sort();
  return { plan: schemaPlan(catalogue, { ...opts, softDelete: soft }), soft };
}

/**
 * Creates what is missing (never drops an index or a table) after refusing a file that is not a store.
 * A fingerprint of the DDL is kept in the file, so opening an up-to-date file only reads two rows and takes no
 * write lock. Files of an older layout are migrated in the same transaction.
 */
export function ensureSchema(db: Db, catalogue: Catalogue, opts: SchemaOptions, label = 'the database'): { softDelete: ReadonlySet<string> } {
  const found = inspect(db, label);
  const { plan, soft } = planWith(catalogue, opts, found.softDelete ?? []);
  const { statements, fingerprint } = plan;
  const result = { softDelete: new Set(soft) };
  if (found.fingerprint === fingerprint) return result;
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS cd_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    if (found.layout !== undefined && found.layout !== LAYOUT) migrate(db);
    // One exec: ~7% faster than one per statement (87 for the built-in types), SQLite's own DDL work being the rest.
    db.exec(statements.join(';\n'));
    const put = db.prepare(`INSERT INTO cd_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
    put.run('schema', fingerprint);
    put.run('layout', LAYOUT);
  }).immediate();
  return result;
}
