// The multichain search routes of spec/pro-api-0.5.0.json (`/services/multichain/api/v1/...`),
// answered by the gateway itself for a cluster of chains when no multichain aggregator is
// configured: every chain's explorer is asked in parallel (`GET /api/v2/search` or
// `/api/v2/search/quick`), with one deadline for the whole answer; its items are mapped into
// the document's multichain shapes and merged; chains that did not answer in time, or answered
// wrongly, are named in `missing_chains` instead of failing the answer. Pure: the only I/O is
// through the `ask` the caller passes, the only clock the timer it may pass.
//
// Explorer item shapes: blockscout/blockscout apps/block_scout_web/lib/block_scout_web/views/api/v2/search_view.ex
// (prepare_search_result/1; older releases spell `address_hash` as `address` and
// `transaction_hash` as `tx_hash`, both are read). Which items an explorer search page holds:
// apps/explorer/lib/explorer/chain/search.ex.
//
// Ordering (search/* and search:quick alike): interleaved by rank. An item's rank is its
// position among the items its chain contributed to the route, in the explorer's own
// (relevance) order; the answer lists rank 0 of every chain in cluster order, then rank 1, ...
// A chain with no more items drops out of the rotation. For search/* the ranks run across
// pages: following the cursors yields exactly that sequence, cut into pages of page_size
// source items, as long as every chain answers every time and can be read within
// `maxPagesPerChain` explorer pages per answer. When a chain is missing from a page, or its
// reading is cut short by that limit, it keeps its position and its rank, and its items come
// first on a later page: nothing is skipped or repeated, only the interleaving shifts.
//
// Merging within one answer: cluster addresses (v1GetAddressResponse) with the same hash on
// several chains become one item whose `chain_infos` has one entry per chain (at the place of
// the first); domains (v1Domain, which has no chain field) with the same name and protocol are
// listed once. page_size counts source items, so such an answer may list fewer items.
import { decodeCursor, encodeCursor, type ParamPairs } from './cursor.js';

/** The routes after `clusters/{cluster_id}/` (and `search:quick` without a cluster), as the document names them. */
export const MULTICHAIN_ROUTES = [
  'chains',
  'search:quick',
  'search/addresses',
  'search/block-numbers',
  'search/blocks',
  'search/domains',
  'search/nfts',
  'search/tokens',
  'search/transactions',
] as const;
export type MultichainRoute = (typeof MULTICHAIN_ROUTES)[number];

export const isMultichainRoute = (route: string): route is MultichainRoute => (MULTICHAIN_ROUTES as readonly string[]).includes(route);

export interface ChainInfo {
  id: string;
  name: string;
}

/** What one chain answered: its explorer's status and JSON body, or why not. */
export type ChainOutcome = { ok: true; status: number; body: Buffer | string } | { ok: false; reason: 'timeout' | 'error' };

/**
 * Asks one chain's explorer; the caller caches/coalesces, applies the upstream's own timeout,
 * and never rejects (it maps failures to {ok:false}). `path` is the explorer path with
 * canonical query, e.g. `/api/v2/search?q=foo` (query params sorted by name, encodeURIComponent).
 */
export type AskChain = (chainId: string, path: string) => Promise<ChainOutcome>;

export interface ClusterQuery {
  q?: string;
  /** `chain_id`: repeated, comma-separated, or both (`1,10` is read as two ids). */
  chainIds?: readonly string[];
  pageSize?: number;
  pageToken?: string;
  unlimitedPerChain?: boolean;
}

export interface ClusterAnswer {
  status: number;
  body: string;
  /** chains that did not answer in time or failed, in cluster order */
  missing: { chain_id: string; reason: 'timeout' | 'error' }[];
  /** Chains whose explorer answered for this answer: with none and some missing, nothing could be merged. */
  answered: number;
}

export interface AnswerOptions {
  /** Time from the call until the answer is built from the chains that answered. */
  deadlineMs: number;
  /** Default: setTimeout/clearTimeout. */
  setTimer?: (fn: () => void, ms: number) => { clear(): void };
  /**
   * search:quick only. 'cluster' (default): `/clusters/{cluster_id}/search:quick`, answered as
   * v1ClusterQuickSearchResponse. 'all': `/api/v1/search:quick`, answered as v1QuickSearchResponse
   * (pass every chain of every cluster as `chains`; repeated ids are asked once).
   */
  scope?: 'cluster' | 'all';
  /** search/* only: explorer pages one chain may be asked for in one answer (default 5). */
  maxPagesPerChain?: number;
}

