// The gateway's side of the 40 operations of spec/pro-api-0.5.0.json outside /{chain_id}/api/v2/
// (contract section 9; src/request/service.ts, src/routes/service-check.ts): each operation is
// enumerated from the document and asked once through a real gateway in front of the fixture
// explorer and the four fixture services (fixture/services.ts). Checked here: the 200 body against
// the operation's 200 schema (ajv), the quota headers and the credits each route costs; a bad
// parameter refused before anything is forwarded or billed (google.rpc.Status for the Rust services,
// JsonErrorResponse for the explorer's two routes); unknown query names dropped or refused; the path
// and canonical query the service receives; the POSTs (body as sent, billed, never cached); the
// cache, per service; the stats service following the chain's head; keys kept to chains; and the
// 404 of a service that is not configured, before any key and billing nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { responseChecker } from '../support/json-schema.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { useFixtureService } from '../support/services.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import type { FixtureService } from '../../fixture/services.js';
import { DEMO_ADDRESS, MULTICHAIN_CLUSTER, SCAM_ADDRESS, USDC_ADDRESS, VITALIK_ADDRESS } from '../../fixture/services-data.js';
import { HEAD_BLOCK } from '../../fixture/data.js';
import { KNOWN_TX_HASH, blockHash, blockTimestamp } from '../../fixture/chain.js';

// ---- the document: its operations outside v2, their route names and 200 schemas
type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
  $ref?: string;
}
interface Operation {
  parameters?: Parameter[];
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; parameters?: Record<string, Parameter> };
}
const doc = JSON.parse(readFileSync(new URL('../../spec/pro-api-0.5.0.json', import.meta.url), 'utf8')) as Doc;
type Kind = 'explorer' | 'stats' | 'bens' | 'metadata' | 'multichain';
interface Op {
  /** "get /document/path" */
  key: string;
  method: 'GET' | 'POST';
  path: string;
  /** The route name: the template after the chain or after `/services/`. */
  name: string;
  kind: Kind;
  /** The path the service (or explorer) itself serves: the document's, its prefix removed. */
  served: string;
  op: Operation;
}
const PREFIXES: readonly [string, Kind][] = [
  ['/{chain_id}/stats-service', 'stats'],
  ['/services/bens', 'bens'],
  ['/services/metadata', 'metadata'],
  ['/services/multichain', 'multichain'],
  ['/{chain_id}', 'explorer'],
];
const OPS: Op[] = Object.entries(doc.paths)
  .filter(([path]) => !path.startsWith('/{chain_id}/api/v2/'))
  .flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): Op => {
      const found = PREFIXES.find(([prefix]) => path.startsWith(`${prefix}/`));
      if (found === undefined) throw new Error(`no prefix for ${path}`);
      const name = path.startsWith('/services/') ? path.slice('/services/'.length) : path.slice('/{chain_id}/'.length);
      return {
        key: `${method} ${path}`,
        method: method.toUpperCase() as 'GET' | 'POST',
        path,
        name,
        kind: found[1],
        served: path.slice(found[0].length),
        op,
      };
    }),
  )
  .sort((a, b) => (a.key < b.key ? -1 : 1));
const opByKey = new Map(OPS.map((o) => [o.key, o]));
const paramOf = (p: Parameter): Parameter =>
  p.$ref === undefined ? p : (doc.components.parameters?.[p.$ref.replace('#/components/parameters/', '')] ?? p);
const resolveSchema = (s: Schema | undefined): Schema => {
  let out = s ?? {};
  while (typeof out.$ref === 'string') out = doc.components.schemas[out.$ref.replace('#/components/schemas/', '')] ?? {};
  return out;
};
/** A parameter whose value can be wrong: boolean, integer, int64 or enum (the gateway's `chain_id` of `/{chain_id}/` aside). */
const checkable = (o: Op): string[] =>
  (o.op.parameters ?? [])
    .map(paramOf)
    .filter((p) => !(p.in === 'path' && p.name === 'chain_id' && o.path.startsWith('/{chain_id}/')))
    .filter((p) => {
      const s = resolveSchema(p.schema);
      return s.type === 'boolean' || s.type === 'integer' || s.format === 'int64' || Array.isArray(s.enum);
    })
    .map((p) => p.name);

