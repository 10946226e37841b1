// In-process quota store: rate-limiter-flexible's memory limiter for the one-second windows,
// and a credit ledger per key that forgets a period when the next one starts.
import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import { periodWindow } from './period.js';
import { RATE_WINDOW_MS, type QuotaDecision, type QuotaQuery, type QuotaStore, type Refund } from './types.js';

interface Ledger {
  periodId: string;
  spent: number;
}

export class MemoryQuotaStore implements QuotaStore {
  readonly kind = 'memory';
  // One limiter for every plan: it only counts (points is unbounded) and each decision compares
  // the count with that plan's rps, so a plan change takes effect on the next request.
  // No key prefix: the limiter would otherwise build (and hash) a new key string per request.
  private readonly windows = new RateLimiterMemory({ points: Number.MAX_SAFE_INTEGER, duration: RATE_WINDOW_MS / 1000, keyPrefix: '' });
  /** Bounded by the configured keys: only keys that passed the key step get here. */
  private readonly ledgers = new Map<string, Ledger>();

  decide(q: QuotaQuery): Promise<QuotaDecision> {
    return this.windows.consume(q.digest, 1).then((window) => this.settle(q, window));
  }

  private settle(q: QuotaQuery, window: RateLimiterRes): QuotaDecision {
    const { id: periodId } = periodWindow(q.period, q.nowMs);
    // From here on nothing awaits: the check and the debit of credits are one step.
    let ledger = this.ledgers.get(q.digest);
    if (!ledger || ledger.periodId !== periodId) {
      ledger = { periodId, spent: 0 };
      this.ledgers.set(q.digest, ledger);
    }
    const consumed = window.consumedPoints;
    const balance = q.credits - ledger.spent;
    let outcome: QuotaDecision['outcome'] = 'ok';
    if (consumed > q.rps) outcome = 'rate_limited';
    else if (q.cost > 0 && balance < q.cost) outcome = 'out_of_credits';
    const billed = outcome === 'ok' ? q.cost : 0;
    ledger.spent += billed;
    // One object literal, no spread: this runs on every request (object spread costs ~2 us here).
    return {
      outcome,
      rateRemaining: Math.max(q.rps - consumed, 0),
      rateResetMs: window.msBeforeNext,
      credits: balance - billed,
      billed,
      periodId,
    };
  }

  refund(r: Refund): Promise<void> {
    const ledger = this.ledgers.get(r.digest);
    // A refund for a period that has ended has nothing left to give back to.
    if (ledger && ledger.periodId === r.periodId) ledger.spent = Math.max(ledger.spent - r.amount, 0);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
