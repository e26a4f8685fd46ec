/** The SQLite side: opening a file or memory, pragmas, SQL functions, the schema (tables, indexes, R*Trees) and a statement cache. */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Catalogue, TypeInfo } from '../catalogue/index.js';
import { docsTable, fieldExpr, ident, rtreeTable } from '../query/compile.js';
import { inPolygon } from '../geo/polygons.js';
import { regexTest } from '../query/regex.js';

export type Db = Database.Database;
export type Statement = Database.Statement;
export type Transaction<F extends (...args: never[]) => unknown> = Database.Transaction<F>;

export interface IndexSpec {
  fields: readonly string[];
  unique?: boolean;
}

export interface SchemaOptions {
  /** Unique keys per type (field lists); `id` is always unique. */
  uniqueKeys: Readonly<Record<string, readonly (readonly string[])[]>>;
  /** Plain indexes per type, beyond the unique ones. */
  indexes: Readonly<Record<string, readonly IndexSpec[]>>;
}

/** A unique index the store made, by name, so a collision can name its key. */
export interface UniqueIndex {
  type: string;
  fields: readonly string[];
}

export function openDatabase(file: string, busyTimeoutMs: number): Db {
  const db = new Database(file);
  if (file !== ':memory:' && file !== '') {
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a commit survives a process crash; an OS crash may lose the last transactions, never corrupt.
    db.pragma('synchronous = NORMAL');
  }
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  db.pragma('foreign_keys = OFF');
  db.function('cd_regexp', { deterministic: true }, regexTest);
  db.function('cd_in_polygon', { deterministic: true }, inPolygon);
  return db;
}

function indexName(prefix: 'ux' | 'ix', type: string, fields: readonly string[]): string {
  return `${prefix}_${type}_${fields.join('_')}`;
}

function pointTriggers(type: string, field: string): string[] {
  const t = ident(docsTable(type));
  const r = ident(rtreeTable(type, field));
  const x = (row: string) => `json_extract(${row}.doc, '$."${field}"."coordinates"[0]')`;
  const y = (row: string) => `json_extract(${row}.doc, '$."${field}"."coordinates"[1]')`;
  const isPoint = (row: string) =>
    `json_type(${row}.doc, '$."${field}"."coordinates"[0]') IN ('integer', 'real') AND json_type(${row}.doc, '$."${field}"."coordinates"[1]') IN ('integer', 'real')`;
  const add = (row: string) => `INSERT INTO ${r} SELECT ${row}.rowid, ${x(row)}, ${x(row)}, ${y(row)}, ${y(row)} WHERE ${isPoint(row)};`;
  const name = (op: string) => ident(`${rtreeTable(type, field)}_${op}`);
  // Triggers keep the tree in the same transaction as the document, for every connection and process.
  return [
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${r} USING rtree(id, minX, maxX, minY, maxY)`,
    `CREATE TRIGGER IF NOT EXISTS ${name('ai')} AFTER INSERT ON ${t} BEGIN ${add('new')} END`,
    `CREATE TRIGGER IF NOT EXISTS ${name('au')} AFTER UPDATE OF doc ON ${t} WHEN json_extract(old.doc, '$."${field}"') IS NOT json_extract(new.doc, '$."${field}"') ` +
      `BEGIN DELETE FROM ${r} WHERE id = old.rowid; ${add('new')} END`,
    `CREATE TRIGGER IF NOT EXISTS ${name('ad')} AFTER DELETE ON ${t} BEGIN DELETE FROM ${r} WHERE id = old.rowid; END`,
  ];
}

/** DDL for one type: documents table, unique and plain expression indexes, an R*Tree per GeoPoint field. */
function typeSchema(info: TypeInfo, opts: SchemaOptions, uniques: Map<string, UniqueIndex>): string[] {
  const t = ident(docsTable(info.name));
  const sql = [`CREATE TABLE IF NOT EXISTS ${t} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, doc BLOB NOT NULL)`];
  const check = (fields: readonly string[], what: string) => {
    for (const f of fields) {
      if (!info.fields.has(f)) throw new RangeError(`${what} of ${info.name} names an unknown field "${f}"`);
    }
    if (fields.length === 0) throw new RangeError(`${what} of ${info.name} has no fields`);
  };
  const covered = new Set<string>();
  const wanted: IndexSpec[] = [
    ...(opts.uniqueKeys[info.name] ?? []).map((fields) => ({ fields, unique: true })),
    ...(opts.indexes[info.name] ?? []),
  ];
  for (const spec of wanted) {
    check(spec.fields, spec.unique ? 'a unique key' : 'an index');
    const name = indexName(spec.unique ? 'ux' : 'ix', info.name, spec.fields);
    if (covered.has(name)) continue;
    covered.add(name);
    covered.add(indexName('ix', info.name, spec.fields.slice(0, 1)));
    if (spec.unique) uniques.set(name, { type: info.name, fields: spec.fields });
    sql.push(`CREATE ${spec.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${ident(name)} ON ${t} (${spec.fields.map(fieldExpr).join(', ')})`);
  }
  for (const field of info.geoPointFields) sql.push(...pointTriggers(info.name, field));
  return sql;
}

interface SchemaPlan {
  statements: string[];
  fingerprint: string;
  uniques: Map<string, UniqueIndex>;
}

const plans = new WeakMap<Catalogue, Map<string, SchemaPlan>>();

/** The DDL for a catalogue and options, built once per process: opening a file again costs one row read. */
function schemaPlan(catalogue: Catalogue, opts: SchemaOptions): SchemaPlan {
  const key = JSON.stringify(opts);
  let byOpts = plans.get(catalogue);
  if (!byOpts) plans.set(catalogue, (byOpts = new Map()));
  let plan = byOpts.get(key);
  if (!plan) {
    const uniques = new Map<string, UniqueIndex>();
    const statements = catalogue.names.flatMap((name) => typeSchema(catalogue.resolve(name)!, opts, uniques));
    plan = { statements, uniques, fingerprint: createHash('sha256').update(statements.join(';\n')).digest('hex') };
    if (byOpts.size < 64) byOpts.set(key, plan);
  }
  return plan;
}

function storedFingerprint(db: Db): string | undefined {
  try {
    return db.prepare(`SELECT value FROM cd_meta WHERE key = 'schema'`).pluck().get() as string | undefined;
  } catch {
    return undefined; // a new file: no meta table yet
  }
}

/**
 * Creates what is missing (never drops anything) and returns the unique indexes by name.
 * A fingerprint of the DDL is kept in the file, so opening an up-to-date file only reads one row
 * and takes no write lock.
 */
export function ensureSchema(db: Db, catalogue: Catalogue, opts: SchemaOptions): Map<string, UniqueIndex> {
  const { statements, fingerprint, uniques } = schemaPlan(catalogue, opts);
  if (storedFingerprint(db) === fingerprint) return uniques;
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS cd_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    for (const s of statements) db.exec(s);
    db.prepare(`INSERT INTO cd_meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(fingerprint);
  }).immediate();
  return uniques;
}

/** Prepared statements by SQL text, so repeated requests skip the SQL parser; the oldest is dropped past `max`. */
export class StatementCache {
  private readonly map = new Map<string, Statement>();
  constructor(
    private readonly db: Db,
    private readonly max = 500,
  ) {}

  get(sql: string): Statement {
    let s = this.map.get(sql);
    if (s) return s;
    s = this.db.prepare(sql);
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value!);
    this.map.set(sql, s);
    return s;
  }
}
