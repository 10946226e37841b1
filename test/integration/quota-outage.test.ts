// Redis going away and coming back, through a TCP proxy in front of the real Redis:
// onError open serves with -1 headers, closed answers 503, a stuck Redis costs a request at
// most the command timeout, and enforcement resumes without a restart.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const QUOTA_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-credits-remaining'];

let explorer: FixtureExplorer;
let proxy: TcpProxy;
let gw: TestGateway | undefined;
const redis = connect();
const prefix = testPrefix('outage');

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  const target = new URL(REDIS_URL);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
});
afterEach(async () => {
  await gw?.close();
  gw = undefined;
  await proxy.restore();
});
afterAll(async () => {
  await proxy.close();
  await explorer.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

async function gateway(onError: 'open' | 'closed') {
  gw = await startGateway(
    makeConfig([explorer.url], {
      redis: {
        url: `redis://127.0.0.1:${proxy.port}/${new URL(REDIS_URL).pathname.slice(1) || '0'}`,
        keyPrefix: prefix,
        onError,
        commandTimeoutMs: 100,
      },
    }),
  );
  return gw;
}

const quotaHeaders = (res: Response) => QUOTA_HEADERS.map((h) => res.headers.get(h));

/** Asks until the gateway enforces again (numeric headers). */
function untilEnforced(g: TestGateway): Promise<Response> {
  return until(async () => {
    const res = await g.get(BALANCES);
    return res.headers.get('x-ratelimit-limit') !== '-1' && res.status === 200 ? res : undefined;
  }, 'the gateway to enforce again');
}

describe('quota store outage', () => {
  it('onError open: answers at once with all four headers -1, then enforces again when Redis is back', async () => {
    const g = await gateway('open');
    expect(quotaHeaders(await g.get(BALANCES))).not.toContain('-1');

    await proxy.cut();
    const res = await g.get(BALANCES);
    expect(res.status).toBe(200);
    expect(quotaHeaders(res)).toEqual(['-1', '-1', '-1', '-1']);

    await proxy.restore();
    const back = await untilEnforced(g);
    expect(back.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('onError closed: 503 with -1 headers while Redis is away, served again when it is back', async () => {
    const g = await gateway('closed');
    await proxy.cut();
    const hitsBefore = explorer.hits();
    const res = await g.get(BALANCES);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ message: 'Quota store unavailable' });
    expect(quotaHeaders(res)).toEqual(['-1', '-1', '-1', '-1']);
    expect(explorer.hits()).toBe(hitsBefore);

    await proxy.restore();
    expect((await untilEnforced(g)).status).toBe(200);
  });

  it('a Redis that accepts but never answers costs a request no more than the command timeout', async () => {
    const g = await gateway('open');
    await g.get(BALANCES);
    proxy.hang();
    for (let i = 0; i < 5; i++) {
      // Without the command timeout (100 ms) these would wait for a Redis that never answers;
      // the abort is fifty times that, only so that a hang fails here rather than at the suite's timeout.
      const res = await g.get(BALANCES, { signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-credits-remaining')).toBe('-1');
    }

    await proxy.restore();
    expect((await untilEnforced(g)).headers.get('x-ratelimit-limit')).toBe('1000');
  });
});

describe('keys:verify while Redis is away', () => {
  it('answers 503 with Retry-After, never a verdict it could not check, and the verdict again once Redis is back', async () => {
    const url = `redis://127.0.0.1:${proxy.port}/${new URL(REDIS_URL).pathname.slice(1) || '0'}`;
    gw = await startGateway(
      makeConfig([explorer.url], {
        redis: { url, keyPrefix: prefix, onError: 'open', commandTimeoutMs: 100 },
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
      }),
    );
    const admin = adminClient(() => gw!.app.gateway.adminUrl()!);
    const verify = () => admin.post<{ valid: boolean; code: string }>('/keys:verify', { key: DEMO_KEY });
    expect((await verify()).body).toMatchObject({ valid: true, code: 'VALID' });
    await proxy.cut();
    const away = await fetch(`${gw.app.gateway.adminUrl()!}/keys:verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: DEMO_KEY }),
    });
    expect([away.status, away.headers.get('retry-after')]).toEqual([503, '5']);
    await proxy.restore();
    const back = await until(async () => {
      const v = await verify();
      return v.status === 200 ? v : undefined;
    }, 'keys:verify to answer again');
    expect(back.body).toMatchObject({ valid: true, code: 'VALID' });
  });
});
