// The admin API across real gateway processes: two processes on one Redis see each other's key
// changes within a second and sum their usage exactly; a gateway on the embedded store keeps
// run-time keys, spend, bought credits and usage across a restart; the CLI's commands, once
// each, against a running gateway.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, closedPort } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { POSTGRES_URL, testSchemas } from '../support/postgres.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const ROOT = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

let explorer: FixtureExplorer;
const redis = connect();
const prefixes: string[] = [];
const schemas = testSchemas('processes');
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
  for (const prefix of prefixes) await deletePrefix(redis, prefix);
  redis.disconnect();
  await schemas.dropAll();
});

const config = (adminPort: number, extra: Record<string, unknown> = {}) => ({
  chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
  plans: { small: { rps: 1000, credits: 10_000 }, big: { rps: 2000, credits: 100_000 } },
  admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
  log: { level: 'warn', requests: false },
  ...extra,
});
const get = (g: GatewayProcess, secret: string, path = BALANCES) => fetch(g.url + path, { headers: { authorization: `Bearer ${secret}` } });

const SHARED = [
  { label: 'one Redis', storage: () => ({}) },
  // Keys, audit and usage in PostgreSQL; counters, leases and the cache in Redis.
  { label: 'one Redis and one PostgreSQL', storage: () => ({ storage: { url: POSTGRES_URL, schema: schemas.fresh() } }) },
];

describe.each(SHARED)('two gateway processes on $label', ({ storage }) => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  const portA = closedPort();
  beforeAll(async () => {
    const redisSection = { redis: { url: REDIS_URL, keyPrefix: testPrefix('admin-multi') }, ...storage() };
    prefixes.push(redisSection.redis.keyPrefix);
    [a, b] = await Promise.all([
      portA.then((p) => startGatewayProcess(config(p, redisSection))),
      closedPort().then((p) => startGatewayProcess(config(p, redisSection))),
    ]);
  }, 30_000);
  afterAll(async () => {
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
  });

  it("see each other's key changes within a second, and bill one balance", async () => {
    const base = `http://127.0.0.1:${await portA}/admin/v1`;
    const api = adminClient(() => base);
    const created = await api.post<{ id: string; key: string }>('/keys', { name: 'shared', plan: 'small' });
    expect(created.status).toBe(201);
    const { id, key } = created.body;
    // Created through A, known to B as soon as B hears of it (pub/sub): waited for, not slept.
    await until(async () => (await get(b, key)).status === 200, 'B to know the new key');
    await api.patch(`/keys/${id}`, { plan: 'big' });
    await until(async () => (await get(b, key)).headers.get('x-ratelimit-limit') === '2000', 'B to see the plan change');
    await api.patch(`/keys/${id}`, { status: 'disabled' });
    await until(async () => (await get(b, key)).status === 403, 'B to see the key disabled');
    await api.patch(`/keys/${id}`, { status: 'active' });
    await until(async () => (await get(b, key)).status === 200, 'B to see it enabled again');

    // Usage rows from both processes, summed exactly. A key of its own: B's first 200 (when it
    // learns of the key) is its first request, then 60 more, half on each process.
    const metered = (await api.post<{ id: string; key: string }>('/keys', { name: 'metered', plan: 'big' })).body;
    await until(async () => (await get(b, metered.key)).status === 200, 'B to know the metered key');
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => get(i % 2 ? a : b, metered.key).then((r) => r.status)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    const total = async () => {
      const rows = (await api.get<{ items: { requests: number; credits: number }[] }>(`/usage?key=${metered.id}`)).body.items;
      return rows.reduce((t, r) => ({ requests: t.requests + r.requests, credits: t.credits + r.credits }), { requests: 0, credits: 0 });
    };
    // A writes its rows and settles its leases before answering /usage; B writes its rows within a
    // second of counting them, and settles its lease of the key within two (quota/redis.ts).
    const seen = await until(async () => {
      const t = await total();
      return t.requests >= 61 && t.credits >= 61 * 20 ? t : undefined;
    }, 'both processes to write their usage');
    expect(seen).toEqual({ requests: 61, credits: 61 * 20 });
    await api.delete(`/keys/${id}`);
    await until(async () => (await get(b, key)).status === 401, 'B to refuse the revoked key');
    // One audit trail: what was written through A, read from the store B shares.
    const trail = await api.get<{ items: { action: string; keyId: string }[] }>(`/audit?key=${id}`);
    expect(trail.body.items.map((e) => e.action)).toEqual(['create', 'update', 'update', 'update', 'revoke']);
  });
});

describe('a gateway on PostgreSQL without Redis', () => {
  it('keeps run-time keys, bought credits, spend and usage across a crash (SIGKILL) once they are written', async () => {
    const port = await closedPort();
    const schema = schemas.fresh();
    const cfg = config(port, { storage: { url: POSTGRES_URL, schema } });
    const api = adminClient(() => `http://127.0.0.1:${port}/admin/v1`);
    const first = await startGatewayProcess(cfg);
    const { id, key } = (await api.post<{ id: string; key: string }>('/keys', { name: 'durable', plan: 'small' })).body;
    // Acknowledged: written before the answer, so a crash right after it keeps it.
    expect((await api.post(`/keys/${id}/credits`, { amount: 500 })).status).toBe(200);
    for (let i = 0; i < 7; i++) expect((await get(first, key)).status).toBe(200);
    // Spend and usage go out within a second: waited for, in the database itself, then the crash.
    const reader = new PostgresStore(POSTGRES_URL, { schema, ledgers: true });
    try {
      await until(
        async () => (await reader.loadLedgers()).some((l) => l.account === reader.sealAccount(id) && l.daySpent === 140),
        'the spend to be written',
      );
      await until(
        async () => (await reader.listUsage({ from: '2000-01-01', to: '2999-12-31' })).reduce((n, r) => n + r.requests, 0) === 7,
        'the usage to be written',
      );
    } finally {
      await reader.close();
    }
    expect(await first.stop('SIGKILL')).toBe(null);

    const second = await startGatewayProcess(cfg);
    try {
      const res = await get(second, key);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-credits-remaining')).toBe(String(10_000 - 8 * 20 + 500));
      const usage = await api.get<{ items: { requests: number; credits: number }[] }>(`/usage?key=${id}`);
      expect(usage.body.items.reduce((n, r) => n + r.requests, 0)).toBe(8);
      expect(usage.body.items.reduce((n, r) => n + r.credits, 0)).toBe(160);
    } finally {
      await second.stop();
    }
  });
});

