// The fixture services (fixture/services.ts) and the two explorer routes outside /api/v2/
// (fixture/explorer-extra.ts) answer the 40 operations of spec/pro-api-0.5.0.json that are not under
// /{chain_id}/api/v2/. Each operation gets one valid request, straight to the fixture over loopback,
// whose 200 body is checked with ajv against the operation's own 200 schema (test/support/
// json-schema.ts); then what tests and the demo rely on: stats lines follow the explorer's head,
// unknown charts, names and clusters are 404 google.rpc.Status, bad parameters 400, paging, the
// behaviour switches, and the explorer's search and block-by-time answers.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { responseChecker } from '../support/json-schema.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { useFixtureService } from '../support/services.js';
import { SERVICE_KINDS, type FixtureService, type ServiceKind } from '../../fixture/services.js';
import {
  BENS_NAMES,
  DEMO_ADDRESS,
  LINE_CHART_IDS,
  MULTICHAIN_CLUSTER,
  SCAM_ADDRESS,
  USDC_ADDRESS,
  VITALIK_ADDRESS,
} from '../../fixture/services-data.js';
import { HEAD_BLOCK } from '../../fixture/data.js';
import { KNOWN_TX_HASH, blockHash, blockTimestamp } from '../../fixture/chain.js';

// ---- the document's 200 schemas, as ajv sees them
type Schema = Record<string, unknown>;
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
const doc = JSON.parse(readFileSync(new URL('../../spec/pro-api-0.5.0.json', import.meta.url), 'utf8')) as Doc;
const OUTSIDE_V2 = Object.entries(doc.paths)
  .filter(([path]) => !path.startsWith('/{chain_id}/api/v2/'))
  .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
  .sort();
const check = responseChecker(
  doc.components.schemas,
  Object.fromEntries(
    OUTSIDE_V2.map((key) => {
      const [method = '', path = ''] = key.split(' ');
      return [key, doc.paths[path]?.[method]?.responses['200']?.content?.['application/json']?.schema ?? {}];
    }),
  ),
);
function expectValid(operation: string, body: unknown): void {
  expect(OUTSIDE_V2, `${operation} is an operation of the document`).toContain(operation);
  expect(check(operation, body), operation).toBeUndefined();
}

// ---- the servers: one explorer, and the four services (stats follows the explorer's head)
const explorer = useFixtureExplorer();
const services: Record<ServiceKind, () => FixtureService> = {
  stats: useFixtureService('stats', { head: () => explorer().head() }),
  bens: useFixtureService('bens'),
  metadata: useFixtureService('metadata'),
  multichain: useFixtureService('multichain'),
};
/** Where a document path is served: the prefix the real service does not see, removed. */
const PREFIXES: readonly [string, ServiceKind | 'explorer'][] = [
  ['/{chain_id}/stats-service', 'stats'],
  ['/services/bens', 'bens'],
  ['/services/metadata', 'metadata'],
  ['/services/multichain', 'multichain'],
  ['/{chain_id}', 'explorer'],
];
function served(path: string): { kind: ServiceKind | 'explorer'; template: string } {
  const found = PREFIXES.find(([prefix]) => path.startsWith(`${prefix}/`));
  if (found === undefined) throw new Error(`no prefix for ${path}`);
  return { kind: found[1], template: path.slice(found[0].length) };
}
const baseUrl = (kind: ServiceKind | 'explorer'): string => (kind === 'explorer' ? explorer().url : services[kind]().url);

interface Json {
  [key: string]: unknown;
}
async function call(url: string, init?: RequestInit): Promise<{ status: number; type: string | null; body: Json }> {
  const res = await fetch(url, init);
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Json };
}
const postJson = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const at = (body: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Json)[k] : undefined), body);
const size = (v: unknown): number => (Array.isArray(v) ? v.length : v !== null && typeof v === 'object' ? Object.keys(v).length : 0);

