/** Shared by the pool's tests: the worker script bundled from sources, test-only entry points, and bulk data. */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { build } from 'esbuild';
import { DynamicStore } from '../../src/store.js';

export const root = resolve(import.meta.dirname, '../..');

const bundles = new Map<string, Promise<string>>();
const dirs: string[] = [];

/**
 * Bundles a TypeScript entry into a plain Node script under node_modules/.cache (so it resolves better-sqlite3),
 * dependencies external as in dist/. Once per test file and entry.
 * @example const script = await bundle('src/pool/worker.ts');
 */
export function bundle(entry: string, name = 'pool-worker'): Promise<string> {
  const key = `${entry}:${name}`;
  let out = bundles.get(key);
  if (!out) {
    out = (async () => {
      // Inside the project, so bundles resolve its node_modules; CONSOLIDATA_BUNDLE_DIR puts them beside another
      // node_modules instead, to try a candidate version of a native dependency.
      const base = process.env.CONSOLIDATA_BUNDLE_DIR ?? join(root, 'node_modules/.cache');
      mkdirSync(base, { recursive: true });
      const dir = mkdtempSync(join(base, 'consolidata-pool-'));
      dirs.push(dir);
      const path = join(dir, `${name}.mjs`);
      await build({ entryPoints: [join(root, entry)], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: path, logLevel: 'error' });
      return path;
    })();
    bundles.set(key, out);
  }
  return out;
}

/** The pool's worker script, as tsup's `pool-worker` entry will build it. */
export function workerScript(): Promise<string> {
  return bundle('src/pool/worker.ts');
}

/** A worker that exits (a crash, as the pool sees it) when asked to query the type `__crash__`; otherwise the real one. */
export function crashingWorkerScript(): Promise<string> {
  return bundle('test/pool/fixtures/crashing-worker.ts', 'crashing-worker');
}

/** Removes this file's bundles. */
export function removeBundles(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  bundles.clear();
}

/** A valid Well of about 1.5 KB, as the store writes it (base fields included), as a JSON template. */
export async function wellTemplate(): Promise<string> {
  const s = DynamicStore.open();
  const r = await s.insert('Well', [
    {
      pwi: 'TEMPLATE',
      wellId: 'TEMPLATE',
      name: 'Template 1H',
      basinName: 'Permian',
      statusCurrent: 'Producing',
      spudDate: '3/14/2021',
      fracStages: 24,
      lateralLength: 10250.5,
      surfaceLoc: { type: 'Point', coordinates: [-101.9, 31.8] },
      extra: { notes: 'x'.repeat(900), tags: ['a', 'b', 'c'], nested: { depth: 1, list: [1, 2, 3] } },
    },
  ]);
  if (!r.success) throw new Error(r.message);
  const row = s.database.prepare('SELECT json(doc) FROM docs_Well').pluck().get() as string;
  await s.close();
  return row;
}

/**
 * Adds `n` Wells to a store file straight through SQL (the store's own inserts validate every field, which would
 * make a 250k-document test slow): ids `w00000000`…, pwi `P…`, fracStages i % 50, points spread over Texas.
 * `padding` adds that many characters to each document (`extra.padding`), to make answers of a given size cheaply.
 * @example await bulkWells(file, 250_000);
 */
export async function bulkWells(file: string, n: number, from = 0, padding = 0): Promise<void> {
  DynamicStore.open(file).close();
  const template = await wellTemplate();
  const db = new Database(file);
  try {
    db.prepare(
      `WITH RECURSIVE k(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?)
       INSERT INTO docs_Well (id, doc)
       SELECT printf('w%08d', i), jsonb(json_set(?, '$.id', printf('w%08d', i), '$.pwi', printf('P%08d', i), '$.wellId', printf('P%08d', i),
         '$.fracStages', i % 50, '$.surfaceLoc.coordinates', json_array(-104 + (i % 1000) / 250.0, 29 + (i / 1000 % 1000) / 250.0)${padding > 0 ? `, '$.extra.padding', substr(hex(zeroblob(${Math.ceil(padding / 2)})), 1, ${padding})` : ''})) FROM k`,
    ).run(from, from + n, template);
  } finally {
    db.close();
  }
}

/** Resolves when `predicate` holds, polling; rejects after `ms`. */
export async function until(predicate: () => boolean, ms = 20_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A query that matches nothing and tests each of 400 tags of every document with a JS function (cd_regexp): seconds of work that a terminated worker stops at once. */
export const SLOW = { 'extra.tags': { regex: 'zz$' } } as const;

/**
 * Adds `n` small Wells with 400 tags each (ids `s000000`…, pwi `S000000`…) straight through SQL: SLOW then takes
 * about 8 s over 20,000 of them on this machine, and `{ 'extra.tags': 'tag-0' }` matches them all.
 */
export function slowWells(file: string, n = 20_000): void {
  DynamicStore.open(file).close();
  const db = new Database(file);
  try {
    db.prepare(
      `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < 400),
         tags(a) AS (SELECT json_group_array('tag-' || i) FROM k),
         m(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM m WHERE i + 1 < ?)
       INSERT INTO docs_Well (id, doc)
       SELECT printf('s%06d', m.i), jsonb(json_object('id', printf('s%06d', m.i), 'pwi', printf('S%06d', m.i), 'extra', json_object('tags', json(tags.a)))) FROM m, tags`,
    ).run(n);
  } finally {
    db.close();
  }
}