const check = responseChecker(
  doc.components.schemas,
  Object.fromEntries(OPS.map((o) => [o.key, o.op.responses['200']?.content?.['application/json']?.schema ?? {}])),
);
function expectValid(o: Op, body: unknown): void {
  expect(check(o.key, body), o.key).toBeUndefined();
}

// ---- one valid request per operation, and one invalid one per operation with a checkable parameter
interface Case {
  op: string;
  values?: Record<string, string>;
  query?: string;
  body?: unknown;
  /** A request whose parameter does not parse, and the parameter's name. */
  invalid?: { values?: Record<string, string>; query?: string; param: string };
}
const M = { cluster_id: MULTICHAIN_CLUSTER };
const CASES: Case[] = [
  // stats
  { op: 'get /{chain_id}/stats-service/api/v1/counters' },
  { op: 'get /{chain_id}/stats-service/api/v1/lines' },
  {
    op: 'get /{chain_id}/stats-service/api/v1/lines/{name}',
    values: { name: 'newTxns' },
    query: 'resolution=DAY',
    invalid: { values: { name: 'newTxns' }, query: 'resolution=HOUR', param: 'resolution' },
  },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/contracts' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/interchain/main' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/main' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/multichain/main' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/transactions' },
  // bens, across networks
  {
    op: 'get /services/bens/api/v1/addresses/{address}',
    values: { address: VITALIK_ADDRESS },
    invalid: { values: { address: VITALIK_ADDRESS }, query: 'chain_id=one', param: 'chain_id' },
  },
  { op: 'post /services/bens/api/v1/addresses:batch-resolve', body: { addresses: [VITALIK_ADDRESS, DEMO_ADDRESS] } },
  {
    op: 'get /services/bens/api/v1/addresses:lookup',
    query: `address=${DEMO_ADDRESS}&resolved_to=true&owned_by=true`,
    invalid: { query: `address=${DEMO_ADDRESS}&page_size=abc`, param: 'page_size' },
  },
  {
    op: 'get /services/bens/api/v1/domains/{name}',
    values: { name: 'vitalik.eth' },
    invalid: { values: { name: 'vitalik.eth' }, query: 'only_active=maybe', param: 'only_active' },
  },
  {
    op: 'get /services/bens/api/v1/domains/{name}/events',
    values: { name: 'demo.eth' },
    invalid: { values: { name: 'demo.eth' }, query: 'order=SIDEWAYS', param: 'order' },
  },
  {
    op: 'get /services/bens/api/v1/domains:lookup',
    query: 'name=demo&only_active=true',
    // one past int64's largest
    invalid: { query: 'name=demo&page_size=9223372036854775808', param: 'page_size' },
  },
  { op: 'get /services/bens/api/v1/protocols', invalid: { query: 'chain_id=mainnet', param: 'chain_id' } },
  // bens, on one network
  {
    op: 'get /services/bens/api/v1/{chain_id}/addresses/{address}',
    values: { chain_id: '1', address: DEMO_ADDRESS },
    invalid: { values: { chain_id: 'one', address: DEMO_ADDRESS }, param: 'chain_id' },
  },
  {
    op: 'post /services/bens/api/v1/{chain_id}/addresses:batch-resolve-names',
    values: { chain_id: '1' },
    body: { addresses: [VITALIK_ADDRESS] },
    invalid: { values: { chain_id: '0x1' }, param: 'chain_id' },
  },
  {
    op: 'get /services/bens/api/v1/{chain_id}/addresses:lookup',
    values: { chain_id: '1' },
    query: `address=${VITALIK_ADDRESS}`,
    invalid: { values: { chain_id: '1' }, query: `address=${VITALIK_ADDRESS}&owned_by=yes`, param: 'owned_by' },
  },
  {
    op: 'get /services/bens/api/v1/{chain_id}/domains/{name}',
    values: { chain_id: '1', name: 'gateway.eth' },
    invalid: { values: { chain_id: 'eth', name: 'gateway.eth' }, param: 'chain_id' },
  },
  {
    op: 'get /services/bens/api/v1/{chain_id}/domains/{name}/events',
    values: { chain_id: '1', name: 'vitalik.eth' },
    query: 'order=ASC',
    invalid: { values: { chain_id: '1', name: 'vitalik.eth' }, query: 'order=asc', param: 'order' },
  },
  {
    op: 'get /services/bens/api/v1/{chain_id}/domains:lookup',
    values: { chain_id: '1' },
    query: 'name=eth&page_size=2',
    invalid: { values: { chain_id: '1' }, query: 'name=eth&page_size=2.5', param: 'page_size' },
  },
  {
    op: 'get /services/bens/api/v1/{chain_id}/protocols',
    values: { chain_id: '1' },
    invalid: { values: { chain_id: '1.0' }, param: 'chain_id' },
  },
  // metadata
  {
    op: 'get /services/metadata/api/v1/addresses',
    query: 'slug=stablecoin&chainId=1',
    invalid: { query: 'slug=stablecoin&pageSize=x', param: 'pageSize' },
  },
  { op: 'post /services/metadata/api/v1/addresses:submit', body: { addresses: [DEMO_ADDRESS] } },
  {
    op: 'get /services/metadata/api/v1/metadata',
    query: `addresses=${VITALIK_ADDRESS},${USDC_ADDRESS}&chainId=1`,
    invalid: { query: `addresses=${VITALIK_ADDRESS}&tagsLimit=many`, param: 'tagsLimit' },
  },
  { op: 'get /services/metadata/api/v1/public-tag-types' },
  { op: 'get /services/metadata/api/v1/reputation', query: `addresses=${VITALIK_ADDRESS},${SCAM_ADDRESS}` },
  {
    op: 'get /services/metadata/api/v1/tags:search',
    query: 'name=exchange&address_limit=1',
    invalid: { query: 'name=exchange&chain_id=ethereum', param: 'chain_id' },
  },
  // multichain
  { op: 'get /services/multichain/api/v1/clusters/{cluster_id}/chains', values: M },
  ...(['addresses', 'block-numbers', 'blocks', 'domains', 'nfts', 'tokens', 'transactions'] as const).map((what): Case => ({
    op: `get /services/multichain/api/v1/clusters/{cluster_id}/search/${what}`,
    values: M,
    query: `q=${
      {
        addresses: 'demo',
        'block-numbers': '12345&chain_id=1&chain_id=10',
        blocks: blockHash(HEAD_BLOCK - 10),
        domains: 'eth',
        nfts: 'punk',
        tokens: 'usd',
        transactions: KNOWN_TX_HASH,
      }[what]
    }`,
    invalid: { values: M, query: 'q=usd&page_size=ten', param: 'page_size' },
  })),
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search:quick',
    values: M,
    query: 'q=usd',
    invalid: { values: M, query: 'q=usd&unlimited_per_chain=1', param: 'unlimited_per_chain' },
  },
  {
    op: 'get /services/multichain/api/v1/search:quick',
    query: 'q=vitalik',
    invalid: { query: 'q=vitalik&unlimited_per_chain=yes', param: 'unlimited_per_chain' },
  },
  // the explorer itself
  {
    op: 'get /{chain_id}/api/legacy/block/get-block-number-by-time',
    query: `timestamp=${blockTimestamp(HEAD_BLOCK - 100)}&closest=before`,
    invalid: { query: `timestamp=${blockTimestamp(HEAD_BLOCK - 100)}&closest=around`, param: 'closest' },
  },
  { op: 'get /{chain_id}/api/v1/search', query: 'q=weth' },
];
const LINES = 'stats-service/api/v1/lines/{name}';
/** Credits per route where not `costs.default` (20). */
const COSTS: Record<string, number> = {
  'bens/api/v1/domains/{name}': 7,
  'stats-service/api/v1/counters': 3,
  'bens/api/v1/addresses:batch-resolve': 11,
  'multichain/api/v1/search:quick': 0,
};
const costOf = (name: string): number => COSTS[name] ?? 20;

