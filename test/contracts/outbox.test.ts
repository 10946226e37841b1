// The webhook outbox's contract (src/store/outbox.ts), one suite run against every backend: memory,
// SQLite (a file under the system's temporary directory), Redis, a three-node Redis Cluster
// (where every script's keys must share a slot) and PostgreSQL. Where a backend is shared by
// processes (Redis, PostgreSQL), `another()` is a second store with its own connection on the same
// data; on SQLite, a second connection to the same file. Then each SQL backend's migration from
// the schema version before the outbox's.
//
// Every instant is Date.now() moved by an offset; nothing sleeps: a lease "ends" by claiming with
// a later `now`.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Cluster, type Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/memory.js';
import type { Delivery, DeliveryQuery, NewDelivery, OutboxStore } from '../../src/store/outbox.js';
import { POSTGRES_SCHEMA_VERSION, PostgresStore } from '../../src/store/postgres.js';
import { RedisStore } from '../../src/store/redis.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../../src/store/sqlite.js';
import { postgresBackend } from './postgres-backend.js';
import { POSTGRES_URL, quoted, testSchemas, withClient } from '../support/postgres.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { connect, deletePrefix, testPrefix } from '../support/redis.js';

const LEASE = 60_000;
let serial = 0;

/** A delivery created `ago` ms before `base`, with a fresh id unless given. */
function delivery(base: number, over: Partial<NewDelivery> = {}, ago = 0): NewDelivery {
  const n = serial++;
  const eventId = over.eventId ?? `credits.threshold:acc_${n}:m202611:80`;
  const webhook = over.webhook ?? 'wh_main';
  return {
    id: `${eventId}|${webhook}`,
    eventId,
    type: 'credits.threshold',
    webhook,
    keyId: 'key_0123456789abcdef',
    // Characters a Redis argument, a Lua string and a SQL text must all keep as they are.
    body: JSON.stringify({ id: eventId, type: 'credits.threshold', data: { note: 'a|b {x} %25 é 😀 "q"', n } }),
    createdAt: base - ago,
    ...over,
  };
}

/** What enqueue stores of a new delivery. */
const stored = (d: NewDelivery): Delivery => ({
  ...d,
  status: 'pending',
  attempts: 0,
  nextAttemptAt: d.createdAt,
  lastAttemptAt: 0,
  lastStatus: 0,
  lastError: '',
  deliveredAt: 0,
});

/** Newest first: createdAt, then id, both descending (ids of these tests are ASCII: `<` is byte order). */
const newestFirst = (a: Delivery, b: Delivery) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** Every page of a query, following the cursors. */
async function allPages(outbox: OutboxStore, query: DeliveryQuery): Promise<{ pages: Delivery[][]; cursors: (string | null)[] }> {
  const pages: Delivery[][] = [];
  const cursors: (string | null)[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await outbox.listDeliveries({ ...query, cursor });
    pages.push(page.deliveries);
    cursors.push(page.nextCursor);
    if (page.nextCursor === null) return { pages, cursors };
    cursor = page.nextCursor;
    if (pages.length > 100) throw new Error('more than 100 pages');
  }
}

// --- backends ---

interface World {
  outbox: OutboxStore;
  /** The outbox of another process on the same data: its own connection (SQLite: its own connection to the file). */
  another(): OutboxStore;
}

