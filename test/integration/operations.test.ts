// What an operator relies on: /metrics after known traffic, /healthz, /readyz flipping with
// upstreams and Redis, and the operations listener: its guard, its port, and what the public
// listener does not show (src/app/ops.ts).
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer } from '../../fixture/explorer.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { buildServer } from '../../src/app/server.js';
import { ADDRESS, closedPort, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';
import { REDIS_URL, testPrefix } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { until as waitFor } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();

/** Asks `what` again until its answer passes `ok` (the event the test waits for). */
const until = <T>(what: () => Promise<T>, ok: (v: T) => boolean): Promise<T> =>
  waitFor(async () => {
    const v = await what();
    return ok(v) ? { v } : undefined;
  }, 'the expected answer').then(({ v }) => v);

describe('/metrics', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(
      makeConfig([fixture().url], {
        plans: { tiny: { rps: 2, credits: 1_000_000 }, free: { rps: 1000, credits: 1_000_000 } },
        keys: [
          { name: 'demo', key: DEMO_KEY, plan: 'free' },
          { name: 'tiny-key', key: 'tiny-secret', plan: 'tiny' },
        ],
        cache: { ttlSeconds: { 'token-balances': 15 } },
      }),
    );
  });
  afterAll(() => gw.close());

  it('counts requests by chain, route and status, cache outcomes, refusals, credits and upstream latency', async () => {
    await gw.get(BALANCES); // MISS, 200
    await gw.get(BALANCES); // HIT, 200
    await gw.get(`/1/api/v2/addresses/${ADDRESS}/transactions?sort=fee`); // 422
    await gw.get(BALANCES, { key: null }); // 401
    await gw.get('/999/api/v2/x'); // 404 unknown chain
    for (let i = 0; i < 3; i++) await gw.get(BALANCES, { key: 'tiny-secret' }); // 2 x 200 (hits), 1 x 429
    fixture().set({ failStatus: 500 });
    await gw.get(`/1/api/v2/addresses/${ADDRESS}/transactions`); // 502, refunded
    fixture().reset();

    const res = await gw.ops('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    const m = parsePrometheus(text);
    expect(valueOf(m, 'egw_requests_total', { chain: '1', route: 'token-balances', status: '200' })).toBe(4);
    expect(valueOf(m, 'egw_requests_total', { chain: '1', route: 'token-balances', status: '429' })).toBe(1);
    expect(valueOf(m, 'egw_requests_total', { chain: '1', route: 'transactions', status: '422' })).toBe(1);
    expect(valueOf(m, 'egw_requests_total', { chain: '1', route: 'token-balances', status: '401' })).toBe(1);
    expect(valueOf(m, 'egw_requests_total', { chain: 'none', route: 'none', status: '404' })).toBe(1);
    expect(valueOf(m, 'egw_cache_lookups_total', { outcome: 'miss' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(m, 'egw_cache_lookups_total', { outcome: 'hit' })).toBe(3);
    expect(valueOf(m, 'egw_quota_refusals_total', { plan: 'tiny', reason: 'rate_limited' })).toBe(1);
    // By plan (metrics.perKey is off: test/integration/metrics-per-key.test.ts).
    expect(valueOf(m, 'egw_credits_spent_total', { plan: 'free' })).toBe(40); // the 502 was refunded
    expect(valueOf(m, 'egw_credits_spent_total', { plan: 'tiny' })).toBe(40);
    expect(valueOf(m, 'egw_upstream_errors_total', { chain: '1', kind: 'status_5xx' })).toBe(1);
    expect(valueOf(m, 'egw_upstream_request_duration_seconds_count', { chain: '1', upstream: new URL(fixture().url).host })).toBe(2);
    expect(valueOf(m, 'egw_cache_bytes')).toBeGreaterThan(0);
    // Bounded labels: no key, no address, no path.
    for (const secret of [DEMO_KEY, 'tiny-secret', ADDRESS, ADDRESS.toLowerCase(), '/api/v2']) expect(text).not.toContain(secret);
  });

  it('health endpoints need no key', async () => {
    const res = await gw.get('/healthz', { key: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('the public listener shows no metrics, key names, spend or upstream addresses', async () => {
    await gw.get(BALANCES);
    expect((await gw.get('/metrics', { key: null })).status).toBe(404);
    expect((await gw.get('/metrics')).status).toBe(404);
    const ready = await until(
      () => gw.get('/readyz', { key: null }),
      (r) => r.status === 200,
    );
    const text = await ready.text();
    expect(JSON.parse(text)).toEqual({ status: 'ready' });
    for (const secret of ['demo', 'tiny-key', new URL(fixture().url).host, 'redis']) expect(text).not.toContain(secret);
    // The operations listener has the details.
    expect(await (await gw.ops('/readyz')).json()).toMatchObject({ status: 'ready', chains: { '1': { ready: true } } });
  });
});

describe('the operations listener', () => {
  it('requires the configured token on /metrics', async () => {
    const gw = await startGateway(makeConfig([fixture().url], { metrics: { port: 0, host: '127.0.0.1', token: 'scrape-token' } }));
    const scrape = (token?: string) => gw.ops('/metrics', token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    try {
      expect((await scrape()).status).toBe(401);
      expect((await scrape('wrong')).status).toBe(401);
      expect((await scrape('scrape-token')).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('listens on its own port, off the public one, and is gone when the gateway closes', async () => {
    const port = await closedPort();
    const gw = await startGateway(makeConfig([fixture().url], { metrics: { port, host: '127.0.0.1' } }));
    try {
      expect((await gw.get('/metrics', { key: null })).status).toBe(404);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('egw_requests_total');
      // Health answers there too, without a key (ready once the upstream probe has answered).
      const ready = await until(
        () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status),
        (st) => st === 200,
      );
      expect(ready).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toEqual({ status: 'ok' });
    } finally {
      await gw.close();
    }
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('without metrics.port there is none, and the public listener still has no /metrics', async () => {
    const config = makeConfig([fixture().url]);
    const gw = await startGateway({ ...config, metrics: { ...config.metrics, port: undefined } });
    try {
      await expect(gw.ops('/metrics')).rejects.toThrow(/no operations listener/);
      expect((await gw.get('/metrics', { key: null })).status).toBe(404);
      expect((await gw.get('/healthz', { key: null })).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('a metrics port that is taken stops the start, naming the listener and the address', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as AddressInfo;
    const config = makeConfig([fixture().url], { metrics: { port, host: '127.0.0.1' }, log: { level: 'error', requests: false } });
    const app = buildServer(config, { logStream: { write: () => undefined } });
    try {
      await expect(app.listen({ host: '127.0.0.1', port: 0 })).rejects.toThrow(
        `operations listener (metrics.port): cannot listen on 127.0.0.1:${port}: listen EADDRINUSE`,
      );
      expect(app.server.listening).toBe(false);
    } finally {
      await app.close();
      taken.close();
    }
  });
});

describe('/readyz', () => {
  it('stays ready when every upstream of a chain goes away (a detail, issue 37), and shows it and its return', async () => {
    const own = await startFixtureExplorer();
    const port = own.port;
    const gw = await startGateway(makeConfig([own.url], { health: { probeIntervalMs: 100, probeTimeoutMs: 200 } }));
    const ready = () =>
      gw.ops('/readyz').then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { status: string; chains: Record<string, { ready: boolean }> },
      }));
    try {
      expect((await until(ready, (r) => r.status === 200)).body).toMatchObject({
        status: 'ready',
        redis: 'not configured',
        chains: { '1': { ready: true } },
      });
      await own.close();
      expect((await until(ready, (r) => r.body.chains['1']?.ready === false)).body).toMatchObject({
        status: 'ready',
        chains: { '1': { ready: false } },
      });
      const back = await startFixtureExplorer({ port });
      try {
        expect((await until(ready, (r) => r.body.chains['1']?.ready === true)).status).toBe(200);
      } finally {
        await back.close();
      }
    } finally {
      await gw.close();
    }
  });

  it('flips when Redis goes away, and back', async () => {
    const target = new URL(REDIS_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    const gw = await startGateway(
      makeConfig([fixture().url], {
        redis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: testPrefix('ready') },
        health: { probeIntervalMs: 100, probeTimeoutMs: 200 },
      }),
    );
    const status = () => gw.get('/readyz', { key: null }).then((r) => r.status); // the bare answer flips too
    try {
      expect(await until(status, (s) => s === 200)).toBe(200);
      await proxy.cut();
      expect(await until(status, (s) => s === 503)).toBe(503);
      await proxy.restore();
      expect(await until(status, (s) => s === 200)).toBe(200);
    } finally {
      await gw.close();
      await proxy.close();
    }
  });
});