function opOf(c: Case): Op {
  const o = opByKey.get(c.op);
  if (o === undefined) throw new Error(`${c.op} is not an operation of the document`);
  return o;
}
const fill = (template: string, values: Record<string, string> | undefined): string =>
  template.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(values?.[name] ?? (name === 'chain_id' ? '1' : `<${name}>`)));
const withQuery = (path: string, query: string | undefined): string => (query === undefined ? path : `${path}?${query}`);
/** The request target at the gateway. */
const gatewayPath = (o: Op, values?: Record<string, string>, query?: string): string => withQuery(fill(o.path, values), query);

// ---- the servers and the gateway
const explorer = useFixtureExplorer();
const stats = useFixtureService('stats', { head: () => explorer().head() });
/** Chain 10's stats service: the same paths as chain 1's, another service. */
const stats10 = useFixtureService('stats', { head: () => explorer().head() });
const bens = useFixtureService('bens');
const metadata = useFixtureService('metadata');
const multichain = useFixtureService('multichain');
const serviceOf = (kind: Kind): { hits(): number; requests: FixtureService['requests'] } => {
  switch (kind) {
    case 'explorer':
      return explorer();
    case 'stats':
      return stats();
    case 'bens':
      return bens();
    case 'metadata':
      return metadata();
    case 'multichain':
      return multichain();
  }
};

