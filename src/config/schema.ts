// The configuration schema: the single source of truth for the YAML file's shape, its types and
// its defaults (contract section 3). Unknown keys are errors everywhere (strict objects).
import { isIP } from 'node:net';
import { z } from 'zod';
import { RESERVED_CHAIN_IDS } from '../routes/resolve.js';
import { closestRouteNames, ROUTE_NAMES } from '../routes/table.js';
import { urlRefusal } from '../auth/webhook-destination.js';
import { secretKey } from '../auth/webhook-signature.js';
import { EVENT_PATTERNS } from './webhooks.js';

const KNOWN_ROUTES: ReadonlySet<string> = new Set(ROUTE_NAMES);

const positiveInt = (what = 'a positive integer') =>
  z
    .number({ error: `expected ${what}` })
    .int({ error: `expected ${what}` })
    .positive({ error: `expected ${what}` });
const nonNegativeInt = (what = 'a non-negative integer') =>
  z
    .number({ error: `expected ${what}` })
    .int({ error: `expected ${what}` })
    .min(0, { error: `expected ${what}` });
const nonEmpty = (what: string) => z.string({ error: `expected ${what}` }).min(1, { error: `expected ${what}` });

const httpUrl = z
  .string({ error: 'expected an http(s) URL' })
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { error: 'expected an http(s) URL' });

const decodes = (s: string) => {
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};
const upstreamUrl = httpUrl
  .refine((s) => !URL.canParse(s) || (new URL(s).search === '' && new URL(s).hash === ''), {
    error: 'expected a base URL without ?query or #fragment (the upstream key goes in upstreamApiKey)',
  })
  .refine((s) => !URL.canParse(s) || (decodes(new URL(s).username) && decodes(new URL(s).password)), {
    error: 'expected user:password@ to be percent-encoded',
  });

const redisUrl = z
  .string({ error: 'expected a redis:// or rediss:// URL' })
  .refine((s) => URL.canParse(s) && /^rediss?:$/.test(new URL(s).protocol), {
    error: 'expected a redis:// or rediss:// URL',
  });

/** Empty (for instance `${VAR:-}`, which YAML reads as null) means "not set". */
const optionalSecret = z
  .string({ error: 'expected a string' })
  .nullable()
  .optional()
  .transform((s) => (s === '' || s === null ? undefined : s));

const port = () => nonNegativeInt('a port number (0-65535)').max(65535, { error: 'expected a port number (0-65535)' });

/**
 * An origin as browsers send it in `Origin` (the Fetch standard's serialization of an origin,
 * https://fetch.spec.whatwg.org/#origin-header): scheme://host[:port] in lower case, without a
 * path or the scheme's default port. Compared exactly (http/cors.ts), so any other spelling
 * would never match: it is refused, with the spelling that would.
 */
const ORIGIN_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[0-9a-f:.]+\]|[a-z0-9_.~%-]+)(?::\d{1,5})?$/;
const ORIGIN_EXPECTED = 'expected * or an origin scheme://host[:port], without a path, as browsers send it (https://app.example)';
const corsOrigin = z.string({ error: ORIGIN_EXPECTED }).superRefine((s, ctx) => {
  if (s === '*') return;
  const serialized = URL.canParse(s) && /^https?:$/.test(new URL(s).protocol) ? new URL(s).origin : undefined;
  if (ORIGIN_SHAPE.test(s) && (serialized === undefined || serialized === s)) return;
  ctx.addIssue({
    code: 'custom',
    message: serialized && serialized !== s ? `${ORIGIN_EXPECTED}; did you mean ${serialized}?` : ORIGIN_EXPECTED,
  });
});

export const corsSchema = z.strictObject({
  /**
   * Origins whose pages may call the public listener (CORS): `["*"]` for any, as Blockscout
   * answers; a list of origins, each answered with its own origin and `Vary: Origin`; `[]` for
   * no CORS headers at all. The admin and operations listeners never answer CORS.
   */
  origins: z
    .array(corsOrigin, { error: 'expected a list of origins, ["*"] or []' })
    .refine((list) => !list.includes('*') || list.length === 1, { error: 'expected * alone: it already allows every origin' })
    .default(['*']),
  /**
   * How long a browser may keep a preflight's answer, seconds (Access-Control-Max-Age).
   * Browsers cap it: Chromium at 7200, Firefox at 86400.
   */
  maxAgeSeconds: nonNegativeInt()
    .max(86_400, { error: 'expected at most 86400 (one day; browsers keep a preflight no longer)' })
    .default(600),
});

