#!/usr/bin/env node
/** The `consolidata` command: serve, import, export, aggregate. */
import { Command, InvalidArgumentError } from 'commander';
// Inlined by the bundler: the built dist/cli.js knows its version wherever it is run from.
import pkg from '../../package.json' with { type: 'json' };
import { aggregateCommand } from './aggregate.js';
import { exportCommand, importCommand } from './commands.js';
import { shownDb, typesFlag, type JournalOptions } from './db.js';
import { serve } from './serve.js';

function integer(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return n;
  };
}

function fatal(message: string): never {
  process.stderr.write(`consolidata: ${message}\n`);
  process.exit(1);
}

/** The `--query` option's JSON (every document when absent); malformed JSON ends the command. */
function queryOption(text: string | undefined): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    return fatal(`--query: malformed JSON (${(e as Error).message})`);
  }
}

const program = new Command('consolidata')
  .description('Consolidated Data Service API over SQLite or PostgreSQL: serve a store over HTTP, import and export documents')
  .version(pkg.version, '-V, --version', 'print the version')
  .showHelpAfterError();

program
  .command('serve')
  .description('serve a store over HTTP (both route families under /api)')
  .option('--db <file|url>', 'SQLite file (created if missing), or postgres://…[?schema=name] (a PostgreSQL database)', './consolidata.db')
  .option('--port <port>', 'TCP port', integer('--port', 0, 65535), 8080)
  .option('--host <host>', 'interface to bind', '127.0.0.1')
  .option('--sample', 'load the bundled sample data when the Well table is empty')
  .option('--basic-auth <file>', 'JSON file { "appId": "secret", … }: require HTTP Basic auth')
  .option('--workers <n>', 'SQLite: worker threads that serve reads (default: the CPU count; 0: every request on the main thread)', integer('--workers', 0, 256))
  .option('--max-query-ms <ms>', 'SQLite: stop a request after this long and answer 503 TIMEOUT (0: never)', integer('--max-query-ms', 0, 2 ** 31 - 1), 30_000)
  .option('--history <types>', "keep a VersionDocument per change of these types (comma-separated, or 'all'); stays on in the database")
  .option('--change-feed', 'keep change events, served at GET /api/data/changes; stays on in the database')
  .option('--feed-buffer-bytes <bytes>', 'bytes of change events a feed subscriber (an SSE stream, a long poll) may hold unread before it is dropped (default 8388608)', integer('--feed-buffer-bytes', 1))
  .option('--activity-log', 'write an ActivityLog document per write request')
  .option('--soft-delete <types>', "delete stamps these types' documents instead of removing them (comma-separated, or 'all'); stays on in the database")
  .option('--mmap-size <bytes>', 'SQLite: bytes of the file mapped for reads (default 2147483648; 0: read through read() alone, for a file the OS does not keep cached)', integer('--mmap-size', 0))
  .action(async (o: { db: string; port: number; host: string; sample?: boolean; basicAuth?: string; workers?: number; maxQueryMs: number; history?: string; changeFeed?: boolean; feedBufferBytes?: number; activityLog?: boolean; softDelete?: string; mmapSize?: number }) => {
    let running;
    const journal = {
      ...(o.history ? { history: typesFlag(o.history) } : {}),
      ...(o.changeFeed ? { changeFeed: true } : {}),
      ...(o.feedBufferBytes !== undefined ? { feedBufferBytes: o.feedBufferBytes } : {}),
      ...(o.activityLog ? { activityLog: true } : {}),
      ...(o.softDelete ? { softDelete: typesFlag(o.softDelete) } : {}),
    } as JournalOptions;
    try {
      running = await serve({ db: o.db, port: o.port, host: o.host, sample: o.sample, basicAuthFile: o.basicAuth, workers: o.workers, maxQueryMs: o.maxQueryMs, journal, mmapSize: o.mmapSize });
    } catch (e) {
      fatal((e as Error).message);
    }
    const { url, stop } = running;
    if (!o.basicAuth && !['127.0.0.1', 'localhost', '::1'].includes(o.host)) {
      process.stderr.write(`consolidata: warning: serving ${o.host} without authentication (see --basic-auth)\n`);
    }
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`consolidata: ${signal}, shutting down\n`);
      stop().then(
        () => process.exit(0),
        (e: unknown) => fatal(`shutdown: ${(e as Error).message}`),
      );
    };
    // Handlers first: whoever reads the URL may signal at once.
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.stdout.write(`consolidata: serving ${shownDb(o.db)} at ${url}  (try ${url}/data/types)\n`);
  });