const CHAIN_KEY = 'test-key-chain-one';
interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}
const QUOTA_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-credits-remaining'] as const;
const creditsOf = (a: Answer): number => {
  const v = a.headers.get('x-credits-remaining');
  expect(v, 'x-credits-remaining').toMatch(/^\d+$/);
  return Number(v);
};
const rpcStatus = (message: unknown) => ({ code: 3, message, details: [] });

describe('the 40 operations outside /{chain_id}/api/v2/, through the gateway', () => {
  let gw: TestGateway;
  /** The demo key's credits after the last answer that named them. */
  let credits = 0;
  async function call(path: string, init: RequestInit & { key?: string | null } = {}): Promise<Answer> {
    const res = await gw.get(path, init);
    const text = await res.text();
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new Error(`${path}: ${res.status} not JSON: ${text.slice(0, 200)}`);
    }
    const left = res.headers.get('x-credits-remaining');
    if (left !== null && (init.key === undefined || init.key === DEMO_KEY)) credits = Number(left);
    return { status: res.status, headers: res.headers, body };
  }
  const post = (path: string, body: string, contentType = 'application/json'): Promise<Answer> =>
    call(path, { method: 'POST', body, headers: { 'content-type': contentType } });

  beforeAll(async () => {
    gw = await startGateway(
      makeConfig([explorer().url], {
        chains: {
          '1': { name: 'Ethereum', upstreams: [explorer().url], timeoutMs: 2_000, stats: { upstreams: [stats().url] } },
          '10': { name: 'Optimism', upstreams: [explorer().url], timeoutMs: 2_000, stats: { upstreams: [stats10().url] } },
        },
        services: {
          bens: { upstreams: [bens().url] },
          metadata: { upstreams: [metadata().url] },
          multichain: { upstreams: [multichain().url] },
        },
        keys: [
          { name: 'demo', key: DEMO_KEY, plan: 'free' },
          { name: 'chain-one', key: CHAIN_KEY, plan: 'free', chains: ['1'] },
        ],
        costs: { default: 20, routes: COSTS },
        // Service GETs keep their families' TTLs (cached); the stats lines are not kept, so that
        // a moved head shows at once.
        cache: { ttlSeconds: { 'token-balances': 0, transactions: 0, legacy: 0, [LINES]: 0 } },
      }),
    );
    // The demo key's credits before the first test (a request no case makes: nothing cached for them).
    const first = await call('/10/stats-service/api/v1/lines');
    expect(first.status).toBe(200);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('has one case per operation: the 40 of the document, each with an invalid request when it has a checkable parameter', async () => {
    expect(OPS).toHaveLength(40);
    expect(CASES.map((c) => c.op).sort()).toEqual(OPS.map((o) => o.key));
    const withCheckable = OPS.filter((o) => checkable(o).length > 0).map((o) => o.key);
    expect(
      CASES.filter((c) => c.invalid !== undefined)
        .map((c) => c.op)
        .sort(),
    ).toEqual(withCheckable);
    for (const c of CASES) if (c.invalid !== undefined) expect(checkable(opOf(c)), c.op).toContain(c.invalid.param);
    // And GET /api/json/config lists every route name with its cost.
    const res = await fetch(`${gw.url}/api/json/config`);
    expect(res.status).toBe(200);
    const { costs } = (await res.json()) as { costs: { default: number; routes: Record<string, number> } };
    expect(costs.default).toBe(20);
    for (const o of OPS) expect(costs.routes[o.name], o.name).toBe(costOf(o.name));
  });

  it.each(CASES)('$op: 200, valid against its 200 schema, quota headers, billed its cost', async (c) => {
    const o = opOf(c);
    const service = serviceOf(o.kind);
    const path = gatewayPath(o, c.values, c.query);
    const hits = service.hits();
    const before = credits;
    const sent = c.body === undefined ? undefined : JSON.stringify(c.body, null, 1); // as sent, spaces and all
    const res = sent === undefined ? await call(path) : await post(path, sent);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expectValid(o, res.body);
    for (const h of QUOTA_HEADERS) expect(res.headers.get(h), h).toMatch(/^-?\d+$/);
    expect(creditsOf(res), `credits after ${path}`).toBe(before - costOf(o.name));

    // It reached its own service once, at the service's own path, with the query in canonical order.
    expect(service.hits()).toBe(hits + 1);
    const got = service.requests.at(-1)!;
    expect(got.method).toBe(o.method);
    expect(got.path).toBe(fill(o.served, c.values));
    if (o.kind !== 'explorer') {
      const asked = [...new URLSearchParams(c.query ?? '')].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : 1));
      expect([...new URL(got.url, 'http://x').searchParams]).toEqual(asked);
    }
    if (sent !== undefined) {
      expect(got.body).toBe(sent);
      expect(got.headers['content-type']).toBe('application/json');
    }

    // Asked again: a GET of a service is answered from the cache (billed again), a POST goes again.
    const again = sent === undefined ? await call(path) : await post(path, sent);
    expect(again.status).toBe(200);
    expect(creditsOf(again)).toBe(before - 2 * costOf(o.name));
    if (o.method === 'POST') {
      expect(service.hits()).toBe(hits + 2);
      expect(again.headers.get('x-cache')).not.toBe('HIT');
    } else if (o.kind !== 'explorer' && o.name !== LINES) {
      expect(again.headers.get('x-cache')).toBe('HIT');
      expect(again.body).toEqual(res.body);
      expect(service.hits()).toBe(hits + 1);
    }
  });

  const invalidCases = CASES.filter((c) => c.invalid !== undefined);
  it.each(invalidCases)('$op: a bad $invalid.param is 422, neither forwarded nor billed', async (c) => {
    const o = opOf(c);
    const bad = c.invalid!;
    const service = serviceOf(o.kind);
    const path = gatewayPath(o, bad.values, bad.query);
    const hits = service.hits();
    const before = credits;
    const res = o.method === 'POST' ? await post(path, JSON.stringify(c.body)) : await call(path);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(422);
    if (o.kind === 'explorer') {
      expect(res.body).toEqual({
        errors: [{ title: 'Invalid value', source: { pointer: `/${bad.param}` }, detail: 'Invalid value for enum' }],
      });
    } else {
      expect(res.body).toEqual(rpcStatus(expect.stringContaining(bad.param)));
    }
    for (const h of QUOTA_HEADERS) expect(res.headers.get(h), h).toMatch(/^-?\d+$/);
    expect(creditsOf(res)).toBe(before);
    expect(service.hits()).toBe(hits);
  });

  it('drops unknown query names on a Rust service and sends the query in canonical order, at the service own path', async () => {
    const hits = stats().hits();
    const res = await call('/1/stats-service/api/v1/lines/newTxns?to=2025-02-01&resolution=WEEK&junk=1&from=2025-01-01&from=2024-12-01');
    expect(res.status).toBe(200);
    expect(stats().hits()).toBe(hits + 1);
    // The last `from` (not a repeated field), sorted, `junk` dropped.
    expect(stats().requests.at(-1)?.url).toBe('/api/v1/lines/newTxns?from=2024-12-01&resolution=WEEK&to=2025-02-01');

    const bensHits = bens().hits();
    const domains = await call('/services/bens/api/v1/domains:lookup?page_size=1&x=1&name=eth&order=DESC&only_active=true');
    expect(domains.status).toBe(200);
    expect(bens().hits()).toBe(bensHits + 1);
    expect(bens().requests.at(-1)?.url).toBe('/api/v1/domains:lookup?name=eth&only_active=true&order=DESC&page_size=1');
    // The same request with its names in another order, or with another unknown name: the same entry.
    const same = await call('/services/bens/api/v1/domains:lookup?only_active=true&order=DESC&name=eth&page_size=1&y=2');
    expect(same.headers.get('x-cache')).toBe('HIT');
    expect(bens().hits()).toBe(bensHits + 1);
  });

  it("refuses unknown query names on the explorer's routes", async () => {
    const hits = explorer().hits();
    const before = credits;
    for (const path of [
      '/1/api/v1/search?q=weth&x=1',
      `/1/api/legacy/block/get-block-number-by-time?timestamp=${blockTimestamp(HEAD_BLOCK)}&closest=before&x=1`,
    ]) {
      const res = await call(path);
      expect(res.status, path).toBe(422);
      expect(res.body, path).toEqual({
        errors: [{ title: 'Invalid value', source: { pointer: '/x' }, detail: 'Unexpected field: x' }],
      });
    }
    expect(explorer().hits()).toBe(hits);
    expect(credits).toBe(before);
  });

  describe('POSTs', () => {
    const BATCH = '/services/bens/api/v1/addresses:batch-resolve';
    it('a GET on a POST route is 405 with allow: POST; a POST on a GET route 405 with allow: GET, HEAD', async () => {
      const before = credits;
      for (const path of [BATCH, '/services/bens/api/v1/1/addresses:batch-resolve-names', '/services/metadata/api/v1/addresses:submit']) {
        const res = await call(path);
        expect(res.status, path).toBe(405);
        expect(res.headers.get('allow'), path).toBe('POST');
      }
      const res = await post('/services/bens/api/v1/protocols', '{}');
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      expect(credits).toBe(before);
      expect(bens().requests.filter((r) => r.method === 'GET' && r.path.includes('batch-resolve'))).toEqual([]);
    });

    it.each(['[1]', '"addresses"', 'null', '7', '{', '', '{"addresses": []} x'])(
      'a body that is not a JSON object (%j) is 422 google.rpc.Status, neither forwarded nor billed',
      async (text) => {
        for (const path of [BATCH, '/services/metadata/api/v1/addresses:submit']) {
          const service = path.includes('bens') ? bens() : metadata();
          const hits = service.hits();
          const before = credits;
          const res = await post(path, text);
          expect(res.status, path).toBe(422);
          expect(res.body).toEqual(rpcStatus('invalid body: expected a JSON object'));
          expect(creditsOf(res)).toBe(before);
          expect(service.hits()).toBe(hits);
        }
      },
    );

    it('sends the body byte for byte with content-type application/json, whatever the client said', async () => {
      const hits = bens().hits();
      const text = `{"addresses":["${VITALIK_ADDRESS}"],  "chain_id" : "1"}`;
      const res = await post(BATCH, text, 'text/plain;charset=utf-8');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(bens().hits()).toBe(hits + 1);
      const got = bens().requests.at(-1)!;
      expect(got).toMatchObject({ method: 'POST', url: '/api/v1/addresses:batch-resolve', body: text });
      expect(got.headers['content-type']).toBe('application/json');
    });
  });

  it('keeps GETs per service: the same path on two stats services is two entries', async () => {
    const path = (chain: string): string => `/${chain}/stats-service/api/v1/pages/interchain/main`;
    expect((await call(path('1'))).status).toBe(200); // chain 1's entry, there now if it was not yet
    const [one, ten] = [stats().hits(), stats10().hits()];
    // The same path (an unknown name dropped) on chain 10: its own miss, at its own service.
    const b = await call(`${path('10')}?x=1`);
    expect(b.status).toBe(200);
    expect(b.headers.get('x-cache')).not.toBe('HIT');
    expect([stats().hits(), stats10().hits()]).toEqual([one, ten + 1]);
    expect(stats10().requests.at(-1)?.url).toBe('/api/v1/pages/interchain/main');
    // Each is now answered from its own entry.
    for (const chain of ['1', '10']) expect((await call(path(chain))).headers.get('x-cache'), chain).toBe('HIT');
    expect([stats().hits(), stats10().hits()]).toEqual([one, ten + 1]);
  });

  it("follows the chain's head: lines move when the explorer's head does, once the entry has expired (TTL 0 here)", async () => {
    type Point = { date: string; value: string };
    const last = (a: Answer): Point => (a.body.chart as Point[]).at(-1)!;
    const counters = await call('/1/stats-service/api/v1/counters'); // cached now, if it was not yet
    const hits = stats().hits();
    const before = await call('/1/stats-service/api/v1/lines/newTxns');
    explorer().setHead(explorer().head() + 720); // a tenth of a day of 12 s blocks
    const after = await call('/1/stats-service/api/v1/lines/newTxns');
    expect([before.status, after.status]).toEqual([200, 200]);
    expect(after.headers.get('x-cache')).not.toBe('HIT');
    expect(stats().hits()).toBe(hits + 2);
    expect(last(after).date).toBe(last(before).date);
    expect(Number(last(after).value)).toBeGreaterThan(Number(last(before).value));
    // The counters, kept for their TTL, are the cached answer until it expires.
    const countersAfter = await call('/1/stats-service/api/v1/counters');
    expect(countersAfter.headers.get('x-cache')).toBe('HIT');
    expect(countersAfter.body).toEqual(counters.body);
    expect(stats().hits()).toBe(hits + 2);
  });

  it("shows each service on the operations listener's /readyz (probed like explorers), without making readiness depend on them", async () => {
    const names = ['stats:1', 'stats:10', 'bens', 'metadata', 'multichain'];
    let body: { status: string; services?: Record<string, { reachable: boolean; upstreams: Record<string, string> }> };
    await until(async () => {
      body = (await (await gw.ops('/readyz')).json()) as typeof body;
      return names.every((n) => body.services?.[n]?.reachable === true);
    }, 'every service probed reachable');
    expect(Object.keys(body!.services ?? {}).sort()).toEqual([...names].sort());
    expect(Object.values(body!.services?.bens?.upstreams ?? {}).map((u) => (u as unknown as { state: string }).state)).toEqual(['up']);
    expect(body!.status).toBe('ready');
  });

  it('lets a key kept to chain 1 use /services/ and chain 1, and refuses it chain 10 (403)', async () => {
    const opts = { key: CHAIN_KEY };
    expect((await call('/services/bens/api/v1/protocols', opts)).status).toBe(200);
    expect((await call('/services/multichain/api/v1/search:quick?q=usd', opts)).status).toBe(200);
    expect((await call('/1/stats-service/api/v1/lines', opts)).status).toBe(200);
    const hits = stats10().hits();
    const refused = await call('/10/stats-service/api/v1/lines', opts);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: 'API key not allowed on this chain' });
    expect(stats10().hits()).toBe(hits);
  });
});

