/**
 * A throwaway Citus cluster for the tests: a coordinator and two workers, each a cluster of pg.ts (its own temp
 * directory, Unix socket only, as the `postgres` user) started with `shared_preload_libraries=citus`. The nodes know
 * each other by socket directory (libpq takes a directory for a host), so nothing listens on TCP and parallel runs
 * never contend for a port.
 *
 * There is no skip: without the extension `startCitus` fails saying how to install it (`.ci/run` does).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { pgBin, startCluster, type PgCluster } from './pg.js';

/** The version the layout was run on (README "Citus"); /work/shared/citus/install.sh builds it. */
export const CITUS_VERSION = '13.0.5';

/**
 * Four shards a table, two per worker: every statement across shards still meets both workers, and creating the
 * ~20 tables of a store stays quick (Citus's default of 32 takes seconds per schema).
 */
const SHARDS = 4;

/**
 * Fails, saying how to install it, when the Citus extension is missing from the PostgreSQL the tests start.
 * @example assertCitusInstalled()
 */
export function assertCitusInstalled(): void {
  const lib = join(pgBin(), '..', 'lib', 'citus.so');
  if (!existsSync(lib)) {
    throw new Error(
      `Citus is not installed (${lib} is missing). The Citus suite (npm run test:citus) runs on a local Citus ${CITUS_VERSION} cluster ` +
        'and never skips: build and install it with `bash ../shared/citus/install.sh` (as root), as .ci/run does.',
    );
  }
}

/**
 * Starts a coordinator and two workers and joins them; `url` connects to the coordinator, `stop()` ends all three.
 * @example const citus = await startCitus(); const store = await openPostgres(citus.url, { citus: true }); … citus.stop();
 */
export async function startCitus(): Promise<PgCluster> {
  assertCitusInstalled();
  const settings = ['shared_preload_libraries=citus', 'max_connections=100', `citus.shard_count=${SHARDS}`];
  const nodes: PgCluster[] = [];
  const stop = () => {
    for (const n of nodes.splice(0)) n.stop();
  };
  try {
    for (let i = 0; i < 3; i++) nodes.push(startCluster({ settings }));
    for (const n of nodes) await sql(n, ['CREATE EXTENSION citus']);
    const [coordinator, ...workers] = nodes as [PgCluster, ...PgCluster[]];
    await sql(coordinator, [
      `SELECT citus_set_coordinator_host('${coordinator.host}', ${coordinator.port})`,
      ...workers.map((w) => `SELECT citus_add_node('${w.host}', ${w.port})`),
    ]);
    // A crash of the coordinator alone, as a single server's restart is (the workers stay up).
    return { url: coordinator.url, host: coordinator.host, port: coordinator.port, restart: () => coordinator.restart(), stop };
  } catch (e) {
    stop();
    throw e;
  }
}

/** Runs statements on one node, on a connection of their own. */
async function sql(node: PgCluster, statements: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: node.url });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}
