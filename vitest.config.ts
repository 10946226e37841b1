import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A bound for a test that hangs, not for a slow one: a loaded machine starts a gateway process
    // through tsx in seconds, and a test that starts two may take tens of them.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration suites start real servers on port 0; files run in parallel workers, one per core
    // (vitest's default). Four workers on two cores ran the suite in 667 s instead of 1042 s, but
    // stretched the longest files fourfold: CI then timed out a restart test
    // (bench/results/2026-11-27-test-run.md).
    pool: 'forks',
    // The long files first, beside the short ones (test/support/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    // A real Redis for the Redis suites: REDIS_URL, 127.0.0.1:6379, or one started for the run.
    globalSetup: ['test/support/global-redis.ts'],
  },
});
