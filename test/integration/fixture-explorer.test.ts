// The fixture explorer must behave like a Blockscout instance (docs/blockscout.md)
// and its bodies must validate against Blockscout's own PRO API 0.5.0 schemas; otherwise the
// gateway's integration tests would prove nothing about real upstreams.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { transactionsFor, tokenBalancesFor, tokenHoldersFor, ZERO_ADDRESS, HOLDABLE_TOKENS } from '../../fixture/data.js';
import { until } from '../support/wait.js';
import { toJsonSchema } from '../support/json-schema.js';

// ---- schemas: OpenAPI 3.0 -> JSON Schema for ajv.
interface Spec {
  components: { schemas: Record<string, unknown> };
  paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
}
const spec = JSON.parse(readFileSync(new URL('../../spec/pro-api-0.5.0.json', import.meta.url), 'utf8')) as Spec;
const response = (route: string, status: string): unknown =>
  spec.paths[`/{chain_id}/api/v2/addresses/{address_hash_param}/${route}`]?.get.responses[status]?.content['application/json']?.schema;
const ROOT = 'https://fixture.test/pro-api-0.5.0.json';
// One root document, so every '#/components/schemas/...' in the spec resolves inside it.
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(
  toJsonSchema({
    $id: ROOT,
    components: spec.components,
    responses: {
      balances: response('token-balances', '200'),
      transactions: response('transactions', '200'),
      error: response('transactions', '422'),
    },
  }) as object,
);
const schema = (pointer: string): ValidateFunction => ajv.compile({ $ref: `${ROOT}#${pointer}` });
const balancesSchema = schema('/responses/balances');
const transactionsSchema = schema('/responses/transactions');
const errorSchema = schema('/responses/error');
const expectValid = (validate: ValidateFunction, body: unknown): void => {
  expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
};

