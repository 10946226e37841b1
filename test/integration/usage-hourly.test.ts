// Hourly usage rows and the account on each row (issue 25, item 5), end to end through the real
// gateway and GET /admin/v1/usage, on the embedded store (SQLite), Redis (whose credits the quota
// scripts count, per day and per hour in the same call) and PostgreSQL. The injected clock is moved
// from now to the first hours of the next UTC day; requests spread over three of its hours,
// answered, refused (429, 402, 403), mistaken (422) and failed (502), make rows whose hours sum to
// their day for every counter. A key moved to another account keeps its earlier rows with the
// account it was in. Hourly rows are pruned after `usage.hourlyRetentionDays`; the daily rows stay.
import { describe, expect, it } from 'vitest';
import { ADDRESS } from '../support/gateway.js';
import { storeWorlds } from '../support/store-worlds.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const STATS = '/1/api/v2/stats';
const BAD_ADDRESS = '/1/api/v2/addresses/0x123/token-balances';
/** Never cached by makeConfig (its TTL 0): each request reaches the explorer. */
const TXS = `/1/api/v2/addresses/${ADDRESS}/transactions`;

const COUNTERS = [
  'requests',
  'credits',
  'cacheHits',
  'refused',
  'rateLimited',
  'outOfCredits',
  'forbidden',
  'clientErrors',
  'errors',
] as const;
type Counter = (typeof COUNTERS)[number];
type Item = { day: string; hour?: string; key: string; name: string | null; account: string; chain: string; route: string } & Record<
  Counter,
  number
>;

const worlds = storeWorlds('hourly');

/** A row's identity as the report names it, hour left out: the daily row its hourly rows sum to. */
const identity = (r: Item) => JSON.stringify([r.day, r.key, r.account, r.chain, r.route]);
/** What a test names of a row: its hour, account, route and the counters it gives, every other one 0. */
const shape = (
  r: Item,
  counters: readonly Counter[] = ['requests', 'refused', 'rateLimited', 'outOfCredits', 'forbidden', 'clientErrors', 'errors'],
) => ({
  hour: r.hour,
  account: r.account,
  route: r.route,
  ...Object.fromEntries(counters.map((c) => [c, r[c]])),
});
const counts = (hour: string | undefined, account: string, route: string, c: Partial<Record<Counter, number>>) => ({
  hour,
  account,
  route,
  ...Object.fromEntries(
    ['requests', 'refused', 'rateLimited', 'outOfCredits', 'forbidden', 'clientErrors', 'errors'].map((n) => [n, c[n as Counter] ?? 0]),
  ),
});