/** page_size when none is given, and the largest taken (multichain-aggregator's defaults: blockscout/blockscout-rs multichain-aggregator/README.md). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/**
 * search:quick: items per chain per bucket without unlimited_per_chain, and items per bucket in
 * any case; the multichain aggregator's own figures (blockscout/blockscout-rs
 * multichain-aggregator/multichain-aggregator-logic/src/services/quick_search.rs:
 * QUICK_SEARCH_DEFAULT_ENTITY_LIMIT, QUICK_SEARCH_NUM_ITEMS).
 */
export const QUICK_PER_CHAIN = 5;
export const QUICK_PER_BUCKET = 50;
export const DEFAULT_MAX_PAGES_PER_CHAIN = 5;

type Reason = 'timeout' | 'error';
type Item = Record<string, unknown>;
type SearchRoute = Exclude<MultichainRoute, 'chains' | 'search:quick'>;

/** v1GetAddressResponse, as far as a search item tells it. */
type AddressItem = {
  hash: string;
  chain_infos: Record<string, Item>;
  domains: Item[];
};

/** One mapped explorer item, with how it joins the others of an answer. */
type Entry =
  | { kind: 'item'; item: Item }
  | { kind: 'once'; key: string; item: Item } // listed once per answer (domains)
  | { kind: 'address'; value: AddressItem }; // merged per answer by hash

// ---- the answers

const ok = (body: Item, missing: ClusterAnswer['missing'], answered = 0): ClusterAnswer => ({
  status: 200,
  body: JSON.stringify({ ...body, missing_chains: missing }),
  missing,
  answered,
});

/** google.rpc.Status (the document's googlerpcStatus), code 3 INVALID_ARGUMENT (googleapis google/rpc/code.proto). */
const invalid = (message: string): ClusterAnswer => ({
  status: 422,
  body: JSON.stringify({ code: 3, message, details: [] }),
  missing: [],
  answered: 0,
});

const INVALID_PAGE_TOKEN = 'invalid page_token';

export async function answerCluster(
  route: MultichainRoute,
  chains: readonly ChainInfo[],
  query: ClusterQuery,
  ask: AskChain,
  opts: AnswerOptions,
): Promise<ClusterAnswer> {
  const seen = new Set<string>();
  const cluster = chains.filter((c) => !seen.has(c.id) && seen.add(c.id));
  if (route === 'chains') return ok({ items: cluster.map(({ id, name }) => ({ id, name })) }, []);

  const missing = new Map<string, Reason>();
  const missingList = (): ClusterAnswer['missing'] =>
    cluster.flatMap((c) => {
      const reason = missing.get(c.id);
      return reason === undefined ? [] : [{ chain_id: c.id, reason }];
    });
  const deadline = new Deadline(opts.deadlineMs, opts.setTimer ?? defaultTimer);
  try {
    if (route === 'search:quick') {
      const q = query.q ?? '';
      const body =
        q.trim() === ''
          ? quickBody(opts.scope ?? 'cluster', cluster, q, [], query.unlimitedPerChain === true)
          : quickBody(
              opts.scope ?? 'cluster',
              cluster,
              q,
              await Promise.all(cluster.map((c) => askOnce(ask, c.id, searchPath('/api/v2/search/quick', q, null), deadline))),
              query.unlimitedPerChain === true,
            );
      for (const [id, reason] of body.missing) missing.set(id, reason);
      return ok(body.body, missingList(), body.answered);
    }
    return await searchAnswer(route, cluster, query, ask, opts, deadline, missing, missingList);
  } finally {
    deadline.clear();
  }
}

// ---- search/*: one page

