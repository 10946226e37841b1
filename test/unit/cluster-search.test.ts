// The gateway's own multichain search (src/multichain/cluster-search.ts) against an in-memory
// explorer: answers in the document's shapes (spec/pro-api-0.5.0.json), interleaving and
// cursors that serve every item exactly once, chains past the deadline or failing named in
// missing_chains, and refusals as google.rpc.Status. No HTTP, no real clock.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  answerCluster,
  type AnswerOptions,
  type AskChain,
  type ChainInfo,
  type ChainOutcome,
  type ClusterAnswer,
  type ClusterQuery,
  MULTICHAIN_ROUTES,
  type MultichainRoute,
} from '../../src/multichain/cluster-search.js';
import { decodeCursor, encodeCursor, type SearchCursor } from '../../src/multichain/cursor.js';
import { toJsonSchema } from '../support/json-schema.js';

// ---- the document's schemas: as published, and "closed" (every object refuses fields it does
// not name, top-level missing_chains added) to catch misspelt fields the document would let pass.
interface Spec {
  components: { schemas: Record<string, unknown> };
  paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
}
const spec = JSON.parse(readFileSync(new URL('../../spec/pro-api-0.5.0.json', import.meta.url), 'utf8')) as Spec;
type Shape = Exclude<MultichainRoute, 'search:quick'> | 'cluster-quick' | 'all-quick';
const BASE = '/services/multichain/api/v1';
const PATHS: Record<Shape, string> = {
  chains: `${BASE}/clusters/{cluster_id}/chains`,
  'search/addresses': `${BASE}/clusters/{cluster_id}/search/addresses`,
  'search/block-numbers': `${BASE}/clusters/{cluster_id}/search/block-numbers`,
  'search/blocks': `${BASE}/clusters/{cluster_id}/search/blocks`,
  'search/domains': `${BASE}/clusters/{cluster_id}/search/domains`,
  'search/nfts': `${BASE}/clusters/{cluster_id}/search/nfts`,
  'search/tokens': `${BASE}/clusters/{cluster_id}/search/tokens`,
  'search/transactions': `${BASE}/clusters/{cluster_id}/search/transactions`,
  'cluster-quick': `${BASE}/clusters/{cluster_id}/search:quick`,
  'all-quick': `${BASE}/search:quick`,
};
const schemaOf = (shape: Shape, status: string): unknown =>
  spec.paths[PATHS[shape]]?.get.responses[status]?.content['application/json']?.schema;
const refName = (schema: unknown): string => {
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref !== 'string') throw new Error('not a $ref');
  return ref.slice('#/components/schemas/'.length);
};

