// What each admin call accepts, as zod schemas: the routes parse with them (validate.ts turns a
// failure into a 4xx naming every field), the service takes what they produce. What each call
// answers, as zod schemas too: the admin API's OpenAPI document (openapi.ts) is made of both, and
// the tests check real answers against it.
import { z } from 'zod';

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

export const createKeyBody = z.strictObject({
  name,
  plan: z.string().min(1),
  owner: owner.optional(),
  chains: chains.optional(),
  expiresAt: expiresAt.optional(),
});
export type CreateKeyInput = z.output<typeof createKeyBody>;

export const updateKeyBody = z
  .strictObject({
    name: name.optional(),
    plan: z.string().min(1).optional(),
    owner: owner.optional(),
    chains: chains.optional(),
    expiresAt: expiresAt.optional(),
    status: z.enum(['active', 'disabled'], { error: 'expected active or disabled' }).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { error: 'expected at least one of name, plan, owner, chains, expiresAt, status' })
  // The refinement above, as JSON Schema says it (zod cannot translate a refinement).
  .meta({ minProperties: 1 });
export type UpdateKeyInput = z.output<typeof updateKeyBody>;

export const creditsBody = z.strictObject({
  amount: z
    .number({ error: 'expected a positive integer' })
    .int({ error: 'expected a positive integer' })
    .positive({ error: 'expected a positive integer' })
    .max(1e15, { error: 'expected at most 10^15' }),
});

/** A key's secret to check (POST /keys:verify): as a client sends it. */
export const verifyKeyBody = z.strictObject({
  key: z
    .string({ error: 'expected a string' })
    .min(1, { error: 'expected a non-empty key' })
    .max(1024, { error: 'expected at most 1024 characters' }),
});

/** What a key would get from the gateway now, and why (Unkey's verifyKey codes where they match). */
export const VERIFY_CODES = ['VALID', 'NOT_FOUND', 'UNVERIFIED', 'DISABLED', 'EXPIRED', 'USAGE_EXCEEDED'] as const;
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

export const listKeysQuery = z.strictObject({
  owner: described('only the keys of this owner'),
  plan: described('only the keys on this plan'),
  status: z.enum(['active', 'disabled', 'unverified']).optional(),
});
export type ListKeysInput = z.output<typeof listKeysQuery>;

const instantParam = (end: string) => described(`ISO 8601 date or date-time (a date alone: ${end} of that UTC day)`);

export const auditQuery = z.strictObject({
  from: instantParam('the start'),
  to: instantParam('the end'),
  key: described('only the entries of this key id'),
});
export type AuditInput = z.output<typeof auditQuery>;

const dayParam = described('a UTC day, YYYY-MM-DD; default today');

export const usageQuery = z.strictObject({
  from: dayParam,
  to: dayParam,
  key: described('only the rows of this key id'),
  owner: described("only the rows of this owner's keys"),
  chain: described('only the rows of this chain id'),
  route: described('only the rows of this route name'),
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
});

const secret = z.string().meta({ description: 'the secret, `egw_` and 43 base-62 characters: in this answer only' });

export const createdKeyAnswer = keyAnswer.extend({ key: secret });

export const rolledKeyAnswer = keyAnswer.extend({
  key: secret,
  previousValidUntil: instant.nullable().meta({ description: 'until when the replaced secret is still accepted; null: refused at once' }),
});

export const keyListAnswer = z.strictObject({ items: z.array(keyAnswer) });

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

export const verifyKeyAnswer = z.strictObject({
  valid: z.boolean().meta({ description: 'true: the key would be served now (code VALID)' }),
  code: z.enum(VERIFY_CODES).meta({
    description:
      'NOT_FOUND: unknown, revoked, or rolled past its grace (401 at the gateway); UNVERIFIED, DISABLED, EXPIRED: 403; USAGE_EXCEEDED: no credits left (402); VALID otherwise',
  }),
  key: keyWithCreditsAnswer.nullable().meta({ description: 'the key and its balance; null when NOT_FOUND' }),
});

export const creditsAnswer = z.strictObject({ id: z.string(), added: z.number(), topup: z.number(), remaining: z.number() });

export const revokedAnswer = z.strictObject({ id: z.string(), revoked: z.literal(true) });

export const auditEntryAnswer = z.strictObject({
  at: instant,
  action: z.enum(['create', 'update', 'credits', 'roll', 'revoke']),
  keyId: z.string(),
  before: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the public fields before the write' }),
  after: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the public fields after the write' }),
});

export const auditAnswer = z.strictObject({ items: z.array(auditEntryAnswer) });

export const usageItemAnswer = z.strictObject({
  day,
  key: z.string(),
  name: z.string().nullable(),
  chain: z.string(),
  route: z.string(),
  requests: z.number().int(),
  credits: z.number().int().meta({ description: 'billed, refunds taken off' }),
  cacheHits: z.number().int(),
  refused: z.number().int().meta({ description: '402, 403 and 429: counted, not billed' }),
  errors: z.number().int().meta({ description: '5xx: refunded' }),
});

export const usageAnswer = z.strictObject({ items: z.array(usageItemAnswer) });

export const plansAnswer = z.strictObject({
  items: z.array(
    z.strictObject({ name: z.string(), rps: z.number().int(), credits: z.number().int(), period: z.enum(['daily', 'monthly']) }),
  ),
});

/** Every refusal: `{message}` and, for some codes, more (errors.ts). */
export const errorAnswer = z.strictObject({
  message: z.string(),
  errors: z
    .array(z.strictObject({ field: z.string(), message: z.string() }))
    .optional()
    .meta({ description: 'INVALID_BODY and INVALID_QUERY: every problem, by field' }),
  plans: z.array(z.string()).optional().meta({ description: 'UNKNOWN_PLAN: the plans there are' }),
});

/** The OpenAPI document itself (openapi.ts). */
export const openApiAnswer = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.record(z.string(), z.unknown()) });
