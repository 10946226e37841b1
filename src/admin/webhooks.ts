// /admin/v1/webhooks (issue 25, item 6): receivers made, changed and deleted at run time beside
// the configuration's (read-only here), each write audited as `webhook:<id>`; and the outbox's
// deliveries, listed and sent again. The secret of a webhook is shown once, when it is made (or
// given anew). A URL's password is shown masked, and what a receiver answered (the first
// characters of a refusal, in `lastError`) only to write tokens: a receiver's text is not the
// gateway's, and a read token is for dashboards and auditors (issue 42, item 8).
import { urlRefusal } from '../auth/webhook-destination.js';
import { newWebhookSecret } from '../auth/webhook-signature.js';
import type { Delivery } from '../store/outbox.js';
import type { AuditEntry } from '../store/types.js';
import { maskedUrl, newWebhookId, webhookObject, webhookView, type Webhook } from '../webhooks/registry.js';
import type { Webhooks } from '../webhooks/webhooks.js';
import type { AdminDeps } from './context.js';
import { AdminError } from './errors.js';
import type { CreateWebhookInput, ListDeliveriesInput, UpdateWebhookInput } from './webhook-schemas.js';

const iso = (ms: number): string | null => (ms > 0 ? new Date(ms).toISOString() : null);

/** `lastError` for a read token: `HTTP 500` without what the receiver said after it. */
export function withoutAnswer(lastError: string): string {
  const m = /^HTTP (\d{3}): /.exec(lastError);
  return m ? `HTTP ${m[1]} (the receiver's answer is shown to write admin tokens only)` : lastError;
}

/** A delivery as the admin API shows it; `answers`: whether the receiver's own text is shown (write tokens). */
export function deliveryView(d: Delivery, answers = true): Record<string, unknown> {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(d.body) as Record<string, unknown>;
  } catch {
    event = {};
  }
  return {
    id: d.id,
    eventId: d.eventId,
    type: d.type,
    webhook: d.webhook,
    keyId: d.keyId === '' ? null : d.keyId,
    status: d.status,
    attempts: d.attempts,
    createdAt: new Date(d.createdAt).toISOString(),
    nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    lastAttemptAt: iso(d.lastAttemptAt),
    lastStatus: d.lastStatus > 0 ? d.lastStatus : null,
    lastError: d.lastError === '' ? null : answers ? d.lastError : withoutAnswer(d.lastError),
    deliveredAt: iso(d.deliveredAt),
    event,
  };
}

export class WebhookAdmin {
  constructor(private readonly deps: AdminDeps) {}

  private get webhooks(): Webhooks {
    return this.deps.webhooks;
  }

  private entry(action: AuditEntry['action'], by: string, id: string, before: Webhook | null, after: Webhook | null): AuditEntry {
    return {
      at: this.deps.now(),
      action,
      actor: by,
      keyId: `webhook:${id}`,
      before: before && webhookView(before),
      after: after && webhookView(after),
    };
  }

  async list(): Promise<{ items: Record<string, unknown>[] }> {
    return { items: (await this.webhooks.registry.all()).map(webhookView) };
  }

  private async find(id: string): Promise<Webhook> {
    const hook = await this.webhooks.registry.get(id);
    if (!hook) throw new AdminError('NO_SUCH_WEBHOOK', `no webhook with id ${id}`);
    return hook;
  }

  async show(id: string): Promise<Record<string, unknown>> {
    return webhookView(await this.find(id));
  }

  /** 422 for a loopback, private or link-local URL unless `security.allowPrivateWebhooks` (auth/webhook-destination.ts). */
  private checkUrl(url: string): void {
    if (this.webhooks.privateAllowed) return;
    const refused = urlRefusal(url);
    if (refused !== undefined) {
      throw new AdminError('INVALID_BODY', `invalid request: url: ${refused}`, { errors: [{ field: 'url', message: refused }] });
    }
  }

