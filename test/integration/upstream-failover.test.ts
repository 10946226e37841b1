// Issue 37: an explorer that hangs, fails or throttles never reaches the customer. Two fixture
// explorers (the first bad, the second healthy) behind a real gateway on loopback; distinct
// misses per case so that the cache answers none of them. The gateway's clock is a moved one
// (ejection, probes and cooling), its timers are real.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { startFixtureService, type FixtureService } from '../../fixture/services.js';
import { makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { until } from '../support/wait.js';
import fc from 'fast-check';

let bad: FixtureExplorer;
let good: FixtureExplorer;
beforeAll(async () => {
  bad = await startFixtureExplorer();
  good = await startFixtureExplorer();
});
afterAll(async () => {
  await bad.close();
  await good.close();
});

let serial = 0;
/** A fresh address: a miss every time. */
const fresh = () => `0x${(++serial).toString(16).padStart(8, '0')}${'ab'.repeat(16)}`;
const balances = () => `/1/api/v2/addresses/${fresh()}/token-balances`;

const movedClock = () => {
  let offset = 0;
  return { now: () => Date.now() + offset, move: (ms: number) => (offset += ms) };
};

async function gatewayWith(
  failover: Record<string, unknown> = {},
  opts: { timeoutMs?: number; extra?: Partial<ConfigInput>; now?: () => number; noHeadPolls?: boolean } = {},
): Promise<TestGateway> {
  const chain = {
    name: 'Ethereum',
    upstreams: [bad.url, good.url],
    timeoutMs: opts.timeoutMs ?? 2_000,
    failover,
    ...(opts.noHeadPolls ? { head: { pollSeconds: 0 } } : {}),
  };
  const config = makeConfig([bad.url, good.url], { chains: { '1': chain }, ...opts.extra });
  return startGateway(config, opts.now ? { now: opts.now } : {});
}

/** A write: one eth_sendRawTransaction through the gateway's JSON-RPC path. */
const sendRaw = (g: TestGateway) =>
  g.get('/1/api/eth-rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: ['0x02f8'] }),
  });

const credits = (res: Response) => Number(res.headers.get('x-credits-remaining'));

