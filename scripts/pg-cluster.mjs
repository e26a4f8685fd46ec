/**
 * Throwaway PostgreSQL servers, for the tests (test/helpers/backends.ts) and the benches: initdb into a fresh temp
 * directory, started on a Unix socket only (listen_addresses = '': nothing listens on TCP), stopped and removed on
 * `stop()` or process exit. The server refuses to run as root, so as root it runs as the `postgres` user (runuser).
 * `startCitus` joins three such servers, Citus preloaded, into a coordinator and two workers by socket directory
 * (libpq takes a directory for a host), so parallel runs never contend for a port.
 *
 * There is no skip: without the binaries (or, as root, without a `postgres` user, or without Citus) starting fails
 * saying what to install. `.ci/run` installs them.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The version the Citus layout was run on (README "Citus"); ../shared/citus/install.sh builds it. */
export const CITUS_VERSION = '13.0.5';

const PREFIX = 'consolidata-pg-';
const PORT = 5432;
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The directory of initdb/pg_ctl: PG_BIN, else the newest /usr/lib/postgresql/<version>/bin; a clear error without. */
export function pgBin() {
  const candidates = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) candidates.push(join(root, v, 'bin'));
  }
  const found = candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl')));
  if (!found) {
    throw new Error(
      `PostgreSQL server binaries (initdb, pg_ctl) not found in ${candidates.length ? candidates.join(', ') : `${root}/<version>/bin`}. ` +
        'Install them (Debian: apt-get install -y postgresql) or set PG_BIN.',
    );
  }
  return found;
}

/** The command line of a server binary: as the postgres user when we are root (the server refuses root). */
const as = (bin, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]);

function run(bin, args) {
  try {
    return execFileSync(...as(bin, args), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`${bin} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

/** Runs a server binary without blocking the event loop (the process's clients go on meanwhile). */
function runAsync(bin, args) {
  return new Promise((resolve, reject) => {
    execFile(...as(bin, args), { encoding: 'utf8' }, (e, stdout, stderr) => (e ? reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr || stdout || e.message}`)) : resolve()));
  });
}

function postgresIds() {
  try {
    return { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
  } catch {
    throw new Error('running as root, PostgreSQL is started as the `postgres` user, and there is none (Debian: apt-get install -y postgresql creates it)');
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Servers left by processes that died before their teardown: stopped and removed. */
function removeStale(bin) {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(dir, 'owner'), 'utf8'));
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || alive(owner)) continue;
    if (existsSync(join(dir, 'data', 'postmaster.pid'))) spawnSync(...as(join(bin, 'pg_ctl'), ['stop', '-m', 'immediate', '-D', join(dir, 'data')]));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts a new server in a temp directory. `durable`: synchronous commits (crash tests count acknowledged writes);
 * `throwaway` (default true): fsync and full-page writes off, for tests about answers — the benches keep them on, as a
 * real server runs; `settings`: more `-c name=value`, after the defaults (a later one wins).
 * @example const pg = startCluster(); const store = await openPostgres(pg.url); … pg.stop();
 */
export function startCluster({ durable = false, throwaway = true, settings = [] } = {}) {
  const bin = pgBin();
  const ids = asRoot ? postgresIds() : null;
  removeStale(bin);
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  writeFileSync(join(dir, 'owner'), String(process.pid));
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const data = join(dir, 'data');
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stop);
    if (existsSync(join(data, 'postmaster.pid'))) {
      try {
        run(join(bin, 'pg_ctl'), ['stop', '-m', 'immediate', '-D', data]);
      } catch {
        // Removing the directory below still ends the run's footprint; a server left behind is removed next time.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', stop);
  try {
    run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', ...(throwaway ? ['--no-sync'] : [])]);
    const options = [
      `-p ${PORT}`,
      `-k ${dir}`,
      // Unix socket only: nothing on this machine's network, let alone another's.
      "-c listen_addresses=''",
      `-c synchronous_commit=${durable ? 'on' : 'off'}`,
      ...(throwaway ? ['-c fsync=off', '-c full_page_writes=off', '-c max_connections=40', '-c shared_buffers=32MB'] : []),
      ...settings.map((x) => `-c ${x}`),
    ].join(' ');
    run(join(bin, 'pg_ctl'), ['start', '-w', '-t', '60', '-D', data, '-l', join(dir, 'log'), '-o', options]);
  } catch (e) {
    stop();
    throw e;
  }
  // pg_ctl restart starts the server with the options it was started with (postmaster.opts).
  const restart = () => runAsync(join(bin, 'pg_ctl'), ['restart', '-m', 'immediate', '-w', '-t', '60', '-D', data, '-l', join(dir, 'log')]);
  const version = run(join(bin, 'postgres'), ['--version']).trim();
  return { url: `postgresql://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${PORT}`, host: dir, port: PORT, version, restart, stop };
}

/** Fails, saying how to install it, when the Citus extension is missing from the PostgreSQL found. */
export function assertCitusInstalled() {
  const lib = join(pgBin(), '..', 'lib', 'citus.so');
  if (!existsSync(lib)) {
    throw new Error(
      `Citus is not installed (${lib} is missing). The Citus suite (npm run test:citus) and bench --backend citus run on a local ` +
        `Citus ${CITUS_VERSION} cluster and never skip: build and install it with \`bash ../shared/citus/install.sh\` (as root), as .ci/run does.`,
    );
  }
}

/** Runs statements on one server, on a connection of their own; answers the last one's rows. */
async function sql(node, statements) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: node.url });
  await client.connect();
  try {
    let rows = [];
    for (const s of statements) rows = (await client.query(s)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

/**
 * Starts a coordinator and two workers and joins them; `url` connects to the coordinator, `restart()` crashes the
 * coordinator alone (as a single server's restart is; the workers stay up), `stop()` ends all three. `shards`: Citus'
 * shard count (default Citus' own, 32); the other options as startCluster's.
 * @example const citus = await startCitus({ shards: 4 }); const store = await openPostgres(citus.url, { citus: true }); … citus.stop();
 */
export async function startCitus({ shards, throwaway = true, settings = [] } = {}) {
  assertCitusInstalled();
  const all = ['shared_preload_libraries=citus', 'max_connections=200', ...(shards ? [`citus.shard_count=${shards}`] : []), ...settings];
  const nodes = [];
  const stop = () => {
    for (const n of nodes.splice(0)) n.stop();
  };
  try {
    for (let i = 0; i < 3; i++) nodes.push(startCluster({ throwaway, settings: all }));
    for (const n of nodes) await sql(n, ['CREATE EXTENSION citus']);
    const [coordinator, ...workers] = nodes;
    const [{ v }] = await sql(coordinator, [
      `SELECT citus_set_coordinator_host('${coordinator.host}', ${coordinator.port})`,
      ...workers.map((w) => `SELECT citus_add_node('${w.host}', ${w.port})`),
      'SELECT citus_version() AS v',
    ]);
    return { url: coordinator.url, host: coordinator.host, port: coordinator.port, version: v.split(' on ')[0], restart: () => coordinator.restart(), stop };
  } catch (e) {
    stop();
    throw e;
  }
}
