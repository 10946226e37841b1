// Plans through the whole gateway: the four headers, 429, 402, refunds of 5xx answers, the
// legacy envelope, with the in-process store and with Redis.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { ADDRESS, refusedPort, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const TXS = `/1/api/v2/addresses/${ADDRESS}/transactions`;
const LEGACY = '/1/api?module=token&action=getToken&contractaddress=0xb7d311e2eb55f2f68a9440da38e7989210b9a05e';

let explorer: FixtureExplorer;
const redis = connect();
const prefix = testPrefix('gw-quota');
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});
afterEach(() => explorer.reset());

const headers = (res: Response) => ({
  limit: res.headers.get('x-ratelimit-limit'),
  remaining: res.headers.get('x-ratelimit-remaining'),
  reset: Number(res.headers.get('x-ratelimit-reset')),
  credits: res.headers.get('x-credits-remaining'),
});

/** All four quota headers, each one plain integer (an upstream's copy would be joined in with ", "). */
function expectQuotaHeaders(res: Response, expected: { limit: string; remaining?: string; credits: string }): void {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-credits-remaining']) {
    expect(res.headers.get(name), name).toMatch(/^\d+$/);
  }
  expect(headers(res)).toMatchObject(expected);
}

let n = 0;
/** The gateways' clock: a test that needs the next rate window moves it instead of sleeping. */
const clock = { now: Date.now() };
/** A gateway with one key on its own plan, so each test starts from a full balance and window. */
async function gatewayWith(store: 'memory' | 'redis', plan: { rps: number; credits: number }, extra: Partial<ConfigInput> = {}) {
  const key = `quota-key-${store}-${n++}-${Date.now()}`;
  const gw = await startGateway(
    makeConfig([explorer.url], {
      plans: { p: { ...plan, period: 'daily' } },
      keys: [{ name: 'k', key, plan: 'p' }],
      costs: { default: 20, routes: { transactions: 50 } },
      ...(store === 'redis' ? { redis: { url: REDIS_URL, keyPrefix: prefix } } : {}),
      ...extra,
    }),
    { now: () => clock.now },
  );
  const get = (path: string, init: RequestInit = {}) => gw.get(path, { ...init, key });
  return { gw, get };
}