interface Backend {
  name: string;
  /** Whether `another()` has its own connection, so that claims of two stores run at once in the backend. */
  shared: boolean;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  world(): World;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function memoryBackend(): Backend {
  return {
    name: 'memory',
    shared: false,
    setup: () => Promise.resolve(),
    teardown: () => Promise.resolve(),
    world() {
      const store = new MemoryStore();
      // One process's memory: another process has its own, so the same store stands for it.
      return { outbox: store.outbox, another: () => store.outbox };
    },
  };
}

function sqliteBackend(): Backend & { dir(): string } {
  let dir = '';
  let n = 0;
  return {
    name: 'sqlite',
    shared: true,
    dir: () => dir,
    setup() {
      dir = mkdtempSync(join(tmpdir(), 'egw-outbox-'));
      return Promise.resolve();
    },
    teardown() {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
    world() {
      const file = join(dir, `w${n++}`, 'store.db');
      const open = () => {
        const s = new SqliteStore(file);
        cleanups.push(() => s.close());
        return s.outbox;
      };
      return { outbox: open(), another: open };
    },
  };
}

function redisBackend(): Backend {
  let client: Redis;
  const suite = testPrefix('outbox');
  let n = 0;
  return {
    name: 'redis',
    shared: true,
    setup() {
      client = connect();
      return Promise.resolve();
    },
    async teardown() {
      await deletePrefix(client, suite);
      client.disconnect();
    },
    world() {
      const prefix = `${suite}${n++}:`;
      const store = new RedisStore(client, prefix, () => client.duplicate());
      cleanups.push(() => store.close());
      return {
        outbox: store.outbox,
        another() {
          const own = connect();
          const s = new RedisStore(own, prefix, () => own.duplicate());
          cleanups.push(async () => {
            await s.close();
            own.disconnect();
          });
          return s.outbox;
        },
      };
    },
  };
}

function clusterBackend(): Backend {
  let cluster: TestCluster;
  let client: Cluster;
  let n = 0;
  return {
    name: 'redis cluster',
    shared: true,
    async setup() {
      cluster = await startCluster();
      client = new Cluster(cluster.urls);
    },
    async teardown() {
      client?.disconnect();
      await cluster?.stop();
    },
    world() {
      const prefix = testPrefix(`outbox-cluster-${n++}`);
      const store = new RedisStore(client, prefix, () => client.duplicate());
      cleanups.push(() => store.close());
      return {
        outbox: store.outbox,
        another() {
          const own = new Cluster(cluster.urls);
          const s = new RedisStore(own, prefix, () => own.duplicate());
          cleanups.push(async () => {
            await s.close();
            own.disconnect();
          });
          return s.outbox;
        },
      };
    },
  };
}

function postgres(): Backend {
  const backend = postgresBackend();
  return {
    name: 'postgres',
    shared: true,
    setup: () => backend.setup(),
    teardown: () => backend.teardown(),
    world() {
      // Its stores are closed, and its schema dropped, when the next world is made and at teardown.
      const w = backend.world();
      return { outbox: w.store.outbox, another: () => w.another().outbox };
    },
  };
}

const sqlite = sqliteBackend();
const backends: Backend[] = [memoryBackend(), sqlite, redisBackend(), clusterBackend(), postgres()];
beforeAll(() => Promise.all(backends.map((b) => b.setup())), 30_000);
afterAll(() => Promise.all(backends.map((b) => b.teardown())));

// --- the contract ---

describe.each(backends)('outbox contract: $name', (backend) => {
  it('enqueue stores each new id once, as pending and due at its creation, and reports only the ids it stored', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    const a = delivery(now, {}, 3_000);
    const b = delivery(now, { keyId: '', type: 'key.created' }, 2_000);
    expect(await outbox.enqueue([a, b])).toEqual([a.id, b.id]);
    expect(await outbox.getDelivery(a.id)).toEqual(stored(a));
    expect(await outbox.getDelivery(b.id)).toEqual(stored(b));
    expect(await outbox.getDelivery('evt|nobody')).toBeUndefined();

    // The same id again (another process saw the same threshold crossed): nothing stored, not reported.
    const c = delivery(now, {}, 1_000);
    const again = { ...a, body: '{"other":true}', createdAt: now };
    expect(await outbox.enqueue([again, c, { ...c, body: '{}' }])).toEqual([c.id]);
    expect(await outbox.getDelivery(a.id)).toEqual(stored(a));
    expect(await outbox.getDelivery(c.id)).toEqual(stored(c));
    expect(await outbox.enqueue([])).toEqual([]);

    // Even once delivered, an id stored is left as it is.
    const [claimed] = await outbox.claim(now, LEASE, 1);
    expect(claimed?.id).toBe(a.id);
    expect(await outbox.settle(a.id, 1, { status: 'delivered', at: now + 10, lastStatus: 204, lastError: '' })).toBe(true);
    expect(await outbox.enqueue([a])).toEqual([]);
    expect(await outbox.getDelivery(a.id)).toMatchObject({ status: 'delivered', attempts: 1, deliveredAt: now + 10, body: a.body });
  });

  it('two processes enqueueing the same deliveries at once store each once, and each id is reported by exactly one', async () => {
    const world = backend.world();
    const outboxes = [world.outbox, world.another(), world.another()];
    const now = Date.now();
    const batch = Array.from({ length: 30 }, (_, i) => delivery(now, {}, i));
    const reported = await Promise.all(outboxes.map((o) => o.enqueue(batch)));
    expect(reported.flat().sort()).toEqual(batch.map((d) => d.id).sort());
    for (const d of batch) expect(await outboxes[2]!.getDelivery(d.id)).toEqual(stored(d));
  });

  it('claims the due deliveries only, oldest nextAttemptAt first, each with one more attempt and leased until now + leaseMs', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    const later = delivery(now, {}, -10);
    const old = delivery(now, {}, 20);
    const older = delivery(now, {}, 30);
    const alsoOld = delivery(now, {}, 20);
    await outbox.enqueue([later, old, older, alsoOld]);
    const claimed = await outbox.claim(now, LEASE, 2);
    // Oldest first; of one nextAttemptAt, the smaller id first.
    const sameAge = [old, alsoOld].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(claimed).toEqual([older, sameAge[0]!].map((d) => ({ ...stored(d), attempts: 1, nextAttemptAt: now + LEASE })));
    expect(await outbox.getDelivery(older.id)).toEqual({ ...stored(older), attempts: 1, nextAttemptAt: now + LEASE });
    expect((await outbox.claim(now, LEASE, 10)).map((d) => d.id)).toEqual([sameAge[1]!.id]);
    // Not due before its creation.
    expect(await outbox.claim(now, LEASE, 10)).toEqual([]);
    expect((await outbox.claim(now + 10, LEASE, 10)).map((d) => d.id)).toEqual([later.id]);
  });

  it('50 deliveries and several claimers at once: every delivery claimed exactly once until its lease ends', async () => {
    const world = backend.world();
    const claimers = backend.shared
      ? [world.outbox, world.another(), world.another(), world.another()]
      : [world.outbox, world.outbox, world.outbox, world.outbox];
    const now = Date.now();
    const all = Array.from({ length: 50 }, (_, i) => delivery(now, { webhook: `wh_${i % 3}` }, 1_000 - i));
    expect(await world.outbox.enqueue(all)).toHaveLength(50);
    // Each claimer connected (and, on PostgreSQL, past its migration check) first, so that their claims do run at once.
    for (const o of claimers) expect(await o.getDelivery(all[0]!.id)).toEqual(stored(all[0]!));
    const taken = await Promise.all(
      claimers.map(async (o, i) => {
        const mine: Delivery[] = [];
        for (;;) {
          // Small limits: every claimer goes after the same oldest deliveries, round after round.
          const got = await o.claim(now, LEASE, [1, 2, 3, 7][i]!);
          if (got.length === 0) return mine;
          mine.push(...got);
        }
      }),
    );
    const ids = taken.flat().map((d) => d.id);
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
    expect([...ids].sort()).toEqual(all.map((d) => d.id).sort());
    for (const d of taken.flat()) expect(d).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: now + LEASE });
    // All leased: nothing is due until the lease ends, whoever asks.
    for (const o of claimers) expect(await o.claim(now + LEASE - 1, LEASE, 100)).toEqual([]);
    // Then all again, at once, still each once, now at their second attempt.
    const again = await Promise.all(claimers.map((o) => o.claim(now + LEASE, LEASE, 20)));
    const second = again.flat();
    expect(new Set(second.map((d) => d.id)).size).toBe(second.length);
    expect(second.every((d) => d.attempts === 2)).toBe(true);
    expect(second.length).toBeGreaterThan(0);
  });

  it('a delivery whose lease ended is claimable again, with attempts 2; the stale attempt cannot settle it, the current one can', async () => {
    const world = backend.world();
    const other = world.another();
    const now = Date.now();
    const d = delivery(now, {}, 5);
    await world.outbox.enqueue([d]);
    const [first] = await world.outbox.claim(now, 1_000, 10);
    expect(first).toMatchObject({ id: d.id, attempts: 1, nextAttemptAt: now + 1_000 });
    expect(await other.claim(now + 999, 1_000, 10)).toEqual([]);
    const [second] = await other.claim(now + 1_000, 1_000, 10);
    expect(second).toEqual({ ...stored(d), attempts: 2, nextAttemptAt: now + 2_000 });

    // The first attempt, late: refused, nothing changed.
    expect(await world.outbox.settle(d.id, 1, { status: 'delivered', at: now + 1_500, lastStatus: 200, lastError: '' })).toBe(false);
    expect(await world.outbox.getDelivery(d.id)).toEqual(second);
    // The second: recorded.
    expect(await other.settle(d.id, 2, { status: 'delivered', at: now + 1_600, lastStatus: 200, lastError: '' })).toBe(true);
    const delivered = { ...second, status: 'delivered', lastAttemptAt: now + 1_600, lastStatus: 200, deliveredAt: now + 1_600 };
    expect(await world.outbox.getDelivery(d.id)).toEqual(delivered);
    // Settled once: no longer pending, so the same attempt settles nothing more.
    expect(await other.settle(d.id, 2, { status: 'failed', at: now + 1_700, lastStatus: 500, lastError: 'x' })).toBe(false);
    expect(await world.outbox.settle('evt|nobody', 1, { status: 'failed', at: now, lastStatus: 0, lastError: '' })).toBe(false);
    expect(await world.outbox.getDelivery(d.id)).toEqual(delivered);
  });

  it('settled pending with a nextAttemptAt, a delivery is not claimed before it; without one, it is due at once', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    const d = delivery(now, {}, 1);
    const e = delivery(now, {}, 0);
    await outbox.enqueue([d, e]);
    expect(await outbox.claim(now, LEASE, 10)).toHaveLength(2);
    const retry = { status: 'pending' as const, at: now + 20, nextAttemptAt: now + 5_000, lastStatus: 503, lastError: 'HTTP 503' };
    expect(await outbox.settle(d.id, 1, retry)).toBe(true);
    expect(await outbox.getDelivery(d.id)).toEqual({
      ...stored(d),
      attempts: 1,
      nextAttemptAt: now + 5_000,
      lastAttemptAt: now + 20,
      lastStatus: 503,
      lastError: 'HTTP 503',
    });
    expect(await outbox.settle(e.id, 1, { status: 'pending', at: now + 30, lastStatus: 0, lastError: 'connect ECONNREFUSED' })).toBe(true);
    expect(await outbox.getDelivery(e.id)).toMatchObject({ status: 'pending', nextAttemptAt: now + 30, lastStatus: 0 });
    // e is due at its settlement; d only at its nextAttemptAt (its lease, now + LEASE, no longer holds it).
    expect((await outbox.claim(now + 4_999, LEASE, 10)).map((x) => x.id)).toEqual([e.id]);
    const [next] = await outbox.claim(now + 5_000, LEASE, 10);
    expect(next).toMatchObject({ id: d.id, attempts: 2, nextAttemptAt: now + 5_000 + LEASE, lastError: 'HTTP 503' });
  });

  it('delivered and failed deliveries are never claimed, however late', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    const ok = delivery(now, {}, 2);
    const bad = delivery(now, {}, 1);
    const waiting = delivery(now, {}, 0);
    await outbox.enqueue([ok, bad, waiting]);
    expect(await outbox.claim(now, 1, 3)).toHaveLength(3);
    expect(await outbox.settle(ok.id, 1, { status: 'delivered', at: now, lastStatus: 200, lastError: '' })).toBe(true);
    expect(await outbox.settle(bad.id, 1, { status: 'failed', at: now, lastStatus: 410, lastError: 'gone' })).toBe(true);
    expect(await outbox.getDelivery(bad.id)).toMatchObject({ status: 'failed', lastStatus: 410, lastError: 'gone', deliveredAt: 0 });
    const much = now + 365 * 86_400_000;
    expect((await outbox.claim(much, LEASE, 1_000)).map((d) => d.id)).toEqual([waiting.id]);
    expect((await outbox.claim(much + LEASE, LEASE, 1_000)).map((d) => [d.id, d.attempts])).toEqual([[waiting.id, 3]]);
  });

  it('lists newest first, pages of 10 over 25 deliveries by cursor, and filters by webhook, status, key and type', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    // Three at each instant: the id orders deliveries of one createdAt.
    const all = Array.from({ length: 25 }, (_, i) =>
      delivery(
        now,
        {
          eventId: `evt_${String((i * 7) % 25).padStart(2, '0')}`,
          webhook: i % 2 === 0 ? 'wh_a' : 'wh_b',
          keyId: ['key_1', 'key_2', ''][i % 3]!,
          type: i % 5 === 0 ? 'key.created' : 'credits.threshold',
        },
        Math.floor(i / 3) * 1_000,
      ),
    );
    // Enqueued in an order that is neither theirs nor its reverse.
    await outbox.enqueue([...all.slice(13), ...all.slice(0, 13)]);
    const expected = all.map(stored).sort(newestFirst);

    const { pages, cursors } = await allPages(outbox, { limit: 10 });
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    expect(pages.flat()).toEqual(expected);
    expect(cursors[2]).toBeNull();
    expect(typeof cursors[0]).toBe('string');
    // A page that ends exactly at the last delivery has no next page.
    expect((await outbox.listDeliveries({ limit: 25 })).nextCursor).toBeNull();
    expect((await outbox.listDeliveries({ limit: 1_000 })).deliveries).toEqual(expected);

    // A delivery enqueued between two pages is newer than the cursor: the next page goes on where it was.
    await outbox.enqueue([delivery(now, { eventId: 'evt_new' }, -1)]);
    expect((await outbox.listDeliveries({ limit: 10, cursor: cursors[0]! })).deliveries).toEqual(expected.slice(10, 20));

    // Some settled, so that a status filter has something to tell apart.
    const claimed = await outbox.claim(now, LEASE, 1_000);
    for (const d of claimed.filter((_, i) => i % 4 === 1)) {
      await outbox.settle(d.id, d.attempts, { status: 'delivered', at: now + 1, lastStatus: 200, lastError: '' });
    }
    for (const d of claimed.filter((_, i) => i % 4 === 2)) {
      await outbox.settle(d.id, d.attempts, { status: 'failed', at: now + 2, lastStatus: 500, lastError: 'boom' });
    }
    const current = (await outbox.listDeliveries({ limit: 1_000 })).deliveries;
    expect(current.filter((d) => d.eventId !== 'evt_new').map((d) => d.id)).toEqual(expected.map((d) => d.id));
    const queries: Omit<DeliveryQuery, 'limit'>[] = [
      { webhook: 'wh_a' },
      { webhook: 'wh_b' },
      { status: 'pending' },
      { status: 'delivered' },
      { status: 'failed' },
      { keyId: 'key_2' },
      { keyId: '' },
      { type: 'key.created' },
      { webhook: 'wh_a', type: 'credits.threshold', keyId: 'key_1' },
      { webhook: 'wh_b', status: 'delivered' },
      { webhook: 'wh_nobody' },
    ];
    for (const q of queries) {
      const want = current.filter(
        (d) =>
          (q.webhook === undefined || d.webhook === q.webhook) &&
          (q.status === undefined || d.status === q.status) &&
          (q.keyId === undefined || d.keyId === q.keyId) &&
          (q.type === undefined || d.type === q.type),
      );
      const got = await allPages(outbox, { ...q, limit: 3 });
      expect(got.pages.flat(), JSON.stringify(q)).toEqual(want);
      expect(got.pages.length, JSON.stringify(q)).toBe(Math.max(1, Math.ceil(want.length / 3)));
    }
    expect(current.some((d) => d.status === 'delivered') && current.some((d) => d.status === 'failed')).toBe(true);
  });

  it('redeliver makes a failed or delivered delivery pending again, due at once, its attempts kept', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    const failed = delivery(now, {}, 2);
    const delivered = delivery(now, {}, 1);
    await outbox.enqueue([failed, delivered]);
    await outbox.claim(now, LEASE, 10);
    await outbox.settle(failed.id, 1, { status: 'failed', at: now + 1, lastStatus: 500, lastError: 'boom' });
    await outbox.settle(delivered.id, 1, { status: 'delivered', at: now + 2, lastStatus: 200, lastError: '' });

    expect(await outbox.redeliver(failed.id, now + 100)).toBe(true);
    expect(await outbox.getDelivery(failed.id)).toEqual({
      ...stored(failed),
      attempts: 1,
      nextAttemptAt: now + 100,
      lastAttemptAt: now + 1,
      lastStatus: 500,
      lastError: 'boom',
    });
    expect(await outbox.redeliver(delivered.id, now + 100)).toBe(true);
    expect(await outbox.redeliver('evt|nobody', now)).toBe(false);
    expect(await outbox.getDelivery('evt|nobody')).toBeUndefined();
    // Listed as pending now, under no other status.
    expect((await outbox.listDeliveries({ status: 'pending', limit: 10 })).deliveries.map((d) => d.id).sort()).toEqual(
      [failed.id, delivered.id].sort(),
    );
    expect((await outbox.listDeliveries({ status: 'failed', limit: 10 })).deliveries).toEqual([]);
    expect((await outbox.listDeliveries({ status: 'delivered', limit: 10 })).deliveries).toEqual([]);

    expect(await outbox.claim(now + 99, LEASE, 10)).toEqual([]);
    const again = await outbox.claim(now + 100, LEASE, 10);
    expect(again.map((d) => [d.id, d.attempts])).toEqual([
      [failed.id, 2],
      [delivered.id, 2],
    ]);
    expect(await outbox.settle(failed.id, 2, { status: 'delivered', at: now + 200, lastStatus: 200, lastError: '' })).toBe(true);
    expect(await outbox.getDelivery(failed.id)).toMatchObject({ status: 'delivered', deliveredAt: now + 200, attempts: 2 });
  });

  it('prune forgets the deliveries created before its bound, whatever their status, and nothing else', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    const ages = [4_000, 3_000, 2_000, 1_000, 0];
    const ds = ages.map((ago) => delivery(now, { keyId: 'key_prune' }, ago));
    await outbox.enqueue(ds);
    // The oldest delivered, the second oldest claimed (leased), the rest pending.
    await outbox.claim(now - 3_000, LEASE, 1);
    await outbox.settle(ds[0]!.id, 1, { status: 'delivered', at: now, lastStatus: 200, lastError: '' });
    await outbox.claim(now - 3_000, LEASE, 1);

    await outbox.pruneDeliveries(now - 2_000);
    expect(await outbox.getDelivery(ds[0]!.id)).toBeUndefined();
    expect(await outbox.getDelivery(ds[1]!.id)).toBeUndefined();
    expect(await outbox.getDelivery(ds[2]!.id)).toEqual(stored(ds[2]!));
    const listed = (await outbox.listDeliveries({ limit: 100 })).deliveries;
    expect(listed.map((d) => d.id)).toEqual([ds[4]!.id, ds[3]!.id, ds[2]!.id]);
    expect((await outbox.listDeliveries({ keyId: 'key_prune', limit: 100 })).deliveries).toEqual(listed);
    expect((await outbox.listDeliveries({ status: 'delivered', limit: 100 })).deliveries).toEqual([]);
    // A pruned pending delivery is never claimed, even after its lease.
    expect((await outbox.claim(now + 2 * LEASE, LEASE, 100)).map((d) => d.id)).toEqual([ds[2]!.id, ds[3]!.id, ds[4]!.id]);
    // Forgotten, an id is new again.
    expect(await outbox.enqueue([ds[0]!])).toEqual([ds[0]!.id]);
    await outbox.pruneDeliveries(0);
    await outbox.pruneDeliveries(now + 1);
    expect((await outbox.listDeliveries({ limit: 100 })).deliveries).toEqual([]);
    expect(await outbox.claim(now + 10 * LEASE, LEASE, 100)).toEqual([]);
  });

  it('refuses, with a RangeError and without writing, a value that would corrupt the store', async () => {
    const { outbox } = backend.world();
    const now = Date.now();
    const good = delivery(now);
    const bad: NewDelivery[] = [
      { ...good, createdAt: 1.5 },
      { ...good, createdAt: -1 },
      { ...good, createdAt: Number.NaN },
      { ...good, createdAt: 2 ** 53 },
      { ...good, id: '' },
      { ...good, body: 'a\0b' },
      { ...good, webhook: 'wh_\ud800' },
      { ...good, keyId: undefined as unknown as string },
    ];
    for (const d of bad) await expect(outbox.enqueue([delivery(now), d]), JSON.stringify(d)).rejects.toThrow(RangeError);
    expect((await outbox.listDeliveries({ limit: 100 })).deliveries).toEqual([]);
    await expect(outbox.claim(now, 0, 10)).rejects.toThrow(RangeError);
    await expect(outbox.claim(now, LEASE, 0)).rejects.toThrow(RangeError);
    await expect(outbox.claim(now, LEASE, 1_001)).rejects.toThrow(RangeError);
    await expect(outbox.claim(now + 0.5, LEASE, 1)).rejects.toThrow(RangeError);
    await expect(outbox.settle(good.id, 1, { status: 'bogus' as 'failed', at: now, lastStatus: 0, lastError: '' })).rejects.toThrow(
      RangeError,
    );
    await expect(
      outbox.settle(good.id, 1, { status: 'pending', at: now, nextAttemptAt: -5, lastStatus: 0, lastError: '' }),
    ).rejects.toThrow(RangeError);
    await expect(outbox.settle(good.id, 1, { status: 'failed', at: now, lastStatus: 0.5, lastError: '' })).rejects.toThrow(RangeError);
    await expect(outbox.listDeliveries({ limit: 0 })).rejects.toThrow(RangeError);
    await expect(outbox.listDeliveries({ limit: 1_001 })).rejects.toThrow(RangeError);
    await expect(outbox.listDeliveries({ limit: 10, cursor: 'not a cursor' })).rejects.toThrow(RangeError);
    await expect(outbox.listDeliveries({ limit: 10, cursor: Buffer.from('[1]').toString('base64url') })).rejects.toThrow(RangeError);
    await expect(outbox.listDeliveries({ limit: 10, status: 'gone' as 'failed' })).rejects.toThrow(RangeError);
    await expect(outbox.redeliver(good.id, -1)).rejects.toThrow(RangeError);
    await expect(outbox.pruneDeliveries(Number.NaN)).rejects.toThrow(RangeError);
    await expect(
      outbox.listDeliveries({ limit: 10, cursor: Buffer.from(JSON.stringify([1, 'a\0b'])).toString('base64url') }),
    ).rejects.toThrow(RangeError);
    // The store still works.
    expect(await outbox.enqueue([good])).toEqual([good.id]);
    // An id or a filter no delivery can have is looked up all the same, and not found.
    for (const id of ['', 'a\0b', 'x\udc00']) {
      expect(await outbox.getDelivery(id)).toBeUndefined();
      expect(await outbox.redeliver(id, now)).toBe(false);
      expect(await outbox.settle(id, 1, { status: 'failed', at: now, lastStatus: 0, lastError: '' })).toBe(false);
      if (id !== '')
        expect(await outbox.listDeliveries({ keyId: `${good.keyId}${id}`, limit: 10 })).toEqual({ deliveries: [], nextCursor: null });
    }
    expect((await outbox.listDeliveries({ webhook: good.webhook, limit: 10 })).deliveries).toEqual([stored(good)]);
  });
});

