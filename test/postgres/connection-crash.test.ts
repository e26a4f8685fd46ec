/**
 * PostgreSQL crashing under 8 writers of one store: the server restarted as a crash would (`pg_ctl restart -m
 * immediate`), and backends killed with kill -9 (the server then ends every backend and recovers). The process lives
 * (an unhandled 'error' would fail this file), the writes cut off answer the retryable UNAVAILABLE, every acknowledged
 * write is there after, and each writer's next writes succeed once the server is back.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataStore } from '../../src/index.js';
import { openPostgres } from '../../src/postgres/index.js';
import { startCluster, type PgCluster } from '../../scripts/pg-cluster.mjs';

const WRITERS = 8;

let cluster: PgCluster;
let schemas = 0;

beforeAll(() => {
  // Synchronous commits: an acknowledged write is in the WAL before the answer, so a crash cannot take it back.
  cluster = startCluster({ durable: true });
}, 120_000);

afterAll(() => cluster?.stop());

async function until(what: string, check: () => boolean | Promise<boolean>, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

/** A query on a connection of its own, made for it (the server may have dropped every earlier one). */
async function adminQuery<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const admin = new pg.Client({ connectionString: cluster.url });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    return (await admin.query<T>(sql)).rows;
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/**
 * WRITERS loops inserting one Well each, never stopping on an error, recording what was acknowledged (pwi → id), what
 * was tried and refused (it may have committed: cut off while committing), every refusal's code, and each writer's
 * successes since `mark()`.
 */
function writers(store: DataStore) {
  const acked = new Map<string, string>();
  const refused = new Set<string>();
  const codes: string[] = [];
  const since = Array.from({ length: WRITERS }, () => 0);
  let stop = false;
  const loops = Array.from({ length: WRITERS }, async (_, n) => {
    for (let i = 0; !stop; i++) {
      const pwi = `w${n}-${i}`;
      const r = await store.insert('Well', [{ pwi }]);
      if (r.success) {
        acked.set(pwi, r.insertedIds[0]!);
        since[n]!++;
      } else {
        refused.add(pwi);
        codes.push(...r.errors.map((e) => e.code));
        await new Promise((res) => setTimeout(res, 20));
      }
    }
  });
  return {
    acked,
    codes,
    /** Counts successes from now on. */
    mark: () => since.fill(0),
    /** True once every writer had `n` writes acknowledged since the mark. */
    allSince: (n: number) => since.every((k) => k >= n),
    async stop(): Promise<void> {
      stop = true;
      await Promise.all(loops);
    },
    /** What the store holds, against what was acknowledged and tried. */
    async check(): Promise<void> {
      const stored = new Map((await store.query('Well', {}, { limit: 100_000 })).data.map((d) => [d.pwi as string, d.id]));
      for (const [pwi, id] of acked) expect(stored.get(pwi), `acknowledged ${pwi}`).toBe(id);
      // Nothing there that no writer sent: each is acknowledged or was cut off while committing.
      for (const pwi of stored.keys()) expect(acked.has(pwi) || refused.has(pwi), `stored ${pwi}`).toBe(true);
    },
  };
}

async function open(): Promise<DataStore> {
  return (await openPostgres(cluster.url, { schema: `k${++schemas}`, pool: { max: WRITERS }, onError: () => undefined })) as DataStore;
}

describe('PostgreSQL crashing under 8 writers', () => {
  it('restarted (-m immediate): the writes cut off answer UNAVAILABLE, nothing acknowledged is lost, writes succeed after', async () => {
    const store = await open();
    const w = writers(store);
    try {
      await until('writes are acknowledged', () => w.acked.size >= 50);
      const before = w.acked.size;
      await cluster.restart();
      w.mark();
      await until('every writer writes again', () => w.allSince(3));
      await w.stop();
      expect(w.codes.length).toBeGreaterThan(0);
      expect([...new Set(w.codes)]).toEqual(['UNAVAILABLE']);
      expect(w.acked.size).toBeGreaterThanOrEqual(before + 3 * WRITERS);
      await w.check();
    } finally {
      await w.stop();
      await store.close();
    }
  }, 120_000);

  it('backends killed (kill -9) three times: the process lives, nothing acknowledged is lost, writes succeed after each', async () => {
    const store = await open();
    const w = writers(store);
    try {
      for (let kill = 0; kill < 3; kill++) {
        const goal = w.acked.size + 30;
        await until('writes are acknowledged', () => w.acked.size >= goal);
        // A backend busy with a write if one is, so a request is in flight when it dies.
        const [victim] = await adminQuery<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE application_name = 'consolidata' ORDER BY state = 'active' DESC LIMIT 1`,
        );
        expect(victim).toBeDefined();
        process.kill(victim!.pid, 'SIGKILL');
        w.mark();
        await until('every writer writes again', () => w.allSince(3));
      }
      await w.stop();
      // A killed backend makes the server end every other one: writes were cut off, and each answered UNAVAILABLE.
      expect(w.codes.length).toBeGreaterThan(0);
      expect([...new Set(w.codes)]).toEqual(['UNAVAILABLE']);
      await w.check();
    } finally {
      await w.stop();
      await store.close();
    }
  }, 120_000);
});
