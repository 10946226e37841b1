// A plan change between a daily and a monthly plan keeps the spend of the new plan's period, in
// a gateway without Redis (docs/operator-guide.md, "What is kept is what a key spent"): moved to a monthly plan, a
// key has spent what it spent this month; moved to a daily plan, what it spent today. The
// in-process quota store counts every debit in a day counter and a month counter
// (quota/memory.ts); here they survive a restart on the SQLite file and on the PostgreSQL schema,
// a PostgreSQL schema of version 1 (one period's spend per ledger) keeps its spend when migrated,
// and a real gateway on SQLite shows the kept spend in `x-credits-remaining` and in the admin
// API's key view across PATCHes of the plan. The same rules on the store alone, without a
// restart: test/contracts/quota-store.test.ts; the SQLite file of version 3: test/contracts/store.test.ts.
//
// Every instant is noon UTC of the 2nd or the 3rd of the month the suite runs in: two days of one
// month, whatever day today is, handed to the stores as the decision's clock and to the gateway
// as its injected clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { periodWindow, type Period } from '../../src/quota/period.js';
import type { QuotaQuery } from '../../src/quota/types.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { POSTGRES_URL, quoted, testSchemas, withClient } from '../support/postgres.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const thisMonth = new Date();
const noonOfDate = (date: number) => Date.UTC(thisMonth.getUTCFullYear(), thisMonth.getUTCMonth(), date, 12);
const DAY2 = noonOfDate(2);
const DAY3 = noonOfDate(3);

let dir = '';
const schemas = testSchemas('plan_period');
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'egw-plan-period-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await schemas.dropAll();
});

/** A ledger store that a gateway restart opens again on the same data. */
interface Backend {
  name: string;
  /** Where the ledgers of one test live: each call of `open` is a new process on them. */
  place(): () => SqliteStore | PostgresStore;
}

let files = 0;
const backends: Backend[] = [
  {
    name: 'SQLite file',
    place() {
      const file = join(dir, `restart-${files++}`, 'store.db');
      return () => new SqliteStore(file);
    },
  },
  {
    name: 'PostgreSQL schema',
    place() {
      const schema = schemas.fresh();
      return () => new PostgresStore(POSTGRES_URL, { schema, ledgers: true });
    },
  },
];

/** Runs `step` on a quota store of its own over a new store on the same data, as a gateway started for it would. */
async function inProcess<T>(open: () => SqliteStore | PostgresStore, step: (quota: MemoryQuotaStore) => Promise<T> | T): Promise<T> {
  const store = open();
  const quota = new MemoryQuotaStore(store.ledgers);
  try {
    await quota.start();
    expect(quota.loaded).toBe(true);
    const result = await step(quota);
    await quota.close();
    return result;
  } finally {
    await store.close();
  }
}

const ACCOUNT = 'acct-plan-change';
const query = (period: Period, nowMs: number, cost: number): QuotaQuery => ({
  account: ACCOUNT,
  rps: 1000,
  credits: 1000,
  period,
  cost,
  nowMs,
});

describe.each(backends)('the in-process quota store across restarts: $name', (backend) => {
  it('monthly to daily counts what was spent today, and back to monthly what was spent this month, each after a restart', async () => {
    const open = backend.place();
    await inProcess(open, (q) => expect(q.decide(query('monthly', DAY2, 300))).toMatchObject({ outcome: 'ok', credits: 700 }));
    await inProcess(open, (q) => expect(q.decide(query('monthly', DAY3, 100))).toMatchObject({ outcome: 'ok', credits: 600 }));
    // Moved to the daily plan, in a gateway started after the spend.
    await inProcess(open, async (q) => {
      expect(await q.balance(ACCOUNT, 'daily', DAY3)).toMatchObject({ spent: 100 });
      expect(q.decide(query('daily', DAY3, 50))).toMatchObject({ outcome: 'ok', credits: 850 });
    });
    // Back to the monthly plan, in the next one.
    await inProcess(open, async (q) => {
      expect(await q.balance(ACCOUNT, 'monthly', DAY3)).toMatchObject({ spent: 450 });
      expect(q.decide(query('monthly', DAY3, 0))).toMatchObject({ outcome: 'ok', credits: 550 });
    });
  });

  it('daily to monthly counts what was spent on every day of the month, after a restart', async () => {
    const open = backend.place();
    await inProcess(open, (q) => expect(q.decide(query('daily', DAY2, 300))).toMatchObject({ outcome: 'ok', credits: 700 }));
    await inProcess(open, (q) => expect(q.decide(query('daily', DAY3, 100))).toMatchObject({ outcome: 'ok', credits: 900 }));
    await inProcess(open, async (q) => {
      expect(await q.balance(ACCOUNT, 'monthly', DAY3)).toMatchObject({ spent: 400 });
      expect(q.decide(query('monthly', DAY3, 0))).toMatchObject({ outcome: 'ok', credits: 600 });
      expect(await q.balance(ACCOUNT, 'daily', DAY3)).toMatchObject({ spent: 100 });
    });
  });
});

