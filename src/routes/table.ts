// The route table: every GET operation of the PRO API under /{chain_id}/api/v2/ and every read
// action of the legacy RPC API, from the data scripts/generate-routes.ts extracts from the
// vendored documents (spec/), with the names operators write in YAML, and each route's default
// cost, cache TTL and whether it is streamed. Built once, at import; pure data.
import { LEGACY_ACTIONS } from './generated/legacy-actions.js';
import { SERVICE_OPERATIONS } from './generated/service-operations.js';
import { V2_OPERATIONS } from './generated/v2-operations.js';
import { LEGACY_RULES, type LegacyActionRules, type LegacyParamReading } from './legacy-rules.js';
import type { LegacyActionData, ParamData, ServiceOperationData, V2OperationData } from './spec-types.js';
import { PROXY_ROUTES, RPC_ROUTES, VERIFY_ROUTES, type ProxyRouteSpec, type RpcRouteSpec, type VerifyRouteSpec } from './client-routes.js';

export type { ProxyRouteSpec, RpcRouteSpec, VerifyRouteSpec };

/** A parsed template segment: a literal, or a parameter slot. */
export type PathSegment = string | { readonly param: string };

export interface V2RouteSpec {
  readonly name: string;
  readonly kind: 'v2';
  /** The path after `/{chain_id}`, as the document spells it: `/api/v2/tokens/{address_hash_param}`. */
  readonly template: string;
  readonly operationId: string;
  /** The whole template, `api` and `v2` included. */
  readonly segments: readonly PathSegment[];
  /** In template order. */
  readonly pathParams: readonly ParamData[];
  readonly queryParams: readonly ParamData[];
  readonly defaultTtlSeconds: number;
  /** Passed through as it arrives, never buffered or cached (CSV exports). */
  readonly stream: boolean;
}

export interface LegacyParamSpec extends ParamData, LegacyParamReading {
  /** Blockscout's answer when this required parameter is missing. */
  readonly missing?: string;
  /** Blockscout's answer when its value is bad. */
  readonly invalid?: string;
  /** Sent upstream under this name (the instance reads another than the documented one). */
  readonly forwardAs?: string;
}

export interface LegacyRouteSpec {
  readonly name: string;
  readonly kind: 'legacy';
  /** As the document spells them (they are matched case-insensitively). */
  readonly module: string;
  readonly action: string;
  readonly params: readonly LegacyParamSpec[];
  readonly oneOfRequired?: LegacyActionRules['oneOfRequired'];
  readonly missingTogether?: string;
  readonly defaultTtlSeconds: number;
  readonly stream: false;
}

/**
 * Where a service route goes: the chain's explorer (`/api/v1/search`, `/api/legacy/...`), the
 * chain's stats service (`chains.<id>.stats`), or a shared service (`services.<name>`).
 */
export type ServiceName = 'explorer' | 'stats' | 'bens' | 'metadata' | 'multichain';

/** One operation of the PRO API outside `/{chain_id}/api/v2/` (generated/service-operations.ts). */
export interface ServiceRouteSpec {
  /** The template after the chain or after `/services/`: `stats-service/api/v1/lines/{name}`, `bens/api/v1/protocols`. */
  readonly name: string;
  readonly kind: 'service';
  readonly service: ServiceName;
  readonly method: 'GET' | 'POST';
  /** As the document spells it. */
  readonly documentPath: string;
  readonly operationId: string;
  /** What is matched: the path after `/{chain_id}` or after `/services`. */
  readonly match: readonly PathSegment[];
  /** The path at the service: `api/v1/lines/{name}` for `/{chain_id}/stats-service/api/v1/lines/{name}`. */
  readonly segments: readonly PathSegment[];
  /** In template order. */
  readonly pathParams: readonly ParamData[];
  readonly queryParams: readonly ParamData[];
  /** 0 for a POST: forwarded with its body, never kept. */
  readonly defaultTtlSeconds: number;
  readonly stream: false;
}

export type RouteSpec = V2RouteSpec | LegacyRouteSpec | RpcRouteSpec | ProxyRouteSpec | VerifyRouteSpec | ServiceRouteSpec;
/** The routes of the legacy `?module=&action=` form: the document's reads, Etherscan's proxy module, contract verification. */
export type ModuleRouteSpec = LegacyRouteSpec | ProxyRouteSpec | VerifyRouteSpec;

const V2_PREFIX = '/api/v2/';