async function searchAnswer(
  route: SearchRoute,
  cluster: readonly ChainInfo[],
  query: ClusterQuery,
  ask: AskChain,
  opts: AnswerOptions,
  deadline: Deadline,
  missing: Map<string, Reason>,
  missingList: () => ClusterAnswer['missing'],
): Promise<ClusterAnswer> {
  const index = new Map(cluster.map((c, i) => [c.id, i]));
  const asked = [...new Set((query.chainIds ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()))].filter((v) => v !== '');
  const unknown = asked.filter((id) => !index.has(id));
  if (unknown.length > 0) return invalid(`chain_id not in cluster: ${unknown.join(', ')}`);
  const pageSize =
    query.pageSize !== undefined && Number.isInteger(query.pageSize) && query.pageSize >= 1
      ? Math.min(query.pageSize, MAX_PAGE_SIZE)
      : DEFAULT_PAGE_SIZE;

  let q: string;
  let slots: Slot[];
  if (query.pageToken !== undefined) {
    const cursor = decodeCursor(query.pageToken);
    if (cursor === undefined || cursor.route !== route) return invalid(INVALID_PAGE_TOKEN);
    if (query.q !== undefined && query.q !== cursor.q) return invalid(INVALID_PAGE_TOKEN);
    const session = new Set(cursor.chains.map((c) => c.id));
    if (asked.length > 0 && (asked.length !== session.size || asked.some((id) => !session.has(id)))) return invalid(INVALID_PAGE_TOKEN);
    q = cursor.q;
    // A chain the cluster no longer has is dropped; the others keep cluster order.
    slots = cursor.chains
      .flatMap(({ id, at }) => {
        const i = index.get(id);
        const chain = i === undefined ? undefined : cluster[i];
        if (i === undefined || chain === undefined) return [];
        return [at === null ? newSlot(chain, i, null, 0, 0, 'exhausted') : newSlot(chain, i, at.params, at.offset, at.served, 'active')];
      })
      .sort((a, b) => a.index - b.index);
  } else {
    q = query.q ?? '';
    if (q.trim() === '') return ok({ items: [] }, []);
    const wanted = asked.length > 0 ? new Set(asked) : undefined;
    slots = cluster.flatMap((c, i) => (wanted === undefined || wanted.has(c.id) ? [newSlot(c, i, null, 0, 0, 'active')] : []));
  }

  const answered = new Set<string>();
  const entries = await readPage(
    route,
    slots,
    q,
    pageSize,
    ask,
    deadline,
    Math.max(1, opts.maxPagesPerChain ?? DEFAULT_MAX_PAGES_PER_CHAIN),
    missing,
    answered,
  );
  const chains = slots.map((s) => ({ id: s.chain.id, at: positionOf(s) }));
  const body: Item = { items: combine(entries) };
  if (chains.some((c) => c.at !== null)) {
    // v1Pagination names its fields pageToken and pageSize (spec/pro-api-0.5.0.json); the services
    // and Blockscout's front end (github.com/blockscout/frontend, types/api/multichain*.ts) use
    // page_token and page_size on the wire. Both are written, the same values.
    const token = encodeCursor({ route, q, chains });
    body.next_page_params = { page_token: token, page_size: pageSize, pageToken: token, pageSize };
  }
  return ok(body, missingList(), answered.size);
}

interface LoadedPage {
  /** The explorer page's next_page_params, flattened; null: none (or not followed). */
  next: ParamPairs | null;
  /** The route's items of the page from the slot's offset on, with their index in `items`. */
  hits: { index: number; entry: Entry }[];
  /** hits[at] is the next one to serve. */
  at: number;
}

interface Slot {
  chain: ChainInfo;
  /** Position in the cluster: breaks ties between equal ranks. */
  index: number;
  /** The explorer page the next item is on (null: the first) and where in it to look on. */
  params: ParamPairs | null;
  offset: number;
  /** Items served so far in the session: the rank of the next one. */
  served: number;
  page: LoadedPage | undefined;
  /** stalled: not read further in this answer (missing, or out of explorer pages); keeps its position. */
  state: 'active' | 'exhausted' | 'stalled';
  asked: number;
}

const newSlot = (
  chain: ChainInfo,
  index: number,
  params: ParamPairs | null,
  offset: number,
  served: number,
  state: Slot['state'],
): Slot => ({ chain, index, params, offset, served, page: undefined, state, asked: 0 });

// These routes' items are only on an explorer's first search page (search.ex: address and
// hash hits via *_search_if_first_page, ENS via run_ens_task_if_first_page); a block found
// by number is not paged at all and would come again on every later page.
const FIRST_PAGE_ONLY: ReadonlySet<SearchRoute> = new Set([
  'search/blocks',
  'search/block-numbers',
  'search/transactions',
  'search/domains',
]);