// ---- one valid request per operation
interface Case {
  /** "get /document/path" as OUTSIDE_V2 lists it. */
  op: string;
  values?: Record<string, string>;
  query?: string;
  body?: unknown;
  /** A field of the answer that must hold something (a non-empty list or map). */
  filled?: string;
}
const A_BLOCK_HASH = blockHash(HEAD_BLOCK - 10);
const CASES: Case[] = [
  // stats
  { op: 'get /{chain_id}/stats-service/api/v1/counters', filled: 'counters' },
  { op: 'get /{chain_id}/stats-service/api/v1/lines', filled: 'sections' },
  { op: 'get /{chain_id}/stats-service/api/v1/lines/{name}', values: { name: 'newTxns' }, query: 'resolution=DAY', filled: 'chart' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/contracts', filled: 'total_contracts' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/interchain/main', filled: 'total_interchain_messages' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/main', filled: 'daily_new_transactions.chart' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/multichain/main', filled: 'new_txns_multichain_window.chart' },
  { op: 'get /{chain_id}/stats-service/api/v1/pages/transactions', filled: 'transactions_24h' },
  // bens, across networks
  { op: 'get /services/bens/api/v1/addresses/{address}', values: { address: VITALIK_ADDRESS }, filled: 'domains' },
  { op: 'post /services/bens/api/v1/addresses:batch-resolve', body: { addresses: [VITALIK_ADDRESS, DEMO_ADDRESS] }, filled: 'names' },
  { op: 'get /services/bens/api/v1/addresses:lookup', query: `address=${DEMO_ADDRESS}&resolved_to=true&owned_by=true`, filled: 'items' },
  { op: 'get /services/bens/api/v1/domains/{name}', values: { name: 'vitalik.eth' }, filled: 'owner' },
  { op: 'get /services/bens/api/v1/domains/{name}/events', values: { name: 'demo.eth' }, filled: 'items' },
  { op: 'get /services/bens/api/v1/domains:lookup', query: 'name=demo&only_active=true', filled: 'items' },
  { op: 'get /services/bens/api/v1/protocols', filled: 'items' },
  // bens, on one network
  { op: 'get /services/bens/api/v1/{chain_id}/addresses/{address}', values: { chain_id: '1', address: DEMO_ADDRESS }, filled: 'domain' },
  {
    op: 'post /services/bens/api/v1/{chain_id}/addresses:batch-resolve-names',
    values: { chain_id: '1' },
    body: { addresses: [VITALIK_ADDRESS] },
    filled: 'names',
  },
  {
    op: 'get /services/bens/api/v1/{chain_id}/addresses:lookup',
    values: { chain_id: '1' },
    query: `address=${VITALIK_ADDRESS}`,
    filled: 'items',
  },
  { op: 'get /services/bens/api/v1/{chain_id}/domains/{name}', values: { chain_id: '1', name: 'gateway.eth' }, filled: 'tokens' },
  {
    op: 'get /services/bens/api/v1/{chain_id}/domains/{name}/events',
    values: { chain_id: '1', name: 'vitalik.eth' },
    query: 'order=ASC',
    filled: 'items',
  },
  {
    op: 'get /services/bens/api/v1/{chain_id}/domains:lookup',
    values: { chain_id: '1' },
    query: 'name=eth&page_size=2',
    filled: 'next_page_params',
  },
  { op: 'get /services/bens/api/v1/{chain_id}/protocols', values: { chain_id: '1' }, filled: 'items' },
  // metadata
  { op: 'get /services/metadata/api/v1/addresses', query: 'slug=stablecoin&chainId=1', filled: 'items' },
  { op: 'post /services/metadata/api/v1/addresses:submit', body: { addresses: [DEMO_ADDRESS] } },
  { op: 'get /services/metadata/api/v1/metadata', query: `addresses=${VITALIK_ADDRESS},${USDC_ADDRESS}&chainId=1`, filled: 'addresses' },
  { op: 'get /services/metadata/api/v1/public-tag-types', filled: 'tagTypes' },
  { op: 'get /services/metadata/api/v1/reputation', query: `addresses=${VITALIK_ADDRESS},${SCAM_ADDRESS}`, filled: 'addresses' },
  { op: 'get /services/metadata/api/v1/tags:search', query: 'name=exchange&address_limit=1', filled: 'items' },
  // multichain
  { op: 'get /services/multichain/api/v1/clusters/{cluster_id}/chains', values: { cluster_id: MULTICHAIN_CLUSTER }, filled: 'items' },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search/addresses',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: 'q=demo',
    filled: 'items',
  },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search/block-numbers',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: 'q=12345&chain_id=1&chain_id=10',
    filled: 'items',
  },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search/blocks',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: `q=${A_BLOCK_HASH}`,
    filled: 'items',
  },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search/domains',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: 'q=eth',
    filled: 'items',
  },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search/nfts',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: 'q=punk',
    filled: 'items',
  },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search/tokens',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: 'q=usd',
    filled: 'items',
  },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search/transactions',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: `q=${KNOWN_TX_HASH}`,
    filled: 'items',
  },
  {
    op: 'get /services/multichain/api/v1/clusters/{cluster_id}/search:quick',
    values: { cluster_id: MULTICHAIN_CLUSTER },
    query: 'q=usd',
    filled: 'tokens',
  },
  { op: 'get /services/multichain/api/v1/search:quick', query: 'q=vitalik', filled: 'domains' },
  // the explorer itself
  {
    op: 'get /{chain_id}/api/legacy/block/get-block-number-by-time',
    query: `timestamp=${blockTimestamp(HEAD_BLOCK - 100)}&closest=before`,
    filled: 'result',
  },
  { op: 'get /{chain_id}/api/v1/search', query: 'q=weth', filled: 'items' },
];

