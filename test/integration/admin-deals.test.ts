// What an operator sells beyond a plan (issue 25), end to end through the real gateway and its
// admin API, on the embedded store (SQLite), Redis and PostgreSQL: a key's own deal over its plan
// (rps, credits, period, route costs; null back to the plan's, the spend kept); restrictions a
// customer asks for (routes, client networks, browser origins), each refused with a 403 naming
// its rule and never billed; admin tokens with scopes, whose names the audit trail records.
import { storeWorlds } from '../support/store-worlds.js';
import { describe, expect, it } from 'vitest';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, DEMO_KEY } from '../support/gateway.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const STATS = '/1/api/v2/stats';
const LEGACY_BALANCE = `/1/api?module=account&action=balance&address=${ADDRESS}`;
const READ_TOKEN = 'dashboard-token-0123456789abcdef';
const WRITE_TOKEN = 'billing-token-0123456789abcdef00';

const worlds = storeWorlds('deals');

interface View {
  id: string;
  key: string;
  limits: unknown;
  effective: { rps: number; credits: number; period: string } | null;
  routes: string[] | null;
  ips: string[] | null;
  origins: string[] | null;
  meta: Record<string, unknown> | null;
  credits?: { remaining: number; spent: number; topup: number };
  message?: string;
}

describe.each(['sqlite', 'redis', 'postgres'] as const)('deals, restrictions and scoped admin tokens (%s store)', (kind) => {
  const w = worlds.world(kind, {
    plans: { small: { rps: 3, credits: 100, period: 'daily' } },
    keys: [{ name: 'yaml-key', key: DEMO_KEY, plan: 'small' }],
    admin: {
      token: ADMIN_TOKEN,
      tokens: [
        { name: 'dashboard', token: READ_TOKEN, scope: 'read' },
        { name: 'billing', token: WRITE_TOKEN, scope: 'write' },
      ],
      host: '127.0.0.1',
      port: 0,
    },
  });
  const { admin, clock } = w;
  const reader = adminClient(() => w.gw().app.gateway.adminUrl()!, READ_TOKEN);
  const billing = adminClient(() => w.gw().app.gateway.adminUrl()!, WRITE_TOKEN);
  let serial = 0;

  const create = async (body: Record<string, unknown> = {}) => {
    const res = await admin.post<View>('/keys', { name: `deal-${kind}-${serial++}`, plan: 'small', ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const show = async (id: string) => (await admin.get<View>(`/keys/${id}`)).body;
  const use = (secret: string, path = BALANCES, headers: Record<string, string> = {}) =>
    w.gw().get(path, { key: null, headers: { authorization: `Bearer ${secret}`, ...headers } });

  describe('a custom deal', () => {
    it("overrides the plan's rps, credits and route costs at once, and null returns each to the plan's with the spend kept", async () => {
      const k = await create();
      expect(k.limits).toBeNull();
      expect(k.effective).toEqual({ rps: 3, credits: 100, period: 'daily' });

      const patched = await admin.patch<View>(`/keys/${k.id}`, { limits: { rps: 7, credits: 500, costs: { 'token-balances': 1 } } });
      expect(patched.status).toBe(200);
      expect(patched.body.limits).toEqual({ rps: 7, credits: 500, period: null, costs: { 'token-balances': 1 } });
      expect(patched.body.effective).toEqual({ rps: 7, credits: 500, period: 'daily' });

      const first = await use(k.key);
      expect(first.status).toBe(200);
      expect(first.headers.get('x-ratelimit-limit')).toBe('7');
      // The deal's price for the route, from the deal's allowance.
      expect(first.headers.get('x-credits-remaining')).toBe('499');
      // A route the deal does not price costs what the configuration says (stats: the PRO API's price).
      const stats = await use(k.key, STATS);
      expect(stats.status).toBe(200);
      const statsCost = 499 - Number(stats.headers.get('x-credits-remaining'));
      expect(statsCost).toBeGreaterThan(1);

      // rps back to the plan's; the rest of the deal stays.
      const partial = await admin.patch<View>(`/keys/${k.id}`, { limits: { rps: null } });
      expect(partial.body.limits).toEqual({ rps: null, credits: 500, period: null, costs: { 'token-balances': 1 } });
      clock.now += 2_000;
      const third = await use(k.key);
      expect(third.headers.get('x-ratelimit-limit')).toBe('3');
      expect(third.headers.get('x-credits-remaining')).toBe(String(499 - statsCost - 1));

      // The whole deal gone: the plan's allowance, minus what was spent under the deal.
      const cleared = await admin.patch<View>(`/keys/${k.id}`, { limits: null });
      expect(cleared.body.limits).toBeNull();
      const spent = 1 + statsCost + 1;
      expect((await show(k.id)).credits).toMatchObject({ spent, remaining: 100 - spent });
      clock.now += 2_000;
      const fourth = await use(k.key);
      expect(fourth.headers.get('x-credits-remaining')).toBe(String(100 - spent - 20));
    });

    it('enforces the deal: the rate it sets, and its credits running out', async () => {
      const k = await create({ limits: { rps: 1, credits: 2, costs: { 'token-balances': 1 } } });
      expect(k.effective).toEqual({ rps: 1, credits: 2, period: 'daily' });
      expect((await use(k.key)).status).toBe(200);
      expect((await use(k.key)).status).toBe(429);
      clock.now += 1_500;
      expect((await use(k.key)).status).toBe(200);
      clock.now += 1_500;
      expect((await use(k.key)).status).toBe(402);
      expect((await show(k.id)).credits).toMatchObject({ spent: 2, remaining: 0 });
    });

    it('refuses a deal it cannot apply, naming the field, and changes nothing', async () => {
      const k = await create();
      const unknownRoute = await admin.patch<View>(`/keys/${k.id}`, { limits: { costs: { 'no-such-route': 1 } } });
      expect(unknownRoute.status).toBe(422);
      expect(unknownRoute.body.message).toContain('no-such-route');
      const zeroRate = await admin.patch<{ errors: { field: string }[] }>(`/keys/${k.id}`, { limits: { rps: 0 } });
      expect(zeroRate.status).toBe(422);
      expect(zeroRate.body.errors.map((e) => e.field)).toEqual(['limits.rps']);
      const period = await admin.patch(`/keys/${k.id}`, { limits: { period: 'weekly' } });
      expect(period.status).toBe(422);
      expect((await show(k.id)).limits).toBeNull();
    });
  });

  describe('restrictions', () => {
    it('routes: the families allowed are served; any other route is a 403 naming the rule, not billed', async () => {
      const k = await create({ routes: ['addresses/*', 'legacy.account.*'] });
      expect((await use(k.key)).status).toBe(200);
      expect((await use(k.key, LEGACY_BALANCE)).status).toBe(200);
      const before = (await show(k.id)).credits!.spent;
      const refused = await use(k.key, STATS);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { message: string }).message).toContain('key restriction: routes');
      const legacy = await use(k.key, '/1/api?module=stats&action=ethsupply');
      expect(legacy.status).toBe(403);
      expect((await show(k.id)).credits!.spent).toBe(before);
      // Lifted: every route again.
      await admin.patch(`/keys/${k.id}`, { routes: null });
      expect((await use(k.key, STATS)).status).toBe(200);
    });

    it('routes on JSON-RPC: each call outside them is an error member that costs nothing; the others are answered', async () => {
      const k = await create({ routes: ['rpc.eth_blockNumber'] });
      const res = await use(k.key, '/1/json-rpc', {});
      expect(res.status).toBe(405);
      const batch = await w.gw().get('/1/json-rpc', {
        key: null,
        method: 'POST',
        headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
          { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] },
        ]),
      });
      expect(batch.status).toBe(200);
      const answers = (await batch.json()) as { id: number; result?: string; error?: { message: string } }[];
      expect(answers.find((a) => a.id === 1)?.result).toMatch(/^0x/);
      expect(answers.find((a) => a.id === 2)?.error?.message).toContain('rpc.eth_chainId');
      const rpcCost = 100 - Number(batch.headers.get('x-credits-remaining'));
      expect((await show(k.id)).credits!.spent).toBe(rpcCost);
    });

    it('ips: a client outside the networks is refused with a 403 naming the rule; one inside is served', async () => {
      const k = await create({ ips: ['10.0.0.0/8', '2001:db8::/32'] });
      const refused = await use(k.key);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { message: string }).message).toContain('key restriction: ips');
      await admin.patch(`/keys/${k.id}`, { ips: ['10.0.0.0/8', '127.0.0.0/8'] });
      expect((await use(k.key)).status).toBe(200);
      const bad = await admin.patch<{ errors: { field: string }[] }>(`/keys/${k.id}`, { ips: ['10.0.0.0/33'] });
      expect(bad.status).toBe(422);
      expect(bad.body.errors[0]!.field).toBe('ips.0');
    });

    it('origins: only the browser origins listed are served; no Origin or another one is a 403 naming the rule', async () => {
      const k = await create({ origins: ['https://App.Example.com:443'] });
      // Kept as browsers send it (RFC 6454): lower case, no default port.
      expect(k.origins).toEqual(['https://app.example.com']);
      const none = await use(k.key);
      expect(none.status).toBe(403);
      expect(((await none.json()) as { message: string }).message).toContain('key restriction: origins');
      expect((await use(k.key, BALANCES, { origin: 'https://evil.example' })).status).toBe(403);
      const ok = await use(k.key, BALANCES, { origin: 'https://app.example.com' });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).not.toBeNull();
      const bad = await admin.patch(`/keys/${k.id}`, { origins: ['https://app.example.com/path'] });
      expect(bad.status).toBe(422);
    });

    it('routes naming nothing are refused (a typo must not lock a customer out), and meta is kept within its bound', async () => {
      const typo = await admin.post<View>('/keys', { name: `typo-${kind}`, plan: 'small', routes: ['tokenz/*'] });
      expect(typo.status).toBe(422);
      expect(typo.body.message).toContain('tokenz/*');
      // A pattern of many wildcards (a regular expression that could backtrack for long) is refused.
      const starry = await admin.post<{ errors: { field: string; message: string }[] }>('/keys', {
        name: `starry-${kind}`,
        plan: 'small',
        routes: ['a*b*c*d*e*f'],
      });
      expect(starry.status).toBe(422);
      expect(starry.body.errors[0]).toMatchObject({ field: 'routes.0' });
      const k = await create({ meta: { customer: 'cus_42', seats: 3 } });
      expect(k.meta).toEqual({ customer: 'cus_42', seats: 3 });
      expect((await show(k.id)).meta).toEqual({ customer: 'cus_42', seats: 3 });
      const big = await admin.patch(`/keys/${k.id}`, { meta: { blob: 'x'.repeat(5_000) } });
      expect(big.status).toBe(422);
      expect((await show(k.id)).meta).toEqual({ customer: 'cus_42', seats: 3 });
    });
  });

  describe('credit corrections', () => {
    it('takes bought credits away and sets them, each with its reason in the audit trail, never below zero', async () => {
      const k = await create();
      const credit = (body: Record<string, unknown>) =>
        admin.post<{ added: number; topup: number; remaining: number; reason: string | null; available?: number; message?: string }>(
          `/keys/${k.id}/credits`,
          body,
        );
      expect((await credit({ amount: 100 })).body).toMatchObject({ added: 100, topup: 100, remaining: 200, reason: null });
      expect((await credit({ amount: -30, reason: 'refund: invoice 7' })).body).toMatchObject({ added: -30, topup: 70, remaining: 170 });
      const tooMuch = await credit({ amount: -71, reason: 'mistake' });
      expect(tooMuch.status).toBe(409);
      expect(tooMuch.body.available).toBe(70);
      expect((await show(k.id)).credits).toMatchObject({ topup: 70 });
      expect((await credit({ set: 5, reason: 'renewal' })).body).toMatchObject({ added: -65, topup: 5, remaining: 105 });
      expect((await credit({ set: 40, reason: 'renewal, corrected' })).body).toMatchObject({ added: 35, topup: 40 });
      // A correction without its reason, both fields, neither, zero: refused, nothing changed.
      for (const bad of [{ amount: -1 }, { set: 3 }, { amount: 1, set: 3, reason: 'x' }, {}, { amount: 0 }, { set: -1, reason: 'x' }]) {
        expect((await credit(bad)).status, JSON.stringify(bad)).toBe(422);
      }
      expect((await show(k.id)).credits).toMatchObject({ topup: 40 });
      // What the gateway serves follows: the allowance (100) and the 40 bought, spent after it.
      expect((await use(k.key)).headers.get('x-credits-remaining')).toBe('120');

      const audit = await admin.get<{ items: { action: string; after: { added: number; reason: string | null } }[] }>(`/audit?key=${k.id}`);
      expect(audit.body.items.filter((e) => e.action === 'credits').map((e) => [e.after.added, e.after.reason])).toEqual([
        [100, null],
        [-30, 'refund: invoice 7'],
        [-65, 'renewal'],
        [35, 'renewal, corrected'],
      ]);
    });
  });

  describe('admin tokens with scopes', () => {
    it('a read token reads and verifies but may not write; every write names its token in the audit trail', async () => {
      expect((await reader.get('/keys')).status).toBe(200);
      expect((await reader.post('/keys:verify', { key: DEMO_KEY })).status).toBe(200);
      const refused = await reader.post<{ message: string }>('/keys', { name: `by-reader-${kind}`, plan: 'small' });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain('dashboard');
      expect((await admin.get<{ items: { name: string }[] }>('/keys')).body.items.map((k) => k.name)).not.toContain(`by-reader-${kind}`);

      const made = await billing.post<View>('/keys', { name: `by-billing-${kind}`, plan: 'small' });
      expect(made.status).toBe(201);
      expect((await admin.post(`/keys/${made.body.id}/credits`, { amount: 5 })).status).toBe(200);
      const audit = await admin.get<{ items: { action: string; actor: string | null }[] }>(`/audit?key=${made.body.id}`);
      expect(audit.body.items.map((e) => [e.action, e.actor])).toEqual([
        ['create', 'billing'],
        ['credits', 'admin'],
      ]);
      const wrong = adminClient(() => w.gw().app.gateway.adminUrl()!, 'not-a-token-0123456789abcdef');
      expect((await wrong.get('/keys')).status).toBe(401);
    });
  });
});