/** Serves up to pageSize items in rank order, asking chains for explorer pages as they run out. */
async function readPage(
  route: SearchRoute,
  slots: Slot[],
  q: string,
  pageSize: number,
  ask: AskChain,
  deadline: Deadline,
  maxPages: number,
  missing: Map<string, Reason>,
  answered: Set<string>,
): Promise<Entry[]> {
  const firstPageOnly = FIRST_PAGE_ONLY.has(route);
  const load = async (): Promise<void> => {
    const due: Slot[] = [];
    for (const s of slots) {
      if (s.state !== 'active' || s.page !== undefined) continue;
      if (s.asked >= maxPages) s.state = 'stalled';
      else if (deadline.expired) {
        s.state = 'stalled';
        missing.set(s.chain.id, 'timeout');
      } else due.push(s);
    }
    const got = await Promise.all(
      due.map((s) => {
        s.asked += 1;
        return askOnce(ask, s.chain.id, searchPath('/api/v2/search', q, s.params), deadline);
      }),
    );
    due.forEach((s, i) => {
      const r = got[i];
      const page = r?.ok === true ? searchPage(r.body, firstPageOnly) : undefined;
      if (r === undefined || page === undefined) {
        s.state = 'stalled';
        missing.set(s.chain.id, r === undefined || r.ok ? 'error' : r.reason);
        return;
      }
      answered.add(s.chain.id);
      const hits: LoadedPage['hits'] = [];
      for (let k = s.offset; k < page.items.length; k += 1) {
        const entry = pagedEntry(route, s.chain.id, q, page.items[k]);
        if (entry !== undefined) hits.push({ index: k, entry });
      }
      s.page = { next: page.next, hits, at: 0 };
    });
  };

  const entries: Entry[] = [];
  await load();
  while (entries.length < pageSize) {
    let best: Slot | undefined;
    for (const s of slots) if (s.state === 'active' && s.page !== undefined && (best === undefined || s.served < best.served)) best = s;
    const page = best?.page;
    if (best === undefined || page === undefined) break;
    const hit = page.hits[page.at];
    if (hit !== undefined) {
      entries.push(hit.entry);
      page.at += 1;
      best.offset = hit.index + 1;
      best.served += 1;
      continue;
    }
    if (page.next === null) {
      best.state = 'exhausted';
      continue;
    }
    // Every chain that has run out of its page moves on to its next one, asked together.
    for (const s of slots) {
      const next = s.page !== undefined && s.page.at >= s.page.hits.length ? s.page.next : null;
      if (s.state === 'active' && next !== null) {
        s.params = next;
        s.offset = 0;
        s.page = undefined;
      }
    }
    await load();
  }
  return entries;
}

/** Where a chain's next item is, for the cursor; null: it has no more. */
function positionOf(s: Slot): { params: ParamPairs | null; offset: number; served: number } | null {
  if (s.state === 'exhausted') return null;
  const page = s.page;
  if (s.state === 'active' && page !== undefined && page.at >= page.hits.length) {
    return page.next === null ? null : { params: page.next, offset: 0, served: s.served };
  }
  return { params: s.params, offset: s.offset, served: s.served };
}

/** An explorer search page: `{"items":[...],"next_page_params":{...}|null}` (SearchResult in the document). */
function searchPage(body: unknown, firstPageOnly: boolean): { items: readonly unknown[]; next: ParamPairs | null } | undefined {
  if (!isRecord(body) || !Array.isArray(body.items)) return undefined;
  const npp = body.next_page_params;
  if (npp !== undefined && npp !== null && !isRecord(npp)) return undefined;
  const pairs = isRecord(npp) && !firstPageOnly ? flattenParams(npp) : [];
  return { items: body.items as readonly unknown[], next: pairs.length > 0 ? pairs : null };
}

/**
 * next_page_params as the query that asks for that page. The explorer sends them flat already
 * (search_view.ex encode_next_page_params: `{"token[name]": "..."}`, empty values as null);
 * a null goes back as an empty value, which the explorer reads as nil (search.ex
 * parse_possible_nil) — left out, the page key would not match and paging would start over.
 * Nested objects and lists (older releases) get Plug's bracket names. `q` is the session's.
 */
