// The in-process quota store joined to the usage recorder (quota/memory.ts, usage/recorder.ts)
// writes the changed ledgers and the usage batches in one transaction (LedgerStore
// .saveLedgersAndUsage, store/types.ts), on SQLite and on PostgreSQL: a write that fails half-way
// leaves neither written, and the next write writes both; a write whose outcome is unknown (it
// committed, its answer was lost) is sent again and counts once. Credits are counted in usage when
// they are billed, and a refund takes them off both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryQuotaStore, type LedgerPersistence } from '../../src/quota/memory.js';
import type { QuotaQuery } from '../../src/quota/types.js';
import { utcDay } from '../../src/store/day.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { withOutcomeUnknown, type LedgerRow, type LedgerStore, type UsageBatch, type UsageStore } from '../../src/store/types.js';
import { UsageRecorder } from '../../src/usage/recorder.js';
import { POSTGRES_URL, testSchemas } from '../support/postgres.js';

const dirs: string[] = [];
const schemas = testSchemas('usage_ledger_write');
afterAll(async () => {
  await schemas.dropAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
// The quota store's once-a-second write would take the faults meant for the writes below.
beforeEach(() => void vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] }));
afterEach(() => void vi.useRealTimers());

type Store = Required<LedgerStore> & UsageStore & { close(): Promise<void> };

/**
 * Each store's write that fails late in its transaction, after part of it ran: SQLite writes the
 * ledgers first, so a usage row it refuses (STRICT: credits 1.5 is no INTEGER) comes last;
 * PostgreSQL writes the usage batches first, so a ledger row it refuses (1.5 is no bigint) comes last.
 */
const BACKENDS: { name: string; open: () => Store; poison: (rows: LedgerRow[], batches: UsageBatch[]) => void }[] = [
  {
    name: 'SQLite',
    open: () => {
      const dir = mkdtempSync(join(tmpdir(), 'egw-usage-ledger-'));
      dirs.push(dir);
      return new SqliteStore(join(dir, 'gateway.db'));
    },
    poison: (_rows, batches) =>
      batches.push({
        id: 'poison',
        rows: [
          {
            day: '2026-11-26',
            keyId: 'x',
            account: '',
            chain: '1',
            route: 'x',
            requests: 1,
            credits: 1.5,
            cacheHits: 0,
            refused: 0,
            rateLimited: 0,
            outOfCredits: 0,
            forbidden: 0,
            clientErrors: 0,
            errors: 0,
          },
        ],
      }),
  },
  {
    name: 'PostgreSQL',
    open: () => new PostgresStore(POSTGRES_URL, { schema: schemas.fresh(), ledgers: true }),
    poison: (rows) => rows.push({ account: 'poison', day: 'd20261126', daySpent: 1.5, month: 'm202611', monthSpent: 1.5, topup: 0 }),
  },
];

const silent = { warn: () => undefined };

describe.each(BACKENDS)('ledgers and usage written in one transaction: $name', ({ open, poison }) => {
  it('a write that fails half-way writes neither; the next writes both; one whose answer was lost counts once', async () => {
    const store = open();
    const faults: ('poison' | 'lost')[] = [];
    const sent: string[][] = [];
    const persistence: LedgerPersistence = {
      loadLedgers: () => store.loadLedgers(),
      saveLedgers: (rows) => store.saveLedgers(rows),
      saveLedgersAndUsage: async (rows, batches) => {
        sent.push(batches.map((b) => b.id));
        const fault = faults.shift();
        const r = [...rows];
        const b = [...batches];
        if (fault === 'poison') poison(r, b);
        await store.saveLedgersAndUsage(r, b);
        if (fault === 'lost') throw withOutcomeUnknown(new Error('Connection terminated unexpectedly'));
      },
      ...(store instanceof SqliteStore ? { sealAccount: (a: string) => store.sealAccount(a) } : {}),
    };
    const quota = new MemoryQuotaStore(persistence);
    const recorder = new UsageRecorder(() => Promise.reject(new Error('joined: never written alone')), silent, Date.now);
    expect(quota.joinUsage(recorder)).toBe(true);
    await quota.start();

    const now = Date.now();
    const day = utcDay(now);
    const q = (): QuotaQuery => ({
      account: 'acct',
      rps: 1_000,
      credits: 1_000_000,
      period: 'monthly',
      cost: 20,
      nowMs: now,
      keyId: 'key_a',
      chain: '1',
      route: 'stats',
    });
    const request = (status: number) => {
      const d = quota.decide(q());
      expect(d.billed).toBe(20);
      if (status >= 500) {
        void quota.refund({
          account: 'acct',
          periodId: d.periodId,
          amount: 20,
          fromTopup: 0,
          usage: { nowMs: now, keyId: 'key_a', account: '', chain: '1', route: 'stats' },
        });
      }
      recorder.record(now, 'key_a', '', '1', 'stats', status, status >= 500 ? 0 : 20, false);
    };
    const spent = async () => {
      const reader = new MemoryQuotaStore(persistence);
      await reader.start();
      return (await reader.balance('acct', 'monthly', now)).spent;
    };
    const usage = async () => (await store.listUsage({ from: day, to: day })).map((r) => [r.requests, r.credits, r.errors]);

    // Credits counted at the decision: in memory, before any request ended.
    for (let i = 0; i < 9; i++) request(200);
    request(502);
    faults.push('poison');
    await expect(quota.flush()).rejects.toThrow();
    expect(await spent()).toBe(0);
    expect(await usage()).toEqual([]);
    expect(recorder.waitingRows).toBe(1);

    // The next write: both, and the batch under a new id (the failed one wrote nothing).
    faults.push('lost');
    await expect(quota.flush()).rejects.toThrow('Connection terminated');
    expect(await spent()).toBe(9 * 20);
    expect(await usage()).toEqual([[10, 9 * 20, 1]]);

    // Its answer was lost: sent again under its id (added once), with what came since.
    for (let i = 0; i < 5; i++) request(200);
    await quota.flush();
    expect(sent[2]).toEqual([sent[1]![0], expect.any(String)]);
    expect(sent[2]![1]).not.toBe(sent[1]![0]);
    expect(await spent()).toBe(14 * 20);
    expect(await usage()).toEqual([[15, 14 * 20, 1]]);
    expect(recorder.waitingRows).toBe(0);

    // A refund after its batch was written takes the credits off both in the next write.
    const d = quota.decide(q());
    recorder.record(now, 'key_a', '', '1', 'stats', 200, 20, false);
    await quota.flush();
    void quota.refund({
      account: 'acct',
      periodId: d.periodId,
      amount: 20,
      fromTopup: 0,
      usage: { nowMs: now, keyId: 'key_a', account: '', chain: '1', route: 'stats' },
    });
    await quota.close();
    expect(await spent()).toBe(14 * 20);
    expect(await usage()).toEqual([[16, 14 * 20, 1]]);
    await store.close();
  });
});
