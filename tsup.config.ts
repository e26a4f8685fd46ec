import { defineConfig } from 'tsup';
import { bundleDts } from './scripts/bundle-dts.js';

/**
 * The package's import entries: output name → source file. To add a subpath export, e.g. `consolidata/testing`:
 *   1. one line here:  `testing: 'src/testing.ts',`
 *   2. one block in package.json "exports": a copy of the "./http" block with `http` replaced by `testing`.
 * Everything else follows from the name: dist/testing.{js,cjs,d.ts,d.cts}, and node10 types through package.json
 * "typesVersions" (`consolidata/<name>` → dist/<name>.d.cts, for every name). If the new entry's declarations use
 * another package's types (`pg` for `consolidata/postgres`), add that type package to `inlineTypes` below.
 * test/package.test.ts checks every exported entry with attw and publint, and fails on a leaked type import.
 */
const entry = {
  index: 'src/index.ts',
  http: 'src/http/index.ts',
  testing: 'src/testing.ts',
  postgres: 'src/postgres/index.ts',
};

/** Packages whose types the public declarations use but a consumer does not install: inlined into dist. */
const inlineTypes = ['@types/better-sqlite3'];

/** Packages bundled into dist: robust-predicates is ESM-only, and the CJS build (jest, require()) must load without it. */
const bundled = ['robust-predicates'];

export default defineConfig([
  {
    entry,
    format: ['esm', 'cjs'],
    // Declarations come from bundleDts (see scripts/bundle-dts.ts for why not tsup's dts).
    dts: false,
    // The CLI config below writes into the same dist/ concurrently: never delete its output.
    clean: ['!cli.js', '!cli.js.map', '!server-worker.js', '!server-worker.js.map'],
    sourcemap: true,
    target: 'node20',
    noExternal: bundled,
    onSuccess: () => bundleDts({ entry, outDir: 'dist', inline: inlineTypes }),
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    banner: { js: '#!/usr/bin/env node' },
    target: 'node20',
    noExternal: bundled,
    sourcemap: true,
  },
  {
    // The pool's worker threads (src/server/pool.ts) load this file from beside the bundle that starts them.
    entry: { 'server-worker': 'src/server/worker.ts' },
    format: ['esm'],
    target: 'node20',
    noExternal: bundled,
    sourcemap: true,
  },
]);
