/**
 * The journal under SIGKILL: a process inserting, updating, replacing and deleting with the change feed, history
 * and the activity log on is killed at random moments; the file's feed, versions, log and documents must agree.
 * `npm run fuzz` runs 30 trials (CRASH_TRIALS).
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/store.js';
import { killAfterFirstAck, startWorker } from './helpers/spawn.js';

const TRIALS = Number(process.env.CRASH_TRIALS ?? 4);
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

/** The file's documents equal the feed replayed from its start; each change has its version; each request one log. */
function check(file: string, acked: number) {
  const db = new Database(file, { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const events = db.prepare(`SELECT seq, op, id, json(doc) AS doc, activity FROM cd_changes WHERE type = 'Well' ORDER BY seq`).all() as { seq: number; op: string; id: string; doc: string; activity: string }[];
    const replayed = new Map<string, string>();
    for (const e of events) {
      if (e.op === 'delete') {
        expect(replayed.has(e.id), `delete of a document the feed has (seq ${e.seq})`).toBe(true);
        replayed.delete(e.id);
      } else replayed.set(e.id, e.doc);
    }
    const stored = new Map((db.prepare(`SELECT id, json(doc) AS doc FROM docs_Well`).all() as { id: string; doc: string }[]).map((r) => [r.id, r.doc]));
    // Every committed change has its event, and no event is without its change.
    expect(replayed).toEqual(stored);
    const versions = db.prepare(`SELECT json_extract(doc, '$.oid') AS oid, json_extract(doc, '$.event') AS event, json(json_extract(doc, '$.body')) AS body FROM docs_VersionDocument ORDER BY seq`).all() as { oid: string; event: string; body: string }[];
    expect(versions.map((v) => [v.oid, v.event, JSON.parse(v.body)])).toEqual(events.map((e) => [e.id, e.op, JSON.parse(e.doc)]));
    // One log per committed request: the acknowledged ones, and perhaps the one the kill caught after its commit.
    const logs = db.prepare(`SELECT count(*) FROM docs_ActivityLog`).pluck().get() as number;
    expect(logs).toBeGreaterThanOrEqual(acked);
    expect(logs).toBeLessThanOrEqual(acked + 1);
    // Each activity in the feed has its log entry.
    const logged = new Set(db.prepare(`SELECT json_extract(doc, '$.createdActivityId') FROM docs_ActivityLog`).pluck().all() as string[]);
    for (const e of events) expect(logged.has(e.activity), `activity ${e.activity} is logged`).toBe(true);
  } finally {
    db.close();
  }
}

describe('journal crash safety', () => {
  it(`keeps the feed, the versions, the log and the documents agreeing after SIGKILL (${TRIALS} trials)`, async () => {
    const t = tempDir();
    cleanup.push(t.cleanup);
    for (let trial = 0; trial < TRIALS; trial++) {
      const file = t.file(`journal-${trial}.db`);
      const w = await startWorker([file, 'journal', 'j', '100000', '40']);
      await killAfterFirstAck(w, 500);
      const acked = w.lines.filter((l) => l.startsWith('ack ')).length;
      expect(w.lines.filter((l) => l.startsWith('stderr'))).toEqual([]);
      expect(acked).toBeGreaterThan(0);
      check(file, acked);
    }
  }, 120_000);
});
