// What each admin call accepts, as zod schemas: the routes parse with them (validate.ts turns a
// failure into a 4xx naming every field), the service takes what they produce.
import { z } from 'zod';

const name = z.string().trim().min(1, { error: 'expected a non-empty name' }).max(128, { error: 'expected at most 128 characters' });
const owner = z.string().trim().min(1).max(128).nullable();
const chains = z
  .array(z.string().min(1), { error: 'expected a list of chain ids' })
  .min(1, { error: 'expected at least one chain id' })
  .nullable();
/** An ISO 8601 date (`2027-01-01`, the start of that UTC day) or date-time, or null: never. */
const expiresAt = z.string().nullable();

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
  .refine((b) => Object.keys(b).length > 0, { error: 'expected at least one of name, plan, owner, chains, expiresAt, status' });
export type UpdateKeyInput = z.output<typeof updateKeyBody>;

export const creditsBody = z.strictObject({
  amount: z
    .number({ error: 'expected a positive integer' })
    .int({ error: 'expected a positive integer' })
    .positive({ error: 'expected a positive integer' })
    .max(1e15, { error: 'expected at most 10^15' }),
});

/** A grace of at most 30 days: a leaked secret must not keep working for long. */
export const rollBody = z.strictObject({
  graceSeconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .optional(),
});

export const listKeysQuery = z.strictObject({
  owner: z.string().optional(),
  plan: z.string().optional(),
  status: z.enum(['active', 'disabled', 'unverified']).optional(),
});
export type ListKeysInput = z.output<typeof listKeysQuery>;

export const auditQuery = z.strictObject({ from: z.string().optional(), to: z.string().optional(), key: z.string().optional() });
export type AuditInput = z.output<typeof auditQuery>;

export const usageQuery = z.strictObject({
  from: z.string().optional(),
  to: z.string().optional(),
  key: z.string().optional(),
  owner: z.string().optional(),
  chain: z.string().optional(),
  route: z.string().optional(),
  format: z.enum(['json', 'csv'], { error: 'expected json or csv' }).optional(),
});
export type UsageInput = z.output<typeof usageQuery>;
