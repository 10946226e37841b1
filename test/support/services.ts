// One fixture service (fixture/services.ts) for a whole test file: started before its tests, closed
// after them, like test/support/explorer.ts does for the explorer.
import { afterAll, beforeAll } from 'vitest';
import { startFixtureService, type FixtureService, type FixtureServiceOptions, type ServiceKind } from '../../fixture/services.js';

/** Registers the suite's hooks; the returned function gives the running service. Hooks run in the
 *  order they are registered, so a `head` reading an explorer of useFixtureExplorer() registered
 *  before this one sees it started. */
export function useFixtureService(kind: ServiceKind, opts: Omit<FixtureServiceOptions, 'kind'> = {}): () => FixtureService {
  let service: FixtureService | undefined;
  beforeAll(async () => {
    service = await startFixtureService({ ...opts, kind });
  });
  afterAll(async () => {
    await service?.close();
  });
  return () => {
    if (!service) throw new Error(`the fixture ${kind} service is not running (use it inside a test)`);
    return service;
  };
}
