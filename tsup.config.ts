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

/** Entries built as ES modules only: the `consolidata` command and the pool's worker threads (src/pool/pool.ts loads
 * dist/pool-worker.js from beside the chunk that starts it). */
const esmOnly = {
  cli: 'src/cli/main.ts',
  'pool-worker': 'src/pool/worker.ts',
};

/** What both formats share. Splitting puts the store in one chunk per format that every entry imports, so
 * `require('consolidata').DataStore === require('consolidata/testing').DataStore`, as with `import`. */
const common = {
  target: 'node20',
  noExternal: bundled,
  splitting: true,
  // No maps: the bundle is unminified, so stack traces and debuggers read it as is; maps pointing at src/, which is not
  // published, would only make bundlers warn (and with their sources inlined they were two thirds of the tarball).
  sourcemap: false,
  // Declarations come from bundleDts (see scripts/bundle-dts.ts for why not tsup's dts).
  dts: false,
} as const;

export default defineConfig([
  {
    ...common,
    // One build for every ES module entry, the CLI's included, so they share chunks (the CLI's hashbang is in its source).
    entry: { ...entry, ...esmOnly },
    format: ['esm'],
    // The CommonJS build writes into the same dist/ concurrently: each build deletes only its own files.
    clean: ['!**/*.cjs'],
    onSuccess: () => bundleDts({ entry, outDir: 'dist', inline: inlineTypes }),
  },
  {
    ...common,
    entry,
    format: ['cjs'],
    // `import.meta.url` (where dist/ is: the pool's worker script, the explorer's files) has no meaning in CommonJS.
    shims: true,
    clean: ['!**/*.js', '!**/*.d.ts', '!**/*.d.cts'],
  },
]);
