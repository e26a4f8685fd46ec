import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { DataStore, unwrap, type DynamicStore, type Envelope } from '../../src/index.js';

/** A temp folder for file stores, removed by the returned cleanup. */
export function tempDir(): { dir: string; file: (name?: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'consolidata-'));
  return { dir, file: (name = 'store.db') => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Ids of a query's page, in order. */
export async function ids(store: DataStore, type: string, query: unknown = {}, options?: unknown): Promise<string[]> {
  return unwrap(await store.dynamic.query(type, query, options)).map((d) => d.id as string);
}

/** Every document of a type, in insertion order. */
export async function all(store: DataStore, type: string): Promise<Record<string, unknown>[]> {
  return unwrap(await store.dynamic.query(type, {}));
}

/**
 * Every page of a Well query followed by cursor: the ids in order and each page's total. Each page but the last is
 * full (`options.limit` documents); a cursor that never ends fails after 1,000 pages.
 * @example const { ids } = await cursorPages(store.dynamic, {}, { sortBy: 'spudDate', limit: 3 });
 */
export async function cursorPages(store: DynamicStore, query: unknown, options: Record<string, unknown>): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const page: Envelope<Record<string, unknown>> = await store.query('Well', query, { ...options, ...(cursor ? { cursor } : {}) });
    expect(page.success, page.message).toBe(true);
    ids.push(...page.data.map((d) => d.id as string));
    totals.push(page.total);
    if (!page.hasCursor) return { ids, totals };
    expect(page.data).toHaveLength(options.limit as number);
    cursor = page.cursor!;
  }
  throw new Error('cursor paging did not end');
}
