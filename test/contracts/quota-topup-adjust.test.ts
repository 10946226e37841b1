// Corrections of bought credits (issue 25, item 4: "a negative adjustment with a reason, and 'set
// the bought balance to N', each audited; never below zero"), as the quota stores take them:
// adjustTopUp and setTopUp, one contract for the in-process store (alone, and with its ledgers in
// a real SQLite file) and the Redis store (a real redis-server, with and without leases, and a real
// three-node Redis Cluster), then what each store adds: the in-process store's durability (a
// reopen, a write that fails) and the Redis store's leases, whose bought credits a correction
// never takes away.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from 'ioredis';
import type { Redis } from 'ioredis';
import { MemoryQuotaStore, type LedgerPersistence } from '../../src/quota/memory.js';
import { periodWindow } from '../../src/quota/period.js';
import { RedisQuotaStore } from '../../src/quota/redis.js';
import { TopUpBelowZero, type QuotaQuery, type QuotaStore } from '../../src/quota/types.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { LedgerRow } from '../../src/store/types.js';
import { connect, deletePrefix, testPrefix } from '../support/redis.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { until } from '../support/wait.js';

const DAY_MS = 86_400_000;
/** Noon UTC today: every decision and every store clock of this file reads it (no window or period ends here). */
const noon = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS / 2;

let n = 0;
/** A fresh account per test. */
const account = () => `${'c'.repeat(56)}${(n++).toString(16).padStart(8, '0')}`;

let redis: Redis;
let cluster: TestCluster;
let clusterClient: Cluster;
let dir = '';
const prefix = testPrefix('quota-topup-adjust');
beforeAll(async () => {
  redis = connect();
  dir = mkdtempSync(join(tmpdir(), 'egw-topup-adjust-'));
  cluster = await startCluster();
  clusterClient = new Cluster(cluster.urls);
}, 30_000);
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  clusterClient?.disconnect();
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let files = 0;
const freshFile = (): string => {
  const d = join(dir, `case-${++files}`);
  mkdirSync(d);
  return join(d, 'store.db');
};

/** What each test opened, closed after it. */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The store's `adjustTopUp` and `setTopUp`: both stores have them (optional in QuotaStore only for test doubles). */
const adjust = (store: QuotaStore, a: string, delta: number) => store.adjustTopUp(a, delta);
const set = (store: QuotaStore, a: string, value: number) => store.setTopUp(a, value);

/** A plan with no allowance: every credit a decision takes is a bought one. */
const query = (a: string, cost: number, over: Partial<QuotaQuery> = {}): QuotaQuery => ({
  account: a,
  rps: 100_000,
  credits: 0,
  period: 'daily',
  cost,
  nowMs: noon,
  ...over,
});
const decide = async (store: QuotaStore, a: string, cost: number) => store.decide(query(a, cost));
const bought = async (store: QuotaStore, a: string) => (await store.balance(a, 'daily', noon)).topup;

/** Opens a SQLite file and an in-process store on its ledgers, as the gateway does without Redis (started). */
async function openSqlite(file: string): Promise<{ quota: MemoryQuotaStore; sqlite: SqliteStore }> {
  const sqlite = new SqliteStore(file);
  const quota = new MemoryQuotaStore(sqlite);
  await quota.start();
  closers.push(async () => {
    await quota.close().catch(() => undefined);
    await sqlite.close();
  });
  return { quota, sqlite };
}

const redisStore = (client: Redis | Cluster, leases: boolean): QuotaStore => {
  const store = new RedisQuotaStore(client, prefix, { leases, now: () => noon });
  closers.push(() => store.close());
  return store;
};

const implementations: [string, () => Promise<QuotaStore>][] = [
  ['memory', () => Promise.resolve(new MemoryQuotaStore())],
  ['memory with SQLite ledgers', async () => (await openSqlite(freshFile())).quota],
  ['redis', () => Promise.resolve(redisStore(redis, false))],
  ['redis with leases', () => Promise.resolve(redisStore(redis, true))],
  // The script's keys (bought credits, the reservations of each period) share the account's hash
  // tag: one slot, no CROSSSLOT.
  ['redis cluster with leases', () => Promise.resolve(redisStore(clusterClient, true))],
];

