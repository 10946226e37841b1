// CSV exports are streamed through (request/stream.ts, @fastify/reply-from), never buffered or
// cached, with the gateway's own headers; their failures answer like any other route's.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { refusedPort, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { SAMPLE_ADDRESS } from '../support/samples.js';

const CSV = `/1/api/v2/addresses/${SAMPLE_ADDRESS}/transactions/csv`;
const SIX_YEARS = `${CSV}?from_period=2019-01-01&to_period=2025-01-01`;
const BALANCE = 1_000_000;

let explorer: FixtureExplorer;
let gw: TestGateway;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(makeConfig([explorer.url], { chains: { '1': { name: 'E', upstreams: [explorer.url], timeoutMs: 300 } } }));
});
afterAll(async () => {
  await gw.close();
  await explorer.close();
});
afterEach(() => explorer.reset());

describe('streamed routes', () => {
  it('pass a large export through unchanged, with the quota headers and no cache headers', async () => {
    const direct = await (
      await fetch(`${explorer.url}/api/v2/addresses/${SAMPLE_ADDRESS}/transactions/csv?from_period=2019-01-01&to_period=2025-01-01`)
    ).text();
    expect(direct.length).toBeGreaterThan(500_000);
    const res = await gw.get(SIX_YEARS);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(direct);
    expect(res.headers.get('content-type')).toMatch(/^application\/csv/);
    expect(res.headers.get('x-request-id')).toMatch(/.+/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(res.headers.get('x-cache')).toBeNull();
    // Never kept: the same export again goes to the explorer again.
    await (await gw.get(SIX_YEARS)).text();
    expect(explorer.requests.filter((r) => r.path.endsWith('/csv'))).toHaveLength(3);
    expect(explorer.requests.at(-1)!.headers.authorization).toBeUndefined();
  });

  it('answer HEAD without a body', async () => {
    const res = await gw.get(CSV, { method: 'HEAD' });
    expect([res.status, await res.text()]).toEqual([200, '']);
    expect(explorer.requests.at(-1)!.method).toBe('HEAD');
  });

  it('turn an upstream 5xx into 502 without its body, refunded', async () => {
    explorer.set({ failStatus: 503 });
    const res = await gw.get(CSV);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ message: 'Upstream error' });
    const after = await gw.get(`${CSV}?not_a_parameter=1`); // a 422 bills nothing and shows the balance
    expect(after.headers.get('x-credits-remaining')).toBe(res.headers.get('x-credits-remaining'));
    expect(Number(res.headers.get('x-credits-remaining'))).toBeGreaterThan(0);
  });

  it('504 past the chain deadline, refunded', async () => {
    explorer.set({ hang: true });
    const before = Number((await gw.get(`${CSV}?not_a_parameter=1`)).headers.get('x-credits-remaining'));
    const res = await gw.get(CSV);
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ message: 'Upstream timed out' });
    expect(Number(res.headers.get('x-credits-remaining'))).toBe(before);
  });

  it('502 when the explorer cannot be reached, and the next request goes to the next upstream', async () => {
    const dead = `http://127.0.0.1:${await refusedPort()}`;
    const g = await startGateway(makeConfig([dead, explorer.url], { chains: { '1': { name: 'E', upstreams: [dead, explorer.url] } } }));
    try {
      const first = await g.get(CSV);
      expect([first.status, await first.json()]).toEqual([502, { message: 'Upstream unreachable' }]);
      expect(first.headers.get('x-credits-remaining')).toBe(String(BALANCE));
      const second = await g.get(CSV);
      expect(second.status).toBe(200);
      await second.text();
    } finally {
      await g.close();
    }
  });
});
