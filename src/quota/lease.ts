// Leases of the Redis quota store, as pure logic: what a lease covers, how a request is decided
// from it, what its settlement bills, how large the next one should be and how a new grant
// replaces the last one. No Redis here: redis.ts's head explains why leases exist and what they
// cost, the decision script (redis-scripts.ts) grants and settles them, and the store (redis.ts)
// keeps one per account and sends what this file computes.
import { HOUR_MS, utcDay } from '../store/day.js';
import type { Period, PeriodWindow } from './period.js';
import { usageCreditField, usageHour } from './redis-keys.js';
import type { QuotaDecision, QuotaQuery, Refund } from './types.js';
import { RATE_WINDOW_MS, resetMsFrom, windowHoldsFrom } from './window.js';

/** A lease never takes more than 1/LEASE_SHARE of what the window or the balance has left. */
export const LEASE_SHARE = 4;
/** Nor less than this many requests: a key with less room left is decided in Redis, request by request. */
export const LEASE_MIN_REQUESTS = 16;
/** Nor more than this many: a lease doubles while its process keeps using it, up to here. */
export const LEASE_MAX_REQUESTS = 65_536;
/** How often leases of quiet accounts are settled. */
export const LEASE_SWEEP_MS = 1_000;
/**
 * A reservation lapses this long after its lease's window ends (by the deciding clocks): long
 * enough for its holder to settle it (within LEASE_SWEEP_MS, or when Redis is back) and for clock
 * skew between gateway hosts; a lease settled later bills nothing.
 */
export const LEASE_GRACE_MS = 10_000;

/**
 * What one process may decide alone for an account: request slots of one rate window (counted in
 * Redis) and credits of one period (reserved in Redis, billed when settled).
 */
export interface Lease {
  readonly account: string;
  rps: number;
  credits: number;
  period: Period;
  windowStartMs: number;
  /** Request slots left. */
  slots: number;
  /** Requests this process decided for the account in this window, to size the next lease. */
  decided: number;
  /** The reservation's id in Redis; '' when the lease holds no credits. */
  id: string;
  periodId: string;
  periodStartMs: number;
  periodEndMs: number;
  /** Credits left, from the period's allowance and from bought credits, and what was granted. */
  allowance: number;
  topup: number;
  grantedAllowance: number;
  grantedTopup: number;
  /** The window's count in Redis after the grant, this lease's slots included. */
  count: number;
  /** The balance Redis had left after the grant, besides every reservation. */
  free: number;
  /**
   * The UTC day and hour (`00`-`23`) of the call that granted the lease, and the hour's bounds:
   * the lease decides only requests of that hour, so what it spent counts in that day's and that
   * hour's usage credits (redis-keys.ts, usageCredits and usageHourCredits) when it is billed.
   */
  day: string;
  hour: string;
  hourStartMs: number;
  hourEndMs: number;
  /** What the lease spent, by usage row of its hour (key id, account, chain, route): billed with it. */
  usage: RowSpend;
}

/** Credits by key id, account, chain and route: nested maps, so that no string is built per request. */
type RowSpend = Map<string, Map<string, Map<string, Map<string, number>>>>;

/** The credits `spend` counted for a usage row of the lease, and where they are kept. */
function rowOf(l: Lease, keyId: string, account: string, chain: string): Map<string, number> {
  let accounts = l.usage.get(keyId);
  if (accounts === undefined) l.usage.set(keyId, (accounts = new Map<string, Map<string, Map<string, number>>>()));
  let chains = accounts.get(account);
  if (chains === undefined) accounts.set(account, (chains = new Map<string, Map<string, number>>()));
  let routes = chains.get(chain);
  if (routes === undefined) chains.set(chain, (routes = new Map<string, number>()));
  return routes;
}

/** The lease's spend as usage credits fields (redis-keys.ts, usageCreditField), those above 0. */
function usageFields(usage: RowSpend): [string, number][] {
  const out: [string, number][] = [];
  for (const [keyId, accounts] of usage)
    for (const [account, chains] of accounts)
      for (const [chain, routes] of chains)
        for (const [route, credits] of routes) if (credits > 0) out.push([usageCreditField(keyId, chain, route, account), credits]);
  return out;
}