/** An address, a CIDR range (`10.0.0.0/8`, `fd00::/8`) or one of proxy-addr's names, as fastify's trustProxy takes them. */
const proxyAddress = z.string().refine(
  (v) => {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(v)) return true;
    const [address = '', bits, extra] = v.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) return false;
    return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
  },
  { error: 'expected an IP address, a CIDR range, loopback, linklocal or uniquelocal' },
);

export const serverSchema = z.strictObject({
  /** Address to listen on. */
  host: nonEmpty('a host name or address').default('0.0.0.0'),
  /** TCP port; 0 picks a free one. */
  port: port().default(8080),
  /** Reload the configuration when the file changes (SIGHUP always reloads). */
  watchConfig: z.boolean({ error: 'expected true or false' }).default(false),
  /** On SIGTERM, how long requests in flight may take to finish before connections are cut, ms. */
  shutdownTimeoutMs: positiveInt().default(10_000),
  /**
   * How long a client may take to send a request's headers, from the moment it connects, ms;
   * then 408 and the connection is closed. HAProxy's `timeout http-request` in its documented
   * examples is 10 s (Node's own default is 60 s).
   */
  headersTimeoutMs: positiveInt().default(10_000),
  /** How long a client may take to send a whole request, ms (no route reads a body). */
  requestTimeoutMs: positiveInt().default(30_000),
  /** How long an idle keep-alive connection is kept open, ms; above a load balancer's idle timeout when behind one. */
  keepAliveTimeoutMs: positiveInt().default(5_000),
  /**
   * Most client connections held at once. Absent: the process's open-file limit less what the
   * gateway needs for upstreams, Redis and its store (http/connections.ts). At the cap, the
   * connections that have not sent a complete request are closed first.
   */
  maxConnections: positiveInt().optional(),
  /**
   * Worker processes serving one port (node:cluster): a number, or `auto` for one per core.
   * More than one needs `redis` (balances and rate windows must be shared).
   */
  workers: z
    .union([positiveInt('a positive integer or auto'), z.literal('auto', { error: 'expected a positive integer or auto' })], {
      error: 'expected a positive integer or auto',
    })
    .default(1),
  /** CORS on the public listener (http/cors.ts). */
  cors: corsSchema.default({ origins: ['*'], maxAgeSeconds: 600 }),
  /**
   * Which client address counts (security.badKeys), behind a reverse proxy or load balancer:
   * false (default) the connection's own address; true the left-most address of
   * `X-Forwarded-For` (only when every client comes through proxies that set it); a list of the
   * proxies' addresses or CIDR ranges (or proxy-addr's names `loopback`, `linklocal`,
   * `uniquelocal`), trusted to tell the address before them. fastify's `trustProxy`
   * (https://fastify.dev/docs/latest/Reference/Server/#trustproxy); a number of hops is not
   * offered: fastify 5 refuses to trust one, since it cannot tell a proxy from a client.
   */
  trustProxy: z
    .union([z.boolean(), z.array(proxyAddress).min(1)], {
      error: 'expected true, false or a list of proxy addresses',
    })
    .default(false),
});

