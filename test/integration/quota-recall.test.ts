// Recalls (quota/recall.ts): a process about to refuse a request for credits that another
// process's lease holds asks that process to settle first, and decides again. Two stores on one
// real Redis, each with its own subscriber connection, stand for two gateway processes; the
// decisions' clock is moved by the test.
import { afterAll, describe, expect, it } from 'vitest';
import { periodWindow } from '../../src/quota/period.js';
import { RECALL_HOLD_MS, RedisQuotaStore } from '../../src/quota/redis.js';
import type { QuotaDecision, QuotaQuery } from '../../src/quota/types.js';
import { createRedis } from '../../src/redis/client.js';
import { closedPort } from '../support/gateway.js';
import { connect, deletePrefix, testPrefix } from '../support/redis.js';

const DAY_MS = 86_400_000;
/** Noon UTC today: a period that has not ended, far from its edges. */
const noon = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS / 2;
const periodId = periodWindow('daily', noon).id;

const redis = connect();
const prefix = testPrefix('recall');
const subscribers: { disconnect(): void }[] = [];
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  for (const s of subscribers) s.disconnect();
});

let n = 0;
const account = () => `recall${(n++).toString(16).padStart(4, '0')}`;
const query = (over: Partial<QuotaQuery> & { account: string }): QuotaQuery => ({
  rps: 1_000_000,
  credits: 100_000,
  period: 'daily',
  cost: 20,
  nowMs: noon,
  ...over,
});

/** A decision, as a promise whether the store answered at once (a lease) or asked Redis. */
const decide = (store: RedisQuotaStore, q: QuotaQuery): Promise<QuotaDecision> => Promise.resolve(store.decide(q));

/** A store as a gateway process makes it: its own subscriber connection for recalls (or none). */
function gatewayStore(clock: () => number, recall = true): RedisQuotaStore {
  const subscriber = () => {
    const s = connect();
    subscribers.push(s);
    return s;
  };
  return new RedisQuotaStore(redis, prefix, { now: clock, ...(recall ? { subscriber } : {}) });
}

/**
 * The operator's skewed run: 2,500 requests to the first process, then 3,500 to the second, two
 * a turn, 1 ms apart. Returns every answer in order, and what each process's last lease held.
 */
async function skewedRun(recall: boolean): Promise<{ answers: QuotaDecision[]; spent: number }> {
  const a = account();
  let clock = noon;
  const one = gatewayStore(() => clock, recall);
  const two = gatewayStore(() => clock, recall);
  const answers: QuotaDecision[] = [];
  for (let step = 0; step < 3_000; step++) {
    clock = noon + step;
    const store = step < 1_250 ? one : two;
    const turn = [decide(store, query({ account: a, nowMs: clock })), decide(store, query({ account: a, nowMs: clock }))];
    answers.push(...(await Promise.all(turn)));
  }
  await Promise.all([one.close(), two.close()]);
  return { answers, spent: Number(await redis.get(`${prefix}{${a}}:credits:${periodId}`)) };
}

