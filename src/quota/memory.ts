// In-process quota store: a fixed one-second window per account (window.ts) and a ledger of what
// each account spent in its current UTC day and in its current UTC month, and the credits it
// bought. Decisions are synchronous, so a cache hit with in-process stores takes no promise at
// all, and every instant comes from the decision's clock.
//
// Every debit of a plan's allowance counts in both the day counter and the month counter, whatever
// the plan's period: a decision on a daily plan reads the day counter, one on a monthly plan the
// month counter, and both add what they take to the two. So a plan change between a daily and a
// monthly plan keeps the spend of the new plan's period: moved to a monthly plan, a key has spent
// what it spent this month; moved to a daily plan, what it spent today (docs/operator-guide.md, "What is kept is
// what a key spent"). A new day resets only the day counter, a new month only the month counter.
//
// rate-limiter-flexible's RateLimiterMemory (and the MemoryStorage under it) reads Date.now()
// and arms a timer per window, so a test could only wait for its windows to end; the window is
// the same algorithm, kept here in a map (docs/architecture.md, "Libraries chosen and why").
//
// With a LedgerStore (the embedded SQLite store, or PostgreSQL without Redis), ledgers survive a
// restart: they are loaded at start, written a second after they change and at close, and a
// change of bought credits (a top-up, a correction) before it is acknowledged. A write that fails
// is tried again with the next one. A store that cannot be read at start (a database away) does
// not stop the gateway: decisions go on from what this process spends, and the stored ledgers are
// added to them once they can be read (spend and bought credits are sums, so nothing is lost or
// counted twice); until then nothing is written over them, and a change of bought credits is
// refused.
//
// A ledger store may name the rows itself (`sealAccount`: the SQLite store names them by a keyed
// hash of the account, so that the file holds no sha256 of a key: store/sqlite.ts says why). The
// ledgers here stay under their accounts; rows are written under their sealed names, and a stored
// row is taken up when its account is first seen (its sealed name computed once, then remembered).
//
// Joined to the usage recorder (`joinUsage`: a ledger store that writes ledgers and usage rows in
// one transaction, store/types.ts), a decision adds the credits it bills to the request's usage
// row in the same synchronous step as it takes them from the ledger, a refund takes them off
// both, and each write carries the changed ledgers and the usage batches together: usage credits
// equal the credits the ledgers were charged in memory at every instant, and so in the store
// after every write, whenever the process dies (docs/operator-guide.md, "Usage equals billing").
import type { LedgerRow, LedgerStore, UsageBatch } from '../store/types.js';
import { periodWindow, type Period } from './period.js';
import {
  checkTopUpDelta,
  checkTopUpValue,
  TopUpBelowZero,
  type Balance,
  type QuotaDecision,
  type QuotaQuery,
  type QuotaStore,
  type Refund,
} from './types.js';
import { resetMs, windowHolds, type RateWindow } from './window.js';

/** An account's ledger, kept under its account. */
type Ledger = Omit<LedgerRow, 'account'>;

/** A change of an account's bought credits: its delta computed from what the account has at the moment of change. */
interface TopUpChange {
  account: string;
  deltaOf(topup: number): number;
}

/** How often changed ledgers are written to the persistence. */
export const LEDGER_FLUSH_MS = 1_000;

/** A ledger store that names its rows itself (store/sqlite.ts); without sealAccount, rows are named by their accounts. */
export type LedgerPersistence = LedgerStore & { sealAccount?(account: string): string };

/** The usage recorder as a joined quota store sees it (usage/recorder.ts). */
export interface BilledUsage {
  bill(nowMs: number, keyId: string, account: string, chain: string, route: string, credits: number): void;
  /** Whether anything counted is not written yet. */
  readonly waiting: boolean;
  takeBatches(): UsageBatch[];
  settle(err?: unknown): void;
  joinLedgers(flush: () => Promise<void>): void;
}

/** Whether a day's id (`d20261126`) lies in a month's (`m202611`): the month's six digits follow the day's `d`. */
function inMonth(day: string, month: string): boolean {
  return day.length === 9 && day.startsWith('d') && month.length === 7 && month.startsWith('m') && day.startsWith(month.slice(1), 1);
}

export class MemoryQuotaStore implements QuotaStore {
  readonly kind = 'memory';
  /** Bounded by the known keys: only keys that passed the key step get here. */
  private readonly windows = new Map<string, RateWindow>();
  private readonly ledgers = new Map<string, Ledger>();
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** The write on its way, if any: one at a time. */
  private writing: Promise<void> | undefined;
  /** The stored ledgers were read (start, or a tick after it). */
  private stored = false;
  /** Stored ledgers not taken up yet, by their rows' names: taken when their account is first seen. */
  private readonly unclaimed = new Map<string, Ledger>();
  /** Accounts' row names, computed once each (bounded as `ledgers` is). */
  private readonly names = new Map<string, string>();

