// The response cache through the whole gateway, against an upstream that counts requests.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const TXS = `/1/api/v2/addresses/${ADDRESS}/transactions`;
/** The gateway's clock: tests move it to expire entries. */
const clock = { now: Date.now() };

let explorer: FixtureExplorer;
let gw: TestGateway;
let n = 0;
/** A different address per test, so tests never share entries. */
const fresh = () => `/1/api/v2/addresses/0x${(n++).toString(16).padStart(40, 'c')}`;

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(
    makeConfig([explorer.url], {
      chains: { '1': { name: 'E', upstreams: [explorer.url], timeoutMs: 5_000 } },
      keys: [
        { name: 'demo', key: DEMO_KEY, plan: 'free' },
        { name: 'other', key: 'other-key', plan: 'free' },
      ],
      cache: { ttlSeconds: { 'token-balances': 15, transactions: 5, legacy: 0 }, staleSeconds: 60 },
    }),
    { now: () => clock.now },
  );
});
afterAll(async () => {
  await gw.close();
  await explorer.close();
});
afterEach(() => explorer.reset());

const outcome = (res: Response) => res.headers.get('x-cache');
/** Waits until no fill or background refresh of the gateway's cache is running. */
const settle = () => gw.app.gateway.state().cache.idle();

describe('response cache', () => {
  it('answers a repeated request from the cache, with Age', async () => {
    const path = `${fresh()}/token-balances`;
    const miss = await gw.get(path);
    expect(outcome(miss)).toBe('MISS');
    expect(miss.headers.get('age')).toBe('0');
    const body = await miss.text();
    clock.now += 3_000;
    const hit = await gw.get(path);
    expect(outcome(hit)).toBe('HIT');
    expect(hit.headers.get('age')).toBe('3');
    expect(await hit.text()).toBe(body);
    expect(hit.headers.get('content-type')).toMatch(/^application\/json/);
    expect(explorer.hits()).toBe(1);
  });

  it("one entry serves every key, and each answer carries that request's own quota headers", async () => {
    const path = `${fresh()}/token-balances`;
    const a = await gw.get(path);
    const b = await gw.get(path, { key: 'other-key' });
    expect([outcome(a), outcome(b)]).toEqual(['MISS', 'HIT']);
    expect(explorer.hits()).toBe(1);
    // Hits are billed like misses: both keys paid 20 from their own balance.
    expect(b.headers.get('x-credits-remaining')).toBe(String(1_000_000 - 20));
    expect(b.headers.get('x-ratelimit-remaining')).toBe('999');
    const again = await gw.get(path, { key: 'other-key' });
    expect(Number(again.headers.get('x-credits-remaining'))).toBe(Number(b.headers.get('x-credits-remaining')) - 20);
  });

  it('query order and the apikey parameter do not split entries', async () => {
    const path = `${fresh()}/transactions`;
    await gw.get(`${path}?filter=to&sort=value&order=asc`);
    const hit = await gw.get(`${path}?order=asc&apikey=${DEMO_KEY}&sort=value&filter=to`, { key: null });
    expect(outcome(hit)).toBe('HIT');
    expect(explorer.hits()).toBe(1);
  });

  it('show-scam-tokens is part of the key, with the value as forwarded', async () => {
    const path = `${fresh()}/token-balances`;
    const plain = (await (await gw.get(path)).json()) as unknown[];
    const scam = await gw.get(path, { headers: { 'show-scam-tokens': 'true' } });
    expect(outcome(scam)).toBe('MISS');
    expect(((await scam.json()) as unknown[]).length).toBe(plain.length + 1);
    // Instances treat only "true" as true: any other value is no header at all, the plain entry.
    for (const odd of ['TRUE', 'false', 'x'.repeat(8_000), 'yes']) {
      const res = await gw.get(path, { headers: { 'show-scam-tokens': odd } });
      expect(outcome(res)).toBe('HIT');
      expect(((await res.json()) as unknown[]).length).toBe(plain.length);
    }
    expect(explorer.requests.map((r) => r.headers['show-scam-tokens'])).toEqual([undefined, 'true']);
  });

  it("each answer carries its own request's x-request-id, never the one the upstream echoed", async () => {
    const path = `${fresh()}/token-balances`;
    explorer.set({ extraHeaders: { 'x-request-id': 'echoed-by-upstream' } });
    const miss = await gw.get(path, { headers: { 'x-request-id': 'first-request' } });
    const hit = await gw.get(path, { headers: { 'x-request-id': 'second-request' } });
    expect([miss.headers.get('x-request-id'), hit.headers.get('x-request-id')]).toEqual(['first-request', 'second-request']);
    expect(outcome(hit)).toBe('HIT');
  });

  it("the gateway's own headers replace an upstream's of the same name, on misses and hits alike", async () => {
    const path = `${fresh()}/token-balances`;
    // A CDN in front of an explorer adds these; fetch() would join duplicates with ", ".
    explorer.set({ extraHeaders: { 'x-cache': 'HIT from cdn', age: '100', 'x-credits-remaining': '5' } });
    const miss = await gw.get(path);
    const hit = await gw.get(path);
    for (const [res, cache] of [
      [miss, 'MISS'],
      [hit, 'HIT'],
    ] as const) {
      expect(res.headers.get('x-cache')).toBe(cache);
      expect(res.headers.get('age')).toMatch(/^\d+$/);
      expect(res.headers.get('x-credits-remaining')).toMatch(/^\d+$/);
    }
  });

  it('coalesces dozens of concurrent identical misses into one upstream request', async () => {
    const path = `${fresh()}/token-balances`;
    const counters = gw.app.gateway.state().cache.counters;
    const joinedBefore = counters.coalesced;
    const release = explorer.hold();
    const pending = Array.from({ length: 40 }, () => gw.get(path));
    await until(() => counters.coalesced === joinedBefore + 39, "every request to wait on the first one's fill");
    release();
    const all = await Promise.all(pending);
    const bodies = await Promise.all(all.map((r) => r.text()));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(new Set(bodies).size).toBe(1);
    expect(explorer.hits()).toBe(1);
  });

  it('gives every coalesced waiter the same error, and does not keep it', async () => {
    const path = `${fresh()}/token-balances`;
    const counters = gw.app.gateway.state().cache.counters;
    const joinedBefore = counters.coalesced;
    explorer.set({ failStatus: 500 });
    const release = explorer.hold();
    const pending = Array.from({ length: 20 }, () => gw.get(path));
    await until(() => counters.coalesced === joinedBefore + 19, "every request to wait on the first one's fill");
    release();
    const all = await Promise.all(pending);
    expect(all.map((r) => r.status)).toEqual(Array(20).fill(502));
    expect(explorer.hits()).toBe(1);
    explorer.reset();
    expect((await gw.get(path)).status).toBe(200);
    expect(explorer.hits()).toBe(1);
  });

  it('a waiter whose client goes away does not cancel the others', async () => {
    const path = `${fresh()}/token-balances`;
    const counters = gw.app.gateway.state().cache.counters;
    const joinedBefore = counters.coalesced;
    const release = explorer.hold();
    const leader = new AbortController();
    const first = gw.get(path, { signal: leader.signal }).catch((e: unknown) => e);
    await until(() => explorer.hits() === 1, "the leader's request to reach the explorer");
    const others = Array.from({ length: 5 }, () => gw.get(path));
    await until(() => counters.coalesced === joinedBefore + 5, "the others to join the leader's fill");
    leader.abort();
    expect(await first).toBeInstanceOf(Error);
    release();
    const answers = await Promise.all(others);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(explorer.hits()).toBe(1);
    expect(outcome(await gw.get(path))).toBe('HIT');
  });

  it('after expiry serves the old entry at once and refreshes it in the background, once', async () => {
    const path = `${fresh()}/token-balances`;
    await gw.get(path);
    clock.now += 16_000; // token-balances TTL is 15 s
    // The refresh is held at the explorer until the stale answers are in: nobody waited for it.
    const release = explorer.hold();
    const stale = await Promise.all(Array.from({ length: 10 }, () => gw.get(path)));
    expect(stale.map(outcome)).toEqual(Array(10).fill('STALE'));
    expect(stale[0]!.headers.get('age')).toBe('16');
    await until(() => explorer.hits() === 2, 'the background refresh to reach the explorer');
    release();
    await settle();
    expect(explorer.hits()).toBe(2);
    const refreshed = await gw.get(path);
    expect(outcome(refreshed)).toBe('HIT');
    expect(refreshed.headers.get('age')).toBe('0');
  });

  it('keeps serving the old entry while the upstream fails, and stops after staleSeconds', async () => {
    const path = `${fresh()}/token-balances`;
    await gw.get(path);
    clock.now += 20_000;
    explorer.set({ failStatus: 503 });
    const during = await gw.get(path);
    expect([during.status, outcome(during)]).toEqual([200, 'STALE']);
    await settle();
    expect(explorer.hits()).toBe(2); // the failed refresh
    clock.now += 5_000; // past the pause after a failed refresh
    const again = await gw.get(path);
    expect([again.status, outcome(again)]).toEqual([200, 'STALE']);
    await settle();
    expect(explorer.hits()).toBe(3);
    clock.now += 60_000; // past TTL + staleSeconds
    expect((await gw.get(path)).status).toBe(502);
  });

  it('serves the old entry when its refresh times out', async () => {
    const fast = await startGateway(
      makeConfig([explorer.url], {
        chains: { '1': { name: 'E', upstreams: [explorer.url], timeoutMs: 100 } },
        cache: { ttlSeconds: { 'token-balances': 15 }, staleSeconds: 60 },
      }),
      { now: () => clock.now },
    );
    try {
      const path = `${fresh()}/token-balances`;
      await fast.get(path);
      clock.now += 20_000;
      explorer.set({ hang: true });
      const during = await fast.get(path);
      expect([during.status, outcome(during)]).toEqual([200, 'STALE']);
      const counters = fast.app.gateway.state().cache.counters;
      await fast.app.gateway.state().cache.idle(); // the refresh ends at the chain's deadline
      expect(counters.refreshFailures).toBe(1);
      const after = await fast.get(path);
      expect([after.status, outcome(after)]).toEqual([200, 'STALE']);
      const metrics = parsePrometheus(await (await fast.ops('/metrics')).text());
      expect(valueOf(metrics, 'egw_cache_refresh_failures_total')).toBe(1);
    } finally {
      await fast.close();
    }
  });

  it('does not keep 4xx answers or answers marked no-store', async () => {
    const p1 = `${fresh()}/token-balances`;
    explorer.set({ failStatus: 404 });
    expect(outcome(await gw.get(p1))).toBe('MISS');
    expect((await gw.get(p1)).status).toBe(404);
    expect(explorer.hits()).toBe(2);
    explorer.reset();
    const p2 = `${fresh()}/token-balances`;
    explorer.set({ cacheControl: 'no-store' });
    await gw.get(p2);
    expect(outcome(await gw.get(p2))).toBe('MISS');
    expect(explorer.hits()).toBe(2);
  });

  it('routes with TTL 0 are never cached', async () => {
    const legacy = '/1/api?module=token&action=getToken&contractaddress=0xb7d311e2eb55f2f68a9440da38e7989210b9a05e';
    await gw.get(legacy);
    expect(outcome(await gw.get(legacy))).toBe('MISS');
    expect(explorer.hits()).toBe(2);
  });

  it('answers HEAD from the cache', async () => {
    const path = `${fresh()}/token-balances`;
    await gw.get(path);
    const head = await gw.get(path, { method: 'HEAD' });
    expect([head.status, outcome(head), await head.text()]).toEqual([200, 'HIT', '']);
    // A HEAD answer describes the GET answer: same length, no body.
    expect(head.headers.get('content-length')).toBe((await gw.get(path)).headers.get('content-length'));
    expect(explorer.hits()).toBe(1);
  });

  it('refusals before the cache step are not cached and say nothing of the cache', async () => {
    const bad = await gw.get(`${TXS}?sort=fee`);
    expect(bad.status).toBe(422);
    expect(outcome(bad)).toBeNull();
    expect(outcome(await gw.get(BALANCES, { key: null }))).toBeNull();
  });
});