program
  .command('import')
  .description('import a JSON array or NDJSON file; exit 0 all imported, 2 some lines skipped, 1 aborted or failed, 130 interrupted')
  .argument('<type>', 'document type, e.g. Well')
  .argument('<file>', 'JSON array or NDJSON file ("-" for stdin)')
  .option('--db <file|url>', 'SQLite file (must exist unless --create), or postgres://…[?schema=name] (the database must exist)', './consolidata.db')
  .option('--create', 'create the database file if it does not exist')
  .option('--batch <n>', 'documents per transaction', integer('--batch', 1), 1000)
  .option('--upsert', 'replace documents by id, so running an import again changes nothing (documents without id are inserted)')
  .option('--abort-on-error', 'stop at the first bad line (its batch is not written) and exit 1')
  .option('--atomic', 'the whole file in one transaction, indexes rebuilt once at the end (fastest for large files): the first bad line writes nothing, exit 1')
  .action(async (type: string, file: string, o: { db: string; create?: boolean; batch: number; upsert?: boolean; abortOnError?: boolean; atomic?: boolean }) => {
    // Ctrl-C once: stop reading, write what was read, print the summary (exit 130). Twice: the default, quit now.
    const interrupt = new AbortController();
    process.once('SIGINT', () => interrupt.abort());
    process.exitCode = await importCommand({
      type,
      file,
      db: o.db,
      create: o.create,
      batch: o.batch,
      upsert: o.upsert,
      abortOnError: o.abortOnError,
      atomic: o.atomic,
      stderr: process.stderr,
      stdin: process.stdin,
      signal: interrupt.signal,
    });
    // An interrupted run ends now, stdin or a pending read included.
    if (interrupt.signal.aborted) process.exit();
  });

program
  .command('export')
  .description('write a type\'s documents to stdout as NDJSON')
  .argument('<type>', 'document type, e.g. Well')
  .option('--db <file|url>', 'SQLite file (must exist), or postgres://…[?schema=name]', './consolidata.db')
  .option('--query <json>', 'query object, e.g. \'{"basinName":"Permian"}\'')
  .option('--sort-by <paths>', 'field paths to order the lines by, most significant first, e.g. pwi,prodDate')
  .option('--sort-order <orders>', '1 or -1: one for every --sort-by path, or one each, e.g. 1,-1')
  .action(async (type: string, o: { db: string; query?: string; sortBy?: string; sortOrder?: string }) => {
    const query = queryOption(o.query);
    // A closed pipe (`| head`) ends the export quietly.
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      fatal(e.message);
    });
    // Lists as the store takes them (a single path or order as itself); the store checks them.
    const list = (v: string, f: (x: string) => unknown) => (v.includes(',') ? v.split(',').map(f) : f(v));
    const sort = {
      ...(o.sortBy !== undefined ? { sortBy: list(o.sortBy, (x) => x.trim()) } : {}),
      ...(o.sortOrder !== undefined ? { sortOrder: list(o.sortOrder, (x) => (/^\s*-?\d+\s*$/.test(x) ? Number(x) : x)) } : {}),
    };
    process.exitCode = await exportCommand({ type, db: o.db, query, sort, stdout: process.stdout, stderr: process.stderr });
  });

program
  .command('aggregate')
  .description("print a type's groups and metrics as a table (or CSV), computed by the database")
  .argument('<type>', 'document type, e.g. DailyProduction')
  .option('--db <file|url>', 'SQLite file (must exist), or postgres://…[?schema=name]', './consolidata.db')
  .option('--query <json>', 'query object, e.g. \'{"prodDate":{"gte":"2024-01-01"}}\'')
  .option('--group-by <keys>', "group keys, comma-separated: fields, or a DateTime field and an interval (day, week, month, quarter, year), e.g. 'pwi,prodDate:month'")
  .option('--metric <name=fn:field>', "a metric (repeatable): sum, avg, min, max, count or countDistinct of a field, e.g. 'oil=sum:oilVol', 'days=count:*'", (v: string, all: string[]) => [...all, v], [] as string[])
  .option('--sort-by <names>', 'group keys or metrics to sort by, comma-separated (then every group key)')
  .option('--sort-order <order>', '1 ascending (default) or -1 descending', (v: string) => {
    if (v !== '1' && v !== '-1') throw new InvalidArgumentError('--sort-order must be 1 or -1');
    return Number(v) as 1 | -1;
  })
  .option('--limit <n>', 'rows at most (default: every group)', integer('--limit', 1))
  .option('--csv', 'CSV with a header line instead of a table')
  .action(async (type: string, o: { db: string; query?: string; groupBy?: string; metric: string[]; sortBy?: string; sortOrder?: 1 | -1; limit?: number; csv?: boolean }) => {
    const query = queryOption(o.query);
    process.exitCode = await aggregateCommand({ type, db: o.db, query, groupBy: o.groupBy, metrics: o.metric, sortBy: o.sortBy, sortOrder: o.sortOrder, limit: o.limit, csv: o.csv, stdout: process.stdout, stderr: process.stderr });
  });

program.parseAsync(process.argv).catch((e: unknown) => fatal((e as Error).message));
