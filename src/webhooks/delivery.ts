// Sends what the outbox holds (store/outbox.ts): every process claims due deliveries once a second
// (and at once after it stored some), POSTs each to its webhook signed (auth/webhook-signature.ts),
// and records the outcome. A 2xx answer delivers it; anything else (another status, a refused
// connection, no answer within ATTEMPT_TIMEOUT_MS) tries it again after RETRY_DELAYS_MS, until
// RETRY_FOR_MS after the event: then it has failed. A claim is a lease: a process that dies while
// sending leaves the delivery to another once LEASE_MS pass, so each is delivered at least once;
// the receiver tells a repeat by `webhook-id`. None of this is on a request's path: a receiver
// that is down costs this loop's sockets and timers, never a client's request.
import type { Logger } from 'pino';
import { secretKey, signatureHeaders } from '../auth/webhook-signature.js';
import { ThrottledWarning } from '../observability/throttled-log.js';
import type { Delivery, OutboxStore, Settlement } from '../store/outbox.js';
import type { WebhookRegistry } from './registry.js';

/** Back-off after the 1st, 2nd, ... failed attempt (the last one repeats), in the spirit of Svix's schedule. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000];
/** Retried for this long after the event, then failed. */
export const RETRY_FOR_MS = 24 * 3_600_000;
/** An attempt's answer must come within this. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A claim holds a delivery this long: longer than an attempt. */
export const LEASE_MS = 30_000;
/** How often due deliveries are looked for. */
export const POLL_MS = 1_000;
/** Deliveries claimed, and sent in parallel, per round. */
const BATCH = 20;
/** How much of a receiver's refusal is kept. */
const ERROR_CHARS = 200;

export function retryDelay(attempts: number): number {
  return RETRY_DELAYS_MS[Math.min(attempts, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[0]!;
}

export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;
  private closed = false;
  private readonly warning: ThrottledWarning;

  constructor(
    private readonly outbox: OutboxStore,
    private readonly registry: WebhookRegistry,
    private readonly now: () => number,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    private readonly send: typeof fetch = fetch,
  ) {
    this.warning = new ThrottledWarning(log, 'webhook deliveries could not be claimed or settled; trying again', now);
  }

  start(): void {
    this.timer = setInterval(() => void this.round(), POLL_MS);
    this.timer.unref();
  }

  /** Looks for due deliveries now (after events were stored). */
  kick(): void {
    void this.round();
  }

  /**
   * One round: claims due deliveries and sends them, until none is due. Resolves with how many
   * were attempted; a round asked for while one runs runs after it.
   */
  round(): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async () => {
      let attempted = 0;
      do {
        this.again = false;
        try {
          for (;;) {
            const claimed = await this.outbox.claim(this.now(), LEASE_MS, BATCH);
            if (claimed.length === 0) break;
            attempted += claimed.length;
            await Promise.all(claimed.map((d) => this.attempt(d)));
            if (this.closed) break;
          }
        } catch (err) {
          this.warning.warn(err);
        }
      } while (this.again && !this.closed);
      return attempted;
    };
    this.running = run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async attempt(d: Delivery): Promise<void> {
    const outcome = await this.post(d);
    try {
      await this.outbox.settle(d.id, d.attempts, outcome);
    } catch (err) {
      // Unsettled, the delivery is claimed again when its lease ends: sent again, never lost.
      this.warning.warn(err, { delivery: d.id });
    }
  }

  private async post(d: Delivery): Promise<Settlement> {
    const hook = await this.registry.get(d.webhook).catch(() => null);
    if (hook === null) return this.failedAttempt(d, 0, 'the webhook could not be read');
    if (hook === undefined) return { status: 'failed', at: this.now(), lastStatus: 0, lastError: 'the webhook was deleted' };
    if (!hook.enabled) return { status: 'failed', at: this.now(), lastStatus: 0, lastError: 'the webhook is disabled' };
    const key = secretKey(hook.secret);
    if (typeof key === 'string') return { status: 'failed', at: this.now(), lastStatus: 0, lastError: `the webhook's secret: ${key}` };
    const headers = signatureHeaders(key, d.eventId, Math.floor(this.now() / 1000), d.body);
    try {
      const res = await this.send(hook.url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'explorer-gateway-webhooks' },
        body: d.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      const text = res.status >= 200 && res.status < 300 ? '' : await res.text().catch(() => '');
      if (res.status >= 200 && res.status < 300) {
        await res.body?.cancel().catch(() => undefined);
        return { status: 'delivered', at: this.now(), lastStatus: res.status, lastError: '' };
      }
      return this.failedAttempt(d, res.status, `HTTP ${res.status}${text ? `: ${text.slice(0, ERROR_CHARS)}` : ''}`);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const why =
        e.name === 'TimeoutError' ? `no answer within ${ATTEMPT_TIMEOUT_MS} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
      return this.failedAttempt(d, 0, why);
    }
  }

  /** Tried again after the back-off, or failed for good past RETRY_FOR_MS. */
  private failedAttempt(d: Delivery, status: number, error: string): Settlement {
    const at = this.now();
    const next = at + retryDelay(d.attempts);
    if (next > d.createdAt + RETRY_FOR_MS) {
      this.log.warn({ delivery: d.id, webhook: d.webhook, attempts: d.attempts, error }, 'webhook delivery failed for good');
      return { status: 'failed', at, lastStatus: status, lastError: error };
    }
    return { status: 'pending', at, nextAttemptAt: next, lastStatus: status, lastError: error };
  }

  /** No more rounds; resolves when the one running ended. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