describe.each(['sqlite', 'redis', 'postgres'] as const)('hourly usage rows and the account on each row (%s store)', (kind) => {
  const w = worlds.world(kind, {
    plans: { free: { rps: 1000, credits: 1_000_000, period: 'daily' }, roomy: { rps: 50, credits: 10_000, period: 'daily' } },
    usage: { enabled: true, retentionDays: 400, hourlyRetentionDays: 2 },
  });
  const { admin, clock } = w;
  // The next UTC day, from now: three of its hours pass in the test.
  const dayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  const day = new Date(dayStart).toISOString().slice(0, 10);
  const hour = (h: number) => `${day}T${String(h).padStart(2, '0')}:00:00Z`;
  let serial = 0;

  const create = async (body: Record<string, unknown>) => {
    const res = await admin.post<{ id: string; key: string }>('/keys', { name: `hourly-${kind}-${serial++}`, plan: 'roomy', ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const statuses = async (secret: string, paths: string[]) => {
    const out: number[] = [];
    for (const p of paths) out.push((await w.gw().get(p, { key: null, headers: { authorization: `Bearer ${secret}` } })).status);
    return out;
  };
  const items = async (query: string) => {
    const res = await admin.get<{ items: Item[] }>(`/usage?from=${day}&to=${day}${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.items;
  };
  let dailyBefore: Item[] = [];

  it("counts each request in its hour and its day, the hours summing to the day for every counter; `account` follows the rows' account", async () => {
    const a = (await admin.post<{ id: string }>('/accounts', { name: `hourly-a-${kind}`, plan: 'roomy' })).body.id;
    const b = (await admin.post<{ id: string }>('/accounts', { name: `hourly-b-${kind}`, plan: 'roomy' })).body.id;
    const sold = await create({ account: a });
    const rated = await create({ limits: { rps: 1 } });
    const poor = await create({ limits: { credits: 1, costs: { 'token-balances': 1 } } });
    const narrow = await create({ routes: ['stats'] });

    clock.now = dayStart + 60_000;
    expect(await statuses(sold.key, [BALANCES, BALANCES, BAD_ADDRESS])).toEqual([200, 200, 422]);
    expect(await statuses(rated.key, [BALANCES, BALANCES, BALANCES])).toEqual([200, 429, 429]);

    clock.now = dayStart + HOUR_MS + 60_000;
    expect(await statuses(sold.key, [STATS])).toEqual([200]);
    worlds.explorer().set({ failStatus: 500 });
    try {
      expect(await statuses(sold.key, [TXS])).toEqual([502]);
    } finally {
      worlds.explorer().reset();
    }
    expect(await statuses(poor.key, [BALANCES, BALANCES, BALANCES])).toEqual([200, 402, 402]);
    expect(await statuses(narrow.key, [BALANCES, STATS])).toEqual([403, 200]);
    // The key leaves account a for b: what it did so far stays a's.
    expect((await admin.patch(`/keys/${sold.id}`, { account: b })).status).toBe(200);

    clock.now = dayStart + 2 * HOUR_MS + 60_000;
    expect(await statuses(sold.key, [BALANCES, STATS])).toEqual([200, 200]);
    expect(await statuses(rated.key, [STATS, STATS])).toEqual([200, 429]);

    const daily = await items('');
    const hourly = await items('&granularity=hour');
    dailyBefore = daily;
    expect(daily.every((r) => r.day === day && !('hour' in r))).toBe(true);
    expect(hourly.every((r) => r.day === day && [hour(0), hour(1), hour(2)].includes(r.hour!))).toBe(true);
    // The hours of each row sum to its daily row, every counter, credits included; no row without the other.
    const sums = new Map<string, Record<Counter, number>>();
    for (const r of hourly) {
      const sum = sums.get(identity(r)) ?? (Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Record<Counter, number>);
      for (const c of COUNTERS) sum[c] += r[c];
      sums.set(identity(r), sum);
    }
    expect([...sums.keys()].sort()).toEqual(daily.map(identity).sort());
    for (const d of daily) expect(sums.get(identity(d)), identity(d)).toEqual(Object.fromEntries(COUNTERS.map((c) => [c, d[c]])));
    expect(daily.reduce((n, r) => n + r.requests, 0)).toBe(17);
    expect(daily.reduce((n, r) => n + r.credits, 0)).toBeGreaterThan(0);

    // Each request in the hour it was made in.
    const of = (id: string) => hourly.filter((r) => r.key === id).map((r) => shape(r));
    expect(of(rated.id)).toEqual([
      counts(hour(0), '', 'token-balances', { requests: 3, refused: 2, rateLimited: 2 }),
      counts(hour(2), '', 'stats', { requests: 2, refused: 1, rateLimited: 1 }),
    ]);
    expect(of(poor.id)).toEqual([counts(hour(1), '', 'token-balances', { requests: 3, refused: 2, outOfCredits: 2 })]);
    expect(hourly.find((r) => r.key === poor.id)?.credits).toBe(1);
    expect(of(narrow.id)).toEqual([
      counts(hour(1), '', 'stats', { requests: 1 }),
      counts(hour(1), '', 'token-balances', { requests: 1, refused: 1, forbidden: 1 }),
    ]);
    expect(of(sold.id)).toEqual([
      counts(hour(0), a, 'token-balances', { requests: 3, clientErrors: 1 }),
      counts(hour(1), a, 'stats', { requests: 1 }),
      counts(hour(1), a, 'transactions', { requests: 1, errors: 1 }),
      counts(hour(2), b, 'stats', { requests: 1 }),
      counts(hour(2), b, 'token-balances', { requests: 1 }),
    ]);
    // The failed request was refunded: no credits in its hour.
    expect(hourly.find((r) => r.key === sold.id && r.route === 'transactions')?.credits).toBe(0);

    // By account: the rows counted under it, whichever account the key is in now; one row per account of a key's day.
    const soldDaily = daily.filter((r) => r.key === sold.id);
    expect((await items(`&account=${a}`)).map((r) => shape(r, ['requests', 'credits']))).toEqual(
      soldDaily.filter((r) => r.account === a).map((r) => shape(r, ['requests', 'credits'])),
    );
    expect((await items(`&account=${a}`)).map((r) => r.route)).toEqual(['stats', 'token-balances', 'transactions']);
    expect((await items(`&account=${b}`)).map((r) => [r.account, r.route, r.requests])).toEqual([
      [b, 'stats', 1],
      [b, 'token-balances', 1],
    ]);
    expect((await items(`&account=${a}&granularity=hour`)).map((r) => r.hour)).toEqual([hour(0), hour(1), hour(1)]);
    expect((await items(`&account=${b}&granularity=hour&route=stats`)).map((r) => [r.hour, r.key])).toEqual([[hour(2), sold.id]]);
    // Ordered by account (ids are random) after day, key, chain and route.
    expect((await items(`&key=${sold.id}&route=token-balances`)).map((r) => [r.account, r.requests])).toEqual(
      [
        [a, 3],
        [b, 1],
      ].sort(),
    );
    expect(daily.filter((r) => r.key !== sold.id).every((r) => r.account === '')).toBe(true);
  });

  it('CSV carries the hour after the day with granularity=hour, and the account last; any other granularity is refused', async () => {
    const csv = await admin.get<string>(`/usage?from=${day}&to=${day}&granularity=hour&format=csv`);
    expect(csv.status).toBe(200);
    const lines = csv.body.split('\r\n').filter((l) => l !== '');
    expect(lines[0]).toBe(
      'day,hour,key,name,chain,route,requests,credits,cacheHits,refused,rateLimited,outOfCredits,forbidden,clientErrors,errors,account',
    );
    const hourly = await items('&granularity=hour');
    expect(lines.slice(1).map((l) => l.split(',')[1])).toEqual(hourly.map((r) => r.hour));
    expect(lines.slice(1).map((l) => l.split(',').at(-1))).toEqual(hourly.map((r) => r.account));
    const daily = await admin.get<string>(`/usage?from=${day}&to=${day}&format=csv`);
    expect(daily.body.split('\r\n')[0]).toBe(
      'day,key,name,chain,route,requests,credits,cacheHits,refused,rateLimited,outOfCredits,forbidden,clientErrors,errors,account',
    );
    for (const granularity of ['week', 'HOUR', '']) {
      const refused = await admin.get<{ message: string; errors: unknown }>(`/usage?granularity=${granularity}`);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        message: 'invalid query: granularity: expected day or hour',
        errors: [{ field: 'granularity', message: 'expected day or hour' }],
      });
    }
  });

  it('prunes the hourly rows after usage.hourlyRetentionDays and keeps the daily rows', async () => {
    expect((await items('&granularity=hour')).length).toBeGreaterThan(0);
    // A day later: within the two days kept.
    clock.now = dayStart + DAY_MS + 3 * HOUR_MS;
    await w.gw().app.gateway.pruneUsage();
    expect((await items('&granularity=hour')).length).toBeGreaterThan(0);
    // Three days later: the day's hourly rows are gone, its daily rows stay as they were.
    clock.now = dayStart + 3 * DAY_MS + HOUR_MS;
    await w.gw().app.gateway.pruneUsage();
    expect(await items('&granularity=hour')).toEqual([]);
    expect(await items('')).toEqual(dailyBefore);
  });
});