  /** The usage recorder whose rows are written with the ledgers, once joined. */
  private usage: BilledUsage | undefined;

  constructor(private readonly persistence?: LedgerPersistence) {}

  /**
   * Counts credits in `usage` when they are billed and writes its rows with the ledgers, in one
   * transaction; only where the ledger store can (saveLedgersAndUsage). Returns whether joined.
   */
  joinUsage(usage: BilledUsage): boolean {
    if (!this.persistence?.saveLedgersAndUsage || this.usage) return false;
    this.usage = usage;
    usage.joinLedgers(() => this.flush());
    return true;
  }

  /** The name of an account's row in the persistence. */
  private rowName(account: string): string {
    const persistence = this.persistence;
    if (!persistence?.sealAccount) return account;
    let name = this.names.get(account);
    if (name === undefined) {
      name = persistence.sealAccount(account);
      this.names.set(account, name);
    }
    return name;
  }

  /** The account's ledger: in memory, or its stored row taken up now; undefined when it has none. */
  private known(account: string): Ledger | undefined {
    const ledger = this.ledgers.get(account);
    if (ledger || this.unclaimed.size === 0) return ledger;
    const name = this.rowName(account);
    const stored = this.unclaimed.get(name);
    if (!stored) return undefined;
    this.unclaimed.delete(name);
    this.ledgers.set(account, stored);
    return stored;
  }

  /**
   * Loads the ledgers, before the first decision; then writes the changed ones every
   * LEDGER_FLUSH_MS. A store that cannot be read now is read again on each tick until it can.
   */
  async start(): Promise<void> {
    if (!this.persistence || this.timer) return;
    this.timer = setInterval(() => void this.tick(), LEDGER_FLUSH_MS);
    this.timer.unref();
    await this.load().catch(() => undefined);
  }

  /** Whether the stored ledgers are read (always, without a store). */
  get loaded(): boolean {
    return this.persistence === undefined || this.stored;
  }

  private async tick(): Promise<void> {
    try {
      if (!this.stored) await this.load();
      await this.flush();
    } catch {
      // The store is away: the next tick tries again.
    }
  }

  /** Adds the stored ledgers to what was spent since the start, once. */
  private async load(): Promise<void> {
    if (!this.persistence || this.stored) return;
    const rows = await this.persistence.loadLedgers();
    if (this.stored) return;
    // The accounts decided here before the load, by their rows' names.
    const decided = new Map<string, string>();
    for (const account of this.ledgers.keys()) decided.set(this.rowName(account), account);
    for (const row of rows) {
      const account = decided.get(row.account);
      const mine = account === undefined ? undefined : this.ledgers.get(account);
      if (account === undefined || !mine) {
        this.unclaimed.set(row.account, {
          day: row.day,
          daySpent: row.daySpent,
          month: row.month,
          monthSpent: row.monthSpent,
          topup: row.topup,
        });
        continue;
      }
      // Decided here before the load: bought credits add up; each counter's spend only within
      // its day or month (a stored spend of an earlier one is over; one of a counter not started
      // here yet, '', is the current one's).
      mine.topup += row.topup;
      if (mine.day === row.day || mine.day === '') {
        mine.daySpent += row.daySpent;
        mine.day = row.day;
      }
      if (mine.month === row.month || mine.month === '') {
        mine.monthSpent += row.monthSpent;
        mine.month = row.month;
      }
      this.dirty.add(account);
    }
    this.stored = true;
  }