/**
 * Names that are not the template's: the two v2 routes the gateway served first keep their
 * names (operators' YAML has used them since); the global transaction list, whose name by the
 * rule would be `transactions` too, keeps its `api/v2/` prefix instead.
 */
export const RENAMED_V2_ROUTES: Readonly<Record<string, string>> = {
  'addresses/{address_hash_param}/token-balances': 'token-balances',
  'addresses/{address_hash_param}/transactions': 'transactions',
  transactions: 'api/v2/transactions',
};

/** The three legacy actions the gateway served first keep their names. */
export const RENAMED_LEGACY_ROUTES: Readonly<Record<string, string>> = {
  'legacy.token.getToken': 'legacy.getToken',
  'legacy.token.getTokenHolders': 'legacy.getTokenHolders',
  'legacy.token.bridgedTokenList': 'legacy.bridgedTokenList',
};

/** A v2 route's name: its template after `/api/v2/`, a trailing slash dropped (`tokens/` is `tokens`). */
export function v2RouteName(template: string): string {
  if (!template.startsWith(V2_PREFIX)) throw new Error(`not a v2 template: ${template}`);
  const natural = template.slice(V2_PREFIX.length).replace(/\/+$/, '');
  return RENAMED_V2_ROUTES[natural] ?? natural;
}

export function legacyRouteName(module: string, action: string): string {
  const natural = `legacy.${module}.${action}`;
  return RENAMED_LEGACY_ROUTES[natural] ?? natural;
}

/**
 * Credits per call: the Blockscout PRO API's published table ("Credit cost per endpoint",
 * https://docs.blockscout.com/rate-limits); every endpoint it does not list, and every legacy
 * action, costs `costs.default` (20 unless configured: config/schema.ts). routes/settings.ts
 * applies it.
 */
export const PRO_API_ROUTE_COSTS: Readonly<Record<string, number>> = {
  'search/quick': 25,
  'transactions/{transaction_hash_param}/logs': 30,
  'transactions/{transaction_hash_param}/token-transfers': 30,
  'transactions/{transaction_hash_param}/state-changes': 30,
  tokens: 30,
  'tokens/{address_hash_param}/transfers': 30,
  'addresses/{address_hash_param}/token-transfers': 30,
  'addresses/{address_hash_param}/logs': 30,
  'transactions/{transaction_hash_param}/internal-transactions': 40,
  'addresses/{address_hash_param}/internal-transactions': 40,
  'transactions/{transaction_hash_param}/summary': 50,
  'transactions/{transaction_hash_param}/raw-trace': 50,
  'addresses/{address_hash_param}/coin-balance-history': 50,
};

export interface TtlRule {
  readonly family: string;
  readonly seconds: number;
  readonly why: string;
  readonly test: (name: string) => boolean;
}

const anyOf =
  (...res: RegExp[]) =>
  (name: string) =>
    res.some((re) => re.test(name));

/**
 * Default cache TTLs of v2 routes, by family; the first rule whose test takes the route name
 * wins, DEFAULT_TTL_SECONDS otherwise. Blockscout sends `max-age=0` on everything, so these
 * are the gateway's own; operators override them per route in `cache.ttlSeconds`.
 */
