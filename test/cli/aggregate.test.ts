/** `consolidata aggregate`: options from flags, the rows as a table or CSV, refusals on stderr with exit 1. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateOptions, formatRows } from '../../src/cli/aggregate.js';
import { DataStore } from '../../src/index.js';
import { buildCli, runCli } from './build.js';

describe('flags and formats', () => {
  it('reads group keys, buckets, metrics and the sort from flags', () => {
    expect(aggregateOptions({ groupBy: 'pwi, prodDate:month', metrics: ['oil=sum:oilVol', 'days=count:*'], sortBy: 'oil', sortOrder: -1, limit: 3 })).toEqual({
      groupBy: ['pwi', { field: 'prodDate', interval: 'month' }],
      metrics: { oil: { sum: 'oilVol' }, days: { count: '*' } },
      sortBy: ['oil'],
      sortOrder: -1,
      limit: 3,
    });
  });

  it('prints an aligned table, numbers right, nulls empty; CSV quotes what needs it', () => {
    const rows = [{ basin: 'Permian', oil: 1250.5 }, { basin: 'Eagle "Ford", TX', oil: null }];
    expect(formatRows(rows, false)).toBe(`basin${' '.repeat(16)}oil\nPermian${' '.repeat(11)}1250.5\nEagle "Ford", TX\n`);
    expect(formatRows(rows, true)).toBe('basin,oil\nPermian,1250.5\n"Eagle ""Ford"", TX",\n');
  });
});

describe('the built command', () => {
  let dir: string;
  let cli: Awaited<ReturnType<typeof buildCli>>;
  let db: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'consolidata-aggregate-'));
    cli = await buildCli();
    db = join(dir, 'prod.db');
    const store = DataStore.open(db);
    await store.insert('DailyProduction', [
      { pwi: 'A', prodDate: '2024-01-30', oilVol: 10 },
      { pwi: 'A', prodDate: '2024-02-01', oilVol: 12 },
      { pwi: 'B', prodDate: '2024-01-31', oilVol: 7.5 },
    ]);
    await store.close();
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    cli?.remove();
  });

  it('prints the groups as CSV and exits 0', async () => {
    const r = await runCli(cli.path, ['aggregate', 'DailyProduction', '--db', db, '--group-by', 'pwi,prodDate:month', '--metric', 'oil=sum:oilVol', '--csv'], dir);
    expect([r.code, r.stdout]).toEqual([0, 'pwi,prodDate,oil\nA,2024-01-01T00:00:00.000Z,10\nA,2024-02-01T00:00:00.000Z,12\nB,2024-01-01T00:00:00.000Z,7.5\n']);
  });

  it('prints a table under --limit, saying how many groups there are', async () => {
    const r = await runCli(cli.path, ['aggregate', 'DailyProduction', '--db', db, '--group-by', 'pwi', '--metric', 'oil=sum:oilVol', '--sort-by', 'oil', '--sort-order', '-1', '--limit', '1'], dir);
    expect([r.code, r.stdout]).toEqual([0, 'pwi  oil\nA     22\n']);
    expect(r.stderr).toContain('1 of 2 groups');
  });

  it('a refused request prints the store message and exits 1', async () => {
    const r = await runCli(cli.path, ['aggregate', 'DailyProduction', '--db', db, '--metric', 'x=sum:pwi'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('options.metrics.x.sum: sum takes a numeric field');
  });
});
