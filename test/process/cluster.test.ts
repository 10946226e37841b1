// On Redis Cluster: the quota script's keys share one hash tag, so it runs on the node that owns
// the key's slot; the cache tier works across nodes; usage rows and their credits, per day and per
// hour, are read and pruned on every node. A real three-node cluster on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { testPrefix } from '../support/redis.js';

let cluster: TestCluster;
let explorer: FixtureExplorer;
let gw: TestGateway;
/** The gateway's clock: now, until the last test moves it on. */
const clock = { now: Date.now() };

beforeAll(async () => {
  cluster = await startCluster();
  explorer = await startFixtureExplorer();
  gw = await startGateway(
    makeConfig([explorer.url], {
      redis: { cluster: cluster.urls, keyPrefix: testPrefix('cluster'), onError: 'closed' },
      plans: { small: { rps: 1000, credits: 100 } },
      keys: [
        { name: 'demo', key: DEMO_KEY, plan: 'small' },
        // Keys whose digests hash to other slots (other nodes) than the demo key's.
        ...Array.from({ length: 8 }, (_, i) => ({ name: `k${i}`, key: `cluster-key-${i}`, plan: 'small' })),
      ],
      cache: { ttlSeconds: { 'token-balances': 30 } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
    }),
    { now: () => clock.now },
  );
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await explorer?.close();
  await cluster?.stop();
});

const path = (n: number) => `/1/api/v2/addresses/0x${n.toString(16).padStart(40, 'f')}/token-balances`;

describe('Redis Cluster', () => {
  it('decides quota on the node that owns each key (no CROSSSLOT), credits and all', async () => {
    for (let i = 0; i < 8; i++) {
      const key = `cluster-key-${i}`;
      const statuses: number[] = [];
      for (let j = 0; j < 6; j++) statuses.push((await gw.get(path(j), { key })).status);
      // 100 credits at 20 a request: five pass, then 402, on whichever node the key lives.
      expect(statuses, key).toEqual([200, 200, 200, 200, 200, 402]);
    }
  });

  it('concurrent requests on one key spend exactly its balance', async () => {
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => gw.get(path(100 + (i % 3))).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(35);
  });

  it("counts the credits per day and per hour on each key's node: the hours sum to the day, and pruning reaches every node", async () => {
    type Item = { key: string; hour?: string; chain: string; route: string; account: string; requests: number; credits: number };
    const admin = adminClient(() => gw.app.gateway.adminUrl()!);
    const day = new Date(clock.now).toISOString().slice(0, 10);
    const list = async (query: string) => (await admin.get<{ items: Item[] }>(`/usage?from=${day}&to=${day}${query}`)).body.items;
    const daily = await list('');
    const hourly = await list('&granularity=hour');
    // Nine keys, each 100 credits spent, on whichever node each lives.
    expect(daily.reduce((n, r) => n + r.credits, 0)).toBe(900);
    expect(new Set(daily.map((r) => r.key)).size).toBe(9);
    for (const d of daily) {
      const hours = hourly.filter((h) => h.key === d.key && h.chain === d.chain && h.route === d.route && h.account === d.account);
      expect(hours.map((h) => h.hour)).toEqual([`${new Date(clock.now).toISOString().slice(0, 13)}:00:00Z`]);
      expect([hours[0]!.requests, hours[0]!.credits]).toEqual([d.requests, d.credits]);
    }
    // Past the 35 days hourly rows are kept (usage.hourlyRetentionDays): gone from every node, credits too; the days stay.
    clock.now += 40 * 86_400_000;
    await gw.app.gateway.pruneUsage();
    expect(await list('&granularity=hour')).toEqual([]);
    expect(await list('')).toEqual(daily);
  });
});
