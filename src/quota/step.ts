// The quota step of the pipeline: one decision per request (rate limit, and credits when the
// request passed validation), the redis.onError policy when the store fails, refunds, and the
// four headers every response after the key step carries (contract section 6).
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { ApiKey } from '../auth/keys.js';
import type { Config, RouteName } from '../config/schema.js';
import { decimal, H_CREDITS, H_LIMIT, H_REMAINING, H_RESET } from '../http/headers.js';
import { ThrottledWarning } from '../observability/throttled-log.js';
import type { QuotaDecision, QuotaStore, Refund } from './types.js';

/** After a store timeout, skip the store this long so requests do not queue behind a hung Redis. */
export const STORE_BACKOFF_MS = 1_000;

export function costOf(costs: Config['costs'], route: RouteName): number {
  return costs.routes[route] ?? costs.default;
}

export class QuotaStep {
  private skipUntil = 0;
  private readonly warning: ThrottledWarning;
  /** Store failures since start (for metrics). */
  failures = 0;

  constructor(
    readonly store: QuotaStore,
    log: FastifyBaseLogger,
    private readonly now: () => number,
  ) {
    this.warning = new ThrottledWarning(log, 'quota store failed; applying redis.onError', now);
  }

  /**
   * The store's decision, or undefined when the store failed (the caller applies
   * redis.onError). Synchronous when the store is (in process), so a cache hit need not wait
   * for a promise; a promise when the store is remote.
   */
  decide(key: ApiKey, cost: number, nowMs = this.now()): QuotaDecision | undefined | Promise<QuotaDecision | undefined> {
    if (nowMs < this.skipUntil) return this.failed(new Error('quota store backing off after a timeout'));
    const { rps, credits, period } = key.plan;
    let answer: QuotaDecision | Promise<QuotaDecision>;
    try {
      answer = this.store.decide({ digest: key.digest, rps, credits, period, cost, nowMs });
    } catch (err) {
      return this.storeFailed(err);
    }
    return answer instanceof Promise ? answer.then(undefined, (err: unknown) => this.storeFailed(err)) : answer;
  }

  private storeFailed(err: unknown): undefined {
    if (/timed? ?out/i.test((err as Error).message)) this.skipUntil = this.now() + STORE_BACKOFF_MS;
    return this.failed(err);
  }

  refund(refund: Refund): void {
    this.store.refund(refund).catch((err: unknown) => {
      this.failed(err);
    });
  }

  private failed(err: unknown): undefined {
    this.failures++;
    this.warning.warn(err, { store: this.store.kind });
    return undefined;
  }
}

/** Stamps the four quota headers; all -1 when the store failed. */
export function stampQuotaHeaders(reply: FastifyReply, rps: string, decision: QuotaDecision | undefined): void {
  if (!decision) {
    reply.header(H_LIMIT, '-1').header(H_REMAINING, '-1').header(H_RESET, '-1').header(H_CREDITS, '-1');
    return;
  }
  reply
    .header(H_LIMIT, rps)
    .header(H_REMAINING, decimal(decision.rateRemaining))
    .header(H_RESET, decimal(decision.rateResetMs))
    .header(H_CREDITS, decimal(Math.max(decision.credits, 0)));
}
