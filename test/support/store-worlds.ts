// One gateway per records store, for suites that try the admin API on each (SQLite, Redis,
// PostgreSQL): a fixture explorer for the file, and in each `describe` a gateway on a store of its
// own (a fresh SQLite file, Redis prefix or PostgreSQL schema) with an admin listener, a clock the
// test moves, and everything removed afterwards.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { adminClient, ADMIN_TOKEN } from './admin.js';
import { makeConfig, startGateway, type TestGateway } from './gateway.js';
import { POSTGRES_URL, testSchemas } from './postgres.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from './redis.js';

export const STORE_KINDS = ['sqlite', 'redis', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface StoreWorld {
  /** The gateway of this describe (started in its beforeAll). */
  gw(): TestGateway;
  /** Its admin API with the admin token. */
  admin: ReturnType<typeof adminClient>;
  /** The gateway's clock; moved on 2 s after each test, so each opens a rate window of its own. */
  clock: { now: number };
}

/** Call at the top of a file: its fixture explorer, and a world per store kind (call that inside a describe). */
export function storeWorlds(label: string): {
  explorer(): FixtureExplorer;
  world(kind: StoreKind, extra?: Partial<ConfigInput>): StoreWorld;
} {
  let explorer: FixtureExplorer;
  const redis = connect();
  const prefixes: string[] = [];
  const schemas = testSchemas(label);
  beforeAll(async () => {
    explorer = await startFixtureExplorer();
  });
  afterAll(async () => {
    await explorer.close();
    await schemas.dropAll();
    for (const p of prefixes) await deletePrefix(redis, p);
    redis.disconnect();
  });
  return {
    explorer: () => explorer,
    world(kind, extra = {}) {
      let gw: TestGateway | undefined;
      const clock = { now: Date.now() };
      const prefix = testPrefix(`${label}-${kind}`);
      prefixes.push(prefix);
      beforeAll(async () => {
        const config: Partial<ConfigInput> = {
          admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
          storage: { path: join(mkdtempSync(join(tmpdir(), `egw-${label}-`)), 'gateway.db') },
          ...extra,
          ...(kind === 'redis' ? { redis: { url: REDIS_URL, keyPrefix: prefix } } : {}),
          ...(kind === 'postgres' ? { storage: { url: POSTGRES_URL, schema: schemas.fresh() } } : {}),
        };
        gw = await startGateway(makeConfig([explorer.url], config), { now: () => clock.now });
      });
      afterAll(() => gw?.close());
      afterEach(() => {
        clock.now += 2_000;
      });
      const current = () => {
        if (!gw) throw new Error('the gateway of this world is not started yet');
        return gw;
      };
      return { gw: current, admin: adminClient(() => current().app.gateway.adminUrl()!), clock };
    },
  };
}
