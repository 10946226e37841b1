// What a route costs and how long its answers are kept: the configuration's entry for the route
// if it has one, else the route table's default (routes/table.ts: the PRO API's prices, TTLs by
// family).
import type { Config, RouteName } from '../config/schema.js';
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
  const own = cache.ttlSeconds[route];
  if (own !== undefined) return own;
  const spec = routeByName(route);
  if (spec?.kind === 'legacy' && cache.ttlSeconds.legacy !== undefined) return cache.ttlSeconds.legacy;
  return spec?.defaultTtlSeconds ?? 0;
}
