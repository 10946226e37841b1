// Events into the outbox (store/outbox.ts), off the request path: `emit` only queues (a map
// lookup and a push), and a flush a moment later stores one delivery per subscribed webhook.
// An event this process already stored is not stored again (`told`, bounded); one another
// process stored has the same id, which the outbox keeps once. A flush that fails keeps its
// events for the next one, up to MAX_QUEUED: a store that is away costs memory, never a request.
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { ThrottledWarning } from '../observability/throttled-log.js';
import type { NewDelivery, OutboxStore } from '../store/outbox.js';
import { eventBody, type WebhookEvent } from './events.js';
import type { WebhookRegistry } from './registry.js';

/** Events waiting for the store at most; past it the oldest are dropped (and said so). */
export const MAX_QUEUED = 10_000;
/** How often queued events are stored while the store is away. */
const RETRY_MS = 1_000;

export class WebhookEmitter {
  private queue: WebhookEvent[] = [];
  /** Ids of events this process stored or queued: the same threshold seen by every request is one event. */
  private readonly told = new LRUCache<string, true>({ max: 100_000 });
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;
  private readonly warning: ThrottledWarning;
  /** Called after deliveries were stored (the worker looks at once). */
  onStored: (() => void) | undefined;

  constructor(
    private readonly registry: WebhookRegistry,
    private readonly outbox: OutboxStore,
    private readonly log: Pick<Logger, 'warn'>,
    now: () => number,
  ) {
    this.warning = new ThrottledWarning(log, 'webhook events could not be stored; keeping them for the next try', now);
  }

  /** Queues an event to store; a no-op for one this process already queued. */
  emit(event: WebhookEvent): void {
    if (this.told.has(event.id)) return;
    this.told.set(event.id, true);
    if (this.queue.length >= MAX_QUEUED) {
      this.queue.shift();
      if (this.dropped++ % 1000 === 0)
        this.log.warn({ dropped: this.dropped }, 'too many webhook events waiting for the store; dropping the oldest');
    }
    this.queue.push(event);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, 0);
  }

  /** Stores what is queued; resolves when it is stored or kept for the next try. */
  flush(): Promise<void> {
    this.flushing ??= this.store().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Events not stored yet (tests, and the close). */
  get pending(): number {
    return this.queue.length;
  }

  private async store(): Promise<void> {
    while (this.queue.length > 0) {
      const events = this.queue;
      this.queue = [];
      try {
        const deliveries: NewDelivery[] = [];
        for (const e of events) {
          const body = eventBody(e);
          for (const hook of await this.registry.subscribers(e.type)) {
            deliveries.push({
              id: `${e.id}|${hook.id}`,
              eventId: e.id,
              type: e.type,
              webhook: hook.id,
              keyId: e.keyId,
              body,
              createdAt: e.at,
            });
          }
        }
        if (deliveries.length > 0 && (await this.outbox.enqueue(deliveries)).length > 0) this.onStored?.();
      } catch (err) {
        // Back in front, in order, for the next try.
        this.queue = [...events, ...this.queue].slice(-MAX_QUEUED);
        this.warning.warn(err, { events: this.queue.length });
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          void this.flush();
        }, RETRY_MS).unref();
        return;
      }
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