// --- what one backend promises beyond the contract ---

describe('PostgreSQL outbox: a claim in flight elsewhere', () => {
  const schemas = testSchemas('outbox_locks');
  afterAll(() => schemas.dropAll());

  it('a claim passes over a delivery another transaction is claiming (SKIP LOCKED), without waiting, and never takes it', async () => {
    const schema = schemas.fresh();
    const store = new PostgresStore(POSTGRES_URL, { schema });
    cleanups.push(() => store.close());
    const now = Date.now();
    const ds = [delivery(now, {}, 3), delivery(now, {}, 2), delivery(now, {}, 1)];
    await store.outbox.enqueue(ds);
    await withClient(async (c) => {
      // Another host's claim of the oldest, begun and not yet committed: its row is locked.
      await c.query('BEGIN');
      await c.query(`UPDATE ${quoted(schema)}.webhook_deliveries SET attempts = attempts + 1, next_attempt_at = $2 WHERE id = $1`, [
        ds[0]!.id,
        now + LEASE,
      ]);
      // Answered while that transaction holds its lock: a claim that waited for it would never resolve before the COMMIT below.
      const claimed = await store.outbox.claim(now, LEASE, 10);
      expect(claimed.map((d) => [d.id, d.attempts])).toEqual([
        [ds[1]!.id, 1],
        [ds[2]!.id, 1],
      ]);
      await c.query('COMMIT');
    });
    expect(await store.outbox.claim(now, LEASE, 10)).toEqual([]);
    expect(await store.outbox.getDelivery(ds[0]!.id)).toMatchObject({ attempts: 1, nextAttemptAt: now + LEASE });
  });
});

