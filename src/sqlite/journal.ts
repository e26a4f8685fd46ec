/**
 * The journal in SQLite: version history and the change feed, kept by triggers on the documents tables, so every
 * write of every connection and process (and every path: insert, bulk load, replace, a statement-level update or
 * delete) records them in its own transaction, with no loop in JavaScript. Nothing of a write that rolls back stays.
 *
 * A trigger reads what the row carries (a written document holds its activity, time and user); a delete, and the
 * operation that changed a row (replace or update), come from the request's context row (cd_context), which the
 * backend sets at the start of such a transaction.
 */
import type { Catalogue } from '../catalogue/index.js';
import { JOURNAL_TYPES } from '../settings.js';
import type { JournalContext } from '../sql/dialect.js';
import { bound, literal, sql, type Sql } from '../sql/fragment.js';
import { CHANGES_TABLE, CONTEXT_TABLE, docsTable, ident, journalTrigger } from './names.js';

export interface JournalOptions {
  /** Types whose writes write a VersionDocument. */
  readonly history: readonly string[];
  /** Every type's writes write a change event. */
  readonly changeFeed: boolean;
  readonly changeRetention: number;
}


/** The request's context, as a one-row table to select from (alias c). */
const CONTEXT = `(SELECT op, activity, at, ms, by FROM ${CONTEXT_TABLE} WHERE k = 1) AS c`;