/** The refusal a promise rejects with, checked to be a TopUpBelowZero. */
async function refusal(p: Promise<unknown>): Promise<TopUpBelowZero> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TopUpBelowZero);
  return err as TopUpBelowZero;
}

describe.each(implementations)('corrections of bought credits: %s', (_name, make) => {
  it('adds, then takes away with a negative adjustment; decisions spend what is left', async () => {
    const store = await make();
    const a = account();
    expect(await adjust(store, a, 50)).toEqual({ before: 0, after: 50 });
    expect(await adjust(store, a, -20)).toEqual({ before: 50, after: 30 });
    expect(await bought(store, a)).toBe(30);
    expect(await decide(store, a, 31)).toMatchObject({ outcome: 'out_of_credits', credits: 30 });
    expect(await decide(store, a, 30)).toMatchObject({ outcome: 'ok', fromTopup: 30, credits: 0 });
    // topUp still adds, and answers what is left.
    expect(await store.topUp(a, 7)).toBe(7);
    expect(await bought(store, a)).toBe(7);
  });

  it('refuses a change below zero, changes nothing, and says how much is left', async () => {
    const store = await make();
    const a = account();
    // An account with nothing bought.
    expect(await refusal(adjust(store, a, -1))).toMatchObject({ available: 0, delta: -1 });
    expect(await bought(store, a)).toBe(0);
    await adjust(store, a, 10);
    const refused = await refusal(adjust(store, a, -11));
    expect(refused.available).toBe(10);
    expect(refused.message).toMatch(/below zero/);
    expect(await bought(store, a)).toBe(10);
    // All ten are still there to spend, and exactly to zero is allowed.
    expect(await adjust(store, a, -10)).toEqual({ before: 10, after: 0 });
    expect(await refusal(adjust(store, a, -1))).toMatchObject({ available: 0 });
    await adjust(store, a, 10);
    expect(await decide(store, a, 10)).toMatchObject({ outcome: 'ok', credits: 0 });
  });

  it('refuses amounts that are not whole credits, and a value below zero', async () => {
    const store = await make();
    const a = account();
    await expect(adjust(store, a, 1.5)).rejects.toThrow(RangeError);
    await expect(set(store, a, -1)).rejects.toThrow(RangeError);
    await expect(set(store, a, Number.NaN)).rejects.toThrow(RangeError);
    expect(await bought(store, a)).toBe(0);
  });

  it('sets the bought balance to N: up, down, and to 0', async () => {
    const store = await make();
    const a = account();
    expect(await set(store, a, 40)).toEqual({ before: 0, after: 40 });
    expect(await set(store, a, 100)).toEqual({ before: 40, after: 100 });
    expect(await bought(store, a)).toBe(100);
    expect(await set(store, a, 25)).toEqual({ before: 100, after: 25 });
    expect(await bought(store, a)).toBe(25);
    expect(await set(store, a, 25)).toEqual({ before: 25, after: 25 });
    expect(await set(store, a, 0)).toEqual({ before: 25, after: 0 });
    expect(await bought(store, a)).toBe(0);
    expect(await decide(store, a, 1)).toMatchObject({ outcome: 'out_of_credits', credits: 0 });
  });

  it('decisions after a set spend the new balance, the period allowance first', async () => {
    const store = await make();
    const a = account();
    const plan = (cost: number) => query(a, cost, { credits: 100 });
    await store.topUp(a, 1_000);
    // Many decisions in a row (with leases, a lease takes some of the bought credits), then a set.
    for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 40 }, async () => store.decide(plan(5))));
    // 600 spent: the allowance's 100, then 500 of the 1,000 bought.
    expect(await set(store, a, 12)).toEqual({ before: 500, after: 12 });
    expect(await store.decide(plan(13))).toMatchObject({ outcome: 'out_of_credits', credits: 12 });
    expect(await store.decide(plan(12))).toMatchObject({ outcome: 'ok', fromTopup: 12, credits: 0 });
    expect(await store.balance(a, 'daily', noon)).toMatchObject({ spent: 100, topup: 0 });
  });

  it('concurrent adjustments: 50 of -1 on a balance of 30, exactly 30 taken and 20 refused', async () => {
    const store = await make();
    const a = account();
    await adjust(store, a, 30);
    const all = await Promise.allSettled(Array.from({ length: 50 }, async () => adjust(store, a, -1)));
    const taken = all.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = all.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(taken).toHaveLength(30);
    expect(refused).toHaveLength(20);
    for (const r of refused) expect(r).toMatchObject({ name: 'TopUpBelowZero', available: 0 });
    // Each from what the one before it left: no two read the same balance.
    expect(taken.map((t) => t.after).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    for (const t of taken) expect(t.before - t.after).toBe(1);
    expect(await bought(store, a)).toBe(0);
  });

  it('concurrent additions and sets are each applied whole', async () => {
    const store = await make();
    const a = account();
    await Promise.all(Array.from({ length: 40 }, async () => adjust(store, a, 3)));
    expect(await bought(store, a)).toBe(120);
    // Sets and additions together, in whatever order the store applies them: each a whole step
    // from what the one before it left (some order of the four chains from 120 to the balance).
    const ops = await Promise.all([set(store, a, 5), adjust(store, a, 2), set(store, a, 9), adjust(store, a, 1)]);
    expect([ops[0].after, ops[1].after - ops[1].before, ops[2].after, ops[3].after - ops[3].before]).toEqual([5, 2, 9, 1]);
    const final = await bought(store, a);
    const chains = (from: number, left: readonly { before: number; after: number }[]): boolean =>
      left.length === 0
        ? from === final
        : left.some(
            (o, i) =>
              o.before === from &&
              chains(
                o.after,
                left.filter((_, j) => j !== i),
              ),
          );
    expect(chains(120, ops)).toBe(true);
  });
});

