/** bench/report.mjs: a run of the aggregates at one size rewrites that size's rows of REPORT.md and keeps the others. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from './helpers/store.js';

interface Row {
  workload: string;
  size: number;
  system: string;
  medianMs: number;
}
type WriteAggregates = (o: { root: string; results: string; rows: Row[]; meta: { backend: string; date: string; seconds: number; mismatches: string[] } }) => void;

// A specifier of its own: the bench is plain JavaScript, outside the type check.
const report = new URL('../bench/report.mjs', import.meta.url).href;
const { writeAggregates } = (await import(report)) as { writeAggregates: WriteAggregates };

const TABLE = [
  '<!-- aggregates -->',
  '### Aggregates: monthly oil per well and per basin',
  '',
  'latest run (sqlite:10000 on 2026-01-01, sqlite:100000 on 2026-01-02, postgres:100000 on 2026-01-03).',
  '',
  '| rows | aggregate | consolidata | hand SQL | ÷ hand SQL (≤ 1.25×) | mingo | faster (≥ 10×) | LokiJS | faster (≥ 10×) | pg | pgsql | pg ÷ pgsql |',
  '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  '| 10,000 | per well and month | 9.25 | 8.07 | 1.15× met | 64.4 | 6.96× **missed** | 2.12 | 0.23× **missed** | 5.00 | 4.00 | 1.25× met |',
  '| 10,000 | per basin and month | 12.7 | 10.2 | 1.25× **missed** | 60.6 | 4.77× **missed** | 1.85 | 0.15× **missed** | n/a | n/a | – |',
  '| 100,000 | per well and month | 253 | 426 | 0.59× met | 883 | 3.50× **missed** | 62.9 | 0.25× **missed** | 343 | 284 | 1.21× met |',
  '| 100,000 | per basin and month | 241 | 338 | 0.71× met | 855 | 3.55× **missed** | 55.0 | 0.23× **missed** | 366 | 291 | 1.26× **missed** |',
  '',
  '<!-- /aggregates -->',
];

/** A root holding REPORT.md with TABLE and no results/aggregates.json (a fresh clone: results/ is not committed). */
const made: { cleanup: () => void }[] = [];
afterEach(() => made.splice(0).forEach((d) => d.cleanup()));

function root(): string {
  const t = tempDir();
  made.push(t);
  const dir = t.dir;
  mkdirSync(join(dir, 'bench'));
  writeFileSync(join(dir, 'bench', 'REPORT.md'), `# report\n\n${TABLE.join('\n')}\n`);
  return dir;
}

const rowsAt = (size: number, systems: Record<string, number>): Row[] =>
  ['agg-month-well', 'agg-month-basin'].flatMap((workload) => Object.entries(systems).map(([system, medianMs]) => ({ workload, size, system, medianMs })));

function run(dir: string, backend: string, rows: Row[]): string[] {
  vi.spyOn(console, 'log').mockImplementation(() => {});
  writeAggregates({ root: dir, results: join(dir, 'results'), rows, meta: { backend, date: '2026-02-01T00:00:00.000Z', seconds: 1, mismatches: [] } });
  vi.restoreAllMocks();
  return readFileSync(join(dir, 'bench', 'REPORT.md'), 'utf8').split('\n');
}

describe('bench report: aggregates', () => {
  it('a SQLite run at 10k rewrites the 10k rows’ SQLite cells and keeps their pg cells and every 100k row', () => {
    const dir = root();
    const lines = run(dir, 'sqlite', rowsAt(10_000, { consolidata: 2, sql: 4, mingo: 40, loki: 30 }));
    expect(lines).toContain('| 10,000 | per well and month | 2.00 | 4.00 | 0.50× met | 40.0 | 20× met | 30.0 | 15× met | 5.00 | 4.00 | 1.25× met |');
    expect(lines).toContain('| 10,000 | per basin and month | 2.00 | 4.00 | 0.50× met | 40.0 | 20× met | 30.0 | 15× met | n/a | n/a | – |');
    for (const kept of TABLE.filter((l) => l.startsWith('| 100,000'))) expect(lines).toContain(kept);
    // The runs it names: this one, and those of the rows it kept.
    const runs = lines.find((l) => l.includes('latest run ('))!;
    expect(runs).toContain('sqlite:10000 on 2026-02-01');
    expect(runs).toContain('sqlite:100000 on 2026-01-02');
    expect(runs).toContain('postgres:100000 on 2026-01-03');
  });

  it('a PostgreSQL run at 100k rewrites only the 100k rows’ pg cells', () => {
    const dir = root();
    const lines = run(dir, 'postgres', rowsAt(100_000, { pg: 300, pgsql: 300 }));
    expect(lines).toContain('| 100,000 | per well and month | 253 | 426 | 0.59× met | 883 | 3.50× **missed** | 62.9 | 0.25× **missed** | 300 | 300 | 1.00× met |');
    expect(lines).toContain('| 100,000 | per basin and month | 241 | 338 | 0.71× met | 855 | 3.55× **missed** | 55.0 | 0.23× **missed** | 300 | 300 | 1.00× met |');
    for (const kept of TABLE.filter((l) => l.startsWith('| 10,000'))) expect(lines).toContain(kept);
  });

  it('a run of some systems keeps the medians of the others and compares the new ones with them', () => {
    const dir = root();
    const lines = run(dir, 'sqlite', rowsAt(10_000, { consolidata: 2, sql: 4 }));
    expect(lines).toContain('| 10,000 | per well and month | 2.00 | 4.00 | 0.50× met | 64.4 | 32× met | 2.12 | 1.06× **missed** | 5.00 | 4.00 | 1.25× met |');
  });

  it('a size the table lacks gets rows of its own, in size order', () => {
    const dir = root();
    const lines = run(dir, 'sqlite', rowsAt(1_000_000, { consolidata: 2000, sql: 4000 }));
    const sizes = lines.filter((l) => /^\| [\d,]+ \|/.test(l)).map((l) => l.split(' | ')[0]);
    expect(sizes).toEqual(['| 10,000', '| 10,000', '| 100,000', '| 100,000', '| 1,000,000', '| 1,000,000']);
    expect(lines).toContain('| 1,000,000 | per well and month | 2000 | 4000 | 0.50× met | n/a | – | n/a | – | n/a | n/a | – |');
  });
});