// ---- helpers
const ADDRESSES = [
  '0x3887e82dbdbe8ec6db44e6298a2d48af572a3b78',
  '0x742d35cc6634c0532925a3b844bc454e4438f44e',
  '0x200e710acaa6a93bbc77146026328c40f1d60fb1',
  '0xab5801a7d398351b8be11c439e05c5b3259aec9b',
];
const BUSY = ADDRESSES[0] ?? ''; // 113 transactions: more than one page even at the maximum size
const IMD = '0xD34a99Bc0f67aE1bbd63C660e6d0b0dd03E263B7';
let explorer: FixtureExplorer;
interface Got {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}
async function get(path: string, init: RequestInit = {}): Promise<Got> {
  const res = await fetch(`${explorer.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}
interface Tx {
  hash: string;
  block_number: number;
  position: number;
  value: string;
  fee: { value: string };
  from: { hash: string };
  to: { hash: string };
}
interface Page {
  items: Tx[];
  next_page_params: Record<string, string | number> | null;
}
/** Follows next_page_params as a client does: send them back plus filter/sort/order. */
async function walk(address: string, base: Record<string, string>): Promise<{ items: Tx[]; pages: number }> {
  const items: Tx[] = [];
  let next: Record<string, string | number> | null = {};
  let pages = 0;
  while (next !== null) {
    const qs = new URLSearchParams({ ...base, ...Object.fromEntries(Object.entries(next).map(([k, v]) => [k, String(v)])) });
    const { status, body } = await get(`/api/v2/addresses/${address}/transactions?${qs.toString()}`);
    expect(status).toBe(200);
    expectValid(transactionsSchema, body);
    const page = body as Page;
    if (page.next_page_params !== null) {
      expect(Object.keys(page.next_page_params).sort()).toEqual([
        'block_number',
        'fee',
        'hash',
        'index',
        'inserted_at',
        'items_count',
        'value',
      ]);
    }
    items.push(...page.items);
    next = page.next_page_params;
    pages += 1;
    expect(pages).toBeLessThan(200);
  }
  return { items, pages };
}
const keyOf = (tx: Tx, sort: string): bigint =>
  sort === 'value' ? BigInt(tx.value) : sort === 'fee' ? BigInt(tx.fee.value) : BigInt(tx.block_number);

beforeAll(async () => {
  explorer = await startFixtureExplorer({ port: 0 });
});
afterAll(async () => {
  await explorer.close();
});
beforeEach(() => {
  explorer.reset();
});

describe('schema validation', () => {
  it('rejects a deliberately broken body, so the suite can fail', () => {
    const page = { items: structuredClone(transactionsFor(BUSY).slice(0, 2)), next_page_params: null };
    expectValid(transactionsSchema, page);
    const extra = structuredClone(page);
    (extra.items[0] as unknown as Record<string, unknown>).surprise = 1;
    expect(transactionsSchema(extra)).toBe(false);
    const balances = structuredClone(tokenBalancesFor(BUSY, false));
    expectValid(balancesSchema, balances);
    expectValid(balancesSchema, [{ value: '1', token: null, token_id: null, token_instance: null }]);
    expect(balancesSchema([{ ...balances[0], token: { ...balances[0]?.token, reputation: 'bogus' } }])).toBe(false);
    expect(balancesSchema([{ ...balances[0], value: 12 }])).toBe(false);
  });
});

describe('GET /api/v2/addresses/{hash}/token-balances', () => {
  it('answers a bare array of TokenBalance with Blockscout headers', async () => {
    for (const address of ADDRESSES) {
      const { status, headers, body } = await get(`/api/v2/addresses/${address}/token-balances`);
      expect(status).toBe(200);
      expectValid(balancesSchema, body);
      expect(body).toEqual(tokenBalancesFor(address, false));
      const list = body as { token: { reputation: string }; token_instance: unknown }[];
      expect(list.length).toBeGreaterThanOrEqual(1);
      expect(list.length).toBeLessThanOrEqual(6);
      expect(list.every((b) => b.token_instance === null && b.token.reputation === 'ok')).toBe(true);
      expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
      for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(headers.get(h)).toMatch(/^\d+$/);
    }
  });

  it('ignores the letter case of the hash and shows scam tokens only on request', async () => {
    const lower = await get(`/api/v2/addresses/${BUSY}/token-balances`);
    const upper = await get(`/api/v2/addresses/0x${BUSY.slice(2).toUpperCase()}/token-balances`);
    expect(upper.body).toEqual(lower.body);
    const scam = await get(`/api/v2/addresses/${BUSY}/token-balances`, { headers: { 'show-scam-tokens': 'true' } });
    expectValid(balancesSchema, scam.body);
    const withScam = scam.body as { token: { reputation: string } }[];
    expect(withScam).toHaveLength((lower.body as unknown[]).length + 1);
    expect(withScam.at(-1)?.token.reputation).toBe('scam');
  });
});

describe('GET /api/v2/addresses/{hash}/transactions', () => {
  const variants: Record<string, string>[] = [
    {},
    { filter: 'to' },
    { filter: 'from' },
    { sort: 'value', order: 'asc' },
    { sort: 'fee', order: 'desc' },
    { sort: 'block_number', order: 'asc', filter: 'from' },
  ];
  it('pages through the whole list without duplicates and ends with null', async () => {
    for (const address of ADDRESSES) {
      for (const variant of variants) {
        const { items, pages } = await walk(address, { ...variant, items_count: '9' });
        const all = transactionsFor(address);
        const expected =
          variant.filter === 'to'
            ? all.filter((t) => t.to.hash === address)
            : variant.filter === 'from'
              ? all.filter((t) => t.from.hash === address)
              : all;
        expect(new Set(items.map((t) => t.hash)).size).toBe(items.length);
        expect(items.map((t) => t.hash).sort()).toEqual(expected.map((t) => t.hash).sort());
        expect(pages).toBe(Math.max(1, Math.ceil(expected.length / 9)));
        const sort = variant.sort ?? 'block_number';
        const sign = variant.order === 'asc' ? 1n : -1n;
        for (let i = 1; i < items.length; i++) {
          const [a, b] = [items[i - 1], items[i]] as [Tx, Tx];
          expect((keyOf(b, sort) - keyOf(a, sort)) * sign >= 0n).toBe(true);
        }
      }
    }
  });

  it('defaults to 50 per page, clamps items_count to 100, and ignores sort without order', async () => {
    const first = (await get(`/api/v2/addresses/${BUSY}/transactions`)).body as Page;
    expect(first.items).toHaveLength(50);
    expect(first.next_page_params?.items_count).toBe(50);
    expect(first.items.map((t) => t.hash)).toEqual(
      transactionsFor(BUSY)
        .slice(0, 50)
        .map((t) => t.hash),
    );
    const clamped = (await get(`/api/v2/addresses/${BUSY}/transactions?items_count=1000`)).body as Page;
    expect(clamped.items).toHaveLength(100);
    const sortOnly = (await get(`/api/v2/addresses/${BUSY}/transactions?sort=value`)).body as Page;
    expect(sortOnly.items.map((t) => t.hash)).toEqual(first.items.map((t) => t.hash));
  });

  it('answers the empty shapes for the zero address', async () => {
    expect((await get(`/api/v2/addresses/${ZERO_ADDRESS}/transactions`)).text).toBe('{"items":[],"next_page_params":null}');
    expect((await get(`/api/v2/addresses/${ZERO_ADDRESS}/token-balances`)).text).toBe('[]');
  });
});

describe('v2 errors', () => {
  const err = (pointer: string, detail: string) => ({ detail, source: { pointer }, title: 'Invalid value' });
  const HASH_DETAIL = 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{40})$/';
  it('answers 422 JsonErrorResponse bodies exactly', async () => {
    for (const route of ['token-balances', 'transactions']) {
      const bad = await get(`/api/v2/addresses/0x/${route}`);
      expect(bad.status).toBe(422);
      expect(bad.text).toBe(JSON.stringify({ errors: [err('/address_hash_param', HASH_DETAIL)] }));
    }
    const many = await get(`/api/v2/addresses/0xzz/transactions?sort=size&order=up&items_count=0&foo=1`);
    expect(many.status).toBe(422);
    expectValid(errorSchema, many.body);
    expect(many.body).toEqual({
      errors: [
        err('/address_hash_param', HASH_DETAIL),
        err('/sort', 'Invalid value for enum'),
        err('/order', 'Invalid value for enum'),
        err('/items_count', '0 is smaller than inclusive minimum 1'),
        err('/foo', 'Unexpected field: foo'),
      ],
    });
    const unexpected = await get(`/api/v2/addresses/${BUSY}/token-balances?foo=bar`);
    expect([unexpected.status, unexpected.body]).toEqual([422, { errors: [err('/foo', 'Unexpected field: foo')] }]);
  });

  it('answers 400 for an unknown v2 action', async () => {
    // /blocks, /addresses/{hash} and /addresses/{hash}/logs are served now (fixture-surface.test.ts).
    for (const path of ['/api/v2/no-such-resource', `/api/v2/addresses/${BUSY}/no-such-tab`, `/api/v2/addresses/${BUSY}/logs/extra`]) {
      expect(await get(path)).toMatchObject({ status: 400, body: { message: 'Unknown API v2 action' } });
    }
  });
});

describe('legacy /api?module=token', () => {
  const env = (status: number, message: string, result: unknown = null, ok = '0') => ({ status, body: { message, result, status: ok } });
  const call = async (qs: string, prefix = '/api') => {
    const r = await get(`${prefix}?${qs}`);
    return { status: r.status, body: r.body };
  };
  it('answers getToken, getTokenHolders and bridgedTokenList in the envelope', async () => {
    expect(await call(`module=token&action=getToken&contractaddress=${IMD}`)).toEqual(
      env(
        200,
        'OK',
        {
          cataloged: true,
          contractAddress: IMD.toLowerCase(),
          decimals: '18',
          name: 'Identity.md',
          symbol: 'IMD',
          totalSupply: '2376731868679000000000000',
          type: 'ERC-20',
        },
        '1',
      ),
    );
    const holders = tokenHoldersFor(IMD);
    expect(await call(`module=TOKEN&action=GETTOKENHOLDERS&contractaddress=${IMD}`, '/api/v1')).toEqual(
      env(200, 'OK', holders.slice(0, 10), '1'),
    );
    expect(await call(`module=token&action=getTokenHolders&contractaddress=${IMD}&page=3&offset=25`)).toEqual(
      env(200, 'OK', holders.slice(50, 75), '1'),
    );
    expect(await call(`module=token&action=getTokenHolders&contractaddress=${IMD}&page=0&offset=25`)).toEqual(
      env(200, 'OK', holders.slice(0, 10), '1'),
    );
    expect(await call(`module=token&action=getTokenHolders&contractaddress=${IMD}&offset=10001&page=1`)).toEqual(
      env(200, 'OK', holders.slice(0, 10), '1'),
    );
    expect(holders.every((h, i) => i === 0 || BigInt(holders[i - 1]?.value ?? '0') >= BigInt(h.value))).toBe(true);
    expect(await call(`module=token&action=getTokenHolders&contractaddress=${ZERO_ADDRESS}`)).toEqual(env(200, 'OK', [], '1'));
    const bridged = await call('module=token&action=bridgedTokenList&chain_ids=1,56&chainid=100');
    expect((bridged.body as { result: { homeHolderCount: unknown }[] }).result).toHaveLength(3);
    const fromEth = (await call('module=token&action=bridgedTokenList&chain_ids=1')).body as { result: Record<string, unknown>[] };
    expect(fromEth.result[0]).toEqual({
      foreignChainId: '1',
      foreignTokenContractAddressHash: '0x0ae055097c6d159879521c384f1d2123d1f195e6',
      homeContractAddressHash: '0xb7d311e2eb55f2f68a9440da38e7989210b9a05e',
      homeDecimals: '18',
      homeHolderCount: '393',
      homeName: 'STAKE on xDai',
      homeSymbol: 'STAKE',
      homeTotalSupply: '1484374.775044204093387391',
      homeUsdValue: '18807028.39981006586321824397',
    });
    expect(fromEth.result).toHaveLength(2);
  });

  it('answers errors with the statuses of the instance', async () => {
    expect(await call('module=token&action=getToken')).toEqual(env(200, 'Query parameter contract address is required'));
    expect(await call('module=token&action=getToken&contractaddress=badhash')).toEqual(env(200, 'Invalid contract address hash'));
    expect(await call('module=token&action=getTokenHolders&contractaddress=badhash')).toEqual(env(200, 'Invalid contract address hash'));
    expect(await call('module=token&action=getToken&contractaddress=0x8bf38d4764929064f2d4d3a56520a76ab3df415b')).toEqual(
      env(200, 'Contract address not found'),
    );
    expect(await call('module=token&action=noSuchAction')).toEqual(env(400, 'Unknown action'));
    expect(await call('module=nosuchmodule&action=getToken')).toEqual(env(400, 'Unknown module'));
    expect(await call(`contractaddress=${ZERO_ADDRESS}`)).toEqual(env(400, "Params 'module' and 'action' are required parameters"));
    explorer.set({ bridgedTokens: false });
    expect(await call('module=token&action=bridgedTokenList')).toEqual(env(400, 'Unknown action'));
  });
});

describe('behaviour switches and recording', () => {
  it('records method, path, query and headers of every request', async () => {
    await get(`/api/v2/addresses/${BUSY}/transactions?filter=to&items_count=5`, { headers: { 'x-trace': 'abc' } });
    await get('/api?module=token&action=getToken', { method: 'HEAD' });
    expect(explorer.hits()).toBe(2);
    expect(explorer.requests[0]).toMatchObject({
      method: 'GET',
      path: `/api/v2/addresses/${BUSY}/transactions`,
      url: `/api/v2/addresses/${BUSY}/transactions?filter=to&items_count=5`,
      query: { filter: 'to', items_count: '5' },
      headers: { 'x-trace': 'abc' },
    });
    expect(explorer.requests[1]).toMatchObject({ method: 'HEAD', path: '/api', query: { module: 'token', action: 'getToken' } });
  });

  it('answers HEAD like GET without a body', async () => {
    const path = `/api/v2/addresses/${BUSY}/token-balances`;
    const [head, full] = [await get(path, { method: 'HEAD' }), await get(path)];
    expect([head.status, head.text]).toEqual([200, '']);
    expect(head.headers.get('content-length')).toBe(full.headers.get('content-length'));
  });

  it('fails every route with failStatus and applies cacheControl and extraHeaders', async () => {
    explorer.set({ failStatus: 503, cacheControl: 'no-store', extraHeaders: { 'x-credits-remaining': '42' } });
    for (const path of [`/api/v2/addresses/${BUSY}/transactions`, '/api?module=token&action=getToken']) {
      const r = await get(path);
      expect([r.status, r.text, r.headers.get('cache-control'), r.headers.get('x-credits-remaining')]).toEqual([
        503,
        '{"message":"fixture failure"}',
        'no-store',
        '42',
      ]);
    }
    explorer.reset();
    expect((await get(`/api/v2/addresses/${BUSY}/token-balances`)).status).toBe(200);
  });

  it('delays, resets and hangs on request', async () => {
    explorer.set({ delayMs: 250 });
    const started = performance.now();
    expect((await get(`/api/v2/addresses/${BUSY}/token-balances`)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    explorer.set({ delayMs: 0, destroySocket: true });
    await expect(fetch(`${explorer.url}/api/v2/addresses/${BUSY}/token-balances`)).rejects.toThrow();
    explorer.set({ destroySocket: false, hang: true });
    await expect(fetch(`${explorer.url}/api?module=token&action=getToken`, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
  });

  it('close() ends hung requests', async () => {
    const other = await startFixtureExplorer({ port: 0 });
    other.set({ hang: true });
    const pending = fetch(`${other.url}/api/v2/addresses/${BUSY}/token-balances`).then(
      () => 'answered',
      () => 'failed',
    );
    await until(() => other.hits() === 1, 'the request to reach the explorer');
    await other.close();
    expect(await pending).toBe('failed');
  });
});

// Guards the test data itself: BUSY must need two pages even at the maximum page size.
it('uses an address with more than 100 transactions and real token catalogue entries', () => {
  expect(transactionsFor(BUSY).length).toBeGreaterThan(100);
  expect(HOLDABLE_TOKENS.some((t) => t.address_hash === IMD)).toBe(true);
});
