import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataStore, type Envelope } from '../src/index.js';
import { hostileCases, type HostileCase } from './helpers/hostile.js';

const store = DataStore.open();
const cases = hostileCases();

function run(c: HostileCase): Promise<Envelope<unknown>> {
  const t = c.type as string;
  switch (c.op) {
    case 'query': return store.dynamic.query(t, c.query, c.options);
    case 'insert': return store.dynamic.insert(t, c.data);
    case 'replace': return store.dynamic.replace(t, c.data);
    case 'update': return store.dynamic.update(t, c.query, c.body);
    case 'delete': return store.dynamic.delete(t, c.query);
    case 'schema': return store.dynamic.schema(t);
  }
}

async function snapshot(): Promise<string> {
  return JSON.stringify((await store.query('Well', {})).data);
}

let before = '';
beforeAll(async () => {
  await store.insert('Well', [{ pwi: 'seed', extra: { x: 1 } }, { pwi: "'; DROP TABLE docs_Well; --", name: 'Robert"); DROP TABLE' }]);
  before = await snapshot();
});
afterAll(() => store.close());

describe('hostile input (library)', () => {
  it('has a corpus of at least 200 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(200);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s: a clear client error, nothing written', async (_name, c) => {
    const env = await run(c);
    expect(env.success).toBe(false);
    expect(env.errors.length).toBeGreaterThan(0);
    expect(env.errors[0]!.code).not.toBe('INTERNAL');
    expect(env.message.length).toBeGreaterThan(8);
    expect(await snapshot()).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('stores SQL-looking values verbatim and keeps its tables', async () => {
    const r = await store.query('Well', { pwi: "'; DROP TABLE docs_Well; --" });
    expect(r.data.map((d) => d.name)).toEqual(['Robert"); DROP TABLE']);
  });
});
