/**
 * The PostgreSQL backend: the shared SQL backend (src/sql/backend.ts) over a pool of node-postgres clients (driver.ts),
 * each request one transaction (or one statement, which is one), plans compiled by compile.ts. Its own strategies:
 * inserts in chunks, dotted updates rewritten in JS, conditions SQL cannot decide (#inJs)
 * decided in JS, LISTEN. Documents live in `doc jsonb` (queries, indexes) and `body text` (the exact
 * JSON text, answered as is). Writes run under READ COMMITTED with row locks (`FOR UPDATE`; on Citus a no-op UPDATE,
 * see #locked) on what they rewrite, so concurrent writers never lose an update; deadlocks and serialization failures
 * are run again whole.
 */
import type { TypeInfo } from '../catalogue/index.js';
import { put, isPlainObject } from '../catalogue/validate.js';
import {
  duplicateError,
  parentNotObject,
  Steer,
  StoreBusyError,
  type Backend,
  type BulkWriter,
  type FieldSet,
  type InsertResult,
  type ReplaceResult,
  type StoredDoc,
  type ChangeFeed,
  type Journal,
  type RowStream,
} from '../backend.js';
import { CHANGES_CHANNEL, CHANGES_TABLE, feedLock, schemaLock } from './journal.js';
import { requestError, RequestError, type EnvelopeError } from '../envelope.js';
import { inPolygon, polygonHandle } from '../geo/polygons.js';
import type { Condition, QueryPlan } from '../query/ast.js';
import { newCursorKey } from '../query/cursor.js';
import { equalsSome } from '../query/values.js';
import type { Settings } from '../settings.js';
import { compileWhere, selectStatement, type PgSelect } from './compile.js';
import { POSTGRES_SUMMARY } from './aggregate.js';
import { coordText, fieldExpr, orderedOnPath, postgres, toPostgres, unstorable } from './dialect.js';
import { bound, join, sql, type Compiled, type Sql } from '../sql/fragment.js';
import { insertArray, insertDoc, metaValue, putArray, type WriteTable } from '../sql/write.js';
import { call, SqlBackend, type Matches, type Materialize, type Op, type PageColumns, type PageRows, type WriteSpec } from '../sql/backend.js';
import { ATTEMPTS, PgDriver, refused, requestErrorOf, Session, sqlState, UNDEFINED_TABLE, type PgClientLike, type PgPoolLike, type Row } from './driver.js';

export { requestErrorOf, type PgClientLike, type PgPoolLike };
import { docsTable, key, META_TABLE, qualified } from './names.js';
import { HAS_CITUS, noCitus } from './citus.js';
import { uniqueViolation } from './errors.js';
import { fieldsOfIndexDef, LAYOUT, liveTerm, schemaPlan, uniqueKeysOf, type PgSchemaOptions } from './schema.js';

/** Bytes of JSON text per INSERT statement: large requests go in several statements of one transaction. */
const CHUNK_CHARS = 8 * 1024 * 1024;
const CHUNK_DOCS = 5000;

/** An insert run as one statement met a collision (and wrote nothing): it goes again in a transaction. */
class Collided extends Steer {}

/** In a document's JSON text, the escapes of what PostgreSQL text cannot hold (or a backslash that looks like one). */
const SUSPECT = /\\u0000|\\ud[89a-f]/i;

/** Splits documents into INSERT-sized runs of their JSON texts. */
function chunks<T>(items: readonly T[], text: (t: T) => string): { items: T[]; json: string }[] {
  const out: { items: T[]; json: string }[] = [];
  let cur: T[] = [];
  let parts: string[] = [];
  let size = 0;
  for (const item of items) {
    const t = text(item);
    if (cur.length && (size + t.length > CHUNK_CHARS || cur.length >= CHUNK_DOCS)) {
      out.push({ items: cur, json: `[${parts.join(',')}]` });
      cur = [];
      parts = [];
      size = 0;
    }
    cur.push(item);
    parts.push(t);
    size += t.length + 1;
  }
  if (cur.length) out.push({ items: cur, json: `[${parts.join(',')}]` });
  return out;
}

export interface PostgresBackendOptions {
  /** The schema holding the store's tables (created if missing). */
  readonly schema: string;
  /** End the pool on close (true when the store made it from a connection string). */
  readonly ownsPool: boolean;
  /**
   * True when every connection of the pool already has `lock_timeout` set (the store's own pool sets it at connect);
   * otherwise each write transaction sets it.
   */
  readonly lockTimeoutSet: boolean;
  /** Citus layout (see citus.ts), or none. */
  readonly distribution?: PgSchemaOptions['distribution'];
}

/**
 * A Backend over PostgreSQL; `openPostgres` (index.ts) is how applications get one.
 * @example const backend = await PostgresBackend.open(pool, settings, { schema: 'public', ownsPool: false, lockTimeoutSet: false });
 */
