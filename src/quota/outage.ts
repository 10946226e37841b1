// What a process decides alone while the quota store (Redis) cannot answer and `redis.onError`
// is `open` (issue 42, item 4): serving is not free and unlimited. Each process keeps, per
// account, its own rate window at the plan's rps and a local allowance of credits, and what it
// served is billed in Redis once Redis answers again, under an id that bills it once however
// often it is sent (redis-scripts.ts, CHARGE_LUA).
//
// The bound an outage can cost, per account and per process (docs/operator-guide.md, "When Redis
// is away"): requests at most the plan's rps; credits served at most the allowance, a share
// (`redis.outageShare`) of the balance this process last saw for the account, or of the plan's
// credits when it saw none. Everything served is billed when Redis is back, so usage stays exact;
// what the outage can cost is what the account did not have: at most the allowances of the
// processes that served it. A process killed during the outage loses what it had not billed yet,
// at most its allowances.
//
// Pure logic on the decision's clock; the flush timer lives in step.ts.
import { periodWindow, type Period } from './period.js';
import type { QuotaDecision, QuotaQuery, UsageRowRef } from './types.js';
import { resetMsFrom, windowHoldsFrom } from './window.js';

/** Credits one process served an account in one period, one UTC hour: billed together. */
export interface Charge {
  /** Bills the charge once, however often it is sent. */
  id: string;
  account: string;
  period: Period;
  periodId: string;
  /** The plan's credits per period: what the allowance holds before bought credits are taken. */
  planCredits: number;
  /** An instant of the hour the credits were served in (their usage credits' day and hour). */
  atMs: number;
  /** Credits by usage row. */
  rows: { keyId: string; usageAccount: string; chain: string; route: string; credits: number }[];
}

/** What bills a charge in the store (quota/redis.ts); rejects when the store cannot answer. */
export interface Charger {
  /** Resolves with what the account did not have (`overdraft`: served beyond its balance). */
  charge(c: Charge): Promise<{ overdraft: number }>;
  /** The balance this process last saw for the account, if it saw one. */
  knownBalance(account: string): number | undefined;
}

interface Standing {
  windowStartMs: number;
  count: number;
  /** Credits this process may serve the account while the store is away. */
  allowance: number;
  /** Of the allowance, what was served or is being served. */
  used: number;
  /** Requests decided here whose answer is not settled yet. */
  open: number;
}

export class OutageBook {
  private readonly standing = new Map<string, Standing>();
  /** Charges not billed yet, by account, period and hour; sent ones keep their id until billed. */
  private readonly open = new Map<string, Charge>();
  private readonly sending = new Map<string, Charge>();
  private ids = 0;

  constructor(
    private readonly charger: Charger,
    /** `redis.outageShare`: the share of the balance (or of the plan's credits) an outage may serve. */
    private readonly share: number,
    private readonly idPrefix: string,
  ) {}

  /** Decides one request here, as the store would, against the local window and allowance. */
  decide(q: QuotaQuery): QuotaDecision {
    let s = this.standing.get(q.account);
    if (s === undefined) {
      const known = this.charger.knownBalance(q.account);
      s = { windowStartMs: q.nowMs, count: 0, allowance: Math.floor(this.share * Math.max(known ?? q.credits, 0)), used: 0, open: 0 };
      this.standing.set(q.account, s);
    }
    if (!windowHoldsFrom(s.windowStartMs, q.nowMs)) {
      s.windowStartMs = q.nowMs;
      s.count = 0;
    }
    const periodId = periodWindow(q.period, q.nowMs).id;
    const base = { rateResetMs: resetMsFrom(s.windowStartMs, q.nowMs), fromTopup: 0, periodId, local: true as const };
    s.count++;
    if (s.count > q.rps) return { ...base, outcome: 'rate_limited', rateRemaining: 0, credits: s.allowance - s.used, billed: 0 };
    const left = s.allowance - s.used;
    if (q.cost > left) return { ...base, outcome: 'out_of_credits', rateRemaining: q.rps - s.count, credits: left, billed: 0 };
    s.used += q.cost;
    if (q.cost > 0) s.open++;
    return { ...base, outcome: 'ok', rateRemaining: q.rps - s.count, credits: left - q.cost, billed: q.cost };
  }

  /**
   * Settles a local decision once its answer is out: `charged` of the `billed` credits are owed
   * (usage row `usage`), the rest go back to the allowance.
   */
  settle(q: { account: string; period: Period; credits: number }, billed: number, charged: number, usage: UsageRowRef | undefined): void {
    const s = this.standing.get(q.account);
    if (s !== undefined) {
      s.used -= billed - charged;
      s.open--;
    }
    if (charged <= 0) return;
    const at = usage?.nowMs ?? 0;
    const periodId = periodWindow(q.period, at).id;
    const hour = Math.floor(at / 3_600_000);
    const slot = `${q.account}\n${periodId}\n${hour}`;
    let c = this.open.get(slot);
    if (c === undefined) {
      c = { id: '', account: q.account, period: q.period, periodId, planCredits: q.credits, atMs: at, rows: [] };
      this.open.set(slot, c);
    }
    const keyId = usage?.keyId ?? '';
    const usageAccount = usage?.account ?? '';
    const chain = usage?.chain ?? '';
    const route = usage?.route ?? '';
    const row = c.rows.find((r) => r.keyId === keyId && r.usageAccount === usageAccount && r.chain === chain && r.route === route);
    if (row !== undefined) row.credits += charged;
    else c.rows.push({ keyId, usageAccount, chain, route, credits: charged });
  }

  /** Credits served here and not billed in the store yet. */
  owed(): number {
    let sum = 0;
    for (const c of [...this.open.values(), ...this.sending.values()]) for (const r of c.rows) sum += r.credits;
    return sum;
  }

  /** Whether anything is owed or decided here and unsettled. */
  busy(): boolean {
    return this.open.size > 0 || this.sending.size > 0 || this.standing.size > 0;
  }

  /**
   * Sends what is owed. A charge keeps its id until the store took it, so a reply lost and the
   * charge sent again bills once. Resolves with whether everything owed was billed.
   */
  async flush(): Promise<{ done: boolean; billed: number; overdraft: number }> {
    for (const [slot, c] of this.open) {
      c.id = `${this.idPrefix}.o${(this.ids++).toString(36)}`;
      this.sending.set(c.id, c);
      this.open.delete(slot);
    }
    let billed = 0;
    let overdraft = 0;
    const sent = [...this.sending.values()].map((c) =>
      this.charger.charge(c).then(
        (r) => {
          this.sending.delete(c.id);
          for (const row of c.rows) billed += row.credits;
          overdraft += r.overdraft;
          return true;
        },
        () => false,
      ),
    );
    const results = await Promise.all(sent);
    return { done: results.every(Boolean) && this.open.size === 0, billed, overdraft };
  }

  /**
   * The store answers again: allowances end with the outage (a later one starts from the balance
   * seen then). Accounts with a local decision still open keep theirs until it settles.
   */
  recovered(): void {
    for (const [account, s] of this.standing) if (s.open <= 0) this.standing.delete(account);
  }
}
