// Redis quota store: the rate window and the credit balance of a key are decided by one Lua
// script, registered once (EVALSHA), so a decision is one atomic round trip shared by every
// gateway process; decisions of one event-loop turn share that round trip. The keys of one
// decision share the hash tag {<account>}, so the script also runs on Redis Cluster.
//
// Time comes from the decision, never from the Redis server's clock: the window's start is an
// instant of the decision's clock, and every expiry is relative (PEXPIRE with the time left, as
// the decision's clock sees it). A gateway host whose clock differs from Redis's, or a test that
// hands in an instant of another year, gets the same answers as the in-process store.
//
// Why not rate-limiter-flexible's RateLimiterRedis here: its script takes one key and fixed
// arguments, so the credit decision would be a second round trip, or a non-atomic one; and it
// reads the window from Redis's clock. The window of redis-scripts.ts is window.ts in Lua.
//
// Leases: a round trip per request (or per turn) made a hit on Redis cost 0.6 of a bare route,
// the process idling while Redis decided (bench/results/2026-11-23-targets.md). So a process that
// keeps deciding for one account is granted a lease by the same script: request slots of the
// current window, counted at once, and a reservation of credits, which other processes cannot
// take. It hands them out locally, in the order and with the headers the script would have
// given, until they run out, the window ends or the period does; its next call settles the lease
// (bills what it spent, releases the rest) and asks for a larger one (Doorman's and Envoy's
// quota leases are the same idea). Billing happens at settlement and only while Redis still
// holds the reservation, so a settlement sent twice bills once; a reservation nobody settles (a
// call whose reply was lost, a crashed process) lapses LEASE_GRACE_MS after its window, and its
// credits are free again. Credits are never taken beyond the balance nor twice. A lease is
// granted only while the window and the balance keep LEASE_SHARE times of it and it covers
// LEASE_MIN_REQUESTS requests, so a key near a limit is decided request by request, exactly, by
// every process. What it costs: until a lease is settled (a second or two), other processes see
// its reservation as spent, and one of them may refuse a request for credits the lease will
// release. `redis.leases: false` turns leases off.
//
// Corrections of bought credits (adjustTopUp, setTopUp) and leases: the bought credits a live
// lease holds are not available to take away (its process may have spent them, and its
// settlement bills them). A correction that takes credits away first settles this process's lease
// of the account and recalls the others' (recall.ts), so that what they hold is billed or released
// before it; what a lease still holds then (a process that did not answer in time) is left out of
// its reach: a change refused below what is not held, a set of what is not held (redis-scripts.ts,
// ADJUST_TOPUP_LUA).
//
// This file is the store: it batches the decisions of a turn, sends them, keeps each account's
// lease and settles it, and retries the settlements Redis did not take. The key names are in
// redis-keys.ts, the scripts with their arguments and replies in redis-scripts.ts, and the
// leases' own logic, pure, in lease.ts.
import type { RedisClient } from '../redis/client.js';
import { periodWindow, twinWindow, windowOfId, type Period, type PeriodWindow } from './period.js';
import {
  covers,
  emptyLease,
  giveBack,
  LEASE_GRACE_MS,
  LEASE_SWEEP_MS,
  leaseDeadlineMs,
  leaseOver,
  renew,
  settlement,
  spend,
  wantedSlots,
  type Grant,
  type Lease,
  type Settlement,
} from './lease.js';
import { DAY_MS, utcDay } from '../store/day.js';
import { CALL_RECORD_MS, CHARGE_MARKER_MS, creditKeyTtlMs, QuotaKeys, RATE_KEY_TTL_MS, usageCreditField, usageHour } from './redis-keys.js';
import { encodeUsage, QuotaScripts, type ChargeReply, type DecideReply } from './redis-scripts.js';
import type { Charge } from './outage.js';
import { RECALL_HOLD_MS, RecallChannel } from './recall.js';
import type { UsageQuery, UsageRow } from '../store/types.js';
import {
  checkTopUpDelta,
  checkTopUpValue,
  TopUpBelowZero,
  type Balance,
  type QuotaDecision,
  type QuotaQuery,
  type QuotaStore,
  type Refund,
  type SeparateUsageCredits,
} from './types.js';
import { listUsageCredits, pruneUsageCredits } from './usage-credits.js';
import { RATE_WINDOW_MS } from './window.js';

