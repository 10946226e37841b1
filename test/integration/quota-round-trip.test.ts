// "One round trip": the rate and credit decision of a request is one script call on Redis, seen
// from Redis itself (MONITOR), and concurrent requests share calls; with leases (the default), a
// busy key costs a call per lease, not per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { connect, deletePrefix, monitorConnection, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const prefix = testPrefix('rtt');
const redis = connect();
let explorer: FixtureExplorer;
let gw: TestGateway;
let monitor: Redis;
const seen: string[][] = [];

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  // No cache TTL and no usage rows: the shared cache tier and the usage batches (written off the
  // request path, once a second) stay out of the count, only quota decisions are left. No
  // blocking of wrong keys (security.badKeys): the flood of unknown keys below must reach the key
  // step from this address, and the valid keys after it too (test/integration/bad-keys.test.ts tests the blocking).
  gw = await startGateway(
    makeConfig([explorer.url], {
      redis: { url: REDIS_URL, keyPrefix: prefix, leases: false },
      usage: { enabled: false },
      security: { badKeys: { failures: 0 } },
    }),
  );
  monitor = await monitorConnection(redis);
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // Commands a script runs are listed too, with source "lua": they are not round trips. The
    // webhook outbox is looked at once a second whatever the requests (webhooks/delivery.ts), and
    // the credit alerts read a billed account's balance (one MGET) off the request path, at most
    // once a second (webhooks/credits.ts): neither is a request's, and either may fall in any test's window.
    const offPath = args.some((a) => a.includes('{webhooks}')) || args[0]?.toLowerCase() === 'mget';
    if (source !== 'lua' && args.some((a) => a.startsWith(prefix)) && !offPath) seen.push(args);
  });
});
afterAll(async () => {
  monitor.disconnect();
  await gw.close();
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/**
 * Waits until MONITOR has shown every command sent so far: Redis runs commands one at a time and
 * MONITOR lists them in that order, so a marker sent last is seen last.
 */
let markers = 0;
async function settle(): Promise<void> {
  const marker = `${prefix}marker:${markers++}`;
  await redis.exists(marker);
  await until(() => seen.some((a) => a.includes(marker)), 'MONITOR to show the marker');
  seen.splice(
    seen.findIndex((a) => a.includes(marker)),
    1,
  );
}

describe('quota decisions on Redis', () => {
  it('cost one script call per request, and nothing else', async () => {
    seen.length = 0;
    for (let i = 0; i < 20; i++) expect((await gw.get(BALANCES)).status).toBe(200);
    await settle();
    const commands = seen.map((a) => a[0]!.toLowerCase());
    // EVALSHA, or EVAL when Redis did not know the script yet (ioredis retries a NOSCRIPT with
    // EVAL once; MONITOR may show the failed EVALSHA too).
    const calls = commands.filter((c) => c === 'evalsha' || c === 'eval').length;
    expect(calls).toBeGreaterThanOrEqual(20);
    expect(calls).toBeLessThanOrEqual(21);
    // Besides, once a day per account and process: the account added to the day's usage accounts
    // (quota/redis.ts, indexUsage), in one MULTI (which MONITOR shows as its commands).
    const others = commands.filter((c) => c !== 'evalsha' && c !== 'eval' && c !== 'multi' && c !== 'exec');
    expect(others).toEqual(['sadd', 'pexpire']);
    seen.length = 0;
    for (let i = 0; i < 5; i++) expect((await gw.get(BALANCES)).status).toBe(200);
    await settle();
    expect(seen.map((a) => a[0]!.toLowerCase()).filter((c) => c !== 'evalsha' && c !== 'eval')).toEqual([]);
  });

  it('with leases, cost a call per lease, and the same headers', async () => {
    const leased = await startGateway(
      makeConfig([explorer.url], { redis: { url: REDIS_URL, keyPrefix: `${prefix}leased:` }, usage: { enabled: false } }),
    );
    try {
      await settle();
      seen.length = 0;
      const answers = [];
      for (let i = 0; i < 200; i++) {
        const r = await leased.get(BALANCES);
        await r.arrayBuffer();
        answers.push({
          status: r.status,
          credits: Number(r.headers.get('x-credits-remaining')),
          rate: Number(r.headers.get('x-ratelimit-remaining')),
        });
      }
      await settle();
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
      const credits = answers.map((r) => r.credits);
      const rate = answers.map((r) => r.rate);
      expect(credits[0]).toBe(1_000_000 - 20);
      // The plan's balance less 20 a request, and one slot less each time (the window may turn).
      expect(credits).toEqual(credits.map((_, i) => credits[0]! - 20 * i));
      expect(rate.slice(1).filter((r, i) => !(r === rate[i]! - 1 || r > rate[i]!))).toEqual([]);
      const calls = seen.filter((a) => a[0]!.toLowerCase() === 'evalsha' || a[0]!.toLowerCase() === 'eval').length;
      expect(calls).toBeGreaterThanOrEqual(2);
      expect(calls).toBeLessThan(40);
    } finally {
      await leased.close();
    }
  });

  it('a flood of unknown keys costs Redis nothing: every key is held in process', async () => {
    await settle();
    seen.length = 0;
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => gw.get(BALANCES, { key: `egw_unknown_${i}` }).then((r) => r.status)),
    );
    expect(statuses.every((s) => s === 401)).toBe(true);
    await settle();
    expect(seen).toEqual([]);
  });

  it('share one call per key among the requests of one event-loop turn', async () => {
    seen.length = 0;
    const statuses = await Promise.all(Array.from({ length: 200 }, () => gw.get(BALANCES).then((r) => r.status)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    await settle();
    const calls = seen.filter((a) => a[0]!.toLowerCase() === 'evalsha').length;
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThan(200);
  });
});