export const redisSchema = z
  .strictObject({
    /** One Redis (or a primary) URL. */
    url: redisUrl.optional(),
    /** Redis Cluster seed nodes, instead of url. */
    cluster: z.array(redisUrl).min(1, { error: 'expected at least one node URL' }).optional(),
    /** Prefix of every key the gateway writes. */
    keyPrefix: z.string({ error: 'expected a string' }).default('egw:'),
    /** open: serve with all quota headers -1 when Redis fails; closed: answer 503. */
    onError: z.enum(['open', 'closed'], { error: 'expected open or closed' }).default('open'),
    /**
     * With onError open, what each process may serve an account while Redis is away: this share of
     * the balance it last saw for the account (of the plan's credits when it saw none), at the
     * plan's rps, billed once Redis is back (quota/outage.ts). 0: refuse with 402 meanwhile.
     */
    outageShare: z
      .number({ error: 'expected a number from 0 to 1' })
      .min(0, { error: 'expected a number from 0 to 1' })
      .max(1, { error: 'expected a number from 0 to 1' })
      .default(0.1),
    /** How long one Redis command may take before the store counts as failed, ms. */
    commandTimeoutMs: positiveInt().default(250),
    /**
     * A process that keeps deciding for one key is granted a lease of request slots and credits,
     * and decides locally until it runs out (quota/redis.ts); false: every decision in Redis.
     */
    leases: z.boolean({ error: 'expected true or false' }).default(true),
    /**
     * true: a Redis that keeps nothing on disk (appendonly no, save "") is accepted, with a
     * warning; false: the start is refused on one (app/resources.ts), since a restart of that
     * Redis loses the bought credits and the run-time keys it holds.
     */
    volatile: z.boolean({ error: 'expected true or false' }).default(false),
  })
  .refine((r) => (r.url === undefined) !== (r.cluster === undefined), {
    error: 'expected exactly one of url or cluster',
  });

/**
 * How a chain (or a service) survives a bad upstream (contract section 10; upstream/health.ts
 * and upstream/client.ts): reads tried again on the next upstream within the deadline, hedged
 * after `hedgeAfterMs`, an upstream that keeps failing ejected for a while. Defaults on.
 */
export const failoverSchema = z
  .strictObject({
    /** What one attempt may take of the request's deadline, ms. Default: timeoutMs divided by the number of upstreams. */
    attemptTimeoutMs: positiveInt().optional(),
    /** A read not answered after this long also goes to the next healthy upstream: ms, `auto` (that upstream's recent p95), 0 for never. */
    hedgeAfterMs: z
      .union([z.literal('auto'), nonNegativeInt('a non-negative integer or auto')], { error: 'expected auto or a number of ms' })
      .default('auto'),
    /** Hedges allowed, as a percentage of the chain's requests (a token bucket with a burst of 10). */
    hedgeMaxPercent: z
      .number({ error: 'expected a percentage' })
      .min(0, { error: 'expected 0 to 100' })
      .max(100, { error: 'expected 0 to 100' })
      .default(10),
    /** Consecutive failures that eject an upstream, and for how long (doubled while it keeps failing, at most 10 minutes). */
    eject: z.strictObject({ failures: positiveInt().default(5), seconds: positiveInt().default(30) }).default({ failures: 5, seconds: 30 }),
  })
  .default({ hedgeAfterMs: 'auto', hedgeMaxPercent: 10, eject: { failures: 5, seconds: 30 } });

/**
 * A service beside the explorers (a chain's stats service, the name service, metadata, search
 * across chains): the same failover, deadline, answer checks and credentials as an explorer.
 */
export const serviceSchema = z.strictObject({
  /** Base URLs of the service, the healthy and fast first, a failed read tried again on the next (failover); `user:password@` is sent as Basic auth. */
  upstreams: z.array(upstreamUrl, { error: 'expected a list of URLs' }).min(1, { error: 'expected at least one URL' }),
  /** Sent upstream as `apikey`; empty means none. */
  upstreamApiKey: optionalSecret,
  /** Deadline for the service's answer, ms; past it the client gets 504. */
  timeoutMs: positiveInt().default(10_000),
  /** Larger answers are refused (502, refunded, not cached). */
  maxResponseBytes: positiveInt().default(8 * 1024 * 1024),
  failover: failoverSchema,
});