export { LEASE_GRACE_MS, LEASE_MAX_REQUESTS, LEASE_MIN_REQUESTS, LEASE_SHARE, LEASE_SWEEP_MS } from './lease.js';
export { CALL_RECORD_MS, CREDIT_KEY_GRACE_MS, RATE_KEY_TTL_MS } from './redis-keys.js';
export { RECALL_HOLD_MS, RECALL_WAIT_MS } from './recall.js';

/** Names this store's leases apart from other processes' (the lease ids in Redis). */
let stores = 0;

/** Requests of one account (and plan and period) waiting for the same script call. */
interface Batch {
  /** The first request's query: its clock reading stands for the batch (one event-loop turn). */
  query: QuotaQuery;
  period: PeriodWindow;
  costs: number[];
  /** Each request's usage row (redis-keys.ts, usageCreditField; '' for none). */
  fields: string[];
  waiters: { resolve: (d: QuotaDecision) => void; reject: (e: unknown) => void }[];
  /** Requests decided again after a recall: the slots the refusing call counted, given back; no second recall. */
  redo?: { windowStartMs: number; slots: number };
}

/** A decision call whose reply was lost: voided (redis-scripts.ts, VOID_LUA) once Redis answers. */
interface Void {
  account: string;
  callId: string;
  periodId: string;
  /** The twin period the call's debit also counted in (period.ts). */
  twinId: string;
  leaseId: string;
  /** The call's day and hour: the usage credits it counted in. */
  day: string;
  hour: string;
}

/** A refund Redis has not taken yet: sent again, under its id, until it does. */
interface OwedRefund {
  refund: Refund;
  id: string;
  /** The twin period its debit also counted in (period.ts). */
  twinId: string;
}

/** The twin period a lease's spending counts in: that of its window's start (a lease lives one window). */
function settlementTwin(s: Settlement): PeriodWindow {
  return twinWindow({ id: s.periodId, startMs: s.periodStartMs, endMs: s.periodEndMs }, s.windowStartMs);
}

export interface RedisQuotaOptions {
  /** Decide locally from leases (the file's head); default true. */
  leases?: boolean;
  /** The clock of the lease sweep and of recalls' holds; decisions bring their own. */
  now?: () => number;
  /**
   * A connection for the recall channel (recall.ts): a process about to refuse a request for
   * credits other processes' leases hold asks them to settle first. Without it, no recall.
   */
  subscriber?: () => RedisClient;
  /** How many days usage credits are kept after their day ends (`usage.retentionDays`); default 400. */
  retentionDays?: number;
  /** How many days hourly usage credits are kept after their day ends (`usage.hourlyRetentionDays`); default 35. */
  hourlyRetentionDays?: number;
}

export class RedisQuotaStore implements QuotaStore, SeparateUsageCredits {
  readonly kind = 'redis';
  /** Where the store keeps each account (redis-keys.ts). */
  readonly keys: QuotaKeys;
  private readonly scripts: QuotaScripts;
  private readonly pending = new Map<string, Batch>();
  private flushScheduled = false;
  private readonly leasing: boolean;
  private readonly leases = new Map<string, Lease>();
  /** Requests that arrived while their account's call was on its way, by account. */
  private readonly waiting = new Map<string, { query: QuotaQuery; resolve: (d: QuotaDecision) => void; reject: (e: unknown) => void }[]>();
  /** Settlements Redis has not taken yet (it failed): retried by the sweep. */
  private owed: Settlement[] = [];
  /** Decision calls whose reply was lost, to void; refunds Redis did not take: retried by the sweep. */
  private voids: Void[] = [];
  private refunds: OwedRefund[] = [];
  /** Of those, how many the sweep is sending now. */
  private sending = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly storeId = `${process.pid.toString(36)}.${Date.now().toString(36)}.${(stores++).toString(36)}`;
  private leaseIds = 0;
  private callIds = 0;
  private refundIds = 0;
  private closed = false;
  private readonly recalls: RecallChannel | undefined;
  /** Accounts recalled lately: no lease for them until the instant kept here (recall.ts). */
  private readonly holds = new Map<string, number>();
  /** The clock of the last decision: a refund's day (refund). */
  private lastDecisionMs = 0;
  /** Accounts this process is recalling leases of, and what waits for an account's call to be answered. */
  private readonly recalling = new Set<string>();
  private readonly answered = new Map<string, (() => void)[]>();
  private readonly retentionMs: number;
  private readonly hourlyRetentionMs: number;
  /** The accounts this process added to the day's usage accounts (indexUsage), and that day. */
  private indexed = new Set<string>();
  private indexedDay = '';
  /** The balance each account's last call left (knownBalance), for the allowance of an outage (outage.ts). */
  private readonly balances = new Map<string, number>();

