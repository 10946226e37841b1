// Search across chains without an aggregator (request/cluster.ts, multichain/cluster-search.ts):
// with no `services.multichain`, the gateway answers `/services/multichain/api/v1/clusters/{id}/...`
// itself by asking each chain's explorer (`/api/v2/search`, `/api/v2/search/quick`) through the
// shared cache, merging the answers, billing the client request once and naming the chains that
// failed or missed the cluster's deadline in `missing_chains`. Three fixture explorers on loopback
// (chains 1, 10, 8453), one gateway, real HTTP, no mocks.
//
// The fixture's search (fixture/explorer-extra.ts searchAnswer) matches q against its tokens' names
// and symbols and its ENS names: `xdai` finds three ERC-20 tokens, `usd` two, `vitalik` one ENS
// name. What each explorer answers for every q used here is read from it directly before the tests
// (then its request log is cleared), and the expectations are made of that. Each test asks its own
// q, so that the chains' cache entries (kept for `search`'s TTL) of one test are not another's.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { billedCost } from '../../src/routes/settings.js';
import { makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { responseChecker } from '../support/json-schema.js';
import { until } from '../support/wait.js';

// ---- the document's 200 schemas of the routes, for ajv (as test/fixture/surface.test.ts builds them)
type Schema = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
}
const pro = JSON.parse(readFileSync(new URL('../../spec/pro-api-0.5.0.json', import.meta.url), 'utf8')) as Doc;
const MC = '/services/multichain/api/v1';
/** The routes asked here: the document's path, and the route's name (what it costs). */
const ROUTES = {
  chains: 'clusters/{cluster_id}/chains',
  addresses: 'clusters/{cluster_id}/search/addresses',
  tokens: 'clusters/{cluster_id}/search/tokens',
  clusterQuick: 'clusters/{cluster_id}/search:quick',
  quick: 'search:quick',
} as const;
type Kind = keyof typeof ROUTES;
const KINDS = Object.keys(ROUTES) as Kind[];
const schema200 = (kind: Kind): Schema => {
  const path = `${MC}/${ROUTES[kind]}`;
  const schema = pro.paths[path]?.get?.responses['200']?.content?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`the document has no 200 schema for ${path}`);
  return schema;
};
const check = responseChecker(pro.components.schemas, Object.fromEntries(KINDS.map((kind) => [kind, schema200(kind)])));
function expectValid(kind: Kind, body: unknown): void {
  expect(check(kind, body), ROUTES[kind]).toBeUndefined();
}

// ---- answers
interface Missing {
  chain_id: string;
  reason: 'timeout' | 'error';
}
/** An item of a cluster's answer: v1GetAddressResponse (hash) or v1AggregatedTokenInfo (address_hash). */
interface ClusterItem {
  hash?: string;
  address_hash?: string;
  chain_infos: Record<string, unknown>;
}
interface PageBody {
  items: ClusterItem[];
  next_page_params?: { page_token: string; page_size: number; pageToken: string; pageSize: number };
  missing_chains: Missing[];
}
interface ClusterQuickBody {
  addresses: ClusterItem[];
  tokens: ClusterItem[];
  missing_chains: Missing[];
}
interface QuickBody {
  tokens: { chain_id: string; address: string }[];
  missing_chains: Missing[];
}
interface Answer<T> {
  status: number;
  body: T;
  credits: number;
  cache: string | null;
}
/** An item of an explorer's search page, as far as the expectations read it. */
interface ExplorerItem {
  type: string;
  address_hash?: string;
  token_type?: string;
}

const CHAINS = ['1', '10', '8453'] as const;
type ChainId = (typeof CHAINS)[number];
const NAMES: Record<ChainId, string> = { '1': 'Ethereum', '10': 'OP Mainnet', '8453': 'Base' };
/** The cluster's deadline: ample for a loopback explorer on a loaded test run, short for a test to wait out. */
const DEADLINE_MS = 2_000;
/** Each chain's own upstream deadline: beyond anything a test waits, so only the cluster's deadline can end a held call. */
const UPSTREAM_MS = 15_000;
/** Turns a gateway that waits for a held explorer into a failed assertion instead of a hung test; not a timing claim. */
const HANG_GUARD_MS = 8_000;

