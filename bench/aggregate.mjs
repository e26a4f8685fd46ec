/**
 * The aggregate workloads' shared parts: their DailyProduction rows (each with its well's basin under
 * `extra.basin`), the store's aggregate options, and the tally every system answers, so results are compared.
 */
import { generateDaily, generateWells } from './generate.mjs';

/** `n` DailyProduction rows (n / 100 wells × 100 days), each carrying its well's basin. */
export function aggregateRows(n) {
  const rows = generateDaily(n, { seed: 11 });
  const basins = new Map(generateWells(Math.ceil(n / 100)).map((w) => [w.pwi, w.basinName]));
  for (const d of rows) d.extra = { basin: basins.get(d.pwi) };
  return rows;
}

const MONTH = { field: 'prodDate', interval: 'month' };
/** The store's options for each workload. */
export const AGGREGATES = {
  monthlyPerWell: { groupBy: ['pwi', MONTH], metrics: { oil: { sum: 'oilVol' } } },
  monthlyPerBasin: { groupBy: ['extra.basin', MONTH], metrics: { oil: { sum: 'oilVol' } } },
};

/** What a system answers for a workload: the groups, and the oil over them to the barrel. */
export const tally = (groups, oil) => `${groups}/${Math.round(oil)}`;
export const tallyRows = (rows, key = 'oil') => tally(rows.length, rows.reduce((a, r) => a + (r[key] ?? 0), 0));