function urlOf(c: Case): { kind: ServiceKind | 'explorer'; url: string } {
  const [, path = ''] = c.op.split(' ');
  const { kind, template } = served(path);
  const filled = template.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(c.values?.[name] ?? `<${name}>`));
  return { kind, url: `${baseUrl(kind)}${filled}${c.query === undefined ? '' : `?${c.query}`}` };
}

describe('every operation outside /{chain_id}/api/v2/ of the document', () => {
  it('has one case here, and there are 40 of them', () => {
    expect(CASES.map((c) => c.op).sort()).toEqual(OUTSIDE_V2);
    expect(OUTSIDE_V2).toHaveLength(40);
  });

  it.each(CASES)('$op answers 200 with a body valid against its 200 schema', async (c) => {
    const { url } = urlOf(c);
    const res = await call(url, c.body === undefined ? undefined : postJson(c.body));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expectValid(c.op, res.body);
    if (c.filled !== undefined) expect(size(at(res.body, c.filled)), `${c.filled} of ${JSON.stringify(res.body)}`).toBeGreaterThan(0);
  });
});

// ---- stats
const stats = (path: string): Promise<{ status: number; type: string | null; body: Json }> => call(`${services.stats().url}${path}`);
interface Point {
  date: string;
  date_to: string;
  value: string;
  is_approximate: boolean;
}
const pointsOf = (body: Json): Point[] => body.chart as Point[];
const todayUtc = (): string => new Date().toISOString().slice(0, 10);