// ---- services that are not configured
const NOT_CONFIGURED = {
  stats: 'Stats service not configured for this chain (chains.<chain_id>.stats.upstreams)',
  bens: 'Name service not configured (services.bens.upstreams)',
  metadata: 'Metadata service not configured (services.metadata.upstreams)',
  multichain: 'Search across chains not configured (services.multichain.upstreams, or clusters)',
};

describe('a service that is not configured', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Chain 1 without a stats service, chain 10 with one; no shared services, no clusters.
    gw = await startGateway(
      makeConfig([explorer().url], {
        chains: {
          '1': { name: 'Ethereum', upstreams: [explorer().url], timeoutMs: 2_000 },
          '10': { name: 'Optimism', upstreams: [explorer().url], timeoutMs: 2_000, stats: { upstreams: [stats10().url] } },
        },
      }),
    );
    hits = allHits();
    first = await credit();
  });
  afterAll(async () => {
    await gw?.close();
  });
  let first = 0;
  let hits: Record<string, number> = {};

  // One request per operation of each service, a bad parameter and a POST with a bad body among them.
  type NotConfiguredRequest = [string, keyof typeof NOT_CONFIGURED, RequestInit | undefined];
  const requests: NotConfiguredRequest[] = [
    ...CASES.map((c): NotConfiguredRequest | undefined => {
      const o = opOf(c);
      if (o.kind === 'explorer') return undefined;
      const init = c.body === undefined ? undefined : { method: 'POST', body: JSON.stringify(c.body) };
      return [gatewayPath(o, c.values, c.query), o.kind, init];
    }).filter((r) => r !== undefined),
    ['/services/bens/api/v1/protocols?chain_id=mainnet', 'bens', undefined],
    ['/1/stats-service/api/v1/lines/newTxns?resolution=HOUR', 'stats', undefined],
    ['/services/metadata/api/v1/addresses:submit', 'metadata', { method: 'POST', body: '[' }],
  ];

  /** The demo key's credits, read from a call to chain 10's stats service (billed 20). */
  const credit = async (): Promise<number> => {
    const res = await gw.get('/10/stats-service/api/v1/lines');
    expect(res.status).toBe(200);
    return Number(res.headers.get('x-credits-remaining'));
  };
  const allHits = (): Record<string, number> => ({
    stats: stats().hits(),
    bens: bens().hits(),
    metadata: metadata().hits(),
    multichain: multichain().hits(),
  });

  it.each(requests)('%s: 404 naming the setting (%s), with no key, the demo key or an unknown one', async (path, kind, init) => {
    for (const key of [null, DEMO_KEY, 'no-such-key']) {
      const res = await gw.get(path, { ...init, key, headers: { 'content-type': 'application/json' } });
      expect(res.status, `${path} (key ${key})`).toBe(404);
      expect(await res.json()).toEqual({ message: NOT_CONFIGURED[kind] });
      expect(res.headers.get('x-credits-remaining')).toBeNull();
    }
  });

  it('billed nothing and forwarded nothing for them', async () => {
    // The two calls to chain 10's stats differ by one cost: nothing was billed in between.
    expect(await credit()).toBe(first - 20);
    expect(allHits()).toEqual(hits);
  });
});

