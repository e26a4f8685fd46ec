/** SQLite's hooks for summaries (src/sql/aggregate.ts): date buckets on the stored ISO text, JSON values by type class. */
import type { Step } from '../query/ast.js';
import { instant, type SummaryHooks } from '../sql/aggregate.js';
import { jsonPath } from './dialect.js';

/** MongoDB's order of types as a number (numbers, strings, objects, arrays, booleans); NULL for null and missing. */
function typeClass(type: string): string {
  return `(CASE ${type} WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'false' THEN 5 WHEN 'true' THEN 5 END)`;
}

/** SQLite's summary hooks. */
export const SQLITE_SUMMARY: SummaryHooks = {
  bucket(x, interval) {
    switch (interval) {
      case 'day':
        return instant(`substr(${x}, 1, 10)`, '');
      case 'week':
        // 'weekday 0' moves to the next Sunday (or stays on one): six days before it is the week's Monday.
        return instant(`date(${x}, 'weekday 0', '-6 days')`, '');
      case 'month':
        return instant(`substr(${x}, 1, 7)`, '-01');
      case 'quarter':
        return instant(`substr(${x}, 1, 5) || printf('%02d', ((CAST(substr(${x}, 6, 2) AS INTEGER) - 1) / 3) * 3 + 1)`, '-01');
      case 'year':
        return instant(`substr(${x}, 1, 4)`, '-01-01');
    }
  },
  // The stored JSON text of the value, exactly (a real keeps every digit): one read of the document per row.
  json: (steps) => `(doc -> ${jsonPath(steps)})`,
  key(json) {
    const c = (g: string) => typeClass(`json_type(${g})`);
    return {
      group: `NULLIF(${json}, 'null')`,
      out: (g) => [c(g), `json_extract(${g}, '$')`],
      order: (g) => [c(g), `json_extract(${g}, '$')`],
      // json_extract answers booleans as 1/0 and objects and arrays as their JSON text.
      decode: ([cls, value]) => (cls === null ? null : cls === 5 ? value === 1 : cls === 3 || cls === 4 ? JSON.parse(value as string) : value),
    };
  },
  elements(steps) {
    // One array per step, as MongoDB's distinct reads a path: an array fans out one level into its elements, and only
    // objects among them go on to the next step (an array inside an array is one value at the leaf, nothing before).
    const unwound = (base: string, step: Step) => {
      const p = jsonPath([step]);
      return `(CASE json_type(${base}, ${p}) WHEN 'array' THEN ${base} -> ${p} ELSE json_array(${base} -> ${p}) END)`;
    };
    if (steps.length === 1) {
      const values = unwound('m.doc', steps[0]!);
      return { from: `json_each${values} AS e`, json: `(${values} -> e.fullkey)` };
    }
    const from = [`json_each${unwound('m.doc', steps[0]!)} AS n1`];
    for (let i = 1; i < steps.length - 1; i++) from.push(`json_each(CASE n${i}.type WHEN 'object' THEN ${unwound(`n${i}.value`, steps[i]!)} ELSE '[]' END) AS n${i + 1}`);
    const n = `n${steps.length - 1}`;
    const values = `(CASE ${n}.type WHEN 'object' THEN ${unwound(`${n}.value`, steps[steps.length - 1]!)} ELSE '[]' END)`;
    from.push(`json_each${values} AS e`);
    return { from: from.join(', '), json: `(${values} -> e.fullkey)` };
  },
  // SQLite's integer sum() fails past 2^63; the answer is a JavaScript number anyway.
  sum: (x) => `sum(CAST(${x} AS REAL))`,
};
