/** `consolidata serve|import|export --db postgres://…`: the CLI on a PostgreSQL database, as with a file. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/postgres/index.js';
import { buildCli, runCli, startServe } from '../cli/build.js';
import { pgCluster, postgresBackend } from '../helpers/backends.js';

postgresBackend();

const NDJSON = [
  '{"id":"a1","pwi":"A1","basinName":"Permian","fracStages":12}',
  '{"pwi":"A2","basinName":"Bakken"',
  '{"id":"a3","pwi":"A3","spudDate":"3/14/2021","surfaceLoc":{"type":"Point","coordinates":[-101.9,31.8]}}',
  '{"id":"a4","pwi":"A1"}',
  '{"id":"a5","pwi":"A5","extra":{"z":1,"a":2}}',
].join('\n');

let cli: { path: string; remove: () => void };
let work: string;

beforeAll(async () => {
  cli = await buildCli();
  work = mkdtempSync(join(tmpdir(), 'consolidata-pg-cli-'));
  writeFileSync(join(work, 'wells.ndjson'), NDJSON);
}, 60_000);

afterAll(() => {
  cli?.remove();
  rmSync(work, { recursive: true, force: true });
});

describe('the CLI with --db postgres://', () => {
  it('import reports bad lines by number and exits 2; export prints the documents, key order kept; --upsert again changes nothing', async () => {
    const { url } = pgCluster().cluster;
    // The connection string's own `schema` parameter names the schema.
    const db = `${url}&schema=cli_import`;
    const imported = await runCli(cli.path, ['import', 'Well', 'wells.ndjson', '--db', db], work);
    expect(imported.stderr).toMatch(/line 2: malformed JSON/);
    expect(imported.stderr).toMatch(/line 4: a Well with pwi "A1" already exists/);
    expect(imported.stderr).toMatch(/3 imported, 2 skipped, 5 read/);
    expect(imported.code).toBe(2);

    const exported = await runCli(cli.path, ['export', 'Well', '--db', db, '--query', '{"pwi":{"in":["A1","A5"]}}'], work);
    expect(exported.code).toBe(0);
    const docs = exported.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(docs.map((d) => d.id)).toEqual(['a1', 'a5']);
    // The exact JSON text comes back: the object's keys in the order written.
    expect(Object.keys(docs[1]!.extra as object)).toEqual(['z', 'a']);

    writeFileSync(join(work, 'export.ndjson'), exported.stdout);
    const again = await runCli(cli.path, ['import', 'Well', 'export.ndjson', '--upsert', '--db', db], work);
    expect(again.stderr).toMatch(/2 imported, 0 skipped, 2 read/);
    expect(again.code).toBe(0);
    const store = await openPostgres(url, { schema: 'cli_import' });
    try {
      const after = await store.query('Well', {});
      expect(after.data.map((d) => d.id)).toEqual(['a1', 'a3', 'a5']);
    } finally {
      await store.close();
    }
  });

  it('serve answers both route families from the database, and stops on SIGTERM with exit 0', async () => {
    const { url } = pgCluster().cluster;
    const served = await startServe(cli.path, ['--db', `${url}&schema=cli_serve`, '--port', '0'], work);
    try {
      const post = await fetch(`${served.url}/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', data: [{ id: 'w1', pwi: 'W1', basinName: 'Permian' }] }) });
      expect(post.status).toBe(200);
      const dup = await fetch(`${served.url}/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', data: [{ pwi: 'W1' }] }) });
      expect(dup.status).toBe(409);
      expect(((await dup.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe('DUPLICATE_KEY');
      const v1 = await fetch(`${served.url}/v1/data`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Well', request: 'get', query: { basinName: 'Permian' } }) });
      expect(v1.status).toBe(200);
      expect(((await v1.json()) as { data: { id: string }[] }).data.map((d) => d.id)).toEqual(['w1']);
    } finally {
      expect(await served.stop()).toBe(0);
    }
    expect(served.output()).not.toMatch(/internal error/);
  });

  it('an unreachable database exits 1 with a message, and never prints the password', async () => {
    const { cluster } = pgCluster();
    const bad = `postgresql://postgres:s3cret@/no_such_db?host=${encodeURIComponent(cluster.host)}&port=${cluster.port}`;
    const r = await runCli(cli.path, ['export', 'Well', '--db', bad], work);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no_such_db/);
    expect(r.stderr).not.toContain('s3cret');
  });

  it('the schema the connection string names is the one written', async () => {
    const { cluster, pool } = pgCluster();
    writeFileSync(join(work, 'comments.ndjson'), '{"id":"c1"}\n');
    const r = await runCli(cli.path, ['import', 'Comment', 'comments.ndjson', '--db', `${cluster.url}&schema=cli_named`], work);
    expect(r.stderr).toMatch(/1 imported, 0 skipped, 1 read/);
    expect(r.code).toBe(0);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'cli_named' AND tablename LIKE 'docs\\_%'`);
    expect(rows[0].n).toBeGreaterThan(20);
  });
});
