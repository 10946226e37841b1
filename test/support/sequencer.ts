// The order test files start in: the long ones first, so that they run beside the many short
// ones instead of after them. A clean checkout (CI) has no record of past durations, and vitest
// then starts the largest files first (BaseSequencer.sort in vitest/dist/node.js), which puts
// the Dockerfile replay, the longest of all by minutes, near the end. The figures are from a
// full run on a 2-core machine with 4 workers (bench/results/2026-11-27-test-run.md).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest files, slowest first (seconds of that run). */
export const SLOW_FIRST: readonly string[] = [
  'test/container/dockerfile.test.ts', // 498: npm ci builds better-sqlite3 from source
  'test/docs/commands.test.ts', // 265
  'test/integration/storage-faults.test.ts', // 213
  'test/integration/process-faults.test.ts', // 147
  'test/integration/cli.test.ts', // 123
  'test/integration/usage-billing-crash.test.ts', // 123
  'test/integration/admin-processes.test.ts', // 103
  'test/integration/start-and-stop.test.ts', // 65
  'test/integration/redis-persistence.test.ts', // 62
  'test/integration/lifecycle.test.ts', // 59
  'test/integration/webhooks.test.ts', // 54
  'test/integration/selling-faults.test.ts', // 37
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