/** `name{labels}` value from /metrics, 0 when absent. */
async function metric(g: TestGateway, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await g.ops('/metrics')).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.indexOf('}'));
    if (want.every((w) => inner.split(',').includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

/** The sum of every sample of a counter. */
async function metricSum(g: TestGateway, name: string): Promise<number> {
  const text = await (await g.ops('/metrics')).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

const BAD_KINDS = [
  ['accepts the connection and never answers', { hang: true }],
  ['answers 503', { failStatus: 503 }],
  ['answers 429 with Retry-After: 1', { failStatus: 429, extraHeaders: { 'retry-after': '1' } }],
  ['resets the connection', { destroySocket: true }],
  ['answers 200 with an HTML page', { garbage: true }],
] as const;

describe('reads go to the next upstream, billed once, answered 200', () => {
  it.each(BAD_KINDS)('the first upstream %s: 20 of 20 misses answered by the second, each billed once', async (_what, behaviour) => {
    bad.reset();
    good.reset();
    bad.set(behaviour);
    // 400 ms per attempt: a hanging first upstream costs one share, not the 2 s deadline.
    const g = await gatewayWith({ attemptTimeoutMs: 400, hedgeAfterMs: 0 });
    try {
      const first = await g.get(balances());
      expect(first.status).toBe(200);
      let last = credits(first);
      for (let i = 1; i < 20; i++) {
        const res = await g.get(balances());
        expect(res.status).toBe(200);
        expect(res.headers.get('x-credits-remaining')).not.toBe('-1');
        // 20 credits a request (costs.default), exactly once each.
        expect(last - credits(res)).toBe(20);
        last = credits(res);
      }
      expect(good.hits(), 'the second saw every miss').toBeGreaterThanOrEqual(20);
      // The first upstream is left alone once it is ejected (5 failures) or cooling (the 429's second).
      expect(bad.hits()).toBeLessThanOrEqual(5);
      const outcome = { 'answers 503': '5xx', 'answers 429 with Retry-After: 1': '429' }[_what as string];
      if (outcome !== undefined)
        expect(await metric(g, 'egw_upstream_attempts_total', { upstream: new URL(bad.url).host, outcome })).toBeGreaterThan(0);
      // One ok attempt per request; more only where a loaded machine let an attempt on the second
      // outrun its share and the read was tried again (still billed once, above).
      expect(await metric(g, 'egw_upstream_attempts_total', { upstream: new URL(good.url).host, outcome: 'ok' })).toBeGreaterThanOrEqual(
        20,
      );
    } finally {
      await g.close();
      bad.reset();
    }
  });

  it('a hanging first upstream costs one attempt share: the answer comes from the second long before the deadline', async () => {
    bad.reset();
    bad.set({ hang: true });
    const g = await gatewayWith({ attemptTimeoutMs: 300, hedgeAfterMs: 0 }, { timeoutMs: 5_000 });
    try {
      const started = performance.now();
      const res = await g.get(balances());
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(await metric(g, 'egw_upstream_attempts_total', { outcome: 'timeout' })).toBe(1);
    } finally {
      await g.close();
      bad.reset();
    }
  });

  it('every route family fails over: legacy, JSON-RPC calls and batches, module=proxy', async () => {
    bad.reset();
    bad.set({ failStatus: 503 });
    const g = await gatewayWith({ hedgeAfterMs: 0, eject: { failures: 100, seconds: 30 } });
    try {
      const legacy = await g.get(`/1/api?module=account&action=balance&address=${fresh()}`);
      expect(legacy.status).toBe(200);
      expect(((await legacy.json()) as { status: string }).status).toBe('1');
      const rpc = (body: unknown) =>
        g.get('/1/api/eth-rpc', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      const single = await rpc({ jsonrpc: '2.0', id: 7, method: 'eth_getBalance', params: [fresh(), 'latest'] });
      expect(single.status).toBe(200);
      const one = (await single.json()) as { id: number; result?: string };
      expect(one.id).toBe(7);
      expect(one.result).toMatch(/^0x/);
      const batch = await rpc([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_getBalance', params: [fresh(), 'latest'] })));
      expect(batch.status).toBe(200);
      const answers = (await batch.json()) as { id: number; result?: string }[];
      expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
      expect(answers.every((a) => typeof a.result === 'string')).toBe(true);
      const proxy = await g.get(`/1/api?module=proxy&action=eth_getTransactionCount&address=${fresh()}&tag=latest`);
      expect(proxy.status).toBe(200);
      expect(((await proxy.json()) as { result?: string }).result).toMatch(/^0x/);
      expect(good.hits()).toBeGreaterThanOrEqual(4);
    } finally {
      await g.close();
      bad.reset();
    }
  });
});

describe('writes are sent once', () => {
  it('eth_sendRawTransaction that reached a failing explorer is not sent to the next one', async () => {
    bad.reset();
    good.reset();
    bad.set({ failStatus: 503 });
    const g = await gatewayWith({ hedgeAfterMs: 0 });
    try {
      const res = await sendRaw(g);
      expect(res.status).toBe(502);
      expect(bad.hits()).toBe(1);
      expect(good.hits()).toBe(0);
      expect(good.rawTransactions).toEqual([]);
    } finally {
      await g.close();
      bad.reset();
    }
  });
});

describe('the customer never sees the explorers throttling', () => {
  it("every upstream answers 429: 503 Explorer busy with Retry-After, unbilled, never the explorer's 429", async () => {
    bad.reset();
    good.reset();
    const g = await gatewayWith({ hedgeAfterMs: 0 });
    try {
      const before = credits(await g.get(balances()));
      bad.set({ failStatus: 429, extraHeaders: { 'retry-after': '3' } });
      good.set({ failStatus: 429, extraHeaders: { 'retry-after': '2' } });
      const res = await g.get(balances());
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ message: 'Explorer busy, try again' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Refunded: the balance shown is the one before.
      expect(credits(res)).toBe(before);
      // Both are cooling now: the next request is not sent anywhere until one is due back.
      const hits = bad.hits() + good.hits();
      const next = await g.get(balances());
      expect(next.status).toBe(503);
      expect(next.headers.get('retry-after')).not.toBeNull();
      expect(bad.hits() + good.hits()).toBeLessThanOrEqual(hits + 1);
    } finally {
      await g.close();
      bad.reset();
      good.reset();
    }
  });

  it('a cached answer is served stale (x-cache: STALE) when no upstream can answer', async () => {
    bad.reset();
    good.reset();
    const clock = movedClock();
    const g = await gatewayWith(
      { hedgeAfterMs: 0 },
      { now: clock.now, extra: { cache: { ttlSeconds: { 'token-balances': 5 }, staleSeconds: 600 } } },
    );
    const path = balances();
    try {
      expect((await g.get(path)).headers.get('x-cache')).toBe('MISS');
      clock.move(6_000);
      bad.set({ failStatus: 503 });
      good.set({ failStatus: 503 });
      const res = await g.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-cache')).toBe('STALE');
      // Back: the next answer after the refresh is the explorers' fresh one.
      bad.reset();
      good.reset();
      await until(async () => (await g.get(path)).headers.get('x-cache') === 'HIT', 'a fresh entry once the explorers are back');
      expect(good.hits() + bad.hits()).toBeGreaterThanOrEqual(1);
    } finally {
      await g.close();
      bad.reset();
      good.reset();
    }
  });
});

describe('upstream health', () => {
  it('ejects after 5 failures, probes once the ejection is over, and takes the upstream back', async () => {
    bad.reset();
    good.reset();
    const clock = movedClock();
    bad.set({ failStatus: 500 });
    const g = await gatewayWith({ hedgeAfterMs: 0, eject: { failures: 5, seconds: 30 } }, { now: clock.now });
    const host = new URL(bad.url).host;
    try {
      // Requests go to the first while it is a tie; each failure is tried on the second.
      for (let i = 0; i < 8; i++) expect((await g.get(balances())).status).toBe(200);
      expect(bad.hits()).toBe(5);
      expect(await metric(g, 'egw_upstream_ejections_total', { chain: '1', upstream: host })).toBe(1);
      expect(await metric(g, 'egw_upstream_up', { chain: '1', upstream: host })).toBe(0);
      const ready = (await (await g.ops('/readyz')).json()) as { chains: Record<string, { upstreams: Record<string, { state: string }> }> };
      expect(ready.chains['1']?.upstreams[host]?.state).toBe('ejected');
      bad.reset();
      clock.move(30_000);
      // The next request starts the probe; the upstream is back once the probe answered.
      expect((await g.get(balances())).status).toBe(200);
      await until(() => bad.healthProbes() === 1, 'the probe of the ejected upstream');
      await until(
        async () => (await metric(g, 'egw_upstream_up', { chain: '1', upstream: host })) === 1,
        'the upstream back in the rotation',
      );
    } finally {
      await g.close();
      bad.reset();
    }
  });

  it('a failed probe ejects it again for twice as long', async () => {
    bad.reset();
    good.reset();
    const clock = movedClock();
    bad.set({ failStatus: 500 });
    const g = await gatewayWith({ hedgeAfterMs: 0, eject: { failures: 1, seconds: 10 } }, { now: clock.now });
    const host = new URL(bad.url).host;
    try {
      expect((await g.get(balances())).status).toBe(200);
      clock.move(10_000);
      await g.get(balances());
      await until(async () => (await metric(g, 'egw_upstream_ejections_total', { upstream: host })) === 2, 'the second ejection');
      const view = async () =>
        ((await (await g.ops('/readyz')).json()) as { chains: Record<string, { upstreams: Record<string, { backInSeconds?: number }> }> })
          .chains['1']?.upstreams[host];
      expect((await view())?.backInSeconds).toBe(20);
    } finally {
      await g.close();
      bad.reset();
    }
  });

  it('every upstream ejected: one request at a time is sent as a trial, the others get 503 busy', async () => {
    bad.reset();
    good.reset();
    const clock = movedClock();
    bad.set({ failStatus: 500 });
    good.set({ failStatus: 500 });
    const g = await gatewayWith({ hedgeAfterMs: 0, eject: { failures: 1, seconds: 10 } }, { now: clock.now });
    try {
      expect((await g.get(balances())).status).toBe(502);
      bad.reset();
      good.reset();
      clock.move(10_000);
      // Both are due for their probes; hold the explorers so that probes and the trial stay in flight.
      const release = [bad.hold(), good.hold()];
      const answers = await Promise.all([g.get(balances()), g.get(balances())].map((p) => p.then((r) => r.status)));
      release.forEach((r) => r());
      expect(answers).toContain(503);
    } finally {
      await g.close();
      bad.reset();
      good.reset();
    }
  });

  it('/readyz stays ready while every upstream of a chain is down: a detail, not a condition', async () => {
    bad.reset();
    good.reset();
    const clock = movedClock();
    bad.set({ failStatus: 500 });
    good.set({ failStatus: 500 });
    const g = await gatewayWith({ hedgeAfterMs: 0, eject: { failures: 1, seconds: 30 } }, { now: clock.now });
    try {
      await g.get(balances());
      const res = await g.ops('/readyz');
      expect(res.status).toBe(200);
      const body = (await res.json()) as { status: string; chains: Record<string, { ready: boolean }> };
      expect(body.status).toBe('ready');
      expect(body.chains['1']?.ready).toBe(false);
    } finally {
      await g.close();
      bad.reset();
      good.reset();
    }
  });

  it('a reload keeps the health of an upstream whose URL is unchanged', async () => {
    bad.reset();
    good.reset();
    bad.set({ failStatus: 500 });
    const g = await gatewayWith({ hedgeAfterMs: 0, eject: { failures: 1, seconds: 600 } });
    const host = new URL(bad.url).host;
    try {
      await g.get(balances());
      expect(await metric(g, 'egw_upstream_up', { upstream: host })).toBe(0);
      const next = makeConfig([bad.url, good.url], {
        chains: { '1': { name: 'Ethereum renamed', upstreams: [bad.url, good.url], timeoutMs: 1_999, failover: { hedgeAfterMs: 0 } } },
      });
      g.app.gateway.reload(next);
      bad.reset();
      const hits = bad.hits();
      expect((await g.get(balances())).status).toBe(200);
      expect(bad.hits()).toBe(hits); // still ejected after the reload
      expect(await metric(g, 'egw_upstream_up', { upstream: host })).toBe(0);
    } finally {
      await g.close();
      bad.reset();
    }
  });
});

describe('hedged reads', () => {
  it('a read not answered after hedgeAfterMs also goes to the next upstream; the first answer wins', async () => {
    bad.reset();
    good.reset();
    bad.set({ delayMs: 1_500 });
    const g = await gatewayWith({ hedgeAfterMs: 50, hedgeMaxPercent: 100, attemptTimeoutMs: 1_900 }, { timeoutMs: 2_000 });
    try {
      const started = performance.now();
      const res = await g.get(balances());
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(good.hits()).toBe(1);
      expect(await metric(g, 'egw_upstream_hedges_total', { chain: '1', outcome: 'won' })).toBe(1);
    } finally {
      await g.close();
      bad.reset();
    }
  });

  it('hedges stay within hedgeMaxPercent of the requests (after the burst)', async () => {
    bad.reset();
    good.reset();
    // Both slow enough to be hedged every time; 0.1 % allows the burst of 10 and no more in 60 requests.
    bad.set({ delayMs: 60 });
    good.set({ delayMs: 60 });
    const g = await gatewayWith({ hedgeAfterMs: 5, hedgeMaxPercent: 0.1 });
    try {
      for (let i = 0; i < 60; i++) expect((await g.get(balances())).status).toBe(200);
      const hedges =
        (await metric(g, 'egw_upstream_hedges_total', { outcome: 'won' })) +
        (await metric(g, 'egw_upstream_hedges_total', { outcome: 'lost' }));
      expect(hedges).toBe(10);
      // At least the 50 client reads (a head poll of the quiet chain may be one more).
      expect(await metric(g, 'egw_upstream_hedges_total', { outcome: 'denied' })).toBeGreaterThanOrEqual(50);
      expect(bad.hits() + good.hits()).toBe(70);
    } finally {
      await g.close();
      bad.reset();
      good.reset();
    }
  });

  it('writes are never hedged', async () => {
    bad.reset();
    good.reset();
    bad.set({ delayMs: 300 });
    good.set({ delayMs: 300 });
    const g = await gatewayWith({ hedgeAfterMs: 5, hedgeMaxPercent: 100 });
    try {
      const res = await sendRaw(g);
      expect(res.status).toBe(200);
      expect(bad.hits() + good.hits()).toBe(1);
    } finally {
      await g.close();
      bad.reset();
      good.reset();
    }
  });
});

describe('services fail over too', () => {
  let s1: FixtureService;
  let s2: FixtureService;
  beforeAll(async () => {
    s1 = await startFixtureService({ kind: 'stats' });
    s2 = await startFixtureService({ kind: 'stats' });
  });
  afterAll(async () => {
    await s1.close();
    await s2.close();
  });

  it("a chain's stats service that answers 503 is tried on the next one; a probe brings it back", async () => {
    const clock = movedClock();
    s1.set({ failStatus: 503 });
    const chain = {
      name: 'Ethereum',
      upstreams: [good.url],
      stats: { upstreams: [s1.url, s2.url], failover: { eject: { failures: 1, seconds: 5 }, hedgeAfterMs: 0 } },
    };
    const g = await startGateway(makeConfig([good.url], { chains: { '1': chain } }), { now: clock.now });
    try {
      const res = await g.get('/1/stats-service/api/v1/counters');
      expect(res.status).toBe(200);
      expect(s1.hits()).toBe(1);
      expect(s2.hits()).toBe(1);
      s1.reset();
      clock.move(5_000);
      await g.get('/1/stats-service/api/v1/lines');
      await until(() => s1.healthProbes() === 1, "the stats service's probe");
    } finally {
      await g.close();
    }
  });
});

describe('faults', () => {
  it('an upstream killed and restarted mid-load: every request answered, and it takes traffic again after its probe', async () => {
    const clock = movedClock();
    const first = await startFixtureExplorer();
    const port = first.port;
    const second = await startFixtureExplorer();
    const config = makeConfig([first.url, second.url], {
      chains: {
        '1': {
          name: 'Ethereum',
          upstreams: [first.url, second.url],
          timeoutMs: 2_000,
          failover: { hedgeAfterMs: 0, eject: { failures: 2, seconds: 10 } },
        },
      },
    });
    const g = await startGateway(config, { now: clock.now });
    let restarted: FixtureExplorer | undefined;
    try {
      const statuses: number[] = [];
      const load = async (n: number) => {
        for (let i = 0; i < n; i++) statuses.push((await g.get(balances())).status);
      };
      const running = Promise.all([load(40), load(40), load(40)]);
      await until(() => statuses.length >= 20, 'load under way');
      await first.close();
      await running;
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      restarted = await startFixtureExplorer({ port });
      clock.move(10_000);
      // A probe that a loaded machine answers late fails and doubles the ejection: the test's clock
      // keeps moving, a second per try, so the next probe comes when it would have.
      await until(
        async () => {
          await g.get(balances());
          if (restarted!.hits() > 0) return true;
          clock.move(1_000);
          return false;
        },
        'the restarted upstream back in the rotation',
        30_000,
      );
      // Ejected (two failures in a row), it came back through a probe; only refusing, after its 5 s.
      const ejected = await metric(g, 'egw_upstream_ejections_total', { upstream: `127.0.0.1:${port}` });
      if (ejected > 0) expect(restarted.healthProbes()).toBeGreaterThanOrEqual(1);
    } finally {
      await g.close();
      await restarted?.close();
      await second.close();
    }
  });

  it('property: whatever the two upstreams do, never an upstream 429 passed on, never a write twice, attempts bounded, a failure never billed', async () => {
    const kinds = [
      {},
      { failStatus: 503 },
      { failStatus: 429, extraHeaders: { 'retry-after': '1' } },
      { destroySocket: true },
      { garbage: true },
      { delayMs: 150 },
    ];
    const g = await gatewayWith({ attemptTimeoutMs: 100, hedgeAfterMs: 40, hedgeMaxPercent: 50 }, { timeoutMs: 300, noHeadPolls: true });
    let balance = credits(await g.get(balances()));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              a: fc.integer({ min: 0, max: kinds.length - 1 }),
              b: fc.integer({ min: 0, max: kinds.length - 1 }),
              write: fc.boolean(),
            }),
            {
              minLength: 1,
              maxLength: 4,
            },
          ),
          async (steps) => {
            for (const step of steps) {
              bad.reset();
              good.reset();
              bad.set(kinds[step.a]!);
              good.set(kinds[step.b]!);
              const attemptsBefore = await metricSum(g, 'egw_upstream_attempts_total');
              const res = step.write ? await sendRaw(g) : await g.get(balances());
              await res.arrayBuffer();
              expect(res.status).not.toBe(429);
              if (step.write) expect(bad.hits() + good.hits()).toBeLessThanOrEqual(1);
              // Each upstream at most once per request (a retry or a hedge goes to another one); a write once.
              await until(async () => (await metricSum(g, 'egw_upstream_attempts_total')) >= attemptsBefore, 'the attempts counted');
              const attempts = (await metricSum(g, 'egw_upstream_attempts_total')) - attemptsBefore;
              expect(attempts).toBeLessThanOrEqual(step.write ? 1 : 2);
              // A failure is refunded whole: the balance it shows is the one before it.
              const shown = credits(res);
              if (res.status >= 500) expect(shown).toBe(balance);
              else expect(shown).toBeLessThan(balance);
              balance = shown;
            }
          },
        ),
        { numRuns: 15 },
      );
    } finally {
      await g.close();
      bad.reset();
      good.reset();
    }
  });
});
