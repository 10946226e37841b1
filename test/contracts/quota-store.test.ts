// One contract, two implementations: the in-process store and the Redis store (a real
// redis-server, and a real three-node Redis Cluster) must take the same decisions for the same
// inputs.
//
// Every instant a test hands to a store is read from the decision's clock: the suite runs in
// three eras (decades before today, today, decades after) to prove that no store compares an
// instant with a clock of its own (the Redis server's). Nothing here sleeps: a test that needs
// the next window or the next period moves the instant it passes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, Redis } from 'ioredis';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { periodWindow } from '../../src/quota/period.js';
import { CALL_RECORD_MS, CREDIT_KEY_GRACE_MS, RATE_KEY_TTL_MS, RedisQuotaStore } from '../../src/quota/redis.js';
import type { QuotaDecision, QuotaQuery, QuotaStore } from '../../src/quota/types.js';
import { RATE_WINDOW_MS } from '../../src/quota/window.js';
import { connect, deletePrefix, testPrefix } from '../support/redis.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';

const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;
/** Noon UTC of the day `ms` falls in: far from both of that day's period edges. */
const noonOf = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS / 2;

const ERAS: [string, number][] = [
  ['thirty years ago', noonOf(Date.now() - 30 * YEAR_MS)],
  ['today', noonOf(Date.now())],
  ['eighty years ahead', noonOf(Date.now() + 80 * YEAR_MS)],
];

let n = 0;
/** A fresh key identity per test, so tests never share windows or balances. */
const digest = () => `${'d'.repeat(56)}${(n++).toString(16).padStart(8, '0')}`;

let redis: Redis;
let cluster: TestCluster;
let clusterClient: Cluster;
const prefix = testPrefix('quota');
beforeAll(async () => {
  redis = connect();
  cluster = await startCluster();
  clusterClient = new Cluster(cluster.urls);
}, 30_000);
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  clusterClient?.disconnect();
  await cluster?.stop();
});

/** Every store a test made, closed after it: a store listens on its client until closed. */
const made: QuotaStore[] = [];
const tracked = (store: QuotaStore): QuotaStore => (made.push(store), store);
afterEach(async () => {
  await Promise.all(made.splice(0).map((s) => s.close()));
});

const implementations: [string, () => QuotaStore][] = [
  ['memory', () => new MemoryQuotaStore()],
  ['redis', () => tracked(new RedisQuotaStore(redis, prefix, { leases: false }))],
  // Leases decide locally what the script would have decided: same answers, one process.
  ['redis with leases', () => tracked(new RedisQuotaStore(redis, prefix, { leases: true }))],
  // A lease's keys (window, credits, top-up, reservations, of two periods) share the account's
  // hash tag, so its scripts run on the one node that owns the account: no CROSSSLOT.
  ['redis cluster with leases', () => tracked(new RedisQuotaStore(clusterClient, prefix, { leases: true }))],
];

