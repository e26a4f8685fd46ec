import { defineConfig } from 'vitest/config';

/**
 * `npm run test:citus`: the shared suites (query case table, fields, cursors, pages, near, aggregates, write rules, soft delete,
 * journal, HTTP cases) on a local Citus cluster, a coordinator and two workers per test file (scripts/pg-cluster.mjs).
 * CONSOLIDATA_BACKENDS makes `backends()` answer the Citus backend alone. Files run one at a time: three servers per
 * file on a small machine.
 */
export default defineConfig({
  test: {
    include: [
      'test/citus/**/*.test.ts',
      'test/query.cases.test.ts',
      'test/key-order.test.ts',
      'test/fields.test.ts',
      'test/cursor.backends.test.ts',
      'test/one-pass.test.ts',
      'test/near.test.ts',
      'test/aggregate.test.ts',
      'test/writes.test.ts',
      'test/soft-delete.test.ts',
      'test/journal.test.ts',
      'test/activity.test.ts',
      'test/http/cases.test.ts',
    ],
    env: { CONSOLIDATA_BACKENDS: 'citus' },
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
