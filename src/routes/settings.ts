// What a route costs and how long its answers are kept: the configuration's entry for the route
// if it has one, else the route table's default (routes/table.ts: the PRO API's prices, TTLs by
// family).
import type { Config, RouteName } from '../config/schema.js';
import { RPC_TTL_SECONDS, rpcRouteName, type Freshness, type RpcMethod } from '../rpc/methods.js';
import { PRO_API_ROUTE_COSTS, routeByName } from './table.js';

/** `costs.routes[route]`, else the PRO API's price of the route, else `costs.default`. */
export function costOf(costs: Config['costs'], route: RouteName): number {
  return costs.routes[route] ?? PRO_API_ROUTE_COSTS[route] ?? costs.default;
}

/**
 * `cache.ttlSeconds[route]`, else (for a legacy action) `cache.ttlSeconds.legacy`, else the
 * route's default. 0: not cached.
 */
export function ttlSecondsFor(cache: Config['cache'], route: RouteName): number {
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
export function rpcTtlSeconds(cache: Config['cache'], method: RpcMethod, freshness: Freshness, route?: RouteName): number {
  if (freshness === 'never') return 0;
  const own = (route === undefined ? undefined : cache.ttlSeconds[route]) ?? cache.ttlSeconds[rpcRouteName(method)];
  return own ?? RPC_TTL_SECONDS[freshness];
}

/** What an Etherscan proxy action costs: its own entry in `costs.routes`, else its JSON-RPC method's cost. */
export function proxyCost(costs: Config['costs'], route: RouteName, method: RpcMethod): number {
  return costs.routes[route] ?? costOf(costs, rpcRouteName(method));
}
