// Usage credits with Redis (quota/usage-credits.ts): the scripts that bill credits count them per
// usage row in the same atomic call, so that what the usage report shows equals what the account
// was charged, whatever happens to the process: a decision billed in Redis, a lease settled (once,
// however often it is sent), a refund in Redis or into the lease, a call voided, a lease a
// crashed process never settled. Real Redis; every instant is the decision's clock, moved by the
// test.
import { afterAll, describe, expect, it } from 'vitest';
import { periodWindow } from '../../src/quota/period.js';
import { LEASE_GRACE_MS, RedisQuotaStore } from '../../src/quota/redis.js';
import { usageCreditField } from '../../src/quota/redis-keys.js';
import { encodeUsage, QuotaScripts } from '../../src/quota/redis-scripts.js';
import type { QuotaQuery } from '../../src/quota/types.js';
import { listUsageCredits } from '../../src/quota/usage-credits.js';
import { RATE_WINDOW_MS } from '../../src/quota/window.js';
import { HOUR_MS, utcDay, utcHour } from '../../src/store/day.js';
import type { UsageRow } from '../../src/store/types.js';
import { connect, deletePrefix, testPrefix } from '../support/redis.js';

const DAY_MS = 86_400_000;
/** Noon UTC today: a period that has not ended, far from its edges. */
const noon = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS / 2;
const today = utcDay(noon);
const period = periodWindow('monthly', noon);

const redis = connect();
const prefix = testPrefix('usage-credits');
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

let n = 0;
const account = () => `uc${(n++).toString(16).padStart(4, '0')}`;
const ROUTES = [
  { route: 'blocks', cost: 10 },
  { route: 'transactions', cost: 30 },
  { route: 'rpc.eth_call', cost: 7 },
] as const;

const query = (a: string, i: number, over: Partial<QuotaQuery> = {}): QuotaQuery => {
  const r = ROUTES[i % ROUTES.length]!;
  return {
    account: a,
    rps: 1_000_000,
    credits: 1_000_000,
    period: 'monthly',
    cost: r.cost,
    nowMs: noon,
    keyId: `key_${a}`,
    chain: i % 2 === 0 ? '1' : '10',
    route: r.route,
    ...over,
  };
};

/** What Redis charged the account: the period's allowance spent, and bought credits used. */
async function charged(a: string, boughtAtStart = 0): Promise<number> {
  const [spent, topup] = await redis.mget(`${prefix}{${a}}:credits:${period.id}`, `${prefix}{${a}}:topup`);
  return Number(spent ?? 0) + boughtAtStart - Number(topup ?? 0);
}

const sum = (rows: readonly UsageRow[]) => rows.reduce((s, r) => s + r.credits, 0);
const byRow = (rows: readonly UsageRow[]) => Object.fromEntries(rows.map((r) => [`${r.chain} ${r.route}`, r.credits]));

/** Decides `count` requests of the account, `perTurn` at a time (one event-loop turn each); what each billed, by row. */
async function load(
  store: RedisQuotaStore,
  a: string,
  count: number,
  perTurn: number,
  refundEvery = 0,
  over: Partial<QuotaQuery> = {},
): Promise<Record<string, number>> {
  const expected: Record<string, number> = {};
  for (let i = 0; i < count; i += perTurn) {
    const turn = Array.from({ length: Math.min(perTurn, count - i) }, (_, j) => query(a, i + j, over));
    const decided = await Promise.all(turn.map((q) => Promise.resolve(store.decide(q))));
    for (const [j, d] of decided.entries()) {
      const q = turn[j]!;
      expect(d.outcome).toBe('ok');
      const row = `${q.chain} ${q.route}`;
      expected[row] = (expected[row] ?? 0) + d.billed;
      if (refundEvery > 0 && (i + j) % refundEvery === 0) {
        await store.refund({
          account: a,
          periodId: d.periodId,
          amount: d.billed,
          fromTopup: d.fromTopup,
          usage: { nowMs: q.nowMs, keyId: q.keyId!, account: q.usageAccount ?? '', chain: q.chain!, route: q.route! },
        });
        expected[row] -= d.billed;
      }
    }
  }
  return expected;
}