export const TTL_RULES: readonly TtlRule[] = [
  {
    family: 'csv',
    seconds: 0,
    why: "CSV exports are streamed through, never cached; an export's status changes until the file is ready",
    test: anyOf(/\/csv$/, /^csv-exports\//),
  },
  {
    family: 'per-user',
    seconds: 0,
    why: "a watch list belongs to the signed-in Blockscout account: one client's answer is never another's",
    test: anyOf(/(^|\/)watchlist$/),
  },
  // The routes outside v2 first: their names would fall into v2's families (`.../counters`).
  {
    family: 'explorer-search',
    seconds: 5,
    why: "an explorer's search finds what the newest blocks hold",
    test: (n) => n === 'api/v1/search',
  },
  {
    family: 'stats-lines',
    seconds: 300,
    why: 'a stats service recomputes its charts on a schedule (minutes at the least), a day per point',
    test: anyOf(/^stats-service\/api\/v1\/lines\/\{name\}$/),
  },
  {
    family: 'stats-counters',
    seconds: 60,
    why: "a stats service's counters and pages are recomputed every few minutes, some with each block",
    test: anyOf(/^stats-service\/api\/v1\/(counters|pages\/)/),
  },
  {
    family: 'service-catalogue',
    seconds: 3_600,
    why: 'the charts, name protocols, tag types and chains a service offers change when it is redeployed',
    test: anyOf(
      /^stats-service\/api\/v1\/lines$/,
      /^bens\/api\/v1\/(\{chain_id\}\/)?protocols$/,
      /^metadata\/api\/v1\/public-tag-types$/,
      /^multichain\/api\/v1\/clusters\/\{cluster_id\}\/chains$/,
    ),
  },
  {
    family: 'names-and-tags',
    seconds: 300,
    why: 'names, their events, tags and reputations change by a transaction or a curator, rarely',
    test: anyOf(/^bens\//, /^metadata\//),
  },
  {
    family: 'cluster-search',
    seconds: 30,
    why: 'a search across chains: each chain answers from its own newest blocks',
    test: anyOf(/^multichain\//),
  },
  { family: 'token-balances', seconds: 15, why: "today's default for token-balances", test: (n) => n === 'token-balances' },
  {
    family: 'every-block',
    seconds: 5,
    why: 'changes with every block (new transactions, balances, counts)',
    test: anyOf(
      /^main-page\//,
      /^stats(\/|$)/, // stats, stats/charts/...
      /\/stats$/, // transactions/stats
      /^(blocks|api\/v2\/transactions|token-transfers|internal-transactions|withdrawals)$/, // the global lists
      /(^|\/|-)(count|counters)$/, // .../count, counters, tabs-counters, transfers-count
      /^search(\/|$)/,
      /\/indexing-status$/,
      /^validators\//,
      /^(transactions|addresses\/\{address_hash_param\}.*)$/, // one address (`transactions` is its list): balance, counters, lists
      /^tokens\/\{address_hash_param\}\/transfers$/,
      /^blocks\/\{block_number_param\}\/countdown$/, // the time left to a block
    ),
  },
  {
    family: 'token-metadata',
    seconds: 60,
    why: 'token and NFT metadata and holders move slowly',
    test: anyOf(/^tokens\/\{address_hash_param\}(\/holders|\/instances(\/.*)?)?$/),
  },
  {
    family: 'smart-contract',
    seconds: 300,
    why: 'verified source and audit reports change only when someone verifies or reports',
    test: anyOf(/^smart-contracts\/\{address_hash_param\}/),
  },
  {
    family: 'by-hash-or-number',
    seconds: 30,
    why: 'addressed by a hash or a number: changes only by confirmations (and a pending transaction being mined)',
    test: anyOf(/^(transactions|blocks)\/(\{|[a-z]+-batch\/)/, /^[a-z]+\/batches\/(\{|da\/)/),
  },
];
export const DEFAULT_TTL_SECONDS = 30;
/** Today's `cache.ttlSeconds.legacy`. */
export const LEGACY_TTL_SECONDS = 30;

export function ttlFamilyOf(name: string): string {
  return TTL_RULES.find((r) => r.test(name))?.family ?? 'default';
}

export function defaultTtlSecondsOf(name: string): number {
  return TTL_RULES.find((r) => r.test(name))?.seconds ?? DEFAULT_TTL_SECONDS;
}

function parseTemplate(template: string): PathSegment[] {
  return template
    .split('/')
    .filter((s) => s !== '')
    .map((s) => (s.startsWith('{') && s.endsWith('}') ? { param: s.slice(1, -1) } : s));
}

function v2Spec(op: V2OperationData): V2RouteSpec {
  const name = v2RouteName(op.template);
  const stream = op.template.endsWith('/csv');
  return {
    name,
    kind: 'v2',
    template: op.template,
    operationId: op.operationId,
    segments: parseTemplate(op.template),
    pathParams: op.pathParams,
    queryParams: op.queryParams,
    defaultTtlSeconds: defaultTtlSecondsOf(name),
    stream,
  };
}

const SERVICE_PREFIXES: readonly { prefix: string; service: ServiceName; at: string }[] = [
  // The path after `/{chain_id}` (or after `/services`), and what the service itself serves.
  { prefix: '/{chain_id}/stats-service/', service: 'stats', at: '/' },
  { prefix: '/{chain_id}/api/', service: 'explorer', at: '/api/' },
  { prefix: '/services/bens/', service: 'bens', at: '/' },
  { prefix: '/services/metadata/', service: 'metadata', at: '/' },
  { prefix: '/services/multichain/', service: 'multichain', at: '/' },
];

function serviceSpec(op: ServiceOperationData): ServiceRouteSpec {
  const where = SERVICE_PREFIXES.find((x) => op.documentPath.startsWith(x.prefix));
  if (where === undefined) throw new Error(`${op.documentPath}: no service serves it`);
  const underChain = op.documentPath.startsWith('/{chain_id}/');
  const name = op.documentPath.slice(underChain ? '/{chain_id}/'.length : '/services/'.length);
  const upstream = `${where.at}${op.documentPath.slice(where.prefix.length)}`;
  return {
    name,
    kind: 'service',
    service: where.service,
    method: op.method,
    documentPath: op.documentPath,
    operationId: op.operationId,
    match: parseTemplate(op.documentPath.slice(underChain ? '/{chain_id}'.length : '/services'.length)),
    segments: parseTemplate(upstream),
    pathParams: op.pathParams,
    queryParams: op.queryParams,
    defaultTtlSeconds: op.method === 'POST' ? 0 : defaultTtlSecondsOf(name),
    stream: false,
  };
}

function legacySpec(a: LegacyActionData): LegacyRouteSpec {
  const key = `${a.module}.${a.action}`;
  const rules = LEGACY_RULES[key] ?? {};
  for (const p of Object.keys(rules.params ?? {})) {
    if (!a.params.some((x) => x.name === p)) throw new Error(`LEGACY_RULES: ${key} has no parameter ${p}`);
  }
  const params = a.params.map((p): LegacyParamSpec => {
    const { required, schema, ...texts } = rules.params?.[p.name] ?? {};
    return { ...p, required: required ?? p.required, schema: schema ?? p.schema, ...texts };
  });
  for (const n of rules.oneOfRequired?.names ?? []) {
    if (!params.some((x) => x.name === n)) throw new Error(`LEGACY_RULES: ${key} has no parameter ${n}`);
  }
  return {
    name: legacyRouteName(a.module, a.action),
    kind: 'legacy',
    module: a.module,
    action: a.action,
    params,
    ...(rules.oneOfRequired ? { oneOfRequired: rules.oneOfRequired } : {}),
    ...(rules.missingTogether !== undefined ? { missingTogether: rules.missingTogether } : {}),
    defaultTtlSeconds: LEGACY_TTL_SECONDS,
    stream: false,
  };
}

function build(): readonly RouteSpec[] {
  const table: RouteSpec[] = [
    ...V2_OPERATIONS.map(v2Spec),
    ...LEGACY_ACTIONS.map(legacySpec),
    ...RPC_ROUTES,
    ...PROXY_ROUTES,
    ...VERIFY_ROUTES,
    ...SERVICE_OPERATIONS.map(serviceSpec),
  ];
  const names = new Set<string>();
  for (const r of table) {
    if (names.has(r.name)) throw new Error(`route name ${r.name} is used twice`);
    names.add(r.name);
  }
  for (const key of Object.keys(LEGACY_RULES)) {
    if (!LEGACY_ACTIONS.some((a) => `${a.module}.${a.action}` === key)) throw new Error(`LEGACY_RULES: no action ${key}`);
  }
  for (const n of Object.keys(PRO_API_ROUTE_COSTS)) if (!names.has(n)) throw new Error(`PRO_API_ROUTE_COSTS: no route ${n}`);
  return table;
}

export const ROUTE_TABLE: readonly RouteSpec[] = build();
export const ROUTE_NAMES: readonly string[] = ROUTE_TABLE.map((r) => r.name);

/**
 * A route of the table: what `costs.routes` and `cache.ttlSeconds` are keyed by (config/schema.ts
 * checks them against ROUTE_NAMES), and what usage rows and metrics name.
 */
export type RouteName = string;

const BY_NAME: ReadonlyMap<string, RouteSpec> = new Map(ROUTE_TABLE.map((r) => [r.name, r]));

export function routeByName(name: string): RouteSpec | undefined {
  return BY_NAME.get(name);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

// Parameter names are long and people misremember them (`{address}` for `{address_hash_param}`):
// compare with every slot emptied first, then as written.
const slotless = (s: string) => s.replace(/\{[^}]*\}/g, '{}');

/** The n route names nearest to `name` by edit distance, for "did you mean" in config errors. */
export function closestRouteNames(name: string, n = 3): string[] {
  const target = slotless(name);
  return ROUTE_NAMES.map((candidate) => ({
    candidate,
    slots: editDistance(target, slotless(candidate)),
    whole: editDistance(name, candidate),
  }))
    .sort((x, y) => x.slots - y.slots || x.whole - y.whole || (x.candidate < y.candidate ? -1 : 1))
    .slice(0, n)
    .map((x) => x.candidate);
}
