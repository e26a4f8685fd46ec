#!/usr/bin/env node
/** Diagnosis aid: the SQL the built store generates for each bench query, with SQLite's EXPLAIN QUERY PLAN. `node bench/explain.mjs` */
import { DataStore } from '../dist/index.js';
import { generateWells } from './generate.mjs';

const store = DataStore.open(':memory:', { indexes: { Well: [{ fields: ['spudDate'] }, { fields: ['basinName'] }] } });
await store.insert('Well', generateWells(2000));
const db = store.database;
const seen = [];
const prepare = db.prepare.bind(db);
// The store prepares through its statement cache: recording prepare() shows the exact SQL text.
db.prepare = (sql) => { seen.push(sql); return prepare(sql); };
const box = [-103, 31, -102, 32];
const cases = {
  'eq-pwi': [{ pwi: 'PWI-00000001' }],
  'in-100-pwi': [{ pwi: { in: ['PWI-00000001', 'PWI-00000002'] } }],
  'range-spudDate': [{ spudDate: { gte: '2019-01-01', lt: '2019-04-01' } }],
  'regex-prefix': [{ name: { regex: '^Smith' } }],
  'bounds': [{ surfaceLoc: { bounds: box } }],
  'combined': [{ surfaceLoc: { bounds: box }, statusCurrent: 'Producing' }, { sortBy: 'spudDate', sortOrder: -1, limit: 50 }],
};
for (const [name, [q, o]] of Object.entries(cases)) {
  seen.length = 0;
  await store.query('Well', q, o);
  console.log(`\n## ${name}`);
  for (const sql of seen) {
    console.log(sql);
    for (const r of prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array((sql.match(/\?/g) ?? []).length).fill(null))) console.log(`   plan: ${r.detail}`);
  }
}
store.close();
