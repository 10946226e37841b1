import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration suites start real servers on port 0; files run in parallel workers.
    pool: 'forks',
    // Most files wait on servers, child processes and timers more than they compute: four
    // workers on two cores took a full run from 1042 s to 680 s (bench/results/2026-11-27-test-run.md).
    maxWorkers: 4,
    // The long files first, beside the short ones (test/support/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    // A real Redis for the Redis suites: REDIS_URL, 127.0.0.1:6379, or one started for the run.
    globalSetup: ['test/support/global-redis.ts'],
  },
});
