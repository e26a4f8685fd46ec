/**
 * The workloads that consolidata answers through its public API the same way on every engine: one copy, spread into
 * each system (./consolidata.mjs on SQLite, ./postgres.mjs and ./citus.mjs), so they run the same calls.
 */
import { AGGREGATES, tallyRows } from '../aggregate.mjs';

/** An envelope's success, or an error naming the system and the first errors. */
export function mustOf(name) {
  return (env) => {
    if (!env.success) throw new Error(`${name}: ${env.message} ${JSON.stringify(env.errors.slice(0, 3))}`);
    return env;
  };
}

/** The shared workloads over the store `store()` gives (the current one: systems reopen it between reps). */
export function apiWorkloads(store, must) {
  const q = async (query, options) => must(await store().query('Well', query, options));
  return {
    q,
    bulkInsert: async (docs) => must(await store().insert('Well', docs)).count,
    insertOne: async (doc) => must(await store().insert('Well', [doc])).count,
    removePwis: async (list) => must(await store().delete('Well', { pwi: { in: list } })).count,
    eqPwi: async (pwi) => (await q({ pwi })).count,
    inPwi: async (list) => (await q({ pwi: { in: list } })).count,
    dateRange: async (gte, lt) => (await q({ spudDate: { gte, lt } })).count,
    numGt: async (v) => (await q({ lateralLength: { gt: v } })).count,
    regexPrefix: async (p) => (await q({ name: { regex: `^${p}` } })).count,
    bounds: async (b) => (await q({ surfaceLoc: { bounds: b } })).count,
    polygon: async (rings) => (await q({ surfaceLoc: { polygon: rings } })).count,
    async combined(b, status) {
      const r = await q({ surfaceLoc: { bounds: b }, statusCurrent: status }, { sortBy: 'spudDate', sortOrder: -1, limit: 50 });
      return `${r.count}/${r.total}`;
    },
    updateMany: async (basin, value) => must(await store().update('Well', { basinName: basin }, { statusCurrent: value })).count,
    deleteMany: async (gte, lt) => must(await store().delete('Well', { spudDate: { gte, lt } })).count,
    dpBulkInsert: async (rows) => must(await store().insert('DailyProduction', rows)).count,
    monthlyPerWell: async () => tallyRows(must(await store().aggregate('DailyProduction', {}, AGGREGATES.monthlyPerWell)).data),
    monthlyPerBasin: async () => tallyRows(must(await store().aggregate('DailyProduction', {}, AGGREGATES.monthlyPerBasin)).data),
    dpHistory: async (pwi) => must(await store().query('DailyProduction', { pwi }, { sortBy: 'prodDate' })).count,
  };
}
