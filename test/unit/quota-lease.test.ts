// Leases as pure logic (src/quota/lease.ts): what a lease covers, the decision it takes for a
// request, what its settlement bills, how large the next one is asked for and how a new grant
// replaces the last. No Redis: test/integration/quota-leases.test.ts runs them against one.
import { describe, expect, it } from 'vitest';
import {
  covers,
  emptyLease,
  giveBack,
  LEASE_GRACE_MS,
  LEASE_MAX_REQUESTS,
  LEASE_MIN_REQUESTS,
  leaseDeadlineMs,
  leaseOver,
  renew,
  settlement,
  spend,
  wantedSlots,
  type Grant,
  type Lease,
} from '../../src/quota/lease.js';
import { periodWindow } from '../../src/quota/period.js';
import type { QuotaQuery } from '../../src/quota/types.js';
import { RATE_WINDOW_MS } from '../../src/quota/window.js';

const DAY_MS = 86_400_000;
/** Noon UTC of a fixed day: far from its period's edges. */
const noon = Date.UTC(2026, 10, 26, 12);
const day = periodWindow('daily', noon);
const plan = { rps: 100, credits: 10_000, period: 'daily' as const };

const grant = (over: Partial<Grant> = {}): Grant => ({
  windowStartMs: noon,
  slots: 20,
  allowance: 200,
  topup: 0,
  count: 25,
  free: 9_000,
  ...over,
});

/** A lease as the store keeps it after its first grant. */
function leased(g: Grant = grant(), decided = 5, leaseId = 'p.s.0.0'): Lease {
  const l = emptyLease('acct', plan, day.id, g.windowStartMs);
  renew(l, plan, day, decided, g, leaseId);
  return l;
}

const query = (over: Partial<QuotaQuery> = {}): QuotaQuery => ({ account: 'acct', ...plan, cost: 10, nowMs: noon + 100, ...over });

describe('covers', () => {
  it('covers a request of its plan, window and period while a slot and the credits are left', () => {
    expect(covers(leased(), query())).toBe(true);
    expect(covers(leased(), query({ nowMs: noon }))).toBe(true);
    expect(covers(leased(), query({ cost: 200 }))).toBe(true);
  });

  it('not once its slots are gone', () => {
    expect(covers(leased(grant({ slots: 0 })), query())).toBe(false);
  });

  it('not a request that costs more than its credits', () => {
    expect(covers(leased(), query({ cost: 201 }))).toBe(false);
    expect(covers(leased(grant({ allowance: 50, topup: 30 })), query({ cost: 80 }))).toBe(true);
    expect(covers(leased(grant({ allowance: 50, topup: 30 })), query({ cost: 81 }))).toBe(false);
  });

  it('not outside its window: after it ends, or before it opened', () => {
    expect(covers(leased(), query({ nowMs: noon + RATE_WINDOW_MS - 1 }))).toBe(true);
    expect(covers(leased(), query({ nowMs: noon + RATE_WINDOW_MS }))).toBe(false);
    expect(covers(leased(), query({ nowMs: noon - 1 }))).toBe(false);
  });

  it('not outside its period', () => {
    const last = grant({ windowStartMs: day.endMs - 500 });
    expect(covers(leased(last), query({ nowMs: day.endMs - 1 }))).toBe(true);
    expect(covers(leased(last), query({ nowMs: day.endMs }))).toBe(false);
  });

  it('not a request of another plan', () => {
    expect(covers(leased(), query({ rps: 101 }))).toBe(false);
    expect(covers(leased(), query({ credits: 10_001 }))).toBe(false);
    expect(covers(leased(), query({ period: 'monthly' }))).toBe(false);
  });
});

describe('spend', () => {
  it("takes a slot and the cost, allowance first, and answers with the script's headers", () => {
    const l = leased(grant({ allowance: 15, topup: 100, slots: 20, count: 25, free: 9_000 }));
    const first = spend(l, query({ cost: 10, nowMs: noon + 100 }));
    expect(first).toEqual({
      outcome: 'ok',
      // The lease's slots are the window's last 20 of 25: the first of them is the 6th request.
      rateRemaining: plan.rps - 6,
      rateResetMs: RATE_WINDOW_MS - 100,
      credits: 9_000 + 5 + 100,
      billed: 10,
      fromTopup: 0,
      periodId: day.id,
    });
    const second = spend(l, query({ cost: 10, nowMs: noon + 400 }));
    expect(second).toMatchObject({
      rateRemaining: plan.rps - 7,
      rateResetMs: RATE_WINDOW_MS - 400,
      credits: 9_000 + 95,
      billed: 10,
      fromTopup: 5,
    });
    expect(l).toMatchObject({ slots: 18, decided: 7, allowance: 0, topup: 95 });
  });

  it('a request that costs nothing takes a slot only', () => {
    const l = leased();
    const d = spend(l, query({ cost: 0 }));
    expect(d).toMatchObject({ billed: 0, fromTopup: 0, credits: 9_000 + 200 });
    expect(l).toMatchObject({ slots: 19, allowance: 200, topup: 0 });
  });
});

