// Issue 42, item 6: one billing rule for every route family (src/request/send.ts billable,
// docs/clients.md "What is billed"). For each family a refused request is sent (the gateway's own
// refusal after the credit step, or an upstream's 400 or 422) and the credits spent, read from the
// quota store as the admin API reads a balance, must not move; `x-credits-remaining` must already
// show the refund. An upstream's 404 and a 2xx are billed, as before. Real fixture explorer and
// services, one real gateway, with the in-process store and with Redis.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { startFixtureService, type FixtureService } from '../../fixture/services.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { SAMPLE_ADDRESS } from '../support/samples.js';
import { until } from '../support/wait.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const COST = 20;
const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const LEGACY = '/1/api?module=token&action=getToken&contractaddress=0xb7d311e2eb55f2f68a9440da38e7989210b9a05e';
const CSV = `/1/api/v2/addresses/${SAMPLE_ADDRESS}/transactions/csv?from_period=2019-01-01&to_period=2025-01-01`;
const METADATA = '/services/metadata/api/v1/metadata';
const COUNTERS = '/1/stats-service/api/v1/counters';
const SEARCH = '/services/multichain/api/v1/clusters/demo/search/tokens';

let explorer: FixtureExplorer;
let metadata: FixtureService;
let stats: FixtureService;
const redis = connect();
const prefix = testPrefix('gw-refusals');
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  metadata = await startFixtureService({ kind: 'metadata' });
  stats = await startFixtureService({ kind: 'stats', head: () => explorer.head() });
});
afterAll(async () => {
  await stats.close();
  await metadata.close();
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});
afterEach(() => {
  explorer.reset();
  metadata.reset();
  stats.reset();
});

const BALANCE = 1_000_000;
let gw: TestGateway;
let store: 'memory' | 'redis';
/** The demo key's balance as the answers so far should have left it. */
let balance = BALANCE;

async function startFor(which: 'memory' | 'redis'): Promise<void> {
  store = which;
  balance = BALANCE;
  gw = await startGateway(
    makeConfig([explorer.url], {
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url], timeoutMs: 2_000, stats: { upstreams: [stats.url] } } },
      services: { metadata: { upstreams: [metadata.url] } },
      clusters: { demo: { chains: ['1'] } },
      plans: { free: { rps: 1_000, credits: BALANCE } },
      costs: { default: COST },
      // Nothing kept: each request below reaches its upstream (or refusal) again.
      cache: {
        ttlSeconds: { 'token-balances': 0, legacy: 0, 'metadata/api/v1/metadata': 0, 'stats-service/api/v1/counters': 0 },
      },
      ...(which === 'redis' ? { redis: { url: REDIS_URL, keyPrefix: `${prefix}${Date.now()}:` } } : {}),
    }),
  );
}

/**
 * Credits the demo key has spent this period, as the in-process store keeps them (what the admin
 * API's balance reads). With Redis a process's lease holds credits apart, so there the balance is
 * read from the answers only: each one's x-credits-remaining comes from the store after the
 * refunds before it.
 */
async function spent(): Promise<number | undefined> {
  if (store === 'redis') return undefined;
  const state = gw.app.gateway.state();
  const now = state.now();
  const key = state.keys.find(DEMO_KEY, now)!;
  return (await state.quota.store.balance(key.account, key.plan.period, now)).spent;
}
const remaining = (res: Response) => Number(res.headers.get('x-credits-remaining'));

