// What the bench runner and the server processes agree on: the variants, the request every
// variant answers, and the one-line handshake a server prints once it listens.

/**
 * In the order they alternate within a round; `bare` first because every ratio is to it.
 * - bare: a fastify route serving the body from memory (the baseline)
 * - bare-headers: the same route setting the eight headers a gateway hit carries (constant
 *   values): the floor of what the contract's headers cost
 * - bare-spin: the bare route spinning 2 us of CPU per request first (servers.ts, SPIN_US):
 *   what a known cost per request comes to in this bench's ratios (a calibration, not a part
 *   of the gateway)
 * - quota-*: that route plus the gateway's key and quota steps only
 * - gateway-hit*: the whole gateway (buildServer) answering from its cache: key, quota, cache
 * - nginx-cache: nginx (1 worker) answering from proxy_cache, when nginx is installed
 * - proxy-bare / gateway-miss: a bare @fastify/http-proxy pass-through, and the whole gateway
 *   with every request a miss (a different address each time), to the same origin process
 * - gateway-hit-nousage: gateway-hit with `usage.enabled: false`: what counting usage rows costs
 * - gateway-hit-webhook-up, gateway-hit-webhook-down: gateway-hit with a webhook for every event
 *   to a receiver in the server's process that answers 204 at once (up) or accepts connections
 *   and never answers (down), while the admin API creates 20 keys a second (`key.created`
 *   events) in the same process (bench/webhook-load.ts): down against up is what a receiver
 *   that is down costs the requests, up against gateway-hit what the events cost
 * - gateway-hit-workers: gateway-hit-redis as two worker processes (server.workers: 2) on one
 *   port, not pinned: they share both cores with the load generator
 * - gateway-hit-apikey, gateway-hit-redis-apikey: the same hits with the key in `?apikey=` (how
 *   Etherscan-style clients send it) instead of `Authorization: Bearer`
 * - gateway-hit-redis-calls: gateway-hit-redis with `redis.leases: false`: one script call per
 *   request (per key and event-loop turn), what a hit on Redis cost before leases
 * - gateway-hit-base: `gateway-hit` as another git revision builds it (`--base REF`), to compare
 *   a change with what it changes, in the same run
 * - gateway-rpc-hit, gateway-rpc-batch10: the same gateway answering `POST /1/json-rpc` from its
 *   cache: one call, and a batch of ten distinct calls (bench/rpc.ts)
 */
export const VARIANTS = [
  'bare',
  'bare-headers',
  'bare-spin',
  'quota-memory',
  'quota-redis',
  'gateway-hit',
  'gateway-hit-base',
  'gateway-hit-nousage',
  'gateway-hit-webhook-up',
  'gateway-hit-webhook-down',
  'gateway-hit-apikey',
  'gateway-rpc-hit',
  'gateway-rpc-batch10',
  'gateway-hit-log',
  'gateway-hit-redis',
  'gateway-hit-redis-apikey',
  'gateway-hit-redis-calls',
  'gateway-hit-workers',
  'nginx-cache',
  'proxy-bare',
  'gateway-miss',
] as const;
export type Variant = (typeof VARIANTS)[number];

/** Variants that stand in front of an origin process. */
export const NEEDS_ORIGIN: ReadonlySet<Variant> = new Set([
  'gateway-hit',
  'gateway-hit-base',
  'gateway-hit-nousage',
  'gateway-hit-webhook-up',
  'gateway-hit-webhook-down',
  'gateway-hit-apikey',
  'gateway-rpc-hit',
  'gateway-rpc-batch10',
  'gateway-hit-log',
  'gateway-hit-redis',
  'gateway-hit-redis-apikey',
  'gateway-hit-redis-calls',
  'gateway-hit-workers',
  'nginx-cache',
  'proxy-bare',
  'gateway-miss',
]);
/** Variants measured with a different path per request (misses, no coalescing). */
export const DISTINCT_PATHS: ReadonlySet<Variant> = new Set(['proxy-bare', 'gateway-miss']);
/** Variants that stamp the gateway's quota headers. */
export const HAS_QUOTA_HEADERS: ReadonlySet<Variant> = new Set([
  'quota-memory',
  'quota-redis',
  'gateway-hit',
  'gateway-hit-base',
  'gateway-hit-nousage',
  'gateway-hit-webhook-up',
  'gateway-hit-webhook-down',
  'gateway-hit-apikey',
  'gateway-rpc-hit',
  'gateway-rpc-batch10',
  'gateway-hit-log',
  'gateway-hit-redis',
  'gateway-hit-redis-apikey',
  'gateway-hit-redis-calls',
  'gateway-hit-workers',
  'gateway-miss',
]);
/** Variants that use Redis. */
export const USES_REDIS: ReadonlySet<Variant> = new Set([
  'quota-redis',
  'gateway-hit-redis',
  'gateway-hit-redis-apikey',
  'gateway-hit-redis-calls',
  'gateway-hit-workers',
]);
/** Variants whose requests carry the key in `?apikey=` rather than in an Authorization header. */
export const QUERY_KEY: ReadonlySet<Variant> = new Set(['gateway-hit-apikey', 'gateway-hit-redis-apikey']);

export function isVariant(name: string): name is Variant {
  return (VARIANTS as readonly string[]).includes(name);
}

/** The gateway's busiest route shape; every variant serves it, so routing costs the same. */
export const BENCH_PATH = '/1/api/v2/addresses/0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045/token-balances';
/** The fastify route that matches BENCH_PATH (parametric, as a real gateway route would be). */
export const BENCH_ROUTE = '/:chain/api/v2/addresses/:address/token-balances';
export const BENCH_KEY = 'bench-key';
export const AUTH_HEADER = `Bearer ${BENCH_KEY}`;

/** A server prints exactly this JSON line on stdout once it accepts connections. */
export interface ReadyLine {
  ready: true;
  port: number;
  /** Processes serving besides the one that printed the line (the workers of gateway-hit-workers). */
  workers?: number[];
}

/** Redis the quota-redis variant (and the clean-up) talks to. */
export function redisUrl(): string {
  return process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}