export const chainSchema = z.strictObject({
  /** Display name, used in logs and metrics. */
  name: nonEmpty('a chain name'),
  /** The chain's stats service (`/{chain_id}/stats-service/api/v1/...`); without it those routes answer 404. */
  stats: serviceSchema.optional(),
  /**
   * Base URLs of the chain's explorers, preferred healthy and fast, the order breaking ties; a failed read is tried again on the next (failover).
   * `user:password@` in one is sent as Basic auth (upstream/client.ts); logs, metrics and
   * /readyz name an upstream by its host only.
   */
  upstreams: z.array(upstreamUrl, { error: 'expected a list of URLs' }).min(1, { error: 'expected at least one URL' }),
  /** Sent upstream as `apikey`; empty means none. */
  upstreamApiKey: optionalSecret,
  /** Deadline for the upstream's answer (headers and body), ms; past it the client gets 504. */
  timeoutMs: positiveInt().default(10_000),
  /**
   * Larger answers are refused (502, refunded, not cached): a buffered answer, a cache entry and
   * a coalesced answer are held in memory. Blockscout pages at 50 items; 8 MiB is far above them.
   */
  maxResponseBytes: positiveInt().default(8 * 1024 * 1024),
  /**
   * The chain's head is read from the answers the gateway forwards; when none has shown it for
   * `pollSeconds`, one `eth_blockNumber` call to the chain's explorer (counted in
   * egw_head_polls_total, billed to no key) asks. 0: never polled.
   */
  head: z.strictObject({ pollSeconds: nonNegativeInt().default(5) }).default({ pollSeconds: 5 }),
  /**
   * Blocks behind the head after which the chain's data is final: answers about them are kept
   * for cache.finalTtlSeconds. Default: the chain id's known figure, else 1024 (finality/depth.ts).
   */
  finality: z.strictObject({ depth: nonNegativeInt().optional() }).default({}),
  failover: failoverSchema,
});

export const clusterSchema = z.strictObject({
  /** Chain ids of `chains`, in the order results are merged. */
  chains: z
    .array(z.string({ error: 'expected a chain id' }), { error: 'expected a list of chain ids' })
    .min(1, { error: 'expected at least one chain' }),
  /** How long a search waits for the chains' explorers; the chains that have not answered by then are named as missing. */
  timeoutMs: positiveInt().default(3_000),
});

export const planSchema = z.strictObject({
  /** Requests per second. */
  rps: positiveInt(),
  /** Credits per period. */
  credits: nonNegativeInt(),
  /** daily: resets 00:00 UTC; monthly: resets on the 1st, 00:00 UTC. */
  period: z.enum(['daily', 'monthly'], { error: 'expected daily or monthly' }).default('daily'),
});

const sha256Hex = z.string().regex(/^[0-9a-fA-F]{64}$/, { error: 'expected 64 hexadecimal characters' });

export const keySchema = z
  .strictObject({
    /** Label for logs and metrics; never the key itself. */
    name: nonEmpty('a key name'),
    /** The key in clear (usually from the environment); exactly one of key / sha256. */
    key: z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty key' }).optional(),
    /** sha256 hex digest of the key (`explorer-gateway hash-key KEY`). */
    sha256: sha256Hex.optional(),
    /** Name of a plan under `plans`. */
    plan: nonEmpty('a plan name'),
    /** unverified keys get 403 "Unverified email"; disabled keys 403. */
    status: z.enum(['active', 'unverified', 'disabled'], { error: 'expected active, unverified or disabled' }).default('active'),
    /** Allow-list of chain ids; absent = every chain. */
    chains: z.array(z.string({ error: 'expected a chain id string' })).optional(),
  })
  .refine((k) => (k.key === undefined) !== (k.sha256 === undefined), {
    error: 'expected exactly one of key or sha256',
  });

/** A map from route name to a number; names are checked against the route table in configSchema. */
const byRouteName = (what: string) => z.record(z.string(), nonNegativeInt(), { error: `expected a map of route name to ${what}` });

export const costsSchema = z.strictObject({
  /** Credits charged for a route that has no entry here and no cost of its own in the PRO API's table. */
  default: nonNegativeInt().default(20),
  /** Credits per route name; routes not listed cost the PRO API's price (routes/table.ts), else `default`. */
  routes: byRouteName('credits').default({}),
});

export const logSchema = z.strictObject({
  /** pino level. */
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'expected a pino level' }).default('info'),
  /** One JSON line per request; false turns them off. */
  requests: z.boolean({ error: 'expected true or false' }).default(true),
});

export const cacheSchema = z.strictObject({
  /** Budget of the in-process cache tier, bytes. */
  maxBytes: nonNegativeInt().default(134_217_728),
  /**
   * Freshness per route name, seconds; 0 = not cached. `legacy` covers every legacy action that
   * has no entry of its own. Routes not listed keep their family's default (routes/table.ts).
   */
  ttlSeconds: byRouteName('seconds').default({}),
  /** How long an expired entry may still be served while refreshing or when the upstream fails. */
  staleSeconds: nonNegativeInt().default(60),
  /**
   * How long an answer about data below its chain's finality line is kept (a block from last
   * year, a transaction a million blocks deep, a page of history below the line), seconds,
   * bounded by maxBytes like any entry; 0: every answer keeps its route's TTL.
   */
  finalTtlSeconds: nonNegativeInt().default(86_400),
});