describe('stats', () => {
  it('lists the charts it answers, in sections', async () => {
    const { body } = await stats('/api/v1/lines');
    const ids = (body.sections as { charts: { id: string }[] }[]).flatMap((s) => s.charts.map((c) => c.id));
    expect(ids.sort()).toEqual([...LINE_CHART_IDS].sort());
    expect(ids).toEqual(expect.arrayContaining(['newTxns', 'averageGasPrice', 'activeAccounts', 'txnsGrowth']));
  });

  it("moves today's points and the counters with the explorer's head", async () => {
    const before = {
      txns: pointsOf((await stats('/api/v1/lines/newTxns')).body),
      growth: pointsOf((await stats('/api/v1/lines/txnsGrowth')).body),
    };
    const counters = async (): Promise<Map<string, string>> =>
      new Map(((await stats('/api/v1/counters')).body.counters as { id: string; value: string }[]).map((c) => [c.id, c.value]));
    const countersBefore = await counters();
    explorer().setHead(explorer().head() + 720); // a tenth of a day of 12 s blocks
    const after = {
      txns: pointsOf((await stats('/api/v1/lines/newTxns')).body),
      growth: pointsOf((await stats('/api/v1/lines/txnsGrowth')).body),
    };
    const countersAfter = await counters();

    for (const series of [before.txns, after.txns, after.growth]) {
      expect(series.at(-1)?.date).toBe(todayUtc());
      expect(series.at(-1)?.is_approximate).toBe(true);
    }
    // A tenth of a day more of newTxns's 1,150,000 a day; the cumulative count grows by as much.
    const grew = Number(after.txns.at(-1)?.value) - Number(before.txns.at(-1)?.value);
    expect(grew).toBeGreaterThan(100_000);
    expect(Number(after.growth.at(-1)?.value) - Number(before.growth.at(-1)?.value)).toBe(grew);
    // Past days do not move.
    expect(after.txns.slice(0, -1)).toEqual(before.txns.slice(0, -1));
    expect(Number(countersAfter.get('totalBlocks'))).toBe(explorer().head() + 1);
    expect(Number(countersAfter.get('totalTxns'))).toBeGreaterThan(Number(countersBefore.get('totalTxns')));
  });

  it('honours from, to and resolution', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const one = pointsOf((await stats(`/api/v1/lines/newBlocks?from=${yesterday}&to=${yesterday}`)).body);
    expect(one).toEqual([{ date: yesterday, date_to: yesterday, value: '7200', is_approximate: false }]);

    const weeks = pointsOf((await stats('/api/v1/lines/newTxns?resolution=WEEK')).body);
    expect(weeks.length).toBeGreaterThan(50);
    for (const w of weeks) {
      expect(new Date(`${w.date}T00:00:00Z`).getUTCDay()).toBe(1); // ISO weeks start on Monday
      expect(Date.parse(w.date_to) - Date.parse(w.date)).toBe(6 * 86_400_000);
    }
    const months = pointsOf((await stats('/api/v1/lines/averageGasPrice?resolution=MONTH')).body);
    expect(months.every((m) => m.date.endsWith('-01'))).toBe(true);
    expect(months.at(-1)?.is_approximate).toBe(true);
    // A from that is not a date is ignored, as read_service.rs does.
    const all = pointsOf((await stats('/api/v1/lines/newTxns?from=yesterday')).body);
    expect(all.length).toBe(365);
  });

  it('answers 404 for an unknown chart and 400 for a resolution outside the enum', async () => {
    const missing = await stats('/api/v1/lines/noSuchChart');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: 5, message: 'chart noSuchChart not found', details: [] });
    const bad = await stats('/api/v1/lines/newTxns?resolution=HOUR');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 3, details: [] });
    expect(bad.body.message).toMatch(/resolution/);
  });
});

// ---- bens
const bens = (path: string, init?: RequestInit): Promise<{ status: number; type: string | null; body: Json }> =>
  call(`${services.bens().url}${path}`, init);
describe('bens', () => {
  it('resolves its names to fixed addresses and back', async () => {
    for (const [name, address] of Object.entries(BENS_NAMES)) {
      const { status, body } = await bens(`/api/v1/1/domains/${name}`);
      expect(status).toBe(200);
      expect(String((body.resolved_address as Json).hash).toLowerCase()).toBe(address);
    }
    const { body } = await bens(
      '/api/v1/addresses:batch-resolve',
      postJson({ addresses: [VITALIK_ADDRESS, DEMO_ADDRESS, `0x${'0'.repeat(40)}`] }),
    );
    expect(Object.values(body.names as Json).sort()).toEqual(['demo.eth', 'vitalik.eth']);
  });

  it('pages lookups with page_size and page_token', async () => {
    const first = await bens(`/api/v1/addresses:lookup?address=${DEMO_ADDRESS}&page_size=1`);
    expect(first.body.items).toHaveLength(1);
    const next = first.body.next_page_params as { page_size: number; page_token: string; pageSize: number; pageToken: string };
    expect(next).toMatchObject({ page_size: 1, pageSize: 1 });
    const second = await bens(`/api/v1/addresses:lookup?address=${DEMO_ADDRESS}&page_size=1&page_token=${next.page_token}`);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.next_page_params).toBeUndefined();
    const names = [first, second].map((r) => ((r.body.items as Json[])[0] as Json).name);
    expect(names.sort()).toEqual(['demo.eth', 'fixture.eth']);
  });

  it('answers 404 for an unknown name and 400 for bad parameters', async () => {
    for (const path of ['/api/v1/domains/nobody.eth', '/api/v1/1/domains/nobody.eth', '/api/v1/domains/expired.eth?only_active=true']) {
      const { status, body } = await bens(path);
      expect(status, path).toBe(404);
      expect(body).toEqual({ code: 5, message: 'domain not found', details: [] });
    }
    for (const path of [
      '/api/v1/domains:lookup?page_size=abc',
      '/api/v1/domains:lookup?only_active=maybe',
      '/api/v1/domains:lookup?order=SIDEWAYS',
      '/api/v1/domains:lookup?sort=name',
      '/api/v1/abc/protocols',
      '/api/v1/5/domains/vitalik.eth',
      '/api/v1/addresses:lookup?address=0x1234',
      '/api/v1/protocols?chain_id=one',
    ]) {
      const { status, body } = await bens(path);
      expect(status, path).toBe(400);
      expect(body, path).toMatchObject({ code: 3, details: [] });
      expect(typeof body.message).toBe('string');
    }
    const notJson = await bens('/api/v1/addresses:batch-resolve', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    expect(String(notJson.body.message)).toMatch(/^Json deserialize error/);
  });
});