export class PostgresBackend extends SqlBackend<Session, false> implements Backend {
  readonly capabilities = { cursors: true, stream: false, bulk: true, feed: true };
  protected readonly dialect = postgres;
  protected readonly changesTable: string;
  protected readonly metaTable: string;
  protected readonly schemaHeld: readonly string[];
  readonly #driver: PgDriver;
  readonly #pool: PgPoolLike;
  readonly #settings: Settings;
  readonly #options: PostgresBackendOptions;
  #schemaOptions: PgSchemaOptions;
  readonly #tables = new Map<string, string>();
  /** Per table, every field some unique index covers: a replace that changes none of them cannot collide. */
  readonly #uniqueFields = new Map<string, Set<string>>();
  /** Notifications of anyone's change events (LISTEN): with this store's commits, the feed's version. */
  #notified = 0;
  /** See Backend.cursorKey: read (or made) at open, from the schema's cd_meta. */
  cursorKey: Uint8Array = new Uint8Array();
  /** The connection LISTENing to change events, once a watch asked for the feed's version. */
  #listener: Promise<PgClientLike | null> | undefined;

  private constructor(pool: PgPoolLike, settings: Settings, options: PostgresBackendOptions) {
    super(settings);
    this.#pool = pool;
    this.#driver = new PgDriver(pool, { schema: options.schema, lockTimeoutSet: options.lockTimeoutSet, busyTimeoutMs: settings.busyTimeoutMs });
    this.changesTable = qualified(options.schema, CHANGES_TABLE);
    this.metaTable = qualified(options.schema, META_TABLE);
    this.schemaHeld = [`SELECT pg_advisory_xact_lock_shared(${schemaLock(options.schema)})`];
    this.#settings = settings;
    this.#options = options;
    this.#schemaOptions = {
      uniqueKeys: settings.uniqueKeys,
      indexes: settings.indexes,
      distribution: options.distribution,
      journal: { history: settings.history, changeFeed: settings.changeFeed, changeRetention: settings.changeRetention, distributed: !!options.distribution },
    };
    for (const n of settings.catalogue.names) this.#tables.set(n, qualified(options.schema, docsTable(n)));
  }

  /**
   * Checks the server (UTF8), creates what the schema lacks (never drops anything) and reads its unique indexes.
   * @example const backend = await PostgresBackend.open(pool, resolveSettings({}, 'open'), { schema: 'public', ownsPool: true, lockTimeoutSet: true });
   */
  static async open(pool: PgPoolLike, settings: Settings, options: PostgresBackendOptions): Promise<PostgresBackend> {
    const backend = new PostgresBackend(pool, settings, options);
    await backend.#driver.client(async (s) => {
      const [[encoding]] = (await s.rows('SHOW server_encoding')) as [[string]];
      // Byte order of strings and code-point regexes hold only for UTF-8 text.
      if (encoding !== 'UTF8') throw new Error(`openPostgres: the database encoding is ${encoding}; the store needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8')`);
      await backend.#ensureSchema(s);
      backend.cursorKey = await backend.#cursorKey(s);
      await backend.#readUniqueIndexes(s);
      const [[journals]] = (await s.rows(
        `SELECT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1::text AND t.tgname LIKE 'jr.%')`,
        [options.schema],
      )) as [[boolean]];
      backend.journals = journals;
    }).catch((e: unknown) => {
      // Opening, the driver's own words name what is wrong (host, port, database): they are the operator's to read.
      throw e instanceof RequestError && e.errors[0]?.code === 'UNAVAILABLE' && e.cause instanceof Error ? e.cause : e;
    });
    return backend;
  }

  /** The schema's tables and indexes: created in one transaction under an advisory lock when the fingerprint differs. */
  async #ensureSchema(s: Session): Promise<void> {
    const { schema } = this.#options;
    const meta = qualified(schema, META_TABLE);
    if (this.#options.distribution && !(await s.rows(HAS_CITUS))[0]![0]) throw noCitus(schema);
    const [exists] = await s.rows('SELECT to_regclass($1::text) IS NOT NULL', [meta]);
    // Soft delete, once on for a type, stays on for every store of the schema: its unique keys are partial.
    const kept = exists?.[0] ? ((await s.rows(metaValue(meta, 'softDelete')))[0]?.[0] as string | undefined) : undefined;
    const soft = [...new Set([...(kept ? (JSON.parse(kept) as string[]) : []), ...this.#settings.softDelete])].filter((t) => this.#settings.catalogue.resolve(t)).sort();
    this.keepSoft(soft);
    this.#schemaOptions = { ...this.#schemaOptions, softDelete: soft };
    const { statements, fingerprint } = schemaPlan(schema, this.#settings.catalogue, this.#schemaOptions);
    const current = async () => {
      const [exists] = await s.rows('SELECT to_regclass($1::text) IS NOT NULL', [meta]);
      if (!exists?.[0]) return undefined;
      return (await s.rows(`SELECT value FROM ${meta} WHERE key = 'schema'`))[0]?.[0];
    };
    if ((await current()) === fingerprint) return;
    // A new index waits for every transaction writing its table: each wait is bounded as a write's is, and the whole
    // change runs again as a write does (it changed nothing), then gives up saying so.
    const ms = Math.max(0, Math.floor(this.#settings.busyTimeoutMs));
    await this.#driver.run(
      this.retried(
        async () => {
          await this.#driver.begin(s, 'write', []);
          try {
            // Two processes opening one new schema at once: the second waits, then finds it made.
            await s.rows(`SELECT pg_advisory_xact_lock(${schemaLock(schema)})`);
            if ((await current()) !== fingerprint) {
              // Citus forwards a statement's text to the workers: one statement each, not the whole script.
              if (this.#options.distribution) for (const statement of statements) await s.exec(statement);
              else await s.exec(statements.join(';\n'));
              await s.rows(`INSERT INTO ${meta} (key, value) VALUES ('schema', $1::text), ('layout', $2::text) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [fingerprint, LAYOUT]);
            }
            await s.exec('COMMIT');
          } catch (e) {
            await s.exec('ROLLBACK').catch(() => undefined);
            throw e;
          }
        },
        () => new StoreBusyError(`openPostgres: another connection held a lock on the store's tables through ${ATTEMPTS} waits of ${ms} ms while the schema was being brought up to date; nothing was changed: open it again, or with a larger busyTimeoutMs`),
      ),
    );
  }

  /** The schema's cursor key, made by the first open (ON CONFLICT: two openers at once keep the first one's). */
  async #cursorKey(s: Session): Promise<Buffer> {
    const meta = qualified(this.#options.schema, META_TABLE);
    const read = async () => (await s.rows(`SELECT value FROM ${meta} WHERE key = 'cursorKey'`))[0]?.[0] as string | undefined;
    let key = await read();
    if (key === undefined) {
      await s.rows(`INSERT INTO ${meta} (key, value) VALUES ('cursorKey', $1::text) ON CONFLICT (key) DO NOTHING`, [newCursorKey(this.#settings.idSeed)]);
      key = (await read())!;
    }
    return Buffer.from(key, 'base64');
  }

  /** Every unique index of the store's tables, as fields (for DUPLICATE_KEY and for replace). */
  async #readUniqueIndexes(s: Session): Promise<void> {
    const rows = await s.rows(
      `SELECT t.relname, i.relname, pg_get_indexdef(x.indexrelid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid ` +
        `JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = $1::text AND x.indisunique`,
      [this.#options.schema],
    );
    for (const [table, index, def] of rows as [string, string, string][]) {
      const fields = fieldsOfIndexDef(def);
      if (!fields.length) continue;
      this.#driver.keyOfIndex.set(index, fields);
      const q = qualified(this.#options.schema, table);
      let set = this.#uniqueFields.get(q);
      if (!set) this.#uniqueFields.set(q, (set = new Set()));
      for (const f of fields) set.add(f);
    }
  }

  /**
   * The WHERE clause of conditions. On a Citus layout, a condition fixing the distribution field by equality also
   * fixes `dk` (a superset: a document without the field has its id there), so Citus runs the statement on one shard.
   */
  #where(info: TypeInfo, conditions: readonly Condition[]): Sql | string {
    const where = compileWhere(conditions, this.#settings.keyed.get(info.name) ?? new Set(), (c) => this.#inJs(c));
    const field = this.#options.distribution?.get(info.name)?.field;
    if (!field) return where;
    for (const c of conditions) {
      if (c.path.text !== field || !c.path.scalar) continue;
      if (c.op === 'eq' && typeof c.value === 'string') return sql`dk = ${bound(c.value, 'text')} AND ${where}`;
      if (c.op === 'in' && c.values.length && c.values.every((v) => typeof v === 'string')) return sql`dk = ANY(${bound(c.values, 'text[]')}) AND ${where}`;
    }
    return where;
  }

  /** The distribution key of a document as the database computes it (#dkExpr), or undefined without Citus layout. */
  #dkOf(info: TypeInfo, doc: StoredDoc): string | undefined {
    const field = this.#options.distribution?.get(info.name)?.field;
    if (!field) return undefined;
    const v = doc[field];
    return typeof v === 'string' ? v : v === null || v === undefined ? (doc.id as string) : JSON.stringify(v);
  }

  /** Citus cannot move a row to another shard: a write changing a document's distribution field is refused. */
  protected keepShard(info: TypeInfo, before: StoredDoc, after: StoredDoc, index?: number): void {
    if (this.#dkOf(info, before) === this.#dkOf(info, after)) return;
    const field = this.#options.distribution!.get(info.name)!.field;
    const where = index === undefined ? 'body' : `document ${index}`;
    throw requestError('VALIDATION', `${where}: ${field} distributes ${info.name} over the shards (Citus layout) and cannot change; delete the document and insert it anew`, {
      field,
      ...(index === undefined ? {} : { index }),
    });
  }

  #table(info: TypeInfo): string {
    return this.#tables.get(info.name) ?? qualified(this.#options.schema, docsTable(info.name));
  }

  /** The table as writes name it: with the distribution column computed from each document on a Citus layout. */
  #writeTable(info: TypeInfo): WriteTable {
    const name = this.#table(info);
    return this.#options.distribution?.get(info.name) ? { name, computed: { column: 'dk', value: (j) => this.#dkExpr(info, sql`(${j})::json`) } } : { name };
  }

  /**
   * The rows a write rewrites, locked to its commit: `SELECT … FOR UPDATE` in seq order on one node; on Citus, which
   * locks by SELECT only on one shard, an UPDATE that changes nothing (`body`: no journal trigger watches it) locks
   * them on every shard.
   */
  #locked(table: string, columns: string, where: Sql | string): Compiled {
    if (this.#options.distribution) return toPostgres(sql`UPDATE ${table} SET body = body WHERE ${where} RETURNING ${columns}`);
    return toPostgres(sql`SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY seq${postgres.lock}`);
  }

  // ---- running ---------------------------------------------------------------------------------------------

  protected get driver(): PgDriver {
    return this.#driver;
  }

  /** On Citus the journal's triggers run on the workers: its context is propagated to them. */
  protected get distributed(): boolean {
    return !!this.#options.distribution;
  }

  protected table(type: string): WriteTable {
    const info = this.#settings.catalogue.resolve(type);
    return info ? this.#writeTable(info) : { name: qualified(this.#options.schema, docsTable(type)) };
  }

  /**
   * The conditions SQL does not decide here, decided in JS over SQL's candidates (#decide): polygons, with SQLite's own
   * code; on Citus, an equality with key order along a dotted path (see orderedOnPath), whose exact SQL Citus refuses.
   * One mechanism for both, rather than a second SQL shape for Citus alone: SQL still finds the candidates (the box,
   * the jsonb equality), JS reads only their first step's JSON text, and the statement then runs over their seqs.
   */
  #inJs(c: Condition): boolean {
    return c.op === 'polygon' || (!!this.#options.distribution && orderedOnPath(c));
  }

  /** Conditions decided in JS (see #inJs): their plans have no WHERE clause of their own. */
  protected stepped(plan: Pick<QueryPlan, 'conditions'>): boolean {
    return plan.conditions.some((c) => this.#inJs(c));
  }

  protected where(info: TypeInfo, plan: Pick<QueryPlan, 'conditions'>): Sql | string | null {
    return this.stepped(plan) ? null : this.#where(info, plan.conditions);
  }

  protected feedWhere(_type: TypeInfo, plan: QueryPlan): Sql | string {
    if (plan.conditions.some((c) => c.op === 'polygon')) {
      throw requestError('INVALID_QUERY', 'query: a polygon cannot filter the change feed on PostgreSQL; use bounds, or filter the events');
    }
    return compileWhere(plan.conditions, new Set());
  }

  protected *matches(s: Session, info: TypeInfo, plan: Pick<QueryPlan, 'conditions'>, lock: boolean): Op<Matches> {
    const { seqs } = yield* call(this.#decide(s, info, plan.conditions, lock));
    return seqs.length ? sql`seq = ANY(${bound(seqs, 'bigint[]')})` : null;
  }

  /** Read under the feed's lock: no writer then holds a seq it has not committed yet. */
  protected *lastGiven(s: Session): Op<number> {
    yield s.exec(`BEGIN; SELECT pg_advisory_xact_lock(${feedLock(this.#options.schema)})`);
    try {
      const [[given]] = (yield s.rows(`SELECT COALESCE(last_value, 0) FROM pg_sequences WHERE schemaname = $1::text AND sequencename = $2::text`, [this.#options.schema, `${CHANGES_TABLE}_seq_seq`])) as [[string | null]];
      return Number(given ?? 0);
    } finally {
      yield s.exec('COMMIT');
    }
  }

  // ---- queries -------------------------------------------------------------------------------------------

  /** With matches decided in JS, the page over their seqs; explain's, over their candidates (the statement the indexes serve). */
  protected select(info: TypeInfo, plan: QueryPlan, where: Sql | string | null): PgSelect {
    return selectStatement(this.#table(info), where ?? this.#where(info, plan.conditions), plan);
  }

  /** Limited: (total, body, rank, key, seq). */
  protected readonly pageColumns: PageColumns = [1, 4, 2, 3];
  /** The page statement counts its matches (compile.ts selectStatement): one round trip, one snapshot. */
  protected readonly pageCounts = true;
  protected readonly parse: Materialize = (_info, rows, text) => JSON.parse(`[${rows.map(text).join(',')}]`) as StoredDoc[];
  protected readonly summaryHooks = POSTGRES_SUMMARY;

  /** A limited page's rows less the row of NULLs an empty page answers; a skip's, one text of its documents (as `parse` takes them). */
  protected async pageRows(s: Session, _info: TypeInfo, _plan: QueryPlan, select: PgSelect): Promise<PageRows> {
    const rows = await s.all(select);
    if (!select.paged) return { rows: rows.map((r) => r[0]) };
    // The total is NULL when a cursor carries it.
    const total = rows[0]![0] === null ? undefined : Number(rows[0]![0]);
    if (!select.keyed) return { rows: rows[0]![1] === null ? [] : [rows[0]![1]], total };
    return { rows: rows.filter((r) => r[1] !== null), total };
  }

  /**
   * A cursor's key as the next page binds it: a scalar field's numbers as numbers, booleans as 'true'/'false'; for other
   * paths (and distances), numbers (rank 1) as numbers and the rest as text; NULL for null and missing. Several sort
   * keys: their JSON array's text.
   */
  protected keyOf(rank: number, key: unknown, plan: QueryPlan): string | number | null {
    if (key === null || rank === 0) return null;
    const first = plan.sort && plan.sort.keys.length === 1 ? plan.sort.keys[0]! : null;
    if (plan.sort && !first) return key as string;
    const field = first?.path.scalar && !first.near ? first.path.field : undefined;
    const numeric = field ? ['int32', 'int64', 'number'].includes(field.category) : rank === 1;
    return numeric ? Number(key) : (key as string);
  }

  protected async explainText(s: Session, select: PgSelect): Promise<string[]> {
    return (await s.rows(`EXPLAIN ${select.sql}`, select.params)).map((r) => r[0] as string);
  }

  /**
   * The seqs of the documents matching conditions some of which SQL does not decide (#inJs): SQL finds the candidates
   * (a polygon's box: GiST index, then the exact box on the stored doubles; an equality's jsonb equality) meeting the
   * other conditions; JS decides each polygon with SQLite's own code (src/geo/polygons.ts), so both backends answer
   * the same to the bit, and each equality from its path's first member as stored (`body`'s exact text, key order
   * kept) with the README's rules (src/query/values.ts). `lock` takes the rows for a write.
   */
  async #decide(s: Session, info: TypeInfo, conditions: readonly Condition[], lock: boolean, extra = ''): Promise<{ seqs: string[]; rows: Row[] }> {
    const where = this.#where(info, conditions);
    const polygons = conditions.filter((c): c is Extract<Condition, { op: 'polygon' }> => c.op === 'polygon');
    const equalities = conditions.filter((c): c is Extract<Condition, { op: 'eq' | 'ne' | 'in' }> => c.op !== 'polygon' && this.#inJs(c));
    const columns = [
      ...polygons.flatMap((p) => [coordText(p.path.steps[0]!.name, 0), coordText(p.path.steps[0]!.name, 1)]),
      // json's `->` cuts the member's text out of `body` as stored: the parsed value keeps its key order.
      ...equalities.map((c) => `((body::json) -> ${key(c.path.steps[0]!.name)})::text`),
    ];
    const selected = `seq, ${columns.join(', ')}${extra}`;
    const rows = await s.all(lock ? this.#locked(this.#table(info), selected, where) : toPostgres(sql`SELECT ${selected} FROM ${this.#table(info)} WHERE ${where}`));
    // Handles are taken after the await: nothing else runs between here and the end of the loop to evict them.
    const handles = polygons.map((p) => polygonHandle(p.rings));
    const at = 1 + 2 * polygons.length;
    const inside = rows.filter(
      (r) => handles.every((h, i) => inPolygon(h, Number(r[1 + 2 * i]), Number(r[2 + 2 * i])) === 1) && equalities.every((c, i) => decides(c, r[at + i] as string | null)),
    );
    return { seqs: inside.map((r) => r[0] as string), rows: inside };
  }

  /** Rows come whole through `query` (capabilities.stream is false). */
  stream(): RowStream | null {
    return null;
  }

  // ---- writes --------------------------------------------------------------------------------------------

  /**
   * The JSON texts of documents to write, once: VALIDATION errors for any PostgreSQL cannot store (U+0000, an unpaired
   * surrogate), checked before anything is written. JSON.stringify writes both as \u escapes, so the text is searched
   * first and only a document whose text has one (or a literal backslash-u) is looked at value by value.
   */
  #storable(docs: readonly StoredDoc[]): string[] {
    const errors: EnvelopeError[] = [];
    const texts = docs.map((doc, index) => {
      const text = JSON.stringify(doc);
      if (!SUSPECT.test(text)) return text;
      for (const [field, value] of Object.entries(doc)) {
        const why = unstorable(field) ?? unstorable(value);
        if (why) errors.push({ code: 'VALIDATION', index, field, message: `document ${index}: ${field}: holds ${why}, which PostgreSQL cannot store` });
      }
      return text;
    });
    if (errors.length) throw new RequestError(errors);
    return texts;
  }

  /**
   * Inserts, in the caller's transaction (`guard: 'savepoint'`, or 'ready' when its BEGIN set savepoint cd_fast) or as
   * one statement on its own (`'none'`: one chunk, outside a transaction; a collision throws Collided, nothing written).
   * First a plain INSERT per chunk, as fast as hand-written SQL; on a collision it is undone and every chunk goes again
   * with ON CONFLICT DO NOTHING; then the key of each skipped document is found in one statement (the first unique
   * key, in PostgreSQL's checking order, that a stored document shares). A document no known key explains is inserted
   * alone, under a savepoint, and reported with the key the server names, or written if the conflict has gone since.
   */
  async #insertDocs(s: Session, info: TypeInfo, docs: readonly StoredDoc[], texts: readonly string[], guard: 'none' | 'ready' | 'savepoint'): Promise<InsertResult> {
    const ids = docs.map((d) => d.id as string);
    const insertedIds = () => docs.filter((_, i) => inserted.has(i)).map((d) => d.id as string);
    const inserted = new Set<number>();
    if (new Set(ids).size !== ids.length) {
      // Two documents of the request share an id: RETURNING id could not tell which went in; one at a time.
      const errors: EnvelopeError[] = [];
      const taken = new Set<unknown>();
      for (const [index, doc] of docs.entries()) {
        // An id an earlier document of the request took collides on id; on Citus, where ids are unique per shard
        // only, the server would let a document of another well in.
        const fields = taken.has(doc.id) ? ['id'] : await this.#insertAlone(s, info, doc);
        if (fields) errors.push(duplicateError(info, doc, index, fields));
        else {
          inserted.add(index);
          taken.add(doc.id);
        }
      }
      return { insertedIds: insertedIds(), errors, rolledBack: false };
    }
    const batches = chunks([...docs.keys()], (i) => texts[i]!);
    try {
      if (guard === 'savepoint') await s.exec('SAVEPOINT cd_fast');
      for (const chunk of batches) await s.all(insertArray(postgres, this.#writeTable(info), chunk.json, false));
      return { insertedIds: ids, errors: [], rolledBack: false };
    } catch (e) {
      if (!uniqueViolation(e)) throw e;
      if (guard === 'none') throw new Collided();
      await s.exec('ROLLBACK TO SAVEPOINT cd_fast');
    }
    const collided: number[] = [];
    const position = new Map(ids.map((id, i) => [id, i]));
    for (const chunk of batches) {
      for (const [id] of (await s.all(insertArray(postgres, this.#writeTable(info), chunk.json, true))) as [string][]) inserted.add(position.get(id)!);
      for (const i of chunk.items) if (!inserted.has(i)) collided.push(i);
    }
    const errors = await this.#collisions(s, info, docs, collided, inserted);
    return { insertedIds: insertedIds(), errors, rolledBack: false };
  }

  /** Inserts one document under a savepoint: null when it went in, else the fields of the key it collided on. */
  async #insertAlone(s: Session, info: TypeInfo, doc: StoredDoc): Promise<readonly string[] | null> {
    await s.exec('SAVEPOINT cd_doc');
    try {
      await s.all(insertDoc(postgres, this.#writeTable(info), doc.id, JSON.stringify(doc)));
      await s.exec('RELEASE SAVEPOINT cd_doc');
      return null;
    } catch (e) {
      const hit = uniqueViolation(e);
      if (!hit) throw e;
      await s.exec('ROLLBACK TO SAVEPOINT cd_doc');
      return this.#driver.keyOf(s, hit.index);
    }
  }

  /** DUPLICATE_KEY errors for the skipped documents, in request order; `inserted` gains those that went in after all. */
  async #collisions(s: Session, info: TypeInfo, docs: readonly StoredDoc[], collided: readonly number[], inserted: Set<number>): Promise<EnvelopeError[]> {
    if (!collided.length) return [];
    const table = this.#table(info);
    const keys = uniqueKeysOf(info, this.#schemaOptions);
    const found = new Map<number, readonly string[]>();
    if (keys.length === 1) {
      for (const i of collided) found.set(i, keys[0]!);
    } else if (!this.#options.distribution) {
      // One statement for every skipped document: which known key does a stored document share with it? (Citus cannot
      // run it, a distributed table in a subquery of each row of a function: there each goes alone, below.)
      const j = '(e.j::jsonb)';
      // With soft delete, a key other than id collides with live documents only (its index is partial).
      const live = this.softNow(info.name) ? ` AND ${liveTerm(info, 't.doc')}` : '';
      const tests = keys.map(
        (k) =>
          sql`EXISTS (SELECT 1 FROM ${table} AS t WHERE ${k
            .map((f) => (f === 'id' ? `t.id = e.j ->> 'id'` : `${fieldExpr(info.fields.get(f)!, 't.doc')} = ${fieldExpr(info.fields.get(f)!, j)}`))
            .join(' AND ')}${k.length === 1 && k[0] === 'id' ? '' : live})`,
      );
      for (const chunk of chunks(collided, (i) => JSON.stringify(docs[i]))) {
        const e = postgres.elements(bound(chunk.json, 'json'));
        const rows = await s.all(toPostgres(sql`SELECT ${e.at}, ${join(tests, ', ')} FROM ${e.from} ORDER BY ${e.at}`));
        for (const r of rows) {
          const k = keys.findIndex((_, x) => r[1 + x] === true);
          if (k >= 0) found.set(chunk.items[Number(r[0]) - 1]!, keys[k]!);
        }
      }
    }
    const errors: EnvelopeError[] = [];
    for (const i of collided) {
      let fields = found.get(i) ?? null;
      // A key the options do not list, or a conflict that has gone since: the server itself says.
      if (!fields) fields = await this.#insertAlone(s, info, docs[i]!);
      if (fields) errors.push(duplicateError(info, docs[i]!, i, fields));
      else inserted.add(i);
    }
    return errors;
  }

  async insert(info: TypeInfo, source: Iterable<StoredDoc>, atomic: boolean, _count?: number, journal?: Journal): Promise<InsertResult> {
    const w: WriteSpec<InsertResult> = { op: 'insert', journal, counts: (r) => ({ created: r.insertedIds.length, modified: 0, deleted: 0, errors: r.errors }) };
    // Validated and stamped whole before the first round trip (an invalid document throws here, nothing sent):
    // documents go to the server in chunks of multi-row statements, not one by one.
    const docs = Array.from(source);
    const texts = this.#storable(docs);
    // One statement's worth, not atomic, nothing journaled: no transaction to open (one round trip).
    const single = !atomic && this.#driver.alone && !this.journaled(w as WriteSpec<never>) && docs.length <= CHUNK_DOCS && new Set(docs.map((d) => d.id)).size === docs.length;
    if (single && chunks([...docs.keys()], (i) => texts[i]!).length === 1) {
      try {
        return await this.write(w, 1, (s) => call(this.#insertDocs(s, info, docs, texts, 'none')));
      } catch (e) {
        if (!(e instanceof Collided)) throw e;
      }
    }
    return this.inserts(w, 2, (s) => this.#insertParts(s, [{ info, docs }], [texts], 'ready', atomic, (r) => r[0]!), ['SAVEPOINT cd_fast']);
  }

  /** Inserts of several parts in the write's transaction, settled (see SqlBackend.settle) as `answer` shapes them. */
  *#insertParts<T extends InsertResult | InsertResult[]>(
    s: Session,
    parts: readonly { info: TypeInfo; docs: readonly StoredDoc[] }[],
    texts: readonly string[][],
    guard: 'ready' | 'savepoint',
    atomic: boolean,
    answer: (r: InsertResult[]) => T,
  ): Op<T> {
    const results: InsertResult[] = [];
    for (const [i, p] of parts.entries()) results.push(yield* call(this.#insertDocs(s, p.info, p.docs, texts[i]!, guard)));
    return this.settle(answer(results), atomic);
  }

  async insertMany(parts: readonly { info: TypeInfo; docs: readonly StoredDoc[] }[], journal?: Journal): Promise<InsertResult[]> {
    const texts = parts.map((p) => this.#storable(p.docs));
    const w: WriteSpec<InsertResult[]> = { op: 'insert', journal, counts: (rs) => ({ created: rs.reduce((n, r) => n + r.insertedIds.length, 0), modified: 0, deleted: 0, errors: [] }) };
    return this.inserts(w, 2, (s) => this.#insertParts(s, parts, texts, 'savepoint', true, (r) => r));
  }

  /** A promise whatever happens: documents PostgreSQL cannot store are refused before anything is written. */
  async replace(info: TypeInfo, docs: readonly StoredDoc[], stamp: (doc: StoredDoc, old?: StoredDoc) => StoredDoc | null, journal?: Journal): Promise<ReplaceResult> {
    this.#storable(docs);
    return super.replace(info, docs, stamp, journal);
  }

  /** The rows a replace rewrites, locked as every write locks them (#locked). */
  protected readLocked(t: WriteTable, where: Sql | string): Compiled {
    return this.#locked(t.name, `seq, id, ${postgres.docText}`, where);
  }

  /** The unique indexes' fields read at open, and those the options declare. */
  protected uniqueFields(info: TypeInfo): readonly string[] {
    return [...(this.#uniqueFields.get(this.#table(info)) ?? []), ...uniqueKeysOf(info, this.#schemaOptions).flat()].filter((f) => f !== 'id');
  }

  /** A promise whatever happens: a refusal of the sets too is a rejection. */
  async update(info: TypeInfo, plan: QueryPlan, sets: readonly FieldSet[], stamps: Readonly<Record<string, unknown>>, journal?: Journal): Promise<number> {
    return super.update(info, plan, sets, stamps, journal);
  }

  async delete(info: TypeInfo, plan: QueryPlan, journal?: Journal): Promise<number> {
    return super.delete(info, plan, journal);
  }

  protected checkSets(_info: TypeInfo, sets: readonly FieldSet[]): void {
    for (const set of sets) {
      const path = set.steps.map((st) => st.name);
      const why = path.map(unstorable).find(Boolean) ?? unstorable(set.value);
      if (why) throw requestError('VALIDATION', `body.${path.join('.')}: holds ${why}, which PostgreSQL cannot store`, { field: path.join('.') });
    }
  }

  /**
   * Top-level fields are set in SQL (the dialect's setFields: `body` rebuilt with its members in order, no document
   * leaving the server); dotted paths are rewritten here, and on Citus every update: that rebuild of `body` joins
   * set-returning functions in a correlated subquery, which Citus runs on one shard only.
   */
  protected setsInSql(_info: TypeInfo, sets: readonly FieldSet[]): boolean {
    return !this.#options.distribution && sets.every((set) => set.steps.length === 1);
  }

  /** The documents rewritten in JS, so `body` keeps their key order (jsonb_set would lose it), under row locks. */
  protected *rewrite(s: Session, info: TypeInfo, plan: QueryPlan, sets: readonly FieldSet[], stamps: Readonly<Record<string, unknown>>, where: Sql | string | null): Op<number> {
    const table = { name: this.#table(info) };
    let rows: Row[];
    if (where === null) {
      rows = (yield* call(this.#decide(s, info, plan.conditions, true, ', body'))).rows.map((r) => [r[0], r[r.length - 1]]);
    } else {
      rows = (yield* call(s.all(this.#locked(table.name, `seq, ${postgres.docText}`, where)))) as Row[];
    }
    if (!rows.length) return 0;
    const changed: string[] = [];
    for (const [, body] of rows as [string, string][]) {
      const doc = JSON.parse(body) as StoredDoc;
      const before = this.#options.distribution ? (JSON.parse(body) as StoredDoc) : undefined;
      for (const set of sets) {
        if (!setPath(doc, set.steps.map((st) => st.name), set.value)) throw requestError('VALIDATION', parentNotObject(doc.id));
      }
      for (const [k, v] of Object.entries(stamps)) put(doc, k, v);
      if (before) this.keepShard(info, before, doc);
      changed.push(JSON.stringify(doc));
    }
    try {
      for (const chunk of chunks(changed, (t) => t)) yield* call(s.all(putArray(postgres, table, chunk.json)));
    } catch (e) {
      throw yield* this.collision(s, info, e);
    }
    return rows.length;
  }

  /**
   * One write transaction held open on one client of the pool across awaits, which several inserts join (an atomic
   * load); the client goes back to the pool on commit or rollback.
   */
  bulk(): BulkWriter {
    let opened: Promise<{ client: PgClientLike; s: Session }> | undefined;
    let ended = false;
    const open = () =>
      (opened ??= (async () => {
        if (this.#driver.heads.size) await Promise.allSettled(this.#driver.heads);
        const client = await this.#driver.connect();
        const s = new Session(client);
        try {
          await this.#driver.begin(s, 'write', []);
        } catch (e) {
          client.release(e as Error);
          throw requestErrorOf(e) ?? e;
        }
        return { client, s };
      })());
    const end = async (sql: 'COMMIT' | 'ROLLBACK') => {
      if (ended || !opened) return;
      ended = true;
      const { client, s } = await opened;
      try {
        await s.exec(sql);
        client.release();
      } catch (e) {
        client.release(e as Error);
        throw requestErrorOf(e) ?? e;
      }
    };
    return {
      insert: async (info, docs) => {
        if (ended) throw new TypeError('bulk: the transaction has ended');
        const texts = this.#storable(docs);
        return refused(open().then(({ s }) => this.#insertDocs(s, info, docs, texts, 'savepoint')));
      },
      commit: () => refused(end('COMMIT')),
      rollback: () => end('ROLLBACK'),
    };
  }

  /** The feed's table was seen: a feed once on stays on (nothing drops it), so it is looked up until then, not after. */
  #feedOn = false;

  /** The change feed: events read by seq from cd_changes; new ones announced by NOTIFY (see journal.ts). */
  readonly feed: ChangeFeed = {
    enabled: async () => {
      if (this.#feedOn) return true;
      const [[on]] = (await this.request((s) => s.rows('SELECT to_regclass($1::text) IS NOT NULL', [qualified(this.#options.schema, CHANGES_TABLE)]))) as [[boolean]];
      return (this.#feedOn = on);
    },
    read: async (after, limit, type, plan) => this.readFeed(after, limit, type, plan),
    bounds: () => this.exec((s) => this.bounds(s)) as Promise<{ first: number; last: number }>,
    head: () => {
      // Issued now, ahead of any request made after this call (see PgDriver.client); no feed table, no head.
      const read = this.#driver.run(this.retried(() => this.#driver.client((s) => this.#driver.run(this.#head(s)), true)));
      const heads = this.#driver.heads;
      heads.add(read);
      const done = () => heads.delete(read);
      read.then(done, done);
      return read;
    },
    version: async () => {
      await this.#listen();
      return `${this.#notified}.${this.commits}`;
    },
  };

  /** The feed's newest seq; no feed table, no head (0). */
  *#head(s: Session): Op<number> {
    try {
      return (yield* this.bounds(s)).last;
    } catch (e) {
      if (sqlState(e) === UNDEFINED_TABLE) return 0;
      throw e;
    }
  }

  /** LISTENs for change events on a connection of its own (once); without one, watches still see this store's commits. */
  #listen(): Promise<PgClientLike | null> {
    if (this.#listener) return this.#listener;
    // Which LISTEN connection a callback belongs to: one dropped after a newer one was made must not unset that.
    let listener: Promise<PgClientLike | null> | undefined;
    listener = this.#listener = (async () => {
      let client: PgClientLike | undefined;
      try {
        client = await this.#pool.connect();
        (client as unknown as { on(event: 'notification', f: () => void): void }).on('notification', () => this.#notified++);
        // A dropped LISTEN connection is let go: the next watch LISTENs again on a new one.
        (client as unknown as { on(event: 'error', f: (e: Error) => void): void }).on('error', (e) => {
          if (this.#listener !== listener) return;
          this.#listener = undefined;
          client!.release(e);
        });
        await client.query(`LISTEN ${CHANGES_CHANNEL}`);
        return client;
      } catch (e) {
        // Out of reach for now: the next watch tries again.
        if (this.#listener === listener) {
          this.#listener = undefined;
          client?.release(e as Error);
        }
        return null;
      }
    })();
    return listener;
  }

  async close(): Promise<void> {
    const pending = this.#listener;
    this.#listener = undefined;
    const listener = await pending;
    if (listener) listener.release(new Error('closed'));
    if (this.#options.ownsPool) await this.#pool.end();
  }

  // ---- Citus ---------------------------------------------------------------------------------------------

  /** The distribution key of a json document: its field's text, or its id when it has none (see citus.ts). */
  #dkExpr(info: TypeInfo, j: Sql | string): Sql {
    const field = this.#options.distribution!.get(info.name)!.field;
    return field === 'id' ? sql`(${j} ->> 'id')` : sql`COALESCE(${j} ->> ${key(field)}, ${j} ->> 'id')`;
  }
}

/**
 * Sets `value` at a dotted path as SQLite's json_set does: an existing member keeps its place, a new one goes last,
 * missing parents are created as objects. False (and nothing set) when a parent exists and is not an object.
 */
function setPath(doc: StoredDoc, path: readonly string[], value: unknown): boolean {
  let node: Record<string, unknown> = doc;
  for (let i = 0; i < path.length - 1; i++) {
    const name = path[i]!;
    if (!Object.hasOwn(node, name)) {
      const child: Record<string, unknown> = {};
      put(node, name, child);
      node = child;
      continue;
    }
    const child = node[name];
    if (!isPlainObject(child)) return false;
    node = child;
  }
  put(node, path[path.length - 1]!, value);
  return true;
}

/**
 * An equality decided in JS (see PostgresBackend.#inJs) on one document, from the JSON text of its path's first member
 * (null when the document has none).
 */
function decides(c: Extract<Condition, { op: 'eq' | 'ne' | 'in' }>, first: string | null): boolean {
  const steps = c.path.steps;
  // The member alone, under its name: the path is then followed from the document as the rules say.
  const doc = first === null ? {} : { [steps[0]!.name]: JSON.parse(first) as unknown };
  if (c.op === 'in') return equalsSome(doc, steps, c.values);
  return equalsSome(doc, steps, [c.value]) === (c.op === 'eq');
}