export const metricsSchema = z.strictObject({
  /** Serve GET /metrics (Prometheus text format). */
  enabled: z.boolean({ error: 'expected true or false' }).default(true),
  /** Serve /metrics (and /healthz, /readyz) on this port instead of the main one. */
  port: port().optional(),
  /** Host for the metrics port. */
  host: nonEmpty('a host name or address').default('127.0.0.1'),
  /** Require `Authorization: Bearer <token>` on /metrics. */
  token: optionalSecret,
  /**
   * Label `egw_credits_spent_total` with the key's name as well as its plan: a series per key,
   * unbounded with many customers (https://prometheus.io/docs/practices/naming/#labels); false,
   * by plan only, and the usage store answers per key (`GET /admin/v1/usage`).
   */
  perKey: z.boolean({ error: 'expected true or false' }).default(false),
});

export const healthSchema = z.strictObject({
  /** How often each upstream is probed (TCP connect) for /readyz, ms. */
  probeIntervalMs: positiveInt().default(10_000),
  /** How long one probe may take, ms. */
  probeTimeoutMs: positiveInt().default(2_000),
});

export const adminSchema = z
  .strictObject({
    /**
     * Every admin call needs `Authorization: Bearer <token>`; absent (or empty), the admin API is
     * off. At least 16 characters: it guards every key and balance.
     */
    token: optionalSecret.refine((t) => t === undefined || t.length >= 16, { error: 'expected a token of at least 16 characters' }),
    /**
     * More tokens, each with a name (the actor of the audit entries of its writes) and a scope:
     * `read` calls only GET and keys:verify, `write` every call. `token` above is a write token
     * named `admin`. Any of them turns the admin API on.
     */
    tokens: z
      .array(
        z.strictObject({
          name: z.string({ error: 'expected a name' }).regex(/^[A-Za-z0-9_.@-]{1,64}$/, {
            error: 'expected 1 to 64 letters, digits, or . _ @ -',
          }),
          token: z.string({ error: 'expected a string' }).min(16, { error: 'expected a token of at least 16 characters' }),
          scope: z.enum(['read', 'write'], { error: 'expected read or write' }),
        }),
        { error: 'expected a list of {name, token, scope}' },
      )
      .default([])
      .superRefine((tokens, ctx) => {
        const names = new Set<string>();
        const secrets = new Set<string>();
        tokens.forEach((t, i) => {
          if (names.has(t.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `the name ${t.name} is used twice` });
          if (secrets.has(t.token)) ctx.addIssue({ code: 'custom', path: [i, 'token'], message: 'this token is used twice' });
          names.add(t.name);
          secrets.add(t.token);
        });
      }),
    /** The admin listener's own address: loopback by default, never the public listener. */
    host: nonEmpty('a host name or address').default('127.0.0.1'),
    /** Its port; 0 picks a free one. */
    port: port().default(9091),
  })
  .superRefine((admin, ctx) => {
    if (admin.token === undefined) return;
    admin.tokens.forEach((t, i) => {
      if (t.name === 'admin') ctx.addIssue({ code: 'custom', path: ['tokens', i, 'name'], message: "the name admin is admin.token's" });
      if (t.token === admin.token) ctx.addIssue({ code: 'custom', path: ['tokens', i, 'token'], message: 'this token is admin.token' });
    });
  });

/** One token of the admin API: its name (the audit's actor), its secret, its scope. */
export type AdminToken = z.output<typeof adminSchema>['tokens'][number];

/** Every admin token of the configuration, `admin.token` first as the write token named `admin`. */
export function adminTokens(admin: z.output<typeof adminSchema>): AdminToken[] {
  return [...(admin.token === undefined ? [] : [{ name: 'admin', token: admin.token, scope: 'write' as const }]), ...admin.tokens];
}

