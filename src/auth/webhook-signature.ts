// Signed deliveries, as Standard Webhooks specifies them
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
// "Signature scheme"): HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the
// base64 bytes of a `whsec_` secret, sent as `webhook-signature: v1,<base64>` beside
// `webhook-id` and `webhook-timestamp` (unix seconds). A receiver checks the timestamp is recent
// and the signature with any Standard Webhooks library (the `standardwebhooks` npm package, which
// the tests use), as with Svix's; Stripe signs the same timestamp-and-body pair.
import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** The spec's bounds on a secret's random bytes. */
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

/** A new secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a secret, or why it is not one. */
export function secretKey(secret: string): Buffer | string {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return `expected a secret starting with ${WEBHOOK_SECRET_PREFIX}`;
  const b64 = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return `expected base64 after ${WEBHOOK_SECRET_PREFIX}`;
  const key = Buffer.from(b64, 'base64');
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    return `expected ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes of base64 after ${WEBHOOK_SECRET_PREFIX} (found ${key.length})`;
  }
  return key;
}

/** The three headers of a delivery attempt. */
export function signatureHeaders(key: Buffer, msgId: string, timestampSeconds: number, body: string): Record<string, string> {
  const signature = createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': msgId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
}
