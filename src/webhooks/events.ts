// What a webhook is told (issue 25, item 6): five event types, each with an id that says what
// happened and when, so that the outbox stores one delivery per event and webhook however many
// processes saw it (store/outbox.ts). The body follows Standard Webhooks' payload shape
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
// `type`, `timestamp` (ISO 8601) and `data`.

import type { EventType } from '../config/webhooks.js';

export interface WebhookEvent {
  /** Unique per happening: `credits.threshold:<account>:<period>:80`, `key.created:<key id>`. */
  id: string;
  type: EventType;
  /** The key it is about ('' for none): deliveries can be listed by key. */
  keyId: string;
  /** When it happened, ms. */
  at: number;
  data: Record<string, unknown>;
}

/** Whether a subscription (EVENT_PATTERNS) covers an event type. */
export function subscribes(patterns: readonly string[], type: EventType): boolean {
  for (const p of patterns) {
    if (p === '*' || p === type) return true;
    if (p.endsWith('.*') && type.startsWith(p.slice(0, -1))) return true;
  }
  return false;
}

/** The JSON sent to every webhook that subscribes to the event: these bytes are signed. */
export function eventBody(e: WebhookEvent): string {
  return JSON.stringify({ id: e.id, type: e.type, timestamp: new Date(e.at).toISOString(), data: e.data });
}

/** The key an event is about, as every event's `data.key` shows it. */
export interface EventKey {
  id: string;
  name: string;
  plan: string;
  /** The selling account it belongs to, null for none. */
  account: string | null;
}

/** The thresholds told once per period, in % of the period's credits. */
export const THRESHOLDS = [80, 100] as const;

export function thresholdEvent(
  key: EventKey,
  counters: string,
  periodId: string,
  percent: number,
  at: number,
  figures: { credits: number; spent: number; remaining: number },
): WebhookEvent {
  return {
    id: `credits.threshold:${counters}:${periodId}:${percent}`,
    type: 'credits.threshold',
    keyId: key.id,
    at,
    data: { key, period: periodId, threshold: percent, ...figures },
  };
}

export function exhaustedEvent(key: EventKey, counters: string, periodId: string, at: number, remaining: number): WebhookEvent {
  return {
    id: `credits.exhausted:${counters}:${periodId}`,
    type: 'credits.exhausted',
    keyId: key.id,
    at,
    data: { key, period: periodId, remaining },
  };
}

/** Told 7 days and 1 day before a key expires. */
export const EXPIRY_NOTICES = [
  { name: '7d', beforeMs: 7 * 86_400_000 },
  { name: '1d', beforeMs: 86_400_000 },
] as const;

export function expiringEvent(key: EventKey, expiresAt: number, notice: string, at: number): WebhookEvent {
  return {
    id: `key.expiring:${key.id}:${expiresAt}:${notice}`,
    type: 'key.expiring',
    keyId: key.id,
    at,
    data: { key, expiresAt: new Date(expiresAt).toISOString(), notice },
  };
}

export function keyEvent(type: 'key.created' | 'key.revoked', key: EventKey, at: number, actor: string | null): WebhookEvent {
  return { id: `${type}:${key.id}`, type, keyId: key.id, at, data: { key, actor } };
}
