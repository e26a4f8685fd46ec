import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataStore, unwrap } from '../../src/index.js';

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
