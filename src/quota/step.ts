// The quota step of the pipeline: one decision per request (rate limit, and credits when the
// request passed validation), the redis.onError policy when the store fails, and refunds. With
// `redis.onError: open` and an outage book (outage.ts), a request the store cannot decide is
// decided here against a local window and allowance, and what was served is billed in the store
// once it answers again.
import type { Logger } from 'pino';
import { ThrottledWarning } from '../observability/throttled-log.js';
import type { OutageBook } from './outage.js';
import type { Period } from './period.js';
import type { QuotaDecision, QuotaStore, Refund, UsageRowRef } from './types.js';

/** After a store timeout, skip the store this long so requests do not queue behind a hung Redis. */
export const STORE_BACKOFF_MS = 1_000;
/** How often what was served while the store was away is sent to it. */
export const OUTAGE_FLUSH_MS = 1_000;

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
  /** Requests decided in process while the store was away, by outcome (for metrics). */
  readonly outageDecisions = { ok: 0, rate_limited: 0, out_of_credits: 0 };
  /** Credits served while the store was away and billed since: in full, and beyond what the account had. */
  outageBilled = 0;
  outageOverdraft = 0;
  private lastFailureMs = Number.NEGATIVE_INFINITY;
  private flusher: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    readonly store: QuotaStore,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    private readonly now: () => number,
    /** Decides while the store is away (redis.onError: open); without it such requests are served unlimited. */
    private readonly outage?: OutageBook,
  ) {
    this.warning = new ThrottledWarning(log, 'quota store failed; applying redis.onError', now);
  }

  /** Credits served while the store was away, not billed in it yet. */
  get outageOwed(): number {
    return this.outage?.owed() ?? 0;
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
    if (nowMs < this.skipUntil)
      return this.decideHere(new Error('quota store backing off after a timeout'), key, cost, nowMs, chain, route);
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
      return this.storeFailed(err, key, cost, nowMs, chain, route);
    }
  }

  /**
   * A store that failed to decide: counted, logged (throttled), and backed off after a timeout.
   * With an outage book, the request is decided here (a decision marked `local`); without one,
   * undefined (the caller applies redis.onError). The same arguments as decide().
   */
  storeFailed(err: unknown, key?: QuotaSubject, cost = 0, nowMs = this.now(), chain?: string, route?: string): QuotaDecision | undefined {
    const message = err instanceof Error ? err.message : String(err);
    if (/timed? ?out/i.test(message)) this.skipUntil = this.now() + STORE_BACKOFF_MS;
    return this.decideHere(err, key, cost, nowMs, chain, route);
  }

  /** A request the store could not decide: decided here with an outage book, else undefined. */
  private decideHere(
    err: unknown,
    key: QuotaSubject | undefined,
    cost: number,
    nowMs: number,
    chain?: string,
    route?: string,
  ): QuotaDecision | undefined {
    this.failed(err);
    if (this.outage === undefined || key === undefined) return undefined;
    this.lastFailureMs = this.now();
    const { rps, credits, period } = key.plan;
    const d = this.outage.decide({
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
    this.outageDecisions[d.outcome]++;
    this.armFlusher();
    return d;
  }

  /**
   * Settles a decision taken here while the store was away (QuotaDecision.local), once its answer
   * is out: `charged` of its credits are owed to the store, the rest go back to the allowance.
   */
  settleLocal(key: QuotaSubject, d: QuotaDecision, charged: number, usage: UsageRowRef | undefined): void {
    this.outage?.settle({ account: key.account, period: key.plan.period, credits: key.plan.credits }, d.billed, charged, usage);
  }

  /**
   * Bills what was served while the store was away, once a second while anything is owed; once the
   * store answered and took it all, the outage is over and its allowances end. Resolves when done.
   */
  flushOutage(): Promise<void> {
    const book = this.outage;
    if (book === undefined) return Promise.resolve();
    this.flushing ??= book
      .flush()
      .then(({ done, billed, overdraft }) => {
        this.outageBilled += billed;
        this.outageOverdraft += overdraft;
        if (billed > 0) this.log.info({ billed, overdraft }, 'billed what was served while the quota store was away');
        if (done && this.now() - this.lastFailureMs >= STORE_BACKOFF_MS) book.recovered();
        if (!book.busy() && this.flusher !== undefined) {
          clearInterval(this.flusher);
          this.flusher = undefined;
        }
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  private armFlusher(): void {
    if (this.flusher !== undefined) return;
    this.flusher = setInterval(() => void this.flushOutage(), OUTAGE_FLUSH_MS).unref();
  }

  /** Stops the flusher and sends what is owed once more (a closing process). */
  async close(): Promise<void> {
    if (this.flusher !== undefined) clearInterval(this.flusher);
    this.flusher = undefined;
    if (this.outage?.busy()) await this.flushOutage();
  }

  refund(refund: Refund): void {
    this.store.refund(refund).catch((err: unknown) => this.failed(err));
  }

  private failed(err: unknown): void {
    this.failures++;
    this.warning.warn(err, { store: this.store.kind });
  }
}