/** One q per test (the fixture's search reads q case-insensitively, as a substring of names and symbols). */
const Q = {
  addresses: 'vitalik',
  clusterQuick: 'usd',
  quick: 'us',
  pages: 'xdai',
  only10: 'dai',
  cached: 'xda',
  cachedOwnFirst: 'busd',
  together: 'n xd',
  partial: 'on xdai',
  failing: 'wrapped',
  silent: 'coin',
  onlyOneFailing: 'stake',
} as const;

const explorers = {} as Record<ChainId, FixtureExplorer>;
let gw: TestGateway;
let cost: Record<Kind, number>;
/** What each explorer's /api/v2/search answered for each q of Q, read directly. */
const found = new Map<string, ExplorerItem[]>();
/** Release functions of explorers held by the running test (afterEach lets them go). */
const holds: (() => void)[] = [];

beforeAll(async () => {
  for (const id of CHAINS) explorers[id] = await startFixtureExplorer({ chainId: Number(id) });
  const chains = Object.fromEntries(
    CHAINS.map((id) => [id, { name: NAMES[id], upstreams: [explorers[id].url], timeoutMs: UPSTREAM_MS, head: { pollSeconds: 0 } }]),
  );
  const config = makeConfig([explorers['1'].url], {
    chains,
    clusters: {
      demo: { chains: [...CHAINS], timeoutMs: DEADLINE_MS },
      // The same chains with a deadline no test reaches: for the coalescing test, whose explorers
      // are held until every request has joined (however long a loaded machine takes for that).
      patient: { chains: [...CHAINS], timeoutMs: UPSTREAM_MS },
    },
  });
  cost = Object.fromEntries(KINDS.map((kind) => [kind, billedCost(config.costs, `multichain/api/v1/${ROUTES[kind]}`)])) as Record<
    Kind,
    number
  >;
  gw = await startGateway(config);
  for (const id of CHAINS) {
    for (const q of Object.values(Q)) {
      const res = await fetch(`${explorers[id].url}/api/v2/search?q=${encodeURIComponent(q)}`);
      const body = (await res.json()) as { items: ExplorerItem[]; next_page_params: unknown };
      // One explorer page per q: the pages of a cluster's answer are the gateway's own.
      expect(body.next_page_params, `next_page_params of q=${q} on chain ${id}`).toBeNull();
      expect(body.items.length, `the fixture finds nothing for q=${q} on chain ${id}`).toBeGreaterThan(0);
      found.set(`${id}|${q}`, body.items);
    }
    explorers[id].reset();
  }
});

afterAll(async () => {
  for (const release of holds.splice(0)) release();
  await gw?.close();
  await Promise.all(CHAINS.map((id) => explorers[id]?.close()));
});

afterEach(async () => {
  for (const release of holds.splice(0)) release();
  // The late answers of released explorers land in the cache before the next test starts.
  await gw.app.gateway.state().cache.idle();
  for (const id of CHAINS) explorers[id].reset();
});

// ---- expectations, from what the explorers answer
const NFT_TYPES = new Set(['ERC-721', 'ERC-1155', 'ERC-404']);
const ADDRESS_TYPES = new Set(['address', 'contract', 'label', 'metadata_tag', 'ens_domain']);
const itemsOf = (id: ChainId, q: string): ExplorerItem[] => found.get(`${id}|${q}`) ?? [];
/** The fungible tokens a chain's explorer found, in its order. */
const tokensOf = (id: ChainId, q: string): string[] =>
  itemsOf(id, q)
    .filter((i) => i.type === 'token' && !NFT_TYPES.has(i.token_type ?? ''))
    .map((i) => i.address_hash ?? '');
/** The addresses it found. */
const addressesOf = (id: ChainId, q: string): string[] =>
  itemsOf(id, q)
    .filter((i) => ADDRESS_TYPES.has(i.type))
    .map((i) => i.address_hash ?? '');
/** Rank 0 of every chain in cluster order, then rank 1, ...: how the gateway merges. */
function interleave(lists: readonly (readonly string[])[]): string[] {
  const out: string[] = [];
  for (let rank = 0; lists.some((l) => l.length > rank); rank += 1) {
    for (const l of lists) {
      const x = l[rank];
      if (x !== undefined) out.push(x);
    }
  }
  return out;
}
/** `hash@chain` of each explorer item of these chains, interleaved as a cluster answer lists them. */
const expectedPairs = (of: (id: ChainId, q: string) => string[], q: string, chains: readonly ChainId[] = CHAINS): string[] =>
  interleave(chains.map((id) => of(id, q).map((h) => `${h}@${id}`)));

