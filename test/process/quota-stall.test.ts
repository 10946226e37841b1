// A 5xx never costs credits, whatever Redis does (issue 23): a Redis frozen with SIGSTOP runs the
// calls it had received once it resumes, after the gateway gave up on their replies and answered
// as if the store had failed (nothing billed). Those calls are voided: what they billed is given
// back and the lease they granted dropped. A refund Redis could not take is kept and sent again
// until it can, and applied once however often it is sent. Usage credits (quota/usage-credits.ts)
// move with the billing in each case. A redis-server of this test's own, so that freezing it stops
// no other suite.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodWindow } from '../../src/quota/period.js';
import { RedisQuotaStore } from '../../src/quota/redis.js';
import { createRedis, type RedisClient } from '../../src/redis/client.js';
import { utcDay } from '../../src/store/day.js';
import { closedPort } from '../support/gateway.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';

let server: ChildProcess;
let port: number;
/** The test's view of Redis: its own connection, never frozen out by a timeout. */
let probe: RedisClient;
let n = 0;

beforeAll(async () => {
  port = await closedPort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  probe = createRedis({ url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 5_000 });
  probe.on('error', () => undefined);
  await until(async () => (await probe.ping().catch(() => '')) === 'PONG', 'redis-server to start');
});
afterAll(() => {
  probe.disconnect();
  server.kill('SIGCONT');
  server.kill();
});

/** A gateway's connection: commands time out after 100 ms, as `redis.commandTimeoutMs` sets. */
function gatewayClient(url = `redis://127.0.0.1:${port}`): RedisClient {
  const client = createRedis({ url, commandTimeoutMs: 100 });
  client.on('error', () => undefined);
  return client;
}

const prefix = () => `stall${n++}:`;
const row = { keyId: 'key_acct', chain: '1', route: 'blocks' };
const query = (account: string, nowMs: number) => ({
  account,
  rps: 1_000,
  credits: 10_000,
  period: 'daily' as const,
  cost: 20,
  nowMs,
  ...row,
});
const spent = async (p: string, account: string, nowMs: number) =>
  Number((await probe.get(`${p}{${account}}:credits:${periodWindow('daily', nowMs).id}`)) ?? 0);
/** The credits of the account's usage rows that day, in Redis. */
const usage = async (p: string, account: string, nowMs: number) =>
  Object.values(await probe.hgetall(`${p}{${account}}:usage:${utcDay(nowMs)}`)).reduce((s, v) => s + Number(v), 0);

/** Freezes Redis for as long as `during` takes, then lets it run what it received meanwhile. */
async function frozen<T>(during: () => Promise<T>): Promise<T> {
  server.kill('SIGSTOP');
  try {
    return await during();
  } finally {
    server.kill('SIGCONT');
  }
}

describe('a Redis that stalls', () => {
  it.each([false, true])(
    'gives back what a decision call billed when its reply timed out (leases %s)',
    async (leases) => {
      const client = gatewayClient();
      await until(() => client.status === 'ready', 'the connection');
      const p = prefix();
      const store = new RedisQuotaStore(client, p, { leases });
      const now = Date.now();
      expect(await store.decide(query('acct', now))).toMatchObject({ outcome: 'ok', billed: 20 });
      // A burst whose call reaches the frozen Redis: answered as a failure (the caller's
      // redis.onError), so it must not be billed when Redis runs it later.
      const burst = await frozen(() =>
        Promise.allSettled(Array.from({ length: 5 }, () => Promise.resolve(store.decide(query('acct', now + 1))))).then((r) =>
          r.map((x) => x.status),
        ),
      );
      expect(burst).toEqual(Array(5).fill('rejected'));
      await until(async () => store.pendingWrites === 0 && (await probe.ping()) === 'PONG', 'the void to reach Redis');
      // Redis ran the frozen call after SIGCONT; the void gave back its 100.
      await until(async () => (await spent(p, 'acct', now)) === 20, 'only the first request to stay billed');
      expect(await usage(p, 'acct', now)).toBe(20);
      // No reservation of a lease the lost call granted is left holding credits.
      const held = await probe.hgetall(`${p}{acct}:leases:${periodWindow('daily', now).id}`);
      expect(held).toEqual({});
      await store.close();
      client.disconnect();
    },
    20_000,
  );

  it('applies a refund once though its first send ran after its reply timed out', async () => {
    const client = gatewayClient();
    await until(() => client.status === 'ready', 'the connection');
    const p = prefix();
    const store = new RedisQuotaStore(client, p, { leases: false });
    const now = Date.now();
    const d = await store.decide(query('acct', now));
    const refund = { account: 'acct', periodId: d.periodId, amount: 20, fromTopup: 0, usage: { nowMs: now, ...row, account: '' } };
    await frozen(() => expect(store.refund(refund)).rejects.toThrow());
    await until(() => store.pendingWrites === 0, 'the refund to be sent again');
    expect(await spent(p, 'acct', now)).toBe(0); // not -20: the second send found the first's marker
    expect(await usage(p, 'acct', now)).toBe(0);
    await store.close();
    client.disconnect();
  });
});

describe('a Redis that cannot be reached', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy('127.0.0.1', port);
  });
  afterAll(() => proxy.close());

  it('keeps a refund it could not send and sends it once Redis is back', async () => {
    const client = gatewayClient(`redis://127.0.0.1:${proxy.port}`);
    await until(() => client.status === 'ready', 'the connection');
    const p = prefix();
    const store = new RedisQuotaStore(client, p, { leases: false });
    const now = Date.now();
    const d = await store.decide(query('acct', now));
    expect(await spent(p, 'acct', now)).toBe(20);
    expect(await usage(p, 'acct', now)).toBe(20);
    await proxy.cut();
    await expect(
      store.refund({ account: 'acct', periodId: d.periodId, amount: 20, fromTopup: 0, usage: { nowMs: now, ...row, account: '' } }),
    ).rejects.toThrow();
    expect(store.pendingWrites).toBe(1);
    await proxy.restore();
    await until(() => store.pendingWrites === 0, 'the refund to be sent again once Redis is back');
    expect(await spent(p, 'acct', now)).toBe(0);
    expect(await usage(p, 'acct', now)).toBe(0);
    await store.close();
    client.disconnect();
  });
});
