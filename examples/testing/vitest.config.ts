/**
 * Runs wells.vitest.test.ts against the built package: `npm run build && npx vitest run -c examples/testing/vitest.config.ts`.
 * `consolidata` and `consolidata/testing` resolve to dist/ (or to CONSOLIDATA_DIST, a folder of the same layout: the
 * test that runs this file points it at a fresh build when dist/ is older than the sources).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(process.env.CONSOLIDATA_DIST || path.join(here, '../../dist'));

export default defineConfig({
  root: here,
  cacheDir: path.join(here, '../../node_modules/.vite-examples'),
  resolve: {
    alias: [
      { find: /^consolidata\/testing$/, replacement: path.join(dist, 'testing.js') },
      { find: /^consolidata$/, replacement: path.join(dist, 'index.js') },
    ],
  },
  test: {
    include: ['*.vitest.test.ts'],
    pool: 'forks',
  },
});