describe('settlement', () => {
  it('bills what the lease spent from each bucket, gives its unused slots, and empties it', () => {
    const l = leased(grant({ allowance: 15, topup: 100 }));
    spend(l, query({ cost: 10 }));
    spend(l, query({ cost: 10 }));
    expect(settlement(l)).toEqual({
      account: 'acct',
      id: 'p.s.0.0',
      periodId: day.id,
      allowance: 15,
      topup: 5,
      windowStartMs: noon,
      slots: 18,
      periodStartMs: day.startMs,
      periodEndMs: day.endMs,
      day: '2026-11-26',
      hour: '12',
      usage: [],
    });
    expect(l).toMatchObject({ id: '', slots: 0, allowance: 0, topup: 0, grantedAllowance: 0, grantedTopup: 0 });
    // Settled twice, it has nothing left to bill.
    expect(settlement(l)).toMatchObject({ id: '', allowance: 0, topup: 0, slots: 0 });
    expect(covers(l, query({ cost: 0 }))).toBe(false);
  });
});

describe('usage rows', () => {
  const row = { keyId: 'key_a', chain: '1' };
  it('a settlement bills what the lease spent per usage row of its day, and empties them', () => {
    const l = leased(grant({ allowance: 100 }));
    spend(l, query({ cost: 10, ...row, route: 'blocks' }));
    spend(l, query({ cost: 10, ...row, route: 'blocks' }));
    spend(l, query({ cost: 5, ...row, chain: '10|x', route: 'tx\n' }));
    spend(l, query({ cost: 0, ...row, route: 'free' }));
    spend(l, query({ cost: 7 }));
    const s = settlement(l);
    expect(s.day).toBe('2026-11-26');
    expect(s.usage).toEqual([
      ['key_a|1|blocks', 20],
      ['key_a|10%7Cx|tx%0A', 5],
    ]);
    expect(s.allowance).toBe(32);
    expect(settlement(l).usage).toEqual([]);
  });

  it('decides only requests of its day: the day a usage row counts in', () => {
    const late = Date.UTC(2026, 10, 26, 23, 59, 59, 900);
    const l = leased(grant({ windowStartMs: late }));
    expect(covers(l, query({ nowMs: late + 50 }))).toBe(true);
    expect(covers(l, query({ nowMs: late + 100 }))).toBe(false);
  });

  it('decides only requests of its UTC hour: the hour a usage row counts in', () => {
    const late = Date.UTC(2026, 10, 26, 13, 59, 59, 900);
    const l = leased(grant({ windowStartMs: late }));
    expect(covers(l, query({ nowMs: late + 50 }))).toBe(true);
    expect(covers(l, query({ nowMs: late + 100 }))).toBe(false);
    expect(settlement(l)).toMatchObject({ day: '2026-11-26', hour: '13' });
  });

  it('gives a refund back only into the usage row it was spent on', () => {
    const l = leased(grant({ allowance: 100 }));
    spend(l, query({ cost: 10, ...row, route: 'blocks' }));
    const usage = { nowMs: noon + 100, ...row, account: '', route: 'blocks' };
    expect(giveBack(l, { account: 'acct', periodId: day.id, amount: 10, fromTopup: 0, usage: { ...usage, route: 'txs' } })).toBe(false);
    expect(giveBack(l, { account: 'acct', periodId: day.id, amount: 10, fromTopup: 0, usage: { ...usage, nowMs: noon - DAY_MS } })).toBe(
      false,
    );
    expect(giveBack(l, { account: 'acct', periodId: day.id, amount: 10, fromTopup: 0, usage })).toBe(true);
    expect(settlement(l)).toMatchObject({ allowance: 0, usage: [] });
  });
});

describe('wantedSlots', () => {
  it('asks nothing for a lone request of a key with no lease in its window', () => {
    expect(wantedSlots(undefined, 1, noon)).toBe(0);
    expect(wantedSlots(leased(), 1, noon + RATE_WINDOW_MS)).toBe(0);
  });

  it('asks at least LEASE_MIN_REQUESTS for a burst, twice it when larger', () => {
    expect(wantedSlots(undefined, 2, noon)).toBe(LEASE_MIN_REQUESTS);
    expect(wantedSlots(undefined, 30, noon)).toBe(60);
  });

  it('doubles what this process decided in the window, for as long as the window holds', () => {
    const l = leased(grant(), 40);
    expect(wantedSlots(l, 1, noon + 10)).toBe(2 * 41);
    expect(wantedSlots(l, 3, noon + 10)).toBe(2 * 43);
    // The next window: what was decided in the last one does not count.
    expect(wantedSlots(l, 3, noon + RATE_WINDOW_MS)).toBe(LEASE_MIN_REQUESTS);
  });

  it('never asks more than LEASE_MAX_REQUESTS', () => {
    expect(wantedSlots(leased(grant(), LEASE_MAX_REQUESTS), 1, noon)).toBe(LEASE_MAX_REQUESTS);
  });
});

