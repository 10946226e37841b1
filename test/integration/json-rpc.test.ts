// The JSON-RPC endpoint and Etherscan's proxy module through a real gateway, in front of the
// fixture explorer's `/api/eth-rpc` (fixture/rpc.ts): single calls and batches with the ids kept,
// EIP-1474's error codes with HTTP 200, a batch paid whole or refused whole, one credit decision
// per request (the sum of its calls' credits), the shared cache and coalescing, and a raw transaction sent at most once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { HEAD_BLOCK } from '../../fixture/data.js';
import { SAMPLE_ACCOUNT } from '../../fixture/chain.js';
import { DEMO_KEY, makeConfig, refusedPort, startGateway, type TestGateway } from '../support/gateway.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const HEAD = `0x${HEAD_BLOCK.toString(16)}`;
const ADDRESS = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

let explorer: FixtureExplorer;
let gw: TestGateway;
/** A second gateway, caching, for the cache and coalescing tests. */
let cached: TestGateway;
/** A third, on a clock that moves only when a test moves it: every request of a test in one rate window. */
let frozen: TestGateway;
const clock = { now: Date.now() };

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  const base = {
    chains: { '1': { name: 'Ethereum', upstreams: [explorer.url], timeoutMs: 1_000 } },
    plans: {
      free: { rps: 1000, credits: 1_000_000, period: 'daily' as const },
      tiny: { rps: 3, credits: 1_000_000, period: 'daily' as const },
      poor: { rps: 1000, credits: 50, period: 'daily' as const },
    },
    keys: [
      { name: 'demo', key: DEMO_KEY, plan: 'free' },
      { name: 'tiny', key: 'tiny-key', plan: 'tiny' },
      { name: 'poor', key: 'poor-key', plan: 'poor' },
      { name: 'disabled', key: 'disabled-key', plan: 'free', status: 'disabled' as const },
    ],
    costs: { default: 20, routes: { 'rpc.eth_getLogs': 35 } },
  };
  gw = await startGateway(
    makeConfig([explorer.url], {
      ...base,
      rpc: { maxBatch: 5 },
      cache: { ttlSeconds: { 'rpc.eth_blockNumber': 0, 'rpc.eth_chainId': 0 } },
    }),
  );
  // Every route at its default TTL (makeConfig turns the legacy cache off).
  cached = await startGateway(makeConfig([explorer.url], { ...base, cache: { ttlSeconds: {} } }));
  frozen = await startGateway(makeConfig([explorer.url], { ...base, cache: { ttlSeconds: {} } }), { now: () => clock.now });
});
afterAll(async () => {
  await gw.close();
  await cached.close();
  await frozen.close();
  await explorer.close();
});
afterEach(() => explorer.reset());

