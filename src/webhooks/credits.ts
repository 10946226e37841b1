// When a key's period credits cross 80 % and 100 % (`credits.threshold`), and when a request is
// refused for want of credits (`credits.exhausted`): once per period and counters (a key's own,
// or its account's, which all its keys share).
//
// On the request path this costs a map lookup: a billed decision's balance (QuotaDecision.credits,
// what the client sees) is compared with the balance at which the next threshold is crossed, as
// the last check computed it. Only when it is reached (or the period changed, or a minute passed,
// since bought credits added meanwhile move it) are the counters read, off the request path and at
// most once a second each, from the quota store (QuotaStore.balance: what every process spent), and
// the thresholds they passed told. With Redis, credits a process leased and has not spent yet
// count as spent there (quota/redis.ts), so a threshold may be told up to a lease early.
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { ApiKey } from '../keys/ring.js';
import type { QuotaDecision, QuotaStore } from '../quota/types.js';
import { exhaustedEvent, thresholdEvent, THRESHOLDS, type EventKey } from './events.js';
import type { WebhookEmitter } from './emitter.js';

/** How often the counters marked for a check are read. */
export const CHECK_MS = 1_000;
/** A watched account is read again after this long whatever its balance (bought credits move the mark). */
const RECHECK_MS = 60_000;
/** Counters read per check at most: the rest wait for the next one. */
const CHECKS_PER_ROUND = 500;

interface Watch {
  periodId: string;
  /** The balance at or below which the next threshold is crossed; -Infinity once all are. */
  checkBelow: number;
  checkedAt: number;
  /** The period whose exhaustion was told. */
  exhausted: string;
}

export function eventKey(key: ApiKey): EventKey {
  return { id: key.id, name: key.name, plan: key.planName, account: key.account.startsWith('acc_') ? key.account : null };
}

export class CreditAlerts {
  private readonly watches = new LRUCache<string, Watch>({ max: 100_000 });
  /** Counters to read, with the key whose request marked them. */
  private readonly due = new Map<string, ApiKey>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly emitter: WebhookEmitter,
    private readonly quota: Pick<QuotaStore, 'balance'>,
    private readonly now: () => number,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  /** A request's decision, when it ended (request/finish.ts): a map lookup unless a threshold may be near. */
  decided(key: ApiKey, d: QuotaDecision, status: number, nowMs: number): void {
    if (key.plan.credits <= 0) return;
    // peek: no recency update on the request path; a watch is set again at each of its checks.
    const w = this.watches.peek(key.account);
    if (status === 402 && d.outcome === 'out_of_credits') {
      if (w?.exhausted === d.periodId) return;
      if (w) w.exhausted = d.periodId;
      else this.watches.set(key.account, { periodId: d.periodId, checkBelow: Infinity, checkedAt: 0, exhausted: d.periodId });
      this.emitter.emit(exhaustedEvent(eventKey(key), key.account, d.periodId, nowMs, d.credits));
      return;
    }
    if (d.billed <= 0) return;
    if (w !== undefined && w.periodId === d.periodId && d.credits > w.checkBelow && nowMs - w.checkedAt < RECHECK_MS) return;
    this.due.set(key.account, key);
  }

  /** Reads the counters marked since the last check and tells the thresholds they crossed. */
  check(): Promise<void> {
    this.checking ??= this.round().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async round(): Promise<void> {
    const batch = [...this.due].slice(0, CHECKS_PER_ROUND);
    for (const [account] of batch) this.due.delete(account);
    await Promise.all(batch.map(([account, key]) => this.checkOne(account, key)));
  }

  private async checkOne(account: string, key: ApiKey): Promise<void> {
    const now = this.now();
    const credits = key.plan.credits;
    let b;
    try {
      b = await this.quota.balance(account, key.plan.period, now);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, keyId: key.id }, 'could not read the credits of a key for its webhooks; trying again');
      this.due.set(account, key);
      return;
    }
    let next: number | undefined;
    for (const percent of THRESHOLDS) {
      const mark = (credits * percent) / 100;
      if (b.spent >= mark) {
        const remaining = Math.max(credits - b.spent, 0) + b.topup;
        this.emitter.emit(thresholdEvent(eventKey(key), account, b.periodId, percent, now, { credits, spent: b.spent, remaining }));
      } else {
        next ??= mark;
      }
    }
    const w = this.watches.get(account);
    this.watches.set(account, {
      periodId: b.periodId,
      // The balance is the allowance left and the bought credits: at the mark, credits - mark of the allowance is left.
      checkBelow: next === undefined ? -Infinity : credits - next + b.topup,
      checkedAt: now,
      exhausted: w?.exhausted ?? '',
    });
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
