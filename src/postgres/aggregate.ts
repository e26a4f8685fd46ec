/** PostgreSQL's hooks for summaries (src/sql/aggregate.ts): date buckets on the stored ISO text, JSON values as jsonb. */
import type { SummaryHooks } from '../sql/aggregate.js';
import { postgres } from './dialect.js';

/** What a bucket appends to its date part: the rest of the first instant, as the store writes dates. */
const MIDNIGHT = "'T00:00:00.000Z'";

/** PostgreSQL's summary hooks. */
export const POSTGRES_SUMMARY: SummaryHooks = {
  bucket(x, interval) {
    switch (interval) {
      case 'day':
        return `(left(${x}, 10) || ${MIDNIGHT})`;
      case 'week':
        // On a date, not a timestamp: no session time zone takes part.
        return `(to_char(left(${x}, 10)::date - (extract(isodow FROM left(${x}, 10)::date)::int - 1), 'YYYY-MM-DD') || ${MIDNIGHT})`;
      case 'month':
        return `(left(${x}, 7) || '-01' || ${MIDNIGHT})`;
      case 'quarter':
        return `(left(${x}, 5) || lpad((((substr(${x}, 6, 2)::int - 1) / 3) * 3 + 1)::text, 2, '0') || '-01' || ${MIDNIGHT})`;
      case 'year':
        return `(left(${x}, 4) || '-01-01' || ${MIDNIGHT})`;
    }
  },
  key(v) {
    const x = `NULLIF(${v.value}, 'null'::jsonb)`;
    const t = `jsonb_typeof(${x})`;
    // MongoDB's order of types, then numbers by value and the rest by their text in UTF-8 byte order.
    const rank = `(CASE ${t} WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'boolean' THEN 5 END)`;
    const num = `(CASE WHEN ${t} = 'number' THEN (${x})::numeric END)`;
    const str = `((CASE WHEN ${t} IN ('string', 'boolean') THEN ${x} #>> '{}' ELSE (${x})::text END) COLLATE "C")`;
    return {
      group: [x],
      order: [rank, num, str],
      out: [`(${x})::text`],
      decode: ([text]) => (text === null ? null : JSON.parse(text as string)),
      distinct: x,
    };
  },
  elements(steps) {
    const y = postgres.doc.at('m.doc', steps).value;
    return {
      from: `jsonb_array_elements(CASE WHEN jsonb_typeof(${y}) = 'array' THEN ${y} ELSE jsonb_build_array(${y}) END) AS e(v)`,
      element: { type: 'jsonb_typeof(e.v)', value: 'e.v' },
    };
  },
  sum: (x) => `sum(${x})`,
};
