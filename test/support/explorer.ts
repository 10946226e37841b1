// One fixture explorer for a whole test file: started before its tests, closed after them.
import { afterAll, beforeAll } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';

/** Registers the suite's hooks; the returned function gives the running explorer. */
export function useFixtureExplorer(): () => FixtureExplorer {
  let explorer: FixtureExplorer | undefined;
  beforeAll(async () => {
    explorer = await startFixtureExplorer();
  });
  afterAll(async () => {
    await explorer?.close();
  });
  return () => {
    if (!explorer) throw new Error('the fixture explorer is not running (use it inside a test)');
    return explorer;
  };
}