  constructor(
    private readonly client: RedisClient,
    prefix: string,
    options: RedisQuotaOptions = {},
  ) {
    this.keys = new QuotaKeys(prefix);
    this.scripts = new QuotaScripts(client);
    this.leasing = options.leases ?? true;
    this.now = options.now ?? Date.now;
    this.retentionMs = (options.retentionDays ?? 400) * DAY_MS;
    this.hourlyRetentionMs = (options.hourlyRetentionDays ?? 35) * DAY_MS;
    this.recalls = options.subscriber && new RecallChannel(client, options.subscriber, this.keys.recallChannel(), this.recalled);
    // Leases are taken only once this process hears recalls (send): subscribe from the start.
    if (this.leasing) void this.recalls?.listen();
  }

  /** Resolves once this process hears recalls (at once without a recall channel): from then on it takes leases. */
  async hearsRecalls(): Promise<boolean> {
    return this.recalls === undefined ? true : this.recalls.listen();
  }

  /** Another process is about to refuse a request of the account: settle its lease now, and take none for a while. */
  private readonly recalled = async (account: string): Promise<void> => {
    this.holds.set(account, this.now() + RECALL_HOLD_MS);
    // A call of the account on its way may bring a lease: it is settled as it arrives (install),
    // before this process answers the recall (one connection: Redis runs the two in order).
    if (this.waiting.has(account) && !this.recalling.has(account)) {
      await new Promise<void>((resolve) => {
        const list = this.answered.get(account);
        if (list) list.push(resolve);
        else this.answered.set(account, [resolve]);
      });
    }
    const lease = this.leases.get(account);
    if (lease === undefined) return;
    this.leases.delete(account);
    await this.sendSettlement(settlement(lease));
  };

  /** Whether the account was recalled lately (no lease for it). */
  private held(account: string): boolean {
    const until = this.holds.get(account);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.holds.delete(account);
    return false;
  }

  /**
   * A connection lost may be a Redis that lost its data: stop deciding locally, and settle every
   * lease once Redis answers again (billed only if Redis still holds its reservation).
   */
  private readonly connectionLost = (): void => void this.retire(Number.POSITIVE_INFINITY);

  /**
   * A request its account's lease covers is decided here and now, with no round trip. The others
   * that arrive in one event-loop turn are sent together, one script call per key (setImmediate
   * runs after the turn's I/O callbacks): a burst on one key becomes one atomic call. With leases,
   * those that arrive while the key's call is on its way wait for it.
   */
  decide(q: QuotaQuery): QuotaDecision | Promise<QuotaDecision> {
    this.lastDecisionMs = q.nowMs;
    const lease = this.leasing ? this.leases.get(q.account) : undefined;
    if (lease !== undefined && covers(lease, q)) return spend(lease, q);
    // While a call for the account is on its way, the next requests wait for its lease rather
    // than ask for another: one reservation per account and process at a time.
    const waiting = this.leasing ? this.waiting.get(q.account) : undefined;
    if (waiting !== undefined) return new Promise((resolve, reject) => waiting.push({ query: q, resolve, reject }));
    const period = periodWindow(q.period, q.nowMs);
    const id = `${q.account}|${period.id}|${q.rps}|${q.credits}`;
    let batch = this.pending.get(id);
    if (!batch) {
      batch = { query: q, period, costs: [], fields: [], waiters: [] };
      this.pending.set(id, batch);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    }
    batch.costs.push(q.cost);
    batch.fields.push(
      q.keyId === undefined || q.cost === 0 ? '' : usageCreditField(q.keyId, q.chain ?? 'none', q.route ?? 'none', q.usageAccount ?? ''),
    );
    return new Promise((resolve, reject) => batch.waiters.push({ resolve, reject }));
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const batches = [...this.pending.values()];
    this.pending.clear();
    for (const b of batches) this.send(b);
  };

