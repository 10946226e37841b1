// One contract, two implementations: the in-process store and the Redis store (a real
// redis-server) must take the same decisions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { periodWindow } from '../../src/quota/period.js';
import { RedisQuotaStore } from '../../src/quota/redis.js';
import type { QuotaDecision, QuotaQuery, QuotaStore } from '../../src/quota/types.js';
import { connect, deletePrefix, testPrefix } from '../support/redis.js';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
let n = 0;
/** A fresh key identity per test, so tests never share windows or balances. */
const digest = () => `${'d'.repeat(56)}${(n++).toString(16).padStart(8, '0')}`;
const query = (over: Partial<QuotaQuery>): QuotaQuery => ({
  digest: 'x',
  rps: 1000,
  credits: 1000,
  period: 'daily',
  cost: 20,
  nowMs: NOON,
  ...over,
});

let redis: Redis;
const prefix = testPrefix('quota');
beforeAll(() => {
  redis = connect();
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const implementations: [string, () => QuotaStore][] = [
  ['memory', () => new MemoryQuotaStore()],
  ['redis', () => new RedisQuotaStore(redis, prefix)],
];

describe.each(implementations)('quota store contract: %s', (_name, make) => {
  it('allows rps requests in a window, then refuses with the time until the window ends', async () => {
    const store = make();
    const d = digest();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await store.decide(query({ digest: d, rps: 3, cost: 0 })));
    expect(results.map((r) => r.outcome)).toEqual(['ok', 'ok', 'ok', 'rate_limited']);
    expect(results.map((r) => r.rateRemaining)).toEqual([2, 1, 0, 0]);
    for (const r of results) {
      expect(r.rateResetMs).toBeGreaterThan(0);
      expect(r.rateResetMs).toBeLessThanOrEqual(1000);
    }
  });

  it('concurrent decisions on one key are counted in arrival order', async () => {
    const store = make();
    const d = digest();
    const all = await Promise.all(Array.from({ length: 6 }, async () => store.decide(query({ digest: d, rps: 3, credits: 50, cost: 20 }))));
    expect(all.map((r) => r.outcome)).toEqual(['ok', 'ok', 'out_of_credits', 'rate_limited', 'rate_limited', 'rate_limited']);
    expect(all.map((r) => r.rateRemaining)).toEqual([2, 1, 0, 0, 0, 0]);
    expect(all.map((r) => r.credits)).toEqual([30, 10, 10, 10, 10, 10]);
  });

  it('refused requests do not use up the next window', async () => {
    const store = make();
    const d = digest();
    let last: QuotaDecision | undefined;
    for (let i = 0; i < 10; i++) last = await store.decide(query({ digest: d, rps: 2, cost: 0 }));
    expect(last?.outcome).toBe('rate_limited');
    await new Promise((r) => setTimeout(r, (last?.rateResetMs ?? 1000) + 30));
    const next = await store.decide(query({ digest: d, rps: 2, cost: 0 }));
    expect(next).toMatchObject({ outcome: 'ok', rateRemaining: 1 });
  });

  it('bills the cost and reports the balance after billing', async () => {
    const store = make();
    const d = digest();
    expect(await store.decide(query({ digest: d, cost: 20 }))).toMatchObject({ outcome: 'ok', credits: 980, billed: 20 });
    expect(await store.decide(query({ digest: d, cost: 50 }))).toMatchObject({ outcome: 'ok', credits: 930, billed: 50 });
  });

  it('takes nothing when the balance is below the cost, and shows the balance left', async () => {
    const store = make();
    const d = digest();
    expect(await store.decide(query({ digest: d, credits: 50, cost: 40 }))).toMatchObject({ outcome: 'ok', credits: 10 });
    expect(await store.decide(query({ digest: d, credits: 50, cost: 20 }))).toMatchObject({ outcome: 'out_of_credits', credits: 10, billed: 0 });
    expect(await store.decide(query({ digest: d, credits: 50, cost: 10 }))).toMatchObject({ outcome: 'ok', credits: 0 });
  });

  it('a rate-limited request costs no credits', async () => {
    const store = make();
    const d = digest();
    await store.decide(query({ digest: d, rps: 1, cost: 20 }));
    expect(await store.decide(query({ digest: d, rps: 1, cost: 20 }))).toMatchObject({ outcome: 'rate_limited', credits: 980, billed: 0 });
  });

  it('cost 0 takes a rate decision only', async () => {
    const store = make();
    const d = digest();
    expect(await store.decide(query({ digest: d, cost: 0 }))).toMatchObject({ outcome: 'ok', credits: 1000, billed: 0 });
  });

  it('hundreds of concurrent decisions on a small balance spend exactly that balance', async () => {
    const store = make();
    const d = digest();
    const all = await Promise.all(Array.from({ length: 300 }, async () => store.decide(query({ digest: d, credits: 1000, cost: 20 }))));
    expect(all.filter((r) => r.outcome === 'ok')).toHaveLength(50);
    expect(all.filter((r) => r.outcome === 'out_of_credits')).toHaveLength(250);
    expect(Math.min(...all.map((r) => r.credits))).toBe(0);
    expect(await store.decide(query({ digest: d, credits: 1000, cost: 1 }))).toMatchObject({ outcome: 'out_of_credits', credits: 0 });
  });

  it('a refund gives credits back to the period they came from', async () => {
    const store = make();
    const d = digest();
    const first = await store.decide(query({ digest: d, cost: 100 }));
    await store.refund({ digest: d, periodId: first.periodId, amount: 100 });
    expect(await store.decide(query({ digest: d, cost: 0 }))).toMatchObject({ credits: 1000 });
  });

  it('a daily balance is full again at 00:00 UTC', async () => {
    const store = make();
    const d = digest();
    const lastMs = Date.UTC(2026, 10, 22, 23, 59, 59, 999);
    expect(await store.decide(query({ digest: d, credits: 40, cost: 40, nowMs: lastMs }))).toMatchObject({ outcome: 'ok', credits: 0 });
    expect(await store.decide(query({ digest: d, credits: 40, cost: 40, nowMs: lastMs }))).toMatchObject({ outcome: 'out_of_credits' });
    const midnight = Date.UTC(2026, 10, 23);
    expect(await store.decide(query({ digest: d, credits: 40, cost: 40, nowMs: midnight }))).toMatchObject({ outcome: 'ok', credits: 0 });
  });

  it('a monthly balance lasts the month and is full again on the 1st at 00:00 UTC', async () => {
    const store = make();
    const d = digest();
    const q = (nowMs: number) => query({ digest: d, credits: 40, cost: 40, period: 'monthly', nowMs });
    expect((await store.decide(q(Date.UTC(2026, 10, 1)))).outcome).toBe('ok');
    expect((await store.decide(q(Date.UTC(2026, 10, 30, 23, 59, 59)))).outcome).toBe('out_of_credits');
    expect((await store.decide(q(Date.UTC(2026, 11, 1)))).outcome).toBe('ok');
  });

  it('a refund into a period that has ended does not touch the new one', async () => {
    const store = make();
    const d = digest();
    const old = await store.decide(query({ digest: d, credits: 100, cost: 60, nowMs: Date.UTC(2026, 10, 22, 23, 0) }));
    const now = Date.UTC(2026, 10, 23, 1, 0);
    await store.decide(query({ digest: d, credits: 100, cost: 60, nowMs: now }));
    await store.refund({ digest: d, periodId: old.periodId, amount: 60 });
    expect(await store.decide(query({ digest: d, credits: 100, cost: 0, nowMs: now }))).toMatchObject({ credits: 40 });
  });
});

describe('redis quota store', () => {
  it('keeps the keys of one decision under one hash tag, and the period counter expires by itself', async () => {
    const store = new RedisQuotaStore(redis, prefix);
    const d = digest();
    const nowMs = Date.now();
    await store.decide(query({ digest: d, nowMs }));
    const keys = (await redis.keys(`${prefix}{${d}}*`)).sort();
    expect(keys).toEqual([`${prefix}{${d}}:credits:${periodWindow('daily', nowMs).id}`, `${prefix}{${d}}:rate`]);
    const ttlMs = await redis.pttl(keys[0]!);
    const untilMidnight = periodWindow('daily', nowMs).endMs - nowMs;
    expect(ttlMs).toBeGreaterThan(0);
    expect(Math.abs(ttlMs - untilMidnight)).toBeLessThan(2_000);
    expect(await redis.pttl(keys[1]!)).toBeLessThanOrEqual(1000);
  });

  it('rejects when Redis cannot answer, so the caller can apply onError', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, lazyConnect: true, retryStrategy: () => null });
    const store = new RedisQuotaStore(dead, prefix);
    await expect(store.decide(query({ digest: digest() }))).rejects.toThrow();
    dead.disconnect();
  });
});