describe('a PostgreSQL schema of version 1', () => {
  it("keeps each ledger's spend when migrated: a day's as its day counter and its month's, a month's as its month counter", async () => {
    const schema = schemas.fresh();
    const s = quoted(schema);
    const day = periodWindow('daily', DAY3).id;
    const month = periodWindow('monthly', DAY3).id;
    // The tables the migration to version 2 reads, as version 1 made them (src/store/postgres.ts,
    // MIGRATIONS[0]); the others it leaves alone but for version 4's columns.
    await withClient(async (c) => {
      await c.query(`CREATE SCHEMA ${s}`);
      await c.query(`CREATE TABLE ${s}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      await c.query(`INSERT INTO ${s}.schema_version (version) VALUES (1)`);
      // The tables of version 1 that a later version changes (only their columns that matter here).
      await c.query(`CREATE TABLE ${s}.keys (id text COLLATE "C" PRIMARY KEY)`);
      await c.query(`CREATE TABLE ${s}.audit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY)`);
      await c.query(`CREATE TABLE ${s}.usage (day date NOT NULL, key_id text COLLATE "C" NOT NULL, chain text COLLATE "C" NOT NULL,
        route text COLLATE "C" NOT NULL, PRIMARY KEY (day, key_id, chain, route))`);
      await c.query(`CREATE TABLE ${s}.ledgers (
        account text COLLATE "C" PRIMARY KEY, period_id text NOT NULL, spent bigint NOT NULL, topup bigint NOT NULL)`);
      await c.query(
        `INSERT INTO ${s}.ledgers (account, period_id, spent, topup) VALUES ('on-monthly', $1, 400, 0), ('on-daily', $2, 250, 10), ('bought-only', '', 0, 70)`,
        [month, day],
      );
    });
    const store = new PostgresStore(POSTGRES_URL, { schema, ledgers: true });
    try {
      // Named by the store secret since version 3 (src/store/postgres.ts).
      const sealed = (await store.loadLedgers()).sort((a, b) => a.topup - b.topup);
      expect(sealed).toEqual([
        { account: store.sealAccount('on-monthly'), day: '', daySpent: 0, month, monthSpent: 400, topup: 0 },
        { account: store.sealAccount('on-daily'), day, daySpent: 250, month, monthSpent: 250, topup: 10 },
        { account: store.sealAccount('bought-only'), day: '', daySpent: 0, month: '', monthSpent: 0, topup: 70 },
      ]);
      const quota = new MemoryQuotaStore(store);
      await quota.start();
      expect(await quota.balance('on-monthly', 'monthly', DAY3)).toEqual({ spent: 400, topup: 0, periodId: month });
      expect(await quota.balance('on-daily', 'daily', DAY3)).toEqual({ spent: 250, topup: 10, periodId: day });
      expect(await quota.balance('on-daily', 'monthly', DAY3)).toEqual({ spent: 250, topup: 10, periodId: month });
      await quota.close();
      const versions = await withClient(
        async (c) => (await c.query<{ version: number }>(`SELECT version FROM ${s}.schema_version ORDER BY version`)).rows,
      );
      expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    } finally {
      await store.close();
    }
  });
});

/** Where the quota counters live: the in-process store's ledgers in the SQLite file, or Redis (its run-time keys too). */
const gatewayBackends = [
  { name: 'on SQLite without Redis', redisPrefix: undefined },
  { name: 'on Redis', redisPrefix: testPrefix('plan-period') },
];

describe.each(gatewayBackends)('a gateway $name, its key moved between a monthly and a daily plan', ({ redisPrefix }) => {
  const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
  const COST = 100;
  let explorer: FixtureExplorer;
  let gw: TestGateway | undefined;
  const clock = { now: DAY2 };
  const admin = adminClient(() => gw!.app.gateway.adminUrl()!);

  /** A gateway on the suite's SQLite file: started again, it is a restart. */
  async function start(file: string): Promise<void> {
    gw = await startGateway(
      makeConfig([explorer.url], {
        plans: {
          free: { rps: 1000, credits: 1000, period: 'daily' }, // the configured demo key's
          month: { rps: 1000, credits: 1000, period: 'monthly' },
          day: { rps: 1000, credits: 1000, period: 'daily' },
        },
        costs: { default: COST, routes: {} },
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
        storage: { path: file },
        ...(redisPrefix === undefined ? {} : { redis: { url: REDIS_URL, keyPrefix: redisPrefix } }),
      }),
      { now: () => clock.now },
    );
  }

  beforeAll(async () => {
    explorer = await startFixtureExplorer();
  });
  afterAll(async () => {
    await gw?.close();
    await explorer.close();
    if (redisPrefix !== undefined) {
      const redis = connect();
      await deletePrefix(redis, redisPrefix);
      redis.disconnect();
    }
  });

  /** One paid request with the key: its status and the balance it reports. */
  async function use(secret: string): Promise<[number, string | null]> {
    const res = await gw!.get(BALANCES, { key: secret });
    await res.arrayBuffer();
    return [res.status, res.headers.get('x-credits-remaining')];
  }

  const shown = async (id: string) =>
    (await admin.get<{ plan: string; credits: { remaining: number; spent: number } }>(`/keys/${id}`)).body;

  async function moveTo(id: string, plan: string): Promise<void> {
    const res = await admin.patch<{ plan: string }>(`/keys/${id}`, { plan });
    expect([res.status, res.body.plan]).toEqual([200, plan]);
  }

  it("keeps the spend of the new plan's period in both directions, and across a restart", async () => {
    const file = join(dir, redisPrefix === undefined ? 'gateway' : 'redis-gateway', 'gateway.db');
    clock.now = DAY2;
    await start(file);
    const created = await admin.post<{ id: string; key: string }>('/keys', { name: 'mover', plan: 'month' });
    expect(created.status).toBe(201);
    const { id, key } = created.body;

    // Monthly: 300 on the 2nd, 100 on the 3rd.
    for (const left of ['900', '800', '700']) expect(await use(key)).toEqual([200, left]);
    clock.now = DAY3;
    expect(await use(key)).toEqual([200, '600']);

    // To the daily plan on the 3rd: today's 100 spent of its 1,000.
    await moveTo(id, 'day');
    expect((await shown(id)).credits).toMatchObject({ spent: 100, remaining: 900 });
    expect(await use(key)).toEqual([200, '800']);

    // Back to the monthly plan: the month's 300 + 100 + 100.
    await moveTo(id, 'month');
    expect((await shown(id)).credits).toMatchObject({ spent: 500, remaining: 500 });
    expect(await use(key)).toEqual([200, '400']);

    // Daily to monthly: a key on the daily plan, 200 on the 2nd and 100 on the 3rd.
    clock.now = DAY2 + 60_000;
    const daily = (await admin.post<{ id: string; key: string }>('/keys', { name: 'daily-mover', plan: 'day' })).body;
    for (const left of ['900', '800']) expect(await use(daily.key)).toEqual([200, left]);
    clock.now = DAY3 + 60_000;
    expect(await use(daily.key)).toEqual([200, '900']);
    await moveTo(daily.id, 'month');
    expect((await shown(daily.id)).credits).toMatchObject({ spent: 300, remaining: 700 });
    expect(await use(daily.key)).toEqual([200, '600']);

    // A restart on the same file: the spend of both counters is read back.
    await gw!.close();
    gw = undefined;
    await start(file);
    expect((await shown(id)).credits).toMatchObject({ spent: 600, remaining: 400 });
    await moveTo(id, 'day');
    expect((await shown(id)).credits).toMatchObject({ spent: 300, remaining: 700 });
    await moveTo(daily.id, 'day');
    expect((await shown(daily.id)).credits).toMatchObject({ spent: 200, remaining: 800 });
    expect(await use(daily.key)).toEqual([200, '700']);
  });
});