  private send(b: Batch): void {
    const q = b.query;
    const a = q.account;
    const lease = this.leasing ? this.leases.get(a) : undefined;
    // The lease rides along to be settled before the batch is decided; a new one is asked for,
    // larger, if this process keeps deciding for the account.
    const back = lease === undefined ? undefined : settlement(lease);
    // No lease before this process hears recalls: another process could not ask it to settle, and
    // would refuse requests the lease's credits could pay (issue 42, item 9).
    const listening = this.recalls === undefined || this.recalls.listening;
    const want = this.leasing && listening && !this.closed && !this.held(a) ? wantedSlots(lease, b.costs.length, q.nowMs) : 0;
    const leaseId = want > 0 ? `${this.storeId}.${(this.leaseIds++).toString(36)}` : '';
    const backPeriod = back?.periodId ?? b.period.id;
    // Every debit of the allowance counts in the day's and the month's counter (period.ts, twinWindow).
    const twin = twinWindow(b.period, q.nowMs);
    const backTwin = back === undefined ? twin : settlementTwin(back);
    const callId = `${this.storeId}.${(this.callIds++).toString(36)}`;
    const day = utcDay(q.nowMs);
    const hour = usageHour(q.nowMs);
    const backDay = back?.day || day;
    this.indexUsage(a, day);
    if (this.leasing && !this.waiting.has(a)) this.waiting.set(a, []);
    this.scripts
      .decide(
        {
          windowKey: this.keys.rate(a),
          creditsKey: this.keys.credits(a, b.period.id),
          twinCreditsKey: this.keys.credits(a, twin.id),
          topupKey: this.keys.topup(a),
          reservationsKey: this.keys.reservations(a, b.period.id),
          backCreditsKey: this.keys.credits(a, backPeriod),
          backTwinCreditsKey: this.keys.credits(a, backTwin.id),
          backReservationsKey: this.keys.reservations(a, backPeriod),
          callKey: this.keys.call(a, callId),
          usageKey: this.keys.usageCredits(a, day),
          backUsageKey: this.keys.usageCredits(a, backDay),
          usageHourKey: this.keys.usageHourCredits(a, day),
          backUsageHourKey: this.keys.usageHourCredits(a, backDay),
        },
        {
          nowMs: q.nowMs,
          rps: q.rps,
          windowMs: RATE_WINDOW_MS,
          rateKeyTtlMs: RATE_KEY_TTL_MS,
          planCredits: q.credits,
          creditKeyTtlMs: creditKeyTtlMs(b.period.endMs, q.nowMs),
          twinKeyTtlMs: creditKeyTtlMs(twin.endMs, q.nowMs),
          backTwinKeyTtlMs: creditKeyTtlMs(backTwin.endMs, q.nowMs),
          wantSlots: want,
          backWindowStartMs: back?.windowStartMs ?? 0,
          backSlots: back?.slots ?? 0,
          backId: back?.id ?? '',
          backAllowance: back?.allowance ?? 0,
          backTopup: back?.topup ?? 0,
          leaseId,
          leaseDeadlineMs: leaseDeadlineMs(q.nowMs),
          callRecordMs: CALL_RECORD_MS,
          usageTtlMs: this.usageTtlMs(day, q.nowMs),
          backUsageTtlMs: this.usageTtlMs(backDay, q.nowMs),
          usageHour: hour,
          backUsageHour: back?.hour || hour,
          usageHourTtlMs: this.usageHourTtlMs(day, q.nowMs),
          backUsageHourTtlMs: this.usageHourTtlMs(backDay, q.nowMs),
          backUsage: back === undefined ? '' : encodeUsage(back.usage),
          redoWindowStartMs: b.redo?.windowStartMs ?? 0,
          redoSlots: b.redo?.slots ?? 0,
          costs: b.costs,
          fields: b.fields,
        },
      )
      .then(
        (reply) => this.answer(b, leaseId, reply),
        (err: unknown) => {
          // The call may still have run (a reply lost): its settlement is sent again, and bills
          // nothing the second time. Its requests are answered as the store failing (nothing
          // billed: redis.onError), so the call is voided: what it billed is given back and the
          // lease it granted dropped, or, if Redis has not run it yet, it will do nothing. No
          // lease is trusted until Redis answers again.
          if (back !== undefined) this.owed.push(back);
          void this.sendVoid({ account: a, callId, periodId: b.period.id, twinId: twin.id, leaseId, day, hour });
          this.retire(Number.POSITIVE_INFINITY);
          for (const w of b.waiters) w.reject(err);
          this.release(a);
        },
      );
  }