/** A lease on its way to being settled: what it spent, and the slots it did not use. */
export interface Settlement {
  account: string;
  /** '' for a lease of slots only, which holds no reservation. */
  id: string;
  periodId: string;
  /** Spent from the period's allowance and from bought credits. */
  allowance: number;
  topup: number;
  windowStartMs: number;
  slots: number;
  /** The lease's period: the credit key's expiry if the settlement has to create it, and the twin period it also counts in (period.ts). */
  periodStartMs: number;
  periodEndMs: number;
  /** The lease's day and hour, and what it spent by usage row: counted in that day's and hour's usage credits as it is billed. */
  day: string;
  hour: string;
  usage: [field: string, credits: number][];
}

/** What the decision script granted, after deciding a call's requests. */
export interface Grant {
  /** The start of the window the call's requests were decided in. */
  windowStartMs: number;
  /** Request slots of that window, counted in Redis already; 0 for no lease. */
  slots: number;
  /** Credits reserved, from the period's allowance and from bought credits. */
  allowance: number;
  topup: number;
  /** The window's count after the grant, its slots included. */
  count: number;
  /** The balance left besides every reservation, this one included. */
  free: number;
}

/** The plan a call was decided under: a lease serves only requests of the same plan and period. */
export interface LeaseTerms {
  rps: number;
  credits: number;
  period: Period;
}

/** Whether the lease decides `q` here and now: a slot and the credits are left, and the window, the period and the plan are the lease's. */
export function covers(l: Lease, q: QuotaQuery): boolean {
  return (
    l.slots > 0 &&
    l.allowance + l.topup >= q.cost &&
    q.nowMs < l.windowStartMs + RATE_WINDOW_MS &&
    q.nowMs >= l.windowStartMs &&
    q.nowMs >= l.periodStartMs &&
    q.nowMs < l.periodEndMs &&
    q.nowMs >= l.hourStartMs &&
    q.nowMs < l.hourEndMs &&
    l.rps === q.rps &&
    l.credits === q.credits &&
    l.period === q.period
  );
}

/** The decision the script would have taken for the next request of the window: the lease's slots are next in it. */
export function spend(l: Lease, q: QuotaQuery): QuotaDecision {
  l.slots--;
  l.decided++;
  const fromAllowance = Math.min(q.cost, l.allowance);
  const fromTopup = q.cost - fromAllowance;
  l.allowance -= fromAllowance;
  l.topup -= fromTopup;
  if (q.cost > 0 && q.keyId !== undefined) {
    const routes = rowOf(l, q.keyId, q.usageAccount ?? '', q.chain ?? 'none');
    const route = q.route ?? 'none';
    routes.set(route, (routes.get(route) ?? 0) + q.cost);
  }
  return {
    outcome: 'ok',
    rateRemaining: Math.max(q.rps - (l.count - l.slots), 0),
    rateResetMs: resetMsFrom(l.windowStartMs, q.nowMs),
    credits: l.free + l.allowance + l.topup,
    billed: q.cost,
    fromTopup,
    periodId: l.periodId,
  };
}

/** Takes a lease's state out of it to settle it: the lease is left empty. */
export function settlement(l: Lease): Settlement {
  const s = {
    account: l.account,
    id: l.id,
    periodId: l.periodId,
    allowance: l.grantedAllowance - l.allowance,
    topup: l.grantedTopup - l.topup,
    windowStartMs: l.windowStartMs,
    slots: l.slots,
    periodStartMs: l.periodStartMs,
    periodEndMs: l.periodEndMs,
    day: l.day,
    hour: l.hour,
    usage: usageFields(l.usage),
  };
  l.usage = new Map();
  l.id = '';
  l.slots = 0;
  l.allowance = l.topup = l.grantedAllowance = l.grantedTopup = 0;
  return s;
}

/**
 * The request slots to ask for with a call that decides `n` requests at `nowMs`: none for a key
 * that is not busy (one request, and no lease of the current window), else twice what this
 * process decided in the window with them, within LEASE_MIN_REQUESTS and LEASE_MAX_REQUESTS.
 */
export function wantedSlots(l: Lease | undefined, n: number, nowMs: number): number {
  const current = l !== undefined && windowHoldsFrom(l.windowStartMs, nowMs);
  if (n <= 1 && !current) return 0;
  const decidedBefore = current ? l.decided : 0;
  return Math.min(Math.max(2 * (decidedBefore + n), LEASE_MIN_REQUESTS), LEASE_MAX_REQUESTS);
}