  /**
   * The account's ledger with its counters on the day and the month `nowMs` falls in: a new day
   * starts the day counter with nothing spent, a new month the month counter.
   */
  private ledger(account: string, nowMs: number): Ledger {
    // Both windows are cached (period.ts): no allocation within a day.
    const day = periodWindow('daily', nowMs).id;
    const month = periodWindow('monthly', nowMs).id;
    let ledger = this.known(account);
    if (!ledger) {
      ledger = { day, daySpent: 0, month, monthSpent: 0, topup: 0 };
      this.ledgers.set(account, ledger);
      return ledger;
    }
    if (ledger.day !== day) {
      ledger.day = day;
      ledger.daySpent = 0;
    }
    if (ledger.month !== month) {
      ledger.month = month;
      ledger.monthSpent = 0;
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
    const ledger = this.ledger(q.account, q.nowMs);
    const daily = q.period === 'daily';
    const allowance = Math.max(q.credits - (daily ? ledger.daySpent : ledger.monthSpent), 0);
    let outcome: QuotaDecision['outcome'] = 'ok';
    if (consumed > q.rps) outcome = 'rate_limited';
    else if (q.cost > 0 && allowance + ledger.topup < q.cost) outcome = 'out_of_credits';
    const billed = outcome === 'ok' ? q.cost : 0;
    const fromAllowance = Math.min(billed, allowance);
    const fromTopup = billed - fromAllowance;
    if (billed > 0) {
      // In both counters, whatever the plan's period: the other one is what a plan change reads.
      ledger.daySpent += fromAllowance;
      ledger.monthSpent += fromAllowance;
      ledger.topup -= fromTopup;
      if (this.persistence) this.dirty.add(q.account);
      // In the same step: the write that carries this debit carries its usage credits.
      const usage = this.usage;
      if (usage !== undefined && q.keyId !== undefined && q.chain !== undefined && q.route !== undefined) {
        usage.bill(q.nowMs, q.keyId, q.usageAccount ?? '', q.chain, q.route, billed);
      }
    }
    // One object literal, no spread: this runs on every request (object spread costs ~2 us here).
    return {
      outcome,
      rateRemaining: Math.max(q.rps - consumed, 0),
      rateResetMs: resetMs(window, q.nowMs),
      credits: allowance - fromAllowance + ledger.topup,
      billed,
      fromTopup,
      periodId: daily ? ledger.day : ledger.month,
    };
  }

  /**
   * Bought credits come back whenever. The allowance's part comes back to each counter that is
   * still the day or the month the debit was counted in; one that has moved on to a new day or
   * month has nothing to give back to. The refund names the plan's period (`QuotaDecision.periodId`):
   * - a day (`d20261126`): its day counter if that is still the day, and the month counter if it
   *   is still that day's month (`m202611`);
   * - a month (`m202611`): its month counter if that is still the month, and the day counter if
   *   its day lies in that month and is the debit's: the day of the refund's usage row (the
   *   decision's instant). A refund without one is taken to be of the day counter's day, which
   *   it is unless a decision of the next day came between the debit and its refund (a request
   *   across midnight UTC); then the new day's counter gets it back instead (never below 0).
   */
  refund(r: Refund): Promise<void> {
    const ledger = this.known(r.account);
    if (!ledger) return Promise.resolve();
    ledger.topup += r.fromTopup;
    const amount = r.amount - r.fromTopup;
    if (amount > 0) {
      const id = r.periodId;
      const daily = id.startsWith('d');
      // A monthly debit's day: its decision's, when the refund names it (its usage row).
      const debitDay = r.usage === undefined ? undefined : periodWindow('daily', r.usage.nowMs).id;
      const toDay = daily ? ledger.day === id : inMonth(ledger.day, id) && (debitDay === undefined || debitDay === ledger.day);
      const toMonth = daily ? inMonth(id, ledger.month) : ledger.month === id;
      if (toDay) ledger.daySpent = Math.max(ledger.daySpent - amount, 0);
      if (toMonth) ledger.monthSpent = Math.max(ledger.monthSpent - amount, 0);
    }
    if (this.persistence) this.dirty.add(r.account);
    const usage = this.usage;
    const u = r.usage;
    if (usage !== undefined && u !== undefined) usage.bill(u.nowMs, u.keyId, u.account ?? '', u.chain, u.route, -r.amount);
    return Promise.resolve();
  }

  async topUp(account: string, amount: number): Promise<number> {
    return (await this.adjustTopUp(account, amount)).after;
  }

  /** Changes bought credits by `delta`; refused (TopUpBelowZero) below zero. Written before the answer (change). */
  async adjustTopUp(account: string, delta: number): Promise<{ before: number; after: number }> {
    checkTopUpDelta(delta);
    return this.change({ account, deltaOf: () => delta });
  }

  /** Sets bought credits to `value`: the change is `value` less what the account has at the moment of change. */
  async setTopUp(account: string, value: number): Promise<{ before: number; after: number }> {
    checkTopUpValue(value);
    return this.change({ account, deltaOf: (topup) => value - topup });
  }

  /**
   * Applies a change of bought credits. Without a ledger store, at once: nothing here awaits, so
   * the floor is checked against what the account has when it changes. With one, the change is
   * made by the write that carries it (write): one write at a time, so changes never interleave.
   */
  private async change(c: TopUpChange): Promise<{ before: number; after: number }> {
    if (!this.persistence) {
      const ledger = this.topupLedger(c.account);
      const before = ledger.topup;
      const delta = c.deltaOf(before);
      if (before + delta < 0) throw new TopUpBelowZero(before, delta);
      ledger.topup += delta;
      return { before, after: ledger.topup };
    }
    if (!this.stored) {
      await this.load().catch((err: unknown) => {
        throw new Error(`bought credits cannot be recorded while the ledger store is away: ${(err as Error).message}`, { cause: err });
      });
    }
    const done = await this.write(c);
    // Unreachable: the ledger store was read above, and a write with a change always answers.
    if (done === undefined) throw new Error('bought credits were not recorded');
    return done;
  }

  /** The account's ledger for a change of bought credits: one without decisions yet gets its day and month with its first. */
  private topupLedger(account: string): Ledger {
    let ledger = this.known(account);
    if (!ledger) {
      ledger = { day: '', daySpent: 0, month: '', monthSpent: 0, topup: 0 };
      this.ledgers.set(account, ledger);
    }
    return ledger;
  }

  balance(account: string, period: Period, nowMs: number): Promise<Balance> {
    const ledger = this.known(account);
    const { id: periodId } = periodWindow(period, nowMs);
    if (!ledger) return Promise.resolve({ spent: 0, topup: 0, periodId });
    let spent = 0;
    if (period === 'daily') spent = ledger.day === periodId ? ledger.daySpent : 0;
    else spent = ledger.month === periodId ? ledger.monthSpent : 0;
    return Promise.resolve({ spent, topup: ledger.topup, periodId });
  }

  /**
   * Writes the ledgers changed since the last write, after any write on its way (so that a
   * top-up's write carries its own change). Rejects when the store did; the rows stay changed,
   * for the next write.
   */
  async flush(): Promise<void> {
    await this.write(undefined);
  }

  /**
   * flush, and with a change of bought credits, makes the change with this write: after the write
   * before it (so changes of bought credits are made one at a time, each with its own write) and
   * in the same synchronous step as its rows are taken, the floor checked against what the account
   * has then. What is taken away is taken at once, so that no decision spends it while the write
   * is on its way, and given back (exactly what was taken) if the write fails; what is added is
   * written first and spendable once the write succeeded, so that nothing is spent of credits the
   * store may not hold. Either way the change is in memory by the time any later write takes its
   * rows, and answered only once written. Resolves with the change's before and after.
   */
  private async write(change: TopUpChange | undefined): Promise<{ before: number; after: number } | undefined> {
    const persistence = this.persistence;
    // Nothing is written over stored ledgers not read yet: they would be lost.
    if (!persistence || !this.stored) return undefined;
    while (this.writing) await this.writing.catch(() => undefined);
    let made: { ledger: Ledger; name: string; delta: number; before: number } | undefined;
    if (change !== undefined) {
      const ledger = this.topupLedger(change.account);
      const before = ledger.topup;
      const delta = change.deltaOf(before);
      if (before + delta < 0) throw new TopUpBelowZero(before, delta);
      if (delta < 0) ledger.topup += delta;
      this.dirty.add(change.account);
      made = { ledger, name: this.rowName(change.account), delta, before };
    }
    const usage = this.usage;
    if (this.dirty.size === 0 && !usage?.waiting) return undefined;
    const accounts = [...this.dirty];
    this.dirty.clear();
    const rows = accounts.flatMap((account) => {
      const l = this.ledgers.get(account);
      return l
        ? [{ account: this.rowName(account), day: l.day, daySpent: l.daySpent, month: l.month, monthSpent: l.monthSpent, topup: l.topup }]
        : [];
    });
    // Credits added are written before they are spendable.
    if (made !== undefined && made.delta > 0) for (const row of rows) if (row.account === made.name) row.topup += made.delta;
    // Taken in the same synchronous step as the ledger rows: both as of the same instant.
    const write = usage ? persistence.saveLedgersAndUsage!(rows, usage.takeBatches()) : persistence.saveLedgers(rows);
    this.writing = write;
    try {
      await write;
      // Before `writing` is cleared: the next write's rows have the credits added.
      if (made !== undefined && made.delta > 0) made.ledger.topup += made.delta;
      usage?.settle();
    } catch (err) {
      // Before `writing` is cleared: the next write's rows have the credits taken given back.
      if (made !== undefined && made.delta < 0) made.ledger.topup -= made.delta;
      for (const account of accounts) this.dirty.add(account);
      usage?.settle(err);
      throw err;
    } finally {
      this.writing = undefined;
    }
    return made === undefined ? undefined : { before: made.before, after: made.before + made.delta };
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.load().catch(() => undefined);
    await this.flush();
  }
}