/** `hash@chain` for each chain each item of an answer names, in order: what the explorers' items became. */
const pairsOf = (items: readonly ClusterItem[]): string[] =>
  items.flatMap((item) => Object.keys(item.chain_infos).map((chain) => `${item.hash ?? item.address_hash ?? ''}@${chain}`));

// ---- requests
async function ask<T>(path: string): Promise<Answer<T>> {
  const res = await gw.get(path);
  const body = (await res.json()) as T;
  return { status: res.status, body, credits: Number(res.headers.get('x-credits-remaining')), cache: res.headers.get('x-cache') };
}

const searchPath = (route: 'addresses' | 'tokens', cluster: string, query: Record<string, string | number>): string =>
  `${MC}/clusters/${cluster}/search/${route}?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()}`;

/** The key's balance now, read off a request that asks no explorer and costs cost.chains. */
async function credits(): Promise<number> {
  const res = await gw.get(`${MC}/clusters/demo/chains`);
  expect(res.status).toBe(200);
  await res.body?.cancel();
  return Number(res.headers.get('x-credits-remaining'));
}

/** Requests an explorer received at a search path with this q. */
const asked = (id: ChainId, path: string, q: string): number =>
  explorers[id].requests.filter((r) => r.path === path && r.query.q === q).length;
const searches = (id: ChainId, q: string): number => asked(id, '/api/v2/search', q);
const quicks = (id: ChainId, q: string): number => asked(id, '/api/v2/search/quick', q);
const allRequests = (): number => CHAINS.reduce((n, id) => n + explorers[id].hits(), 0);

/** Holds every request an explorer gets from now on; the returned function (idempotent) lets them go. */
function hold(id: ChainId): () => void {
  const release = explorers[id].hold();
  let held = true;
  const once = (): void => {
    if (!held) return;
    held = false;
    release();
  };
  holds.push(once);
  return once;
}

/**
 * Runs `request` while the explorers of `releases` hold their answers. Should no answer have come
 * by HANG_GUARD_MS, it lets them go, and `answeredWhileHeld` says the answer waited for them.
 */
async function whileHeld<T>(
  releases: readonly (() => void)[],
  request: () => Promise<T>,
): Promise<{ value: T; answeredWhileHeld: boolean }> {
  let held = true;
  const guard = setTimeout(() => {
    held = false;
    for (const release of releases) release();
  }, HANG_GUARD_MS);
  try {
    const value = await request();
    return { value, answeredWhileHeld: held };
  } finally {
    clearTimeout(guard);
  }
}

/** Follows page_token to the last page of search/tokens; every page must be a complete 200. */
async function followToEnd(first: PageBody, pageSize: number): Promise<PageBody[]> {
  const pages: PageBody[] = [];
  let page = first;
  while (page.next_page_params !== undefined) {
    expect(pages.length, 'cursors that never end').toBeLessThan(100);
    const next = await ask<PageBody>(searchPath('tokens', 'demo', { page_token: page.next_page_params.page_token, page_size: pageSize }));
    expect(next.status).toBe(200);
    expectValid('tokens', next.body);
    expect(next.body.missing_chains).toEqual([]);
    pages.push(next.body);
    page = next.body;
  }
  return pages;
}

