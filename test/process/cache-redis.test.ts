// The shared cache tier: gateway processes on one Redis share fills; a Redis failure is a miss.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { DEMO_KEY, makeConfig, startGateway } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';

const redis = connect();
const prefix = testPrefix('cache');
let explorer: FixtureExplorer;
let gateways: GatewayProcess[] = [];
let n = 0;
const fresh = () => `/1/api/v2/addresses/0x${(n++).toString(16).padStart(40, 'e')}/token-balances`;

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  const config = {
    redis: { url: REDIS_URL, keyPrefix: prefix },
    chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
    plans: { free: { rps: 1000, credits: 1_000_000 } },
    keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
    log: { level: 'warn', requests: false },
  };
  gateways = await Promise.all([startGatewayProcess(config), startGatewayProcess(config)]);
}, 30_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const get = (g: GatewayProcess, path: string) => fetch(g.url + path, { headers: { authorization: `Bearer ${DEMO_KEY}` } });

describe('shared cache tier', () => {
  it('a fill by one gateway process is a hit in the other', async () => {
    const path = fresh();
    const keysBefore = (await redis.keys(`${prefix}cache:*`)).length;
    const first = await get(gateways[0]!, path);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const body = await first.text();
    // The fill reaches Redis just after the answer.
    await until(async () => (await redis.keys(`${prefix}cache:*`)).length > keysBefore, 'the fill to reach Redis');
    const second = await get(gateways[1]!, path);
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(await second.text()).toBe(body);
    expect(explorer.requests.filter((r) => r.url.includes(path.split('/')[5]!))).toHaveLength(1);
    const keys = await redis.keys(`${prefix}cache:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join()).not.toContain(DEMO_KEY);
  });

  it('a Redis failure is a miss, never an error to the client', async () => {
    const target = new URL(REDIS_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    const gw = await startGateway(
      makeConfig([explorer.url], {
        redis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix, onError: 'open', commandTimeoutMs: 100 },
        cache: { ttlSeconds: { 'token-balances': 15 } },
      }),
    );
    try {
      await proxy.cut();
      const path = fresh();
      const res = await gw.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-cache')).toBe('MISS');
      expect(outcomeOf(await gw.get(path))).toBe('HIT'); // the in-process tier still works
    } finally {
      await gw.close();
      await proxy.close();
    }
  });
});

const outcomeOf = (res: Response) => res.headers.get('x-cache');