const MISSING_CHAINS = {
  type: 'array',
  items: {
    type: 'object',
    required: ['chain_id', 'reason'],
    properties: { chain_id: { type: 'string' }, reason: { enum: ['timeout', 'error'] } },
    additionalProperties: false,
  },
};
const close = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(close);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = close(v);
  if (out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
};
const responseNames = new Set(Object.keys(PATHS).map((s) => refName(schemaOf(s as Shape, '200'))));
const closedSchemas: Record<string, unknown> = {};
// The wire names of v1Pagination's fields, written beside the document's (src/multichain/cluster-search.ts).
const WIRE_PAGINATION = { page_token: { type: 'string' }, page_size: { type: 'integer' } };
for (const [name, schema] of Object.entries(spec.components.schemas)) {
  const s = schema as { properties?: Record<string, unknown> };
  const own = name === 'v1Pagination' ? { ...s, properties: { ...s.properties, ...WIRE_PAGINATION } } : s;
  closedSchemas[name] = close(
    responseNames.has(name) ? { ...own, properties: { ...own.properties, missing_chains: MISSING_CHAINS } } : own,
  );
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addFormat('uint64', /^\d+$/); // v1ChainBlockNumber.block_number: a decimal in a string
const responses = Object.fromEntries(Object.keys(PATHS).map((s) => [s, schemaOf(s as Shape, '200')]));
ajv.addSchema(
  toJsonSchema({ $id: 'https://doc.test/open', components: spec.components, responses, error: schemaOf('chains', 'default') }) as object,
);
ajv.addSchema(toJsonSchema({ $id: 'https://doc.test/closed', components: { schemas: closedSchemas }, responses }) as object);
const validators = new Map<string, ValidateFunction>();
const validator = (root: 'open' | 'closed', pointer: string): ValidateFunction => {
  const key = `${root}#${pointer}`;
  let v = validators.get(key);
  if (v === undefined) {
    v = ajv.compile({ $ref: `https://doc.test/${key}` });
    validators.set(key, v);
  }
  return v;
};

interface Body {
  items?: Raw[];
  next_page_params?: { pageToken?: string; pageSize?: number };
  missing_chains: { chain_id: string; reason: string }[];
  [bucket: string]: unknown;
}
type Raw = Record<string, unknown>;

/** The answer's body, after checking it against the route's 200 schema, open and closed. */
function valid(shape: Shape, answer: ClusterAnswer): Body {
  expect(answer.status).toBe(200);
  const body = JSON.parse(answer.body) as Body;
  for (const root of ['open', 'closed'] as const) {
    const v = validator(root, `/responses/${shape.replace(/~/g, '~0').replace(/\//g, '~1')}`); // RFC 6901 escapes
    expect(v(body), `${root} ${shape}: ${ajv.errorsText(v.errors)}`).toBe(true);
  }
  expect(body.missing_chains).toEqual(answer.missing);
  return body;
}

function refusal(answer: ClusterAnswer, message: string): void {
  expect(answer.status).toBe(422);
  const body = JSON.parse(answer.body) as unknown;
  const v = validator('open', '/error');
  expect(v(body), ajv.errorsText(v.errors)).toBe(true);
  expect(body).toEqual({ code: 3, message, details: [] });
  expect(answer.missing).toEqual([]);
}

// ---- an in-memory explorer, paging like Blockscout's /api/v2/search

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const addressOf = (chain: string, i: number): string => `0x${hex(Number(chain), 8)}${hex(i, 32)}`;
const hashOf = (chain: string, i: number, salt: number): string => `0x${hex(Number(chain), 8)}${hex(salt, 8)}${hex(i, 48)}`;
const PROTOCOL = {
  id: 'ens',
  short_name: 'ENS',
  title: 'Ethereum Name Service',
  description: 'The Ethereum Name Service',
  deployment_blockscout_base_url: 'https://eth.blockscout.com/',
  tld_list: ['eth'],
  icon_url: 'https://example.test/ens.svg',
  docs_url: 'https://docs.ens.domains/',
};

const KINDS = ['erc20', 'nft', 'address', 'contract', 'label', 'ens', 'block', 'tx', 'userop'] as const;
type Kind = (typeof KINDS)[number];

/** A search item as search_view.ex renders it. */
function item(kind: Kind, chain: string, i: number): Raw {
  const address_hash = addressOf(chain, i);
  switch (kind) {
    case 'erc20':
    case 'nft':
      return {
        type: 'token',
        name: `Token ${i}`,
        symbol: `T${i}`,
        address_hash,
        token_url: `/token/${address_hash}`,
        address_url: `/address/${address_hash}`,
        icon_url: i % 2 === 0 ? null : 'https://example.test/t.png',
        token_type: kind === 'nft' ? (i % 2 === 0 ? 'ERC-721' : 'ERC-1155') : 'ERC-20',
        is_smart_contract_verified: i % 2 === 0,
        exchange_rate: i % 3 === 0 ? '1.0001' : null,
        total_supply: '1000000',
        circulating_market_cap: null,
        is_verified_via_admin_panel: false,
        certified: false,
        priority: 2,
        reputation: 'ok',
      };
    case 'address':
    case 'contract':
    case 'label':
      return {
        type: kind,
        name: kind === 'address' ? null : `Name ${i}`,
        address_hash,
        url: `/address/${address_hash}`,
        is_smart_contract_verified: kind === 'contract',
        ens_info: null,
        certified: false,
        priority: kind === 'label' ? 3 : 0,
        reputation: 'ok',
      };
    case 'ens':
      return {
        type: 'ens_domain',
        name: null,
        address_hash,
        url: `/address/${address_hash}`,
        is_smart_contract_verified: false,
        ens_info: { address_hash, expiry_date: '2030-01-01T00:00:00.000Z', name: `n${chain}x${i}.eth`, names_count: 1, protocol: PROTOCOL },
        certified: false,
        priority: 4,
        reputation: 'ok',
      };
    case 'block':
      return {
        type: 'block',
        block_number: 1000 + i,
        block_hash: hashOf(chain, i, 1),
        url: `/block/${hashOf(chain, i, 1)}`,
        timestamp: '2024-01-01T00:00:00.000000Z',
        block_type: 'block',
        priority: 3,
      };
    case 'tx':
      return {
        type: 'transaction',
        transaction_hash: hashOf(chain, i, 2),
        url: `/tx/${hashOf(chain, i, 2)}`,
        timestamp: '2024-01-01T00:00:00.000000Z',
        priority: 0,
      };
    case 'userop':
      return { type: 'user_operation', user_operation_hash: hashOf(chain, i, 3), timestamp: '2024-01-01T00:00:00.000000Z', priority: 0 };
  }
}

const ok = (value: unknown, status = 200): Promise<ChainOutcome> =>
  Promise.resolve({ ok: true, status, body: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)) });

interface Fake {
  ask: AskChain;
  calls: { chainId: string; path: string }[];
}

/**
 * One explorer per chain over `data[chain]`, `pageSizes[chain]` items a page (50 by default).
 * It refuses a query that is not canonical, and a page key without its null field (Blockscout
 * would start over from the first page).
 */
