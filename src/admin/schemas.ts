// What each admin call accepts, as zod schemas: the routes parse with them (validate.ts turns a
// failure into a 4xx naming every field), the service takes what they produce. What each call
// answers, as zod schemas too: the admin API's OpenAPI document (openapi.ts) is made of both, and
// the tests check real answers against it.
import { z } from 'zod';
import { MAX_WILDCARDS, META_MAX_BYTES, normaliseOrigin, parseNetwork } from '../keys/terms.js';
import { pageParams, prefixParam, searchParams } from './listing.js';

const name = z.string().trim().min(1, { error: 'expected a non-empty name' }).max(128, { error: 'expected at most 128 characters' });
const owner = z.string().trim().min(1).max(128).nullable();
const chains = z
  .array(z.string().min(1), { error: 'expected a list of chain ids' })
  .min(1, { error: 'expected at least one chain id' })
  .nullable();
/** An ISO 8601 date (`2027-01-01`, the start of that UTC day) or date-time, or null: never. */
const expiresAt = z
  .string()
  .nullable()
  .meta({ description: 'ISO 8601 date (`2027-01-01`: 00:00 UTC of that day) or date-time with its offset; null: never expires' });

const count = (what: string, min: number, max: number) =>
  z
    .number({ error: `expected ${what}` })
    .int({ error: `expected ${what}` })
    .min(min, { error: `expected ${what}` })
    .max(max, { error: `expected at most ${max}` });

/** A deal of the key's own: each field over its plan's; null (or absent) keeps the plan's. */
const limits = z
  .strictObject({
    rps: count('a positive integer', 1, 1_000_000).nullable().optional(),
    credits: count('a non-negative integer', 0, 1e15).nullable().optional(),
    period: z.enum(['daily', 'monthly'], { error: 'expected daily or monthly' }).nullable().optional(),
    costs: z
      .record(z.string().min(1), count('a non-negative integer', 0, 1_000_000), { error: 'expected a map of route name to credits' })
      .nullable()
      .optional()
      .meta({ description: 'credits per route name, over `costs.routes` of the configuration' }),
  })
  .nullable()
  .meta({ description: "the key's own rps, credits, period and route costs over its plan's; null: the plan's" });

const list = (item: z.ZodType<string>, what: string) =>
  z
    .array(item, { error: `expected a list of ${what}` })
    .min(1, { error: `expected at least one ${what.replace(/s$/, '')}; null lifts the restriction` })
    .max(100, { error: 'expected at most 100 entries' })
    .nullable();

const routes = list(
  z
    .string()
    .min(1)
    .max(200)
    // Each `*` is a `.*` of the pattern's regular expression (keys/terms.ts): a few keep matching
    // linear in practice, many would let one pattern backtrack for long.
    .refine((p) => p.split('*').length - 1 <= MAX_WILDCARDS, { error: `expected at most ${MAX_WILDCARDS} * in a pattern` }),
  'route names or patterns',
).meta({
  description: 'the routes the key may call: names or patterns (`tokens/*`, `legacy.account.*`, `rpc.eth_*`); null: every route',
});
const ips = list(
  z.string().refine((s) => parseNetwork(s) !== undefined, { error: 'expected an IP address or CIDR block' }),
  'addresses or CIDR blocks',
).meta({ description: 'the client networks the key may be used from (`server.trustProxy` decides the address); null: any' });
const origins = list(
  z.string().refine((s) => normaliseOrigin(s) !== undefined, { error: 'expected an origin, scheme://host[:port]' }),
  'origins',
).meta({ description: 'the browser origins (`Origin`) the key may be used from; null: any' });
const meta = z
  .record(z.string(), z.unknown(), { error: 'expected a JSON object' })
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= META_MAX_BYTES, { error: `expected at most ${META_MAX_BYTES} bytes of JSON` })
  .nullable()
  .meta({ description: `the operator's own JSON about the key, at most ${META_MAX_BYTES} bytes; null: none` });

/** What a key may carry beyond its plan (store/types.ts KeyTerms), on create and change. */
const accountRef = z
  .string({ error: 'expected an account id' })
  .min(1)
  .nullable()
  .meta({ description: "the account (`acc_...`) whose plan, limits, credits and rate the key shares; null: the key's own" });