describe('SQLite outbox: the file deleted while open', () => {
  it('a write puts the file back at its path first, deliveries and all: a store reopened on it finds them', async () => {
    const file = join(sqlite.dir(), 'deleted', 'store.db');
    const store = new SqliteStore(file);
    cleanups.push(() => store.close());
    const now = Date.now();
    const a = delivery(now, {}, 2);
    const b = delivery(now, {}, 1);
    await store.outbox.enqueue([a, b]);
    rmSync(file);
    // A claim is a write: it puts the file back, then leases.
    expect((await store.outbox.claim(now, LEASE, 1)).map((d) => d.id)).toEqual([a.id]);
    expect(existsSync(file)).toBe(true);
    await store.close();
    const again = new SqliteStore(file);
    cleanups.push(() => again.close());
    expect(await again.outbox.getDelivery(a.id)).toEqual({ ...stored(a), attempts: 1, nextAttemptAt: now + LEASE });
    expect(await again.outbox.getDelivery(b.id)).toEqual(stored(b));
  });
});

// --- migrations ---

describe('SQLite outbox: migration', () => {
  it('brings a file of the version before the outbox to the current version, with the deliveries table, its other data kept', async () => {
    const file = join(sqlite.dir(), 'migrate-outbox', 'store.db');
    const first = new SqliteStore(file);
    await first.audit.appendAudit({ at: Date.now(), action: 'credits', actor: 'ops', keyId: 'key_kept', before: null, after: null });
    await first.close();
    // Back to the version before: the deliveries table (and its indexes with it) dropped.
    const db = new Database(file);
    db.exec('DROP TABLE webhook_deliveries');
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION - 1}`);
    db.close();

    const store = new SqliteStore(file);
    cleanups.push(() => store.close());
    const now = Date.now();
    const d = delivery(now);
    expect(await store.outbox.enqueue([d])).toEqual([d.id]);
    expect(await store.outbox.getDelivery(d.id)).toEqual(stored(d));
    expect((await store.audit.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER })).map((e) => e.keyId)).toEqual(['key_kept']);
    const check = new Database(file, { readonly: true });
    try {
      expect(SQLITE_SCHEMA_VERSION).toBe(9);
      expect(check.pragma('user_version', { simple: true })).toBe(9);
      expect(
        check.prepare<[], string>("SELECT name FROM sqlite_master WHERE tbl_name = 'webhook_deliveries' ORDER BY name").pluck().all(),
      ).toEqual([
        'sqlite_autoindex_webhook_deliveries_1',
        'webhook_deliveries',
        'webhook_deliveries_created',
        'webhook_deliveries_due',
        'webhook_deliveries_key',
        'webhook_deliveries_webhook',
      ]);
    } finally {
      check.close();
    }
  });
});

describe('PostgreSQL outbox: migration', () => {
  const schemas = testSchemas('outbox_migrate');
  afterAll(() => schemas.dropAll());

  it('brings a schema of the version before the outbox to the current version, in the store’s own schema, its other data kept', async () => {
    const schema = schemas.fresh();
    const first = new PostgresStore(POSTGRES_URL, { schema });
    await first.appendAudit({ at: Date.now(), action: 'credits', actor: 'ops', keyId: 'key_kept', before: null, after: null });
    await first.close();
    await withClient(async (c) => {
      await c.query(`DROP TABLE ${quoted(schema)}.webhook_deliveries`);
      await c.query(`DELETE FROM ${quoted(schema)}.schema_version WHERE version >= $1`, [POSTGRES_SCHEMA_VERSION]);
    });

    const store = new PostgresStore(POSTGRES_URL, { schema });
    cleanups.push(() => store.close());
    const now = Date.now();
    const d = delivery(now);
    expect(await store.outbox.enqueue([d])).toEqual([d.id]);
    expect(await store.outbox.getDelivery(d.id)).toEqual(stored(d));
    expect((await store.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER })).map((e) => e.keyId)).toEqual(['key_kept']);
    expect(POSTGRES_SCHEMA_VERSION).toBe(8);
    await withClient(async (c) => {
      const versions = await c.query<{ version: number }>(`SELECT version FROM ${quoted(schema)}.schema_version ORDER BY version`);
      expect(versions.rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const tables = await c.query<{ table_schema: string }>(
        "SELECT table_schema FROM information_schema.tables WHERE table_name = 'webhook_deliveries' AND table_schema = $1",
        [schema],
      );
      expect(tables.rows).toEqual([{ table_schema: schema }]);
      const rows = await c.query<{ id: string }>(`SELECT id FROM ${quoted(schema)}.webhook_deliveries`);
      expect(rows.rows).toEqual([{ id: d.id }]);
    });
  });
});