function fakeExplorer(
  data: Readonly<Record<string, readonly Raw[]>>,
  o: { pageSizes?: Readonly<Record<string, number>>; behave?: (chainId: string, path: string) => Promise<ChainOutcome> | undefined } = {},
): Fake {
  const calls: Fake['calls'] = [];
  const ask: AskChain = (chainId, path) => {
    calls.push({ chainId, path });
    const special = o.behave?.(chainId, path);
    if (special !== undefined) return special;
    const url = new URL(path, 'http://explorer.test');
    const pairs = [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const canonical = `${url.pathname}?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
    if (canonical !== path) return ok({ message: `not canonical: ${path}` }, 400);
    const q = url.searchParams.get('q') ?? '';
    const items = data[chainId] ?? [];
    if (url.pathname === '/api/v2/search/quick') return ok(items);
    if (url.pathname !== '/api/v2/search') return ok({ message: 'not found' }, 404);
    const index = url.searchParams.get('token[index]');
    if (index !== null && url.searchParams.get('token[circulating_market_cap]') !== '') return ok({ message: 'page key' }, 422);
    const start = Number(index ?? '0');
    const end = start + (o.pageSizes?.[chainId] ?? 50);
    return ok({
      items: items.slice(start, end),
      next_page_params:
        end < items.length
          ? { next_page_params_type: 'search', q, 'token[index]': String(end), 'token[circulating_market_cap]': null }
          : null,
    });
  };
  return { ask, calls };
}

/** A timer the test fires by hand. */
function manualTimer(): {
  setTimer: NonNullable<AnswerOptions['setTimer']>;
  fire: () => void;
  started: () => number;
  cleared: () => number;
} {
  const pending: (() => void)[] = [];
  let started = 0;
  let cleared = 0;
  return {
    setTimer: (fn) => {
      started += 1;
      pending.push(fn);
      return { clear: () => void (cleared += 1) };
    },
    fire: () => {
      for (const fn of pending.splice(0)) fn();
    },
    started: () => started,
    cleared: () => cleared,
  };
}
/** A deadline that passes as soon as everything already answered has been taken in. */
const immediateTimer: NonNullable<AnswerOptions['setTimer']> = (fn) => {
  const t = setImmediate(fn);
  return { clear: () => clearImmediate(t) };
};
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const never = (): Promise<ChainOutcome> => new Promise<ChainOutcome>(() => undefined);

const CLUSTER: ChainInfo[] = [
  { id: '1', name: 'Ethereum' },
  { id: '10', name: 'OP Mainnet' },
  { id: '8453', name: 'Base' },
];
const OPTS: AnswerOptions = { deadlineMs: 5000, setTimer: manualTimer().setTimer };
type SearchRoute = Exclude<MultichainRoute, 'chains' | 'search:quick'>;
const SEARCH_ROUTES = MULTICHAIN_ROUTES.filter((r): r is SearchRoute => r.startsWith('search/'));
const FIRST_PAGE_ONLY = new Set<SearchRoute>(['search/blocks', 'search/block-numbers', 'search/transactions', 'search/domains']);

/** The identity of an explorer item in a route's answer (what must come exactly once), or undefined if the route does not list it. */
function expectedId(route: SearchRoute, chain: string, raw: Raw): string | undefined {
  const type = raw.type;
  switch (route) {
    case 'search/tokens':
      return type === 'token' && raw.token_type === 'ERC-20' ? `${chain}:${String(raw.address_hash)}` : undefined;
    case 'search/nfts':
      return type === 'token' && raw.token_type !== 'ERC-20' ? `${chain}:${String(raw.address_hash)}` : undefined;
    case 'search/addresses':
      return ['address', 'contract', 'label', 'ens_domain'].includes(String(type)) ? `${chain}:${String(raw.address_hash)}` : undefined;
    case 'search/blocks':
      return type === 'block' ? `${chain}:${String(raw.block_hash)}` : undefined;
    case 'search/transactions':
      return type === 'transaction' ? `${chain}:${String(raw.transaction_hash)}` : undefined;
    case 'search/domains':
      return type === 'ens_domain' ? String((raw.ens_info as Raw).name) : undefined;
    case 'search/block-numbers':
      return undefined; // q is never a number in these runs
  }
}

/** The identities an answer lists, in its order. */
function answeredIds(route: SearchRoute, items: readonly Raw[]): string[] {
  return items.flatMap((it) => {
    switch (route) {
      case 'search/tokens':
      case 'search/nfts':
      case 'search/addresses':
        return Object.keys(it.chain_infos as Raw).map((c) => `${c}:${String(route === 'search/addresses' ? it.hash : it.address_hash)}`);
      case 'search/blocks':
      case 'search/transactions':
        return [`${String(it.chain_id)}:${String(it.hash)}`];
      case 'search/block-numbers':
        return [`${String(it.chain_id)}:${String(it.block_number)}`];
      case 'search/domains':
        return [String(it.name)];
    }
  });
}

/** Rank 0 of every chain in cluster order, then rank 1, ... */
function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  for (let rank = 0; lists.some((l) => l.length > rank); rank += 1) for (const l of lists) if (rank < l.length) out.push(l[rank] as T);
  return out;
}

/** Follows the cursors from the first page to the last; every page checked against the schema. */
async function follow(
  route: SearchRoute,
  chains: readonly ChainInfo[],
  query: ClusterQuery,
  ask: AskChain,
  opts: AnswerOptions,
): Promise<Body[]> {
  const pages: Body[] = [];
  let token: string | undefined;
  for (let n = 0; n < 2000; n += 1) {
    const body = valid(
      route,
      await answerCluster(route, chains, { ...query, ...(token === undefined ? {} : { pageToken: token }) }, ask, opts),
    );
    pages.push(body);
    token = body.next_page_params?.pageToken;
    if (token === undefined) return pages;
    expect(body.next_page_params?.pageSize).toBe(Math.min(query.pageSize ?? 50, 100));
  }
  throw new Error('the cursors never ended');
}

const chainsArb = fc.array(
  fc.record({ kinds: fc.array(fc.constantFrom(...KINDS), { maxLength: 30 }), explorerPage: fc.integer({ min: 1, max: 6 }) }),
  { minLength: 1, maxLength: 4 },
);
const IDS = ['1', '10', '8453', '42161'];
function world(spec: readonly { kinds: readonly Kind[]; explorerPage: number }[]): {
  chains: ChainInfo[];
  data: Record<string, Raw[]>;
  pageSizes: Record<string, number>;
} {
  const chains = spec.map((_, i) => ({ id: IDS[i] ?? String(i), name: `Chain ${i}` }));
  const data: Record<string, Raw[]> = {};
  const pageSizes: Record<string, number> = {};
  spec.forEach((s, i) => {
    const id = chains[i]?.id ?? '';
    data[id] = s.kinds.map((k, n) => item(k, id, n));
    pageSizes[id] = s.explorerPage;
  });
  return { chains, data, pageSizes };
}
/** What following the cursors must list: each chain's items of the route (first explorer page only where the explorer has them there), interleaved by rank. */
function expectedOrder(route: SearchRoute, w: ReturnType<typeof world>): string[] {
  return interleave(
    w.chains.map(({ id }) => {
      const all = w.data[id] ?? [];
      const readable = FIRST_PAGE_ONLY.has(route) ? all.slice(0, w.pageSizes[id]) : all;
      return readable.flatMap((raw) => expectedId(route, id, raw) ?? []);
    }),
  );
}

// ---- the tests

describe('answerCluster: chains', () => {
  it('lists the cluster as v1Chain items without asking anyone', async () => {
    const fake = fakeExplorer({});
    const body = valid('chains', await answerCluster('chains', CLUSTER, {}, fake.ask, OPTS));
    expect(body).toEqual({ items: CLUSTER.map(({ id, name }) => ({ id, name })), missing_chains: [] });
    expect(fake.calls).toEqual([]);
  });
});

describe('answerCluster: search/* paging', () => {
  it('following the cursors lists every item exactly once, interleaved by rank in cluster order', async () => {
    await fc.assert(
      fc.asyncProperty(chainsArb, fc.integer({ min: 1, max: 12 }), fc.constantFrom(...SEARCH_ROUTES), async (spec, pageSize, route) => {
        const w = world(spec);
        const fake = fakeExplorer(w.data, { pageSizes: w.pageSizes });
        const pages = await follow(route, w.chains, { q: 'usd', pageSize }, fake.ask, { ...OPTS, maxPagesPerChain: 1000 });
        expect(pages.flatMap((p) => answeredIds(route, p.items ?? []))).toEqual(expectedOrder(route, w));
        for (const p of pages) {
          expect(p.missing_chains).toEqual([]);
          expect((p.items ?? []).length).toBeLessThanOrEqual(pageSize);
        }
        // Only a last page may be short when every chain answers and nothing limits the reading.
        for (const p of pages.slice(0, -1)) expect((p.items ?? []).length).toBe(pageSize);
      }),
      { numRuns: 300 },
    );
  });

  it('still lists every item exactly once when chains fail, time out or run out of explorer pages on the way', async () => {
    const fault = fc.constantFrom('ok', 'ok', 'ok', 'error', 'upstream-timeout', 'status', 'garbage', 'shape', 'late');
    await fc.assert(
      fc.asyncProperty(
        chainsArb,
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(...SEARCH_ROUTES),
        fc.array(fault, { maxLength: 25 }),
        fc.integer({ min: 1, max: 3 }),
        async (spec, pageSize, route, faults, maxPagesPerChain) => {
          const w = world(spec);
          const schedule = [...faults];
          const fake = fakeExplorer(w.data, {
            pageSizes: w.pageSizes,
            behave: () => {
              switch (schedule.shift()) {
                case 'error':
                  return Promise.resolve({ ok: false, reason: 'error' });
                case 'upstream-timeout':
                  return Promise.resolve({ ok: false, reason: 'timeout' });
                case 'status':
                  return ok({ message: 'bad gateway' }, 502);
                case 'garbage':
                  return ok('<html>busy</html>');
                case 'shape':
                  return ok({ items: 'none' });
                case 'late':
                  return never();
                default:
                  return undefined;
              }
            },
          });
          const pages = await follow(route, w.chains, { q: 'usd', pageSize }, fake.ask, {
            deadlineMs: 1000,
            setTimer: immediateTimer,
            maxPagesPerChain,
          });
          const got = pages.flatMap((p) => answeredIds(route, p.items ?? []));
          expect([...got].sort()).toEqual(expectedOrder(route, w).sort());
          for (const p of pages) {
            const order = p.missing_chains.map((m) => w.chains.findIndex((c) => c.id === m.chain_id));
            expect(order).toEqual([...order].sort((a, b) => a - b));
          }
          // Without faults and limits, the order is the documented one.
          if (faults.every((f) => f === 'ok') && maxPagesPerChain >= 3 && spec.every((s) => s.explorerPage >= 6)) {
            expect(got).toEqual(expectedOrder(route, w));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a chain past the deadline is missing with timeout, the others are there, and the next page asks it again from where it was', async () => {
    const data = {
      '1': [item('erc20', '1', 0), item('erc20', '1', 1)],
      '10': [item('erc20', '10', 0), item('erc20', '10', 1)],
      '8453': [item('erc20', '8453', 0)],
    };
    let hang = true;
    const fake = fakeExplorer(data, { behave: (chain) => (chain === '10' && hang ? never() : undefined) });
    const timer = manualTimer();
    let settled = false;
    const pending = answerCluster('search/tokens', CLUSTER, { q: 'usd', pageSize: 2 }, fake.ask, {
      deadlineMs: 1500,
      setTimer: timer.setTimer,
    }).then((a) => {
      settled = true;
      return a;
    });
    await flush();
    expect(settled).toBe(false); // waits for chain 10 until the deadline...
    expect(timer.started()).toBe(1);
    timer.fire(); // ...and not a moment longer
    const first = valid('search/tokens', await pending);
    expect(first.missing_chains).toEqual([{ chain_id: '10', reason: 'timeout' }]);
    expect(answeredIds('search/tokens', first.items ?? [])).toEqual([`1:${addressOf('1', 0)}`, `8453:${addressOf('8453', 0)}`]);

    hang = false;
    const token = first.next_page_params?.pageToken;
    expect(token).toBeDefined();
    const second = valid(
      'search/tokens',
      await answerCluster('search/tokens', CLUSTER, { q: 'usd', pageSize: 2, pageToken: token ?? '' }, fake.ask, OPTS),
    );
    expect(second.missing_chains).toEqual([]);
    // Chain 10 has served nothing yet: its first item has the lowest rank.
    expect(answeredIds('search/tokens', second.items ?? [])).toEqual([`10:${addressOf('10', 0)}`, `1:${addressOf('1', 1)}`]);
    const third = valid(
      'search/tokens',
      await answerCluster(
        'search/tokens',
        CLUSTER,
        { q: 'usd', pageSize: 2, pageToken: second.next_page_params?.pageToken ?? '' },
        fake.ask,
        OPTS,
      ),
    );
    expect(answeredIds('search/tokens', third.items ?? [])).toEqual([`10:${addressOf('10', 1)}`]);
    expect(third.next_page_params).toBeUndefined();
  });

  it('once the deadline has passed no chain is asked again: a chain cut short is missing with timeout and goes on next page', async () => {
    const data = { '1': [item('erc20', '1', 0), item('erc20', '1', 1), item('erc20', '1', 2)], '10': [item('erc20', '10', 0)] };
    let hang = true;
    const fake = fakeExplorer(data, { pageSizes: { '1': 1 }, behave: (chain) => (chain === '10' && hang ? never() : undefined) });
    const timer = manualTimer();
    const pending = answerCluster('search/tokens', CLUSTER, { q: 'usd', pageSize: 3 }, fake.ask, {
      deadlineMs: 700,
      setTimer: timer.setTimer,
    });
    await flush();
    timer.fire();
    const first = valid('search/tokens', await pending);
    expect(fake.calls.map((c) => c.chainId)).toEqual(['1', '10', '8453']);
    expect(answeredIds('search/tokens', first.items ?? [])).toEqual([`1:${addressOf('1', 0)}`]);
    expect(first.missing_chains).toEqual([
      { chain_id: '1', reason: 'timeout' },
      { chain_id: '10', reason: 'timeout' },
    ]);
    hang = false;
    const rest = await follow(
      'search/tokens',
      CLUSTER,
      { q: 'usd', pageSize: 3, pageToken: first.next_page_params?.pageToken ?? '' },
      fake.ask,
      OPTS,
    );
    expect(rest.flatMap((p) => answeredIds('search/tokens', p.items ?? []))).toEqual([
      `10:${addressOf('10', 0)}`,
      `1:${addressOf('1', 1)}`,
      `1:${addressOf('1', 2)}`,
    ]);
  });

  it('a failing chain is missing with error; the upstream timeout the caller reports is a timeout', async () => {
    const data = { '1': [item('erc20', '1', 0)], '10': [item('erc20', '10', 0)], '8453': [item('erc20', '8453', 0)] };
    const cases: [string, () => Promise<ChainOutcome>, 'timeout' | 'error'][] = [
      ['ok:false error', () => Promise.resolve({ ok: false, reason: 'error' }), 'error'],
      ['ok:false timeout', () => Promise.resolve({ ok: false, reason: 'timeout' }), 'timeout'],
      ['status 500', () => ok({ message: 'Internal server error' }, 500), 'error'],
      ['status 404', () => ok({ message: 'Not found' }, 404), 'error'],
      ['not JSON', () => ok('<html>502</html>'), 'error'],
      ['not the shape', () => ok([1, 2, 3]), 'error'],
      ['rejects (against the contract)', () => Promise.reject(new Error('boom')), 'error'],
    ];
    for (const [, outcome, reason] of cases) {
      const fake = fakeExplorer(data, { behave: (chain) => (chain === '8453' ? outcome() : undefined) });
      const timer = manualTimer();
      const body = valid(
        'search/tokens',
        await answerCluster('search/tokens', CLUSTER, { q: 'usd' }, fake.ask, { deadlineMs: 100, setTimer: timer.setTimer }),
      );
      expect(body.missing_chains).toEqual([{ chain_id: '8453', reason }]);
      expect(answeredIds('search/tokens', body.items ?? [])).toEqual([`1:${addressOf('1', 0)}`, `10:${addressOf('10', 0)}`]);
      // It keeps its place: the next page asks it for its first page again.
      expect(decodeCursor(body.next_page_params?.pageToken ?? '')?.chains).toEqual([
        { id: '1', at: null },
        { id: '10', at: null },
        { id: '8453', at: { params: null, offset: 0, served: 0 } },
      ]);
      expect(timer.cleared()).toBe(1);
    }
  });

  it('when every chain is missing the answer is still 200, empty, with a cursor that starts over', async () => {
    const fake = fakeExplorer({}, { behave: () => Promise.resolve({ ok: false, reason: 'error' }) });
    const answer = await answerCluster('search/addresses', CLUSTER, { q: 'vitalik' }, fake.ask, OPTS);
    const body = valid('search/addresses', answer);
    expect(body.items).toEqual([]);
    expect(answer.missing.map((m) => m.chain_id)).toEqual(['1', '10', '8453']);
    expect(body.next_page_params?.pageToken).toBeDefined();
  });

  it('asks each explorer with the canonical query, sending its page key back with nulls as empty values', async () => {
    const data = { '1': [item('erc20', '1', 0), item('erc20', '1', 1), item('erc20', '1', 2)] };
    const fake = fakeExplorer(data, { pageSizes: { '1': 2 } });
    const chains = [{ id: '1', name: 'Ethereum' }];
    const body = valid('search/tokens', await answerCluster('search/tokens', chains, { q: 'usd coin' }, fake.ask, OPTS));
    expect(body.items).toHaveLength(3);
    expect(fake.calls).toEqual([
      { chainId: '1', path: '/api/v2/search?q=usd%20coin' },
      {
        chainId: '1',
        path: '/api/v2/search?next_page_params_type=search&q=usd%20coin&token%5Bcirculating_market_cap%5D=&token%5Bindex%5D=2',
      },
    ]);
  });

  it('page_size defaults to 50 and is held to 100', async () => {
    const data = { '1': Array.from({ length: 150 }, (_, i) => item('erc20', '1', i)) };
    const chains = [{ id: '1', name: 'Ethereum' }];
    const fake = fakeExplorer(data);
    const byDefault = valid('search/tokens', await answerCluster('search/tokens', chains, { q: 'usd' }, fake.ask, OPTS));
    expect(byDefault.items).toHaveLength(50);
    expect(byDefault.next_page_params?.pageSize).toBe(50);
    const big = valid('search/tokens', await answerCluster('search/tokens', chains, { q: 'usd', pageSize: 500 }, fake.ask, OPTS));
    expect(big.items).toHaveLength(100);
    expect(big.next_page_params?.pageSize).toBe(100);
  });

  it('reads at most maxPagesPerChain explorer pages of a chain per answer, and goes on from there on the next page', async () => {
    const sparse = [...Array.from({ length: 6 }, (_, i) => item('tx', '1', i)), item('erc20', '1', 6)];
    const fake = fakeExplorer({ '1': sparse }, { pageSizes: { '1': 2 } });
    const chains = [{ id: '1', name: 'Ethereum' }];
    const opts = { ...OPTS, maxPagesPerChain: 2 };
    const first = valid('search/tokens', await answerCluster('search/tokens', chains, { q: 'usd' }, fake.ask, opts));
    expect(first.items).toEqual([]);
    expect(first.missing_chains).toEqual([]);
    expect(fake.calls).toHaveLength(2);
    const second = valid(
      'search/tokens',
      await answerCluster('search/tokens', chains, { q: 'usd', pageToken: first.next_page_params?.pageToken ?? '' }, fake.ask, opts),
    );
    expect(answeredIds('search/tokens', second.items ?? [])).toEqual([`1:${addressOf('1', 6)}`]);
    expect(second.next_page_params).toBeUndefined();
  });

  it('chain_id keeps to the chains named (repeated or comma-separated); a chain outside the cluster is refused by name', async () => {
    const data = { '1': [item('erc20', '1', 0)], '10': [item('erc20', '10', 0)], '8453': [item('erc20', '8453', 0)] };
    const fake = fakeExplorer(data);
    for (const chainIds of [['8453', '1'], ['8453,1'], ['1', '8453', '1']]) {
      fake.calls.length = 0;
      const body = valid('search/tokens', await answerCluster('search/tokens', CLUSTER, { q: 'usd', chainIds }, fake.ask, OPTS));
      expect(answeredIds('search/tokens', body.items ?? [])).toEqual([`1:${addressOf('1', 0)}`, `8453:${addressOf('8453', 0)}`]);
      expect(fake.calls.map((c) => c.chainId)).toEqual(['1', '8453']);
    }
    fake.calls.length = 0;
    refusal(
      await answerCluster('search/tokens', CLUSTER, { q: 'usd', chainIds: ['1', '137', '56'] }, fake.ask, OPTS),
      'chain_id not in cluster: 137, 56',
    );
    expect(fake.calls).toEqual([]);
  });

  it('a page_token that is not one it issued, or was issued for another search, is refused with google.rpc.Status', async () => {
    const data = { '1': Array.from({ length: 3 }, (_, i) => item('erc20', '1', i)) };
    const fake = fakeExplorer(data);
    const first = valid('search/tokens', await answerCluster('search/tokens', CLUSTER, { q: 'usd', pageSize: 1 }, fake.ask, OPTS));
    const token = first.next_page_params?.pageToken ?? '';
    fake.calls.length = 0;
    for (const [route, query] of [
      ['search/tokens', { q: 'usd', pageToken: 'not a token' }],
      ['search/tokens', { q: 'usd', pageToken: `${token}x` }],
      ['search/tokens', { q: 'usd', pageToken: Buffer.from('{"v":1}').toString('base64url') }],
      ['search/tokens', { q: 'usd', pageToken: Buffer.from('[1,2]').toString('base64url') }],
      ['search/nfts', { q: 'usd', pageToken: token }], // another route
      ['search/tokens', { q: 'eth', pageToken: token }], // another search text
      ['search/tokens', { q: 'usd', pageToken: token, chainIds: ['1'] }], // another set of chains
    ] as const) {
      refusal(await answerCluster(route, CLUSTER, query, fake.ask, OPTS), 'invalid page_token');
    }
    expect(fake.calls).toEqual([]);
    // Without q, the token's own search goes on.
    const next = valid('search/tokens', await answerCluster('search/tokens', CLUSTER, { pageToken: token, pageSize: 1 }, fake.ask, OPTS));
    expect(answeredIds('search/tokens', next.items ?? [])).toEqual([`1:${addressOf('1', 1)}`]);
  });

  it('never throws on a damaged page_token: it is refused or read as some other position', async () => {
    const data = Object.fromEntries(CLUSTER.map((c) => [c.id, Array.from({ length: 4 }, (_, i) => item('erc20', c.id, i))]));
    const fake = fakeExplorer(data, { pageSizes: { '1': 1, '10': 2, '8453': 3 } });
    const first = valid('search/tokens', await answerCluster('search/tokens', CLUSTER, { q: 'usd', pageSize: 2 }, fake.ask, OPTS));
    const token = first.next_page_params?.pageToken ?? '';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ ';
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat({ max: alphabet.length - 1 }), fc.boolean(), async (at, c, insert) => {
        const k = at % token.length;
        const damaged = token.slice(0, k) + alphabet.charAt(c) + token.slice(insert ? k : k + 1);
        const answer = await answerCluster('search/tokens', CLUSTER, { q: 'usd', pageToken: damaged }, fake.ask, OPTS);
        if (answer.status === 422) refusal(answer, 'invalid page_token');
        else valid('search/tokens', answer);
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string(), async (junk) => {
        fc.pre(junk !== '' && decodeCursor(junk) === undefined);
        refusal(await answerCluster('search/tokens', CLUSTER, { q: 'usd', pageToken: junk }, fake.ask, OPTS), 'invalid page_token');
      }),
      { numRuns: 300 },
    );
  });

  it('an empty q asks no one and lists nothing', async () => {
    const fake = fakeExplorer({ '1': [item('erc20', '1', 0)] });
    for (const q of [undefined, '', '   ']) {
      const body = valid('search/tokens', await answerCluster('search/tokens', CLUSTER, q === undefined ? {} : { q }, fake.ask, OPTS));
      expect(body).toEqual({ items: [], missing_chains: [] });
    }
    expect(fake.calls).toEqual([]);
  });
});

describe('answerCluster: what each route lists', () => {
  it('block-numbers: a block found by its number; blocks: a block found by its hash', async () => {
    const byNumber = { ...item('block', '1', 0), block_number: 1234 };
    const byHash = item('block', '10', 7);
    const fake = fakeExplorer({ '1': [byNumber], '10': [byHash] });
    const numbers = valid('search/block-numbers', await answerCluster('search/block-numbers', CLUSTER, { q: '1234' }, fake.ask, OPTS));
    expect(numbers.items).toEqual([{ chain_id: '1', block_number: '1234' }]);
    const blocksByNumber = valid('search/blocks', await answerCluster('search/blocks', CLUSTER, { q: '1234' }, fake.ask, OPTS));
    expect(blocksByNumber.items).toEqual([{ chain_id: '10', hash: byHash.block_hash, hash_type: 'HASH_TYPE_BLOCK' }]);
  });

  it('transactions: v1Hash items with HASH_TYPE_TRANSACTION (and the older tx_hash spelling)', async () => {
    const older = { type: 'transaction', tx_hash: hashOf('10', 1, 2), url: '/tx/x', timestamp: null };
    const fake = fakeExplorer({ '1': [item('tx', '1', 0)], '10': [older] });
    const body = valid(
      'search/transactions',
      await answerCluster('search/transactions', CLUSTER, { q: hashOf('1', 0, 2) }, fake.ask, OPTS),
    );
    expect(body.items).toEqual([
      { chain_id: '1', hash: hashOf('1', 0, 2), hash_type: 'HASH_TYPE_TRANSACTION' },
      { chain_id: '10', hash: hashOf('10', 1, 2), hash_type: 'HASH_TYPE_TRANSACTION' },
    ]);
  });

  it('addresses: one item per hash, with a chain_infos entry per chain it was found on', async () => {
    const shared = addressOf('1', 5);
    const onOne = { ...item('contract', '1', 5), address_hash: shared };
    const onTen = { ...item('address', '10', 5), address_hash: shared, address: undefined };
    const older = { type: 'address', name: null, address: addressOf('8453', 1), url: '/address/x', is_smart_contract_verified: false };
    const fake = fakeExplorer({ '1': [onOne], '10': [onTen], '8453': [older] });
    const body = valid('search/addresses', await answerCluster('search/addresses', CLUSTER, { q: shared }, fake.ask, OPTS));
    expect(body.items).toEqual([
      {
        hash: shared,
        chain_infos: { '1': { is_contract: true, is_verified: true, contract_name: 'Name 5' }, '10': { is_verified: false } },
        domains: [],
      },
      { hash: addressOf('8453', 1), chain_infos: { '8453': { is_verified: false } }, domains: [] },
    ]);
  });

  it('domains: v1Domain from the ENS lookup, once per name and protocol across chains', async () => {
    const ens = item('ens', '1', 3);
    const fake = fakeExplorer({ '1': [ens], '10': [ens], '8453': [item('ens', '8453', 4)] });
    const body = valid('search/domains', await answerCluster('search/domains', CLUSTER, { q: 'n1x3.eth' }, fake.ask, OPTS));
    expect(body.items).toEqual([
      { name: 'n1x3.eth', address: addressOf('1', 3), expiry_date: '2030-01-01T00:00:00.000Z', protocol: PROTOCOL },
      { name: 'n8453x4.eth', address: addressOf('8453', 4), expiry_date: '2030-01-01T00:00:00.000Z', protocol: PROTOCOL },
    ]);
  });

  it('tokens and nfts: v1AggregatedTokenInfo split by token type', async () => {
    const fake = fakeExplorer({
      '1': [item('erc20', '1', 0), item('nft', '1', 1)],
      '10': [{ ...item('nft', '10', 2), token_type: 'ERC-404' }],
    });
    const tokens = valid('search/tokens', await answerCluster('search/tokens', CLUSTER, { q: 'token' }, fake.ask, OPTS));
    expect(tokens.items).toEqual([
      {
        address_hash: addressOf('1', 0),
        type: 'TOKEN_TYPE_ERC_20',
        name: 'Token 0',
        symbol: 'T0',
        exchange_rate: '1.0001',
        total_supply: '1000000',
        chain_infos: { '1': { is_verified: true, total_supply: '1000000' } },
      },
    ]);
    const nfts = valid('search/nfts', await answerCluster('search/nfts', CLUSTER, { q: 'token' }, fake.ask, OPTS));
    expect(nfts.items?.map((t) => [t.type, Object.keys(t.chain_infos as Raw)])).toEqual([
      ['TOKEN_TYPE_ERC_1155', ['1']],
      ['TOKEN_TYPE_ERC_404', ['10']],
    ]);
  });
});

describe('answerCluster: search:quick', () => {
  const many = (chain: string, kind: Kind, n: number, from = 0): Raw[] => Array.from({ length: n }, (_, i) => item(kind, chain, from + i));

  it('groups each chain quick answer into the buckets, at most 5 per chain per bucket, interleaved by rank', async () => {
    const data = {
      '1': [...many('1', 'erc20', 8), ...many('1', 'nft', 2, 100), item('block', '1', 200), item('tx', '1', 201), item('ens', '1', 202)],
      '10': [...many('10', 'erc20', 2), item('contract', '10', 300)],
      '8453': [],
    };
    const fake = fakeExplorer(data);
    const body = valid('cluster-quick', await answerCluster('search:quick', CLUSTER, { q: 'token' }, fake.ask, OPTS));
    expect(fake.calls.map((c) => c.path)).toEqual(Array(3).fill('/api/v2/search/quick?q=token'));
    const tokens = body.tokens as Raw[];
    expect(tokens.map((t) => `${Object.keys(t.chain_infos as Raw)[0]}:${String(t.address_hash)}`)).toEqual([
      `1:${addressOf('1', 0)}`,
      `10:${addressOf('10', 0)}`,
      `1:${addressOf('1', 1)}`,
      `10:${addressOf('10', 1)}`,
      `1:${addressOf('1', 2)}`,
      `1:${addressOf('1', 3)}`,
      `1:${addressOf('1', 4)}`,
    ]);
    expect(body.nfts as Raw[]).toHaveLength(2);
    expect(body.blocks).toEqual([{ chain_id: '1', hash: hashOf('1', 200, 1), hash_type: 'HASH_TYPE_BLOCK' }]);
    expect(body.transactions).toEqual([{ chain_id: '1', hash: hashOf('1', 201, 2), hash_type: 'HASH_TYPE_TRANSACTION' }]);
    expect(body.domains).toEqual([
      { name: 'n1x202.eth', address: addressOf('1', 202), expiry_date: '2030-01-01T00:00:00.000Z', protocol: PROTOCOL },
    ]);
    expect((body.addresses as Raw[]).map((a) => a.hash)).toEqual([addressOf('1', 202), addressOf('10', 300)]);
    expect(body.block_numbers).toEqual([]);
    expect(body.dapps).toEqual([]);
    expect(body.missing_chains).toEqual([]);
  });

  it('unlimited_per_chain: up to 50 per bucket in all', async () => {
    const data = { '1': many('1', 'erc20', 40), '10': many('10', 'erc20', 40), '8453': many('8453', 'erc20', 1) };
    const fake = fakeExplorer(data);
    const body = valid(
      'cluster-quick',
      await answerCluster('search:quick', CLUSTER, { q: 'token', unlimitedPerChain: true }, fake.ask, OPTS),
    );
    const tokens = body.tokens as Raw[];
    expect(tokens).toHaveLength(50);
    expect(tokens.slice(0, 4).map((t) => Object.keys(t.chain_infos as Raw)[0])).toEqual(['1', '10', '8453', '1']);
  });

  it('over all clusters: v1QuickSearchResponse items, each with its chain_id; a late chain is missing', async () => {
    const data = {
      '1': [item('erc20', '1', 0), item('nft', '1', 1), item('contract', '1', 2), item('ens', '1', 3)],
      '10': [item('erc20', '10', 0)],
    };
    const fake = fakeExplorer(data, { behave: (chain) => (chain === '8453' ? never() : undefined) });
    const timer = manualTimer();
    // Every chain of every cluster: a chain in two clusters is asked once.
    const pending = answerCluster('search:quick', [...CLUSTER, CLUSTER[0] as ChainInfo], { q: 'token' }, fake.ask, {
      deadlineMs: 800,
      setTimer: timer.setTimer,
      scope: 'all',
    });
    await flush();
    timer.fire();
    const body = valid('all-quick', await pending);
    expect(fake.calls.map((c) => c.chainId)).toEqual(['1', '10', '8453']);
    expect(body.missing_chains).toEqual([{ chain_id: '8453', reason: 'timeout' }]);
    expect(body.tokens).toEqual([
      { chain_id: '1', address: addressOf('1', 0), name: 'Token 0', symbol: 'T0', is_verified_contract: true },
      { chain_id: '10', address: addressOf('10', 0), name: 'Token 0', symbol: 'T0', is_verified_contract: true },
    ]);
    expect(body.nfts).toEqual([
      {
        chain_id: '1',
        hash: addressOf('1', 1),
        is_contract: true,
        is_token: true,
        token_type: 'TOKEN_TYPE_ERC_1155',
        token_name: 'Token 1',
        is_verified_contract: false,
      },
    ]);
    expect(body.addresses).toEqual([
      { chain_id: '1', hash: addressOf('1', 2), is_contract: true, contract_name: 'Name 2', is_verified_contract: true },
      {
        chain_id: '1',
        hash: addressOf('1', 3),
        is_verified_contract: false,
        domain_info: { name: 'n1x3.eth', address: addressOf('1', 3), expiry_date: '2030-01-01T00:00:00.000Z', names_count: 1 },
      },
    ]);
  });

  it('a quick answer that is not an array is an error', async () => {
    const fake = fakeExplorer({ '1': [item('erc20', '1', 0)] }, { behave: (chain) => (chain === '10' ? ok({ items: [] }) : undefined) });
    const body = valid('cluster-quick', await answerCluster('search:quick', CLUSTER, { q: 'token' }, fake.ask, OPTS));
    expect(body.missing_chains).toEqual([{ chain_id: '10', reason: 'error' }]);
    expect(body.tokens as Raw[]).toHaveLength(1);
  });
});

describe('page_token', () => {
  it('decodes to the cursor it was encoded from', () => {
    const pairs = fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 6 });
    const position = fc.option(fc.record({ params: fc.option(pairs, { nil: null }), offset: fc.nat(), served: fc.nat() }), { nil: null });
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1 }), position), { selector: ([id]) => id, maxLength: 8 }),
        (route, q, chains) => {
          const cursor: SearchCursor = { route, q, chains: chains.map(([id, at]) => ({ id, at })) };
          const token = encodeCursor(cursor);
          expect(token).toMatch(/^[A-Za-z0-9_-]*$/);
          expect(decodeCursor(token)).toEqual(cursor);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('the document', () => {
  it('leaves the multichain responses open to the extra missing_chains field', () => {
    for (const shape of Object.keys(PATHS) as Shape[]) {
      const schema = spec.components.schemas[refName(schemaOf(shape, '200'))] as { additionalProperties?: unknown };
      expect(schema.additionalProperties, shape).toBeUndefined();
    }
  });
});