/** What one trigger kind reads: the row (new or old), the activity, time (ISO and ms) and user of the change. */
function sources(op: 'ai' | 'au' | 'ad') {
  // A delete by a connection that set no context (hand-written SQL) is recorded at the clock, with no activity.
  const at = `COALESCE(c.at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;
  const ms = `COALESCE(c.ms, CAST(round((julianday('now') - 2440587.5) * 86400000) AS INTEGER))`;
  if (op === 'ad') return { row: 'old', event: `CASE c.op WHEN 'purge' THEN 'purge' ELSE 'delete' END`, activity: 'c.activity', at, ms, by: 'c.by' };
  const f = (name: string) => `json_extract(new.doc, '$.${name}')`;
  // A soft delete is an update of the row that the request's context names a delete.
  if (op === 'ai') return { row: 'new', event: `'insert'`, activity: f('lastUpdatedActivityId'), at: f('updatedAt'), ms: `CAST(${f('modifiedTimestamp')} AS INTEGER)`, by: f('updatedBy') };
  // Its deleted* stamps leave the document's update stamps as they were: who and when come from the context.
  const soft = (context: string, own: string) => `CASE c.op WHEN 'delete' THEN ${context} ELSE ${own} END`;
  return {
    row: 'new',
    event: `CASE c.op WHEN 'replace' THEN 'replace' WHEN 'delete' THEN 'delete' ELSE 'update' END`,
    activity: soft('c.activity', f('lastUpdatedActivityId')),
    at: soft(at, f('updatedAt')),
    ms: soft(ms, `CAST(${f('modifiedTimestamp')} AS INTEGER)`),
    by: soft('c.by', f('updatedBy')),
  };
}

const WHEN = { ai: 'AFTER INSERT', au: 'AFTER UPDATE OF doc', ad: 'AFTER DELETE' } as const;

/** DDL of the journal (tables and triggers); empty when neither feature is on. `CREATE … IF NOT EXISTS`: nothing is dropped. */
export function journalSchema(catalogue: Catalogue, opts: JournalOptions): string[] {
  if (!opts.changeFeed && !opts.history.length) return [];
  const sql = [
    `CREATE TABLE IF NOT EXISTS ${CONTEXT_TABLE} (k INTEGER PRIMARY KEY CHECK (k = 1), op TEXT, activity TEXT, at TEXT, ms INTEGER, by TEXT)`,
    `INSERT OR IGNORE INTO ${CONTEXT_TABLE} (k) VALUES (1)`,
  ];
  if (opts.changeFeed) {
    const c = ident(CHANGES_TABLE);
    sql.push(
      // AUTOINCREMENT: a seq is never used twice, even after the newest events are pruned.
      `CREATE TABLE IF NOT EXISTS ${c} (seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, op TEXT NOT NULL, id TEXT NOT NULL, doc BLOB, activity TEXT, at TEXT NOT NULL)`,
      `INSERT INTO cd_meta (key, value) VALUES ('changeRetention', ${literal(String(opts.changeRetention))}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      // Every 1,000th event prunes those past the retention: the feed holds between retention and retention + 1,000.
      `CREATE TRIGGER IF NOT EXISTS ${ident(`${CHANGES_TABLE}:prune`)} AFTER INSERT ON ${c} WHEN new.seq % 1000 = 0 ` +
        `BEGIN DELETE FROM ${c} WHERE seq <= new.seq - (SELECT CAST(value AS INTEGER) FROM cd_meta WHERE key = 'changeRetention'); END`,
    );
  }
  const versions = ident(docsTable('VersionDocument'));
  for (const type of catalogue.names) {
    if (JOURNAL_TYPES.includes(type)) continue;
    const t = ident(docsTable(type));
    for (const op of ['ai', 'au', 'ad'] as const) {
      const s = sources(op);
      const from = op === 'ai' ? '' : ` FROM ${CONTEXT}`;
      if (opts.changeFeed) {
        sql.push(
          `CREATE TRIGGER IF NOT EXISTS ${ident(journalTrigger(type, 'feed', op))} ${WHEN[op]} ON ${t} BEGIN ` +
            `INSERT INTO ${ident(CHANGES_TABLE)} (type, op, id, doc, activity, at) SELECT ${literal(type)}, ${s.event}, ${s.row}.id, ${s.row}.doc, ${s.activity}, ${s.at}${from}; END`,
        );
      }
      if (opts.history.includes(type)) {
        const body =
          `jsonb_object('id', v.id, 'type', ${literal(type)}, 'oid', ${s.row}.id, 'body', json(${s.row}.doc), 'event', ${s.event}, 'versionTimestamp', ${s.ms}, ` +
          `'createdAt', ${s.at}, 'createdBy', ${s.by}, 'updatedAt', ${s.at}, 'updatedBy', ${s.by}, 'modifiedTimestamp', ${s.ms}, ` +
          `'schemaVersion', ${literal(catalogue.version)}, 'createdActivityId', ${s.activity}, 'lastUpdatedActivityId', ${s.activity})`;
        sql.push(
          `CREATE TRIGGER IF NOT EXISTS ${ident(journalTrigger(type, 'history', op))} ${WHEN[op]} ON ${t} BEGIN ` +
            `INSERT INTO ${versions} (id, doc) SELECT v.id, ${body} FROM (SELECT lower(hex(randomblob(12))) AS id) AS v${from ? `, ${CONTEXT}` : ''}; END`,
        );
      }
    }
  }
  return sql;
}

/** True when the file has journal triggers (this process's options or another's turned them on). */
export function journals(db: { prepare(sql: string): { pluck(): { get(): unknown } } }): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'jr.%' LIMIT 1`).pluck().get() !== undefined;
}

/**
 * The statement setting the request's context row: run first in a transaction that replaces, updates or deletes.
 * @example setContext({ op: 'update', activity: 'a1', at: '2024-05-01T00:00:00.000Z', ms: 1714521600000, by: 'u1' })
 */
export function setContext(ctx: JournalContext): Sql {
  return sql`UPDATE ${CONTEXT_TABLE} SET op = ${bound(ctx.op)}, activity = ${bound(ctx.activity)}, at = ${bound(ctx.at)}, ms = ${bound(ctx.ms)}, by = ${bound(ctx.by)} WHERE k = 1`;
}

/** Clears it again before the commit: a later write of a connection that sets none (hand-written SQL) is not taken for this request's. */
export const CLEAR_CONTEXT = `UPDATE ${CONTEXT_TABLE} SET op = NULL, activity = NULL, at = NULL, ms = NULL, by = NULL WHERE k = 1`;
