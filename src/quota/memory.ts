// In-process quota store: rate-limiter-flexible's memory storage for the one-second windows,
// and a credit ledger per key that forgets a period when the next one starts. Decisions are
// synchronous, so a cache hit with in-process stores takes no promise at all.
import MemoryStorage from 'rate-limiter-flexible/lib/component/MemoryStorage/MemoryStorage.js';
import { periodWindow } from './period.js';
import { RATE_WINDOW_MS, type QuotaDecision, type QuotaQuery, type QuotaStore, type Refund } from './types.js';

interface Ledger {
  periodId: string;
  spent: number;
}

export class MemoryQuotaStore implements QuotaStore {
  readonly kind = 'memory';
  // The storage behind rate-limiter-flexible's RateLimiterMemory, used directly: consume()
  // only wraps its synchronous incrby() in a promise, and that promise was a measurable part
  // of a cache hit (bench/results/2026-11-22-hit-path.md). One window per key; each decision
  // compares the count with that plan's rps, so a plan change takes effect on the next request.
  private readonly windows = new MemoryStorage();
  /** Bounded by the configured keys: only keys that passed the key step get here. */
  private readonly ledgers = new Map<string, Ledger>();

  decide(q: QuotaQuery): QuotaDecision {
    const window = this.windows.incrby(q.digest, 1, RATE_WINDOW_MS / 1000);
    const { id: periodId } = periodWindow(q.period, q.nowMs);
    // Nothing here awaits: the check and the debit of credits are one step.
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