const rpc = (g: TestGateway, body: unknown, { key = DEMO_KEY, path = '/1/json-rpc' }: { key?: string; path?: string } = {}) =>
  g.get(path, {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const call = (id: unknown, method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id, method, params });
const credits = (res: Response) => Number(res.headers.get('x-credits-remaining'));
const rpcHits = () => explorer.requests.filter((r) => r.path === '/api/eth-rpc').length;

describe('JSON-RPC at /{chain_id}/json-rpc and /{chain_id}/api/eth-rpc', () => {
  it('answers a single call with its id, forwarded to the explorer, billed its cost', async () => {
    const before = credits(await rpc(gw, call(1, 'eth_chainId')));
    const res = await rpc(gw, call('abc', 'eth_blockNumber'), { path: '/1/api/eth-rpc' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 'abc', result: HEAD });
    expect(credits(res)).toBe(before - 20);
    const sent = explorer.requests.at(-1)!;
    expect([sent.method, sent.path]).toEqual(['POST', '/api/eth-rpc']);
    expect(sent.body).not.toContain(DEMO_KEY);
    expect(JSON.parse(sent.body!)).toMatchObject({ method: 'eth_blockNumber', params: [] });
  });

  it('takes the key from ?apikey= (as ethers puts it) and refuses a call without one', async () => {
    const res = await gw.get(`/1/json-rpc?apikey=${DEMO_KEY}`, {
      method: 'POST',
      key: null,
      body: JSON.stringify(call(1, 'eth_blockNumber')),
    });
    expect(res.status).toBe(200);
    expect(explorer.requests.at(-1)!.url).toBe('/api/eth-rpc');
    const none = await gw.get('/1/json-rpc', { method: 'POST', key: null, body: JSON.stringify(call(1, 'eth_blockNumber')) });
    expect(none.status).toBe(401);
  });

  it('answers a batch in one array, ids and order kept; each valid call billed, refusals not, unknown methods never forwarded', async () => {
    const before = credits(await rpc(gw, call(0, 'eth_chainId')));
    explorer.reset();
    const res = await rpc(gw, [
      call(1, 'eth_blockNumber'),
      call('two', 'eth_unknownMethod'),
      call(3, 'eth_getBalance', ['0x12']),
      call(4, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2', address: ADDRESS }]),
      { jsonrpc: '1.0', id: 5, method: 'eth_blockNumber' },
    ]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: unknown; result?: unknown; error?: { code: number } }[];
    expect(body.map((a) => a.id)).toEqual([1, 'two', 3, 4, 5]);
    expect(body[0]!.result).toBe(HEAD);
    expect(body[1]!.error!.code).toBe(-32601);
    expect(body[2]!.error!.code).toBe(-32602);
    expect(Array.isArray(body[3]!.result)).toBe(true);
    expect(body[4]!.error!.code).toBe(-32600);
    // eth_blockNumber 20 + eth_getLogs 35 (costs.routes); the three refused calls cost nothing.
    expect(credits(res)).toBe(before - 55);
    const methods = explorer.requests.map((r) => (JSON.parse(r.body!) as { method: string }).method).sort();
    expect(methods).toEqual(['eth_blockNumber', 'eth_getLogs']);
  });

  it('answers a body that is not JSON -32700 and an empty batch -32600, with HTTP 200, billing nothing', async () => {
    const before = credits(await rpc(gw, call(0, 'eth_chainId')));
    const notJson = await rpc(gw, '{"jsonrpc":');
    expect(notJson.status).toBe(200);
    expect(await notJson.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) as unknown } });
    const empty = await rpc(gw, []);
    expect(empty.status).toBe(200);
    expect(((await empty.json()) as { error: { code: number } }).error.code).toBe(-32600);
    expect(credits(empty)).toBe(before);
  });

  it('refuses a batch over rpc.maxBatch and a body over 1 MiB with 413, nothing forwarded', async () => {
    const big = await rpc(
      gw,
      Array.from({ length: 6 }, (_, i) => call(i, 'eth_blockNumber')),
    );
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { message: string } }).error.message).toMatch(/6 calls .* limit of 5/);
    const huge = await rpc(gw, JSON.stringify(call(1, 'eth_call', [{ to: ADDRESS, data: `0x${'ab'.repeat(600_000)}` }])));
    expect(huge.status).toBe(413);
    expect(rpcHits()).toBe(0);
  });

  it('refuses a batch that cannot be paid whole with 402, billing none of its calls', async () => {
    const first = await rpc(gw, call(1, 'eth_chainId'), { key: 'poor-key' });
    expect(credits(first)).toBe(30);
    explorer.reset();
    const res = await rpc(gw, [call(1, 'eth_blockNumber'), call(2, 'eth_gasPrice')], { key: 'poor-key' });
    expect(res.status).toBe(402);
    const body = (await res.json()) as { id: number; error: { code: number } }[];
    expect(body.map((a) => [a.id, a.error.code])).toEqual([
      [1, -32005],
      [2, -32005],
    ]);
    expect(credits(res)).toBe(30);
    expect(rpcHits()).toBe(0);
    // The 30 left still pay for one call.
    expect(credits(await rpc(gw, call(3, 'eth_gasPrice'), { key: 'poor-key' }))).toBe(10);
  });

  it('counts a batch as one request against the rate limit and bills the sum of its calls; over the rate, 429 whole', async () => {
    // The frozen clock keeps every request of this test in one rate window.
    clock.now += 1_000;
    const batch = await rpc(
      frozen,
      [
        call(1, 'eth_blockNumber'),
        call(2, 'eth_gasPrice'),
        call(3, 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2', address: ADDRESS }]),
        call(4, 'eth_nope'),
        call(5, 'eth_chainId'),
      ],
      { key: 'tiny-key' },
    );
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { id: number; result?: unknown; error?: { code: number } }[];
    expect(answers.map((a) => [a.id, a.error?.code ?? 'ok'])).toEqual([
      [1, 'ok'],
      [2, 'ok'],
      [3, 'ok'],
      [4, -32601],
      [5, 'ok'],
    ]);
    // Five calls on a plan of 3 rps: one request of the window; 20 + 20 + 35 + 20 credits, the refused call none.
    expect(batch.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(credits(batch)).toBe(1_000_000 - 95);
    expect((await rpc(frozen, call(6, 'eth_chainId'), { key: 'tiny-key' })).status).toBe(200);
    expect((await rpc(frozen, call(7, 'eth_chainId'), { key: 'tiny-key' })).status).toBe(200);
    explorer.reset();
    const over = await rpc(frozen, [call(8, 'eth_blockNumber'), call(9, 'eth_gasPrice')], { key: 'tiny-key' });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(((await over.json()) as { id: number; error: { code: number } }[]).map((a) => [a.id, a.error.code])).toEqual([
      [8, -32005],
      [9, -32005],
    ]);
    expect(credits(over)).toBe(1_000_000 - 95 - 40);
    // Notifications only: refused, not carried out, so one error with id null tells why.
    const notes = await rpc(frozen, [{ jsonrpc: '2.0', method: 'eth_blockNumber' }], { key: 'tiny-key' });
    expect([notes.status, await notes.json()]).toEqual([
      429,
      { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'Too many requests' } },
    ]);
    expect(rpcHits()).toBe(0);
  });

  it('answers GET with 405 and Allow: POST', async () => {
    const res = await gw.get('/1/json-rpc');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('sends a raw transaction once, even when the explorer never answers; the call is refunded', async () => {
    const before = credits(await rpc(gw, call(0, 'eth_chainId')));
    explorer.reset();
    explorer.set({ hang: true });
    const res = await rpc(gw, call(9, 'eth_sendRawTransaction', ['0x02f86c0180843b9aca00']));
    expect(res.status).toBe(504);
    expect(((await res.json()) as { id: number; error: { code: number } }).error.code).toBe(-32603);
    expect(credits(res)).toBe(before);
    expect(rpcHits()).toBe(1);
  });
});

describe('JSON-RPC 2.0 by the letter (issue 41)', () => {
  const raw = (g: TestGateway, text: string, key: string | null = DEMO_KEY, path = '/1/json-rpc') =>
    g.get(path, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: text });

  it("answers a single call refused by the gateway's own checks with HTTP 200 and the JSON-RPC error", async () => {
    const cases: [unknown, number][] = [
      [call(1, 'eth_nope'), -32601],
      [call(2, 'eth_getBalance', ['0x12']), -32602],
      [{ jsonrpc: '1.0', id: 3, method: 'eth_blockNumber' }, -32600],
      [{ jsonrpc: '2.0', id: true, method: 'eth_blockNumber' }, -32600],
    ];
    for (const [body, code] of cases) {
      const res = await rpc(gw, body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(code);
    }
    expect(rpcHits()).toBe(0);
  });

  it('gives a notification no answer: alone 204 with no body, in a batch left out, a batch of them 204; each is carried out', async () => {
    const note = (method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', method, params });
    const before = credits(await rpc(gw, call(0, 'eth_chainId')));
    explorer.reset();
    const alone = await rpc(gw, note('eth_blockNumber'));
    expect(alone.status).toBe(204);
    expect(await alone.text()).toBe('');
    expect(alone.headers.get('content-length')).toBeNull();
    expect(alone.headers.get('x-ratelimit-limit')).toBe('1000');
    // Carried out and billed like any call (section 4.1: the server does not answer, it still acts).
    expect(credits(alone)).toBe(before - 20);
    expect(rpcHits()).toBe(1);

    const mixed = await rpc(gw, [
      note('eth_gasPrice'),
      call('a', 'eth_blockNumber'),
      note('eth_nope'),
      { foo: 'boo' },
      note('eth_getBalance', ['0x1']),
    ]);
    expect(mixed.status).toBe(200);
    // The request object that is no request ({"foo":"boo"}) is answered, id null (section 7's example).
    expect(await mixed.json()).toEqual([
      { jsonrpc: '2.0', id: 'a', result: HEAD },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) as unknown } },
    ]);
    const only = await rpc(gw, [note('eth_blockNumber'), note('eth_chainId')]);
    expect(only.status).toBe(204);
    expect(await only.text()).toBe('');
    // An explicit id null is an id: answered.
    expect(await (await rpc(gw, call(null, 'eth_blockNumber'))).json()).toEqual({ jsonrpc: '2.0', id: null, result: HEAD });
  });

  it('echoes ids exactly as sent, integers beyond 2^53 and fractions included', async () => {
    const single = await raw(gw, '{"jsonrpc":"2.0","id":9007199254740993,"method":"eth_blockNumber","params":[]}');
    expect(await single.text()).toBe(`{"jsonrpc":"2.0","id":9007199254740993,"result":"${HEAD}"}`);
    const batch = await raw(
      gw,
      '[{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":"9007199254740993","method":"eth_nope"},{"jsonrpc":"2.0","id":0.10,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber"}]',
    );
    const text = await batch.text();
    expect(text.match(/"id":[^,]+/g)).toEqual(['"id":123456789012345678901234567890', '"id":"9007199254740993"', '"id":0.10', '"id":7']);
  });

  it('answers 401, 403, 404 and 405 on the JSON-RPC path with a JSON-RPC error, keeping the HTTP status', async () => {
    const body = JSON.stringify(call(1, 'eth_blockNumber'));
    const none = await raw(gw, body, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32002, message: 'API key required' } });
    const wrong = await raw(gw, body, 'no-such-key', '/1/api/eth-rpc');
    expect([wrong.status, await wrong.json()]).toEqual([
      401,
      { jsonrpc: '2.0', id: null, error: { code: -32002, message: 'Invalid API key' } },
    ]);
    const disabled = await raw(gw, body, 'disabled-key');
    expect([disabled.status, await disabled.json()]).toEqual([
      403,
      { jsonrpc: '2.0', id: null, error: { code: -32002, message: 'API key disabled' } },
    ]);
    const chain = await raw(gw, body, DEMO_KEY, '/999/json-rpc');
    expect([chain.status, await chain.json()]).toEqual([
      404,
      { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Network not supported' } },
    ]);
    const get = await gw.get('/1/json-rpc');
    expect([get.status, get.headers.get('allow'), await get.json()]).toEqual([
      405,
      'POST',
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Method not allowed' } },
    ]);
    // The REST shape stays REST's.
    expect(await (await gw.get('/999/api/v2/stats')).json()).toEqual({ message: 'Network not supported' });
    expect(rpcHits()).toBe(0);
  });

  it("reads eth_getLogs' integer fromBlock and toBlock as Blockscout does, and names the field and what it takes otherwise", async () => {
    const filter = { address: ADDRESS, fromBlock: 3, toBlock: 4 };
    const numbers = await rpc(gw, call(1, 'eth_getLogs', [filter]));
    expect(numbers.status).toBe(200);
    expect(Array.isArray(((await numbers.json()) as { result: unknown }).result)).toBe(true);
    // Sent in hex, the spelling the explorer reads either way: one cache entry for both.
    expect(JSON.parse(explorer.requests.at(-1)!.body!)).toMatchObject({ params: [{ fromBlock: '0x3', toBlock: '0x4' }] });
    const hex = await rpc(gw, call(1, 'eth_getLogs', [{ ...filter, fromBlock: '0x3', toBlock: '0x4' }]));
    expect(hex.headers.get('x-cache')).toBe('HIT');
    const negative = await rpc(gw, call(2, 'eth_getLogs', [{ ...filter, fromBlock: -1 }]));
    expect(((await negative.json()) as { error: { code: number; message: string } }).error).toEqual({
      code: -32602,
      message:
        'Invalid params: filter.fromBlock: expected a block tag (latest, pending, safe, finalized, earliest) or a hex block number (0x...), got the number -1',
    });
    const block = await rpc(gw, call(3, 'eth_getBlockByNumber', [5, false]));
    expect(((await block.json()) as { error: { message: string } }).error.message).toBe(
      'Invalid params: block: expected a block tag (latest, pending, safe, finalized, earliest) or a hex block number (0x...), got the number 5',
    );
  });

  it('gives cached answers an Age, a single call and a batch alike (the oldest answer of a batch)', async () => {
    clock.now += 1_000;
    const first = await rpc(frozen, call(1, 'eth_getBlockByNumber', ['0x1', false]));
    expect([first.headers.get('x-cache'), first.headers.get('age')]).toEqual(['MISS', '0']);
    clock.now += 3_000;
    const hit = await rpc(frozen, call(2, 'eth_getBlockByNumber', ['0x1', false]));
    expect([hit.headers.get('x-cache'), hit.headers.get('age')]).toEqual(['HIT', '3']);
    clock.now += 2_000;
    const batch = await rpc(frozen, [call(3, 'eth_getBlockByNumber', ['0x2', false]), call(4, 'eth_getBlockByNumber', ['0x1', false])]);
    expect(batch.headers.get('age')).toBe('5');
    // A refusal comes from no cache: no Age.
    expect((await rpc(frozen, call(5, 'eth_nope'))).headers.get('age')).toBeNull();
  });
});