describe('a gateway on the embedded store', () => {
  it('keeps run-time keys, spend, bought credits and usage across a restart (SIGTERM loses none)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-restart-'));
    const port = await closedPort();
    const cfg = config(port, { storage: { path: join(dir, 'gateway.db') } });
    const api = adminClient(() => `http://127.0.0.1:${port}/admin/v1`);
    const first = await startGatewayProcess(cfg);
    const { id, key } = (await api.post<{ id: string; key: string }>('/keys', { name: 'durable', plan: 'small' })).body;
    await api.post(`/keys/${id}/credits`, { amount: 500 });
    for (let i = 0; i < 7; i++) expect((await get(first, key)).status).toBe(200);
    expect(await first.stop()).toBe(0);

    const second = await startGatewayProcess(cfg);
    try {
      const res = await get(second, key);
      expect(res.status).toBe(200);
      // 8 requests of 20 from the allowance of 10,000; the 500 bought untouched.
      expect(res.headers.get('x-credits-remaining')).toBe(String(10_000 - 8 * 20 + 500));
      const shown = await api.get<{ credits: { spent: number; topup: number } }>(`/keys/${id}`);
      expect(shown.body.credits).toMatchObject({ spent: 160, topup: 500 });
      const usage = await api.get<{ items: { requests: number; credits: number }[] }>(`/usage?key=${id}`);
      expect(usage.body.items.reduce((s, r) => s + r.requests, 0)).toBe(8);
      expect(usage.body.items.reduce((s, r) => s + r.credits, 0)).toBe(160);
    } finally {
      await second.stop();
    }
  });
});

describe('the CLI', () => {
  let g: GatewayProcess;
  let adminUrl: string;
  beforeAll(async () => {
    const port = await closedPort();
    adminUrl = `http://127.0.0.1:${port}/admin/v1`;
    g = await startGatewayProcess(config(port));
  }, 30_000);
  afterAll(async () => {
    await g.stop();
  });

  const cli = async (...args: string[]) => {
    const env = { ...process.env, EGW_ADMIN_URL: adminUrl, EGW_ADMIN_TOKEN: ADMIN_TOKEN };
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], { cwd: ROOT, env });
      return { code: 0, stdout, stderr: '' };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it('keys create, list, show, update, credits, roll, revoke and usage, each printing the API answer', async () => {
    const created = await cli(
      'keys',
      'create',
      '--name',
      'cli-key',
      '--plan',
      'small',
      '--owner',
      'cli-owner',
      '--chains',
      '1',
      '--expires',
      '2999-01-01',
    );
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; key: string; chains: string[]; expiresAt: string };
    expect(key).toMatchObject({ name: 'cli-key', owner: 'cli-owner', chains: ['1'], expiresAt: '2999-01-01T00:00:00.000Z' });
    expect((await get(g, key.key)).status).toBe(200);
    const listed = JSON.parse((await cli('keys', 'list', '--owner', 'cli-owner')).stdout) as { items: { id: string }[] };
    expect(listed.items.map((k) => k.id)).toEqual([key.id]);
    expect(JSON.parse((await cli('keys', 'show', key.id)).stdout)).toMatchObject({ id: key.id, credits: { spent: 20 } });
    expect(JSON.parse((await cli('keys', 'update', key.id, '--plan', 'big')).stdout)).toMatchObject({ plan: 'big' });
    expect(JSON.parse((await cli('keys', 'credits', key.id, '250')).stdout)).toMatchObject({ added: 250, topup: 250 });
    const rolled = JSON.parse((await cli('keys', 'roll', key.id)).stdout) as { key: string };
    expect((await get(g, rolled.key)).status).toBe(200);
    const usage = await cli('usage', '--key', key.id, '--format', 'csv');
    expect(usage.stdout.split('\r\n')[0]).toBe(
      'day,key,name,chain,route,requests,credits,cacheHits,refused,rateLimited,outOfCredits,forbidden,clientErrors,errors,account',
    );
    expect(JSON.parse((await cli('keys', 'revoke', key.id)).stdout)).toEqual({ id: key.id, revoked: true });
    expect((await get(g, rolled.key)).status).toBe(401);
    // Nine CLI processes, each loading the program through tsx: 2 to 5 s apiece on a busy machine
    // (it ran out of the default 20 s with two test files at a time on 2 cores).
  }, 120_000);

  it("exits non-zero with the API's message, or with usage for a malformed command", async () => {
    const refused = await cli('keys', 'create', '--name', 'x', '--plan', 'gold');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/422: unknown plan "gold"; plans: small, big/);
    const malformed = await cli('keys', 'credits', 'key_x', 'lots');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/AMOUNT: expected an integer/);
  }, 60_000);
});