// ---- metadata and multichain
describe('metadata', () => {
  it('tags and rates fixed addresses, and refuses a bad page size', async () => {
    const url = services.metadata().url;
    const { body } = await call(`${url}/api/v1/metadata?addresses=${SCAM_ADDRESS},${DEMO_ADDRESS}&tagTypes=note`);
    expect(Object.keys(body.addresses as Json)).toEqual([SCAM_ADDRESS]);
    const rep = await call(`${url}/api/v1/reputation?addresses=${SCAM_ADDRESS},${VITALIK_ADDRESS}`);
    expect(rep.body.addresses).toEqual({ [SCAM_ADDRESS]: { score: 0 }, [VITALIK_ADDRESS]: { score: 100 } });
    const bad = await call(`${url}/api/v1/addresses?pageSize=x`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 3, details: [] });
  });
});

describe('multichain', () => {
  it(`knows the cluster "${MULTICHAIN_CLUSTER}" only, and refuses a chain id that is not a number`, async () => {
    const url = services.multichain().url;
    const missing = await call(`${url}/api/v1/clusters/elsewhere/search/tokens?q=usd`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: 5, message: 'cluster elsewhere not found', details: [] });
    const bad = await call(`${url}/api/v1/clusters/${MULTICHAIN_CLUSTER}/search/tokens?chain_id=mainnet`);
    expect(bad.status).toBe(400);
    const limited = await call(`${url}/api/v1/clusters/${MULTICHAIN_CLUSTER}/search/block-numbers?q=7&chain_id=10`);
    expect(limited.body.items).toEqual([{ block_number: '7', chain_id: '10' }]);
  });
});