const terms = {
  limits: limits.optional(),
  routes: routes.optional(),
  ips: ips.optional(),
  origins: origins.optional(),
  meta: meta.optional(),
  account: accountRef.optional(),
};
export type TermsInput = {
  account?: string | null | undefined;
  limits?: z.output<typeof limits> | undefined;
  routes?: string[] | null | undefined;
  ips?: string[] | null | undefined;
  origins?: string[] | null | undefined;
  meta?: Record<string, unknown> | null | undefined;
};

export const createKeyBody = z
  .strictObject({
    name,
    plan: z.string().min(1).optional().meta({ description: "the key's plan; with `account`, the account's by default" }),
    owner: owner.optional(),
    chains: chains.optional(),
    expiresAt: expiresAt.optional(),
    ...terms,
  })
  .refine((b) => b.plan !== undefined || (b.account ?? null) !== null, { error: 'expected a plan, or an account', path: ['plan'] });
export type CreateKeyInput = z.output<typeof createKeyBody>;

export const updateKeyBody = z
  .strictObject({
    name: name.optional(),
    plan: z.string().min(1).optional(),
    owner: owner.optional(),
    chains: chains.optional(),
    expiresAt: expiresAt.optional(),
    status: z.enum(['active', 'disabled'], { error: 'expected active or disabled' }).optional(),
    ...terms,
  })
  .refine((b) => Object.keys(b).length > 0, {
    error: 'expected at least one of name, plan, owner, chains, expiresAt, status, limits, routes, ips, origins, meta',
  })
  // The refinement above, as JSON Schema says it (zod cannot translate a refinement).
  .meta({ minProperties: 1 });
export type UpdateKeyInput = z.output<typeof updateKeyBody>;

const credits = (min: number) =>
  z
    .number({ error: 'expected an integer' })
    .int({ error: 'expected an integer' })
    .min(min, { error: min === 0 ? 'expected a non-negative integer' : `expected at least ${min}` })
    .max(1e15, { error: 'expected at most 10^15' });

/**
 * Bought credits: added (`amount` > 0), taken away (`amount` < 0, a correction or a refund to
 * the customer), or set (`set`, "the bought balance is N"); never below zero. A correction
 * carries its `reason`, kept in the audit entry.
 */
export const creditsBody = z
  .strictObject({
    amount: credits(-1e15)
      .refine((n) => n !== 0, { error: 'expected a non-zero integer' })
      .optional()
      .meta({ description: 'credits to add; negative: to take away (needs `reason`)' }),
    set: credits(0).optional().meta({ description: 'the bought credits to have from now on (needs `reason`)' }),
    reason: z
      .string({ error: 'expected a string' })
      .trim()
      .min(1, { error: 'expected a non-empty reason' })
      .max(500, { error: 'expected at most 500 characters' })
      .optional()
      .meta({ description: 'why: kept in the audit entry; needed to take credits away or to set them' }),
  })
  .superRefine((b, ctx) => {
    if ((b.amount === undefined) === (b.set === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['amount'], message: 'expected one of amount and set' });
    } else if (b.reason === undefined && (b.set !== undefined || (b.amount ?? 0) < 0)) {
      ctx.addIssue({ code: 'custom', path: ['reason'], message: 'expected a reason for taking credits away or setting them' });
    }
  });
export type CreditsInput = z.output<typeof creditsBody>;

/** A key's secret to check (POST /keys:verify): as a client sends it. */
export const verifyKeyBody = z.strictObject({
  key: z
    .string({ error: 'expected a string' })
    .min(1, { error: 'expected a non-empty key' })
    .max(1024, { error: 'expected at most 1024 characters' }),
});

/** What a key would get from the gateway now, and why (Unkey's verifyKey codes where they match). */
export const VERIFY_CODES = ['VALID', 'NOT_FOUND', 'PLAN_MISSING', 'UNVERIFIED', 'DISABLED', 'EXPIRED', 'USAGE_EXCEEDED'] as const;
export type VerifyCode = (typeof VERIFY_CODES)[number];

/** A grace of at most 30 days: a leaked secret must not keep working for long. */
export const rollBody = z.strictObject({
  graceSeconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .optional(),
});

const described = (description: string) => z.string().optional().meta({ description });

