/** The `consolidata` command: serve, import, export. */
import { createReadStream, statSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { DynamicStore } from '../dynamic.js';
import { runExport } from './export.js';
import { importExitCode, runImport } from './import.js';
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

const program = new Command('consolidata')
  .description('Consolidated Data Service API over SQLite: serve a store over HTTP, import and export documents')
  .showHelpAfterError();

program
  .command('serve')
  .description('serve a store over HTTP (both route families under /api)')
  .option('--db <file>', 'SQLite file (created if missing)', './consolidata.db')
  .option('--port <port>', 'TCP port', integer('--port', 0, 65535), 8080)
  .option('--host <host>', 'interface to bind', '127.0.0.1')
  .option('--sample', 'load the bundled sample data when the Well table is empty')
  .option('--basic-auth <file>', 'JSON file { "appId": "secret", … }: require HTTP Basic auth')
  .action(async (o: { db: string; port: number; host: string; sample?: boolean; basicAuth?: string }) => {
    let running;
    try {
      running = await serve({ db: o.db, port: o.port, host: o.host, sample: o.sample, basicAuthFile: o.basicAuth });
    } catch (e) {
      fatal((e as Error).message);
    }
    const { url, stop } = running;
    if (!o.basicAuth && !['127.0.0.1', 'localhost', '::1'].includes(o.host)) {
      process.stderr.write(`consolidata: warning: serving ${o.host} without authentication (see --basic-auth)\n`);
    }
    process.stdout.write(`consolidata: serving ${o.db} at ${url}  (try ${url}/data/types)\n`);
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
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
  });

program
  .command('import')
  .description('import a JSON array or NDJSON file; exit 0 all imported, 2 some lines skipped, 1 aborted or failed')
  .argument('<type>', 'document type, e.g. Well')
  .argument('<file>', 'JSON array or NDJSON file ("-" for stdin)')
  .option('--db <file>', 'SQLite file', './consolidata.db')
  .option('--batch <n>', 'documents per transaction', integer('--batch', 1), 1000)
  .option('--abort-on-error', 'stop at the first bad line (its batch is not written) and exit 1')
  .action(async (type: string, file: string, o: { db: string; batch: number; abortOnError?: boolean }) => {
    let size = 0;
    try {
      if (file !== '-') size = statSync(file).size;
    } catch (e) {
      fatal(`${file}: ${(e as Error).message}`);
    }
    const store = DynamicStore.open(o.db);
    const schema = await store.schema(type);
    if (!schema.success) {
      store.close();
      fatal(schema.message);
    }
    const bar = process.stderr.isTTY && size > 0 ? new SingleBar({ stream: process.stderr, format: 'importing {bar} {percentage}% | {value}/{total} bytes' }, Presets.shades_classic) : undefined;
    bar?.start(size, 0);
    const input = file === '-' ? process.stdin : createReadStream(file);
    let summary;
    try {
      summary = await runImport({ store, type, input, errors: process.stderr, batch: o.batch, abortOnError: o.abortOnError, onProgress: (n) => bar?.update(n) });
    } catch (e) {
      bar?.stop();
      store.close();
      fatal((e as Error).message);
    }
    bar?.stop();
    store.close();
    const verb = summary.aborted ? 'aborted' : 'done';
    process.stderr.write(`consolidata import ${verb}: ${summary.imported} imported, ${summary.skipped} skipped, ${summary.read} read\n`);
    process.exitCode = importExitCode(summary);
  });

program
  .command('export')
  .description('write a type\'s documents to stdout as NDJSON')
  .argument('<type>', 'document type, e.g. Well')
  .option('--db <file>', 'SQLite file', './consolidata.db')
  .option('--query <json>', 'query object, e.g. \'{"basinName":"Permian"}\'')
  .action(async (type: string, o: { db: string; query?: string }) => {
    let query: unknown = {};
    if (o.query !== undefined) {
      try {
        query = JSON.parse(o.query);
      } catch (e) {
        fatal(`--query: malformed JSON (${(e as Error).message})`);
      }
    }
    // A closed pipe (`| head`) ends the export quietly.
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      fatal(e.message);
    });
    const store = DynamicStore.open(o.db);
    const { exported, failure } = await runExport({ store, type, query, output: process.stdout });
    store.close();
    if (failure) fatal(failure.message);
    process.stderr.write(`consolidata export: ${exported} documents\n`);
  });

program.parseAsync(process.argv).catch((e: unknown) => fatal((e as Error).message));
