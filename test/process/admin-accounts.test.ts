// Plans made at run time and accounts (issue 25, items 1 and 2), end to end through the real
// gateway and its admin API on the embedded store (SQLite), Redis and PostgreSQL: a plan made,
// used, changed (its keys follow, their spend kept) and deleted only when unused; YAML plans
// read-only; an account whose keys share its plan, credits and rate; usage and audit asked by
// account. Then two real gateway processes on one Redis: a plan change reaches the other
// within a second, and an account used by two keys, one on each process, spends exactly its
// credits.
import { storeWorlds } from '../support/store-worlds.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, closedPort, DEMO_KEY } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;

const worlds = storeWorlds('accounts');
const redis = connect();
const prefixes: string[] = [];
afterAll(async () => {
  for (const p of prefixes) await deletePrefix(redis, p);
  redis.disconnect();
});

interface Answer {
  id: string;
  key: string;
  name: string;
  plan: string;
  source: string;
  effective: { rps: number; credits: number; period: string } | null;
  keys: string[];
  credits: { remaining: number; spent: number; topup: number } | null;
  message: string;
}

describe.each(['sqlite', 'redis', 'postgres'] as const)('run-time plans and accounts (%s store)', (kind) => {
  const w = worlds.world(kind, {
    plans: { small: { rps: 3, credits: 100, period: 'daily' } },
    keys: [{ name: 'yaml-key', key: DEMO_KEY, plan: 'small' }],
  });
  const { admin, clock } = w;
  const use = (secret: string) => w.gw().get(BALANCES, { key: null, headers: { authorization: `Bearer ${secret}` } });

  it('a plan made at run time is used, changed (its keys follow, their spend kept) and deleted only when unused', async () => {
    const gold = `gold-${kind}`;
    const made = await admin.post<Answer>('/plans', { name: gold, rps: 9, credits: 500 });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ name: gold, rps: 9, credits: 500, period: 'daily', source: 'runtime' });
    expect((await admin.post('/plans', { name: gold, rps: 1, credits: 1 })).status).toBe(409);
    // The configuration's plans: their names taken, read-only here.
    expect((await admin.post<Answer>('/plans', { name: 'small', rps: 1, credits: 1 })).body.message).toContain('configuration');
    expect((await admin.patch('/plans/small', { rps: 50 })).status).toBe(409);
    expect((await admin.delete('/plans/small')).status).toBe(409);
    expect((await admin.get('/plans/nope')).status).toBe(404);
    const listed = (await admin.get<{ items: { name: string; source: string }[] }>('/plans')).body.items;
    expect(listed.map((p) => [p.name, p.source])).toEqual(
      expect.arrayContaining([
        ['small', 'config'],
        [gold, 'runtime'],
      ]),
    );

    const k = (await admin.post<Answer>('/keys', { name: `on-${gold}`, plan: gold })).body;
    const first = await use(k.key);
    expect(first.headers.get('x-ratelimit-limit')).toBe('9');
    expect(first.headers.get('x-credits-remaining')).toBe('480');

    const changed = await admin.patch<Answer>(`/plans/${gold}`, { rps: 4, credits: 300 });
    expect(changed.body).toMatchObject({ rps: 4, credits: 300 });
    clock.now += 2_000;
    const second = await use(k.key);
    expect(second.headers.get('x-ratelimit-limit')).toBe('4');
    // The 20 spent under the plan as it was still count.
    expect(second.headers.get('x-credits-remaining')).toBe('260');

    const inUse = await admin.delete<{ keys: string[] }>(`/plans/${gold}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.keys).toEqual([k.id]);
    await admin.patch(`/keys/${k.id}`, { plan: 'small' });
    expect((await admin.delete(`/plans/${gold}`)).status).toBe(200);
    expect((await admin.get(`/plans/${gold}`)).status).toBe(404);
    expect((await admin.post('/keys', { name: `late-${gold}`, plan: gold })).status).toBe(422);
    const audit = await admin.get<{ items: { action: string; actor: string }[] }>(`/audit?key=plan:${gold}`);
    expect(audit.body.items.map((e) => e.action)).toEqual(['create', 'update', 'delete']);
  });

  it("an account's keys share its plan, its credits and its rate; usage and audit are asked by account", async () => {
    const acct = await admin.post<Answer>('/accounts', { name: `acme-${kind}`, plan: 'small', limits: { credits: 60, rps: 2 } });
    expect(acct.status).toBe(201);
    expect(acct.body.id).toMatch(/^acc_[a-z2-7]{16}$/);
    expect(acct.body.effective).toEqual({ rps: 2, credits: 60, period: 'daily' });
    const id = acct.body.id;
    expect((await admin.post('/accounts', { name: `acme-${kind}`, plan: 'small' })).status).toBe(409);
    // Listed in pages, searched by name and meta.
    const beta = (await admin.post<Answer>('/accounts', { name: `beta-${kind}`, plan: 'small', meta: { crm: `b-${kind}` } })).body;
    const first = await admin.get<{ items: Answer[]; nextCursor: string | null }>('/accounts?limit=1');
    expect(first.body.items).toHaveLength(1);
    const rest = await admin.get<{ items: Answer[]; nextCursor: string | null }>(`/accounts?limit=1000&cursor=${first.body.nextCursor!}`);
    expect([...first.body.items, ...rest.body.items].map((a) => a.id)).toEqual([id, beta.id].sort());
    expect(rest.body.nextCursor).toBeNull();
    expect((await admin.get<{ items: Answer[] }>(`/accounts?meta=crm:b-${kind}`)).body.items.map((a) => a.id)).toEqual([beta.id]);
    expect((await admin.get<{ items: Answer[] }>(`/accounts?name=ACME-${kind}`)).body.items.map((a) => a.id)).toEqual([id]);
    expect((await admin.get('/accounts?cursor=nope')).status).toBe(400);

    // One key given the account only (its plan is the account's), one moved into it.
    const one = (await admin.post<Answer>('/keys', { name: `acme-one-${kind}`, account: id })).body;
    expect(one.plan).toBe('small');
    const two = (await admin.post<Answer>('/keys', { name: `acme-two-${kind}`, plan: 'small' })).body;
    expect((await admin.patch<Answer>(`/keys/${two.id}`, { account: id })).status).toBe(200);
    expect((await admin.post('/keys', { name: `ghost-${kind}`, account: 'acc_nosuchaccountxx' })).status).toBe(404);

    // Credits: one balance of 60, 20 a request, whichever key spends it.
    expect((await use(one.key)).headers.get('x-credits-remaining')).toBe('40');
    // Rate: two a second for the account, not per key.
    const rated = await use(two.key);
    expect(rated.headers.get('x-credits-remaining')).toBe('20');
    expect(rated.headers.get('x-ratelimit-limit')).toBe('2');
    expect((await use(one.key)).status).toBe(429);
    clock.now += 1_500;
    expect((await use(two.key)).headers.get('x-credits-remaining')).toBe('0');
    expect((await use(one.key)).status).toBe(402);
    const shown = await admin.get<Answer>(`/accounts/${id}`);
    expect(shown.body.keys).toEqual([one.id, two.id].sort());
    expect(shown.body.credits).toMatchObject({ spent: 60, remaining: 0 });
    // A key's balance is its account's.
    expect((await admin.get<Answer>(`/keys/${two.id}`)).body.credits).toMatchObject({ spent: 60, remaining: 0 });
    // Bought credits through any of its keys go to the account.
    await admin.post(`/keys/${one.id}/credits`, { amount: 30 });
    expect((await admin.get<Answer>(`/accounts/${id}`)).body.credits).toMatchObject({ topup: 30, remaining: 30 });
    clock.now += 1_500;
    expect((await use(two.key)).headers.get('x-credits-remaining')).toBe('10');

    const usage = await admin.get<{ items: { key: string; requests: number; credits: number }[] }>(`/usage?account=${id}`);
    const byKey = (k: string) => usage.body.items.filter((r) => r.key === k).reduce((n, r) => n + r.credits, 0);
    expect(byKey(one.id) + byKey(two.id)).toBe(80);
    expect(new Set(usage.body.items.map((r) => r.key))).toEqual(new Set([one.id, two.id]));
    const audit = await admin.get<{ items: { keyId: string; action: string }[] }>(`/audit?account=${id}`);
    expect(audit.body.items.map((e) => [e.keyId, e.action])).toEqual([
      [id, 'create'],
      [one.id, 'create'],
      [two.id, 'create'],
      [two.id, 'update'],
      [one.id, 'credits'],
    ]);

    // Not deleted while keys belong to it; a key leaves with its own plan again.
    expect((await admin.delete(`/accounts/${id}`)).status).toBe(409);
    await admin.patch(`/keys/${one.id}`, { account: null });
    await admin.delete(`/keys/${two.id}`);
    expect((await admin.delete(`/accounts/${id}`)).status).toBe(200);
    clock.now += 1_500;
    const alone = await use(one.key);
    expect(alone.status).toBe(200);
    expect(alone.headers.get('x-ratelimit-limit')).toBe('3');
  });
});

describe('two gateway processes on one Redis', () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  let adminPort = 0;
  const prefix = testPrefix('accounts-multi');
  prefixes.push(prefix);
  beforeAll(async () => {
    const config = (adminPort: number) => ({
      chains: { '1': { name: 'Ethereum', upstreams: [worlds.explorer().url] } },
      plans: { small: { rps: 1000, credits: 10_000 } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
      log: { level: 'warn', requests: false },
      redis: { url: REDIS_URL, keyPrefix: prefix, volatile: true },
    });
    adminPort = await closedPort();
    [a, b] = await Promise.all([startGatewayProcess(config(adminPort)), closedPort().then((p) => startGatewayProcess(config(p)))]);
  }, 30_000);
  afterAll(async () => {
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
  });
  /** Every answer to the account's keys, counted: each 200 costs 20 of its credits. */
  const answered: number[] = [];
  const get = async (g: GatewayProcess, secret: string) => {
    const res = await fetch(g.url + BALANCES, { headers: { authorization: `Bearer ${secret}` } });
    answered.push(res.status);
    return res;
  };

  it('a plan change reaches the other process within a second; an account spends exactly its credits from two keys on two processes', async () => {
    const admin = adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`);
    expect((await admin.post('/plans', { name: 'team', rps: 500, credits: 1_000 })).status).toBe(201);
    const acct = (await admin.post<Answer>('/accounts', { name: 'team-acme', plan: 'team' })).body;
    const one = (await admin.post<Answer>('/keys', { name: 'team-one', account: acct.id })).body;
    const two = (await admin.post<Answer>('/keys', { name: 'team-two', account: acct.id })).body;
    await until(async () => (await get(b, two.key)).status === 200, 'B to know the account, its plan and its keys');
    await admin.patch('/plans/team', { rps: 400 });
    await until(async () => (await get(b, two.key)).headers.get('x-ratelimit-limit') === '400', 'B to see the plan change');

    // Both keys, one per process, at once, until both are refused: 1,000 credits at 20 a request
    // is 50 answers in all, whatever the interleaving and whatever was spent above.
    await Promise.all(
      [
        [a, one.key],
        [b, two.key],
      ].map(async ([g, key]) => {
        for (let i = 0; i < 60; i++) await get(g as GatewayProcess, key as string);
      }),
    );
    expect(answered.filter((s) => s === 200).length).toBe(50);
    expect(answered.filter((s) => s !== 200 && s !== 401 && s !== 402)).toEqual([]);
    const shown = await until(async () => {
      const s = (await admin.get<Answer>(`/accounts/${acct.id}`)).body;
      return s.credits?.spent === 1_000 ? s : undefined;
    }, 'the spend of both processes to settle');
    expect(shown.credits).toMatchObject({ spent: 1_000, remaining: 0 });
  });
});
