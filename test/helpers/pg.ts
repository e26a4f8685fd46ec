/**
 * A throwaway PostgreSQL cluster for the tests: initdb into a fresh temp directory, started on a Unix socket only
 * (listen_addresses = '': nothing listens on TCP), stopped and removed when the test file ends. The server refuses to
 * run as root, so as root it runs as the `postgres` user (runuser). Durability settings are off (the cluster is
 * thrown away, and most tests are about answers), except synchronous commit for the tests of crashes (`durable`).
 *
 * There is no skip: without the binaries (or, as root, without a `postgres` user) `startCluster` fails saying what to
 * install. `.ci/run` installs Debian's package when they are missing.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PgCluster {
  /** A connection string for the `postgres` database over the Unix socket. */
  readonly url: string;
  /** The socket directory and port, for clients that take them apart. */
  readonly host: string;
  readonly port: number;
  /** Restarts the server as a crash would (`pg_ctl restart -m immediate`): every connection drops; resolves once it is back. */
  restart(): Promise<void>;
  stop(): void;
}

export interface ClusterOptions {
  /** Commit synchronously, so a crash (an immediate restart, a killed backend) loses no acknowledged commit. */
  durable?: boolean;
  /** More server settings (`name=value`, as `-c` takes them), after the defaults (a later one wins). */
  settings?: readonly string[];
}

const PREFIX = 'consolidata-pg-';
const PORT = 5432;

/**
 * The directory of initdb/pg_ctl: PG_BIN, else the newest /usr/lib/postgresql/<version>/bin; a clear error without.
 * @example execFileSync(join(pgBin(), 'initdb'), ['--version'])
 */
export function pgBin(): string {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) candidates.push(join(root, v, 'bin'));
  }
  const found = candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl')));
  if (!found) {
    throw new Error(
      `PostgreSQL server binaries (initdb, pg_ctl) not found in ${candidates.length ? candidates.join(', ') : `${root}/<version>/bin`}. ` +
        'The PostgreSQL suites need them and never skip: install them (Debian: apt-get install -y postgresql) or set PG_BIN.',
    );
  }
  return found;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a server binary: as the postgres user when we are root (the server refuses root). */
function run(bin: string, args: string[]): string {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${err.stderr || err.stdout || err.message}`);
  }
}

function postgresUid(): { uid: number; gid: number } {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error('running as root, the tests start PostgreSQL as the `postgres` user, and there is none (Debian: apt-get install -y postgresql creates it)');
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs a server binary without blocking the event loop (the process's clients go on meanwhile). */
function runAsync(bin: string, args: string[]): Promise<void> {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { encoding: 'utf8' }, (e, stdout, stderr) => (e ? reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr || stdout || e.message}`)) : resolve()));
  });
}

/** Clusters left by test processes that died before their teardown: stopped and removed. */
function removeStale(bin: string): void {
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
    if (existsSync(join(dir, 'data', 'postmaster.pid'))) spawnSync(asRoot ? 'runuser' : join(bin, 'pg_ctl'), asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), 'stop', '-m', 'immediate', '-D', join(dir, 'data')] : ['stop', '-m', 'immediate', '-D', join(dir, 'data')]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts a new cluster in a temp directory; `stop()` stops it and removes the directory (also on process exit).
 * @example const pg = startCluster(); const store = await openPostgres(pg.url); … pg.stop();
 */
export function startCluster(options: ClusterOptions = {}): PgCluster {
  const bin = pgBin();
  const ids = asRoot ? postgresUid() : null;
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
    run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const settings = [
      `-p ${PORT}`,
      `-k ${dir}`,
      // Unix socket only: nothing on this machine's network, let alone another's.
      "-c listen_addresses=''",
      '-c fsync=off',
      `-c synchronous_commit=${options.durable ? 'on' : 'off'}`,
      '-c full_page_writes=off',
      '-c max_connections=40',
      '-c shared_buffers=32MB',
      ...(options.settings ?? []).map((x) => `-c ${x}`),
    ].join(' ');
    run(join(bin, 'pg_ctl'), ['start', '-w', '-t', '60', '-D', data, '-l', join(dir, 'log'), '-o', settings]);
  } catch (e) {
    stop();
    throw e;
  }
  // pg_ctl restart starts the server with the options it was started with (postmaster.opts).
  const restart = () => runAsync(join(bin, 'pg_ctl'), ['restart', '-m', 'immediate', '-w', '-t', '60', '-D', data, '-l', join(dir, 'log')]);
  return { url: `postgresql://postgres@/postgres?host=${encodeURIComponent(dir)}&port=${PORT}`, host: dir, port: PORT, restart, stop };
}
