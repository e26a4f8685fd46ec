/**
 * The build: dist/ by tsup, then the explorer page (build-explorer.mjs); quiet unless it fails, or with `--verbose`
 * (`npm run build`) tsup's log and the page's size.
 * `npm start` and the benches run it first; npm runs it as `prepare` on `npm ci`/`npm install` in this repo, on
 * `npm pack` and `npm publish`, and in the clone of a git install (`npm install git+https://…`), whose tarball is what
 * `files` lists: without it, a clone packs no dist/ and installs a package with nothing to run.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let manifest;
try {
  manifest = createRequire(import.meta.url).resolve('tsup/package.json');
} catch {
  // Installed without devDependencies (`npm ci --omit=dev`): nothing to build with, and the install must not fail.
  process.exit(0);
}
// tsup's own bin, run by this node: no PATH lookup, no shell (tsup.cmd on Windows).
const bin = join(dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.tsup);
const verbose = process.argv.includes('--verbose');
const build = spawnSync(process.execPath, verbose ? [bin] : [bin, '--silent'], { stdio: 'inherit' });
if (build.error) throw build.error;
if (build.status !== 0) process.exit(build.status ?? 1);
const { buildExplorer } = await import('./build-explorer.mjs');
const { bytes } = await buildExplorer(join(dirname(fileURLToPath(import.meta.url)), '../dist/explorer'));
if (verbose) console.log(`explorer: dist/explorer/app.js ${(bytes / 1024).toFixed(1)} KiB`);
