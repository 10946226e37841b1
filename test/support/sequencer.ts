// The order test files start in: the long ones first, so that they run beside the many short
// ones instead of after them. A clean checkout (CI) has no record of past durations, and vitest
// then starts the largest files first (BaseSequencer.sort in vitest/dist/node.js), which puts
// the long e2e and process files, small ones, near the end. The figures are from a full run with
// one worker on a loaded 2-core machine (bench/results/2026-12-02-test-tiers.md).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest files, slowest first (seconds of that run). */
export const SLOW_FIRST: readonly string[] = [
  'test/docs/commands.test.ts', // 199
  'test/container/dockerfile.test.ts', // 167 with npm ci run as written; 107 to 131 reusing the checkout's (loaded machine)
  'test/process/storage-faults.test.ts', // 164
  'test/process/process-faults.test.ts', // 158
  'test/process/usage-billing-crash.test.ts', // 95
  'test/process/admin-processes.test.ts', // 77
  'test/process/cli.test.ts', // 72
  'test/process/start-and-stop.test.ts', // 52
  'test/process/lifecycle.test.ts', // 45
  'test/process/redis-persistence.test.ts', // 43
  'test/process/log-disk-full.test.ts', // 31
  'test/process/webhooks.test.ts', // 30
];

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    const rest = await super.sort(files.filter((f) => rank(f) === SLOW_FIRST.length));
    const slow = files.filter((f) => rank(f) < SLOW_FIRST.length).sort((a, b) => rank(a) - rank(b));
    return [...slow, ...rest];
  }
}
