// The admin API end to end, in process, against the embedded store (SQLite) and against a real
// Redis: keys created, used, topped up, moved to another plan, disabled, expired, rolled and
// revoked at run time; usage rows equal to what was sent; an audit entry per write; bad input
// refused with a clear 4xx that changes nothing; no secret anywhere but the creating answer.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { POSTGRES_URL, quoted, testSchemas, withClient } from '../support/postgres.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const TXS = `/1/api/v2/addresses/${ADDRESS}/transactions`;

let explorer: FixtureExplorer;
const redis = connect();
const prefixes: string[] = [];
const schemas = testSchemas('admin');
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
  await schemas.dropAll();
  for (const p of prefixes) await deletePrefix(redis, p);
  redis.disconnect();
});

interface KeyView {
  id: string;
  name: string;
  plan: string;
  owner: string | null;
  chains: string[] | null;
  status: string;
  expiresAt: string | null;
  createdAt: string | null;
  prefix: string | null;
  source: string;
  key?: string;
  credits?: { remaining: number; spent: number; topup: number; resetsAt: string };
}

describe.each(['sqlite', 'redis', 'postgres'] as const)('the admin API (%s store)', (kind) => {
  let gw: TestGateway;
  const clock = { now: Date.now() };
  const lines: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'egw-admin-'));
  const prefix = testPrefix(`admin-${kind}`);
  prefixes.push(prefix);
  const admin = adminClient(() => gw.app.gateway.adminUrl()!);
  const hdr = (res: Response, name: string) => res.headers.get(name);

  beforeAll(async () => {
    const extra: Partial<ConfigInput> = {
      plans: { small: { rps: 3, credits: 100, period: 'daily' }, big: { rps: 50, credits: 1000, period: 'daily' } },
      keys: [{ name: 'yaml-key', key: DEMO_KEY, plan: 'small' }],
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] }, '100': { name: 'Gnosis', upstreams: [explorer.url] } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
      storage: { path: join(dir, 'gateway.db') },
      log: { level: 'info', requests: true },
      cache: { ttlSeconds: { 'token-balances': 3_600, transactions: 0 } },
      ...(kind === 'redis' ? { redis: { url: REDIS_URL, keyPrefix: prefix } } : {}),
      // PostgreSQL without Redis: keys, audit, usage and this host's ledgers in a schema of its own.
      ...(kind === 'postgres' ? { storage: { url: POSTGRES_URL, schema: schemas.fresh() } } : {}),
    };
    gw = await startGateway(makeConfig([explorer.url], extra), {
      now: () => clock.now,
      logStream: { write: (l: string) => void lines.push(l) },
    });
  });
  afterAll(() => gw.close());
  afterEach(() => {
    // Each test's first request opens a window of its own.
    clock.now += 2_000;
  });

  const use = (secret: string, path = BALANCES) => gw.get(path, { key: secret });
  async function create(body: Record<string, unknown>): Promise<KeyView & { key: string }> {
    const res = await admin.post<KeyView & { key: string }>('/keys', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  it('creates a key that works at once, with its plan, and shows its secret only in that answer', async () => {
    const k = await create({ name: 'acme', plan: 'small', owner: 'acme-corp' });
    expect(k).toMatchObject({
      name: 'acme',
      plan: 'small',
      owner: 'acme-corp',
      chains: null,
      status: 'active',
      expiresAt: null,
      source: 'runtime',
    });
    expect(k.id).toMatch(/^key_[a-z2-7]{16}$/);
    expect(k.key).toMatch(/^egw_[A-Za-z0-9]{43}$/);
    expect(k.prefix).toBe(`${k.key.slice(0, 12)}…`);
    const res = await use(k.key);
    expect(res.status).toBe(200);
    expect([hdr(res, 'x-ratelimit-limit'), hdr(res, 'x-credits-remaining')]).toEqual(['3', '80']);
    const shown = await admin.get<KeyView>(`/keys/${k.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.credits).toMatchObject({ remaining: 80, spent: 20, topup: 0 });
    expect(JSON.stringify(shown.body)).not.toContain(k.key);
    const listed = await admin.get<{ items: KeyView[] }>('/keys');
    expect(JSON.stringify(listed.body)).not.toContain(k.key);
  });

  it('lists keys with their filters, configured keys included and read-only', async () => {
    await create({ name: 'lister', plan: 'big', owner: 'lister-inc' });
    const all = await admin.get<{ items: KeyView[] }>('/keys');
    expect(all.body.items.find((k) => k.name === 'yaml-key')).toMatchObject({ source: 'config', plan: 'small', prefix: null });
    const owned = await admin.get<{ items: KeyView[] }>('/keys?owner=lister-inc');
    expect(owned.body.items.map((k) => k.name)).toEqual(['lister']);
    const big = await admin.get<{ items: KeyView[] }>('/keys?plan=big');
    expect(big.body.items.every((k) => k.plan === 'big')).toBe(true);
    const yaml = all.body.items.find((k) => k.name === 'yaml-key')!;
    const refused = await admin.patch(`/keys/${yaml.id}`, { status: 'disabled' });
    expect(refused.status).toBe(409);
    expect(String(refused.body.message)).toMatch(/configuration file/);
  });

  it('tops up: bought credits add to the balance, are spent after the allowance, and survive the period', async () => {
    const k = await create({ name: 'buyer', plan: 'small' });
    for (let i = 0; i < 3; i++) expect((await use(k.key)).status).toBe(200);
    const topped = await admin.post(`/keys/${k.id}/credits`, { amount: 50 });
    expect(topped).toEqual({ status: 200, body: { id: k.id, added: 50, topup: 50, remaining: 90, reason: null } });
    clock.now += 2_000;
    const spent = [];
    for (let i = 0; i < 3; i++) spent.push(hdr(await use(k.key), 'x-credits-remaining'));
    // 40 of the allowance, then 20 of the bought 50.
    expect(spent).toEqual(['70', '50', '30']);
    clock.now += 86_400_000; // the next day: a full allowance again, and what is left of the bought credits
    expect(hdr(await use(k.key), 'x-credits-remaining')).toBe(String(100 - 20 + 30));
  });

  it('a plan change takes effect at once: the new rate, the spend carried over', async () => {
    const k = await create({ name: 'upgrader', plan: 'small' });
    await use(k.key);
    await use(k.key);
    const changed = await admin.patch<KeyView>(`/keys/${k.id}`, { plan: 'big' });
    expect(changed.status).toBe(200);
    expect(changed.body.plan).toBe('big');
    const res = await use(k.key);
    expect([hdr(res, 'x-ratelimit-limit'), hdr(res, 'x-credits-remaining')]).toEqual(['50', String(1000 - 60)]);
  });

  it('disable and enable; expiry; a chain allow-list', async () => {
    const k = await create({ name: 'toggled', plan: 'big', chains: ['100'] });
    expect((await use(k.key)).status).toBe(403); // chain 1 not allowed
    expect((await use(k.key, `/100/api/v2/addresses/${ADDRESS}/token-balances`)).status).toBe(200);
    await admin.patch(`/keys/${k.id}`, { status: 'disabled', chains: null });
    const disabled = await use(k.key);
    expect([disabled.status, await disabled.json()]).toEqual([403, { message: 'API key disabled' }]);
    await admin.patch(`/keys/${k.id}`, { status: 'active' });
    expect((await use(k.key)).status).toBe(200);
    const expiry = new Date(clock.now + 3_600_000).toISOString();
    expect((await admin.patch<KeyView>(`/keys/${k.id}`, { expiresAt: expiry })).body.expiresAt).toBe(expiry);
    expect((await use(k.key)).status).toBe(200);
    clock.now += 3_600_000;
    const expired = await use(k.key);
    expect([expired.status, await expired.json()]).toEqual([403, { message: 'API key expired' }]);
  });

  it('rolls a secret: the old one refused at once, or after a grace; same id, plan and balance', async () => {
    const k = await create({ name: 'roller', plan: 'big' });
    await use(k.key);
    const rolled = await admin.post<KeyView & { key: string }>(`/keys/${k.id}/roll`, {});
    expect(rolled.status).toBe(200);
    expect(rolled.body).toMatchObject({ id: k.id, plan: 'big' });
    expect(rolled.body.key).not.toBe(k.key);
    expect((await use(k.key)).status).toBe(401);
    const fresh = await use(rolled.body.key);
    expect([fresh.status, hdr(fresh, 'x-credits-remaining')]).toEqual([200, '960']);
    const graced = await admin.post<KeyView & { key: string }>(`/keys/${k.id}/roll`, { graceSeconds: 60 });
    expect((await use(rolled.body.key)).status).toBe(200);
    expect((await use(graced.body.key)).status).toBe(200);
    clock.now += 60_000;
    expect((await use(rolled.body.key)).status).toBe(401);
    expect((await use(graced.body.key)).status).toBe(200);
  });

  it('revokes: the key is refused from then on, its usage rows stay', async () => {
    const k = await create({ name: 'revoked', plan: 'big' });
    await use(k.key);
    expect(await admin.delete(`/keys/${k.id}`)).toEqual({ status: 200, body: { id: k.id, revoked: true } });
    expect((await use(k.key)).status).toBe(401);
    expect((await admin.get(`/keys/${k.id}`)).status).toBe(404);
    const usage = await admin.get<{ items: { key: string; requests: number }[] }>(`/usage?key=${k.id}`);
    expect(usage.body.items.map((r) => r.requests)).toEqual([1]);
  });

  it('verifies a secret without spending or counting: the key, its balance and a code for each case', async () => {
    type Verdict = { valid: boolean; code: string; key: KeyView | null };
    const verify = (key: unknown) => admin.post<Verdict>('/keys:verify', { key });
    const k = await create({ name: 'verified', plan: 'small' });
    expect((await use(k.key)).status).toBe(200);
    const first = await verify(k.key);
    expect(first).toMatchObject({ status: 200, body: { valid: true, code: 'VALID', key: { id: k.id, name: 'verified', plan: 'small' } } });
    const remaining = first.body.key!.credits!.remaining;
    expect(remaining).toBe(100 - 20);
    // Nothing spent, nothing counted: the balance and the usage rows are the request's alone.
    expect((await verify(k.key)).body.key!.credits!.remaining).toBe(remaining);
    expect((await admin.get<KeyView>(`/keys/${k.id}`)).body.credits!.remaining).toBe(remaining);
    const usage = await admin.get<{ items: { requests: number }[] }>(`/usage?key=${k.id}`);
    expect(usage.body.items.map((r) => r.requests)).toEqual([1]);
    // A configured key, an unknown secret, a disabled key, an empty balance.
    expect((await verify(DEMO_KEY)).body.key).toMatchObject({ name: 'yaml-key', source: 'config' });
    expect((await verify('egw_not-a-key')).body).toEqual({ valid: false, code: 'NOT_FOUND', key: null });
    expect((await admin.patch(`/keys/${k.id}`, { status: 'disabled' })).status).toBe(200);
    expect((await verify(k.key)).body).toMatchObject({ valid: false, code: 'DISABLED', key: { id: k.id } });
    expect((await use(k.key)).status).toBe(403);
    const spent = await create({ name: 'spent', plan: 'small' });
    for (let i = 0; i < 5; i++) {
      clock.now += 1_000;
      expect((await use(spent.key)).status).toBe(200);
    }
    expect((await verify(spent.key)).body).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', key: { credits: { remaining: 0 } } });
    clock.now += 1_000;
    expect((await use(spent.key)).status).toBe(402);
    // A revoked key is as unknown as a wrong secret; a body without a key is refused.
    await admin.delete(`/keys/${spent.id}`);
    expect((await verify(spent.key)).body.code).toBe('NOT_FOUND');
    expect((await verify(42)).status).toBe(422);
    expect((await admin.post('/keys:verify', {})).status).toBe(422);
  });

  it('records usage exactly: requests, credits billed after refunds, cache hits, refusals, errors', async () => {
    const k = await create({ name: 'billed', plan: 'small' });
    // An address of its own: an entry no earlier test filled.
    const balances = `/1/api/v2/addresses/0x${'be'.repeat(20)}/token-balances`;
    const statuses = [];
    statuses.push((await use(k.key, balances)).status); // miss, 20
    statuses.push((await use(k.key, balances)).status); // hit, 20
    statuses.push((await use(k.key, TXS)).status); // transactions, 20
    statuses.push((await use(k.key, balances)).status); // 429: the 4th in a window of 3
    clock.now += 2_000;
    explorer.set({ failStatus: 500 });
    statuses.push((await use(k.key, `${TXS}?filter=to`)).status); // 502, refunded
    explorer.reset();
    statuses.push((await use(k.key, `/1/api/v2/addresses/${ADDRESS}/logs`)).status); // 40 left, costs 30
    expect(statuses).toEqual([200, 200, 200, 429, 502, 200]);
    const rows = (await admin.get<{ items: Record<string, unknown>[] }>(`/usage?key=${k.id}`)).body.items;
    const byRoute: Record<string, Record<string, unknown>> = Object.fromEntries(rows.map((r) => [String(r.route), r]));
    expect(byRoute['token-balances']).toMatchObject({
      requests: 3,
      credits: 40,
      cacheHits: 1,
      refused: 1,
      rateLimited: 1,
      outOfCredits: 0,
      forbidden: 0,
      clientErrors: 0,
      errors: 0,
      name: 'billed',
      account: '',
      chain: '1',
    });
    expect(byRoute.transactions).toMatchObject({ requests: 2, credits: 20, cacheHits: 0, refused: 0, errors: 1 });
    expect(byRoute['addresses/{address_hash_param}/logs']).toMatchObject({ requests: 1, credits: 30 });
    const csv = await admin.get<string>(`/usage?key=${k.id}&format=csv`);
    expect(csv.body.split('\r\n')[0]).toBe(
      'day,key,name,chain,route,requests,credits,cacheHits,refused,rateLimited,outOfCredits,forbidden,clientErrors,errors,account',
    );
    expect(csv.body).toContain(`,${k.id},billed,1,token-balances,3,40,1,1,1,0,0,0,0,\r\n`);
  });

  it('keeps one audit entry per write, with the fields before and after, never a secret', async () => {
    const k = await create({ name: 'audited', plan: 'small' });
    await admin.patch(`/keys/${k.id}`, { plan: 'big' });
    await admin.post(`/keys/${k.id}/credits`, { amount: 7 });
    const rolled = await admin.post<{ key: string }>(`/keys/${k.id}/roll`, {});
    await admin.delete(`/keys/${k.id}`);
    const audit = await admin.get<{
      items: { action: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null }[];
    }>(`/audit?key=${k.id}`);
    expect(audit.body.items.map((e) => e.action)).toEqual(['create', 'update', 'credits', 'roll', 'revoke']);
    expect(audit.body.items[1]).toMatchObject({ before: { plan: 'small' }, after: { plan: 'big' } });
    const text = JSON.stringify(audit.body);
    expect(text).not.toContain(k.key);
    expect(text).not.toContain(rolled.body.key);
  });

  it('refuses bad input with a clear 4xx and changes nothing', async () => {
    const before = await admin.get<{ items: unknown[] }>('/keys');
    const unknownPlan = await admin.post('/keys', { name: 'x1', plan: 'gold' });
    expect(unknownPlan.status).toBe(422);
    expect(unknownPlan.body).toMatchObject({ message: 'unknown plan "gold"; plans: small, big', plans: ['small', 'big'] });
    expect((await admin.post('/keys', { name: 'x2', plan: 'small', expiresAt: '2027-02-30' })).status).toBe(422);
    expect((await admin.post('/keys', { name: 'x3', plan: 'small', expiresAt: new Date(clock.now - 1000).toISOString() })).status).toBe(
      422,
    );
    expect((await admin.post('/keys', { name: 'x4', plan: 'small', chains: ['999'] })).status).toBe(422);
    expect((await admin.post('/keys', { plan: 'small' })).status).toBe(422);
    expect((await admin.post('/keys', { name: 'x5', plan: 'small', colour: 'blue' })).status).toBe(422);
    expect((await admin.post('/keys', { name: 'yaml-key', plan: 'small' })).status).toBe(409);
    const k = await create({ name: 'victim', plan: 'small' });
    expect((await admin.post('/keys', { name: 'victim', plan: 'small' })).status).toBe(409);
    for (const amount of [-5, 0, 1.5, '10']) expect((await admin.post(`/keys/${k.id}/credits`, { amount })).status).toBe(422);
    expect((await admin.post('/keys/key_nosuchkeynosuchk/credits', { amount: 5 })).status).toBe(404);
    expect((await admin.patch('/keys/key_nosuchkeynosuchk', { plan: 'big' })).status).toBe(404);
    expect((await admin.patch(`/keys/${k.id}`, {})).status).toBe(422);
    expect((await admin.get('/usage?from=yesterday')).status).toBe(400);
    const after = await admin.get<{ items: unknown[] }>('/keys');
    expect(after.body.items).toHaveLength(before.body.items.length + 1);
    expect((await admin.get<KeyView>(`/keys/${k.id}`)).body.credits).toMatchObject({ topup: 0 });
  });

  it('refuses a wrong token or none with 401, and lists the plans to the right one', async () => {
    const wrong = adminClient(() => gw.app.gateway.adminUrl()!, 'not-the-admin-token-at-all');
    const res = await wrong.get('/keys');
    expect(res).toEqual({ status: 401, body: { message: 'Invalid admin token' } });
    const none = await fetch(`${gw.app.gateway.adminUrl()}/keys`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ message: 'Admin token required' });
    expect((await admin.get('/plans')).body).toEqual({
      items: [
        { name: 'small', rps: 3, credits: 100, period: 'daily', source: 'config' },
        { name: 'big', rps: 50, credits: 1000, period: 'daily', source: 'config' },
      ],
    });
  });

  it('writes no secret to the logs or the store, only digests', async () => {
    const k = await create({ name: 'secretive', plan: 'small' });
    await use(k.key);
    await gw.get(`${BALANCES}?apikey=${k.key}`, { key: null });
    await gw.app.gateway.state().usage?.flush();
    expect(lines.join('\n')).not.toContain(k.key);
    expect(lines.some((l) => l.includes('"admin":"create"'))).toBe(true);
    if (kind === 'postgres') {
      const schema = gw.app.gateway.state().config.storage.schema!;
      const rows = await withClient((c) => c.query<{ t: string }>(`SELECT row_to_json(k)::text AS t FROM ${quoted(schema)}.keys k`));
      const audit = await withClient((c) => c.query<{ t: string }>(`SELECT row_to_json(a)::text AS t FROM ${quoted(schema)}.audit a`));
      expect(rows.rows.length).toBeGreaterThan(0);
      for (const r of [...rows.rows, ...audit.rows]) expect(r.t).not.toContain(k.key);
    } else if (kind === 'sqlite') {
      for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f)).includes(k.key)).toBe(false);
    } else {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        cursor = next;
        for (const key of keys) {
          expect(key).not.toContain(k.key);
          const type = await redis.type(key);
          const dump =
            type === 'string'
              ? await redis.get(key)
              : type === 'hash'
                ? JSON.stringify(await redis.hgetall(key))
                : type === 'stream'
                  ? JSON.stringify(await redis.xrange(key, '-', '+'))
                  : JSON.stringify(await redis.smembers(key).catch(() => []));
          expect(dump ?? '').not.toContain(k.key);
        }
      } while (cursor !== '0');
    }
  });
});

describe('admin API lockout', () => {
  // test/integration/admin-trust.test.ts: the right token is still served from a locked address.
  it('refuses the wrong tokens of an address that failed to authenticate ten times in a minute', async () => {
    const gw = await startGateway(makeConfig([explorer.url], { admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 } }));
    try {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      const wrong = adminClient(() => gw.app.gateway.adminUrl()!, 'not-the-admin-token-at-all');
      expect((await admin.get('/plans')).status).toBe(200);
      for (let i = 0; i < 10; i++) expect((await wrong.get('/keys')).status).toBe(401);
      const locked = await fetch(`${gw.app.gateway.adminUrl()}/plans`, { headers: { authorization: 'Bearer not-the-admin-token-at-all' } });
      expect(locked.status).toBe(429);
      const retryAfter = Number(locked.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(300);
      expect(await locked.json()).toEqual({ message: 'Too many failed admin authentications from this address; try again later' });
    } finally {
      await gw.close();
    }
  });
});