describe('clusters configured, no multichain service', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(makeConfig([explorer().url], { clusters: { demo: { chains: ['1'] } } }));
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers 404 "Cluster not found (clusters)" for a cluster not in clusters, before the key', async () => {
    for (const path of [
      '/services/multichain/api/v1/clusters/elsewhere/chains',
      '/services/multichain/api/v1/clusters/elsewhere/search/tokens?q=usd',
      '/services/multichain/api/v1/clusters/elsewhere/search:quick?q=usd',
    ]) {
      for (const key of [null, DEMO_KEY]) {
        const res = await gw.get(path, { key });
        expect(res.status, path).toBe(404);
        expect(await res.json()).toEqual({ message: 'Cluster not found (clusters)' });
        expect(res.headers.get('x-credits-remaining')).toBeNull();
      }
    }
    // A cluster that is there is not refused (the gateway answers it from its chains, not the service).
    const hits = multichain().hits();
    const known = await gw.get(`/services/multichain/api/v1/clusters/demo/chains`);
    expect(known.status).toBe(200);
    expect(multichain().hits()).toBe(hits);
  });

  // The cluster is read before the parameters are checked (src/routes/resolve.ts serviceRoute).
  it('answers that 404 before a bad parameter too, as for every other service', async () => {
    const res = await gw.get('/services/multichain/api/v1/clusters/elsewhere/search:quick?q=usd&unlimited_per_chain=maybe', { key: null });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'Cluster not found (clusters)' });
  });
});

