import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/support/sequencer.js';
import { tierGlobs } from './test/support/tiers.js';

// The suite in four tiers, one vitest project each (test/support/tiers.ts says which folders):
// `npm test` runs them all, side by side; `npm run test:unit` (contract section 10),
// `test:integration`, `test:process` and `test:e2e` run one (`vitest run --project NAME`).
//
// Workers: vitest's default is availableParallelism() - 1 in a run (resolveMaxWorkers in
// vitest/dist/chunks/cli-api.*.js), one worker on these 2-core machines. Projects run side by
// side only when they share `sequence.groupOrder`, and then they must share the worker count too
// (vitest refuses different `maxWorkers` in one group), so the count is the run's, set here once.
// Two, one per core, would fill the time most files wait on servers and child processes; but the
// process tier starts gateways through tsx under a deadline, and more
// workers stretch those starts. Four on two cores timed out a restart test in CI
// (bench/results/2026-11-27-test-run.md); three, on this shared machine at a load of 13 to 18,
// failed 16 tests of four process files, each a gateway that did not start in 15 s, all green
// alone (bench/results/2026-12-02-test-tiers.md). Two passed the process tier alone but for 6
// of 592 tests on that loaded machine, and no whole run on two has been green yet: CI keeps one,
// as it had, until one is (`npm test -- --maxWorkers 2` to try).
const WORKERS = 1;

export default defineConfig({
  test: {
    maxWorkers: WORKERS,
    // A bound for a test that hangs, not for a slow one: a loaded machine starts a gateway process
    // through tsx in seconds, and a test that starts two may take tens of them.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The long files first, beside the short ones (test/support/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        // Pure logic in worker threads: no global setup, no Redis, PostgreSQL or child process.
        // Not isolated: a worker imports the gateway's modules once for all the files it runs,
        // not once per file (import was 68 of the tier's 140 s of worker time; the tier went from
        // 63 s to 31 s on a loaded 2-core machine). A unit file leaves nothing behind for the
        // next: no mocks, fake timers, stubbed globals or environment (test/unit/tiers.test.ts).
        extends: true,
        test: { name: 'unit', include: tierGlobs('unit'), pool: 'threads', isolate: false, testTimeout: 30_000 },
      },
      {
        // Real servers on port 0 in forked processes; a real Redis for the Redis suites: REDIS_URL,
        // 127.0.0.1:6379, or one started for the run (test/support/global-redis.ts).
        extends: true,
        test: { name: 'integration', include: tierGlobs('integration'), pool: 'forks', globalSetup: ['test/support/global-redis.ts'] },
      },
      {
        extends: true,
        test: { name: 'process', include: tierGlobs('process'), pool: 'forks', globalSetup: ['test/support/global-redis.ts'] },
      },
      {
        extends: true,
        test: { name: 'e2e', include: tierGlobs('e2e'), pool: 'forks', globalSetup: ['test/support/global-redis.ts'] },
      },
    ],
  },
});