describe('lease deadlines and ends', () => {
  it('a reservation lapses a window and the grace after the decision, in whole ms', () => {
    expect(leaseDeadlineMs(noon + 0.75)).toBe(noon + RATE_WINDOW_MS + LEASE_GRACE_MS);
  });

  it('a lease is over when its window or its period ends', () => {
    const l = leased();
    expect(leaseOver(l, noon + RATE_WINDOW_MS - 1)).toBe(false);
    expect(leaseOver(l, noon + RATE_WINDOW_MS)).toBe(true);
    expect(leaseOver(l, Number.POSITIVE_INFINITY)).toBe(true);
    const last = leased(grant({ windowStartMs: day.endMs - 500 }));
    expect(leaseOver(last, day.endMs - 1)).toBe(false);
    expect(leaseOver(last, day.endMs)).toBe(true);
  });
});

describe('renew', () => {
  it('makes the lease the grant, and hands back the settlement of the one before', () => {
    const l = leased(grant({ slots: 20 }), 5, 'first');
    spend(l, query({ cost: 10 }));
    const before = renew(l, plan, day, 4, grant({ slots: 30, allowance: 300, topup: 7, count: 70, free: 8_000 }), 'second');
    expect(before).toMatchObject({ id: 'first', allowance: 10, topup: 0, slots: 19 });
    expect(l).toMatchObject({
      id: 'second',
      // The same window and plan: the unused slots stay, and what was decided adds up.
      slots: 30 + 19,
      decided: 5 + 1 + 4,
      allowance: 300,
      grantedAllowance: 300,
      topup: 7,
      grantedTopup: 7,
      count: 70,
      free: 8_000,
      periodStartMs: day.startMs,
      periodEndMs: day.endMs,
    });
  });

  it('drops the unused slots of another window, and starts counting anew', () => {
    const l = leased(grant({ slots: 20 }), 5);
    const before = renew(l, plan, day, 2, grant({ windowStartMs: noon + RATE_WINDOW_MS, slots: 16 }), 'next');
    expect(before.slots).toBe(20);
    expect(l).toMatchObject({ slots: 16, decided: 2, windowStartMs: noon + RATE_WINDOW_MS });
  });

  it('drops the unused slots of another plan, and takes the new one', () => {
    const l = leased(grant({ slots: 20 }));
    const bigger = { ...plan, rps: 500 };
    renew(l, bigger, day, 1, grant({ slots: 16 }), 'next');
    expect(l).toMatchObject({ slots: 16, rps: 500 });
  });

  it('a grant of slots only holds no reservation', () => {
    const l = leased(grant({ allowance: 0, topup: 0 }), 5, 'unused');
    expect(l.id).toBe('');
    expect(settlement(l).id).toBe('');
  });

  it("a grant in the next period takes that period's bounds", () => {
    const next = periodWindow('daily', noon + DAY_MS);
    const l = leased();
    renew(l, plan, next, 1, grant({ windowStartMs: noon + DAY_MS }), 'tomorrow');
    expect(l).toMatchObject({ periodId: next.id, periodStartMs: next.startMs, periodEndMs: next.endMs, slots: 20 });
  });
});

describe('giveBack', () => {
  it('gives a refund of what the lease spent back into it, to the buckets it came from', () => {
    const l = leased(grant({ allowance: 15, topup: 100 }));
    spend(l, query({ cost: 10 }));
    spend(l, query({ cost: 10 }));
    expect(giveBack(l, { account: 'acct', periodId: day.id, amount: 10, fromTopup: 5 })).toBe(true);
    expect(l).toMatchObject({ allowance: 5, topup: 100 });
    expect(settlement(l)).toMatchObject({ allowance: 10, topup: 0 });
  });

  it('not what the lease did not spend, nor a refund of another period: those go to Redis', () => {
    const l = leased(grant({ allowance: 15, topup: 100 }));
    spend(l, query({ cost: 10 }));
    expect(giveBack(l, { account: 'acct', periodId: day.id, amount: 11, fromTopup: 0 })).toBe(false);
    expect(giveBack(l, { account: 'acct', periodId: day.id, amount: 10, fromTopup: 1 })).toBe(false);
    expect(giveBack(l, { account: 'acct', periodId: 'd20261125', amount: 10, fromTopup: 0 })).toBe(false);
    expect(l).toMatchObject({ allowance: 5, topup: 100 });
  });
});
