// egw_credits_spent_total through a real gateway (issue 25, item 10): by default labelled by the
// key's plan only, so the series stay as few as the plans however many keys are sold; with
// `metrics.perKey: true` by plan and key name. Credits billed on the REST path (request/finish.ts)
// and per JSON-RPC call (request/rpc.ts), a refunded 5xx left out
// (src/observability/metrics.ts, docs/configuration.md#metrics).
import { afterEach, describe, expect, it } from 'vitest';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { parsePrometheus, type Sample } from '../support/prometheus.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const TRANSACTIONS = `/1/api/v2/addresses/${ADDRESS}/transactions`;
const fixture = useFixtureExplorer();

/** Two plans; `free` has two keys, `pro` one. */
const config = (perKey?: boolean) =>
  makeConfig([fixture().url], {
    plans: {
      free: { rps: 1000, credits: 1_000_000, period: 'daily' },
      pro: { rps: 1000, credits: 1_000_000, period: 'daily' },
    },
    keys: [
      { name: 'demo', key: DEMO_KEY, plan: 'free' },
      { name: 'second', key: 'test-key-second', plan: 'free' },
      { name: 'big-customer', key: 'test-key-big', plan: 'pro' },
    ],
    costs: { default: 20, routes: { 'token-balances': 20, transactions: 30, 'rpc.eth_blockNumber': 7, 'rpc.eth_chainId': 3 } },
    cache: { ttlSeconds: { 'token-balances': 0, transactions: 0, 'rpc.eth_blockNumber': 0, 'rpc.eth_chainId': 0 } },
    ...(perKey === undefined ? {} : { metrics: { port: 0, host: '127.0.0.1', perKey } }),
  });

const rpc = (gw: TestGateway, key: string, body: unknown) =>
  gw.get('/1/json-rpc', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const call = (id: number, method: string) => ({ jsonrpc: '2.0', id, method, params: [] });

/**
 * The same traffic for both gateways. Billed: demo 20 + 20 + 7 = 47 (its 502 refunded), second
 * 30 + 7 + 3 = 40, big-customer 20 + 20 + 20 + 3 = 63; plan free 87, plan pro 63.
 */
async function traffic(gw: TestGateway): Promise<void> {
  const ok = async (res: Promise<Response>) => expect((await res).status).toBe(200);
  await ok(gw.get(BALANCES));
  await ok(gw.get(BALANCES));
  await ok(rpc(gw, DEMO_KEY, call(1, 'eth_blockNumber'))); // one call: request/rpc.ts
  fixture().set({ failStatus: 500 });
  expect((await gw.get(TRANSACTIONS)).status).toBe(502); // billed, then refunded
  fixture().reset();
  await ok(gw.get(TRANSACTIONS, { key: 'test-key-second' }));
  await ok(rpc(gw, 'test-key-second', [call(1, 'eth_blockNumber'), call(2, 'eth_chainId')])); // a batch, billed per call
  for (let i = 0; i < 3; i++) await ok(gw.get(BALANCES, { key: 'test-key-big' }));
  await ok(rpc(gw, 'test-key-big', call(1, 'eth_chainId')));
}

async function spent(gw: TestGateway): Promise<{ samples: Sample[]; text: string }> {
  const res = await gw.ops('/metrics');
  expect(res.status).toBe(200);
  const text = await res.text();
  return { samples: parsePrometheus(text).filter((s) => s.name === 'egw_credits_spent_total'), text };
}

describe('egw_credits_spent_total', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('is labelled by plan only by default: one series per plan, no key names', async () => {
    const c = config();
    expect(c.metrics.perKey).toBe(false);
    gw = await startGateway(c);
    await traffic(gw);
    const { samples, text } = await spent(gw);
    expect(samples.map((s) => ({ labels: s.labels, value: s.value })).sort((a, b) => a.value - b.value)).toEqual([
      { labels: { plan: 'pro' }, value: 63 },
      { labels: { plan: 'free' }, value: 87 },
    ]);
    // No key label anywhere in the exposition, and no key's name.
    expect(text).not.toMatch(/[{,]key="/);
    for (const name of ['demo', 'second', 'big-customer']) expect(text).not.toContain(`"${name}"`);
  });

  it('is labelled by plan and key name with metrics.perKey: true', async () => {
    gw = await startGateway(config(true));
    await traffic(gw);
    const { samples } = await spent(gw);
    expect(samples.map((s) => ({ labels: s.labels, value: s.value })).sort((a, b) => a.value - b.value)).toEqual([
      { labels: { plan: 'free', key: 'second' }, value: 40 },
      { labels: { plan: 'free', key: 'demo' }, value: 47 },
      { labels: { plan: 'pro', key: 'big-customer' }, value: 63 },
    ]);
  });

  it('metrics.perKey: false written out is the default', async () => {
    gw = await startGateway(config(false));
    await traffic(gw);
    const { samples } = await spent(gw);
    expect(samples.map((s) => s.labels)).toEqual(expect.arrayContaining([{ plan: 'free' }, { plan: 'pro' }]));
    expect(samples).toHaveLength(2);
  });
});
