/**
 * The journal on PostgreSQL: version history and the change feed, kept as on SQLite by triggers on the documents
 * tables (row-level, in the write's transaction), so every path and every connection records them with no loop in
 * JavaScript. The request's context (operation, activity, time, user) reaches them through the transaction-local
 * setting `consolidata.ctx` (JSON), set with the transaction's BEGIN.
 *
 * Feed order: seq comes from a sequence, which is taken when a row is inserted, not when it commits. Each trigger that
 * writes an event first takes a transaction-level advisory lock, held to the commit, so writers of the feed commit one
 * after the other in seq order: a reader that has seen seq n has seen every event before it. A change event also
 * notifies `consolidata_changes` (delivered at commit, once per transaction), which watchers LISTEN to.
 */
import type { Catalogue } from '../catalogue/index.js';
import { JOURNAL_TYPES } from '../settings.js';
import { literal } from '../sql/fragment.js';
import { encodeName } from '../sql/names.js';
import { docsTable, fitName, ident, qualified } from './names.js';

/** The feed's table in the store's schema. */
export const CHANGES_TABLE = 'cd_changes';

/** The channel change events notify, at commit. */
export const CHANGES_CHANNEL = 'consolidata_changes';

export interface PgJournalOptions {
  readonly history: readonly string[];
  readonly changeFeed: boolean;
  readonly changeRetention: number;
  /**
   * Citus layout: each version goes to the shard of its document (`dk` is the document's), co-located with it, so a
   * worker's trigger writes it locally, in the write's transaction; Citus makes such triggers only when told to.
   */
  readonly distributed?: boolean;
}

/** JSON text of a text value, 'null' for NULL. */
const jsonText = (x: string) => `COALESCE(to_json((${x})::text)::text, 'null')`;

/**
 * The declarations and assignments every journal function starts with: the row, the event, and who/when — the
 * document's own stamps for inserts, replacements and updates; the context's for deletes and soft deletes.
 */
const PROLOGUE = `
DECLARE
  ctx jsonb := COALESCE(NULLIF(current_setting('consolidata.ctx', true), ''), '{}')::jsonb;
  r record;
  ev text;
  own boolean;
BEGIN
  IF TG_OP = 'DELETE' THEN
    r := OLD;
    ev := CASE ctx->>'op' WHEN 'purge' THEN 'purge' ELSE 'delete' END;
    own := false;
  ELSE
    r := NEW;
    ev := CASE WHEN TG_OP = 'INSERT' THEN 'insert' WHEN ctx->>'op' = 'replace' THEN 'replace' WHEN ctx->>'op' = 'delete' THEN 'delete' ELSE 'update' END;
    own := ev <> 'delete';
  END IF;`;

// A delete by a client that set no context (hand-written SQL) is recorded at the server's clock, with no activity.
const NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;
const NOW_ISO = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const ACTIVITY = `CASE WHEN own THEN r.doc->>'lastUpdatedActivityId' ELSE ctx->>'activity' END`;
const AT = `CASE WHEN own THEN r.doc->>'updatedAt' ELSE COALESCE(ctx->>'at', ${NOW_ISO}) END`;
const MS = `CASE WHEN own THEN (r.doc->>'modifiedTimestamp')::numeric::bigint ELSE COALESCE((ctx->>'ms')::bigint, ${NOW_MS}) END`;
const BY = `CASE WHEN own THEN r.doc->>'updatedBy' ELSE ctx->>'by' END`;

