/**
 * A lost connection to PostgreSQL: the store's backends terminated (pg_terminate_backend) or killed (kill -9) while a
 * request runs and while they sit idle. The process lives (an unhandled 'error' would fail this file), the request in
 * flight answers the retryable UNAVAILABLE, acknowledged writes stay, and the next requests succeed.
 */
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataStore } from '../../src/index.js';
import { serve } from '../../src/cli/serve.js';
import { openPostgres } from '../../src/postgres/index.js';
import { startCluster, type PgCluster } from '../../scripts/pg-cluster.mjs';

let cluster: PgCluster;
let admin: pg.Client;
let schemas = 0;

/** An admin connection of the test's own; it lives through a terminate of the store's backends, not a crash restart. */
async function connectAdmin(): Promise<void> {
  admin = new pg.Client({ connectionString: cluster.url });
  admin.on('error', () => undefined);
  await admin.connect();
}

beforeAll(async () => {
  cluster = startCluster();
  await connectAdmin();
}, 120_000);

afterAll(async () => {
  await admin?.end().catch(() => undefined);
  cluster?.stop();
});

/** The pids of the store's backends (its pool names itself `consolidata`), and how many wait on a lock. */
async function storeBackends(): Promise<{ pid: number; waiting: boolean }[]> {
  // Inside the admin's transaction the statistics views keep their first snapshot: a fresh one each time.
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query<{ pid: number; waiting: boolean }>(
    `SELECT pid, wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE application_name = 'consolidata'`,
  );
  return rows;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

/** A store of its own schema, counting the idle connections its pool reports lost. */
async function open(): Promise<{ store: DataStore; lost: () => number }> {
  let lost = 0;
  const store = (await openPostgres(cluster.url, { schema: `c${++schemas}`, pool: { max: 2 }, onError: () => void lost++ })) as DataStore;
  return { store, lost: () => lost };
}

/**
 * Starts `request` while an admin transaction holds the Well table, waits until the store's backend waits on that
 * lock, then runs `cut` on its pid; answers the request's envelope once the lock is let go.
 */
async function cutInFlight<T>(schema: string, request: () => Promise<T>, cut: (pid: number) => Promise<void>): Promise<T> {
  await admin.query(`BEGIN; LOCK TABLE ${schema}."docs_Well" IN ACCESS EXCLUSIVE MODE`);
  try {
    const answer = request();
    let pid = 0;
    await until('the store waits on the lock', async () => {
      pid = (await storeBackends()).find((b) => b.waiting)?.pid ?? 0;
      return pid > 0;
    });
    await cut(pid);
    return await answer;
  } finally {
    await admin.query('ROLLBACK').catch(() => undefined);
  }
}

const terminate = async (pid: number) => {
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
};

describe('a lost PostgreSQL connection', () => {
  it('a request in flight answers UNAVAILABLE; the store goes on and keeps what it acknowledged', async () => {
    const { store } = await open();
    try {
      expect((await store.insert('Well', [{ pwi: 'A' }])).success).toBe(true);
      const read = await cutInFlight(`c${schemas}`, () => store.query('Well', {}), terminate);
      expect(read.success).toBe(false);
      expect(read.errors.map((e) => e.code)).toEqual(['UNAVAILABLE']);
      expect(read.message).not.toMatch(/terminat|administrator|FATAL/i);
      const write = await cutInFlight(`c${schemas}`, () => store.insert('Well', [{ pwi: 'B' }]), terminate);
      expect(write.errors.map((e) => e.code)).toEqual(['UNAVAILABLE']);
      expect((await store.insert('Well', [{ pwi: 'C' }])).success).toBe(true);
      const after = await store.query('Well', {}, { sortBy: 'pwi' });
      expect(after.data.map((d) => d.pwi)).toEqual(['A', 'C']);
    } finally {
      await store.close();
    }
  });

  it('idle connections terminated: the pool lets them go and the next requests succeed', async () => {
    const { store, lost } = await open();
    try {
      // Two connections in the pool, both idle afterwards.
      await Promise.all([store.insert('Well', [{ pwi: 'A' }]), store.query('Well', {})]);
      const idle = await storeBackends();
      expect(idle.length).toBeGreaterThan(0);
      for (const { pid } of idle) await terminate(pid);
      await until('the pool saw every connection go', async () => lost() >= idle.length);
      expect((await store.insert('Well', [{ pwi: 'B' }])).success).toBe(true);
      expect((await store.query('Well', {}, { sortBy: 'pwi' })).data.map((d) => d.pwi)).toEqual(['A', 'B']);
    } finally {
      await store.close();
    }
  });

  it('serve answers the request in flight 503 UNAVAILABLE and goes on serving', async () => {
    const schema = `c${++schemas}`;
    const running = await serve({ db: `${cluster.url}&schema=${schema}`, port: 0, host: '127.0.0.1', log: () => undefined });
    try {
      const post = (body: unknown) => fetch(`${running.url}/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post({ type: 'Well', data: [{ pwi: 'A' }] })).status).toBe(200);
      const cut = await cutInFlight(schema, () => post({ type: 'Well', data: [{ pwi: 'B' }] }), terminate);
      expect(cut.status).toBe(503);
      expect(((await cut.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe('UNAVAILABLE');
      expect((await post({ type: 'Well', data: [{ pwi: 'C' }] })).status).toBe(200);
      const all = (await (await fetch(`${running.url}/data/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', options: { sortBy: 'pwi' } }) })).json()) as { data: { pwi: string }[] };
      expect(all.data.map((d) => d.pwi)).toEqual(['A', 'C']);
    } finally {
      await running.stop(0);
    }
  });

  it('a server out of reach at open rejects with the driver\'s own error, which names it', async () => {
    const nowhere = `postgresql://postgres@/postgres?host=${encodeURIComponent(`${cluster.host}/none`)}&port=${cluster.port}`;
    await expect(openPostgres(nowhere)).rejects.toThrow(/ENOENT|ECONNREFUSED/);
  });

  it('a backend killed (kill -9) mid-request: UNAVAILABLE, then the store works again once the server has recovered', async () => {
    const { store } = await open();
    try {
      expect((await store.insert('Well', [{ pwi: 'A' }])).success).toBe(true);
      // The test cluster commits asynchronously (synchronous_commit=off): a checkpoint makes A survive the crash.
      await admin.query('CHECKPOINT');
      const answer = await cutInFlight(`c${schemas}`, () => store.query('Well', {}), async (pid) => {
        // The server restarts every backend after one dies this way: the admin connection goes too.
        execFileSync('kill', ['-9', String(pid)]);
      });
      expect(answer.errors.map((e) => e.code)).toEqual(['UNAVAILABLE']);
      // Until recovery ends, requests answer UNAVAILABLE too; then they succeed.
      let write = await store.insert('Well', [{ pwi: 'B' }]);
      for (let i = 0; i < 300 && !write.success; i++) {
        expect(write.errors.map((e) => e.code)).toEqual(['UNAVAILABLE']);
        await new Promise((r) => setTimeout(r, 100));
        write = await store.insert('Well', [{ pwi: 'B' }]);
      }
      expect(write.success).toBe(true);
      expect((await store.query('Well', {}, { sortBy: 'pwi' })).data.map((d) => d.pwi)).toEqual(['A', 'B']);
    } finally {
      await store.close();
      await connectAdmin();
    }
  });
});