describe.each(implementations)('quota store contract: %s', (_name, make) => {
  describe.each(ERAS)('instants from %s', (_era, noon) => {
    const query = (over: Partial<QuotaQuery>): QuotaQuery => ({
      account: 'x',
      rps: 1000,
      credits: 1000,
      period: 'daily',
      cost: 20,
      nowMs: noon,
      ...over,
    });

    it('allows rps requests in a window, then refuses with the time until the window ends', async () => {
      const store = make();
      const d = digest();
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await store.decide(query({ account: d, rps: 3, cost: 0, nowMs: noon + i * 100 })));
      expect(results.map((r) => r.outcome)).toEqual(['ok', 'ok', 'ok', 'rate_limited']);
      expect(results.map((r) => r.rateRemaining)).toEqual([2, 1, 0, 0]);
      // The window opened with the first request: its end moves closer as the clock does.
      expect(results.map((r) => r.rateResetMs)).toEqual([1000, 900, 800, 700]);
    });

    it('a long run of requests on a large plan is decided as if one at a time, across windows', async () => {
      const store = make();
      const d = digest();
      const q = (i: number, cost: number) => query({ account: d, rps: 300, credits: 100_000, cost, nowMs: noon + i * 2 });
      // 1,000 requests 2 ms apart: two windows of 300 and a third, then the fourth's first 100;
      // costs vary so that leases are spent unevenly. Some arrive together (one turn, one batch).
      const seen: QuotaDecision[] = [];
      for (let i = 0; i < 1000;) {
        const together = i % 7 === 0 ? 3 : 1;
        const turn = Array.from({ length: Math.min(together, 1000 - i) }, async (_, k) =>
          store.decide(q(i + k, (i + k) % 3 === 0 ? 0 : 10 + ((i + k) % 5))),
        );
        seen.push(...(await Promise.all(turn)));
        i += turn.length;
      }
      let spent = 0;
      const expected = seen.map((_, i) => {
        const inWindow = (i % 500) + 1;
        const cost = i % 3 === 0 ? 0 : 10 + (i % 5);
        const ok = inWindow <= 300;
        if (ok) spent += cost;
        return {
          outcome: ok ? 'ok' : 'rate_limited',
          rateRemaining: Math.max(300 - inWindow, 0),
          credits: 100_000 - spent,
          billed: ok ? cost : 0,
        };
      });
      expect(seen.map(({ outcome, rateRemaining, credits, billed }) => ({ outcome, rateRemaining, credits, billed }))).toEqual(expected);
      await store.close();
      expect((await store.balance(d, 'daily', noon)).spent).toBe(spent);
    });

    it('concurrent decisions on one key are counted in arrival order', async () => {
      const store = make();
      const d = digest();
      const all = await Promise.all(
        Array.from({ length: 6 }, async () => store.decide(query({ account: d, rps: 3, credits: 50, cost: 20 }))),
      );
      expect(all.map((r) => r.outcome)).toEqual(['ok', 'ok', 'out_of_credits', 'rate_limited', 'rate_limited', 'rate_limited']);
      expect(all.map((r) => r.rateRemaining)).toEqual([2, 1, 0, 0, 0, 0]);
      expect(all.map((r) => r.credits)).toEqual([30, 10, 10, 10, 10, 10]);
    });

    it('a window ends RATE_WINDOW_MS after it opened, and refused requests do not use up the next one', async () => {
      const store = make();
      const d = digest();
      let last: QuotaDecision | undefined;
      for (let i = 0; i < 10; i++) last = await store.decide(query({ account: d, rps: 2, cost: 0, nowMs: noon + i }));
      expect(last).toMatchObject({ outcome: 'rate_limited', rateResetMs: RATE_WINDOW_MS - 9 });
      // One millisecond before the end: still the old window.
      expect(await store.decide(query({ account: d, rps: 2, cost: 0, nowMs: noon + RATE_WINDOW_MS - 1 }))).toMatchObject({
        outcome: 'rate_limited',
        rateResetMs: 1,
      });
      const next = await store.decide(query({ account: d, rps: 2, cost: 0, nowMs: noon + RATE_WINDOW_MS }));
      expect(next).toMatchObject({ outcome: 'ok', rateRemaining: 1, rateResetMs: RATE_WINDOW_MS });
    });

    it('a clock set back by more than a window opens a new one', async () => {
      const store = make();
      const d = digest();
      await store.decide(query({ account: d, rps: 1, cost: 0 }));
      expect((await store.decide(query({ account: d, rps: 1, cost: 0, nowMs: noon - 10 }))).outcome).toBe('rate_limited');
      expect((await store.decide(query({ account: d, rps: 1, cost: 0, nowMs: noon - RATE_WINDOW_MS }))).outcome).toBe('ok');
    });

    it('bills the cost and reports the balance after billing', async () => {
      const store = make();
      const d = digest();
      expect(await store.decide(query({ account: d, cost: 20 }))).toMatchObject({ outcome: 'ok', credits: 980, billed: 20 });
      expect(await store.decide(query({ account: d, cost: 50 }))).toMatchObject({ outcome: 'ok', credits: 930, billed: 50 });
    });

    it('takes nothing when the balance is below the cost, and shows the balance left', async () => {
      const store = make();
      const d = digest();
      expect(await store.decide(query({ account: d, credits: 50, cost: 40 }))).toMatchObject({ outcome: 'ok', credits: 10 });
      expect(await store.decide(query({ account: d, credits: 50, cost: 20 }))).toMatchObject({
        outcome: 'out_of_credits',
        credits: 10,
        billed: 0,
      });
      expect(await store.decide(query({ account: d, credits: 50, cost: 10 }))).toMatchObject({ outcome: 'ok', credits: 0 });
    });

    it('a rate-limited request costs no credits', async () => {
      const store = make();
      const d = digest();
      await store.decide(query({ account: d, rps: 1, cost: 20 }));
      expect(await store.decide(query({ account: d, rps: 1, cost: 20 }))).toMatchObject({
        outcome: 'rate_limited',
        credits: 980,
        billed: 0,
      });
    });

    it('cost 0 takes a rate decision only', async () => {
      const store = make();
      const d = digest();
      expect(await store.decide(query({ account: d, cost: 0 }))).toMatchObject({ outcome: 'ok', credits: 1000, billed: 0 });
    });

    it('hundreds of concurrent decisions on a small balance spend exactly that balance', async () => {
      const store = make();
      const d = digest();
      const all = await Promise.all(Array.from({ length: 300 }, async () => store.decide(query({ account: d, credits: 1000, cost: 20 }))));
      expect(all.filter((r) => r.outcome === 'ok')).toHaveLength(50);
      expect(all.filter((r) => r.outcome === 'out_of_credits')).toHaveLength(250);
      expect(Math.min(...all.map((r) => r.credits))).toBe(0);
      expect(await store.decide(query({ account: d, credits: 1000, cost: 1 }))).toMatchObject({ outcome: 'out_of_credits', credits: 0 });
    });

    it('a refund gives credits back to the period they came from', async () => {
      const store = make();
      const d = digest();
      const first = await store.decide(query({ account: d, cost: 100 }));
      // The spend was kept: without this, a refund that does nothing would pass.
      expect(await store.decide(query({ account: d, cost: 0 }))).toMatchObject({ credits: 900 });
      await store.refund({ account: d, periodId: first.periodId, amount: 100, fromTopup: first.fromTopup });
      expect(await store.decide(query({ account: d, cost: 0 }))).toMatchObject({ credits: 1000 });
    });

    it('a daily balance is full again at 00:00 UTC', async () => {
      const store = make();
      const d = digest();
      const { endMs: midnight } = periodWindow('daily', noon);
      const lastMs = midnight - 1;
      expect(await store.decide(query({ account: d, credits: 40, cost: 40, nowMs: lastMs }))).toMatchObject({ outcome: 'ok', credits: 0 });
      expect(await store.decide(query({ account: d, credits: 40, cost: 40, nowMs: lastMs }))).toMatchObject({ outcome: 'out_of_credits' });
      expect(await store.decide(query({ account: d, credits: 40, cost: 40, nowMs: midnight }))).toMatchObject({
        outcome: 'ok',
        credits: 0,
      });
    });

    it('a monthly balance lasts the month and is full again on the 1st at 00:00 UTC', async () => {
      const store = make();
      const d = digest();
      const { startMs, endMs } = periodWindow('monthly', noon);
      const q = (nowMs: number) => query({ account: d, credits: 40, cost: 40, period: 'monthly', nowMs });
      expect((await store.decide(q(startMs))).outcome).toBe('ok');
      expect((await store.decide(q(endMs - 1_000))).outcome).toBe('out_of_credits');
      expect((await store.decide(q(endMs))).outcome).toBe('ok');
    });

    it('a refund into a period that has ended does not touch the new one', async () => {
      const store = make();
      const d = digest();
      const { endMs: midnight } = periodWindow('daily', noon);
      const old = await store.decide(query({ account: d, credits: 100, cost: 60, nowMs: midnight - 3_600_000 }));
      const after = midnight + 3_600_000;
      expect(await store.decide(query({ account: d, credits: 100, cost: 60, nowMs: after }))).toMatchObject({ outcome: 'ok', credits: 40 });
      await store.refund({ account: d, periodId: old.periodId, amount: 60, fromTopup: 0 });
      expect(await store.decide(query({ account: d, credits: 100, cost: 0, nowMs: after }))).toMatchObject({ credits: 40 });
    });

    it('bought credits are spent after the period allowance, and no period reset wipes them', async () => {
      const store = make();
      const d = digest();
      expect(await store.topUp(d, 50)).toBe(50);
      expect(await store.topUp(d, 25)).toBe(75);
      // The allowance (100) first: 80 of it, then 20 more of it and 10 of the bought 75.
      expect(await store.decide(query({ account: d, credits: 100, cost: 80 }))).toMatchObject({ outcome: 'ok', credits: 95, fromTopup: 0 });
      expect(await store.decide(query({ account: d, credits: 100, cost: 30 }))).toMatchObject({
        outcome: 'ok',
        credits: 65,
        fromTopup: 10,
      });
      expect(await store.balance(d, 'daily', noon)).toMatchObject({ spent: 100, topup: 65 });
      expect(await store.decide(query({ account: d, credits: 100, cost: 70 }))).toMatchObject({
        outcome: 'out_of_credits',
        credits: 65,
        billed: 0,
      });
      // The next day: a full allowance, and the bought credits left.
      const { endMs } = periodWindow('daily', noon);
      expect(await store.decide(query({ account: d, credits: 100, cost: 0, nowMs: endMs }))).toMatchObject({ credits: 165 });
      expect(await store.balance(d, 'daily', endMs)).toMatchObject({ spent: 0, topup: 65 });
    });

    it('a refund gives back to the buckets the credits came from', async () => {
      const store = make();
      const d = digest();
      await store.topUp(d, 40);
      const taken = await store.decide(query({ account: d, credits: 20, cost: 50 }));
      expect(taken).toMatchObject({ outcome: 'ok', billed: 50, fromTopup: 30, credits: 10 });
      await store.refund({ account: d, periodId: taken.periodId, amount: taken.billed, fromTopup: taken.fromTopup });
      expect(await store.balance(d, 'daily', noon)).toMatchObject({ spent: 0, topup: 40 });
    });

    it('what was spent is kept across a plan change: the new allowance applies from the change on', async () => {
      const store = make();
      const d = digest();
      await store.decide(query({ account: d, credits: 100, cost: 60 }));
      // A smaller plan: 60 spent of 50 leaves nothing (never a negative balance).
      expect(await store.decide(query({ account: d, credits: 50, cost: 1 }))).toMatchObject({ outcome: 'out_of_credits', credits: 0 });
      // A bigger plan: 200 - 60.
      expect(await store.decide(query({ account: d, credits: 200, cost: 0 }))).toMatchObject({ credits: 140 });
    });
  });
});

