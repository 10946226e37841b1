// The suite's tiers (issue 39, item 6), by what a file starts: one folder list per tier, read by
// vitest.config.ts (one vitest project per tier) and held to the files by test/unit/tiers.test.ts.
// A new test file goes in a folder of the tier whose parts it starts.

/** The name of a tier: `npm run test:<tier>` runs it alone. */
export type Tier = 'unit' | 'integration' | 'process' | 'e2e';

/** The folders under test/ of each tier. */
export const TIER_FOLDERS: Readonly<Record<Tier, readonly string[]>> = {
  // Pure logic: no Redis, no PostgreSQL, no child process, no global setup (a loopback HTTP
  // server of the test's own at most).
  unit: ['unit'],
  // The gateway in this process in front of the fixture explorer, with the real Redis and
  // PostgreSQL; the fixture's own self-tests; the fuzzer of the in-process gateway.
  integration: ['integration', 'fixture', 'fuzz'],
  // Child processes: the gateway started as a program (through tsx), killed, restarted, faulted;
  // redis-server processes of the test's own (the Redis Cluster of the contract suites, a Redis
  // frozen with SIGSTOP).
  process: ['process', 'contracts'],
  // The documentation's commands, a real browser, the container image, the deployment files.
  e2e: ['docs', 'browser', 'container', 'deploy'],
};

/** The vitest `include` globs of a tier, relative to the repository's root. */
export const tierGlobs = (tier: Tier): string[] => TIER_FOLDERS[tier].map((folder) => `test/${folder}/**/*.test.ts`);