/** A page of keys (listing.ts): sorted by id, cut at `cursor`, searched by the fields given (all of them). */
export const listKeysQuery = z.strictObject({
  ...pageParams,
  ...searchParams,
  prefix: prefixParam,
  owner: described('only the keys of this owner'),
  plan: described('only the keys on this plan'),
  status: z
    .enum(['active', 'disabled', 'unverified', 'revoked'], { error: 'expected active, disabled, unverified or revoked' })
    .optional()
    .meta({ description: 'only the keys of this status; `revoked`: the revoked keys as they were, from the audit trail' }),
});
export type ListKeysInput = z.output<typeof listKeysQuery>;

const instantParam = (end: string) => described(`ISO 8601 date or date-time (a date alone: ${end} of that UTC day)`);

export const auditQuery = z.strictObject({
  from: instantParam('the start'),
  to: instantParam('the end'),
  key: described('only the entries of this key id (or account id, or `plan:<name>`)'),
  account: described('only the entries of this account and of its keys'),
});
export type AuditInput = z.output<typeof auditQuery>;

const dayParam = described('a UTC day, YYYY-MM-DD; default today');

export const usageQuery = z.strictObject({
  from: dayParam,
  to: dayParam,
  key: described('only the rows of this key id'),
  owner: described("only the rows of this owner's keys"),
  account: described(
    'only the rows counted under this account (`acc_...`): its keys while they were its, whichever account they are in now',
  ),
  chain: described('only the rows of this chain id'),
  route: described('only the rows of this route name'),
  granularity: z
    .enum(['day', 'hour'], { error: 'expected day or hour' })
    .optional()
    .meta({ description: 'a row per UTC day (default) or per UTC hour; `from` and `to` stay whole UTC days' }),
  format: z.enum(['json', 'csv'], { error: 'expected json or csv' }).optional(),
});
export type UsageInput = z.output<typeof usageQuery>;

/** The path parameter of the calls on one key: its id, as `GET /keys` lists it. */
export const keyIdParams = z.strictObject({ id: z.string().min(1).meta({ description: 'the key id (`id` in `GET /keys`)' }) });

// --- answers ---

/** An instant as the admin API writes it: `Date.prototype.toISOString`, UTC. */
const instant = z.string().meta({ format: 'date-time' });
/** A UTC day, `YYYY-MM-DD`. */
const day = z.string().meta({ format: 'date' });

/** What the admin API shows of a key (service.ts keyView): never its secret or digest. */
export const keyAnswer = z.strictObject({
  id: z.string(),
  name: z.string(),
  plan: z.string(),
  owner: z.string().nullable(),
  chains: z.array(z.string()).nullable().meta({ description: 'the chains the key may use; null: all' }),
  status: z.enum(['active', 'disabled', 'unverified']),
  expiresAt: instant.nullable(),
  createdAt: instant.nullable().meta({ description: 'null for a configured key' }),
  prefix: z.string().nullable().meta({ description: 'the first characters of the secret and an ellipsis; null for a configured key' }),
  source: z.enum(['runtime', 'config']).meta({ description: 'config: from the configuration file, read-only here' }),
  limits: z
    .strictObject({
      rps: z.number().nullable(),
      credits: z.number().nullable(),
      period: z.enum(['daily', 'monthly']).nullable(),
      costs: z.record(z.string(), z.number()).nullable(),
    })
    .nullable()
    .meta({ description: "the key's own deal over its plan (null fields: the plan's); null: none" }),
  effective: z
    .strictObject({ rps: z.number(), credits: z.number(), period: z.enum(['daily', 'monthly']) })
    .nullable()
    .meta({ description: "what the key gets: its plan's with its own limits over them; null when its plan is not configured" }),
  routes: z.array(z.string()).nullable(),
  ips: z.array(z.string()).nullable(),
  origins: z.array(z.string()).nullable(),
  meta: z.record(z.string(), z.unknown()).nullable(),
  account: z.string().nullable().meta({ description: 'the account whose plan, limits, credits and rate the key shares; null: its own' }),
});

const secret = z.string().meta({ description: 'the secret, `egw_` and 43 base-62 characters: in this answer only' });

export const createdKeyAnswer = keyAnswer.extend({ key: secret });