  async create(input: CreateWebhookInput, by: string): Promise<Record<string, unknown>> {
    this.checkUrl(input.url);
    const hook: Webhook = {
      id: newWebhookId(),
      url: input.url,
      events: input.events,
      secret: input.secret ?? newWebhookSecret(),
      enabled: input.enabled,
      description: input.description ?? null,
      source: 'runtime',
      createdAt: this.deps.now(),
    };
    const e = this.entry('create', by, hook.id, null, hook);
    if (!(await this.deps.store.keys.putObject(webhookObject(hook), 'create', e))) {
      throw new Error(`a webhook id was drawn twice: ${hook.id}`);
    }
    this.written(e);
    return { ...webhookView(hook), secret: hook.secret };
  }

  /** A run-time webhook: 404 for none, 409 for a configured one. */
  async writable(id: string): Promise<Webhook> {
    const hook = await this.find(id);
    if (hook.source === 'config') throw new AdminError('CONFIGURED_WEBHOOK', `webhook ${id} is in the configuration file: change it there`);
    return hook;
  }

  async update(id: string, input: UpdateWebhookInput, by: string): Promise<Record<string, unknown>> {
    const before = await this.writable(id);
    if (input.url !== undefined && input.url !== maskedUrl(before.url)) this.checkUrl(input.url);
    const after: Webhook = {
      ...before,
      // The URL as GET shows it (its password masked) sent back unchanged keeps the password.
      url: input.url === undefined || input.url === maskedUrl(before.url) ? before.url : input.url,
      events: input.events ?? before.events,
      secret: input.secret ?? before.secret,
      enabled: input.enabled ?? before.enabled,
      description: input.description !== undefined ? input.description : before.description,
    };
    const e = this.entry('update', by, id, before, after);
    if (!(await this.deps.store.keys.putObject(webhookObject(after), 'replace', e))) {
      throw new AdminError('NO_SUCH_WEBHOOK', `no webhook with id ${id}`);
    }
    this.written(e);
    return webhookView(after);
  }

  async delete(id: string, by: string): Promise<{ id: string; deleted: true }> {
    const before = await this.writable(id);
    const e = this.entry('delete', by, id, before, null);
    if (!(await this.deps.store.keys.deleteObject('webhook', id, e))) throw new AdminError('NO_SUCH_WEBHOOK', `no webhook with id ${id}`);
    this.written(e);
    return { id, deleted: true };
  }

  private written(e: AuditEntry): void {
    this.webhooks.registry.invalidate();
    this.deps.log.info({ admin: e.action, actor: e.actor, keyId: e.keyId, before: e.before, after: e.after }, 'admin write');
  }

  async deliveries(q: ListDeliveriesInput, answers: boolean): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
    let page;
    try {
      page = await this.deps.store.outbox.listDeliveries({
        webhook: q.webhook,
        status: q.status,
        keyId: q.key,
        type: q.type,
        cursor: q.cursor,
        limit: q.limit ?? 100,
      });
    } catch (err) {
      if (err instanceof RangeError)
        throw new AdminError('INVALID_QUERY', `cursor: ${err.message}`, { errors: [{ field: 'cursor', message: err.message }] });
      throw err;
    }
    return { items: page.deliveries.map((d) => deliveryView(d, answers)), nextCursor: page.nextCursor };
  }

  async delivery(id: string, answers: boolean): Promise<Record<string, unknown>> {
    const d = await this.deps.store.outbox.getDelivery(id);
    if (!d) throw new AdminError('NO_SUCH_DELIVERY', `no webhook delivery with id ${id}`);
    return deliveryView(d, answers);
  }

  /** Pending again, due now: the delivery loop sends it within a second. */
  async redeliver(id: string, by: string): Promise<Record<string, unknown>> {
    if (!(await this.deps.store.outbox.redeliver(id, this.deps.now())))
      throw new AdminError('NO_SUCH_DELIVERY', `no webhook delivery with id ${id}`);
    this.deps.log.info({ admin: 'redeliver', actor: by, delivery: id }, 'admin write');
    this.webhooks.worker.kick();
    return this.delivery(id, true);
  }
}