describe('the shared cache', () => {
  it('keeps a call by chain, method and canonical params: two spellings of one call are one entry', async () => {
    const a = await rpc(cached, call(1, 'eth_getBalance', [SAMPLE_ACCOUNT.toUpperCase().replace('0X', '0x'), 'latest']));
    const b = await rpc(cached, call(2, 'eth_getBalance', [SAMPLE_ACCOUNT.toLowerCase()]));
    expect([a.headers.get('x-cache'), b.headers.get('x-cache')]).toEqual(['MISS', 'HIT']);
    expect(((await b.json()) as { id: number }).id).toBe(2);
    expect(rpcHits()).toBe(1);
  });

  it('coalesces identical calls inside a batch, and never keeps a raw transaction or an estimate', async () => {
    const res = await rpc(cached, [call(1, 'eth_gasPrice'), call(2, 'eth_gasPrice'), call(3, 'eth_gasPrice')]);
    const body = (await res.json()) as { id: number; result: string }[];
    expect(new Set(body.map((a) => a.result)).size).toBe(1);
    expect(rpcHits()).toBe(1);
    explorer.reset();
    const tx = { to: ADDRESS, value: '0x1' };
    await rpc(cached, call(1, 'eth_estimateGas', [tx]));
    await rpc(cached, call(2, 'eth_estimateGas', [tx]));
    expect(rpcHits()).toBe(2);
  });

  it("serves Etherscan's proxy module from the same entry, in Etherscan's shape", async () => {
    const jsonRpc = await rpc(cached, call(1, 'eth_getCode', [ADDRESS, 'latest']));
    const code = ((await jsonRpc.json()) as { result: string }).result;
    explorer.reset();
    const proxy = await cached.get(`/v2/api?chainid=1&module=proxy&action=eth_getCode&address=${ADDRESS}&tag=latest&apikey=${DEMO_KEY}`, {
      key: null,
    });
    expect(proxy.status).toBe(200);
    expect(proxy.headers.get('x-cache')).toBe('HIT');
    expect(await proxy.json()).toEqual({ jsonrpc: '2.0', id: 1, result: code });
    expect(rpcHits()).toBe(0);
  });
});