export const storageSchema = z.strictObject({
  /**
   * A PostgreSQL database (`postgres://...`) for run-time keys, audit and usage, shared by every
   * gateway host; without `redis`, also this host's spend and bought credits.
   */
  url: nonEmpty('a database URL')
    .refine((u) => /^postgres(ql)?:\/\//.test(u), { error: 'expected a postgres:// or postgresql:// URL' })
    .optional(),
  /** The PostgreSQL schema of the tables (`public` unless set): several gateways' records in one database. */
  schema: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, { error: 'expected a schema name: lower-case letters, digits and _, at most 63' })
    .optional(),
  /** The embedded store (SQLite) of a gateway with neither `url` nor `redis`: run-time keys, bought credits, spend, usage, audit. */
  path: nonEmpty('a file path').default('data/gateway.db'),
});

export const usageSchema = z.strictObject({
  /** Record one row per UTC day and one per UTC hour, key, account, chain and route (requests, credits, cache hits, refusals, errors). */
  enabled: z.boolean({ error: 'expected true or false' }).default(true),
  /** How long daily usage rows are kept, days. */
  retentionDays: positiveInt().default(400),
  /** How long hourly usage rows are kept, days (never longer than their day's row: `retentionDays`). */
  hourlyRetentionDays: positiveInt().default(35),
});

/**
 * A receiver of events (webhooks/): where they are POSTed, which ones, and the secret they are
 * signed with (auth/webhook-signature.ts). `name` is its id in deliveries: naming it keeps its
 * deliveries its own when the list is reordered (unnamed: `config-<n>`, by position).
 */
export const webhookSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'expected a name of letters, digits, _ . or -' })
    .refine((n) => n !== 'deliveries' && !n.startsWith('wh_'), { error: 'expected a name other than deliveries, not starting with wh_' })
    .optional(),
  url: httpUrl,
  events: z
    .array(z.enum(EVENT_PATTERNS as [string, ...string[]], { error: `expected one of ${EVENT_PATTERNS.join(', ')}` }), {
      error: 'expected a list of event types',
    })
    .min(1, { error: 'expected at least one event type' }),
  secret: z.string({ error: 'expected a whsec_ secret' }).superRefine((s, ctx) => {
    const key = secretKey(s);
    if (typeof key === 'string') ctx.addIssue({ code: 'custom', message: key });
  }),
});

export const rpcSchema = z.strictObject({
  /** Most calls one JSON-RPC batch may hold; a larger batch is refused whole (413). */
  maxBatch: positiveInt().max(10_000, { error: 'expected at most 10000' }).default(100),
  /**
   * Largest contract verification request (source code, Standard JSON input), bytes; larger is
   * refused (413) before anything reaches the explorer.
   */
  maxVerifyBytes: positiveInt().default(20 * 1024 * 1024),
  /**
   * Most of a POSTed legacy form read before a key is known, bytes: a request with no usable key
   * in its Authorization header or query may give it in the form (Etherscan-style clients do), so
   * this much is read to find the form's `apikey` (multipart: in the parts before the first file);
   * without one there it is refused (401) unread past this, and the connection closed. Only a
   * known key's request is read up to maxVerifyBytes. 256 KiB holds a raw transaction of
   * geth's 128 KiB pool limit in hex, which ethers' EtherscanProvider posts before its `apikey`.
   */
  maxKeylessBodyBytes: positiveInt().default(256 * 1024),
});

/**
 * Wrong keys from one client address (auth/bad-keys.ts): `failures` of them within
 * `windowSeconds` block the address for `blockSeconds` (429 with Retry-After), whatever key it
 * sends meanwhile. The address is the connection's (the server section has no trust-proxy
 * setting): behind a proxy every client shares the proxy's. `failures: 0` turns it off.
 */
export const badKeysSchema = z.strictObject({
  failures: nonNegativeInt('an integer 0-100 (0: off)').max(100, { error: 'expected an integer 0-100 (0: off)' }).default(20),
  windowSeconds: positiveInt().max(86_400, { error: 'expected at most 86400 (one day)' }).default(60),
  blockSeconds: positiveInt().max(86_400, { error: 'expected at most 86400 (one day)' }).default(300),
  /** Most addresses counted at once, and most blocked at once (each an LRU): the memory bound. */
  maxAddresses: positiveInt().max(1_000_000, { error: 'expected at most 1000000' }).default(10_000),
});

