// Issue 42, item 4: a Redis frozen (SIGSTOP) under load with the default settings
// (`redis.onError: open`) is not free, unlimited service. The gateway keeps enforcing the plan's
// rps per process and serves each account at most its outage allowance (`redis.outageShare` of
// the balance it last saw), with all four quota headers -1 as the contract says; once Redis runs
// again, everything served is billed there once, in the period's spend and the usage credits.
// A redis-server of this test's own, so that freezing it stops no other suite; the gateway's
// clock is the test's, so a rate window ends when the test moves time, not when the machine
// gets round to it.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { periodWindow } from '../../src/quota/period.js';
import { RedisQuotaStore } from '../../src/quota/redis.js';
import { createRedis, type RedisClient } from '../../src/redis/client.js';
import { utcDay } from '../../src/store/day.js';
import { ADDRESS, closedPort, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const QUOTA_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-credits-remaining'];
const COST = 20;
const RPS = 5;
const CREDITS = 10_000;

let server: ChildProcess;
let port: number;
let probe: RedisClient;
let explorer: FixtureExplorer;
let gw: TestGateway | undefined;
let n = 0;

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  port = await closedPort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  probe = createRedis({ url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 5_000 });
  probe.on('error', () => undefined);
  await until(async () => (await probe.ping().catch(() => '')) === 'PONG', 'redis-server to start');
});
afterEach(async () => {
  server.kill('SIGCONT');
  await gw?.close();
  gw = undefined;
});
afterAll(async () => {
  probe.disconnect();
  server.kill('SIGCONT');
  server.kill();
  await explorer.close();
});

/** The test's clock: starts now, moves only when the test moves it. */
function clock() {
  let t = Date.now();
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

async function gateway(now: () => number, redis: Record<string, unknown> = {}) {
  const prefix = `outage-enforced${n++}:`;
  gw = await startGateway(
    makeConfig([explorer.url], {
      plans: { small: { rps: RPS, credits: CREDITS, period: 'daily' } },
      keys: [{ name: 'demo', key: DEMO_KEY, plan: 'small' }],
      redis: { url: `redis://127.0.0.1:${port}`, keyPrefix: prefix, commandTimeoutMs: 100, ...redis },
    }),
    { now },
  );
  return { g: gw, prefix };
}

const headers = (res: Response) => QUOTA_HEADERS.map((h) => res.headers.get(h));
const burst = (g: TestGateway, count: number) =>
  Promise.all(
    Array.from({ length: count }, async () => {
      const res = await g.get(BALANCES);
      await res.arrayBuffer();
      return res;
    }),
  );
const metric = async (g: TestGateway, line: string) => {
  const text = await (await g.ops('/metrics')).text();
  const found = text.split('\n').find((l) => l.startsWith(line + ' '));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
};
/** Credits spent in the day's period, and the usage credits of the day, as Redis holds them. */
async function inRedis(prefix: string, nowMs: number) {
  // The key's account is its digest (keys/ring.ts): read from the one account the prefix holds.
  const keys = await probe.keys(`${prefix}*`);
  const accountTag = keys.find((k) => k.includes(':credits:'))?.match(/\{([^}]+)\}/)?.[1] ?? 'none';
  const spent = Number((await probe.get(`${prefix}{${accountTag}}:credits:${periodWindow('daily', nowMs).id}`)) ?? 0);
  const usage = Object.values(await probe.hgetall(`${prefix}{${accountTag}}:usage:${utcDay(nowMs)}`)).reduce((s, v) => s + Number(v), 0);
  return { spent, usage };
}