/** When Redis lets the reservation of a lease granted at `nowMs` lapse if nobody settles it. */
export function leaseDeadlineMs(nowMs: number): number {
  return Math.floor(nowMs) + RATE_WINDOW_MS + LEASE_GRACE_MS;
}

/** Whether the lease is over at `nowMs` (any instant for +Infinity): its window or its period ended. */
export function leaseOver(l: Lease, nowMs: number): boolean {
  return !(windowHoldsFrom(l.windowStartMs, nowMs) && nowMs < l.periodEndMs);
}

/** An account's lease before its first grant: renew fills it. */
export function emptyLease(account: string, terms: LeaseTerms, periodId: string, windowStartMs: number): Lease {
  return {
    account,
    rps: terms.rps,
    credits: terms.credits,
    period: terms.period,
    windowStartMs,
    slots: 0,
    decided: 0,
    id: '',
    periodId,
    periodStartMs: 0,
    periodEndMs: 0,
    allowance: 0,
    topup: 0,
    grantedAllowance: 0,
    grantedTopup: 0,
    count: 0,
    free: 0,
    day: '',
    hour: '',
    hourStartMs: 0,
    hourEndMs: 0,
    usage: new Map(),
  };
}

/** Gives the lease the UTC day and hour of `nowMs`: those of the call that granted it. */
function setHour(l: Lease, nowMs: number): void {
  if (nowMs >= l.hourStartMs && nowMs < l.hourEndMs) return;
  l.day = utcDay(nowMs);
  l.hour = usageHour(nowMs);
  l.hourStartMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  l.hourEndMs = l.hourStartMs + HOUR_MS;
}

/**
 * Makes `l` what the script granted (`grant`, reserved under `leaseId`) to a call that decided
 * `decided` requests under `terms` in `period`, at `nowMs` (whose UTC day and hour the lease keeps). Returns the settlement of what `l` held before: a
 * lease another call was granted meanwhile is settled, one reservation per lease. Its unused
 * slots stay with the account's lease if they belong to the same window.
 */
export function renew(
  l: Lease,
  terms: LeaseTerms,
  period: PeriodWindow,
  decided: number,
  grant: Grant,
  leaseId: string,
  nowMs = grant.windowStartMs,
): Settlement {
  const sameWindow = l.windowStartMs === grant.windowStartMs;
  const samePlan = l.periodId === period.id && l.rps === terms.rps && l.credits === terms.credits && l.period === terms.period;
  const before = settlement(l);
  l.decided = (sameWindow ? l.decided : 0) + decided;
  l.windowStartMs = grant.windowStartMs;
  l.rps = terms.rps;
  l.credits = terms.credits;
  l.period = terms.period;
  l.periodId = period.id;
  l.periodStartMs = period.startMs;
  l.periodEndMs = period.endMs;
  l.slots = grant.slots + (sameWindow && samePlan ? before.slots : 0);
  l.id = grant.allowance + grant.topup > 0 ? leaseId : '';
  l.allowance = l.grantedAllowance = grant.allowance;
  l.topup = l.grantedTopup = grant.topup;
  l.count = grant.count;
  l.free = grant.free;
  setHour(l, nowMs);
  return before;
}

/**
 * Gives a refund back into the lease when the lease decided what it refunds (it is not billed
 * yet): the same period, no more than the lease spent from each bucket, and, for a refund of a
 * usage row, the lease's hour and no more than it spent on that row. False when it belongs in Redis.
 */
export function giveBack(l: Lease, r: Refund): boolean {
  const toAllowance = r.amount - r.fromTopup;
  if (l.periodId !== r.periodId || l.grantedAllowance - l.allowance < toAllowance || l.grantedTopup - l.topup < r.fromTopup) return false;
  const u = r.usage;
  if (u !== undefined) {
    const routes = l.usage
      .get(u.keyId)
      ?.get(u.account ?? '')
      ?.get(u.chain);
    const spent = routes?.get(u.route) ?? 0;
    if (routes === undefined || u.nowMs < l.hourStartMs || u.nowMs >= l.hourEndMs || spent < r.amount) return false;
    routes.set(u.route, spent - r.amount);
  }
  l.allowance += toAllowance;
  l.topup += r.fromTopup;
  return true;
}
