// The configuration schema: the single source of truth for the YAML file's shape, its types and
// its defaults (contract section 3). Unknown keys are errors everywhere (strict objects).
import { z } from 'zod';

export const ROUTE_NAMES = [
  'token-balances',
  'transactions',
  'legacy.getToken',
  'legacy.getTokenHolders',
  'legacy.bridgedTokenList',
] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

const positiveInt = (what = 'a positive integer') =>
  z.number({ error: `expected ${what}` }).int({ error: `expected ${what}` }).positive({ error: `expected ${what}` });
const nonNegativeInt = (what = 'a non-negative integer') =>
  z.number({ error: `expected ${what}` }).int({ error: `expected ${what}` }).min(0, { error: `expected ${what}` });
const nonEmpty = (what: string) => z.string({ error: `expected ${what}` }).min(1, { error: `expected ${what}` });

const httpUrl = z
  .string({ error: 'expected an http(s) URL' })
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { error: 'expected an http(s) URL' });

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

export const serverSchema = z.strictObject({
  /** Address to listen on. */
  host: nonEmpty('a host name or address').default('0.0.0.0'),
  /** TCP port; 0 picks a free one. */
  port: port().default(8080),
  /** Reload the configuration when the file changes (SIGHUP always reloads). */
  watchConfig: z.boolean({ error: 'expected true or false' }).default(false),
  /** On SIGTERM, how long requests in flight may take to finish before connections are cut, ms. */
  shutdownTimeoutMs: positiveInt().default(10_000),
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
    /** How long one Redis command may take before the store counts as failed, ms. */
    commandTimeoutMs: positiveInt().default(250),
  })
  .refine((r) => (r.url === undefined) !== (r.cluster === undefined), {
    error: 'expected exactly one of url or cluster',
  });

export const chainSchema = z.strictObject({
  /** Display name, used in logs and metrics. */
  name: nonEmpty('a chain name'),
  /** Base URLs of the chain's explorers, tried in order when a connection cannot be made. */
  upstreams: z.array(httpUrl, { error: 'expected a list of URLs' }).min(1, { error: 'expected at least one URL' }),
  /** Sent upstream as `apikey`; empty means none. */
  upstreamApiKey: optionalSecret,
  /** Deadline for the upstream's answer (headers and body), ms; past it the client gets 504. */
  timeoutMs: positiveInt().default(10_000),
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

const routeNameEnum = z.enum(ROUTE_NAMES);

export const costsSchema = z.strictObject({
  /** Credits charged for a route without its own entry. */
  default: nonNegativeInt().default(20),
  /** Credits per route name. */
  routes: z.partialRecord(routeNameEnum, nonNegativeInt(), { error: 'expected a map of route name to credits' }).default({}),
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
   * Freshness per route name, seconds; 0 = not cached. `legacy` covers the three legacy actions
   * unless one has its own entry. Routes not listed keep their default.
   */
  ttlSeconds: z
    .strictObject(
      {
        'token-balances': nonNegativeInt().default(15),
        transactions: nonNegativeInt().default(5),
        legacy: nonNegativeInt().default(30),
        'legacy.getToken': nonNegativeInt().optional(),
        'legacy.getTokenHolders': nonNegativeInt().optional(),
        'legacy.bridgedTokenList': nonNegativeInt().optional(),
      },
      { error: 'expected a map of route name to seconds' },
    )
    .default({ 'token-balances': 15, transactions: 5, legacy: 30 }),
  /** How long an expired entry may still be served while refreshing or when the upstream fails. */
  staleSeconds: nonNegativeInt().default(60),
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
});

export const healthSchema = z.strictObject({
  /** How often each upstream is probed (TCP connect) for /readyz, ms. */
  probeIntervalMs: positiveInt().default(10_000),
  /** How long one probe may take, ms. */
  probeTimeoutMs: positiveInt().default(2_000),
});

const chainId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'expected a chain id of letters, digits, _ or -' });
const planName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'expected a plan name of letters, digits, _ . or -' });

export const configSchema = z
  .strictObject({
    server: serverSchema.default({ host: '0.0.0.0', port: 8080, watchConfig: false, shutdownTimeoutMs: 10_000 }),
    redis: redisSchema.optional(),
    chains: z
      .record(chainId, chainSchema, { error: 'expected a map of chain id to chain' })
      .refine((c) => Object.keys(c).length > 0, { error: 'expected at least one chain' }),
    plans: z.record(planName, planSchema, { error: 'expected a map of plan name to plan' }),
    keys: z.array(keySchema, { error: 'expected a list of keys' }).default([]),
    costs: costsSchema.default({ default: 20, routes: {} }),
    log: logSchema.default({ level: 'info', requests: true }),
    cache: cacheSchema.default({
      maxBytes: 134_217_728,
      ttlSeconds: { 'token-balances': 15, transactions: 5, legacy: 30 },
      staleSeconds: 60,
    }),
    metrics: metricsSchema.default({ enabled: true, host: '127.0.0.1', token: undefined }),
    health: healthSchema.default({ probeIntervalMs: 10_000, probeTimeoutMs: 2_000 }),
  })
  // Cross-references run even when other parts of the file are wrong, so that one run of
  // check-config lists every problem; the input may then be partly malformed.
  .superRefine(
    (c, ctx) => {
      const record = (v: unknown): Record<string, unknown> =>
        v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
      const chains = record(c.chains);
      const plans = record(c.plans);
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
    },
    { when: (payload) => payload.value !== null && typeof payload.value === 'object' },
  );

/** The configuration as the YAML file gives it (before defaults). */
export type ConfigInput = z.input<typeof configSchema>;
/** The configuration after validation, defaults filled in. */
export type Config = z.output<typeof configSchema>;
export type ChainConfig = z.output<typeof chainSchema>;
export type PlanConfig = z.output<typeof planSchema>;
export type KeyConfig = z.output<typeof keySchema>;
export type RedisConfig = z.output<typeof redisSchema>;