export const rolledKeyAnswer = keyAnswer.extend({
  key: secret,
  previousValidUntil: instant.nullable().meta({ description: 'until when the replaced secret is still accepted; null: refused at once' }),
});

export const keyWithCreditsAnswer = keyAnswer.extend({
  credits: z
    .strictObject({
      remaining: z.number().meta({ description: "the period's allowance left plus bought credits" }),
      spent: z.number(),
      topup: z.number().meta({ description: 'bought credits left' }),
      resetsAt: instant,
    })
    .nullable()
    .meta({ description: "this period's balance; null when the key's plan is not configured" }),
});

/** A page of keys: each with its balance as `GET /keys/{id}` shows it; a revoked key as it was, without one. */
export const keyListAnswer = z.strictObject({
  items: z.array(
    keyWithCreditsAnswer.extend({
      status: z.enum(['active', 'disabled', 'unverified', 'revoked']),
      credits: keyWithCreditsAnswer.shape.credits.meta({
        description: "this period's balance; null for a revoked key or one whose plan is not configured",
      }),
    }),
  ),
  nextCursor: z.string().nullable().meta({ description: 'the `cursor` of the next page; null: this page is the last' }),
});

export const verifyKeyAnswer = z.strictObject({
  valid: z.boolean().meta({ description: 'true: the key would be served now (code VALID)' }),
  code: z.enum(VERIFY_CODES).meta({
    description:
      'NOT_FOUND: unknown, revoked, or rolled past its grace (401 at the gateway); UNVERIFIED, DISABLED, EXPIRED: 403; USAGE_EXCEEDED: no credits left (402); VALID otherwise',
  }),
  key: keyWithCreditsAnswer.nullable().meta({ description: 'the key and its balance; null when NOT_FOUND' }),
});

export const creditsAnswer = z.strictObject({
  id: z.string(),
  added: z.number().meta({ description: 'the change made to bought credits: negative when some were taken away' }),
  topup: z.number().meta({ description: 'bought credits left' }),
  remaining: z.number().meta({ description: "the period's allowance left plus bought credits" }),
  reason: z.string().nullable(),
});

export const revokedAnswer = z.strictObject({ id: z.string(), revoked: z.literal(true) });

export const auditEntryAnswer = z.strictObject({
  at: instant,
  action: z.enum(['create', 'update', 'credits', 'roll', 'revoke', 'delete']),
  actor: z
    .string()
    .nullable()
    .meta({ description: 'the name of the admin token that made the write (`admin` for admin.token); null before names were kept' }),
  keyId: z.string().meta({ description: 'what was written: a key id, an account id (`acc_...`), or `plan:<name>`' }),
  before: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the public fields before the write' }),
  after: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the public fields after the write' }),
});

export const auditAnswer = z.strictObject({ items: z.array(auditEntryAnswer) });

export const usageItemAnswer = z.strictObject({
  day,
  hour: z
    .string()
    .optional()
    .meta({ format: 'date-time', description: 'hourly rows only (`granularity=hour`): the UTC hour, `YYYY-MM-DDTHH:00:00Z`' }),
  key: z.string(),
  name: z.string().nullable(),
  account: z.string().meta({ description: "the account (`acc_...`) the key was in when the row was counted; '' for none" }),
  chain: z.string(),
  route: z.string(),
  requests: z.number().int(),
  credits: z.number().int().meta({ description: 'billed, refunds taken off' }),
  cacheHits: z.number().int(),
  refused: z.number().int().meta({ description: '402, 403 and 429: counted, not billed; rateLimited + outOfCredits + forbidden' }),
  rateLimited: z.number().int().meta({ description: "429: refused by the key's rate" }),
  outOfCredits: z.number().int().meta({ description: '402: refused for want of credits' }),
  forbidden: z.number().int().meta({ description: "403: refused by the key's status or restrictions (chains, routes, ips, origins)" }),
  clientErrors: z.number().int().meta({
    description:
      'any other 4xx answered to the key (400, 413, 422, 499 for a client gone, an upstream 404): billed only for an upstream 404',
  }),
  errors: z.number().int().meta({ description: '5xx: refunded' }),
});

export const usageAnswer = z.strictObject({ items: z.array(usageItemAnswer) });