  /**
   * Answers the batch's requests from the script's reply, and keeps the lease it granted. Requests
   * refused for credits while other leases hold some are not answered yet: those leases are
   * recalled and the requests decided again (recall.ts).
   */
  private answer(b: Batch, leaseId: string, reply: DecideReply): void {
    const q = b.query;
    const recall =
      this.recalls !== undefined && b.redo === undefined && reply.held > 0
        ? ({ costs: [], fields: [], waiters: [] } as Pick<Batch, 'costs' | 'fields' | 'waiters'>)
        : undefined;
    const last = reply.perRequest[reply.perRequest.length - 1];
    if (last !== undefined) this.balances.set(q.account, last.balance);
    b.waiters.forEach((w, i) => {
      const r = reply.perRequest[i];
      const outcome = r?.outcome ?? 'ok';
      if (outcome === 'out_of_credits' && recall !== undefined) {
        recall.costs.push(b.costs[i] ?? 0);
        recall.fields.push(b.fields[i] ?? '');
        recall.waiters.push(w);
        return;
      }
      w.resolve({
        outcome,
        rateRemaining: Math.max(q.rps - (r?.position ?? 0), 0),
        rateResetMs: r?.resetMs ?? 0,
        credits: r?.balance ?? 0,
        billed: outcome === 'ok' ? (b.costs[i] ?? 0) : 0,
        fromTopup: r?.fromTopup ?? 0,
        periodId: b.period.id,
      });
    });
    if (this.leasing) this.install(b, leaseId, reply.lease);
    if (recall === undefined || recall.waiters.length === 0) return this.release(q.account);
    // The account's later requests keep waiting (send() keeps its queue) until these are decided.
    const redo: Batch = {
      ...recall,
      query: q,
      period: b.period,
      redo: { windowStartMs: reply.lease.windowStartMs, slots: recall.costs.length },
    };
    if (this.leasing && !this.waiting.has(q.account)) this.waiting.set(q.account, []);
    this.recalling.add(q.account);
    void this.recalls!.recall(q.account).then(() => {
      this.recalling.delete(q.account);
      this.send(redo);
    });
  }

  /** Decides what waited for the account's call: from its lease, or in the next call. */
  private release(account: string): void {
    const answered = this.answered.get(account);
    if (answered !== undefined) {
      this.answered.delete(account);
      for (const resolve of answered) resolve();
    }
    const queued = this.waiting.get(account);
    if (queued === undefined) return;
    this.waiting.delete(account);
    for (const w of queued) {
      const d = this.decide(w.query);
      if (d instanceof Promise) d.then(w.resolve, w.reject);
      else w.resolve(d);
    }
  }

  /** Keeps what the script granted as the account's lease. */
  private install(b: Batch, leaseId: string, grant: Grant): void {
    const q = b.query;
    let lease = this.leases.get(q.account);
    if (lease === undefined) {
      lease = emptyLease(q.account, q, b.period.id, grant.windowStartMs);
      this.leases.set(q.account, lease);
      this.armSweeper();
    }
    // A lease another call was granted meanwhile is settled (renew): one reservation per lease.
    void this.sendSettlement(renew(lease, q, b.period, b.costs.length, grant, leaseId, q.nowMs));
    // Granted while a recall of the account was heard (the call was on its way): settled at once.
    if (this.closed || this.held(q.account)) void this.sendSettlement(settlement(lease));
  }

  /** Armed with the first lease or owed write: a store that never needs it keeps no timer and no listener. */
  private armSweeper(): void {
    if (this.sweeper !== undefined || this.closed) return;
    this.sweeper = setInterval(() => void this.sweep(this.now()), LEASE_SWEEP_MS).unref();
    this.client.on('close', this.connectionLost);
    // A process holding leases hears recalls from its first lease on.
    void this.recalls?.listen();
  }

  /** Voids a decision call whose reply was lost; kept for the next sweep while Redis cannot take it. */
  private sendVoid(v: Void): Promise<void> {
    return this.scripts
      .void(
        {
          callKey: this.keys.call(v.account, v.callId),
          creditsKey: this.keys.credits(v.account, v.periodId),
          twinCreditsKey: this.keys.credits(v.account, v.twinId),
          topupKey: this.keys.topup(v.account),
          reservationsKey: this.keys.reservations(v.account, v.periodId),
          usageKey: this.keys.usageCredits(v.account, v.day),
          usageHourKey: this.keys.usageHourCredits(v.account, v.day),
        },
        { leaseId: v.leaseId, usageHour: v.hour, callRecordMs: CALL_RECORD_MS },
      )
      .then(
        () => undefined,
        () => {
          this.voids.push(v);
          this.armSweeper();
        },
      );
  }

