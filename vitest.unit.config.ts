import { defineConfig } from 'vitest/config';

// `npm run test:unit` (contract section 10): the pure-logic tier, test/unit only, with no global
// setup (no Redis, no PostgreSQL, no child process), so a developer gets an answer in seconds.
// `npm test` (vitest.config.ts) stays the whole suite, as README and CI run it.
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'threads',
  },
});