// ---- all four: unknown paths, methods, switches, recording
describe('every service', () => {
  it.each(SERVICE_KINDS)('%s: unknown path 404, wrong method 405, failStatus, delay, recording', async (kind) => {
    const service = services[kind]();
    service.reset();
    const unknown = await call(`${service.url}/api/v1/no-such-thing`);
    expect(unknown.status).toBe(404);
    expect(unknown.type).toBe('application/json');
    expect(unknown.body).toMatchObject({ code: 5, details: [] });
    const trailing = await call(`${service.url}/api/v1/`);
    expect(trailing.status).toBe(404);

    const known = {
      stats: '/api/v1/counters',
      bens: '/api/v1/protocols',
      metadata: '/api/v1/public-tag-types',
      multichain: '/api/v1/search:quick?q=x',
    }[kind];
    expect((await call(`${service.url}${known}`, { method: 'DELETE' })).status).toBe(405);

    service.set({ failStatus: 503 });
    const failed = await call(`${service.url}${known}`);
    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({ code: 14, message: 'fixture failure', details: [] });
    service.set({ failStatus: null, delayMs: 150 });
    const started = Date.now();
    expect((await call(`${service.url}${known}`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    expect(service.hits()).toBe(5);
    expect(service.requests.at(-1)).toMatchObject({ method: 'GET', path: known.split('?')[0] });
    service.reset();
    expect(service.hits()).toBe(0);
  });

  it('records POST bodies, and refuses a body that is not JSON', async () => {
    const service = services.metadata();
    service.reset();
    const sent = { addresses: [DEMO_ADDRESS] };
    expect((await call(`${service.url}/api/v1/addresses:submit`, postJson(sent))).status).toBe(200);
    expect(service.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/addresses:submit', body: JSON.stringify(sent) });
    const form = await call(`${service.url}/api/v1/addresses:submit`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(form.status).toBe(400);
  });

  it('hangs until closed when told to', async () => {
    const service = services.bens();
    service.set({ hang: true });
    const controller = new AbortController();
    const pending = fetch(`${service.url}/api/v1/protocols`, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100));
    expect(service.hits()).toBeGreaterThan(0);
    controller.abort();
    await expect(pending).rejects.toThrow();
    service.reset();
    expect((await call(`${service.url}/api/v1/protocols`)).status).toBe(200);
  });
});

// ---- the explorer's two routes
describe('the explorer: /api/v1/search and get-block-number-by-time', () => {
  const search = async (q: string): Promise<Json[]> => {
    const { status, body } = await call(`${explorer().url}/api/v1/search?q=${encodeURIComponent(q)}`);
    expect(status).toBe(200);
    expectValid('get /{chain_id}/api/v1/search', body);
    expect(body.next_page_params).toBeNull();
    return body.items as Json[];
  };
  it('finds tokens, blocks, addresses and names by q', async () => {
    expect((await search('USD Coin')).map((i) => i.symbol)).toContain('USDC');
    const n = explorer().head() - 3;
    expect(await search(String(n))).toEqual([expect.objectContaining({ type: 'block', block_number: n })]);
    expect(await search(String(explorer().head() + 1000))).toEqual([]);
    expect((await search(USDC_ADDRESS)).map((i) => i.type)).toEqual(['token', 'contract']);
    expect(await search('vitalik.eth')).toEqual([expect.objectContaining({ type: 'ens_domain', address_hash: VITALIK_ADDRESS })]);
    expect(await search(KNOWN_TX_HASH)).toEqual([expect.objectContaining({ type: 'transaction' })]);
    expect(await search('')).toEqual([]);
  });

  const byTime = (query: string): Promise<{ status: number; type: string | null; body: Json }> =>
    call(`${explorer().url}/api/legacy/block/get-block-number-by-time?${query}`);
  it("maps a timestamp to the fixture chain's blocks, never above the head", async () => {
    const head = explorer().head();
    const t = blockTimestamp(head - 100);
    const cases: [string, unknown][] = [
      [`timestamp=${t}&closest=before`, { status: '1', message: 'OK', result: { blockNumber: String(head - 100) } }],
      [`timestamp=${t + 5}&closest=before`, { status: '1', message: 'OK', result: { blockNumber: String(head - 100) } }],
      [`timestamp=${t + 5}&closest=after`, { status: '1', message: 'OK', result: { blockNumber: String(head - 99) } }],
      [`timestamp=${t + 86_400}&closest=before`, { status: '1', message: 'OK', result: { blockNumber: String(head) } }],
      [`timestamp=${t + 86_400}&closest=after`, { status: '0', message: 'Block does not exist', result: null }],
      [`closest=before`, { status: '0', message: "Query parameter 'timestamp' is required", result: null }],
      [`timestamp=${t}`, { status: '0', message: "Query parameter 'closest' is required", result: null }],
    ];
    for (const [query, expected] of cases) {
      const { status, body } = await byTime(query);
      expect(status, query).toBe(200);
      expect(body, query).toEqual(expected);
      expectValid('get /{chain_id}/api/legacy/block/get-block-number-by-time', body);
    }
  });

  it('answers 422 for a timestamp or closest that does not cast', async () => {
    const { status, body } = await byTime('timestamp=yesterday&closest=around');
    expect(status).toBe(422);
    expect(body).toEqual({
      errors: [
        { title: 'Invalid value', source: { pointer: '/timestamp' }, detail: 'Invalid format. Expected ~r/^-?([1-9][0-9]*|0)$/' },
        { title: 'Invalid value', source: { pointer: '/closest' }, detail: 'Invalid value for enum' },
      ],
    });
  });
});
