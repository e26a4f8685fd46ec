/** PostgreSQL's hooks for summaries (src/sql/aggregate.ts): date buckets on the stored ISO text, JSON values as jsonb. */
import { instant, type SummaryHooks } from '../sql/aggregate.js';
import { jsonbUnwound, postgres } from './dialect.js';

/** PostgreSQL's summary hooks. */
export const POSTGRES_SUMMARY: SummaryHooks = {
  bucket(x, interval) {
    switch (interval) {
      case 'day':
        return instant(`left(${x}, 10)`, '');
      case 'week':
        // On a date, not a timestamp: no session time zone takes part.
        return instant(`to_char(left(${x}, 10)::date - (extract(isodow FROM left(${x}, 10)::date)::int - 1), 'YYYY-MM-DD')`, '');
      case 'month':
        return instant(`left(${x}, 7)`, '-01');
      case 'quarter':
        return instant(`left(${x}, 5) || lpad((((substr(${x}, 6, 2)::int - 1) / 3) * 3 + 1)::text, 2, '0')`, '-01');
      case 'year':
        return instant(`left(${x}, 4)`, '-01-01');
    }
  },
  json: (steps) => postgres.doc.at('doc', steps).value,
  key(json) {
    // Grouped by its text (hashing text is cheaper than jsonb, and both engines then group by the JSON text), read
    // back as jsonb once per group.
    const j = (g: string) => `(${g})::jsonb`;
    const t = (g: string) => `jsonb_typeof(${j(g)})`;
    return {
      group: `(NULLIF(${json}, 'null'::jsonb))::text`,
      out: (g) => [g],
      // MongoDB's order of types, then numbers by value and the rest by their text in UTF-8 byte order.
      order: (g) => [
        `(CASE ${t(g)} WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'boolean' THEN 5 END)`,
        `(CASE WHEN ${t(g)} = 'number' THEN ${j(g)}::numeric END)`,
        `((CASE WHEN ${t(g)} IN ('string', 'boolean') THEN ${j(g)} #>> '{}' ELSE ${g} END) COLLATE "C")`,
      ],
      decode: ([text]) => (text === null ? null : JSON.parse(text as string)),
    };
  },
  elements(steps) {
    if (steps.length > 1) return { from: `jsonb_array_elements(${jsonbUnwound('m.doc', steps)}) AS e(v)`, json: 'e.v' };
    const y = postgres.doc.at('m.doc', steps).value;
    return { from: `jsonb_array_elements(CASE WHEN jsonb_typeof(${y}) = 'array' THEN ${y} ELSE jsonb_build_array(${y}) END) AS e(v)`, json: 'e.v' };
  },
  sum: (x) => `sum(${x})`,
};
