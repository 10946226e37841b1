// Faults on what issue 25 stores: plans, accounts, deals and credit corrections. An acknowledged
// write survives a crash (SIGKILL) on the embedded store and on PostgreSQL; a Redis that goes
// away (or stalled) answers every such write with 503 and Retry-After, changes nothing, and takes the write
// once it is back; a correction never takes bought credits below zero, whatever the retries.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, closedPort, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { POSTGRES_URL, testSchemas } from '../support/postgres.js';
import { startGatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;

let explorer: FixtureExplorer;
let proxy: TcpProxy;
const redis = connect();
const prefixes: string[] = [];
const schemas = testSchemas('sellfaults');
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  const target = new URL(REDIS_URL);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
});
afterAll(async () => {
  await proxy.close();
  await explorer.close();
  await schemas.dropAll();
  for (const p of prefixes) await deletePrefix(redis, p);
  redis.disconnect();
});

interface Made {
  id: string;
  key: string;
  credits: { topup: number; remaining: number; spent: number } | null;
}

const STORES = [
  {
    label: 'the embedded store (SQLite)',
    storage: () => ({ storage: { path: join(mkdtempSync(join(tmpdir(), 'egw-sellfaults-')), 'gw.db') } }),
  },
  { label: 'PostgreSQL', storage: () => ({ storage: { url: POSTGRES_URL, schema: schemas.fresh() } }) },
];

describe.each(STORES)('a crash (SIGKILL) on $label', ({ storage }) => {
  it('keeps every acknowledged plan, account, deal and correction: the keys work as they were sold', async () => {
    const port = await closedPort();
    const cfg = {
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
      plans: { small: { rps: 1000, credits: 10_000 } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port },
      log: { level: 'warn', requests: false },
      ...storage(),
    };
    const api = adminClient(() => `http://127.0.0.1:${port}/admin/v1`);
    const first = await startGatewayProcess(cfg);
    expect((await api.post('/plans', { name: 'team', rps: 77, credits: 5_000 })).status).toBe(201);
    const acct = (await api.post<Made>('/accounts', { name: 'acme', plan: 'team', meta: { crm: 'x' } })).body;
    const member = (await api.post<Made>('/keys', { name: 'acme-1', account: acct.id })).body;
    const dealt = (await api.post<Made>('/keys', { name: 'dealt', plan: 'small', limits: { rps: 9 }, routes: ['addresses/*'] })).body;
    expect((await api.post(`/keys/${dealt.id}/credits`, { amount: 700 })).status).toBe(200);
    expect((await api.post(`/keys/${dealt.id}/credits`, { amount: -200, reason: 'refund' })).status).toBe(200);
    expect((await api.post(`/keys/${member.id}/credits`, { set: 40, reason: 'contract' })).status).toBe(200);
    // Acknowledged: written before each answer. Then the crash, with no chance to write more.
    expect(await first.stop('SIGKILL')).toBe(null);

    const second = await startGatewayProcess(cfg);
    try {
      const get = (secret: string, path = BALANCES) => fetch(second.url + path, { headers: { authorization: `Bearer ${secret}` } });
      const m = await get(member.key);
      expect([m.status, m.headers.get('x-ratelimit-limit'), m.headers.get('x-credits-remaining')]).toEqual([
        200,
        '77',
        String(5_000 - 20 + 40),
      ]);
      const d = await get(dealt.key);
      expect([d.status, d.headers.get('x-ratelimit-limit'), d.headers.get('x-credits-remaining')]).toEqual([
        200,
        '9',
        String(10_000 - 20 + 500),
      ]);
      expect((await get(dealt.key, '/1/api/v2/stats')).status).toBe(403);
      const trail = await api.get<{ items: { action: string; actor: string }[] }>(`/audit?key=${dealt.id}`);
      expect(trail.body.items.map((e) => [e.action, e.actor])).toEqual([
        ['create', 'admin'],
        ['credits', 'admin'],
        ['credits', 'admin'],
      ]);
    } finally {
      await second.stop();
    }
  });
});

