/**
 * A throwaway PostgreSQL server for `npm run bench -- --backend postgres` (unless --pg-url or PG_URL names one):
 * initdb into a temp directory, started on a Unix socket only, stopped and removed when the bench ends. As root the
 * server runs as the `postgres` user (it refuses root). Durability as SQLite's file stores run (WAL,
 * synchronous = NORMAL): fsync on, `synchronous_commit = off` — a crash may lose the last commits, never corrupt.
 * `durable: true` commits synchronously, for the benches that crash it and count acknowledged writes lost.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function bin() {
  const root = '/usr/lib/postgresql';
  const dirs = [process.env.PG_BIN, ...(existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)).map((v) => path.join(root, v, 'bin')) : [])].filter(Boolean);
  const found = dirs.find((d) => existsSync(path.join(d, 'initdb')));
  if (!found) throw new Error('bench --backend postgres: PostgreSQL server binaries not found (Debian: apt-get install postgresql), or pass --pg-url=postgres://…');
  return found;
}

const asRoot = process.getuid?.() === 0;
const run = (b, args) => execFileSync(asRoot ? 'runuser' : b, asRoot ? ['-u', 'postgres', '--', b, ...args] : args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Starts the server; answers its connection string, version and a stop function (also run on exit). `extra`: more `-c` settings. */
export function startCluster({ durable = false, extra = [] } = {}) {
  const b = bin();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'consolidata-bench-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      run(path.join(b, 'pg_ctl'), ['stop', '-m', 'fast', '-D', data]);
    } catch {
      // Removing the directory still ends the bench's footprint.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', stop);
  run(path.join(b, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C']);
  const settings = ['-p 5432', `-k ${dir}`, "-c listen_addresses=''", `-c synchronous_commit=${durable ? 'on' : 'off'}`, '-c shared_buffers=256MB', '-c max_wal_size=4GB', '-c work_mem=16MB', ...extra.map((x) => `-c ${x}`)].join(' ');
  run(path.join(b, 'pg_ctl'), ['start', '-w', '-t', '60', '-D', data, '-l', path.join(dir, 'log'), '-o', settings]);
  const version = run(path.join(b, 'postgres'), ['--version']).trim();
  return { url: `postgresql://postgres@/postgres?host=${encodeURIComponent(dir)}&port=5432`, host: dir, version, stop };
}

/**
 * `--backend citus`: a coordinator and two workers on this machine, each a server as above with Citus preloaded
 * (installed by ../shared/citus/install.sh), joined by socket directory; answers the coordinator's connection string.
 */
export async function startCitus() {
  const { default: pg } = await import('pg');
  const nodes = [0, 1, 2].map(() => startCluster({ extra: ['shared_preload_libraries=citus', 'max_connections=200'] }));
  const sql = async (node, statements) => {
    const client = new pg.Client({ connectionString: node.url });
    await client.connect();
    try {
      for (const s of statements) await client.query(s);
    } finally {
      await client.end();
    }
  };
  for (const n of nodes) await sql(n, ['CREATE EXTENSION citus']);
  const [coordinator, ...workers] = nodes;
  await sql(coordinator, [`SELECT citus_set_coordinator_host('${coordinator.host}', 5432)`, ...workers.map((w) => `SELECT citus_add_node('${w.host}', 5432)`)]);
  const client = new pg.Client({ connectionString: coordinator.url });
  await client.connect();
  const version = (await client.query('SELECT citus_version() AS v')).rows[0].v.split(' on ')[0];
  await client.end();
  return { url: coordinator.url, version, stop: () => nodes.forEach((n) => n.stop()) };
}
