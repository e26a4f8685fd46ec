/**
 * Runs wells.jest.test.cjs against the built package: `npm run build && npx jest -c examples/testing/jest.config.cjs`.
 * `consolidata` and `consolidata/testing` map to dist/ (or to CONSOLIDATA_DIST, a folder of the same layout: the
 * test that runs this file points it at a fresh build when dist/ is older than the sources).
 */
const path = require('node:path');

const dist = path.resolve(process.env.CONSOLIDATA_DIST || path.join(__dirname, '../../dist'));

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/*.jest.test.cjs'],
  transform: {},
  watchman: false,
  cacheDirectory: path.join(__dirname, '../../node_modules/.cache/jest'),
  moduleNameMapper: {
    '^consolidata$': path.join(dist, 'index.cjs'),
    '^consolidata/testing$': path.join(dist, 'testing.cjs'),
  },
};
