// Two gateway processes on one Redis let through, together, no more than the plan allows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const redis = connect();
const prefix = testPrefix('multi');
let explorer: FixtureExplorer;
let gateways: GatewayProcess[] = [];

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  const config = {
    redis: { url: REDIS_URL, keyPrefix: prefix },
    chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
    plans: {
      credits: { rps: 100_000, credits: 1_000, period: 'daily' },
      rate: { rps: 10, credits: 1_000_000, period: 'daily' },
    },
    keys: [
      { name: 'credits', key: 'multi-credits-key', plan: 'credits' },
      { name: 'rate', key: 'multi-rate-key', plan: 'rate' },
    ],
    log: { level: 'warn', requests: false },
  };
  gateways = await Promise.all([startGatewayProcess(config), startGatewayProcess(config)]);
}, 30_000);

afterAll(async () => {
  expect(await Promise.all(gateways.map((g) => g.stop()))).toEqual([0, 0]);
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** `count` concurrent requests, alternating between the two processes. */
function burst(count: number, key: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      fetch(gateways[i % 2]!.url + BALANCES, { headers: { authorization: `Bearer ${key}` } }).then(async (res) => {
        await res.arrayBuffer();
        return res.status;
      }),
    ),
  );
}

describe('two gateway processes on one Redis', () => {
  it('spend exactly the balance, no more, under hundreds of concurrent requests', async () => {
    const hitsBefore = explorer.hits();
    const statuses = await burst(300, 'multi-credits-key');
    expect(statuses.filter((s) => s === 200)).toHaveLength(50); // 1000 credits / 20
    expect(statuses.filter((s) => s === 402)).toHaveLength(250);
    // Every request is billed; the upstream sees at most one per billed request (coalescing and
    // the shared cache make it far fewer).
    expect(explorer.hits() - hitsBefore).toBeGreaterThanOrEqual(1);
    expect(explorer.hits() - hitsBefore).toBeLessThanOrEqual(50);
  });

  it('let through no more than the plan\'s requests per second together', async () => {
    const started = Date.now();
    const statuses = await burst(60, 'multi-rate-key');
    const elapsed = Date.now() - started;
    const ok = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    // The window opens with the first request of the burst; a burst shorter than a second
    // falls in one window, so exactly the plan's rps pass.
    if (elapsed < 900) expect(ok).toBe(10);
    else expect(ok).toBeLessThanOrEqual(10 * Math.ceil(elapsed / 1000 + 1));
  });
});