/** A LedgerStore over a SQLite file whose next write the test holds, then lets through or fails. */
class GatedLedgers implements LedgerPersistence {
  private gate: { opened: Promise<Error | undefined>; open: (err?: Error) => void } | undefined;
  /** Writes held at the gate now. */
  held = 0;
  constructor(private readonly sqlite: SqliteStore) {}
  sealAccount(a: string): string {
    return this.sqlite.sealAccount(a);
  }
  loadLedgers(): Promise<LedgerRow[]> {
    return this.sqlite.loadLedgers();
  }
  /** Holds the next write until `open()` (written) or `open(err)` (refused with err, nothing written). */
  close(): (err?: Error) => void {
    let open!: (err?: Error) => void;
    const opened = new Promise<Error | undefined>((resolve) => (open = resolve));
    this.gate = { opened, open };
    return open;
  }
  async saveLedgers(rows: readonly LedgerRow[]): Promise<void> {
    const gate = this.gate;
    if (gate !== undefined) {
      this.gate = undefined;
      this.held++;
      const err = await gate.opened;
      this.held--;
      if (err !== undefined) throw err;
    }
    await this.sqlite.saveLedgers(rows);
  }
}

describe('the in-process store with its ledgers in SQLite', () => {
  it('bought credits set and adjusted survive a reopen of the ledger store', async () => {
    const file = freshFile();
    const a = account();
    {
      const { quota, sqlite } = await openSqlite(file);
      await adjust(quota, a, 70);
      await adjust(quota, a, -20);
      expect(quota.decide(query(a, 5))).toMatchObject({ outcome: 'ok', fromTopup: 5 });
      expect(await set(quota, a, 33)).toEqual({ before: 45, after: 33 });
      // Written before the answer: on the file already, before any flush or close.
      const stored = (await sqlite.loadLedgers()).find((r) => r.account === sqlite.sealAccount(a));
      expect(stored?.topup).toBe(33);
      await quota.close();
      await sqlite.close();
    }
    {
      const { quota, sqlite } = await openSqlite(file);
      expect(await bought(quota, a)).toBe(33);
      expect(await refusal(adjust(quota, a, -34))).toMatchObject({ available: 33 });
      expect(await adjust(quota, a, -33)).toEqual({ before: 33, after: 0 });
      await quota.close();
      await sqlite.close();
    }
    const { quota } = await openSqlite(file);
    expect(await bought(quota, a)).toBe(0);
    expect(await set(quota, a, 8)).toEqual({ before: 0, after: 8 });
  });

  /** A store on a gated SQLite file, not started: its first change loads the ledgers (no timer writes meanwhile). */
  function gated(file = freshFile()): { quota: MemoryQuotaStore; ledgers: GatedLedgers; sqlite: SqliteStore } {
    const sqlite = new SqliteStore(file);
    const ledgers = new GatedLedgers(sqlite);
    const quota = new MemoryQuotaStore(ledgers);
    closers.push(async () => {
      await quota.close().catch(() => undefined);
      await sqlite.close();
    });
    return { quota, ledgers, sqlite };
  }

  it('credits taken away are not spendable while the write is on its way, and come back exactly if it fails', async () => {
    const { quota, ledgers, sqlite } = gated();
    const a = account();
    await adjust(quota, a, 30);
    const open = ledgers.close();
    const taking = adjust(quota, a, -10);
    await until(() => ledgers.held === 1, 'the write to reach the gate');
    // 20 left while the write is held: a decision of 25 is refused, one of 5 spends 5 of them.
    expect(quota.decide(query(a, 25))).toMatchObject({ outcome: 'out_of_credits', credits: 20 });
    expect(quota.decide(query(a, 5))).toMatchObject({ outcome: 'ok', credits: 15 });
    open(new Error('disk full'));
    await expect(taking).rejects.toThrow('disk full');
    // The 10 given back, the 5 spent kept: 30 - 5.
    expect(await bought(quota, a)).toBe(25);
    await quota.flush();
    expect((await sqlite.loadLedgers()).find((r) => r.account === sqlite.sealAccount(a))?.topup).toBe(25);
  });

  it('credits added are spendable once written, and not at all if the write fails', async () => {
    const { quota, ledgers, sqlite } = gated();
    const a = account();
    await adjust(quota, a, 4);
    let open = ledgers.close();
    const adding = set(quota, a, 10);
    await until(() => ledgers.held === 1, 'the write to reach the gate');
    expect(quota.decide(query(a, 5))).toMatchObject({ outcome: 'out_of_credits', credits: 4 });
    expect(quota.decide(query(a, 1))).toMatchObject({ outcome: 'ok', credits: 3 });
    open();
    // Set at the moment of change (4, to 10), the decision after it spending from the 10.
    expect(await adding).toEqual({ before: 4, after: 10 });
    expect(await bought(quota, a)).toBe(9);
    open = ledgers.close();
    const failing = adjust(quota, a, 100);
    await until(() => ledgers.held === 1, 'the write to reach the gate');
    open(new Error('disk full'));
    await expect(failing).rejects.toThrow('disk full');
    expect(await bought(quota, a)).toBe(9);
    expect(quota.decide(query(a, 10))).toMatchObject({ outcome: 'out_of_credits', credits: 9 });
    await quota.flush();
    expect((await sqlite.loadLedgers()).find((r) => r.account === sqlite.sealAccount(a))?.topup).toBe(9);
  });
});