describe.each(['memory', 'redis'] as const)('quota through the gateway (%s store)', (store) => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it("stamps the plan's limit, what is left, the reset in ms and the balance after billing", async () => {
    const g = await gatewayWith(store, { rps: 5, credits: 1000 });
    gw = g.gw;
    const first = await g.get(BALANCES);
    expect(first.status).toBe(200);
    const h = headers(first);
    expect(h).toMatchObject({ limit: '5', remaining: '4', credits: '980' });
    expect(h.reset).toBeGreaterThan(0);
    expect(h.reset).toBeLessThanOrEqual(1000);
    expect(headers(await g.get(TXS))).toMatchObject({ remaining: '3', credits: '930' });
  });

  it('429 with Retry-After when the rate is exceeded, and the refusal costs nothing', async () => {
    const g = await gatewayWith(store, { rps: 2, credits: 1000 });
    gw = g.gw;
    const statuses = [];
    let refused: Response | undefined;
    for (let i = 0; i < 4; i++) {
      const res = await g.get(BALANCES);
      statuses.push(res.status);
      if (res.status === 429) refused = res;
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect(headers(refused!)).toMatchObject({ limit: '2', remaining: '0', credits: '960' });
    expect(await refused!.json()).toEqual({ message: 'Too many requests' });
    expect(explorer.hits()).toBe(2);
  });

  it('402 Out of credits when the balance is below the cost, showing the balance left', async () => {
    const g = await gatewayWith(store, { rps: 100, credits: 60 });
    gw = g.gw;
    expect((await g.get(TXS)).status).toBe(200); // 50 -> 10 left
    const res = await g.get(BALANCES); // costs 20
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ message: 'Out of credits' });
    expectQuotaHeaders(res, { limit: '100', remaining: '98', credits: '10' });
    expect(explorer.hits()).toBe(1);
  });

  it('a request refused by validation costs no credits but counts against the rate', async () => {
    const g = await gatewayWith(store, { rps: 5, credits: 1000 });
    gw = g.gw;
    const res = await g.get(`${TXS}?sort=fee`);
    expect(res.status).toBe(422);
    expect(headers(res)).toMatchObject({ remaining: '4', credits: '1000' });
  });

  it('refunds a 5xx answer: upstream 5xx and timeout', async () => {
    const g = await gatewayWith(
      store,
      { rps: 100, credits: 1000 },
      {
        chains: { '1': { name: 'E', upstreams: [explorer.url], timeoutMs: 200 } },
      },
    );
    gw = g.gw;
    explorer.set({ failStatus: 503 });
    const failed = await g.get(BALANCES);
    expect(failed.status).toBe(502);
    // The header already shows the balance with this request refunded.
    expectQuotaHeaders(failed, { limit: '100', credits: '1000' });
    explorer.set({ failStatus: null, delayMs: 1_000 });
    const timedOut = await g.get(BALANCES);
    expect(timedOut.status).toBe(504);
    expectQuotaHeaders(timedOut, { limit: '100', credits: '1000' });
    explorer.reset();
    expect(headers(await g.get(BALANCES)).credits).toBe('980');
  });

  it('refunds a 502 when no upstream can be reached', async () => {
    const g = await gatewayWith(
      store,
      { rps: 100, credits: 1000 },
      {
        chains: { '1': { name: 'E', upstreams: [`http://127.0.0.1:${await refusedPort()}`] } },
      },
    );
    gw = g.gw;
    const res = await g.get(BALANCES);
    expect(res.status).toBe(502);
    expect(headers(res).credits).toBe('1000');
    expect(headers(await g.get(`${TXS}?sort=fee`)).credits).toBe('1000'); // nothing was taken
  });

  it('a 4xx passed on from the upstream is billed', async () => {
    const g = await gatewayWith(store, { rps: 100, credits: 1000 });
    gw = g.gw;
    explorer.set({ failStatus: 404 }); // with the fixture's own x-ratelimit-* headers (limit 600)
    const passedOn = await g.get(BALANCES);
    expect(passedOn.status).toBe(404);
    expectQuotaHeaders(passedOn, { limit: '100', remaining: '99', credits: '980' });
    explorer.reset();
    expect(headers(await g.get(BALANCES)).credits).toBe('960');
  });

  it('legacy refusals keep their status code and use the envelope', async () => {
    const g = await gatewayWith(store, { rps: 1, credits: 20 });
    gw = g.gw;
    expect((await g.get(LEGACY)).status).toBe(200);
    const limited = await g.get(LEGACY);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ message: 'Too many requests', result: null, status: '0' });
    clock.now += Number(limited.headers.get('x-ratelimit-reset'));
    const broke = await g.get(LEGACY);
    expect(broke.status).toBe(402);
    expect(await broke.json()).toEqual({ message: 'Out of credits', result: null, status: '0' });
  });

  it('hundreds of concurrent requests on a small balance spend exactly that balance', async () => {
    const g = await gatewayWith(store, { rps: 100_000, credits: 400 });
    gw = g.gw;
    const statuses = await Promise.all(Array.from({ length: 200 }, () => g.get(BALANCES).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 402)).toHaveLength(180);
    // Identical concurrent misses are coalesced: billed 20 times, fetched at most 20 times.
    expect(explorer.hits()).toBeGreaterThanOrEqual(1);
    expect(explorer.hits()).toBeLessThanOrEqual(20);
  });

  it('responses before the key step carry no quota headers', async () => {
    const g = await gatewayWith(store, { rps: 5, credits: 1000 });
    gw = g.gw;
    const res = await g.gw.get(BALANCES, { key: 'not-a-key' });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});