  /** Nothing to read before the first decision: every counter is in Redis. */
  async start(): Promise<void> {}

  /** The balance the account's last call in Redis left, if this process made one (outage.ts). */
  knownBalance(account: string): number | undefined {
    return this.balances.get(account);
  }

  /**
   * Bills what this process served while Redis was away (outage.ts), once per charge id: the
   * allowance first, then bought credits, the rest counted as spent; the usage credits of the
   * hour it was served in get all of it.
   */
  async charge(c: Charge): Promise<ChargeReply> {
    const period = periodWindow(c.period, c.atMs);
    const twin = twinWindow(period, c.atMs);
    const day = utcDay(c.atMs);
    const now = this.now();
    this.indexUsage(c.account, day);
    const usage = encodeUsage(c.rows.map((r) => [usageCreditField(r.keyId, r.chain, r.route, r.usageAccount), r.credits] as const));
    return this.scripts.charge(
      {
        creditsKey: this.keys.credits(c.account, period.id),
        twinCreditsKey: this.keys.credits(c.account, twin.id),
        topupKey: this.keys.topup(c.account),
        markerKey: this.keys.charge(c.account, c.id),
        usageKey: this.keys.usageCredits(c.account, day),
        usageHourKey: this.keys.usageHourCredits(c.account, day),
      },
      {
        planCredits: c.planCredits,
        creditKeyTtlMs: creditKeyTtlMs(period.endMs, now),
        twinKeyTtlMs: creditKeyTtlMs(twin.endMs, now),
        markerMs: CHARGE_MARKER_MS,
        usage,
        usageTtlMs: this.usageTtlMs(day, now),
        usageHour: usageHour(c.atMs),
        usageHourTtlMs: this.usageHourTtlMs(day, now),
      },
    );
  }

  /** Sends a refund under its id (applied once, however often it is sent). */
  private sendRefund(o: OwedRefund): Promise<void> {
    const r = o.refund;
    const u = r.usage;
    const at = u?.nowMs ?? this.lastDecisionMs;
    const field = u === undefined ? '' : usageCreditField(u.keyId, u.chain, u.route, u.account ?? '');
    return this.scripts
      .refund(
        {
          creditsKey: this.keys.credits(r.account, r.periodId),
          twinCreditsKey: this.keys.credits(r.account, o.twinId),
          topupKey: this.keys.topup(r.account),
          markerKey: this.keys.refund(r.account, o.id),
          usageKey: this.keys.usageCredits(r.account, utcDay(at)),
          usageHourKey: this.keys.usageHourCredits(r.account, utcDay(at)),
        },
        {
          toAllowance: r.amount - r.fromTopup,
          toTopup: r.fromTopup,
          markerMs: CALL_RECORD_MS,
          usageField: field,
          usageHourField: field === '' ? '' : `${usageHour(at)}|${field}`,
        },
      )
      .then(() => undefined);
  }

  /** When a day's usage credits expire: `usage.retentionDays` after the day ends. */
  private usageTtlMs(day: string, nowMs: number): number {
    return Math.max(Date.parse(`${day}T00:00:00Z`) + DAY_MS + this.retentionMs - nowMs, 1);
  }

  /** When a day's hourly usage credits expire: `usage.hourlyRetentionDays` after the day ends. */
  private usageHourTtlMs(day: string, nowMs: number): number {
    return Math.max(Date.parse(`${day}T00:00:00Z`) + DAY_MS + this.hourlyRetentionMs - nowMs, 1);
  }

  /**
   * Adds the account to the day's usage accounts, once a day per process, before the first call
   * that may bill it: sent first on the same connection, so Redis runs it first (on Redis Cluster
   * the set lives on another node; usage-credits.ts also finds an account from its keys).
   */
  private indexUsage(account: string, day: string): void {
    if (day !== this.indexedDay) {
      this.indexed = new Set();
      this.indexedDay = day;
    }
    if (this.indexed.has(account)) return;
    this.indexed.add(account);
    const key = this.keys.usageAccounts(day);
    const ttl = this.usageTtlMs(day, this.now());
    this.client
      .multi()
      .sadd(key, account)
      .pexpire(key, ttl)
      .exec()
      .catch(() => this.indexed.delete(account));
  }

