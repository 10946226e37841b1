// From the request target (its `apikey` already taken out: auth/query-key.ts) to a route of the
// table (table.ts): chain, route name, and the upstream path rebuilt from validated parts only.
// Pure: no I/O, no fastify, and the same for every client, so it can be memoised per URL
// (resolver.ts).
//
// The upstream path is never derived from the client's path text: it is built from the route's
// template and values that passed validation, so an encoded `../`, a doubled slash or any other
// path trick cannot reach an upstream. Query parameters are re-encoded in canonical (sorted)
// order, which also makes them usable as a cache key.
//
// Four forms of request target (contract sections 4 and 7):
//   /{chain_id}/api/v2/<route>            the v2 REST API
//   /{chain_id}/api?module=M&action=A     the legacy RPC API
//   /v2/api?chainid=N&module=M&action=A   the same, Etherscan V2's form: one base URL, the chain
//   /api?chainid=N&module=M&action=A      in a query parameter (`chainid` is not forwarded)
import { formDecode, percentDecode } from '../http/url-decode.js';
import type { ErrorCode, ValidationIssue } from '../http/errors.js';
import { matchLegacy, matchService, matchV2 } from './match.js';
import { checkService } from './service-check.js';
import { checkLegacy, checkV2 } from './param-check.js';
import { ADDRESS_DETAIL, ADDRESS_RE, legacyQuery, toIssues, tokenBalancesQuery, transactionsQuery, type LegacyAction } from './params.js';
import type { CheckedCall } from '../rpc/methods.js';
import { derivedCall, proxyCall, proxyId, proxyInvalid, proxyUnsupported, type Derivation } from '../rpc/proxy.js';
import type { ProxyRouteSpec, ServiceName, ServiceRouteSpec, VerifyRouteSpec } from './table.js';

export type Validation =
  | { ok: true; upstreamPath: string }
  | { ok: false; issues: ValidationIssue[] } // v2: 422 JsonErrorResponse
  | { ok: false; legacyMessage: string } // legacy: 200 envelope with status "0"
  | { ok: false; proxyBody: string } // Etherscan's proxy module: HTTP 200 with this body (rpc/proxy.ts)
  | { ok: false; serviceMessage: string }; // a Rust service's route: 422 google.rpc.Status (service-check.ts)

/** A search across chains, as asked (multichain routes): what the gateway needs to answer it itself. */
export interface ClusterAsk {
  /** The route after `api/v1/clusters/{cluster_id}/` (or `search:quick` for the one without a cluster). */
  route: string;
  clusterId: string | undefined;
  q?: string;
  chainIds?: string[];
  pageSize?: number;
  pageToken?: string;
  unlimitedPerChain?: boolean;
}

/** Where a service route goes (routes/table.ts ServiceRouteSpec). */
export interface ServiceCall {
  name: ServiceName;
  method: 'GET' | 'POST';
  /** A multichain route: what it asked, for the gateway to answer itself when no aggregator is configured. */
  cluster?: ClusterAsk;
}

export interface Route {
  kind: 'route';
  chainId: string;
  /** The route's name in the table (what `costs.routes` and `cache.ttlSeconds` use). */
  route: string;
  legacy: boolean;
  /** Passed through as it arrives, never buffered or cached (CSV exports). */
  stream: boolean;
  validation: Validation;
  /** Etherscan's proxy module: the JSON-RPC call the request becomes (rpc/proxy.ts). */
  call?: CheckedCall;
  /** The id a proxy answer carries. */
  callId?: string;
  /** For a proxy action answered off a block: how (rpc/proxy.ts). */
  derivation?: Derivation;
  /** The JSON-RPC endpoint: the calls are in the body (request/rpc.ts). */
  rpc?: true;
  /** A write (contract verification): forwarded once as a POST with its body, never kept. */
  write?: true;
  /** A route of the PRO API outside v2, served by the chain's explorer or a service. */
  service?: ServiceCall;
  /** The cache key's scope when it is not the chain: a service's answers are its own. */
  cacheScope?: string;
}

/** The `chainId` of a route under `/services/`: no chain's (config/schema.ts reserves the id). */
export const SERVICES_SCOPE = 'services';

