/** `consolidata aggregate`: an aggregate's rows as an aligned table or CSV, its options from flags. */
import type { Writable } from 'node:stream';
import type { MessageStream } from './commands.js';
import { withDb } from './db.js';

export interface AggregateCommand {
  type: string;
  db: string;
  query?: unknown;
  /** Group keys, comma-separated: `pwi,prodDate:month` (a field, or a DateTime field and its interval). */
  groupBy?: string;
  /** Metrics, each `name=function:field` (`days=count:*`). */
  metrics?: readonly string[];
  /** Sort keys, comma-separated group keys or metric names. */
  sortBy?: string;
  sortOrder?: 1 | -1;
  limit?: number;
  csv?: boolean;
  stdout: Writable;
  stderr: MessageStream;
}

/**
 * The aggregate options the flags say; a flag the store would refuse is passed on as written, for its message.
 * @example aggregateOptions({ groupBy: 'pwi,prodDate:month', metrics: ['oil=sum:oilVol'] }) // { groupBy: ['pwi', { field: 'prodDate', interval: 'month' }], metrics: { oil: { sum: 'oilVol' } } }
 */
export function aggregateOptions(o: Pick<AggregateCommand, 'groupBy' | 'metrics' | 'sortBy' | 'sortOrder' | 'limit'>): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (o.groupBy) {
    options.groupBy = o.groupBy.split(',').map((k) => {
      const [field, interval] = k.trim().split(':');
      return interval === undefined ? field : { field, interval };
    });
  }
  if (o.metrics?.length) {
    options.metrics = Object.fromEntries(
      o.metrics.map((m) => {
        const at = m.indexOf('=');
        const [fn, field] = m.slice(at + 1).split(/:(.*)/s);
        return [m.slice(0, at), { [fn!]: field ?? '' }];
      }),
    );
  }
  if (o.sortBy) options.sortBy = o.sortBy.split(',').map((s) => s.trim());
  if (o.sortOrder !== undefined) options.sortOrder = o.sortOrder;
  if (o.limit !== undefined) options.limit = o.limit;
  return options;
}

/** A value as a cell: text as it is, null and missing empty, anything else its JSON. */
function cell(v: unknown): string {
  return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
}

/** A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The rows as text: CSV with a header line, or a table whose columns are as wide as their widest cell (numbers
 * aligned right).
 * @example formatRows([{ pwi: 'W1', oil: 10 }], false) // 'pwi  oil\nW1    10\n'
 */
export function formatRows(rows: readonly Record<string, unknown>[], csv: boolean): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  if (csv) return [columns, ...cells].map((line) => line.map(csvField).join(',')).join('\n') + '\n';
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((line) => line[i]!.length)));
  const numeric = columns.map((c) => rows.every((r) => typeof r[c] === 'number' || r[c] === null));
  const line = (values: string[]) => values.map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(columns), ...cells.map(line)].join('\n') + '\n';
}

/**
 * `consolidata aggregate`: prints the rows and answers the exit code (0, or 1 refused or failed).
 * @example process.exitCode = await aggregateCommand({ type: 'DailyProduction', db: 'prod.db', groupBy: 'pwi', metrics: ['oil=sum:oilVol'], stdout: process.stdout, stderr: process.stderr });
 */
export async function aggregateCommand(o: AggregateCommand): Promise<number> {
  const say = (line: string) => o.stderr.write(`consolidata: ${line}\n`);
  return withDb(o.db, { hint: 'check --db' }, say, async (store) => {
    const answer = await store.aggregate(o.type, o.query ?? {}, aggregateOptions(o));
    if (!answer.success) {
      for (const e of answer.errors) say(e.message);
      return 1;
    }
    o.stdout.write(formatRows(answer.data, o.csv === true));
    if (answer.total > answer.data.length) say(`${answer.data.length} of ${answer.total} groups (raise --limit for more)`);
    return 0;
  });
}