  /** Sends a settlement (one without a reservation has nothing to bill); one Redis cannot take now is kept for the next sweep. */
  private sendSettlement(s: Settlement): Promise<void> {
    if (s.id === '') return Promise.resolve();
    const twin = settlementTwin(s);
    return this.scripts
      .settle(
        {
          creditsKey: this.keys.credits(s.account, s.periodId),
          twinCreditsKey: this.keys.credits(s.account, twin.id),
          topupKey: this.keys.topup(s.account),
          reservationsKey: this.keys.reservations(s.account, s.periodId),
          usageKey: this.keys.usageCredits(s.account, s.day),
          usageHourKey: this.keys.usageHourCredits(s.account, s.day),
        },
        {
          id: s.id,
          allowance: s.allowance,
          topup: s.topup,
          creditKeyTtlMs: creditKeyTtlMs(s.periodEndMs, this.now()),
          twinKeyTtlMs: creditKeyTtlMs(twin.endMs, this.now()),
          usage: encodeUsage(s.usage),
          usageTtlMs: this.usageTtlMs(s.day, this.now()),
          usageHour: s.hour,
          usageHourTtlMs: this.usageHourTtlMs(s.day, this.now()),
        },
      )
      .then(
        () => undefined,
        () => void this.owed.push(s),
      );
  }

  /** Retires every lease whose window is over at `nowMs` (all of them for +Infinity): its settlement is owed. */
  private retire(nowMs: number): void {
    for (const [account, lease] of this.leases) {
      if (!leaseOver(lease, nowMs)) continue;
      if (lease.id !== '') this.owed.push(settlement(lease));
      this.leases.delete(account);
    }
  }

  /**
   * Settles the leases of accounts that went quiet (a busy one settles with its next call) and
   * what Redis could not take before. Runs every LEASE_SWEEP_MS; a test calls it with the
   * instant it wants.
   */
  async sweep(nowMs: number): Promise<void> {
    this.retire(nowMs);
    // Holds of recalled accounts that ended, whether or not the account came back.
    const clock = this.now();
    for (const [account, until] of this.holds) if (clock >= until) this.holds.delete(account);
    const owed = this.owed;
    const voids = this.voids;
    const refunds = this.refunds;
    this.owed = [];
    this.voids = [];
    this.refunds = [];
    const sent = owed.length + voids.length + refunds.length;
    this.sending += sent;
    await Promise.all([
      ...owed.map((s) => this.sendSettlement(s)),
      ...voids.map((v) => this.sendVoid(v)),
      ...refunds.map((o) =>
        this.sendRefund(o).catch(() => {
          this.refunds.push(o);
        }),
      ),
    ]).finally(() => {
      this.sending -= sent;
    });
  }

  /** Accounts recalled lately, held from leases (recall.ts): forgotten by the sweep once their hold ends. */
  get recallHolds(): number {
    return this.holds.size;
  }

  /** Writes Redis has not taken yet: settlements, voids and refunds the sweep will send again, or is sending. */
  get pendingWrites(): number {
    return this.owed.length + this.voids.length + this.refunds.length + this.sending;
  }

  /**
   * A refund of a request this process's lease decided goes back into the lease (it is not billed
   * yet). Another is sent to Redis under an id of its own; one Redis cannot take now is kept and
   * sent again by the sweep until it can (applied once), and the caller hears of the failure.
   */
  async refund(r: Refund): Promise<void> {
    const lease = this.leases.get(r.account);
    if (lease !== undefined && giveBack(lease, r)) return;
    // A monthly debit counted in the day it was decided on: the decision's instant (its usage
    // row's), else the day of this store's last decision.
    const period = windowOfId(r.periodId);
    const twinId = period === undefined ? '-' : twinWindow(period, r.usage?.nowMs ?? this.lastDecisionMs).id;
    const owed = { refund: r, id: `${this.storeId}.${(this.refundIds++).toString(36)}`, twinId };
    try {
      await this.sendRefund(owed);
    } catch (err) {
      this.refunds.push(owed);
      this.armSweeper();
      throw err;
    }
    if (lease !== undefined) lease.free += lease.periodId === r.periodId ? r.amount : r.fromTopup;
  }

  async topUp(account: string, amount: number): Promise<number> {
    // Taking credits away is a correction: never below zero, nor below what leases hold.
    if (amount < 0) return (await this.adjustTopUp(account, amount)).after;
    const topup = await this.client.incrby(this.keys.topup(account), amount);
    const lease = this.leases.get(account);
    if (lease !== undefined) lease.free += amount;
    return topup - (lease === undefined ? 0 : lease.grantedTopup - lease.topup);
  }