describe("a cluster answered by the gateway from its chains' explorers", () => {
  it("clusters/demo/chains lists the cluster's chains in order without asking any explorer", async () => {
    const before = allRequests();
    const { status, body } = await ask<{ items: unknown[]; missing_chains: Missing[] }>(`${MC}/clusters/demo/chains`);
    expect(status).toBe(200);
    expectValid('chains', body);
    expect(body.items).toEqual(CHAINS.map((id) => ({ id, name: NAMES[id] })));
    expect(body.missing_chains).toEqual([]);
    expect(allRequests()).toBe(before);
  });

  it('search/addresses: every chain answers; an address found on all three is one item naming them, billed once', async () => {
    const q = Q.addresses;
    const balance = await credits();
    const { status, body, credits: after } = await ask<PageBody>(searchPath('addresses', 'demo', { q }));
    expect(status).toBe(200);
    expectValid('addresses', body);
    expect(body.missing_chains).toEqual([]);
    const hashes = [...new Set(interleave(CHAINS.map((id) => addressesOf(id, q))))];
    expect(hashes.length).toBeGreaterThan(0);
    expect(body.items.map((i) => i.hash)).toEqual(hashes);
    for (const item of body.items) {
      const on = CHAINS.filter((id) => addressesOf(id, q).includes(item.hash ?? ''));
      expect(Object.keys(item.chain_infos).sort(), item.hash).toEqual([...on].sort());
    }
    expect(body.next_page_params).toBeUndefined();
    // Each explorer asked once, at its own /api/v2/search; the client billed once, the route's cost.
    for (const id of CHAINS) expect(searches(id, q), `explorer ${id}`).toBe(1);
    expect(cost.addresses).toBe(20);
    expect(balance - after).toBe(cost.addresses);
  });

  it('clusters/demo/search:quick: every chain asked once at /api/v2/search/quick, interleaved by rank, billed once', async () => {
    const q = Q.clusterQuick;
    const balance = await credits();
    const { status, body, credits: after } = await ask<ClusterQuickBody>(`${MC}/clusters/demo/search:quick?q=${q}`);
    expect(status).toBe(200);
    expectValid('clusterQuick', body);
    expect(body.missing_chains).toEqual([]);
    const pairs = expectedPairs(tokensOf, q);
    expect(pairs.length).toBeGreaterThan(CHAINS.length);
    expect(pairsOf(body.tokens)).toEqual(pairs);
    for (const id of CHAINS) expect(quicks(id, q), `explorer ${id}`).toBe(1);
    // Three explorer quick searches (25 credits each to a client asking them itself) are one request.
    expect(balance - after).toBe(cost.clusterQuick);
  });

  it('search:quick without a cluster asks every chain of every cluster once, items with their chain_id', async () => {
    const q = Q.quick;
    const balance = await credits();
    const { status, body, credits: after } = await ask<QuickBody>(`${MC}/search:quick?q=${q}`);
    expect(status).toBe(200);
    expectValid('quick', body);
    expect(body.missing_chains).toEqual([]);
    expect(body.tokens.map((t) => `${t.address}@${t.chain_id}`)).toEqual(expectedPairs(tokensOf, q));
    // Both clusters list the three chains: each is still asked once.
    for (const id of CHAINS) expect(quicks(id, q), `explorer ${id}`).toBe(1);
    expect(balance - after).toBe(cost.quick);
  });

  it('pages interleave by rank in cluster order, and following the cursors to the end repeats nothing', async () => {
    const q = Q.pages;
    const first = await ask<PageBody>(searchPath('tokens', 'demo', { q, page_size: 1 }));
    expect(first.status).toBe(200);
    expectValid('tokens', first.body);
    expect(first.body.missing_chains).toEqual([]);
    expect(first.body.next_page_params?.page_size).toBe(1);
    expect(first.body.next_page_params?.pageToken).toBe(first.body.next_page_params?.page_token);
    const pages = [first.body, ...(await followToEnd(first.body, 1))];
    const pairs = pages.flatMap((p) => pairsOf(p.items));
    const expected = expectedPairs(tokensOf, q);
    expect(expected.length).toBeGreaterThan(CHAINS.length);
    // Rank 0 of every chain in cluster order, then rank 1, ...: each page one explorer item.
    expect(pairs).toEqual(expected);
    expect(pages).toHaveLength(expected.length);
    // Every page of the session read the chains' explorer page from the cache.
    for (const id of CHAINS) expect(searches(id, q), `explorer ${id}`).toBe(1);
  });

  it('chain_id=10 asks only that chain; a chain_id outside the cluster is 422', async () => {
    const q = Q.only10;
    const { status, body } = await ask<PageBody>(searchPath('tokens', 'demo', { q, chain_id: 10 }));
    expect(status).toBe(200);
    expectValid('tokens', body);
    expect(body.missing_chains).toEqual([]);
    expect(pairsOf(body.items)).toEqual(expectedPairs(tokensOf, q, ['10']));
    expect(body.items.length).toBeGreaterThan(0);
    expect(searches('10', q)).toBe(1);
    expect(searches('1', q)).toBe(0);
    expect(searches('8453', q)).toBe(0);

    const before = allRequests();
    const outside = await ask<{ code: number; message: string }>(searchPath('tokens', 'demo', { q, chain_id: 137 }));
    expect(outside.status).toBe(422);
    expect(outside.body).toMatchObject({ code: 3 });
    expect(outside.body.message).toContain('137');
    expect(allRequests()).toBe(before);
  });

  it('a page_token the gateway did not issue is 422 code 3', async () => {
    const before = allRequests();
    for (const token of ['not-a-token', Buffer.from('{"v":1}').toString('base64url')]) {
      const { status, body } = await ask<{ code: number }>(searchPath('tokens', 'demo', { page_token: token }));
      expect(status, token).toBe(422);
      expect(body).toMatchObject({ code: 3 });
    }
    expect(allRequests()).toBe(before);
  });

  it('a cluster not configured is 404, unbilled, no explorer asked', async () => {
    const balance = await credits();
    const before = allRequests();
    const res = await gw.get(searchPath('tokens', 'nope', { q: 'usd' }));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'Cluster not found (clusters)' });
    expect(allRequests()).toBe(before);
    expect(await credits()).toBe(balance - cost.chains);
  });

  it("each chain's call is cached: the same search again asks no explorer, and a client's GET of /{chain}/api/v2/search is a HIT", async () => {
    const q = Q.cached;
    const first = await ask<PageBody>(searchPath('tokens', 'demo', { q }));
    expect(first.status).toBe(200);
    expect(pairsOf(first.body.items)).toEqual(expectedPairs(tokensOf, q));
    for (const id of CHAINS) expect(searches(id, q), `explorer ${id}`).toBe(1);

    const again = await ask<PageBody>(searchPath('tokens', 'demo', { q }));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    for (const id of CHAINS) expect(searches(id, q), `explorer ${id} after the same search`).toBe(1);

    // The entry the cluster search filled is the one a client's own GET of the chain's route reads.
    for (const id of CHAINS) {
      const own = await ask<{ items: ExplorerItem[] }>(`/${id}/api/v2/search?q=${q}`);
      expect(own.status).toBe(200);
      expect(own.cache, `/${id}/api/v2/search`).toBe('HIT');
      expect(own.body.items).toEqual(itemsOf(id, q));
      expect(searches(id, q), `explorer ${id} after the client's GET`).toBe(1);
    }

    // And the other way round: a client's GET fills the entry a cluster search then reads.
    const q2 = Q.cachedOwnFirst;
    const own = await ask<unknown>(`/8453/api/v2/search?q=${q2}`);
    expect(own.cache).toBe('MISS');
    expect(searches('8453', q2)).toBe(1);
    const cluster = await ask<PageBody>(searchPath('tokens', 'demo', { q: q2 }));
    expect(cluster.status).toBe(200);
    expect(cluster.body.missing_chains).toEqual([]);
    expect(pairsOf(cluster.body.items)).toEqual(expectedPairs(tokensOf, q2));
    for (const id of CHAINS) expect(searches(id, q2), `explorer ${id}`).toBe(1);
  });

  it('N concurrent identical cluster searches reach each explorer once', async () => {
    const q = Q.together;
    const N = 6;
    const releases = CHAINS.map((id) => hold(id));
    const counters = gw.app.gateway.state().cache.counters;
    const joinedBefore = counters.coalesced;
    const answers = Array.from({ length: N }, () => ask<PageBody>(searchPath('tokens', 'patient', { q })));
    // Every request has reached its chains' calls: the first of each chain asked, the others joined it.
    await until(
      () => CHAINS.every((id) => searches(id, q) === 1) && counters.coalesced - joinedBefore === (N - 1) * CHAINS.length,
      "every cluster search to join its chains' calls",
    );
    for (const release of releases) release();
    const expected = expectedPairs(tokensOf, q);
    for (const answer of await Promise.all(answers)) {
      expect(answer.status).toBe(200);
      expect(answer.body.missing_chains).toEqual([]);
      expect(pairsOf(answer.body.items)).toEqual(expected);
    }
    for (const id of CHAINS) expect(searches(id, q), `explorer ${id}`).toBe(1);
  });

  it('a slow chain and a failing one: answered at the deadline with what came, missing_chains names them; later pages bring the slow chain', async () => {
    const q = Q.partial;
    const pageSize = 2;
    const balance = await credits();
    const release = hold('10');
    explorers['8453'].set({ failStatus: 500 });
    const { value: first, answeredWhileHeld } = await whileHeld([release], () =>
      ask<PageBody>(searchPath('tokens', 'demo', { q, page_size: pageSize })),
    );
    expect(answeredWhileHeld, 'the answer came only once the slow explorer was released').toBe(true);
    // Chain 10 was asked, and is still holding its answer; chain 8453 answered its 500.
    expect(searches('10', q)).toBe(1);
    expect(searches('8453', q)).toBe(1);

    expect(first.status).toBe(200);
    expectValid('tokens', first.body);
    expect(first.body.missing_chains).toEqual([
      { chain_id: '10', reason: 'timeout' },
      { chain_id: '8453', reason: 'error' },
    ]);
    // The healthy chain's first items, nothing of the others; billed once as any answer.
    expect(tokensOf('1', q).length).toBeGreaterThan(pageSize);
    expect(pairsOf(first.body.items)).toEqual(expectedPairs(tokensOf, q, ['1']).slice(0, pageSize));
    expect(balance - first.credits).toBe(cost.tokens);

    // Chain 10 answers late (its answer is kept for the next asker); chain 8453 recovers.
    release();
    explorers['8453'].set({ failStatus: null });
    await gw.app.gateway.state().cache.idle();

    const pages = await followToEnd(first.body, pageSize);
    // The chains missing from the first page keep their rank: their first items open the next one.
    const next = pages[0]?.items ?? [];
    expect(pairsOf(next)).toEqual([`${tokensOf('10', q)[0]}@10`, `${tokensOf('8453', q)[0]}@8453`]);
    const pairs = [...pairsOf(first.body.items), ...pages.flatMap((p) => pairsOf(p.items))];
    expect(new Set(pairs).size, `repeated: ${pairs.join(' ')}`).toBe(pairs.length);
    expect([...pairs].sort()).toEqual(expectedPairs(tokensOf, q).sort());
    // The slow chain was asked again through the cache: its late answer served, not fetched twice.
    expect(searches('10', q)).toBe(1);
  });

  it('every explorer failing: 502, refunded', async () => {
    const q = Q.failing;
    for (const id of CHAINS) explorers[id].set({ failStatus: 500 });
    const balance = await credits();
    const res = await gw.get(searchPath('tokens', 'demo', { q }));
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ message: 'Upstream error' });
    for (const id of CHAINS) expect(searches(id, q), `explorer ${id}`).toBe(1);
    // Only the balance probe's own cost is gone: the 502 was given back.
    expect(await credits()).toBe(balance - cost.chains);
  });

  it('the only chain asked failing (a chain_id filter): 502, refunded, though the others would have answered', async () => {
    const q = Q.onlyOneFailing;
    explorers['10'].set({ failStatus: 500 });
    const balance = await credits();
    const res = await gw.get(searchPath('tokens', 'demo', { q, chain_id: '10' }));
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ message: 'Upstream error' });
    expect(searches('10', q)).toBe(1);
    expect(searches('1', q) + searches('8453', q)).toBe(0);
    expect(await credits()).toBe(balance - cost.chains);
  });

  it('every explorer held past the deadline: 504, refunded', async () => {
    const q = Q.silent;
    const balance = await credits();
    const releases = CHAINS.map((id) => hold(id));
    const { value: res, answeredWhileHeld } = await whileHeld(releases, () => ask<unknown>(`${MC}/clusters/demo/search:quick?q=${q}`));
    expect(answeredWhileHeld, 'the answer came only once the explorers were released').toBe(true);
    expect(res.status).toBe(504);
    expect(res.body).toEqual({ message: 'Upstream timed out' });
    for (const id of CHAINS) expect(quicks(id, q), `explorer ${id}`).toBe(1);
    expect(await credits()).toBe(balance - cost.chains);
  });
});

describe('without clusters or an aggregator', () => {
  it('the multichain routes are 404 naming the settings, no explorer asked', async () => {
    const bare = await startGateway(
      makeConfig([explorers['1'].url], {
        chains: { '1': { name: 'Ethereum', upstreams: [explorers['1'].url], head: { pollSeconds: 0 } } },
      }),
    );
    try {
      for (const path of [searchPath('tokens', 'demo', { q: 'usd' }), `${MC}/search:quick?q=usd`, `${MC}/clusters/demo/chains`]) {
        const res = await bare.get(path);
        expect(res.status, path).toBe(404);
        expect(await res.json()).toEqual({ message: 'Search across chains not configured (services.multichain.upstreams, or clusters)' });
      }
      expect(explorers['1'].hits()).toBe(0);
    } finally {
      await bare.close();
    }
  });
});