describe('Redis away while selling', () => {
  let gw: TestGateway | undefined;
  const prefix = testPrefix('sellfaults');
  prefixes.push(prefix);
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
    await proxy.restore();
  });

  it('every write answers 503 with Retry-After and changes nothing; each is taken once Redis is back, and no correction goes below zero', async () => {
    const url = `redis://127.0.0.1:${proxy.port}/${new URL(REDIS_URL).pathname.slice(1) || '0'}`;
    gw = await startGateway(
      makeConfig([explorer.url], {
        plans: { small: { rps: 1000, credits: 100 } },
        keys: [],
        redis: { url, keyPrefix: prefix, onError: 'closed', commandTimeoutMs: 100 },
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
      }),
    );
    const admin = adminClient(() => gw!.app.gateway.adminUrl()!);
    const k = (await admin.post<Made>('/keys', { name: 'k', plan: 'small' })).body;
    expect((await admin.post(`/keys/${k.id}/credits`, { amount: 50 })).status).toBe(200);

    await proxy.cut();
    const writes: [string, string, unknown][] = [
      ['POST', '/plans', { name: 'team', rps: 5, credits: 5 }],
      ['POST', '/accounts', { name: 'acme', plan: 'small' }],
      ['PATCH', `/keys/${k.id}`, { limits: { rps: 3 } }],
      ['POST', `/keys/${k.id}/credits`, { amount: -30, reason: 'refund' }],
      ['POST', `/keys/${k.id}/credits`, { set: 5, reason: 'renewal' }],
    ];
    for (const [method, path, body] of writes) {
      const res = await fetch(gw.app.gateway.adminUrl()! + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect([method, path, res.status, res.headers.get('retry-after')]).toEqual([method, path, 503, '5']);
    }

    await proxy.restore();
    // Nothing of the refused writes was made.
    const shown = await until(async () => {
      const s = await admin.get<Made & { limits: unknown }>(`/keys/${k.id}`);
      return s.status === 200 ? s.body : undefined;
    }, 'the admin API to read again');
    expect(shown.limits).toBeNull();
    expect(shown.credits).toMatchObject({ topup: 50 });
    expect((await admin.get('/plans/team')).status).toBe(404);
    expect((await admin.get<{ items: unknown[] }>('/accounts')).body.items).toEqual([]);
    // Taken now, each once; a correction past what is left is refused, the balance never below zero.
    expect((await admin.post(`/keys/${k.id}/credits`, { amount: -30, reason: 'refund' })).status).toBe(200);
    expect((await admin.post(`/keys/${k.id}/credits`, { amount: -30, reason: 'refund again' })).status).toBe(409);
    expect((await admin.get<Made>(`/keys/${k.id}`)).body.credits).toMatchObject({ topup: 20 });
    expect((await admin.post('/plans', { name: 'team', rps: 5, credits: 5 })).status).toBe(201);
    expect((await admin.patch<{ effective: { rps: number } }>(`/keys/${k.id}`, { limits: { rps: 3 } })).body.effective.rps).toBe(3);
    const res = await gw.get(BALANCES, { key: null, headers: { authorization: `Bearer ${k.key}` } });
    expect([res.status, res.headers.get('x-ratelimit-limit')]).toEqual([200, '3']);
  });

  it('a Redis that stalls during a correction: answered 503, applied at most once, and a GET tells which', async () => {
    const url = `redis://127.0.0.1:${proxy.port}/${new URL(REDIS_URL).pathname.slice(1) || '0'}`;
    gw = await startGateway(
      makeConfig([explorer.url], {
        plans: { small: { rps: 1000, credits: 100 } },
        keys: [],
        redis: { url, keyPrefix: prefix, onError: 'closed', commandTimeoutMs: 100 },
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
      }),
    );
    const admin = adminClient(() => gw!.app.gateway.adminUrl()!);
    const k = (await admin.post<Made>('/keys', { name: 'stalled', plan: 'small' })).body;
    expect((await admin.post(`/keys/${k.id}/credits`, { amount: 50 })).status).toBe(200);
    proxy.hang();
    const stalled = await admin.call('POST', `/keys/${k.id}/credits`, { amount: -30, reason: 'refund' }, {});
    expect(stalled.status).toBe(503);
    await proxy.restore();
    const after = await until(async () => {
      const s = await admin.get<Made>(`/keys/${k.id}`);
      return s.status === 200 ? s.body.credits!.topup : undefined;
    }, 'the admin API to read again');
    // The stuck connection was dropped before its bytes reached Redis: nothing was taken.
    expect(after).toBe(50);
    // The operator reads, then sends it once: taken once.
    expect((await admin.post(`/keys/${k.id}/credits`, { amount: -30, reason: 'refund' })).status).toBe(200);
    expect((await admin.get<Made>(`/keys/${k.id}`)).body.credits).toMatchObject({ topup: 20 });
  });
});
