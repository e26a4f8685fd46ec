import { afterAll, describe, expect, it } from 'vitest';
import { DataStore } from '../src/index.js';

const store = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['basinName'] }] } });
afterAll(() => store.close());

/** SQLite's plan for the statement the store runs for a query. */
async function plan(query: unknown, options?: unknown): Promise<string> {
  return (await store.dynamic.explain('Well', query, options)).plan.join('\n');
}

describe('indexes', () => {
  it('uses the unique expression index for equality on pwi', async () => {
    expect(await plan({ pwi: 'W1' })).toMatch(/SEARCH docs_Well USING INDEX ux\._well\.pwi/);
  });

  it('uses an index for in-lists, ranges on indexed fields and extra indexes from options', async () => {
    expect(await plan({ pwi: ['A', 'B', 'C'] })).toMatch(/USING (COVERING )?INDEX ux\._well\.pwi/);
    expect(await plan({ wellId: { gte: 'A', lt: 'B' } })).toMatch(/USING (COVERING )?INDEX ix\._well\.well_id/);
    expect(await plan({ basinName: 'Permian' })).toMatch(/USING (COVERING )?INDEX ix\._well\.basin_name/);
  });

  it('indexes the compound key of DailyProduction and the fields users query most', async () => {
    const names = (store.database.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'docs_DailyProduction'`).pluck().all() as string[]).sort();
    expect(names).toContain('ux._daily_production.pwi.prod_date');
    expect(names).toContain('ix._daily_production.well_id');
    expect(names).toContain('ix._daily_production.prod_date');
  });

  it('binds every value: operands never appear in the SQL text', async () => {
    const x = await store.dynamic.explain('Well', { pwi: "x' OR 1=1 --", name: { regex: '/a/i' }, fracStages: { in: [1, 2] } });
    expect(x.sql).not.toContain('OR 1=1');
    expect(x.params).toContain("x' OR 1=1 --");
  });
});