describe('the Redis store with leases', () => {
  const topupOf = async (a: string) => Number((await redis.get(`${prefix}{${a}}:topup`)) ?? 0);
  const reservations = `${prefix}{%}:leases:${periodWindow('daily', noon).id}`;
  /** Bought credits the account's live leases hold, as Redis keeps them. */
  const heldOf = async (a: string) =>
    Object.values(await redis.hgetall(reservations.replace('%', a))).reduce((sum, v) => sum + Number(v.split(':')[1]), 0);
  /** Decisions of one credit each, in bursts of 40 (one turn each): the process takes a lease. */
  async function burst(store: RedisQuotaStore, a: string, times: number): Promise<number> {
    let spent = 0;
    for (let i = 0; i < times; i++) {
      const all = await Promise.all(Array.from({ length: 40 }, async () => store.decide(query(a, 1))));
      spent += all.reduce((sum, d) => sum + d.billed, 0);
    }
    return spent;
  }

  it("never takes away the bought credits another process's lease holds", async () => {
    const a = account();
    const holder = new RedisQuotaStore(redis, prefix, { now: () => noon });
    const admin = new RedisQuotaStore(redis, prefix, { now: () => noon });
    closers.push(
      () => holder.close(),
      () => admin.close(),
    );
    await admin.topUp(a, 1_000);
    let spent = await burst(holder, a, 3);
    const held = await heldOf(a);
    expect(held).toBeGreaterThan(0);
    const billed = 1_000 - (await topupOf(a));
    // What no lease holds: the rest of what Redis keeps.
    const free = 1_000 - billed - held;
    expect(await refusal(admin.adjustTopUp(a, -(free + 1)))).toMatchObject({ available: free });
    expect(await topupOf(a)).toBe(1_000 - billed);
    // Set to 0: the credits the lease holds stay, to be billed or released when it is settled.
    expect(await admin.setTopUp(a, 0)).toEqual({ before: free, after: 0 });
    spent += await burst(holder, a, 1);
    await holder.close();
    // Billed what the lease spent of what it held, the rest released: never below zero.
    const left = await topupOf(a);
    expect(left).toBe(held - (spent - billed));
    expect(left).toBeGreaterThanOrEqual(0);
    expect(await admin.setTopUp(a, 0)).toEqual({ before: left, after: 0 });
    expect(await topupOf(a)).toBe(0);
  });

  it("a lease whose reservation lapsed holds nothing: a correction takes all, and the lease's late settlement bills nothing", async () => {
    const a = account();
    const holder = new RedisQuotaStore(redis, prefix, { now: () => noon });
    // The admin's clock a minute on: the holder's reservation is past its deadline.
    const admin = new RedisQuotaStore(redis, prefix, { now: () => noon + 60_000 });
    closers.push(
      () => holder.close(),
      () => admin.close(),
    );
    await admin.topUp(a, 1_000);
    await burst(holder, a, 2);
    expect(await heldOf(a)).toBeGreaterThan(0);
    const left = await topupOf(a);
    expect(await admin.adjustTopUp(a, -left)).toEqual({ before: left, after: 0 });
    expect(await heldOf(a)).toBe(0);
    await holder.close();
    expect(await topupOf(a)).toBe(0);
  });

  it("this process's own lease is settled first: a set is of every bought credit left", async () => {
    const a = account();
    const store = new RedisQuotaStore(redis, prefix, { now: () => noon });
    closers.push(() => store.close());
    await store.topUp(a, 1_000);
    const spent = await burst(store, a, 3);
    expect(await heldOf(a)).toBeGreaterThan(0);
    expect(await store.adjustTopUp(a, -100)).toEqual({ before: 1_000 - spent, after: 900 - spent });
    expect(await heldOf(a)).toBe(0);
    expect(await topupOf(a)).toBe(900 - spent);
  });

  it("other processes' leases are recalled first, where the recall channel is set up", async () => {
    const a = account();
    const subscriber = () => redis.duplicate();
    const holder = new RedisQuotaStore(redis, prefix, { now: () => noon, subscriber });
    const admin = new RedisQuotaStore(redis, prefix, { now: () => noon, subscriber });
    closers.push(
      () => holder.close(),
      () => admin.close(),
    );
    await admin.topUp(a, 1_000);
    // A process takes leases once it hears recalls (subscribed from its start).
    expect(await holder.hearsRecalls()).toBe(true);
    const spent = await burst(holder, a, 3);
    expect(await heldOf(a)).toBeGreaterThan(0);
    const channel = `${prefix}quota:recall`;
    await until(async () => ((await redis.pubsub('NUMSUB', channel)) as [string, number])[1] >= 1, 'the holder to listen');
    expect(await admin.setTopUp(a, 10)).toEqual({ before: 1_000 - spent, after: 10 });
    expect(await heldOf(a)).toBe(0);
    // Held from leases for a while: its next decisions are decided in Redis, from the 10.
    expect(await burst(holder, a, 1)).toBe(10);
    await holder.close();
    expect(await topupOf(a)).toBe(0);
  });
});
