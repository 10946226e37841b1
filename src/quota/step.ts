// The quota step of the pipeline: one decision per request (rate limit, and credits when the
// request passed validation), the redis.onError policy when the store fails, and refunds.
import type { Logger } from 'pino';
import { ThrottledWarning } from '../observability/throttled-log.js';
import type { Period } from './period.js';
import type { QuotaDecision, QuotaStore, Refund } from './types.js';

/** After a store timeout, skip the store this long so requests do not queue behind a hung Redis. */
export const STORE_BACKOFF_MS = 1_000;

/** What the quota step needs to know of a key. */
export interface QuotaSubject {
  /** The identity every counter is kept under (QuotaQuery.account). */
  readonly account: string;
  /** The key's id, as usage rows name it (keys/ring.ts). */
  readonly id?: string;
  /** The key's account as usage rows record it ('' for none; keys/ring.ts). */
  readonly usageAccount?: string;
  readonly plan: { readonly rps: number; readonly credits: number; readonly period: Period };
}

export class QuotaStep {
  private skipUntil = 0;
  private readonly warning: ThrottledWarning;
  /** Store failures since start (for metrics). */
  failures = 0;

  constructor(
    readonly store: QuotaStore,
    log: Pick<Logger, 'warn'>,
    private readonly now: () => number,
  ) {
    this.warning = new ThrottledWarning(log, 'quota store failed; applying redis.onError', now);
  }

  /**
   * The store's decision, or undefined when the store failed (the caller applies
   * redis.onError). Synchronous when the store is (in process), so a cache hit need not wait
   * for a promise; the store's own promise when it is remote, which may reject: the caller
   * passes the error to storeFailed (one promise per request on the Redis path, not two).
   */
  decide(
    key: QuotaSubject,
    cost: number,
    nowMs = this.now(),
    chain?: string,
    route?: string,
  ): QuotaDecision | undefined | Promise<QuotaDecision> {
    if (nowMs < this.skipUntil) return this.failed(new Error('quota store backing off after a timeout'));
    const { rps, credits, period } = key.plan;
    try {
      // The usage row's names ride in the query (no object of their own): a store joined to the
      // usage recorder counts the credits there as it bills them (memory.ts).
      return this.store.decide({
        account: key.account,
        rps,
        credits,
        period,
        cost,
        nowMs,
        keyId: key.id,
        usageAccount: key.usageAccount,
        chain,
        route,
      });
    } catch (err) {
      return this.storeFailed(err);
    }
  }

  /** A store that failed to decide: counted, logged (throttled), and backed off after a timeout. */
  storeFailed(err: unknown): undefined {
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
