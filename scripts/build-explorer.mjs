/**
 * Builds the data explorer (src/explorer) into dist/explorer: one bundled, minified script, its stylesheet, the page
 * and the basemap (us-atlas's state and county outlines), so serving it needs no build step and nothing from elsewhere.
 * The build (scripts/prepare.mjs) runs it after tsup; tests call `buildExplorer(dir)` for a build of the current sources.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const require = createRequire(import.meta.url);

/**
 * Writes index.html, app.js, app.css and counties-10m.json into `outDir`.
 * @example await buildExplorer('dist/explorer');
 * @param {string} outDir
 * @returns {Promise<{ bytes: number }>} the size of app.js
 */
export async function buildExplorer(outDir) {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(root, 'src/explorer/main.ts') },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outdir: outDir,
    metafile: true,
    logLevel: 'error',
  });
  copyFileSync(join(root, 'src/explorer/index.html'), join(outDir, 'index.html'));
  copyFileSync(require.resolve('us-atlas/counties-10m.json'), join(outDir, 'counties-10m.json'));
  const out = result.metafile.outputs;
  return { bytes: Object.entries(out).find(([name]) => name.endsWith('app.js'))?.[1].bytes ?? 0 };
}