/** The JSON-RPC endpoint's two paths under a chain: the PRO API's and an instance's own. */
export const RPC_PATHS: ReadonlySet<string> = new Set(['/json-rpc', '/json-rpc/', '/api/eth-rpc', '/api/eth-rpc/']);
/** Where an explorer serves JSON-RPC (spec/blockscout-rpc-api-1.0.0.yaml, `/eth-rpc` under `/api`). */
export const UPSTREAM_RPC_PATH = '/api/eth-rpc';

export interface Refusal {
  kind: 'refusal';
  code: ErrorCode;
  legacy: boolean;
  /** A JSON-RPC path (an unknown chain's): answered with a JSON-RPC error (request/send.ts). */
  rpc?: true;
}

export type Resolution = Route | Refusal;

interface Query {
  params: Map<string, string>;
  malformed: string[];
}

/** application/x-www-form-urlencoded; the last value of a repeated name wins, as in Phoenix. */
export function parseQuery(qs: string): Query {
  const params = new Map<string, string>();
  const malformed: string[] = [];
  if (qs === '') return { params, malformed };
  for (const pair of qs.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = formDecode(rawName);
    const value = formDecode(eq === -1 ? '' : pair.slice(eq + 1));
    if (name === undefined || value === undefined) {
      malformed.push(name ?? rawName);
      continue;
    }
    params.set(name, value);
  }
  return { params, malformed };
}

export function encodeQuery(entries: Iterable<[string, string]>): string {
  const parts: string[] = [];
  for (const [k, v] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  }
  return parts.join('&');
}

const withQuery = (path: string, query: string) => (query === '' ? path : `${path}?${query}`);

/** Chain ids that would make a request target ambiguous (config/schema.ts refuses them). */
export const RESERVED_CHAIN_IDS: ReadonlySet<string> = new Set(['api', 'v2', 'services']);

export function resolve(url: string, chains: { has(id: string): boolean }): Resolution {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const qs = q === -1 ? '' : (url.slice(q + 1).split('#', 1)[0] ?? '');

  // The Etherscan V2 forms: the chain is the `chainid` parameter.
  if (path === '/api' || path === '/api/' || path === '/v2/api' || path === '/v2/api/') {
    const query = parseQuery(qs);
    const chainId = query.params.get('chainid');
    if (chainId === undefined || chainId === '') return { kind: 'refusal', code: 'CHAINID_REQUIRED', legacy: true };
    if (!chains.has(chainId)) return { kind: 'refusal', code: 'UNKNOWN_CHAIN', legacy: true };
    query.params.delete('chainid');
    return resolveLegacy(chainId, query);
  }

  // The explorers' services live under /services/ (contract section 9), not under a chain: a
  // path there that no route serves is an unknown route, not the unknown chain "services".
  if (path.startsWith('/services/')) {
    const match = matchService('services', path.slice('/services'.length));
    if (!match) return { kind: 'refusal', code: 'UNKNOWN_ROUTE', legacy: false };
    return serviceRoute(SERVICES_SCOPE, match.spec, match.params, qs);
  }

  // "/{chain_id}/rest"
  const slash = path.indexOf('/', 1);
  if (path[0] !== '/' || slash === -1) return { kind: 'refusal', code: 'UNKNOWN_ROUTE', legacy: false };
  const chainId = path.slice(1, slash);
  const rest = path.slice(slash);
  const legacy = rest === '/api' || rest === '/api/';
  if (!chains.has(chainId)) {
    return RPC_PATHS.has(rest)
      ? { kind: 'refusal', code: 'UNKNOWN_CHAIN', legacy, rpc: true }
      : { kind: 'refusal', code: 'UNKNOWN_CHAIN', legacy };
  }
  if (legacy) return resolveLegacy(chainId, parseQuery(qs));
  if (RPC_PATHS.has(rest)) {
    return {
      kind: 'route',
      chainId,
      route: 'rpc',
      legacy: false,
      stream: false,
      rpc: true,
      validation: { ok: true, upstreamPath: UPSTREAM_RPC_PATH },
    };
  }
  if (!rest.startsWith('/api/v2/')) {
    const match = matchService('chain', rest);
    if (!match) return { kind: 'refusal', code: 'UNKNOWN_ROUTE', legacy: false };
    return serviceRoute(chainId, match.spec, match.params, qs);
  }

  const match = matchV2(rest.slice('/api/v2/'.length));
  if (!match) return { kind: 'refusal', code: 'UNKNOWN_ROUTE', legacy: false };
  const route = match.spec.name;
  const base = { kind: 'route', chainId, route, legacy: false, stream: match.spec.stream } as const;
  const query = parseQuery(qs);
  const malformed = query.malformed.map((name) => ({ name, detail: 'Invalid percent-encoding' }));

  // The two routes served first keep their hand-written checks: stricter than the document where
  // the contract says so (sort and order only together), with Blockscout's texts.
  if (route === 'token-balances' || route === 'transactions') {
    return { ...base, validation: addressRoute(route, match.params[0] ?? '', query, malformed) };
  }
  const checked = checkV2(match.spec, match.params, query.params);
  if (!checked.ok || malformed.length > 0) {
    return { ...base, validation: { ok: false, issues: [...(checked.ok ? [] : checked.issues), ...malformed] } };
  }
  return { ...base, validation: { ok: true, upstreamPath: withQuery(checked.path, encodeQuery(checked.query)) } };
}

