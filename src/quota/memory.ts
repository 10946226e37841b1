// In-process quota store: a fixed one-second window per account (window.ts) and a ledger of what
// each account spent in its current period and the credits it bought. Decisions are synchronous,
// so a cache hit with in-process stores takes no promise at all, and every instant comes from the
// decision's clock.
//
// rate-limiter-flexible's RateLimiterMemory (and the MemoryStorage under it) reads Date.now()
// and arms a timer per window, so a test could only wait for its windows to end; the window is
// the same algorithm, kept here in a map (README, "Libraries chosen and why").
//
// With a LedgerPersistence (the embedded SQLite store), ledgers survive a restart: they are
// loaded at start, written a second after they change and at close, and a top-up at once.
import type { LedgerPersistence } from '../store/types.js';
import { periodWindow, type Period } from './period.js';
import type { Balance, QuotaDecision, QuotaQuery, QuotaStore, Refund } from './types.js';
import { resetMs, windowHolds, type RateWindow } from './window.js';

interface Ledger {
  periodId: string;
  /** Spent from the period's allowance. */
  spent: number;
  /** Bought credits left. */
  topup: number;
}

/** How often changed ledgers are written to the persistence. */
export const LEDGER_FLUSH_MS = 1_000;

export class MemoryQuotaStore implements QuotaStore {
  readonly kind = 'memory';
  /** Bounded by the known keys: only keys that passed the key step get here. */
  private readonly windows = new Map<string, RateWindow>();
  private readonly ledgers = new Map<string, Ledger>();
  private readonly dirty = new Set<string>();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(private readonly persistence?: LedgerPersistence) {
    if (!persistence) return;
    for (const row of persistence.loadLedgers())
      this.ledgers.set(row.account, { periodId: row.periodId, spent: row.spent, topup: row.topup });
    this.timer = setInterval(() => this.flush(), LEDGER_FLUSH_MS);
    this.timer.unref();
  }

  /** The account's ledger for the period `nowMs` falls in: a new period starts with nothing spent. */
  private ledger(account: string, period: Period, nowMs: number): Ledger {
    const { id: periodId } = periodWindow(period, nowMs);
    let ledger = this.ledgers.get(account);
    if (!ledger) {
      ledger = { periodId, spent: 0, topup: 0 };
      this.ledgers.set(account, ledger);
    } else if (ledger.periodId !== periodId) {
      ledger.periodId = periodId;
      ledger.spent = 0;
    }
    return ledger;
  }

  decide(q: QuotaQuery): QuotaDecision {
    let window = this.windows.get(q.account);
    if (!windowHolds(window, q.nowMs)) {
      window = { startMs: q.nowMs, count: 0 };
      this.windows.set(q.account, window);
    }
    const consumed = ++window.count;
    // Nothing here awaits: the check and the debit of credits are one step.
    const ledger = this.ledger(q.account, q.period, q.nowMs);
    const allowance = Math.max(q.credits - ledger.spent, 0);
    let outcome: QuotaDecision['outcome'] = 'ok';
    if (consumed > q.rps) outcome = 'rate_limited';
    else if (q.cost > 0 && allowance + ledger.topup < q.cost) outcome = 'out_of_credits';
    const billed = outcome === 'ok' ? q.cost : 0;
    const fromAllowance = Math.min(billed, allowance);
    const fromTopup = billed - fromAllowance;
    if (billed > 0) {
      ledger.spent += fromAllowance;
      ledger.topup -= fromTopup;
      if (this.persistence) this.dirty.add(q.account);
    }
    // One object literal, no spread: this runs on every request (object spread costs ~2 us here).
    return {
      outcome,
      rateRemaining: Math.max(q.rps - consumed, 0),
      rateResetMs: resetMs(window, q.nowMs),
      credits: allowance - fromAllowance + ledger.topup,
      billed,
      fromTopup,
      periodId: ledger.periodId,
    };
  }

  refund(r: Refund): Promise<void> {
    const ledger = this.ledgers.get(r.account);
    if (!ledger) return Promise.resolve();
    // Bought credits come back whenever; a period that has ended has no allowance to give back to.
    ledger.topup += r.fromTopup;
    if (ledger.periodId === r.periodId) ledger.spent = Math.max(ledger.spent - (r.amount - r.fromTopup), 0);
    if (this.persistence) this.dirty.add(r.account);
    return Promise.resolve();
  }

  topUp(account: string, amount: number): Promise<number> {
    let ledger = this.ledgers.get(account);
    if (!ledger) {
      // Its period is set by its first decision; nothing spent yet.
      ledger = { periodId: '', spent: 0, topup: 0 };
      this.ledgers.set(account, ledger);
    }
    ledger.topup += amount;
    // Bought credits are written at once: an acknowledged top-up survives a crash.
    this.persistence?.saveLedgers([{ account, ...ledger }]);
    this.dirty.delete(account);
    return Promise.resolve(ledger.topup);
  }

  balance(account: string, period: Period, nowMs: number): Promise<Balance> {
    const ledger = this.ledgers.get(account);
    const { id: periodId } = periodWindow(period, nowMs);
    if (!ledger) return Promise.resolve({ spent: 0, topup: 0, periodId });
    return Promise.resolve({ spent: ledger.periodId === periodId ? ledger.spent : 0, topup: ledger.topup, periodId });
  }

  /** Writes the ledgers changed since the last write. */
  flush(): void {
    if (!this.persistence || this.dirty.size === 0) return;
    const rows = [...this.dirty].flatMap((account) => {
      const l = this.ledgers.get(account);
      return l ? [{ account, periodId: l.periodId, spent: l.spent, topup: l.topup }] : [];
    });
    this.dirty.clear();
    this.persistence.saveLedgers(rows);
  }

  close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.flush();
    return Promise.resolve();
  }
}
