// The names of webhook events and subscriptions (docs/configuration.md, `webhooks`), owned here
// because the configuration file names them; webhooks/events.ts builds the events.

export const EVENT_TYPES = ['credits.threshold', 'credits.exhausted', 'key.expiring', 'key.created', 'key.revoked'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What a webhook may subscribe to: an event type, its family (`credits.*`, `key.*`), or `*` for all. */
export const EVENT_PATTERNS: readonly string[] = ['*', 'credits.*', 'key.*', ...EVENT_TYPES];
