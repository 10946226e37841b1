// "One round trip": the rate and credit decision of a request is one script call on Redis, seen
// from Redis itself (MONITOR), and concurrent requests share calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const prefix = testPrefix('rtt');
const redis = connect();
let explorer: FixtureExplorer;
let gw: TestGateway;
let monitor: Redis;
const seen: string[][] = [];

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  // No cache TTL: the shared cache tier stays out of the count, only quota decisions are left.
  gw = await startGateway(makeConfig([explorer.url], { redis: { url: REDIS_URL, keyPrefix: prefix } }));
  monitor = await redis.duplicate().monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // Commands a script runs are listed too, with source "lua": they are not round trips.
    if (source !== 'lua' && args.some((a) => a.startsWith(prefix))) seen.push(args);
  });
});
afterAll(async () => {
  monitor.disconnect();
  await gw.close();
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const settle = () => new Promise((r) => setTimeout(r, 100));

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
    expect(commands.filter((c) => c !== 'evalsha' && c !== 'eval')).toEqual([]);
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