describe('services configured while the gateway runs (a reload)', () => {
  let gw: TestGateway;
  const base = () => makeConfig([explorer().url]);
  beforeAll(async () => {
    gw = await startGateway(base());
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('serves a service once a reload names it, and answers 404 again once a reload takes it away', async () => {
    const path = '/services/bens/api/v1/domains/vitalik.eth';
    expect((await gw.get(path)).status).toBe(404);
    const before = bens().hits();
    expect(gw.app.gateway.reload(makeConfig([explorer().url], { services: { bens: { upstreams: [bens().url] } } }))).toEqual([]);
    const served = await gw.get(path);
    expect(served.status).toBe(200);
    expect(((await served.json()) as { name: string }).name).toBe('vitalik.eth');
    expect(bens().hits()).toBe(before + 1);
    expect(gw.app.gateway.reload(base())).toEqual([]);
    const gone = await gw.get(path);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ message: 'Name service not configured (services.bens.upstreams)' });
  });

  it('searches a cluster added by a reload', async () => {
    const path = '/services/multichain/api/v1/clusters/added/chains';
    expect(await (await gw.get(path)).json()).toEqual({
      message: 'Search across chains not configured (services.multichain.upstreams, or clusters)',
    });
    gw.app.gateway.reload(makeConfig([explorer().url], { clusters: { added: { chains: ['1'] } } }));
    const res = await gw.get(path);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ items: [{ id: '1', name: 'Ethereum' }], missing_chains: [] });
  });
});