function flattenParams(npp: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = [];
  const walk = (name: string, v: unknown): void => {
    if (v === null || v === undefined) out.push([name, '']);
    else if (typeof v === 'string') out.push([name, v]);
    else if (typeof v === 'number' || typeof v === 'boolean') out.push([name, String(v)]);
    else if (Array.isArray(v)) for (const x of v as unknown[]) walk(`${name}[]`, x);
    else if (isRecord(v)) for (const [k, x] of Object.entries(v)) walk(`${name}[${k}]`, x);
  };
  for (const [k, v] of Object.entries(npp)) if (k !== 'q') walk(k, v);
  return out.sort(byName);
}

const byName = ([a]: readonly [string, string], [b]: readonly [string, string]): number => (a < b ? -1 : a > b ? 1 : 0);

/** The explorer path with its canonical query: names sorted (stably), names and values encodeURIComponent. */
function searchPath(base: string, q: string, params: ParamPairs | null): string {
  const pairs: (readonly [string, string])[] = [['q', q], ...(params ?? []).filter(([k]) => k !== 'q')];
  pairs.sort(byName);
  return `${base}?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
}

// ---- search:quick

type Bucket = 'addresses' | 'blocks' | 'transactions' | 'block_numbers' | 'dapps' | 'tokens' | 'nfts' | 'domains';
const BUCKETS: readonly Bucket[] = ['addresses', 'blocks', 'transactions', 'block_numbers', 'dapps', 'tokens', 'nfts', 'domains'];

function quickBody(
  scope: 'cluster' | 'all',
  cluster: readonly ChainInfo[],
  q: string,
  answers: readonly Asked[],
  unlimited: boolean,
): { body: Item; missing: [string, Reason][]; answered: number } {
  const missing: [string, Reason][] = [];
  const perChain: Map<Bucket, Entry[]>[] = [];
  answers.forEach((r, i) => {
    const chain = cluster[i];
    if (chain === undefined) return;
    // The explorer's quick search is a bare array (`/{chain_id}/api/v2/search/quick` in the document).
    if (!r.ok || !Array.isArray(r.body)) {
      missing.push([chain.id, r.ok ? 'error' : r.reason]);
      return;
    }
    const buckets = new Map<Bucket, Entry[]>();
    for (const raw of r.body as unknown[]) {
      for (const [bucket, entry] of quickEntries(scope, chain.id, q, raw)) {
        const list = buckets.get(bucket);
        if (list === undefined) buckets.set(bucket, [entry]);
        else list.push(entry);
      }
    }
    perChain.push(buckets);
  });
  const cap = unlimited ? QUICK_PER_BUCKET : QUICK_PER_CHAIN;
  const body: Item = {};
  for (const bucket of BUCKETS) {
    const lists = perChain.map((b) => (b.get(bucket) ?? []).slice(0, cap));
    const interleaved: Entry[] = [];
    for (let rank = 0; lists.some((l) => l.length > rank); rank += 1) {
      for (const l of lists) {
        const e = l[rank];
        if (e !== undefined) interleaved.push(e);
      }
    }
    body[bucket] = combine(interleaved).slice(0, QUICK_PER_BUCKET);
  }
  return { body, missing, answered: perChain.length };
}

function quickEntries(scope: 'cluster' | 'all', chainId: string, q: string, raw: unknown): [Bucket, Entry][] {
  if (!isRecord(raw)) return [];
  const out: [Bucket, Entry][] = [];
  const hash = addressHashOf(raw);
  const type = raw.type;
  if (typeof type === 'string' && ADDRESS_TYPES.has(type) && hash !== undefined) {
    out.push([
      'addresses',
      scope === 'cluster' ? addressEntry(chainId, raw, hash) : { kind: 'item', item: globalAddress(chainId, raw, hash) },
    ]);
  }
  if (type === 'token' && hash !== undefined) {
    const nft = isNft(raw);
    if (scope === 'cluster') out.push([nft ? 'nfts' : 'tokens', { kind: 'item', item: tokenInfo(chainId, raw, hash) }]);
    else out.push([nft ? 'nfts' : 'tokens', { kind: 'item', item: nft ? globalNft(chainId, raw, hash) : globalToken(chainId, raw, hash) }]);
  }
  for (const [bucket, route] of [
    ['blocks', 'search/blocks'],
    ['block_numbers', 'search/block-numbers'],
    ['transactions', 'search/transactions'],
    ['domains', 'search/domains'],
  ] as const) {
    const entry = pagedEntry(route, chainId, q, raw);
    if (entry !== undefined) out.push([bucket, entry]);
  }
  return out;
}

// ---- explorer items -> the document's multichain items

/** Explorer item types that stand for an address (search_view.ex). */
const ADDRESS_TYPES: ReadonlySet<string> = new Set(['address', 'contract', 'label', 'metadata_tag', 'ens_domain']);
/** NFT token types, as Blockscout's frontend groups them (blockscout/frontend lib/token/tokenTypes.ts NFT_TOKEN_TYPES). */
const NFT_TYPES: ReadonlySet<string> = new Set(['ERC-721', 'ERC-1155', 'ERC-404']);
/** v1TokenType in the document. */
const TOKEN_TYPES: ReadonlySet<string> = new Set([
  'TOKEN_TYPE_UNSPECIFIED',
  'TOKEN_TYPE_ERC_20',
  'TOKEN_TYPE_ERC_721',
  'TOKEN_TYPE_ERC_1155',
  'TOKEN_TYPE_ERC_404',
  'TOKEN_TYPE_ERC_7802',
  'TOKEN_TYPE_ZRC_2',
  'TOKEN_TYPE_NATIVE',
  'TOKEN_TYPE_ERC_7984',
]);

/** One explorer item as the route's item, or undefined when the route does not list it. */
function pagedEntry(route: SearchRoute, chainId: string, q: string, raw: unknown): Entry | undefined {
  if (!isRecord(raw)) return undefined;
  const type = raw.type;
  switch (route) {
    case 'search/addresses': {
      const hash = addressHashOf(raw);
      return typeof type === 'string' && ADDRESS_TYPES.has(type) && hash !== undefined ? addressEntry(chainId, raw, hash) : undefined;
    }
    case 'search/block-numbers': {
      const number = type === 'block' ? numberHit(raw, q) : undefined;
      return number === undefined ? undefined : { kind: 'item', item: { chain_id: chainId, block_number: number } };
    }
    case 'search/blocks': {
      const hash = type === 'block' && numberHit(raw, q) === undefined ? nonEmpty(raw.block_hash) : undefined;
      return hash === undefined ? undefined : { kind: 'item', item: { chain_id: chainId, hash, hash_type: 'HASH_TYPE_BLOCK' } };
    }
    case 'search/transactions': {
      const hash = type === 'transaction' ? (nonEmpty(raw.transaction_hash) ?? nonEmpty(raw.tx_hash)) : undefined;
      return hash === undefined ? undefined : { kind: 'item', item: { chain_id: chainId, hash, hash_type: 'HASH_TYPE_TRANSACTION' } };
    }
    case 'search/domains':
      return type === 'ens_domain' ? domainEntry(raw) : undefined;
    case 'search/tokens':
    case 'search/nfts': {
      const hash = addressHashOf(raw);
      if (type !== 'token' || hash === undefined || isNft(raw) !== (route === 'search/nfts')) return undefined;
      return { kind: 'item', item: tokenInfo(chainId, raw, hash) };
    }
  }
}

const addressHashOf = (raw: Item): string | undefined => nonEmpty(raw.address_hash) ?? nonEmpty(raw.address);
const isNft = (raw: Item): boolean => typeof raw.token_type === 'string' && NFT_TYPES.has(raw.token_type);
const verifiedOf = (raw: Item): boolean | undefined =>
  typeof raw.is_smart_contract_verified === 'boolean' ? raw.is_smart_contract_verified : undefined;

/** The block number of a block item found by its number: q is a decimal that equals it. Found by hash: undefined. */
function numberHit(raw: Item, q: string): string | undefined {
  const t = q.trim();
  const n = decimal(raw.block_number);
  if (!/^\d+$/.test(t) || n === undefined || !/^\d+$/.test(n)) return undefined;
  return BigInt(n) === BigInt(t) ? BigInt(n).toString() : undefined;
}

/** v1GetAddressResponse with one chain_infos entry; other fields are not in a search item and are left out. */
function addressEntry(chainId: string, raw: Item, hash: string): Entry {
  const info: Item = {};
  const verified = verifiedOf(raw);
  if (raw.type === 'contract' || verified === true) info.is_contract = true;
  if (verified !== undefined) info.is_verified = verified;
  const name = nonEmpty(raw.name);
  if (raw.type === 'contract' && name !== undefined) info.contract_name = name;
  const ens = isRecord(raw.ens_info) ? raw.ens_info : undefined;
  const domain = ens === undefined ? undefined : nonEmpty(ens.name);
  const domains: Item[] = [];
  if (ens !== undefined && domain !== undefined) {
    const protocol = protocolOf(ens.protocol);
    domains.push(protocol === undefined ? { name: domain } : { name: domain, protocol });
  }
  return { kind: 'address', value: { hash, chain_infos: { [chainId]: info }, domains } };
}

/** v1Address (search:quick over all clusters). */
function globalAddress(chainId: string, raw: Item, hash: string): Item {
  const out: Item = { chain_id: chainId, hash };
  const verified = verifiedOf(raw);
  if (raw.type === 'contract' || verified === true) out.is_contract = true;
  const name = nonEmpty(raw.name);
  if (raw.type === 'contract' && name !== undefined) out.contract_name = name;
  if (verified !== undefined) out.is_verified_contract = verified;
  const ens = isRecord(raw.ens_info) ? raw.ens_info : undefined;
  const domain = ens === undefined ? undefined : nonEmpty(ens.name);
  if (ens !== undefined && domain !== undefined) {
    const info: Item = { name: domain };
    const address = nonEmpty(ens.address_hash);
    if (address !== undefined) info.address = address;
    const expiry = nonEmpty(ens.expiry_date);
    if (expiry !== undefined) info.expiry_date = expiry;
    if (typeof ens.names_count === 'number' && Number.isSafeInteger(ens.names_count)) info.names_count = ens.names_count;
    out.domain_info = info;
  }
  return out;
}

/** v1Domain, from an ens_domain item's ens_info (the explorer's BENS lookup); listed once per name and protocol. */
function domainEntry(raw: Item): Entry | undefined {
  const ens = isRecord(raw.ens_info) ? raw.ens_info : undefined;
  const name = ens === undefined ? undefined : nonEmpty(ens.name);
  if (ens === undefined || name === undefined) return undefined;
  const item: Item = { name };
  const address = nonEmpty(ens.address_hash) ?? addressHashOf(raw);
  if (address !== undefined) item.address = address;
  const expiry = nonEmpty(ens.expiry_date);
  if (expiry !== undefined) item.expiry_date = expiry;
  const protocol = protocolOf(ens.protocol);
  if (protocol !== undefined) item.protocol = protocol;
  const protocolId = protocol === undefined ? '' : (nonEmpty(protocol.id) ?? '');
  return { kind: 'once', key: JSON.stringify([name, protocolId]), item };
}

/** v1ProtocolInfo: its string fields and tld_list. */
function protocolOf(v: unknown): Item | undefined {
  if (!isRecord(v)) return undefined;
  const out: Item = {};
  for (const k of ['id', 'short_name', 'title', 'description', 'deployment_blockscout_base_url', 'docs_url', 'icon_url']) {
    const s = v[k];
    if (typeof s === 'string') out[k] = s;
  }
  if (Array.isArray(v.tld_list)) out.tld_list = (v.tld_list as unknown[]).filter((t): t is string => typeof t === 'string');
  return out;
}

/** v1TokenType of an explorer token_type: `ERC-20` -> `TOKEN_TYPE_ERC_20`; anything else unspecified. */
function tokenType(raw: Item): string {
  const t = typeof raw.token_type === 'string' ? `TOKEN_TYPE_${raw.token_type.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}` : '';
  return TOKEN_TYPES.has(t) ? t : 'TOKEN_TYPE_UNSPECIFIED';
}

/** v1AggregatedTokenInfo with one chain_infos entry (tokens and nfts of a cluster). */
function tokenInfo(chainId: string, raw: Item, hash: string): Item {
  const out: Item = { address_hash: hash, type: tokenType(raw) };
  for (const k of ['name', 'symbol', 'icon_url'] as const) {
    const s = raw[k];
    if (typeof s === 'string') out[k] = s;
  }
  for (const k of ['exchange_rate', 'total_supply', 'circulating_market_cap'] as const) {
    const s = decimal(raw[k]);
    if (s !== undefined) out[k] = s;
  }
  const info: Item = {};
  const verified = verifiedOf(raw);
  if (verified !== undefined) info.is_verified = verified;
  const supply = decimal(raw.total_supply);
  if (supply !== undefined) info.total_supply = supply;
  out.chain_infos = { [chainId]: info };
  return out;
}

/** v1Token (search:quick over all clusters). */
function globalToken(chainId: string, raw: Item, hash: string): Item {
  const out: Item = { chain_id: chainId, address: hash };
  for (const k of ['name', 'symbol', 'icon_url'] as const) {
    const s = raw[k];
    if (typeof s === 'string') out[k] = s;
  }
  const verified = verifiedOf(raw);
  if (verified !== undefined) out.is_verified_contract = verified;
  return out;
}

/** An NFT collection as the v1Address the document lists under nfts (search:quick over all clusters). */
function globalNft(chainId: string, raw: Item, hash: string): Item {
  const out: Item = { chain_id: chainId, hash, is_contract: true, is_token: true, token_type: tokenType(raw) };
  if (typeof raw.name === 'string') out.token_name = raw.name;
  const verified = verifiedOf(raw);
  if (verified !== undefined) out.is_verified_contract = verified;
  return out;
}

/** An answer's items: addresses merged by hash, domains once, the rest as they come. */
function combine(entries: readonly Entry[]): Item[] {
  const out: Item[] = [];
  const addresses = new Map<string, AddressItem>();
  const once = new Set<string>();
  for (const e of entries) {
    if (e.kind === 'item') out.push(e.item);
    else if (e.kind === 'once') {
      if (once.has(e.key)) continue;
      once.add(e.key);
      out.push(e.item);
    } else {
      const key = e.value.hash.toLowerCase();
      const first = addresses.get(key);
      if (first === undefined) {
        const value: AddressItem = { hash: e.value.hash, chain_infos: { ...e.value.chain_infos }, domains: [...e.value.domains] };
        addresses.set(key, value);
        out.push(value);
        continue;
      }
      for (const [chain, info] of Object.entries(e.value.chain_infos)) if (!(chain in first.chain_infos)) first.chain_infos[chain] = info;
      for (const d of e.value.domains) if (!first.domains.some((x) => x.name === d.name)) first.domains.push(d);
    }
  }
  return out;
}

// ---- asking, with the deadline

const TIMEOUT = Symbol('timeout');

const defaultTimer = (fn: () => void, ms: number): { clear(): void } => {
  const t = setTimeout(fn, ms);
  return { clear: () => clearTimeout(t) };
};

/** One deadline for the whole answer, started on the first ask. */
class Deadline {
  expired = false;
  private timer: { clear(): void } | undefined;
  private passed: Promise<typeof TIMEOUT> | undefined;

  constructor(
    private readonly ms: number,
    private readonly setTimer: (fn: () => void, ms: number) => { clear(): void },
  ) {}

  /** p, or TIMEOUT if the deadline passes first. */
  race<T>(p: Promise<T>): Promise<T | typeof TIMEOUT> {
    if (this.expired) return Promise.resolve(TIMEOUT);
    this.passed ??= new Promise<typeof TIMEOUT>((resolve) => {
      this.timer = this.setTimer(() => {
        this.expired = true;
        resolve(TIMEOUT);
      }, this.ms);
    });
    return Promise.race([p, this.passed]);
  }

  clear(): void {
    this.timer?.clear();
  }
}

type Asked = { ok: true; body: unknown } | { ok: false; reason: Reason };

/** One explorer answer as parsed JSON, or why there is none: late, failed, not 2xx, not JSON. */
async function askOnce(ask: AskChain, chainId: string, path: string, deadline: Deadline): Promise<Asked> {
  const failed: ChainOutcome = { ok: false, reason: 'error' };
  let pending: Promise<ChainOutcome>;
  try {
    pending = Promise.resolve(ask(chainId, path)).catch(() => failed);
  } catch {
    pending = Promise.resolve(failed);
  }
  const r = await deadline.race(pending);
  if (r === TIMEOUT) return { ok: false, reason: 'timeout' };
  if (!r.ok) return { ok: false, reason: r.reason === 'timeout' ? 'timeout' : 'error' };
  if (r.status < 200 || r.status > 299) return { ok: false, reason: 'error' };
  try {
    return { ok: true, body: JSON.parse(typeof r.body === 'string' ? r.body : r.body.toString('utf8')) as unknown };
  } catch {
    return { ok: false, reason: 'error' };
  }
}

// ---- reading JSON

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** A number the explorer sends as a string or a JSON number, as a string. */
const decimal = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
