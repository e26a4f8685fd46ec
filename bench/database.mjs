// Databases the HTTP benches serve: generated once per size with the built library (bench/results, not committed)
// and copied by each run, since the runs write to their copy.
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateWells } from './generate.mjs';

/** The path of a database of `n` generated Wells (every default index), made by dist/index.js on first use. */
export async function cachedWells(root, n) {
  const dir = join(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `wells-${n}.db`);
  if (existsSync(file)) return file;
  process.stderr.write(`generating ${n} Wells into ${file} …\n`);
  const entry = join(root, 'dist/index.js');
  if (!existsSync(entry)) throw new Error('the bench generates its data with dist/index.js: run npm run build first');
  const { DynamicStore } = await import(pathToFileURL(entry).href);
  const store = DynamicStore.open(`${file}.tmp`);
  for (let from = 0; from < n; from += 10_000) {
    const r = await store.insert('Well', generateWells(Math.min(10_000, n - from), { from }));
    if (!r.success) throw new Error(r.message);
  }
  await store.close();
  copyFileSync(`${file}.tmp`, file);
  rmSync(`${file}.tmp`, { force: true });
  return file;
}