describe('lease recalls', () => {
  it('never refuse a request the account can pay while another process holds its credits: 5,000 served of 100,000 credits at 20, then refusals only', async () => {
    const { answers, spent } = await skewedRun(true);
    const firstRefusal = answers.findIndex((d) => d.outcome !== 'ok');
    // 100,000 credits pay exactly 5,000 requests of 20: every one of them served, none refused before.
    expect(firstRefusal).toBe(5_000);
    expect(answers.slice(firstRefusal).every((d) => d.outcome === 'out_of_credits')).toBe(true);
    expect(answers.filter((d) => d.outcome === 'ok')).toHaveLength(5_000);
    // Never more than the balance: Redis billed every credit once.
    expect(spent).toBe(100_000);
    // A refusal shows what is left, below the cost; every answer's balance is one the costs can leave.
    for (const d of answers.slice(firstRefusal)) expect(d.credits).toBeLessThan(20);
    expect(answers.filter((d) => d.credits % 20 !== 0)).toEqual([]);
  });

  it('without recalls (no subscriber), the same run refuses requests the account could pay: what the recall fixes', async () => {
    const { answers, spent } = await skewedRun(false);
    const ok = answers.filter((d) => d.outcome === 'ok').length;
    const firstRefusal = answers.findIndex((d) => d.outcome !== 'ok');
    expect(firstRefusal).toBeLessThan(5_000);
    expect(spent).toBe(ok * 20);
    expect(ok).toBeLessThanOrEqual(5_000);
  });

  it('take no lease while the process does not hear recalls yet, so another process never refuses what it could pay', async () => {
    // Issue 42, item 9: a worker that took a lease before its subscription was ready could not be
    // asked to settle it; another worker answered 402 while that lease still held credits.
    const clock = noon;
    const unreachable = await closedPort();
    const deaf = new RedisQuotaStore(redis, prefix, {
      now: () => clock,
      subscriber: () => {
        const s = createRedis({ url: `redis://127.0.0.1:${unreachable}`, commandTimeoutMs: 100 });
        s.on('error', () => undefined);
        subscribers.push(s);
        return s;
      },
    });
    const two = gatewayStore(() => clock);
    const b = account();
    await Promise.all(Array.from({ length: 64 }, () => decide(deaf, query({ account: b }))));
    await Promise.all(Array.from({ length: 64 }, () => decide(deaf, query({ account: b }))));
    expect(await redis.hlen(`${prefix}{${b}}:leases:${periodId}`)).toBe(0);
    let served = 128;
    for (let turn = 0; turn < 200 && served < 5_000; turn++) {
      const answers = await Promise.all(Array.from({ length: 32 }, () => decide(two, query({ account: b }))));
      const ok = answers.filter((d) => d.outcome === 'ok').length;
      // Every request the balance can pay is served: refusals only past the 5,000th.
      expect(ok).toBe(Math.min(32, 5_000 - served));
      served += ok;
    }
    expect(served).toBe(5_000);
    await Promise.all([deaf.close(), two.close()]);
  });

  it('settle the lease another process holds when it recalls it, and take no new lease for the account meanwhile', async () => {
    let clock = noon;
    const one = gatewayStore(() => clock);
    const two = gatewayStore(() => clock);
    // A process takes leases once it hears recalls (as a gateway process does, from its start).
    expect(await one.hearsRecalls()).toBe(true);
    // One process decides a burst and keeps a lease; the other drains the rest and recalls it.
    const b = account();
    await Promise.all(Array.from({ length: 64 }, () => decide(one, query({ account: b }))));
    expect(await redis.hlen(`${prefix}{${b}}:leases:${periodId}`)).toBe(1);
    let served = 64;
    for (let turn = 0; turn < 200 && served < 5_000; turn++) {
      const answers = await Promise.all(Array.from({ length: 32 }, () => decide(two, query({ account: b }))));
      served += answers.filter((d) => d.outcome === 'ok').length;
      if (answers.some((d) => d.outcome === 'out_of_credits')) break;
    }
    expect(served).toBe(5_000);
    // The first process heard the recall: its next requests are decided in Redis, without a lease.
    const after = one.decide(query({ account: b }));
    expect(after).toBeInstanceOf(Promise);
    expect((await after).outcome).toBe('out_of_credits');
    // The hold ends RECALL_HOLD_MS later, and the sweep forgets it even if the account never comes back.
    expect(one.recallHolds).toBe(1);
    await one.sweep(clock);
    expect(one.recallHolds).toBe(1);
    clock += RECALL_HOLD_MS;
    await one.sweep(clock);
    expect(one.recallHolds).toBe(0);
    await Promise.all([one.close(), two.close()]);
    expect(Number(await redis.get(`${prefix}{${b}}:credits:${periodId}`))).toBe(100_000);
  });
});