/**
 * A route of the PRO API outside v2. An explorer's own (`api/v1/search`, `api/legacy/...`) is
 * checked as v2 is (OpenApiSpex, 422 JsonErrorResponse); a Rust service's as actix-prost reads it
 * (service-check.ts). A service's answers are cached under its own scope.
 */
function serviceRoute(chainId: string, spec: ServiceRouteSpec, rawPath: string[], qs: string): Route {
  const service: ServiceCall = { name: spec.service, method: spec.method };
  const base = { kind: 'route', chainId, route: spec.name, legacy: false, stream: false, service } as const;
  if (spec.service === 'explorer') {
    const query = parseQuery(qs);
    const malformed = query.malformed.map((name) => ({ name, detail: 'Invalid percent-encoding' }));
    const checked = checkV2(spec, rawPath, query.params);
    if (!checked.ok || malformed.length > 0) {
      return { ...base, validation: { ok: false, issues: [...(checked.ok ? [] : checked.issues), ...malformed] } };
    }
    return { ...base, validation: { ok: true, upstreamPath: withQuery(checked.path, encodeQuery(checked.query)) } };
  }
  const scope = spec.service === 'stats' ? `stats:${chainId}` : `svc:${spec.service}`;
  const checked = checkService(spec, rawPath, qs);
  // The cluster is known even when a parameter is bad: a cluster not configured is a 404 first (request/service.ts).
  if (spec.service === 'multichain') service.cluster = clusterAsk(spec, rawPath, checked.ok ? checked.query : []);
  if (!checked.ok) return { ...base, cacheScope: scope, validation: { ok: false, serviceMessage: checked.message } };
  const query = checked.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  return { ...base, cacheScope: scope, validation: { ok: true, upstreamPath: withQuery(checked.path, query) } };
}

/** What a multichain route asked, from its checked values. */
function clusterAsk(spec: ServiceRouteSpec, rawPath: readonly string[], query: readonly [string, string][]): ClusterAsk {
  const after = spec.name.slice('multichain/api/v1/'.length);
  const inCluster = after.startsWith('clusters/{cluster_id}/');
  const ask: ClusterAsk = {
    route: inCluster ? after.slice('clusters/{cluster_id}/'.length) : after,
    clusterId: inCluster ? percentDecode(rawPath[0] ?? '') : undefined,
  };
  for (const [name, value] of query) {
    if (name === 'q') ask.q = value;
    else if (name === 'chain_id') (ask.chainIds ??= []).push(value);
    else if (name === 'page_size') ask.pageSize = Number(value);
    else if (name === 'page_token') ask.pageToken = value;
    else if (name === 'unlimited_per_chain') ask.unlimitedPerChain = value === 'true';
  }
  return ask;
}

function addressRoute(
  route: 'token-balances' | 'transactions',
  rawAddress: string,
  query: Query,
  malformed: ValidationIssue[],
): Validation {
  const issues: ValidationIssue[] = [];
  const address = percentDecode(rawAddress);
  if (address === undefined || !ADDRESS_RE.test(address)) issues.push({ name: 'address_hash_param', detail: ADDRESS_DETAIL });
  issues.push(...malformed);
  const schema = route === 'transactions' ? transactionsQuery : tokenBalancesQuery;
  const parsed = schema.safeParse(Object.fromEntries(query.params));
  if (!parsed.success) issues.push(...toIssues(parsed.error));
  if (issues.length > 0 || !parsed.success || address === undefined) return { ok: false, issues };
  const entries = Object.entries(parsed.data as Record<string, string | undefined>).filter(
    (e): e is [string, string] => e[1] !== undefined,
  );
  return { ok: true, upstreamPath: withQuery(`/api/v2/addresses/${address.toLowerCase()}/${route}`, encodeQuery(entries)) };
}

