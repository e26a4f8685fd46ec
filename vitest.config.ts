import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The Citus suite's own files need a Citus cluster: `npm run test:citus` (vitest.citus.config.ts) runs them.
    exclude: ['test/citus/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
  },
});
