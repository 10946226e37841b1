import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration suites start real servers on port 0; files run in parallel workers.
    pool: 'forks',
    // A real Redis for the Redis suites: REDIS_URL, 127.0.0.1:6379, or one started for the run.
    globalSetup: ['test/support/global-redis.ts'],
  },
});
