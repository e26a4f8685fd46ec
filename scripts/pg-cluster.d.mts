/** A throwaway server (see pg-cluster.mjs). */
export interface PgCluster {
  /** A connection string for the `postgres` database over the Unix socket. */
  readonly url: string;
  /** The socket directory and port, for clients that take them apart. */
  readonly host: string;
  readonly port: number;
  /** `postgres --version`, or the Citus version of a cluster. */
  readonly version: string;
  /** Restarts the server as a crash would (`pg_ctl restart -m immediate`): every connection drops; resolves once it is back. */
  restart(): Promise<void>;
  stop(): void;
}

export interface ClusterOptions {
  /** Commit synchronously, so a crash (an immediate restart, a killed backend) loses no acknowledged commit. */
  durable?: boolean;
  /** fsync and full-page writes off, small buffers: for tests about answers (default true). */
  throwaway?: boolean;
  /** More server settings (`name=value`, as `-c` takes them), after the defaults (a later one wins). */
  settings?: readonly string[];
}

export const CITUS_VERSION: string;
export function pgBin(): string;
export function startCluster(options?: ClusterOptions): PgCluster;
export function assertCitusInstalled(): void;
export function startCitus(options?: Omit<ClusterOptions, 'durable'> & { shards?: number }): Promise<PgCluster>;
