/**
 * The query case table, run through the store (SQL) on every backend (SQLite, PostgreSQL), the reference evaluator,
 * and mingo as a second opinion.
 */
import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import { normalizeDate } from '../src/catalogue/dates.js';
import { backends, type StoreBackend } from './helpers/backends.js';
import { CASES, ERROR_CASES, WELL_DATE_FIELDS, WELLS, type QueryCase } from './helpers/cases.js';
import { evaluate, type Doc } from './helpers/reference.js';

/** JSON for test names, with RegExp and Date operands readable. */
function show(v: unknown): string {
  const text = JSON.stringify(v, function (this: Record<string, unknown>, k, x) {
    const raw = this[k];
    return raw instanceof RegExp ? String(raw) : raw instanceof Date ? `Date(${raw.toISOString()})` : x;
  });
  // Cases of the size bounds carry megabytes of query: a test name shows its start.
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

const MONGO_OPS: Record<string, string> = { eq: '$eq', ne: '$ne', in: '$in', lt: '$lt', lte: '$lte', gt: '$gt', gte: '$gte', regex: '$regex' };

/** The README query as a MongoDB filter (a plain array is `in` here, as the README has it); date operands as stored. */
function toMongo(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, cond] of Object.entries(query)) {
    const isDate = WELL_DATE_FIELDS.includes(key);
    const norm = (v: unknown) => (v instanceof Date ? v.toISOString() : isDate && v !== null ? normalizeDate(v) : v);
    if (Array.isArray(cond)) out[key] = { $in: cond.map(norm) };
    else if (cond !== null && typeof cond === 'object' && !(cond instanceof Date) && !(cond instanceof RegExp)) {
      out[key] = Object.fromEntries(Object.entries(cond).map(([op, v]) => [MONGO_OPS[op.toLowerCase()]!, Array.isArray(v) ? v.map(norm) : norm(v)]));
    } else out[key] = { $eq: norm(cond) };
  }
  return out;
}

interface Run {
  stored: Doc[];
  ids: string[];
  total: number;
}

/** Extra expression indexes: the planner then reads them instead of scanning, and answers must not change. */
const INDEXES = { Well: ['basinName', 'fracStages', 'lateralLength', 'isVirtual', 'spudDate', 'groups', 'extra'].map((f) => ({ fields: [f] })) };

async function runStore(backend: StoreBackend, c: QueryCase, indexed: boolean): Promise<Run> {
  const store = await backend.open({ strict: c.strict ?? true, ...(indexed ? { indexes: INDEXES } : {}) });
  try {
    const ins = await store.dynamic.insert('Well', c.docs as Doc[]);
    expect(ins.errors).toEqual([]);
    expect(ins.count).toBe(c.docs.length);
    const all = await store.query('Well', {});
    const r = await store.dynamic.query('Well', c.query, c.options);
    expect(r.errors).toEqual([]);
    expect(r.success).toBe(true);
    expect(r.count).toBe(r.data.length);
    return { stored: all.data as Doc[], ids: r.data.map((d) => d.id as string), total: r.total };
  } finally {
    await store.close();
  }
}

describe.each(backends())('$name', (backend) => {
describe('query case table', () => {
  for (const c of CASES) {
    it(`${c.name}: ${show(c.query)}${c.options ? ` ${show(c.options)}` : ''} → [${c.expected.join(', ')}]`, async () => {
      const total = c.total ?? c.expected.length;
      const store = await runStore(backend, c, false);
      expect({ ids: store.ids, total: store.total }, 'store').toEqual({ ids: c.expected, total });
      const indexed = await runStore(backend, c, true);
      expect({ ids: indexed.ids, total: indexed.total }, 'store with expression indexes').toEqual({ ids: c.expected, total });

      const ref = evaluate(store.stored, c.query, c.options, { dateFields: WELL_DATE_FIELDS });
      expect(ref, 'reference evaluator').toEqual({ ids: c.expected, total });

      if (c.mingo === 'agrees') {
        let cursor = new Query(toMongo(c.query)).find<Doc>(store.stored);
        if (c.options?.skip) cursor = cursor.skip(c.options.skip);
        if (c.options?.limit) cursor = cursor.limit(c.options.limit);
        expect(cursor.all().map((d) => d.id), 'mingo').toEqual(c.expected);
      }
    });
  }
});

describe('query errors', () => {
  for (const e of ERROR_CASES) {
    it(`${e.name}: ${show(e.query)}${e.options ? ` ${show(e.options)}` : ''} → ${e.code} on ${e.field}`, async () => {
      const store = await backend.open({ strict: e.strict ?? true });
      try {
        await store.insert('Well', WELLS as Doc[]);
        const r = await store.dynamic.query('Well', e.query, e.options);
        expect(r.success).toBe(false);
        expect(r.data).toEqual([]);
        expect(r.hasErrors).toBe(true);
        expect(r.errors.map((x) => [x.code, x.field])).toContainEqual([e.code, e.field]);
        const message = r.errors.map((x) => x.message).join('\n');
        for (const part of e.message) expect(message).toContain(part);
      } finally {
        await store.close();
      }
    });
  }
});
});