const planFields = {
  rps: count('a positive integer', 1, 1_000_000),
  credits: count('a non-negative integer', 0, 1e15),
  period: z.enum(['daily', 'monthly'], { error: 'expected daily or monthly' }),
};

/** A plan made at run time; a configured (YAML) plan's name is taken. */
export const createPlanBody = z.strictObject({
  name: z.string({ error: 'expected a name' }).regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'expected 1 to 64 letters, digits, or . _ -' }),
  ...planFields,
  period: planFields.period.default('daily'),
});
export type CreatePlanInput = z.output<typeof createPlanBody>;

export const updatePlanBody = z
  .strictObject({ rps: planFields.rps.optional(), credits: planFields.credits.optional(), period: planFields.period.optional() })
  .refine((b) => Object.keys(b).length > 0, { error: 'expected at least one of rps, credits, period' })
  .meta({ minProperties: 1 });
export type UpdatePlanInput = z.output<typeof updatePlanBody>;

export const planParams = z.strictObject({ name: z.string().min(1).meta({ description: 'the plan name' }) });

export const planAnswer = z.strictObject({
  name: z.string(),
  rps: z.number().int(),
  credits: z.number().int(),
  period: z.enum(['daily', 'monthly']),
  source: z.enum(['config', 'runtime']).meta({ description: 'config: from the configuration file, read-only here' }),
});

export const plansAnswer = z.strictObject({ items: z.array(planAnswer) });

/** An account (Unkey's identity): keys that share its plan, limits, credits and rate. */
export const createAccountBody = z.strictObject({ name, plan: z.string().min(1), limits: limits.optional(), meta: meta.optional() });
export type CreateAccountInput = z.output<typeof createAccountBody>;

export const updateAccountBody = z
  .strictObject({ name: name.optional(), plan: z.string().min(1).optional(), limits: limits.optional(), meta: meta.optional() })
  .refine((b) => Object.keys(b).length > 0, { error: 'expected at least one of name, plan, limits, meta' })
  .meta({ minProperties: 1 });
export type UpdateAccountInput = z.output<typeof updateAccountBody>;

export const accountParams = z.strictObject({ id: z.string().min(1).meta({ description: 'the account id (`acc_...`)' }) });

export const accountAnswer = z.strictObject({
  id: z.string(),
  name: z.string(),
  plan: z.string(),
  limits: keyAnswer.shape.limits,
  effective: keyAnswer.shape.effective,
  meta: z.record(z.string(), z.unknown()).nullable(),
  createdAt: instant,
  keys: z.array(z.string()).meta({ description: 'the ids of its keys' }),
});

export const accountWithCreditsAnswer = accountAnswer.extend({ credits: keyWithCreditsAnswer.shape.credits });

export const accountListAnswer = z.strictObject({
  items: z.array(accountAnswer),
  nextCursor: z.string().nullable().meta({ description: 'the `cursor` of the next page; null on the last' }),
});

export const listAccountsQuery = z.strictObject({
  ...pageParams,
  ...searchParams,
  plan: z.string().optional().meta({ description: 'only the accounts on this plan' }),
});
export type ListAccountsInput = z.output<typeof listAccountsQuery>;

export const deletedPlanAnswer = z.strictObject({ name: z.string(), deleted: z.literal(true) });
export const deletedAccountAnswer = z.strictObject({ id: z.string(), deleted: z.literal(true) });

/** Every refusal: `{message}` and, for some codes, more (errors.ts). */
export const errorAnswer = z.strictObject({
  message: z.string(),
  errors: z
    .array(z.strictObject({ field: z.string(), message: z.string() }))
    .optional()
    .meta({ description: 'INVALID_BODY and INVALID_QUERY: every problem, by field' }),
  plans: z.array(z.string()).optional().meta({ description: 'UNKNOWN_PLAN: the plans there are' }),
  available: z.number().optional().meta({ description: 'CREDITS_BELOW_ZERO: the bought credits a correction may take away' }),
  keys: z.array(z.string()).optional().meta({ description: 'PLAN_IN_USE, ACCOUNT_IN_USE: the keys in the way' }),
  accounts: z.array(z.string()).optional().meta({ description: 'PLAN_IN_USE: the accounts in the way' }),
});

/** The OpenAPI document itself (openapi.ts). */
export const openApiAnswer = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.record(z.string(), z.unknown()) });