export const securitySchema = z.strictObject({
  badKeys: badKeysSchema.default({ failures: 20, windowSeconds: 60, blockSeconds: 300, maxAddresses: 10_000 }),
  /**
   * Webhooks may be sent to loopback, private, link-local, unspecified and carrier-grade NAT
   * addresses (webhooks/destination.ts): a receiver on the gateway's own network. Off, such a
   * URL is refused (configuration, admin API) and so is a delivery whose name resolves to one.
   */
  allowPrivateWebhooks: z.boolean({ error: 'expected true or false' }).default(false),
});

const chainId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'expected a chain id of letters, digits, _ or -' })
  .refine((id) => !RESERVED_CHAIN_IDS.has(id), {
    error: `expected a chain id other than ${[...RESERVED_CHAIN_IDS].join(' or ')} (the Etherscan-style /api and /v2/api paths, the services' /services/)`,
  });
const planName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'expected a plan name of letters, digits, _ . or -' });

export const configSchema = z
  .strictObject({
    server: serverSchema.default({
      host: '0.0.0.0',
      port: 8080,
      watchConfig: false,
      shutdownTimeoutMs: 10_000,
      workers: 1,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      cors: { origins: ['*'], maxAgeSeconds: 600 },
      trustProxy: false,
    }),
    redis: redisSchema.optional(),
    chains: z
      .record(chainId, chainSchema, { error: 'expected a map of chain id to chain' })
      .refine((c) => Object.keys(c).length > 0, { error: 'expected at least one chain' }),
    plans: z.record(planName, planSchema, { error: 'expected a map of plan name to plan' }),
    keys: z.array(keySchema, { error: 'expected a list of keys' }).default([]),
    costs: costsSchema.default({ default: 20, routes: {} }),
    log: logSchema.default({ level: 'info', requests: true }),
    cache: cacheSchema.default({ maxBytes: 134_217_728, ttlSeconds: {}, staleSeconds: 60, finalTtlSeconds: 86_400 }),
    metrics: metricsSchema.default({ enabled: true, host: '127.0.0.1', token: undefined, perKey: false }),
    health: healthSchema.default({ probeIntervalMs: 10_000, probeTimeoutMs: 2_000 }),
    admin: adminSchema.default({ token: undefined, tokens: [], host: '127.0.0.1', port: 9091 }),
    storage: storageSchema.default({ path: 'data/gateway.db' }),
    usage: usageSchema.default({ enabled: true, retentionDays: 400, hourlyRetentionDays: 35 }),
    webhooks: z.array(webhookSchema, { error: 'expected a list of webhooks' }).default([]),
    rpc: rpcSchema.default({ maxBatch: 100, maxVerifyBytes: 20 * 1024 * 1024, maxKeylessBodyBytes: 256 * 1024 }),
    /** The shared services under `/services/`; a route of one not configured answers 404 naming the setting. */
    services: z
      .strictObject({ bens: serviceSchema.optional(), metadata: serviceSchema.optional(), multichain: serviceSchema.optional() })
      .default({}),
    /**
     * Chains searched together by `/services/multichain/api/v1/clusters/{cluster_id}/...` when
     * `services.multichain` is not configured: the gateway asks each chain's explorer itself.
     */
    clusters: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'expected a cluster id of letters, digits, _ . or -' }), clusterSchema, {
        error: 'expected a map of cluster id to cluster',
      })
      .default({}),
    security: securitySchema.default({
      badKeys: { failures: 20, windowSeconds: 60, blockSeconds: 300, maxAddresses: 10_000 },
      allowPrivateWebhooks: false,
    }),
  })
  // Cross-references run even when other parts of the file are wrong, so that one run of
  // check-config lists every problem; the input may then be partly malformed.
  .superRefine(
    (c, ctx) => {
      const record = (v: unknown): Record<string, unknown> =>
        v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
      const chains = record(c.chains);
      const plans = record(c.plans);
      const routeNames = (section: 'costs' | 'cache', key: 'routes' | 'ttlSeconds', also: string[] = []) => {
        for (const name of Object.keys(record(record(c[section])[key]))) {
          if (KNOWN_ROUTES.has(name) || also.includes(name)) continue;
          const closest = closestRouteNames(name).map((n) => `"${n}"`);
          ctx.addIssue({
            code: 'custom',
            path: [section, key, name],
            message: `unknown route "${name}"; did you mean ${closest.join(', ')}?`,
          });
        }
      };
      routeNames('costs', 'routes');
      routeNames('cache', 'ttlSeconds', ['legacy']);
      const workers = record(c.server).workers;
      if ((workers === 'auto' || (typeof workers === 'number' && workers > 1)) && c.redis === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['server', 'workers'],
          message:
            'more than one worker needs redis: balances, rate windows and run-time keys kept in one process cannot be shared with the others',
        });
      }
      const server = record(c.server);
      if (typeof server.headersTimeoutMs === 'number' && typeof server.requestTimeoutMs === 'number') {
        if (server.headersTimeoutMs > server.requestTimeoutMs) {
          ctx.addIssue({
            code: 'custom',
            path: ['server', 'headersTimeoutMs'],
            message: `expected at most server.requestTimeoutMs (${server.requestTimeoutMs}): the headers are part of the request`,
          });
        }
      }
      const names = new Set<unknown>();
      (Array.isArray(c.keys) ? (c.keys as unknown[]) : []).forEach((raw, i) => {
        const k = record(raw);
        if (typeof k.plan === 'string' && c.plans !== undefined && !Object.hasOwn(plans, k.plan)) {
          ctx.addIssue({ code: 'custom', path: ['keys', i, 'plan'], message: `unknown plan "${k.plan}"` });
        }
        if (typeof k.name === 'string' && names.has(k.name)) {
          ctx.addIssue({ code: 'custom', path: ['keys', i, 'name'], message: `duplicate key name "${k.name}"` });
        }
        names.add(k.name);
        (Array.isArray(k.chains) ? (k.chains as unknown[]) : []).forEach((id, j) => {
          if (typeof id === 'string' && c.chains !== undefined && !Object.hasOwn(chains, id)) {
            ctx.addIssue({ code: 'custom', path: ['keys', i, 'chains', j], message: `unknown chain "${id}"` });
          }
        });
      });
      for (const [id, raw] of Object.entries(record(c.clusters))) {
        const members = record(raw).chains;
        const seen = new Set<unknown>();
        (Array.isArray(members) ? (members as unknown[]) : []).forEach((chain, j) => {
          if (typeof chain === 'string' && c.chains !== undefined && !Object.hasOwn(chains, chain)) {
            ctx.addIssue({ code: 'custom', path: ['clusters', id, 'chains', j], message: `unknown chain "${chain}"` });
          }
          if (seen.has(chain))
            ctx.addIssue({ code: 'custom', path: ['clusters', id, 'chains', j], message: `chain "${String(chain)}" is listed twice` });
          seen.add(chain);
        });
      }
      // A webhook's id in deliveries is its name, or its place in the list (registry: config-<n>).
      const hookIds = new Set<string>();
      (Array.isArray(c.webhooks) ? (c.webhooks as unknown[]) : []).forEach((raw, i) => {
        const name = record(raw).name;
        const id = typeof name === 'string' ? name : `config-${i + 1}`;
        if (hookIds.has(id)) ctx.addIssue({ code: 'custom', path: ['webhooks', i, 'name'], message: `the webhook id ${id} is used twice` });
        hookIds.add(id);
        // Loopback, private and link-local receivers only when the operator says so (auth/webhook-destination.ts).
        const url = record(raw).url;
        const refused = typeof url === 'string' && record(c.security).allowPrivateWebhooks !== true ? urlRefusal(url) : undefined;
        if (refused !== undefined) ctx.addIssue({ code: 'custom', path: ['webhooks', i, 'url'], message: refused });
      });
    },
    { when: (payload) => payload.value !== null && typeof payload.value === 'object' },
  );

/** The configuration as the YAML file gives it (before defaults). */
export type ConfigInput = z.input<typeof configSchema>;
/** The configuration after validation, defaults filled in. */
export type Config = z.output<typeof configSchema>;
export type ChainConfig = z.output<typeof chainSchema>;
export type ServiceConfig = z.output<typeof serviceSchema>;
export type FailoverConfig = z.output<typeof failoverSchema>;
export type ClusterConfig = z.output<typeof clusterSchema>;
export type PlanConfig = z.output<typeof planSchema>;
export type KeyConfig = z.output<typeof keySchema>;
export type RedisConfig = z.output<typeof redisSchema>;
export type AdminConfig = z.output<typeof adminSchema>;
export type RpcConfig = z.output<typeof rpcSchema>;
