// What a route costs and how long its answers are kept: the configuration's entry for the route
// if it has one, else the route table's default (routes/table.ts: the PRO API's prices, TTLs by
// family). The configuration comes in as the two sections read here: config/schema.ts checks its
// route names against this folder's table, so this folder imports nothing of config/.
import { RPC_TTL_SECONDS, rpcRouteName, type Freshness, type RpcMethod } from '../rpc/methods.js';
import { PRO_API_ROUTE_COSTS, routeByName, type RouteName } from './table.js';

/** The configuration's `costs` (config/schema.ts costsSchema). */
export interface CostSettings {
  readonly default: number;
  readonly routes: Readonly<Record<RouteName, number>>;
}

/** The configuration's `cache.ttlSeconds` (config/schema.ts cacheSchema), in its section. */
export interface TtlSettings {
  readonly ttlSeconds: Readonly<Record<RouteName, number>>;
}

/** `costs.routes[route]`, else the PRO API's price of the route, else `costs.default`. */
export function costOf(costs: CostSettings, route: RouteName): number {
  return costs.routes[route] ?? PRO_API_ROUTE_COSTS[route] ?? costs.default;
}

/**
 * `cache.ttlSeconds[route]`, else (for a legacy action) `cache.ttlSeconds.legacy`, else the
 * route's default. 0: not cached.
 */
export function ttlSecondsFor(cache: TtlSettings, route: RouteName): number {
  const spec = routeByName(route);
  // Verification is a write and its status a moving answer: never kept, whatever the config says.
  if (spec?.kind === 'verify') return 0;
  const own = cache.ttlSeconds[route];
  if (own !== undefined) return own;
  if (spec?.kind === 'legacy' && cache.ttlSeconds.legacy !== undefined) return cache.ttlSeconds.legacy;
  return spec !== undefined && 'defaultTtlSeconds' in spec ? spec.defaultTtlSeconds : 0;
}

/**
 * A JSON-RPC call's TTL: never for `never` (a write, an estimate); else `cache.ttlSeconds` for
 * the route the call came by (`legacy.proxy.<action>`, then `rpc.<method>`), else the default of
 * its freshness (rpc/methods.ts).
 */
export function rpcTtlSeconds(cache: TtlSettings, method: RpcMethod, freshness: Freshness, route?: RouteName): number {
  if (freshness === 'never') return 0;
  const own = (route === undefined ? undefined : cache.ttlSeconds[route]) ?? cache.ttlSeconds[rpcRouteName(method)];
  return own ?? RPC_TTL_SECONDS[freshness];
}

/** What an Etherscan proxy action costs: its own entry in `costs.routes`, else its JSON-RPC method's cost. */
export function proxyCost(costs: CostSettings, route: RouteName, method: RpcMethod): number {
  return costs.routes[route] ?? costOf(costs, rpcRouteName(method));
}

/**
 * What one valid request of a route is billed, as the resolver bills it (resolver.ts): a proxy
 * action its method's cost (proxyCost), nothing for the one the explorer cannot answer (refused
 * unbilled); any other route costOf. What /api/json/config and /api/json/openapi list.
 */
export function billedCost(costs: CostSettings, route: RouteName): number {
  const spec = routeByName(route);
  if (spec?.kind !== 'proxy') return costOf(costs, route);
  return spec.method === undefined ? 0 : proxyCost(costs, route, spec.method);
}