/** Sends a request and checks it cost `charged` credits: in its own x-credits-remaining, and in the store. */
async function costs(charged: number, send: () => Promise<Response>, status: number): Promise<Response> {
  const before = await spent();
  const res = await send();
  await res.arrayBuffer();
  expect(res.status).toBe(status);
  // The header is the balance after this answer was billed, refunds already taken off.
  balance -= charged;
  expect(remaining(res)).toBe(balance);
  if (before !== undefined) expect((await spent())! - before).toBe(charged);
  return res;
}
const get = (path: string, init?: RequestInit) => () => gw.get(path, init);
const rpc = (body: unknown) => () =>
  gw.get('/1/json-rpc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const call = (id: number, method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id, method, params });

describe.each(['memory', 'redis'] as const)('which answers cost credits, family by family (%s store)', (which) => {
  beforeAll(() => startFor(which));
  afterAll(() => gw.close());

  it('REST v2: an explorer 2xx and 404 are billed; its 400 and 422, and the gateway’s 422, are not', async () => {
    await costs(COST, get(BALANCES), 200);
    explorer.set({ failStatus: 404 });
    await costs(COST, get(BALANCES), 404);
    for (const failStatus of [400, 422]) {
      explorer.set({ failStatus });
      await costs(0, get(BALANCES), failStatus);
    }
    explorer.reset();
    await costs(0, get(`/1/api/v2/addresses/not-an-address/token-balances`), 422);
  });

  it('legacy module/action: an explorer 400 is not billed; a parameter error is not either', async () => {
    await costs(COST, get(LEGACY), 200);
    explorer.set({ failStatus: 400 });
    await costs(0, get(LEGACY), 400);
    explorer.reset();
    await costs(0, get('/1/api?module=token&action=getToken&contractaddress=0x12'), 200);
  });

  it('JSON-RPC: a refused call, alone or in a batch, costs nothing; the batch pays for its answered calls only', async () => {
    // A single call refused by the gateway's checks is HTTP 200 with its JSON-RPC error (issue 41).
    await costs(0, rpc(call(1, 'eth_getBalance', ['0x12'])), 200);
    await costs(COST, rpc([call(1, 'eth_blockNumber'), call(2, 'eth_getBalance', ['0x12']), call(3, 'eth_unknownMethod')]), 200);
  });

  it('module=proxy: a bad parameter and a failed call cost nothing', async () => {
    await costs(0, get('/1/api?module=proxy&action=eth_getTransactionByHash&txhash=0x12'), 200);
    explorer.set({ failStatus: 400 });
    await costs(0, get(`/1/api?module=proxy&action=eth_getTransactionCount&address=${ADDRESS}&tag=latest`), 502);
  });

  it('PRO services: metadata `addresses` is checked before forwarding (422, the service’s own shape, never sent)', async () => {
    await costs(COST, get(`${METADATA}?addresses=${ADDRESS}`), 200);
    const hits = metadata.hits();
    const res = await costs(0, get(`${METADATA}?addresses=not-an-address`), 422);
    expect(await gw.get(`${METADATA}?addresses=not-an-address`).then((r) => r.json())).toEqual({
      code: 3,
      message: 'invalid addresses: expected comma-separated addresses (0x and 40 hex digits), got "not-an-address"',
      details: [],
    });
    expect(res.headers.get('x-credits-remaining')).not.toBeNull();
    await costs(0, get(`/services/metadata/api/v1/reputation?addresses=${ADDRESS},0xnope`), 422);
    expect(metadata.hits()).toBe(hits);
    // The service's own 400 (a value only it refuses) is passed on and not billed; its 404 is billed.
    metadata.set({ failStatus: 400 });
    await costs(0, get(`${METADATA}?addresses=${ADDRESS}`), 400);
    metadata.set({ failStatus: 404 });
    await costs(COST, get(`${METADATA}?addresses=${ADDRESS}`), 404);
  });

  it('stats: the service’s 422 and the gateway’s refusal of a bad value cost nothing', async () => {
    await costs(COST, get(COUNTERS), 200);
    stats.set({ failStatus: 422 });
    await costs(0, get(COUNTERS), 422);
    stats.reset();
    await costs(0, get('/1/stats-service/api/v1/lines/txnsGrowth?resolution=FORTNIGHT'), 422);
  });

  it('cluster search: a bad chain_id or page_token is the gateway’s 422, unbilled (it billed 20)', async () => {
    await costs(COST, get(`${SEARCH}?q=usd`), 200);
    await costs(0, get(`${SEARCH}?q=usd&chain_id=137`), 422);
    await costs(0, get(`${SEARCH}?page_token=not-a-token`), 422);
  });

  it('streamed answers: an explorer 400 passes through unbilled, with the refund in its header; a 404 is billed', async () => {
    await costs(COST, get(CSV), 200);
    explorer.set({ failStatus: 400 });
    await costs(0, get(CSV), 400);
    explorer.set({ failStatus: 404 });
    await costs(COST, get(CSV), 404);
  });

  it('a client that went away before its answer (499) pays nothing, though the explorer answered 200', async () => {
    const before = await spent();
    const release = explorer.hold();
    const aborted = new AbortController();
    const answer = gw.get(BALANCES, { signal: aborted.signal }).catch(() => 'aborted');
    await until(() => explorer.requests.length > 0, 'the request to reach the explorer');
    aborted.abort();
    await answer;
    const connections = () => new Promise<number>((resolve) => gw.app.server.getConnections((_e, n) => resolve(n)));
    await until(async () => (await connections()) === 0, 'the gateway to see the client go');
    release();
    await until(() => gw.app.gateway.inFlight() === 0, 'the request to end');
    expect(await spent()).toBe(before);
    // The next answer's balance shows nothing was taken for it.
    await costs(COST, get(`/1/api/v2/addresses/${SAMPLE_ADDRESS}/token-balances`), 200);
  });
});
