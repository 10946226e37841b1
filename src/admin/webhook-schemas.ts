// What the /admin/v1/webhooks calls accept and answer (issue 25, item 6), beside schemas.ts.
import { z } from 'zod';
import { secretKey } from '../auth/webhook-signature.js';
import { EVENT_PATTERNS } from '../config/webhooks.js';

const url = z
  .string({ error: 'expected an http(s) URL' })
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), { error: 'expected an http(s) URL' })
  .meta({ description: 'where events are POSTed' });
const events = z
  .array(z.enum(EVENT_PATTERNS as [string, ...string[]], { error: `expected one of ${EVENT_PATTERNS.join(', ')}` }), {
    error: 'expected a list of event types',
  })
  .min(1, { error: 'expected at least one event type' })
  .meta({ description: 'event types, `credits.*`, `key.*` or `*`' });
const secret = z
  .string({ error: 'expected a whsec_ secret' })
  .superRefine((s, ctx) => {
    const key = secretKey(s);
    if (typeof key === 'string') ctx.addIssue({ code: 'custom', message: key });
  })
  .meta({ description: '`whsec_` and 24 to 64 bytes of base64 (Standard Webhooks); absent: a new one, shown in the answer' });
const description = z.string().trim().max(200, { error: 'expected at most 200 characters' }).nullable();

export const createWebhookBody = z.strictObject({
  url,
  events,
  secret: secret.optional(),
  description: description.optional(),
  enabled: z.boolean({ error: 'expected true or false' }).default(true),
});
export type CreateWebhookInput = z.output<typeof createWebhookBody>;

export const updateWebhookBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    secret: secret.optional(),
    description: description.optional(),
    enabled: z.boolean({ error: 'expected true or false' }).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { error: 'expected at least one of url, events, secret, description, enabled' })
  .meta({ minProperties: 1 });
export type UpdateWebhookInput = z.output<typeof updateWebhookBody>;

export const webhookParams = z.strictObject({ id: z.string().min(1).meta({ description: 'the webhook id' }) });

export const webhookAnswer = z.strictObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  description: z.string().nullable(),
  source: z.enum(['config', 'runtime']).meta({ description: 'config: from the configuration file, read-only here' }),
  createdAt: z.string().nullable(),
});
export const createdWebhookAnswer = webhookAnswer.extend({
  secret: z.string().meta({ description: 'what receivers verify signatures with: shown in this answer only' }),
});
export const webhooksAnswer = z.strictObject({ items: z.array(webhookAnswer) });
export const deletedWebhookAnswer = z.strictObject({ id: z.string(), deleted: z.literal(true) });

const LIMIT_MESSAGE = 'expected an integer from 1 to 1000';
export const listDeliveriesQuery = z.strictObject({
  webhook: z.string().optional().meta({ description: 'only the deliveries to this webhook' }),
  status: z
    .enum(['pending', 'delivered', 'failed'], { error: 'expected pending, delivered or failed' })
    .optional()
    .meta({ description: 'only deliveries of this status' }),
  key: z.string().optional().meta({ description: 'only the events about this key id' }),
  type: z.string().optional().meta({ description: 'only events of this type' }),
  cursor: z.string().optional().meta({ description: '`nextCursor` of the page before; absent: the first page' }),
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int({ error: LIMIT_MESSAGE })
    .min(1, { error: LIMIT_MESSAGE })
    .max(1000, { error: LIMIT_MESSAGE })
    .optional()
    .meta({ description: 'at most this many items (default 100, at most 1000)' }),
});
export type ListDeliveriesInput = z.output<typeof listDeliveriesQuery>;

export const deliveryParams = z.strictObject({ id: z.string().min(1).meta({ description: 'the delivery id: `<event id>|<webhook id>`' }) });

const instant = z.string().nullable();
export const deliveryAnswer = z.strictObject({
  id: z.string(),
  eventId: z.string().meta({ description: 'what receivers get as `webhook-id`' }),
  type: z.string(),
  webhook: z.string(),
  keyId: z.string().nullable(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  createdAt: z.string(),
  nextAttemptAt: instant.meta({ description: 'pending: when it is tried next' }),
  lastAttemptAt: instant,
  lastStatus: z.number().int().nullable().meta({ description: "the receiver's HTTP status on the last attempt; null: no answer" }),
  lastError: z.string().nullable(),
  deliveredAt: instant,
  event: z.record(z.string(), z.unknown()).meta({ description: 'the body sent' }),
});
export const deliveriesAnswer = z.strictObject({ items: z.array(deliveryAnswer), nextCursor: z.string().nullable() });
