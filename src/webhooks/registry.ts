// The webhooks events go to: the configuration's (`webhooks`, read-only) and those made through
// the admin API, kept as objects of the key store (kind `webhook`, store/types.ts), so that every
// process reads the same ones. Read when an event is stored or delivered, a second old at most.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { EventType } from '../config/webhooks.js';
import type { KeyStore, StoredObject } from '../store/types.js';
import { subscribes } from './events.js';

export interface Webhook {
  /** `wh_...` for one made at run time; the configured one's `name`, or `config-<n>`. */
  id: string;
  url: string;
  events: readonly string[];
  /** `whsec_...` (auth/webhook-signature.ts): never shown but when a webhook is created. */
  secret: string;
  /** A paused webhook is sent nothing, and events meanwhile are not kept for it. */
  enabled: boolean;
  description: string | null;
  source: 'config' | 'runtime';
  /** ms; null for a configured one. */
  createdAt: number | null;
}

/** How long a read of the run-time webhooks is used: a change by another process reaches events within it. */
export const WEBHOOKS_READ_MS = 1_000;

export function configWebhooks(webhooks: Config['webhooks']): Webhook[] {
  return webhooks.map((w, i) => ({
    id: w.name ?? `config-${i + 1}`,
    url: w.url,
    events: w.events,
    secret: w.secret,
    enabled: true,
    description: null,
    source: 'config',
    createdAt: null,
  }));
}

/** `wh_` and 16 base-32 characters, as key ids are made (keys/runtime.ts). */
export function newWebhookId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let id = 'wh_';
  for (const byte of randomBytes(16)) id += alphabet[byte & 31];
  return id;
}

export function webhookObject(w: Webhook): StoredObject {
  return {
    kind: 'webhook',
    id: w.id,
    value: { url: w.url, events: [...w.events], secret: w.secret, enabled: w.enabled, description: w.description, createdAt: w.createdAt },
  };
}

export function webhookFromObject(o: StoredObject): Webhook | undefined {
  const v = o.value;
  const events = v.events;
  if (typeof v.url !== 'string' || typeof v.secret !== 'string' || !Array.isArray(events) || !events.every((e) => typeof e === 'string')) {
    return undefined;
  }
  return {
    id: o.id,
    url: v.url,
    events,
    secret: v.secret,
    enabled: v.enabled !== false,
    description: typeof v.description === 'string' ? v.description : null,
    source: 'runtime',
    createdAt: typeof v.createdAt === 'number' ? v.createdAt : null,
  };
}

/** The password of a `user:password@` URL as `***` (for the admin API, the audit and logs); any other URL as it is. */
export function maskedUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const u = new URL(url);
  if (u.password === '') return url;
  u.password = '***';
  return u.href;
}

/** What is shown of a webhook: everything but its secret, and its URL's password masked. */
export function webhookView(w: Webhook): Record<string, unknown> {
  return {
    id: w.id,
    url: maskedUrl(w.url),
    events: [...w.events],
    enabled: w.enabled,
    description: w.description,
    source: w.source,
    createdAt: w.createdAt === null ? null : new Date(w.createdAt).toISOString(),
  };
}

export class WebhookRegistry {
  private read: { at: number; hooks: Promise<Webhook[]> } | undefined;

  constructor(
    /** The current configuration's webhooks (a reload changes them). */
    private readonly configured: () => readonly Webhook[],
    private readonly store: Pick<KeyStore, 'listObjects' | 'getObject'>,
    private readonly now: () => number,
  ) {}

  /** Every webhook, the configuration's first; the run-time ones as read at most WEBHOOKS_READ_MS ago. */
  async all(): Promise<Webhook[]> {
    const now = this.now();
    if (this.read === undefined || now - this.read.at >= WEBHOOKS_READ_MS || now < this.read.at) {
      const hooks = this.store.listObjects('webhook').then((objects) => objects.flatMap((o) => webhookFromObject(o) ?? []));
      this.read = { at: now, hooks };
      // A failed read is not kept: the next call reads again.
      hooks.catch(() => {
        if (this.read?.hooks === hooks) this.read = undefined;
      });
    }
    return [...this.configured(), ...(await this.read.hooks)];
  }

  /** The enabled webhooks subscribed to an event type. */
  async subscribers(type: EventType): Promise<Webhook[]> {
    return (await this.all()).filter((w) => w.enabled && subscribes(w.events, type));
  }

  /** One webhook as it is now (the store read, not the cached list): what a delivery is sent to. */
  async get(id: string): Promise<Webhook | undefined> {
    const configured = this.configured().find((w) => w.id === id);
    if (configured) return configured;
    const o = await this.store.getObject('webhook', id);
    return o && webhookFromObject(o);
  }

  /** Forgets the cached read (after this process changed a webhook). */
  invalidate(): void {
    this.read = undefined;
  }
}