/** The three token actions served first keep their hand-written checks (Blockscout's texts, page and offset together). */
const HAND_WRITTEN_LEGACY: ReadonlyMap<string, LegacyAction> = new Map([
  ['legacy.getToken', 'getToken'],
  ['legacy.getTokenHolders', 'getTokenHolders'],
  ['legacy.bridgedTokenList', 'bridgedTokenList'],
]);

function resolveLegacy(chainId: string, query: Query): Resolution {
  const module = query.params.get('module');
  const action = query.params.get('action');
  if (!module || !action) return { kind: 'refusal', code: 'LEGACY_NO_MODULE_ACTION', legacy: true };
  const spec = matchLegacy(module, action);
  if ('error' in spec)
    return { kind: 'refusal', code: spec.error === 'unknown-module' ? 'LEGACY_UNKNOWN_MODULE' : 'LEGACY_UNKNOWN_ACTION', legacy: true };
  if (spec.kind === 'proxy') return proxyRoute(chainId, spec, query.params);
  if (spec.kind === 'verify') return verifyRoute(chainId, spec, query.params);
  const base = { kind: 'route', chainId, route: spec.name, legacy: true, stream: false } as const;
  // module and action are forwarded as the document spells them, whatever case the client used.
  const upstream = (entries: [string, string][]) => {
    const rest = encodeQuery(entries);
    return `/api?module=${spec.module}&action=${spec.action}${rest ? `&${rest}` : ''}`;
  };

  const handWritten = HAND_WRITTEN_LEGACY.get(spec.name);
  if (handWritten !== undefined) {
    const parsed = legacyQuery[handWritten].safeParse(Object.fromEntries(query.params));
    if (!parsed.success)
      return { ...base, validation: { ok: false, legacyMessage: parsed.error.issues[0]?.message ?? 'Invalid parameters' } };
    const entries: [string, string][] = [];
    for (const [k, v] of Object.entries(parsed.data as Record<string, string | undefined>)) {
      // Instances read `chain_ids` (a comma list), not the documented `chainid` (docs/blockscout.md).
      if (v !== undefined) entries.push([k === 'chainid' ? 'chain_ids' : k, v]);
    }
    return { ...base, validation: { ok: true, upstreamPath: upstream(entries) } };
  }
  const checked = checkLegacy(spec, query.params);
  if (!checked.ok) return { ...base, validation: { ok: false, legacyMessage: checked.message } };
  return { ...base, validation: { ok: true, upstreamPath: upstream(checked.query) } };
}

function proxyRoute(chainId: string, spec: ProxyRouteSpec, params: ReadonlyMap<string, string>): Route {
  const base = { kind: 'route', chainId, route: spec.name, legacy: true, stream: false } as const;
  if (spec.method === undefined) return { ...base, validation: { ok: false, proxyBody: proxyUnsupported(spec.action) } };
  const id = proxyId(params);
  const derived = derivedCall(spec.action, params);
  const call = derived?.call ?? proxyCall(spec.method, params);
  if ('invalid' in call) return { ...base, validation: { ok: false, proxyBody: proxyInvalid(id, `Invalid params: ${call.invalid}`) } };
  const route: Route = { ...base, call, callId: id, validation: { ok: true, upstreamPath: UPSTREAM_RPC_PATH } };
  if (derived !== undefined) route.derivation = derived.derivation;
  return route;
}

/**
 * Contract verification. A write goes to the explorer as a POST to `/api?module=contract&action=A`
 * with the request's own fields in its body (request/verify.ts); the gateway checks nothing
 * of it, the explorer answers with its own messages. The two status reads need their `guid`.
 */
function verifyRoute(chainId: string, spec: VerifyRouteSpec, params: ReadonlyMap<string, string>): Route {
  const base = { kind: 'route', chainId, route: spec.name, legacy: true, stream: false } as const;
  const path = `/api?module=contract&action=${spec.action}`;
  if (spec.write) return { ...base, write: true, validation: { ok: true, upstreamPath: path } };
  const guid = params.get('guid');
  if (guid === undefined || guid === '') return { ...base, validation: { ok: false, legacyMessage: "Query parameter 'guid' is required" } };
  return { ...base, validation: { ok: true, upstreamPath: `${path}&${encodeQuery([['guid', guid]])}` } };
}