// A plan change between a daily and a monthly plan keeps the spend of the new plan's period
// (docs/operator-guide.md, "What is kept is what a key spent"): every debit of an allowance counts in a day
// counter and a month counter, whatever the plan's period: the in-process store keeps both in
// its ledger (quota/memory.ts), the Redis store writes both counters in every script that bills
// or gives back (quota/redis-scripts.ts).
const keepingDayAndMonth: [string, () => QuotaStore][] = implementations;

describe.each(keepingDayAndMonth)('a plan change between a daily and a monthly plan: %s', (_name, make) => {
  // Noon UTC of a date of the month the suite runs in: the 2nd and the 3rd are two days of one
  // month, whatever day today is.
  const thisMonth = new Date();
  const noonOfDate = (date: number) => Date.UTC(thisMonth.getUTCFullYear(), thisMonth.getUTCMonth(), date, 12);
  const day2 = noonOfDate(2);
  const day3 = noonOfDate(3);
  const plan =
    (d: string) =>
    (period: 'daily' | 'monthly', nowMs: number, cost: number, credits = 1000) =>
      ({ account: d, rps: 1000, credits, period, cost, nowMs }) satisfies QuotaQuery;

  it('monthly to daily counts what was spent today; back to monthly, what was spent this month', async () => {
    const store = make();
    const d = digest();
    const q = plan(d);
    expect(await store.decide(q('monthly', day2, 300))).toMatchObject({ outcome: 'ok', credits: 700 });
    expect(await store.decide(q('monthly', day3, 100))).toMatchObject({ outcome: 'ok', credits: 600 });
    // Moved to the daily plan on the 3rd: 100 of its 1,000 spent today.
    expect(await store.balance(d, 'daily', day3)).toMatchObject({ spent: 100 });
    expect(await store.decide(q('daily', day3, 0))).toMatchObject({ outcome: 'ok', credits: 900 });
    expect(await store.decide(q('daily', day3, 50))).toMatchObject({ outcome: 'ok', credits: 850 });
    // Back to the monthly plan: 300 + 100 + 50 this month, the daily plan's spend included.
    expect(await store.balance(d, 'monthly', day3)).toMatchObject({ spent: 450 });
    expect(await store.decide(q('monthly', day3, 0))).toMatchObject({ outcome: 'ok', credits: 550 });
  });

  it('daily to monthly counts what was spent this month, over its days', async () => {
    const store = make();
    const d = digest();
    const q = plan(d);
    expect(await store.decide(q('daily', day2, 300))).toMatchObject({ outcome: 'ok', credits: 700 });
    // A new day: the daily allowance is whole again.
    expect(await store.decide(q('daily', day3, 100))).toMatchObject({ outcome: 'ok', credits: 900 });
    expect(await store.balance(d, 'monthly', day3)).toMatchObject({ spent: 400 });
    expect(await store.decide(q('monthly', day3, 0))).toMatchObject({ outcome: 'ok', credits: 600 });
    // A monthly plan smaller than what the month has used leaves nothing.
    expect(await store.decide(q('monthly', day3, 10, 350))).toMatchObject({ outcome: 'out_of_credits', credits: 0, billed: 0 });
    // And back to the daily plan: today's 100.
    expect(await store.balance(d, 'daily', day3)).toMatchObject({ spent: 100 });
  });

  it('a new day starts only the day counter again, a new month both', async () => {
    const store = make();
    const d = digest();
    const q = plan(d);
    await store.decide(q('monthly', day2, 300));
    expect(await store.balance(d, 'daily', day3)).toMatchObject({ spent: 0 });
    expect(await store.decide(q('daily', day3, 50))).toMatchObject({ outcome: 'ok', credits: 950 });
    expect(await store.balance(d, 'monthly', day3)).toMatchObject({ spent: 350 });
    const { endMs: nextMonth } = periodWindow('monthly', day3);
    expect(await store.decide(q('daily', nextMonth, 0))).toMatchObject({ credits: 1000 });
    expect(await store.balance(d, 'monthly', nextMonth)).toMatchObject({ spent: 0 });
  });

  it("a refund gives back to each counter still on the debit's day or month", async () => {
    const store = make();
    const refund = async (taken: QuotaDecision, account: string) =>
      store.refund({ account, periodId: taken.periodId, amount: taken.billed, fromTopup: taken.fromTopup });

    // Refunded the same day, on either plan: both counters as they were.
    for (const period of ['daily', 'monthly'] as const) {
      const d = digest();
      const taken = await store.decide(plan(d)(period, day2, 100));
      expect(taken).toMatchObject({ outcome: 'ok', billed: 100 });
      await refund(taken, d);
      expect([(await store.balance(d, 'daily', day2)).spent, (await store.balance(d, 'monthly', day2)).spent]).toEqual([0, 0]);
    }

    // A daily debit refunded the next day: its month gets it back, the new day never had it.
    const d = digest();
    const late = await store.decide(plan(d)('daily', day2, 100));
    await store.decide(plan(d)('daily', day3, 30));
    await refund(late, d);
    expect(await store.balance(d, 'daily', day3)).toMatchObject({ spent: 30 });
    expect(await store.balance(d, 'monthly', day3)).toMatchObject({ spent: 30 });
  });

  it('a monthly debit refunded after a decision of the next day gives back to its own day, which its usage row names', async () => {
    const store = make();
    const d = digest();
    const q = plan(d);
    const row = { keyId: 'key_midnight', chain: '1', route: 'blocks' };
    // The last moment of the 2nd, then the first of the 3rd: a request across midnight UTC.
    const beforeMidnight = day3 - 12 * 3_600_000 - 1;
    const taken = await store.decide({ ...q('monthly', beforeMidnight, 100), ...row });
    await store.decide({ ...q('monthly', beforeMidnight + 2, 30), ...row });
    await store.refund({
      account: d,
      periodId: taken.periodId,
      amount: taken.billed,
      fromTopup: taken.fromTopup,
      usage: { nowMs: beforeMidnight, ...row, account: '' },
    });
    // Moved to a daily plan on the 3rd: the 30 of the 3rd spent, the 2nd's refund not taken off it.
    expect(await store.balance(d, 'daily', day3)).toMatchObject({ spent: 30 });
    expect(await store.balance(d, 'monthly', day3)).toMatchObject({ spent: 30 });
  });
});

