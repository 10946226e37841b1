// Usage that answers a customer's question (issue 25, item 5): the refusals split by cause
// (rateLimited: 429 of the key's rate, outOfCredits: 402, forbidden: 403) and the other 4xx
// answered to a key (clientErrors) counted apart from 5xx, end to end through the real gateway and
// GET /admin/v1/usage, on the embedded store (SQLite), Redis and PostgreSQL. A 404 of a route the
// gateway does not know and a 405 are answered before any key is read (request/pipeline.ts): no
// key's usage counts them.
import { storeWorlds } from '../support/store-worlds.js';
import { describe, expect, it } from 'vitest';
import { ADDRESS } from '../support/gateway.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const STATS = '/1/api/v2/stats';
const BAD_ADDRESS = '/1/api/v2/addresses/0x123/token-balances';
/** A block far above the fixture's head: the explorer's own 404 (fixture/head-routes.ts). */
const NO_SUCH_BLOCK = '/1/api/v2/blocks/999999999999';
const UNKNOWN_ROUTE = '/1/api/v2/no-such-thing';
/** Never cached by makeConfig (its TTL 0): each request reaches the explorer. */
const TXS = `/1/api/v2/addresses/${ADDRESS}/transactions`;

const worlds = storeWorlds('causes');

interface Created {
  id: string;
  key: string;
}
interface Item {
  key: string;
  route: string;
  requests: number;
  credits: number;
  refused: number;
  rateLimited: number;
  outOfCredits: number;
  forbidden: number;
  clientErrors: number;
  errors: number;
}

const COUNTS = ['requests', 'refused', 'rateLimited', 'outOfCredits', 'forbidden', 'clientErrors', 'errors'] as const;
type Counts = Partial<Record<(typeof COUNTS)[number], number>>;
/** A row's counts as the test names them, every other one 0. */
const counts = (route: string, c: Counts) => ({ route, ...Object.fromEntries(COUNTS.map((n) => [n, c[n] ?? 0])) });

describe.each(['sqlite', 'redis', 'postgres'] as const)('usage split by cause (%s store)', (kind) => {
  const w = worlds.world(kind, {
    plans: { free: { rps: 1000, credits: 1_000_000, period: 'daily' }, roomy: { rps: 50, credits: 1_000, period: 'daily' } },
  });
  const { admin, clock } = w;
  let serial = 0;

  const create = async (body: Record<string, unknown> = {}) => {
    const res = await admin.post<Created>('/keys', { name: `causes-${kind}-${serial++}`, plan: 'roomy', ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const use = (secret: string, path: string, init: RequestInit = {}) =>
    w.gw().get(path, { key: null, ...init, headers: { authorization: `Bearer ${secret}` } });
  const statuses = async (secret: string, paths: string[], init: RequestInit = {}) => {
    const out: number[] = [];
    for (const p of paths) out.push((await use(secret, p, init)).status);
    return out;
  };
  const usageOf = async (id: string) => {
    const res = await admin.get<{ items: Item[] }>(`/usage?key=${id}`);
    expect(res.status).toBe(200);
    return res.body.items.map((r) => ({ route: r.route, ...Object.fromEntries(COUNTS.map((n) => [n, r[n]])) }));
  };

  it("counts the 429s of the key's rate as rateLimited", async () => {
    const k = await create({ limits: { rps: 1 } });
    expect(await statuses(k.key, [BALANCES, BALANCES, BALANCES])).toEqual([200, 429, 429]);
    expect(await usageOf(k.id)).toEqual([counts('token-balances', { requests: 3, refused: 2, rateLimited: 2 })]);
  });

  it('counts the 402s of a key whose credits ran out as outOfCredits', async () => {
    const k = await create({ limits: { credits: 1, costs: { 'token-balances': 1 } } });
    expect(await statuses(k.key, [BALANCES, BALANCES, BALANCES])).toEqual([200, 402, 402]);
    expect(await usageOf(k.id)).toEqual([counts('token-balances', { requests: 3, refused: 2, outOfCredits: 2 })]);
  });

  it('counts the 403s of a key restricted by routes as forbidden', async () => {
    const k = await create({ routes: ['stats'] });
    expect(await statuses(k.key, [BALANCES, BALANCES, STATS])).toEqual([403, 403, 200]);
    expect(await usageOf(k.id)).toEqual([
      counts('stats', { requests: 1 }),
      counts('token-balances', { requests: 2, refused: 2, forbidden: 2 }),
    ]);
  });

  it("counts a 422 and the explorer's 404 as clientErrors, apart from 5xx; a route the gateway does not know and a 405 count for no key", async () => {
    const k = await create();
    expect(await statuses(k.key, [BAD_ADDRESS, BAD_ADDRESS, NO_SUCH_BLOCK, UNKNOWN_ROUTE])).toEqual([422, 422, 404, 404]);
    expect(await statuses(k.key, [BALANCES], { method: 'POST' })).toEqual([405]);
    clock.now += 2_000;
    worlds.explorer().set({ failStatus: 500 });
    try {
      expect(await statuses(k.key, [TXS])).toEqual([502]);
    } finally {
      worlds.explorer().reset();
    }
    expect(await usageOf(k.id)).toEqual([
      counts('blocks/{block_hash_or_number_param}', { requests: 1, clientErrors: 1 }),
      counts('token-balances', { requests: 2, clientErrors: 2 }),
      counts('transactions', { requests: 1, errors: 1 }),
    ]);
  });

  it('CSV carries the counters by cause after refused, before errors', async () => {
    const k = await create({ limits: { rps: 2 }, routes: ['addresses/*'] });
    expect(await statuses(k.key, [BALANCES, BAD_ADDRESS, BALANCES, STATS])).toEqual([200, 422, 429, 403]);
    const csv = await admin.get<string>(`/usage?key=${k.id}&format=csv`);
    const lines = csv.body.split('\r\n').filter((l) => l !== '');
    expect(lines[0]).toBe(
      'day,key,name,chain,route,requests,credits,cacheHits,refused,rateLimited,outOfCredits,forbidden,clientErrors,errors,account',
    );
    // stats: refused by the routes rule; token-balances: one served, one 422, one over the rate. No account: ''.
    expect(lines.slice(1).map((l) => l.split(',').slice(4).join(','))).toEqual([
      'stats,1,0,0,1,0,0,1,0,0,',
      `token-balances,3,${lines[2]!.split(',')[6]},0,1,1,0,0,1,0,`,
    ]);
  });
});