/** DDL of the journal in a schema; empty when neither feature is on. Functions are replaced, triggers created or replaced. */
export function pgJournalSchema(schema: string, catalogue: Catalogue, opts: PgJournalOptions): string[] {
  if (!opts.changeFeed && !opts.history.length) return [];
  const sql: string[] = [];
  const fn = (name: string) => qualified(schema, name);
  if (opts.changeFeed) {
    const changes = qualified(schema, CHANGES_TABLE);
    const lock = feedLock(schema);
    sql.push(
      `CREATE TABLE IF NOT EXISTS ${changes} (seq bigserial PRIMARY KEY, type text NOT NULL, op text NOT NULL, id text NOT NULL, doc jsonb, body text, activity text, at text NOT NULL)`,
      `INSERT INTO ${qualified(schema, 'cd_meta')} (key, value) VALUES ('changeRetention', ${literal(String(opts.changeRetention))}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      `CREATE OR REPLACE FUNCTION ${fn('cd_feed')}() RETURNS trigger LANGUAGE plpgsql AS $cd$${PROLOGUE}
  PERFORM pg_advisory_xact_lock(${lock});
  INSERT INTO ${changes} (type, op, id, doc, body, activity, at) VALUES (TG_ARGV[0], ev, r.id, r.doc, r.body, ${ACTIVITY}, ${AT});
  PERFORM pg_notify(${literal(CHANGES_CHANNEL)}, ${literal(schema)});
  RETURN NULL;
END $cd$`,
      // Every 1,000th event prunes those past the retention, as on SQLite.
      `CREATE OR REPLACE FUNCTION ${fn('cd_prune')}() RETURNS trigger LANGUAGE plpgsql AS $cd$
BEGIN
  IF NEW.seq % 1000 = 0 THEN
    DELETE FROM ${changes} WHERE seq <= NEW.seq - (SELECT value::bigint FROM ${qualified(schema, 'cd_meta')} WHERE key = 'changeRetention');
  END IF;
  RETURN NULL;
END $cd$`,
      `CREATE OR REPLACE TRIGGER ${ident('cd_changes:prune')} AFTER INSERT ON ${changes} FOR EACH ROW EXECUTE FUNCTION ${fn('cd_prune')}()`,
    );
  }
  if (opts.history.length) {
    const versions = qualified(schema, docsTable('VersionDocument'));
    const body =
      `'{"id":' || ${jsonText('vid')} || ',"type":' || ${jsonText('TG_ARGV[0]')} || ',"oid":' || ${jsonText('r.id')} || ',"body":' || r.body || ` +
      `',"event":' || ${jsonText('ev')} || ',"versionTimestamp":' || COALESCE((${MS})::text, 'null') || ',"createdAt":' || ${jsonText(AT)} || ` +
      `',"createdBy":' || ${jsonText(BY)} || ',"updatedAt":' || ${jsonText(AT)} || ',"updatedBy":' || ${jsonText(BY)} || ` +
      `',"modifiedTimestamp":' || COALESCE((${MS})::text, 'null') || ',"schemaVersion":' || ${jsonText(literal(catalogue.version))} || ` +
      `',"createdActivityId":' || ${jsonText(ACTIVITY)} || ',"lastUpdatedActivityId":' || ${jsonText(ACTIVITY)} || '}'`;
    sql.push(
      `CREATE OR REPLACE FUNCTION ${fn('cd_history')}() RETURNS trigger LANGUAGE plpgsql AS $cd$${PROLOGUE.replace('  own boolean;', '  own boolean;\n  vid text := substr(md5(random()::text || clock_timestamp()::text), 1, 24);\n  text_ text;')}
  text_ := ${body};
  INSERT INTO ${versions} (id, doc, body${opts.distributed ? ', dk' : ''}) VALUES (vid, text_::jsonb, text_${opts.distributed ? ', r.dk' : ''});
  RETURN NULL;
END $cd$`,
    );
  }
  if (opts.distributed) sql.push('SET LOCAL citus.enable_unsafe_triggers = on');
  for (const type of catalogue.names) {
    if (JOURNAL_TYPES.includes(type)) continue;
    const t = qualified(schema, docsTable(type));
    const on = `AFTER INSERT OR UPDATE OF doc OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION`;
    if (opts.changeFeed) sql.push(`CREATE OR REPLACE TRIGGER ${ident(fitName(`jr.${encodeName(type)}.feed`))} ${on} ${fn('cd_feed')}(${literal(type)})`);
    if (opts.history.includes(type)) sql.push(`CREATE OR REPLACE TRIGGER ${ident(fitName(`jr.${encodeName(type)}.history`))} ${on} ${fn('cd_history')}(${literal(type)})`);
  }
  return sql;
}

/** The advisory lock every writer of a schema's feed holds from its first event to its commit (an SQL expression). */
export function feedLock(schema: string): string {
  return `hashtext(${literal(`consolidata:changes:${schema}`)})`;
}

/** The advisory lock a schema change holds (exclusive) to its commit, and a hard delete (shared) to its own: an SQL expression. */
export function schemaLock(schema: string): string {
  return `hashtext(${literal(`consolidata:${schema}`)})`;
}

/**
 * The statement setting a transaction's context for the journal's triggers (rides on BEGIN). On Citus the triggers run
 * on the workers: a SET LOCAL reaches them when the transaction propagates its SET LOCALs (a set_config call does not).
 */
export function contextStatement(ctx: { op: string; activity: string; at: string; ms: number; by: string }, distributed = false): string {
  const set = `SET LOCAL consolidata.ctx = ${literal(JSON.stringify(ctx))}`;
  return distributed ? `SET LOCAL citus.propagate_set_commands = 'local'; ${set}` : set;
}
