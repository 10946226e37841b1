// A key's terms beyond its plan (issue 25, items 1 and 7): its own limits, and the routes,
// client networks and browser origins it may be used from. Compiled once when a key enters the
// ring (ring.ts), so the request path pays a Set lookup, a BlockList check or a few regular
// expressions, and only for a key that has the restriction.
import { BlockList, isIP } from 'node:net';
import { ROUTE_NAMES, ROUTE_PATHS } from '../config/route-names.js';
import type { PlanConfig } from '../config/schema.js';
import type { KeyLimits } from '../store/types.js';

/** The most `*` a route pattern may hold (admin/schemas.ts). */
export const MAX_WILDCARDS = 4;

/** The largest `meta` the admin API keeps, as JSON bytes: a note about a customer, not a document store. */
export const META_MAX_BYTES = 4096;

/**
 * Whether a route name matches a pattern: `*` stands for any run of characters, and a pattern
 * ending in `/*` or `.*` also covers the name it extends (`tokens/*` covers `tokens`, the list,
 * as well as `tokens/{address_hash_param}/holders`). Route names as routes/table.ts makes them.
 */
export function routePattern(pattern: string): RegExp {
  const family = /[/.]\*$/.test(pattern) ? pattern.slice(0, -2) : undefined;
  const glob = (p: string) => p.split('*').map(escape).join('.*');
  return new RegExp(family === undefined ? `^${glob(pattern)}$` : `^(?:${glob(pattern)}|${glob(family)})$`);
}

const escape = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** Whether a pattern matches a route, by its name or by the path it stands for (config/route-names.ts). */
export function patternMatches(re: RegExp, route: string): boolean {
  if (re.test(route)) return true;
  const path = ROUTE_PATHS.get(route);
  return path !== undefined && path !== route && re.test(path);
}

/**
 * One test for a key's route patterns: the routes they allow, found once, and shared by every key
 * with the same patterns. A plan or account change builds the ring again (app/state.ts): with
 * tens of thousands of restricted keys on a handful of pattern lists, that is a handful of scans
 * of the route table, not one per key.
 */
export function routeMatcher(patterns: readonly string[]): (route: string) => boolean {
  const id = JSON.stringify(patterns);
  let match = MATCHERS.get(id);
  if (match === undefined) {
    const res = patterns.map(routePattern);
    const allowed = new Set(ROUTE_NAMES.filter((name) => res.some((re) => patternMatches(re, name))));
    match = (route) => allowed.has(route);
    // Bounded: a store of keys each with patterns of its own does not grow this without end.
    if (MATCHERS.size >= MAX_MATCHERS) MATCHERS.clear();
    MATCHERS.set(id, match);
  }
  return match;
}

const MAX_MATCHERS = 10_000;
const MATCHERS = new Map<string, (route: string) => boolean>();

/** An address or CIDR block (`203.0.113.0/24`, `2001:db8::/32`), or undefined when it is neither. */
export function parseNetwork(s: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', bits, extra] = s.split('/');
  if (extra !== undefined) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** The networks as one node:net BlockList (https://nodejs.org/api/net.html#class-netblocklist). */
export function networkList(networks: readonly string[]): BlockList {
  const list = new BlockList();
  for (const n of networks) {
    const net = parseNetwork(n);
    if (net) list.addSubnet(net.address, net.prefix, net.family);
  }
  return list;
}

/** Whether a client address (as fastify gives `request.ip`) is in the list; an IPv4-mapped IPv6 address counts as its IPv4 one. */
export function addressAllowed(list: BlockList, ip: string | undefined): boolean {
  if (ip === undefined) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1]! : ip;
  const version = isIP(address);
  if (version === 0) return false;
  return list.check(address, version === 4 ? 'ipv4' : 'ipv6');
}

/**
 * An origin as browsers send it (RFC 6454 section 6.1: `scheme://host[:port]`, lower case, no
 * default port, no path), or undefined when `s` is not one.
 */
export function normaliseOrigin(s: string): string | undefined {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  if (url.pathname !== '/' || !/^[a-z]+:\/\/[^/]+\/?$/i.test(s)) return undefined;
  return url.origin;
}

/** A plan with a key's own limits over it. */
export function withLimits(plan: PlanConfig, limits: KeyLimits | null): PlanConfig {
  if (limits === null) return plan;
  return {
    rps: limits.rps ?? plan.rps,
    credits: limits.credits ?? plan.credits,
    period: limits.period ?? plan.period,
  };
}