describe('a Redis frozen under load, redis.onError open (the default)', () => {
  it('keeps the rate and an allowance per process, answers -1, and bills what it served once Redis is back', async () => {
    const c = clock();
    const { g, prefix } = await gateway(c.now);
    const first = await g.get(BALANCES);
    expect(first.status).toBe(200);
    const seen = Number(first.headers.get('x-credits-remaining'));
    expect(seen).toBe(CREDITS - COST);

    server.kill('SIGSTOP');
    c.advance(1_000);
    // One window, three times the plan's rps: the rps are served, the rest refused with 429.
    const window = await burst(g, RPS * 3);
    const statuses = window.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array<number>(RPS).fill(200), ...Array<number>(RPS * 2).fill(429)]);
    for (const r of window) expect(headers(r)).toEqual(['-1', '-1', '-1', '-1']);
    expect(window.find((r) => r.status === 429)!.headers.get('retry-after')).toBe('1');

    // Window after window until the allowance (10 % of the balance seen) runs out: then 402.
    const allowance = Math.floor(0.1 * seen);
    let served = RPS * COST;
    let refusedForCredits = 0;
    for (let i = 0; i < 40 && refusedForCredits === 0; i++) {
      c.advance(1_000);
      for (const r of await burst(g, RPS)) {
        if (r.status === 200) served += COST;
        else if (r.status === 402) refusedForCredits++;
        else throw new Error(`unexpected ${r.status}`);
      }
    }
    expect(refusedForCredits).toBeGreaterThan(0);
    expect(served).toBe(Math.floor(allowance / COST) * COST);
    expect(await metric(g, 'egw_quota_outage_owed_credits')).toBe(served);
    expect(await metric(g, 'egw_quota_outage_decisions_total{outcome="rate_limited"}')).toBe(RPS * 2);

    // Redis runs again: what was served is billed once, in the spend and in the usage credits.
    server.kill('SIGCONT');
    c.advance(2_000);
    await until(async () => (await metric(g, 'egw_quota_outage_owed_credits')) === 0, 'the outage to be billed');
    expect(await metric(g, 'egw_quota_outage_credits_total{kind="billed"}')).toBe(served);
    expect(await metric(g, 'egw_quota_outage_credits_total{kind="overdraft"}')).toBe(0);
    const billed = await inRedis(prefix, c.now());
    expect(billed).toEqual({ spent: COST + served, usage: COST + served });

    // And enforced from Redis again, the balance counting all of it.
    const after = await until(async () => {
      c.advance(1_000);
      const res = await g.get(BALANCES);
      return res.headers.get('x-ratelimit-limit') === String(RPS) ? res : undefined;
    }, 'the gateway to decide in Redis again');
    expect(Number(after.headers.get('x-credits-remaining'))).toBe(CREDITS - 2 * COST - served);
  }, 60_000);

  it('a JSON-RPC batch decided while Redis is away is billed per call once it is back', async () => {
    const c = clock();
    const { g, prefix } = await gateway(c.now);
    expect((await g.get(BALANCES)).status).toBe(200);
    server.kill('SIGSTOP');
    c.advance(1_000);
    const calls = ['eth_blockNumber', 'eth_chainId', 'eth_gasPrice'].map((method, id) => ({ jsonrpc: '2.0', id, method, params: [] }));
    const res = await g.get('/1/json-rpc', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(calls),
    });
    expect(res.status).toBe(200);
    expect(headers(res)).toEqual(['-1', '-1', '-1', '-1']);
    const answers = (await res.json()) as { id: number; result?: string }[];
    expect(answers.map((a) => typeof a.result)).toEqual(['string', 'string', 'string']);
    const owed = await metric(g, 'egw_quota_outage_owed_credits');
    expect(owed).toBeGreaterThan(0);
    server.kill('SIGCONT');
    c.advance(2_000);
    await until(async () => (await metric(g, 'egw_quota_outage_owed_credits')) === 0, 'the outage to be billed');
    expect(await inRedis(prefix, c.now())).toEqual({ spent: COST + owed!, usage: COST + owed! });
  }, 30_000);

  it('redis.outageShare 0 refuses with 402 while Redis is away, and bills nothing', async () => {
    const c = clock();
    const { g, prefix } = await gateway(c.now, { outageShare: 0 });
    expect((await g.get(BALANCES)).status).toBe(200);
    server.kill('SIGSTOP');
    c.advance(1_000);
    const res = await g.get(BALANCES);
    expect(res.status).toBe(402);
    expect(headers(res)).toEqual(['-1', '-1', '-1', '-1']);
    server.kill('SIGCONT');
    await until(async () => (await probe.ping()) === 'PONG', 'Redis to answer');
    expect(await inRedis(prefix, c.now())).toEqual({ spent: COST, usage: COST });
  }, 30_000);
});

describe('a charge of an outage (RedisQuotaStore.charge)', () => {
  it('bills the allowance, then bought credits, counts the rest as spent, and bills once however often it is sent', async () => {
    const client = createRedis({ url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 2_000 });
    client.on('error', () => undefined);
    await until(() => client.status === 'ready', 'the connection');
    const prefix = `outage-charge${n++}:`;
    const store = new RedisQuotaStore(client, prefix, { leases: false });
    const now = Date.now();
    const day = periodWindow('daily', now);
    await store.topUp('acct', 30);
    await probe.set(`${prefix}{acct}:credits:${day.id}`, '90');
    const charge = {
      id: 'proc.o1',
      account: 'acct',
      period: 'daily' as const,
      periodId: day.id,
      planCredits: 100,
      atMs: now,
      rows: [
        { keyId: 'key_1', usageAccount: '', chain: '1', route: 'blocks', credits: 40 },
        { keyId: 'key_1', usageAccount: '', chain: '1', route: 'rpc', credits: 20 },
      ],
    };
    expect(await store.charge(charge)).toEqual({ applied: 1, fromAllowance: 10, fromTopup: 30, overdraft: 20 });
    // Sent again (a reply lost): nothing more.
    expect(await store.charge(charge)).toEqual({ applied: 0, fromAllowance: 0, fromTopup: 0, overdraft: 0 });
    expect(await probe.get(`${prefix}{acct}:credits:${day.id}`)).toBe('120');
    expect(await probe.get(`${prefix}{acct}:topup`)).toBe('0');
    const usage = await probe.hgetall(`${prefix}{acct}:usage:${utcDay(now)}`);
    expect(Object.values(usage).map(Number).sort()).toEqual([20, 40]);
    expect(await probe.pttl(`${prefix}{acct}:credits:${day.id}`)).toBeGreaterThan(0);
    const balance = await store.balance('acct', 'daily', now);
    expect(balance).toMatchObject({ spent: 120, topup: 0 });
    await store.close();
    client.disconnect();
  });
});