describe('usage credits with Redis', () => {
  for (const leases of [false, true]) {
    it(`count what each decision billed, by usage row, refunds taken off (leases ${leases ? 'on' : 'off'})`, async () => {
      const a = account();
      const store = new RedisQuotaStore(redis, prefix, { leases, now: () => noon });
      const expected = await load(store, a, 600, 8, 7);
      await store.close();
      const rows = await listUsageCredits(redis, store.keys, { from: today, to: today }, [a]);
      expect(byRow(rows)).toEqual(Object.fromEntries(Object.entries(expected).filter(([, c]) => c !== 0)));
      expect(rows.every((r) => r.keyId === `key_${a}` && r.day === today)).toBe(true);
      expect(sum(rows)).toBe(await charged(a));
      expect(sum(rows)).toBeGreaterThan(0);
    });
  }

  it('bought credits count too, and the day lists every account without being told them', async () => {
    const a = account();
    const b = account();
    const store = new RedisQuotaStore(redis, prefix, { now: () => noon });
    await store.topUp(a, 5_000);
    // An allowance of 1,000 a month: the rest comes from bought credits.
    const expectedA = await load(store, a, 120, 4, 5, { credits: 1_000 });
    const expectedB = await load(store, b, 50, 1);
    await store.close();
    const rows = await listUsageCredits(redis, store.keys, { from: today, to: today });
    const ofA = rows.filter((r) => r.keyId === `key_${a}`);
    const ofB = rows.filter((r) => r.keyId === `key_${b}`);
    expect(byRow(ofA)).toEqual(expectedA);
    expect(byRow(ofB)).toEqual(expectedB);
    expect(sum(ofA)).toBe(await charged(a, 5_000));
    expect(sum(ofA)).toBeGreaterThan(1_000);
    // The filters of the report.
    const onChain10 = await listUsageCredits(redis, store.keys, { from: today, to: today, keyIds: new Set([`key_${b}`]), chain: '10' });
    expect(onChain10.length).toBeGreaterThan(0);
    expect(onChain10.every((r) => r.chain === '10' && r.keyId === `key_${b}`)).toBe(true);
  });

  for (const leases of [false, true]) {
    it(`count them per UTC hour too, in the same calls: each hour holds what was decided in it, and a day's hours sum to the day, per row and account (leases ${leases ? 'on' : 'off'})`, async () => {
      const a = account();
      const clock = { now: noon - 2 * HOUR_MS };
      const store = new RedisQuotaStore(redis, prefix, { leases, now: () => clock.now });
      const byHour: Record<string, Record<string, number>> = {};
      // Three hours of today; the middle one's requests counted under a selling account.
      for (const [h, over] of [
        [-2, {}],
        [-1, { usageAccount: 'acc_uc' }],
        [0, {}],
      ] as const) {
        clock.now = noon + h * HOUR_MS + 1_000;
        const expected = await load(store, a, 300, 6, 5, { nowMs: clock.now, ...over });
        byHour[`${utcHour(clock.now)} ${'usageAccount' in over ? over.usageAccount : ''}`] = expected;
        // The lease of this hour lives on until the next hour's first call (or the close) settles it.
      }
      await store.close();
      const daily = await listUsageCredits(redis, store.keys, { from: today, to: today }, [a]);
      const hourly = await listUsageCredits(redis, store.keys, { from: today, to: today, granularity: 'hour' }, [a]);
      expect(sum(daily)).toBe(await charged(a));
      expect(sum(hourly)).toBe(sum(daily));
      for (const [at, expected] of Object.entries(byHour)) {
        const [hour, acc] = at.split(' ') as [string, string];
        const rows = hourly.filter((r) => r.hour === hour);
        expect(rows.every((r) => r.account === acc && r.day === today)).toBe(true);
        expect(byRow(rows)).toEqual(Object.fromEntries(Object.entries(expected).filter(([, c]) => c !== 0)));
      }
      for (const d of daily) {
        const hours = hourly.filter((r) => r.keyId === d.keyId && r.chain === d.chain && r.route === d.route && r.account === d.account);
        expect(hours.length).toBeGreaterThan(0);
        expect(sum(hours), `${d.chain} ${d.route} ${d.account}`).toBe(d.credits);
      }
      expect(new Set(daily.map((r) => r.account))).toEqual(new Set(['', 'acc_uc']));
      expect(await listUsageCredits(redis, store.keys, { from: today, to: today, accounts: new Set(['acc_uc']) }, [a])).toEqual(
        daily.filter((r) => r.account === 'acc_uc'),
      );
    });
  }

  it("a lease its process never settled (a crash) bills nothing and counts nothing; the survivor's spend counts once", async () => {
    const a = account();
    const crashed = new RedisQuotaStore(redis, prefix, { now: () => noon });
    const survivor = new RedisQuotaStore(redis, prefix, { now: () => noon });
    await load(crashed, a, 200, 8);
    // The crashed store is dropped without closing: its lease's reservation lapses after the grace.
    const later = noon + RATE_WINDOW_MS + LEASE_GRACE_MS + 1;
    const rows0 = await listUsageCredits(redis, crashed.keys, { from: today, to: today }, [a]);
    expect(sum(rows0)).toBe(await charged(a));
    const expected: Record<string, number> = {};
    for (let i = 0; i < 100; i++) {
      const q = query(a, i, { nowMs: later });
      const d = await survivor.decide(q);
      expected[`${q.chain} ${q.route}`] = (expected[`${q.chain} ${q.route}`] ?? 0) + d.billed;
    }
    await survivor.close();
    // Settled twice (the crashed store's owed settlement arriving late): billed and counted once.
    await crashed.close();
    const rows = await listUsageCredits(redis, crashed.keys, { from: today, to: today }, [a]);
    expect(sum(rows)).toBe(await charged(a));
    expect(sum(rows)).toBeGreaterThanOrEqual(Object.values(expected).reduce((s, c) => s + c, 0));
  });

  it('a voided call takes off the usage rows it counted, and a call that arrives after its void counts nothing', async () => {
    const scripts = new QuotaScripts(redis);
    const keys = new RedisQuotaStore(redis, prefix).keys;
    const a = account();
    const field = usageCreditField(`key_${a}`, '1', 'blocks');
    const callKeys = (callId: string) => ({
      windowKey: keys.rate(a),
      creditsKey: keys.credits(a, period.id),
      twinCreditsKey: keys.credits(a, `d${today.replaceAll('-', '')}`),
      topupKey: keys.topup(a),
      reservationsKey: keys.reservations(a, period.id),
      backCreditsKey: keys.credits(a, period.id),
      backTwinCreditsKey: keys.credits(a, `d${today.replaceAll('-', '')}`),
      backReservationsKey: keys.reservations(a, period.id),
      callKey: keys.call(a, callId),
      usageKey: keys.usageCredits(a, today),
      backUsageKey: keys.usageCredits(a, today),
      usageHourKey: keys.usageHourCredits(a, today),
      backUsageHourKey: keys.usageHourCredits(a, today),
    });
    const args = {
      nowMs: noon,
      rps: 1_000,
      windowMs: RATE_WINDOW_MS,
      rateKeyTtlMs: 60_000,
      planCredits: 100_000,
      creditKeyTtlMs: 3_600_000,
      twinKeyTtlMs: 3_600_000,
      backTwinKeyTtlMs: 3_600_000,
      wantSlots: 0,
      backWindowStartMs: 0,
      backSlots: 0,
      backId: '',
      backAllowance: 0,
      backTopup: 0,
      leaseId: '',
      leaseDeadlineMs: 0,
      callRecordMs: 60_000,
      usageTtlMs: 3_600_000,
      backUsageTtlMs: 3_600_000,
      usageHour: '12',
      backUsageHour: '12',
      usageHourTtlMs: 3_600_000,
      backUsageHourTtlMs: 3_600_000,
      backUsage: encodeUsage([]),
      redoWindowStartMs: 0,
      redoSlots: 0,
      costs: [10, 10, 5],
      fields: [field, field, usageCreditField(`key_${a}`, '1', 'txs|x')],
    };
    const voidKeys = (callId: string) => ({
      callKey: keys.call(a, callId),
      creditsKey: keys.credits(a, period.id),
      twinCreditsKey: keys.credits(a, `d${today.replaceAll('-', '')}`),
      topupKey: keys.topup(a),
      reservationsKey: keys.reservations(a, period.id),
      usageKey: keys.usageCredits(a, today),
      usageHourKey: keys.usageHourCredits(a, today),
    });
    await scripts.decide(callKeys('one'), args);
    expect(await redis.hgetall(keys.usageCredits(a, today))).toEqual({ [field]: '20', [usageCreditField(`key_${a}`, '1', 'txs|x')]: '5' });
    expect(await redis.hgetall(keys.usageHourCredits(a, today))).toEqual({
      [`12|${field}`]: '20',
      [`12|${usageCreditField(`key_${a}`, '1', 'txs|x')}`]: '5',
    });
    expect(await scripts.void(voidKeys('one'), { leaseId: '', usageHour: '12', callRecordMs: 60_000 })).toBe(1);
    expect(await redis.hgetall(keys.usageCredits(a, today))).toEqual({ [field]: '0', [usageCreditField(`key_${a}`, '1', 'txs|x')]: '0' });
    expect(await redis.hgetall(keys.usageHourCredits(a, today))).toEqual({
      [`12|${field}`]: '0',
      [`12|${usageCreditField(`key_${a}`, '1', 'txs|x')}`]: '0',
    });
    // Voided first, run later: nothing billed, nothing counted.
    await scripts.void(voidKeys('two'), { leaseId: '', usageHour: '12', callRecordMs: 60_000 });
    await scripts.decide(callKeys('two'), args);
    expect(await listUsageCredits(redis, keys, { from: today, to: today }, [a])).toEqual([]);
    expect(await charged(a)).toBe(0);
  });
});