describe("Etherscan's proxy module", () => {
  it('translates an action into the JSON-RPC call, by GET and by a POSTed form', async () => {
    const res = await gw.get(`/1/api?module=proxy&action=eth_blockNumber&apikey=${DEMO_KEY}`, { key: null });
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, result: HEAD });
    const posted = await gw.get('/v2/api?chainid=1', {
      method: 'POST',
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `module=proxy&action=eth_call&to=${ADDRESS}&data=0x70a08231&tag=latest&apikey=${DEMO_KEY}&chainid=1`,
    });
    expect(posted.status).toBe(200);
    expect(await posted.json()).toMatchObject({ jsonrpc: '2.0', id: 1 });
    const sent = JSON.parse(explorer.requests.at(-1)!.body!) as { method: string; params: unknown[] };
    expect(sent).toMatchObject({ method: 'eth_call', params: [{ to: ADDRESS.toLowerCase(), data: '0x70a08231' }, 'latest'] });
    expect(explorer.requests.at(-1)!.body).not.toContain(DEMO_KEY);
  });

  it('answers the block transaction count and a transaction by index off the block the explorer gives', async () => {
    const direct = (await (
      await fetch(`${explorer.url}/api/eth-rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(call(1, 'eth_getBlockByNumber', ['0x1885254', true])),
      })
    ).json()) as { result: { transactions: { hash: string }[] } };
    const txs = direct.result.transactions;
    expect(txs.length).toBeGreaterThan(1);
    const count = await gw.get(`/1/api?module=proxy&action=eth_getBlockTransactionCountByNumber&tag=0x1885254&apikey=${DEMO_KEY}`, {
      key: null,
    });
    expect(await count.json()).toEqual({ jsonrpc: '2.0', id: 1, result: `0x${txs.length.toString(16)}` });
    const at = await gw.get(
      `/1/api?module=proxy&action=eth_getTransactionByBlockNumberAndIndex&tag=0x1885254&index=0x1&apikey=${DEMO_KEY}`,
      {
        key: null,
      },
    );
    expect(((await at.json()) as { result: { hash: string } }).result.hash).toBe(txs[1]!.hash);
    const past = await gw.get(
      `/1/api?module=proxy&action=eth_getTransactionByBlockNumberAndIndex&tag=0x1885254&index=0xffff&apikey=${DEMO_KEY}`,
      {
        key: null,
      },
    );
    expect(((await past.json()) as { result: unknown }).result).toBeNull();
  });

  it("answers bad parameters with the node's -32602 and an action the explorer cannot answer with Etherscan's NOTOK, unbilled", async () => {
    const bad = await gw.get(`/1/api?module=proxy&action=eth_getTransactionByHash&txhash=0x12&apikey=${DEMO_KEY}`, { key: null });
    const before = credits(bad);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32602);
    const unsupported = await gw.get(`/1/api?module=proxy&action=eth_getUncleByBlockNumberAndIndex&tag=0x1&index=0x0&apikey=${DEMO_KEY}`, {
      key: null,
    });
    expect(await unsupported.json()).toEqual({
      status: '0',
      message: 'NOTOK',
      result: expect.stringContaining('eth_getUncleByBlockNumberAndIndex') as unknown,
    });
    expect(credits(unsupported)).toBe(before);
    expect(rpcHits()).toBe(0);
  });
});

describe('the legacy API by POST', () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  it('answers a POSTed read as its GET: the same upstream request, billed, and one cache entry', async () => {
    const get = await cached.get(`/1/api?module=account&action=balance&address=${ADDRESS}`);
    expect(get.headers.get('x-cache')).toBe('MISS');
    const before = credits(get);
    explorer.reset();
    const post = await cached.get('/1/api', {
      method: 'POST',
      key: null,
      headers: form,
      body: `module=account&action=balance&address=${ADDRESS}&apikey=${DEMO_KEY}`,
    });
    expect(post.status).toBe(200);
    expect(post.headers.get('x-cache')).toBe('HIT');
    expect(await post.text()).toBe(await get.text());
    expect(credits(post)).toBe(before - 20);
    expect(explorer.hits()).toBe(0);
    // The form's fields win over the query's, as Plug merges them; a multipart form reads the same.
    const multipart = new FormData();
    multipart.set('action', 'balance');
    multipart.set('address', ADDRESS);
    multipart.set('apiKey', DEMO_KEY);
    const mp = await cached.get('/1/api?module=account&action=txlist', { method: 'POST', key: null, body: multipart });
    expect(mp.headers.get('x-cache')).toBe('HIT');
  });

  it('refuses a body that is no form (415), one over rpc.maxVerifyBytes (413), and a POST on v2 (405)', async () => {
    const json = await gw.get('/1/api', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"module":"account"}' });
    expect([json.status, ((await json.json()) as { status: string }).status]).toEqual([415, '0']);
    const small = await startGateway(makeConfig([explorer.url], { rpc: { maxVerifyBytes: 1024 } }));
    try {
      const big = await small.get('/1/api', { method: 'POST', headers: form, body: `module=account&action=balance&x=${'a'.repeat(2048)}` });
      expect(big.status).toBe(413);
    } finally {
      await small.close();
    }
    const v2 = await gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`, { method: 'POST', body: 'x' });
    expect([v2.status, v2.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(explorer.hits()).toBe(0);
  });
});

describe('JSON-RPC on the Redis quota store', () => {
  it("bills a batch its calls' credits in one decision, and refuses one it cannot pay whole, billing nothing", async () => {
    const prefix = testPrefix('json-rpc');
    const redisGw = await startGateway(
      makeConfig([explorer.url], {
        redis: { url: REDIS_URL, keyPrefix: prefix },
        plans: { free: { rps: 1000, credits: 100, period: 'daily' } },
        storage: { path: ':memory:' },
      }),
    );
    const redis = connect();
    try {
      const first = await rpc(redisGw, [call(1, 'eth_blockNumber'), call(2, 'eth_gasPrice'), call(3, 'eth_chainId')]);
      expect(first.status).toBe(200);
      expect(credits(first)).toBe(40);
      // One request of the window for three calls, decided by the script as the in-process store does.
      expect(first.headers.get('x-ratelimit-remaining')).toBe('999');
      // 40 left; three calls cost 60: refused whole, nothing kept.
      const refused = await rpc(redisGw, [call(4, 'eth_blockNumber'), call(5, 'eth_gasPrice'), call(6, 'eth_chainId')]);
      expect(refused.status).toBe(402);
      expect(credits(refused)).toBe(40);
      // Two calls still fit, and then nothing does.
      expect(credits(await rpc(redisGw, [call(7, 'eth_blockNumber'), call(8, 'eth_gasPrice')]))).toBe(0);
      expect((await rpc(redisGw, call(9, 'eth_blockNumber'))).status).toBe(402);
    } finally {
      await redisGw.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
    }
  });
});

describe('JSON-RPC when the quota store is down', () => {
  it('refuses a batch whole with 503 and -32603 under onError: closed, and serves it with headers -1 under open', async () => {
    const port = await refusedPort();
    const down = (onError: 'open' | 'closed') =>
      startGateway(makeConfig([explorer.url], { redis: { url: `redis://127.0.0.1:${port}`, onError, commandTimeoutMs: 100 } }));
    const closed = await down('closed');
    try {
      const res = await rpc(closed, [call(1, 'eth_blockNumber'), call(2, 'eth_chainId')]);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { id: number; error: { code: number } }[]).map((a) => [a.id, a.error.code])).toEqual([
        [1, -32603],
        [2, -32603],
      ]);
      expect(rpcHits()).toBe(0);
    } finally {
      await closed.close();
    }
    const open = await down('open');
    try {
      const res = await rpc(open, call(1, 'eth_blockNumber'));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: string }).result).toBe(HEAD);
      expect(res.headers.get('x-credits-remaining')).toBe('-1');
    } finally {
      await open.close();
    }
  });
});