  /**
   * Changes the account's bought credits by `delta`, atomically (one script call), or refuses with
   * a TopUpBelowZero and changes nothing when what no lease holds would go below zero (the file's
   * head). `before` and `after` are the bought credits no lease holds: all of them once the
   * account's leases are settled, as they are before credits are taken away.
   */
  async adjustTopUp(account: string, delta: number): Promise<{ before: number; after: number }> {
    checkTopUpDelta(delta);
    return this.correct(account, 'add', delta);
  }

  /** Sets the bought credits no lease holds to `value`, atomically (the file's head). */
  async setTopUp(account: string, value: number): Promise<{ before: number; after: number }> {
    checkTopUpValue(value);
    return this.correct(account, 'set', value);
  }

  private async correct(account: string, mode: 'add' | 'set', amount: number): Promise<{ before: number; after: number }> {
    // Adding takes nothing a lease holds: no settlement needed (as topUp).
    if (mode === 'set' || amount < 0) {
      // This process's lease first, whether or not the recall channel is there: settled, and
      // none taken for RECALL_HOLD_MS; then every other process's (each answers, or the recall's
      // wait ends).
      await this.recalled(account);
      await this.recalls?.recall(account);
    }
    const nowMs = this.now();
    // A lease lives one window and its grace: one granted that long before now, or stamped by a
    // clock that much ahead, may be kept under another day or month than now's.
    const span = RATE_WINDOW_MS + LEASE_GRACE_MS;
    const id = (period: Period, ms: number) => this.keys.reservations(account, periodWindow(period, ms).id);
    const reply = await this.scripts.adjustTopUp(
      {
        topupKey: this.keys.topup(account),
        dayBeforeKey: id('daily', nowMs - span),
        dayKey: id('daily', nowMs),
        dayAfterKey: id('daily', nowMs + span),
        monthBeforeKey: id('monthly', nowMs - span),
        monthKey: id('monthly', nowMs),
        monthAfterKey: id('monthly', nowMs + span),
      },
      { mode, amount, nowMs },
    );
    const before = Math.max(reply.before - reply.held, 0);
    if (reply.applied !== 1) throw new TopUpBelowZero(before, mode === 'set' ? amount - before : amount);
    const after = Math.max(reply.after - reply.held, 0);
    // A lease granted meanwhile: what it reports as left besides reservations moves with the change.
    const lease = this.leases.get(account);
    if (lease !== undefined) lease.free = Math.max(lease.free + reply.after - reply.before, 0);
    return { before, after };
  }

  /** The account's standing as this process sees it: what its own lease spent counts, not yet billed. */
  async balance(account: string, period: Period, nowMs: number): Promise<Balance> {
    const { id: periodId } = periodWindow(period, nowMs);
    // One slot: both keys share the account's hash tag.
    const [spent, topup] = await this.client.mget(this.keys.credits(account, periodId), this.keys.topup(account));
    const lease = this.leases.get(account);
    const own = lease !== undefined && lease.periodId === periodId ? lease.grantedAllowance - lease.allowance : 0;
    const ownTopup = lease === undefined ? 0 : lease.grantedTopup - lease.topup;
    return { spent: Number(spent ?? 0) + own, topup: Number(topup ?? 0) - ownTopup, periodId };
  }

  /** Settles every lease now (a usage report counts what they spent); the next calls take new ones. */
  settleLeases(): Promise<void> {
    return this.sweep(Number.POSITIVE_INFINITY);
  }

  /** The credits billed per usage row (usage-credits.ts). */
  usageCredits(q: UsageQuery, accounts?: readonly string[]): Promise<UsageRow[]> {
    return listUsageCredits(this.client, this.keys, q, accounts);
  }

  /** Forgets the usage credits of days before `beforeDay`, and the hourly ones of days before `hoursBeforeDay` (usage-credits.ts). */
  pruneUsageCredits(beforeDay: string, hoursBeforeDay: string): Promise<void> {
    return pruneUsageCredits(this.client, this.keys, beforeDay, hoursBeforeDay);
  }

  /** Settles every lease (the client is shared, the cache tier's too: its owner closes it). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.client.off('close', this.connectionLost);
    this.recalls?.close();
    await this.sweep(Number.POSITIVE_INFINITY);
  }
}
