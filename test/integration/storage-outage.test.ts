// A records store that is away at start or during the run never takes the public path down
// (docs/configuration.md, `storage`): known keys keep working from memory, usage rows wait and are written once
// it is back, the stored ledgers are added to what was spent meanwhile (nothing lost, nothing
// counted twice), and /readyz and egw_storage_up say so. First the in-process quota store over a
// real SQLite store whose reads fail on purpose; then a gateway in front of a real PostgreSQL
// through a TCP proxy that is cut and restored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { hashKey } from '../../src/auth/digest.js';
import { periodWindow } from '../../src/quota/period.js';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { utcDay } from '../../src/store/day.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { LedgerStore } from '../../src/store/types.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway } from '../support/gateway.js';
import { POSTGRES_URL, testSchemas } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';

/** A real store whose reads and writes fail while `away` is set, as a database away would. */
function faulty(store: LedgerStore): { store: LedgerStore; away: { on: boolean } } {
  const away = { on: true };
  const refuse = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
  return {
    away,
    store: {
      loadLedgers: () => (away.on ? refuse() : store.loadLedgers()),
      saveLedgers: (rows) => (away.on ? refuse() : store.saveLedgers(rows)),
    },
  };
}

describe('the in-process quota store when its ledger store is away at start', () => {
  it('decides from memory, writes nothing over the stored ledgers, refuses a top-up, and adds the stored ledgers once they can be read', async () => {
    const sqlite = new SqliteStore(':memory:');
    const now = Date.now();
    const periodId = periodWindow('monthly', now).id;
    const day = periodWindow('daily', now).id;
    // What an earlier run of the gateway stored: 100 spent this month (30 of them today), 50 bought credits left.
    const stored = [
      { account: 'acct', day, daySpent: 30, month: periodId, monthSpent: 100, topup: 50 },
      { account: 'other', day, daySpent: 7, month: periodId, monthSpent: 7, topup: 0 },
    ];
    await sqlite.saveLedgers(stored);
    const { store, away } = faulty(sqlite);
    const quota = new MemoryQuotaStore(store);
    await quota.start(); // resolves though nothing could be read
    expect(quota.loaded).toBe(false);

    const q = { account: 'acct', rps: 100, credits: 1_000, period: 'monthly' as const, cost: 10, nowMs: now };
    const d = quota.decide(q);
    expect(d).toMatchObject({ outcome: 'ok', billed: 10 });
    await expect(quota.topUp('acct', 5)).rejects.toThrow(/ledger store is away/);
    await quota.flush(); // writes nothing: the stored rows are not known yet
    expect(await sqlite.loadLedgers()).toEqual(stored);

    away.on = false;
    await until(() => quota.loaded, 'the stored ledgers to be read on a later tick');
    expect(await quota.balance('acct', 'monthly', now)).toEqual({ spent: 110, topup: 50, periodId });
    expect(await quota.balance('acct', 'daily', now)).toEqual({ spent: 40, topup: 50, periodId: day });
    expect(await quota.balance('other', 'monthly', now)).toEqual({ spent: 7, topup: 0, periodId });
    expect(await quota.topUp('acct', 5)).toBe(55);
    await quota.close();
    expect(await sqlite.loadLedgers()).toEqual([
      { account: 'acct', day, daySpent: 40, month: periodId, monthSpent: 110, topup: 55 },
      stored[1],
    ]);
    await sqlite.close();
  });
});

describe('a gateway whose PostgreSQL is away at start and comes back', () => {
  let explorer: FixtureExplorer;
  const schemas = testSchemas('outage');
  beforeAll(async () => {
    explorer = await startFixtureExplorer();
  });
  afterAll(async () => {
    await explorer.close();
    await schemas.dropAll();
  });

  it('serves its configured key meanwhile, says so on /readyz and /metrics, answers admin writes 503, then writes the usage and ledgers it kept', async () => {
    const pg = new URL(POSTGRES_URL);
    const proxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
    await proxy.cut();
    const through = new URL(POSTGRES_URL);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    const schema = schemas.fresh();
    const gw = await startGateway(
      makeConfig([explorer.url], {
        storage: { url: through.toString(), schema },
        plans: { free: { rps: 1000, credits: 1_000, period: 'monthly' } },
        costs: { default: 3, routes: {} },
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
      }),
    );
    const admin = adminClient(() => gw.app.gateway.adminUrl()!);
    try {
      const path = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
      for (let i = 0; i < 4; i++) expect((await gw.get(path)).status).toBe(200);
      const readyz = await gw.ops('/readyz');
      const ready = (await readyz.json()) as { status: string; storage: unknown };
      expect([readyz.status, ready.status, ready.storage]).toEqual([200, 'ready', { backend: 'postgres', status: 'down' }]);
      const metrics = await (await gw.ops('/metrics')).text();
      expect(metrics).toMatch(/^egw_storage_up 0$/m);
      await gw.app.gateway.state().usage?.flush();
      expect(Number(/^egw_usage_rows_waiting (\d+)$/m.exec(await (await gw.ops('/metrics')).text())?.[1])).toBe(1);
      // An operator's write while the store is away: 503 with Retry-After, something to retry, not a 500.
      const refused = await fetch(`${gw.app.gateway.adminUrl()!}/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'while-away', plan: 'free' }),
      });
      expect([refused.status, refused.headers.get('retry-after'), ((await refused.json()) as { message: string }).message]).toEqual([
        503,
        '5',
        'The store is not answering; try again (a GET shows whether the change was made)',
      ]);

      await proxy.restore();
      await until(async () => {
        const r = (await (await gw.ops('/readyz')).json()) as { storage: { status: string } };
        return r.storage.status === 'ok';
      }, 'the store to answer again (pinged every 5 s)');
      expect((await gw.get(path)).status).toBe(200);
      await gw.app.gateway.state().usage?.flush();
      expect((await admin.post('/keys', { name: 'after', plan: 'free' })).status).toBe(201);

      const reader = new PostgresStore(POSTGRES_URL, { schema, ledgers: true });
      try {
        const day = utcDay(Date.now());
        await until(async () => (await reader.listUsage({ from: day, to: day })).length > 0, 'the usage rows to be written');
        const rows = await reader.listUsage({ from: day, to: day });
        expect(rows.map((r) => [r.keyId, r.requests, r.credits])).toEqual([[expect.any(String), 5, 15]]);
        // The ledger of what was spent while the store was away reaches it on a later tick.
        const account = hashKey(DEMO_KEY);
        await until(
          async () => (await reader.loadLedgers()).some((l) => l.account === reader.sealAccount(account) && l.monthSpent === 15),
          'the ledger to be written',
        );
      } finally {
        await reader.close();
      }
    } finally {
      await gw.close();
      await proxy.close();
    }
  }, 30_000);
});
