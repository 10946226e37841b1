// The webhooks of one gateway process (issue 25, item 6): the registry of receivers, the events
// (emitter.ts, credits.ts, expiry.ts, and the admin API's key events) and the delivery loop
// (delivery.ts), over the records store's outbox (store/outbox.ts). Every process runs all of it;
// the outbox makes one delivery of each event and hands it to one process at a time.
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { ApiKey } from '../keys/ring.js';
import type { QuotaStore } from '../quota/types.js';
import type { OutboxStore } from '../store/outbox.js';
import type { KeyStore } from '../store/types.js';
import { CreditAlerts } from './credits.js';
import { DeliveryWorker } from './delivery.js';
import { WebhookEmitter } from './emitter.js';
import { keyEvent, type EventKey } from './events.js';
import { ExpiryAlerts } from './expiry.js';
import { configWebhooks, WebhookRegistry, type Webhook } from './registry.js';

/** Deliveries are kept this long (for listing, and so that an event of a month's period is told once). */
export const DELIVERY_RETENTION_MS = 35 * 86_400_000;
const PRUNE_MS = 3_600_000;

export interface WebhookDeps {
  keys: Pick<KeyStore, 'listObjects' | 'getObject'>;
  outbox: OutboxStore;
  quota: Pick<QuotaStore, 'balance'>;
  now: () => number;
  log: Pick<Logger, 'warn' | 'info'>;
}

export class Webhooks {
  readonly registry: WebhookRegistry;
  readonly emitter: WebhookEmitter;
  readonly credits: CreditAlerts;
  readonly expiry: ExpiryAlerts;
  readonly worker: DeliveryWorker;
  private configured: Webhook[] = [];
  /** `security.allowPrivateWebhooks` of the current configuration (webhooks/destination.ts). */
  private allowPrivate = false;
  /** The keys whose expiry is watched: the current key ring's (app/state.ts sets it). */
  keys: () => Iterable<ApiKey> = () => [];
  private readonly pruner: NodeJS.Timeout;

  constructor(
    config: Config['webhooks'],
    private readonly deps: WebhookDeps,
    security: Pick<Config['security'], 'allowPrivateWebhooks'> = { allowPrivateWebhooks: false },
  ) {
    this.configure(config, security);
    this.registry = new WebhookRegistry(() => this.configured, deps.keys, deps.now);
    this.emitter = new WebhookEmitter(this.registry, deps.outbox, deps.log, deps.now);
    this.credits = new CreditAlerts(this.emitter, deps.quota, deps.now, deps.log);
    this.expiry = new ExpiryAlerts(this.emitter, () => this.keys(), deps.now);
    this.worker = new DeliveryWorker(deps.outbox, this.registry, deps.now, deps.log, { allowPrivate: () => this.allowPrivate });
    this.emitter.onStored = () => this.worker.kick();
    this.pruner = setInterval(() => void this.prune(), PRUNE_MS);
    this.pruner.unref();
  }

  /** The configuration's webhooks and whether they may go to private addresses (at start and on reload). */
  configure(
    config: Config['webhooks'],
    security: Pick<Config['security'], 'allowPrivateWebhooks'> = { allowPrivateWebhooks: false },
  ): void {
    this.configured = configWebhooks(config);
    this.allowPrivate = security.allowPrivateWebhooks;
  }

  /** `security.allowPrivateWebhooks`: what the admin API checks a webhook's URL against. */
  get privateAllowed(): boolean {
    return this.allowPrivate;
  }

  start(): void {
    this.worker.start();
    this.expiry.scan();
  }

  /**
   * A key created or revoked through the admin API: stored before the call answers, so that an
   * answered write is not followed by a lost event (a store that fails now keeps it queued).
   */
  async keyChanged(type: 'key.created' | 'key.revoked', key: EventKey, actor: string | null): Promise<void> {
    this.emitter.emit(keyEvent(type, key, this.deps.now(), actor));
    await this.emitter.flush();
  }

  async prune(): Promise<void> {
    try {
      await this.deps.outbox.pruneDeliveries(this.deps.now() - DELIVERY_RETENTION_MS);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'old webhook deliveries could not be deleted; trying again in an hour');
    }
  }

  /**
   * Stops looking for work. Counters marked since the last check are checked once more and the
   * events queued stored, as far as the store lets: a stop right after a threshold is crossed
   * still tells it.
   */
  async close(): Promise<void> {
    clearInterval(this.pruner);
    this.credits.close();
    this.expiry.close();
    await this.credits.check();
    await this.emitter.flush();
    this.emitter.close();
    await this.worker.close();
  }
}