describe('redis quota store', () => {
  it.each(ERAS)('keeps the keys of one decision under one hash tag, with expiries relative to the decision (%s)', async (_era, noon) => {
    const store = new RedisQuotaStore(redis, prefix);
    const d = digest();
    const nowMs = noon + 1_234;
    await store.decide({ account: d, rps: 10, credits: 100, period: 'daily', cost: 20, nowMs });
    const period = periodWindow('daily', nowMs);
    const credits = `${prefix}{${d}}:credits:${period.id}`;
    // The month's counter: a daily debit counts in it too (a plan change keeps the spend).
    const month = periodWindow('monthly', nowMs);
    const monthCredits = `${prefix}{${d}}:credits:${month.id}`;
    const window = `${prefix}{${d}}:window`;
    const all = await redis.keys(`${prefix}{${d}}*`);
    // The call's record of what it billed (to void it if its reply were lost), for a minute.
    const calls = all.filter((k) => k.startsWith(`${prefix}{${d}}:call:`));
    expect(calls).toHaveLength(1);
    expect(await redis.get(calls[0]!)).toBe('20:0');
    expect(await redis.pttl(calls[0]!)).toBeLessThanOrEqual(CALL_RECORD_MS);
    expect(all.filter((k) => !calls.includes(k)).sort()).toEqual([credits, monthCredits, window].sort());
    // What is left of the period as the decision saw it, plus the grace; never Redis's own idea
    // of when that period ends (for an instant of another decade, it would be gone at once).
    const expected = period.endMs - nowMs + CREDIT_KEY_GRACE_MS;
    const ttl = await redis.pttl(credits);
    expect(ttl).toBeLessThanOrEqual(expected);
    expect(ttl).toBeGreaterThan(expected - 60_000);
    expect(await redis.get(credits)).toBe('20');
    expect(await redis.get(monthCredits)).toBe('20');
    const monthExpected = month.endMs - nowMs + CREDIT_KEY_GRACE_MS;
    expect(await redis.pttl(monthCredits)).toBeLessThanOrEqual(monthExpected);
    expect(await redis.pttl(monthCredits)).toBeGreaterThan(monthExpected - 60_000);
    expect(await redis.pttl(window)).toBeGreaterThan(RATE_KEY_TTL_MS - 60_000);
    expect(await redis.hgetall(window)).toEqual({ s: String(nowMs), c: '1' });
  });

  it('rejects when Redis cannot answer, so the caller can apply onError', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, lazyConnect: true, retryStrategy: () => null });
    const store = new RedisQuotaStore(dead, prefix);
    await expect(store.decide({ account: digest(), rps: 1, credits: 1, period: 'daily', cost: 0, nowMs: Date.now() })).rejects.toThrow();
    dead.disconnect();
  });
});
