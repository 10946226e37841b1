// One contract, two implementations: the SQLite store (a file under the system's temporary
// directory) and the Redis store, against a real Redis and against a real three-node Redis
// Cluster (where every script's keys must share a slot). Then what only one of them promises:
// several gateway processes on one Redis, a lost subscription, usage expiries, the key layout;
// a SQLite file reopened.
//
// Nothing sleeps: a test that expects a notice waits for it (`until`), with a deadline of a
// second where the promise is "within a second".
import { COUNTERS, NO_TERMS, zeroCounts } from '../../src/store/records.js';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { periodWindow } from '../../src/quota/period.js';
import type { RedisClient } from '../../src/redis/client.js';
import { RedisStore, USAGE_ROWS_PER_CALL, type RedisStoreOptions } from '../../src/store/redis.js';
import { MemoryStore } from '../../src/store/memory.js';
import { postgresBackend } from './postgres-backend.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../../src/store/sqlite.js';
import type { AuditEntry, KeyRecord, Storage, UsageRow } from '../../src/store/types.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { leaves } from '../support/leaves.js';
import { until } from '../support/wait.js';

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** Today's UTC day moved by `n` days: every day of this suite is relative to the day it runs. */
const today = (n = 0) => utcDay(Date.now() + n * DAY_MS);
const dayEnd = (day: string) => Date.parse(`${day}T00:00:00Z`) + DAY_MS;

// --- records ---

/** Every secret handed out: the no-secret test looks for each of them in what was stored. */
const secrets: string[] = [];
const shownPrefixes = new Set<string>();
let serial = 0;
/** A fresh usage batch id (store/types.ts: a store adds a batch at most once). */
const batch = () => `batch-${randomUUID()}`;

function newSecret(): { secret: string; digest: string; prefix: string } {
  const secret = `egw_${randomBytes(32).toString('base64url')}`;
  secrets.push(secret);
  const prefix = secret.slice(0, 12);
  shownPrefixes.add(prefix);
  return { secret, digest: createHash('sha256').update(secret).digest('hex'), prefix };
}

/** A record with a name holding the characters Redis key names and usage fields must survive. */
function key(over: Partial<KeyRecord> = {}): KeyRecord {
  const { digest, prefix } = newSecret();
  const n = serial++;
  return {
    id: `key_${randomBytes(10).toString('hex').slice(0, 16)}`,
    name: `team {${n}}|ops:main`,
    owner: null,
    plan: 'small',
    chains: null,
    status: 'active',
    expiresAt: null,
    createdAt: 1_790_000_000_000 + n,
    prefix,
    digest,
    previous: null,
    ...NO_TERMS,
    ...over,
  };
}

/** The audit entry a key write carries (the key tests do not read it back; the audit suite does). */
const note = (action: AuditEntry['action']): AuditEntry => ({
  at: Date.now(),
  action,
  actor: 'ops',
  keyId: 'key_note',
  before: null,
  after: null,
});

const byId = (a: KeyRecord, b: KeyRecord) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function row(day: string, keyId: string, chain: string, route: string, counts: Partial<UsageRow> = {}): UsageRow {
  return {
    day,
    keyId,
    account: '',
    chain,
    route,
    ...zeroCounts(),
    ...counts,
  };
}

// --- backends ---

/** One store's data as a test sees it: the store, another on the same data, and every string it holds. */
interface World {
  store: Storage;
  /** Another gateway process on the same data (Redis); a second connection to the file (SQLite). */
  another(): Storage;
  /** Every string stored: values, hash fields, set members, stream fields, columns; JSON taken apart. */
  dump(): Promise<string[]>;
}

interface Backend {
  name: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  world(): World;
}

/** What a test opened, closed after it. */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function memoryBackend(): Backend {
  return {
    name: 'memory',
    setup: () => Promise.resolve(),
    teardown: () => Promise.resolve(),
    world() {
      const store = new MemoryStore();
      cleanups.push(() => store.close());
      return {
        store,
        // One process's memory: another process has its own, so the same store stands for it.
        another: () => store,
        async dump() {
          const out: string[] = [];
          leaves(await store.keys.listKeys(), out);
          leaves(await store.audit.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER }), out);
          leaves(await store.usage.listUsage({ from: '0000-01-01', to: '9999-12-31' }), out);
          leaves(await store.ledgers.loadLedgers(), out);
          return out;
        },
      };
    },
  };
}

function sqliteBackend(): Backend {
  let dir = '';
  let n = 0;
  return {
    name: 'sqlite',
    setup() {
      dir = mkdtempSync(join(tmpdir(), 'egw-store-'));
      return Promise.resolve();
    },
    teardown() {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
    world() {
      // A directory that does not exist yet: the store makes it.
      const file = join(dir, `w${n++}`, 'data', 'store.db');
      const open = () => {
        const s = new SqliteStore(file);
        cleanups.push(() => s.close());
        return s;
      };
      return {
        store: open(),
        another: open,
        dump() {
          const db = new Database(file, { readonly: true });
          try {
            const tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
            const out: string[] = [];
            for (const t of tables) for (const r of db.prepare(`SELECT * FROM "${t}"`).all()) leaves(r, out);
            return Promise.resolve(out);
          } finally {
            db.close();
          }
        },
      };
    },
  };
}

/** Every key under a prefix with its contents, on each master of a cluster. */
async function dumpRedis(client: RedisClient, prefix: string): Promise<string[]> {
  const out: string[] = [];
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      for (const k of keys) {
        out.push(k);
        const type = await client.type(k);
        if (type === 'string') leaves(await client.get(k), out);
        else if (type === 'hash') leaves(await client.hgetall(k), out);
        else if (type === 'set') leaves(await client.smembers(k), out);
        else if (type === 'stream') leaves(await client.xrange(k, '-', '+'), out);
        else throw new Error(`unexpected ${type} at ${k}`);
      }
    } while (cursor !== '0');
  }
  return out;
}

function redisBackend(): Backend & { client(): Redis; prefix(): string } {
  let client: Redis;
  const suite = testPrefix('store');
  let n = 0;
  let last = '';
  return {
    name: 'redis',
    client: () => client,
    prefix: () => last,
    setup() {
      client = connect();
      return Promise.resolve();
    },
    async teardown() {
      await deletePrefix(client, suite);
      client.disconnect();
    },
    world() {
      const prefix = (last = `${suite}${n++}:`);
      const store = new RedisStore(client, prefix, () => client.duplicate());
      cleanups.push(() => store.close());
      return {
        store,
        another() {
          // Another process: its own connection, its own subscriber.
          const own = connect();
          const s = new RedisStore(own, prefix, () => own.duplicate());
          cleanups.push(async () => {
            await s.close();
            own.disconnect();
          });
          return s;
        },
        dump: () => dumpRedis(client, prefix),
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
    async setup() {
      cluster = await startCluster();
      client = new Cluster(cluster.urls);
    },
    async teardown() {
      client?.disconnect();
      await cluster?.stop();
    },
    world() {
      const prefix = testPrefix(`store-cluster-${n++}`);
      const store = new RedisStore(client, prefix, () => client.duplicate());
      cleanups.push(() => store.close());
      return {
        store,
        another() {
          const own = new Cluster(cluster.urls);
          const s = new RedisStore(own, prefix, () => own.duplicate());
          cleanups.push(async () => {
            await s.close();
            own.disconnect();
          });
          return s;
        },
        dump: () => dumpRedis(client, prefix),
      };
    },
  };
}

/**
 * Waits until `watcher` hears of a write made through `writer` (its subscription is up), and
 * returns the id of the probe key written for it, for the test to leave out of what it counts.
 */
async function listening(writer: Storage, heard: string[]): Promise<string> {
  const probe = key();
  expect(await writer.keys.createKey(probe, note('create'))).toBe(true);
  await until(async () => {
    if (heard.includes(probe.id)) return true;
    await writer.keys.updateKey({ ...probe, plan: `p${serial++}` }, note('update'));
    return false;
  }, 'the watcher to hear of the probe key');
  return probe.id;
}

const memory = memoryBackend();
const sqlite = sqliteBackend();
const redis = redisBackend();
const cluster = clusterBackend();
const postgres = postgresBackend();
const backends = [memory, sqlite, redis, cluster, postgres];
beforeAll(() => Promise.all(backends.map((b) => b.setup())), 30_000);
afterAll(() => Promise.all(backends.map((b) => b.teardown())));

// --- the contract ---

describe.each(backends)('store contract: $name', (backend) => {
  describe('keys', () => {
    it('a created key reads back equal, by id and in the list, every field included', async () => {
      const { store } = backend.world();
      const plain = key();
      const full = key({
        owner: 'acme corp',
        plan: 'pro',
        chains: ['1', '10', '8453'],
        status: 'disabled',
        expiresAt: 1_800_000_000_000,
        previous: { digest: 'ab'.repeat(32), until: 1_790_000_600_000 },
        limits: { rps: 50, credits: null, period: 'monthly', costs: { 'tokens/{address_hash_param}': 2, 'rpc.eth_getLogs': 0 } },
        routes: ['tokens/*', 'legacy.account.*'],
        ips: ['203.0.113.0/24', '2001:db8::1'],
        origins: ['https://app.example.com'],
        meta: { customer: 'cus_123', tier: { name: 'gold', seats: 3 }, tags: ['a', 'b'], note: null },
      });
      expect(await store.keys.createKey(plain, note('create'))).toBe(true);
      expect(await store.keys.createKey(full, note('create'))).toBe(true);
      expect(await store.keys.getKey(plain.id)).toEqual(plain);
      expect(await store.keys.getKey(full.id)).toEqual(full);
      expect(await store.keys.getKey('key_unknown')).toBeUndefined();
      expect((await store.keys.listKeys()).sort(byId)).toEqual([plain, full].sort(byId));
    });

    it('a name another key has is refused on create, and nothing of the refused key is stored', async () => {
      const { store } = backend.world();
      const first = key();
      const second = key({ name: first.name, plan: 'other' });
      expect(await store.keys.createKey(first, note('create'))).toBe(true);
      expect(await store.keys.createKey(second, note('create'))).toBe(false);
      expect(await store.keys.getKey(second.id)).toBeUndefined();
      expect(await store.keys.listKeys()).toEqual([first]);
    });

    it('an update replaces the record; a rename onto a taken name is refused and changes nothing; a renamed key frees its old name', async () => {
      const { store } = backend.world();
      const a = key();
      const b = key();
      await store.keys.createKey(a, note('create'));
      await store.keys.createKey(b, note('create'));

      expect(await store.keys.updateKey({ ...a, name: b.name, plan: 'pro' }, note('update'))).toBe(false);
      expect(await store.keys.getKey(a.id)).toEqual(a);

      const renamed: KeyRecord = {
        ...a,
        name: 'renamed',
        plan: 'pro',
        chains: ['137'],
        previous: { digest: a.digest, until: 1_790_000_900_000 },
      };
      expect(await store.keys.updateKey(renamed, note('update'))).toBe(true);
      expect(await store.keys.getKey(a.id)).toEqual(renamed);
      // Same name, other fields: not a conflict with itself.
      const disabled: KeyRecord = { ...renamed, status: 'disabled' };
      expect(await store.keys.updateKey(disabled, note('update'))).toBe(true);
      expect(await store.keys.getKey(a.id)).toEqual(disabled);
      // Terms given, then taken away again.
      const dealt: KeyRecord = {
        ...disabled,
        limits: { rps: 1, credits: 0, period: null, costs: null },
        ips: ['10.0.0.0/8'],
        meta: { n: 1 },
      };
      expect(await store.keys.updateKey(dealt, note('update'))).toBe(true);
      expect(await store.keys.getKey(a.id)).toEqual(dealt);
      expect(await store.keys.updateKey({ ...dealt, ...NO_TERMS }, note('update'))).toBe(true);
      expect(await store.keys.getKey(a.id)).toEqual({ ...dealt, ...NO_TERMS });

      const c = key({ name: a.name });
      expect(await store.keys.createKey(c, note('create'))).toBe(true);
      expect(await store.keys.createKey(key({ name: 'renamed' }), note('create'))).toBe(false);
      expect((await store.keys.listKeys()).sort(byId)).toEqual([disabled, b, c].sort(byId));
    });

    it('a deleted key is gone from get and list, its name is free again, and deleting it twice is harmless', async () => {
      const { store } = backend.world();
      const a = key();
      const b = key();
      await store.keys.createKey(a, note('create'));
      await store.keys.createKey(b, note('create'));
      await store.keys.deleteKey(a.id, note('revoke'));
      expect(await store.keys.getKey(a.id)).toBeUndefined();
      expect(await store.keys.listKeys()).toEqual([b]);
      await store.keys.deleteKey(a.id, note('revoke'));
      await store.keys.deleteKey('key_never_existed', note('revoke'));
      const again = key({ name: a.name });
      expect(await store.keys.createKey(again, note('create'))).toBe(true);
      expect((await store.keys.listKeys()).sort(byId)).toEqual([b, again].sort(byId));
    });

    it('updating a key that does not exist is an error, never an insert; creating an id that exists is an error', async () => {
      const { store } = backend.world();
      const ghost = key();
      await expect(store.keys.updateKey(ghost, note('update'))).rejects.toThrow(`no run-time key ${ghost.id}`);
      expect(await store.keys.getKey(ghost.id)).toBeUndefined();
      const a = key();
      await store.keys.createKey(a, note('create'));
      await expect(store.keys.createKey({ ...a, name: 'another name' }, note('create'))).rejects.toThrow(`key id ${a.id} exists`);
      expect(await store.keys.listKeys()).toEqual([a]);
    });

    it("tells its watcher of the store's own creates, updates and deletes, by id, once each, and of nothing refused", async () => {
      const { store } = backend.world();
      const heard: string[] = [];
      let resyncs = 0;
      store.keys.watchKeys(
        (id) => heard.push(id),
        () => resyncs++,
      );
      const probe = await listening(store, heard);
      const a = key();
      const b = key();
      await store.keys.createKey(a, note('create'));
      await store.keys.updateKey({ ...a, plan: 'pro' }, note('update'));
      expect(await store.keys.createKey(key({ name: a.name }), note('create'))).toBe(false);
      const probeName = (await store.keys.getKey(probe))!.name;
      expect(await store.keys.updateKey({ ...a, name: probeName }, note('update'))).toBe(false);
      await store.keys.deleteKey(a.id, note('revoke'));
      await store.keys.deleteKey(a.id, note('revoke')); // nothing left to delete: no notice
      await store.keys.createKey(b, note('create')); // the last write: once heard, every notice before it has arrived
      await until(() => heard.includes(b.id), 'the notice of the last write', 1_000);
      expect(heard.filter((id) => id !== probe)).toEqual([a.id, a.id, a.id, b.id]);
      expect(resyncs).toBe(0);
    });
  });

  describe('objects (run-time plans and accounts)', () => {
    it('creates only what is not there, replaces only what is, lists by kind in id order, deletes once; each write audited and told', async () => {
      const { store } = backend.world();
      const heard: string[] = [];
      store.keys.watchKeys(
        (id) => heard.push(id),
        () => undefined,
      );
      const probe = await listening(store, heard);
      const t = Date.now();
      const entry = (n: number, action: AuditEntry['action'], id: string): AuditEntry => ({
        at: t + n,
        action,
        actor: 'ops',
        keyId: id,
        before: null,
        after: { n },
      });
      const gold = { kind: 'plan' as const, id: 'gold', value: { rps: 50, credits: 10_000, period: 'monthly', note: { a: [1, 'x'] } } };
      const silver = { kind: 'plan' as const, id: 'silver {1}|x', value: { rps: 5 } };
      const acme = { kind: 'account' as const, id: 'acc_aaaaaaaaaaaaaaaa', value: { name: 'acme', plan: 'gold' } };
      expect(await store.keys.putObject(gold, 'replace', entry(0, 'update', 'plan:gold'))).toBe(false);
      expect(await store.keys.putObject(silver, 'create', entry(1, 'create', 'plan:silver'))).toBe(true);
      expect(await store.keys.putObject(gold, 'create', entry(2, 'create', 'plan:gold'))).toBe(true);
      expect(await store.keys.putObject({ ...gold, value: { rps: 1 } }, 'create', entry(3, 'create', 'plan:gold'))).toBe(false);
      expect(await store.keys.putObject(acme, 'create', entry(4, 'create', acme.id))).toBe(true);
      expect(await store.keys.listObjects('plan')).toEqual([gold, silver]);
      expect(await store.keys.listObjects('account')).toEqual([acme]);
      expect(await store.keys.getObject('plan', 'gold')).toEqual(gold);
      expect(await store.keys.getObject('account', 'gold')).toBeUndefined();
      const changed = { ...gold, value: { rps: 60, credits: 10_000, period: 'monthly' } };
      expect(await store.keys.putObject(changed, 'replace', entry(5, 'update', 'plan:gold'))).toBe(true);
      expect(await store.keys.getObject('plan', 'gold')).toEqual(changed);
      expect(await store.keys.deleteObject('plan', 'silver {1}|x', entry(6, 'delete', 'plan:silver'))).toBe(true);
      expect(await store.keys.deleteObject('plan', 'silver {1}|x', entry(7, 'delete', 'plan:silver'))).toBe(false);
      expect(await store.keys.listObjects('plan')).toEqual([changed]);
      // Only the writes that were made are on record, and told.
      const audit = await store.audit.listAudit({ from: t, to: t + 10 });
      expect(audit.filter((e) => e.keyId !== 'key_note').map((e) => (e.after as { n: number }).n)).toEqual([1, 2, 4, 5, 6]);
      await until(() => heard.filter((id) => id !== probe).length >= 5, 'the notices', 1_000);
      expect(heard.filter((id) => id !== probe)).toEqual([
        'plan:silver {1}|x',
        'plan:gold',
        `account:${acme.id}`,
        'plan:gold',
        'plan:silver {1}|x',
      ]);
    });
  });

  describe('key writes and their audit entries', () => {
    it('every key write stores its audit entry with it; a refused write stores neither', async () => {
      const { store } = backend.world();
      const t = Date.now();
      const at = (n: number, action: AuditEntry['action'], keyId: string): AuditEntry => ({
        at: t + n,
        action,
        actor: 'ops',
        keyId,
        before: action === 'create' ? null : { n },
        after: action === 'revoke' ? null : { n },
      });
      const a = key();
      const b = key();
      expect(await store.keys.createKey(a, at(1, 'create', a.id))).toBe(true);
      expect(await store.keys.createKey(b, at(2, 'create', b.id))).toBe(true);
      // Refused: a name taken, on create and on rename; a delete of nothing.
      expect(await store.keys.createKey(key({ name: a.name }), at(3, 'create', 'key_refused'))).toBe(false);
      expect(await store.keys.updateKey({ ...a, name: b.name }, at(4, 'update', a.id))).toBe(false);
      expect(await store.keys.deleteKey('key_never_existed', at(5, 'revoke', 'key_never_existed'))).toBe(false);
      await expect(store.keys.updateKey(key(), at(6, 'update', 'key_ghost'))).rejects.toThrow('no run-time key');
      expect(await store.keys.updateKey({ ...a, plan: 'pro' }, at(7, 'update', a.id))).toBe(true);
      expect(await store.keys.deleteKey(b.id, at(8, 'revoke', b.id))).toBe(true);
      expect(await store.keys.deleteKey(b.id, at(9, 'revoke', b.id))).toBe(false);
      const trail = await store.audit.listAudit({ from: t, to: t + 100 });
      expect(trail).toEqual([at(1, 'create', a.id), at(2, 'create', b.id), at(7, 'update', a.id), at(8, 'revoke', b.id)]);
    });

    it('a key write whose audit entry cannot be stored (its instant not an integer) is refused whole', async () => {
      const { store } = backend.world();
      const a = key();
      const bad = (action: AuditEntry['action']): AuditEntry => ({ ...note(action), at: 1.5 });
      await expect(store.keys.createKey(a, bad('create'))).rejects.toThrow();
      expect(await store.keys.listKeys()).toEqual([]);
      expect(await store.keys.createKey(a, note('create'))).toBe(true);
      await expect(store.keys.updateKey({ ...a, plan: 'pro' }, bad('update'))).rejects.toThrow();
      await expect(store.keys.deleteKey(a.id, bad('revoke'))).rejects.toThrow();
      expect(await store.keys.listKeys()).toEqual([a]);
      expect(await store.audit.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER })).toHaveLength(1);
    });
  });

  describe('audit', () => {
    const entry = (at: number, action: AuditEntry['action'], keyId: string, after: Record<string, unknown> | null = null): AuditEntry => ({
      at,
      action,
      actor: 'ops',
      keyId,
      before: action === 'create' ? null : { plan: 'small', chains: null },
      after,
    });

    it('lists the entries of a time range, of one key if asked, oldest first, entries appended out of order included', async () => {
      const { store } = backend.world();
      const t = Date.now();
      const e1 = entry(t + 100, 'create', 'key_a', { name: 'a', plan: 'small', chains: ['1', '10'] });
      const e2 = entry(t + 300, 'update', 'key_b', { plan: 'pro' });
      // Appended after e2 but older: another gateway process, or a clock behind.
      const e3 = entry(t + 200, 'credits', 'key_a', { credits: 5000 });
      const e4 = entry(t + 300, 'roll', 'key_a', { prefix: 'egw_abcdefgh' });
      const e5 = entry(t + 400, 'revoke', 'key_a', { status: 'disabled' });
      const e0 = entry(t - 5_000, 'create', 'key_b');
      for (const e of [e1, e2, e3, e4, e5, e0]) await store.audit.appendAudit(e);

      expect(await store.audit.listAudit({ from: t + 100, to: t + 300 })).toEqual([e1, e3, e2, e4]);
      expect(await store.audit.listAudit({ from: t + 100, to: t + 300, keyId: 'key_a' })).toEqual([e1, e3, e4]);
      expect(await store.audit.listAudit({ from: t + 200, to: t + 200 })).toEqual([e3]);
      expect(await store.audit.listAudit({ from: t + 301, to: t + 10_000 })).toEqual([e5]);
      expect(await store.audit.listAudit({ from: 0, to: t + 10_000, keyId: 'key_b' })).toEqual([e0, e2]);
      expect(await store.audit.listAudit({ from: t + 401, to: t + 10_000 })).toEqual([]);
      expect(await store.audit.listAudit({ from: t + 300, to: t + 100 })).toEqual([]);
    });
  });

  describe('usage', () => {
    it('rows added twice for one day, key, chain and route are summed exactly, refunds taken off', async () => {
      const { store } = backend.world();
      const d = today();
      const route = 'blocks/{block_hash_or_number_param}';
      await store.usage.addUsage([row(d, 'key_a', '1', route, { requests: 3, credits: 60, cacheHits: 1, refused: 0, errors: 1 })], batch());
      await store.usage.addUsage(
        [
          row(d, 'key_a', '1', route, { requests: 2, credits: 40, cacheHits: 2, refused: 1, errors: 0 }),
          row(d, 'key_a', '1', route, { requests: 0, credits: -20, cacheHits: 0, refused: 0, errors: 0 }),
        ],
        batch(),
      );
      expect(await store.usage.listUsage({ from: d, to: d })).toEqual([
        row(d, 'key_a', '1', route, { requests: 5, credits: 80, cacheHits: 3, refused: 1, errors: 1 }),
      ]);
    });

    it('a batch sent again under its id adds nothing (a write that timed out but ran); another id adds', async () => {
      const { store } = backend.world();
      const rows = [
        row(today(), 'key_r', '1', 'stats', { requests: 2, credits: 40 }),
        row(today(-1), 'key_r', '1', 'stats', { requests: 1 }),
      ];
      const id = batch();
      await store.usage.addUsage(rows, id);
      await store.usage.addUsage(rows, id);
      expect(await store.usage.listUsage({ from: today(-1), to: today() })).toEqual(rows.slice().reverse());
      await store.usage.addUsage(rows, batch());
      expect((await store.usage.listUsage({ from: today(), to: today() }))[0]).toMatchObject({ requests: 4, credits: 80 });
    });

    it('the refusals by cause and the client errors are kept and summed exactly, once per batch', async () => {
      const { store } = backend.world();
      const d = today();
      const first = [
        row(d, 'key_c', '1', 'stats', {
          requests: 9,
          refused: 6,
          rateLimited: 3,
          outOfCredits: 2,
          forbidden: 1,
          clientErrors: 2,
          errors: 1,
        }),
        row(d, 'key_c', '10', 'stats', { requests: 4, clientErrors: 4 }),
      ];
      const id = batch();
      await store.usage.addUsage(first, id);
      await store.usage.addUsage(first, id); // sent again: nothing added
      expect(await store.usage.listUsage({ from: d, to: d })).toEqual(first);
      await store.usage.addUsage(
        [
          row(d, 'key_c', '1', 'stats', { requests: 5, refused: 4, rateLimited: 1, forbidden: 3, clientErrors: 1 }),
          row(d, 'key_c', '1', 'stats', { requests: 2, refused: 2, outOfCredits: 2 }),
        ],
        batch(),
      );
      expect(await store.usage.listUsage({ from: d, to: d })).toEqual([
        row(d, 'key_c', '1', 'stats', {
          requests: 16,
          refused: 12,
          rateLimited: 4,
          outOfCredits: 4,
          forbidden: 4,
          clientErrors: 3,
          errors: 1,
        }),
        row(d, 'key_c', '10', 'stats', { requests: 4, clientErrors: 4 }),
      ]);
    });

    it('a row handed without the counters by cause (a credits-only row) counts 0 of each', async () => {
      const { store } = backend.world();
      const d = today();
      // As a row of an earlier gateway's in-flight batch would be: the counters by cause absent.
      const bare = {
        day: d,
        keyId: 'key_o',
        chain: '1',
        route: 'stats',
        requests: 1,
        credits: 20,
        cacheHits: 0,
        refused: 1,
        errors: 0,
      } as unknown as UsageRow;
      await store.usage.addUsage([bare], batch());
      await store.usage.addUsage([bare, row(d, 'key_o', '1', 'stats', { forbidden: 1 })], batch());
      expect(await store.usage.listUsage({ from: d, to: d })).toEqual([
        row(d, 'key_o', '1', 'stats', { requests: 2, credits: 40, refused: 2, forbidden: 1 }),
      ]);
    });

    it('a row of zeros is stored as a row of zeros', async () => {
      const { store } = backend.world();
      await store.usage.addUsage([row(today(), 'key_z', '1', 'stats')], batch());
      expect(await store.usage.listUsage({ from: today(), to: today() })).toEqual([row(today(), 'key_z', '1', 'stats')]);
    });

    it('rows of several days, keys, chains and routes are filtered by the query and ordered by day, key, chain and route', async () => {
      const { store } = backend.world();
      const [d0, d1, d2] = [today(-2), today(-1), today()];
      const odd = 'a|b:c{d}%7C é';
      const rows = [
        row(d2, 'key_b', '10', 'stats', { requests: 1 }),
        row(d0, 'key_a', '1', odd, { requests: 2, credits: 40 }),
        row(d1, 'key_c', '1', 'stats', { requests: 3, refused: 3 }),
        row(d0, 'key_a', '1', 'stats', { requests: 4, cacheHits: 4 }),
        row(d1, 'key_a', '10', odd, { requests: 5, errors: 1 }),
        row(d0, 'key_b', '1', 'stats', { requests: 6 }),
        row(d2, 'key_a', '8453', 'blocks/{block_hash_or_number_param}', { requests: 7, credits: 140 }),
        row(today(-3), 'key_a', '1', 'stats', { requests: 8 }),
        row(today(1), 'key_a', '1', 'stats', { requests: 9 }),
      ];
      // In two batches, so that one write is not the whole story.
      await store.usage.addUsage(rows.slice(0, 4), batch());
      await store.usage.addUsage(rows.slice(4), batch());
      const [b2, a0odd, c1, a0, a1odd, b0, a2] = rows as [UsageRow, UsageRow, UsageRow, UsageRow, UsageRow, UsageRow, UsageRow];

      expect(await store.usage.listUsage({ from: d0, to: d2 })).toEqual([a0odd, a0, b0, a1odd, c1, a2, b2]);
      expect(await store.usage.listUsage({ from: d1, to: d1 })).toEqual([a1odd, c1]);
      expect(await store.usage.listUsage({ from: d0, to: d2, keyIds: new Set(['key_a', 'key_c']) })).toEqual([a0odd, a0, a1odd, c1, a2]);
      expect(await store.usage.listUsage({ from: d0, to: d2, keyIds: new Set<string>() })).toEqual([]);
      expect(await store.usage.listUsage({ from: d0, to: d2, chain: '10' })).toEqual([a1odd, b2]);
      expect(await store.usage.listUsage({ from: d0, to: d2, route: odd })).toEqual([a0odd, a1odd]);
      expect(await store.usage.listUsage({ from: d0, to: d2, keyIds: new Set(['key_a']), chain: '1', route: 'stats' })).toEqual([a0]);
      expect(await store.usage.listUsage({ from: d2, to: d0 })).toEqual([]);
      expect((await store.usage.listUsage({ from: today(-3), to: today(1) })).map((r) => r.requests)).toEqual([8, 2, 4, 6, 5, 3, 7, 1, 9]);
    });

    it('pruneUsage forgets the days before the given one and keeps that day and the ones after', async () => {
      const { store } = backend.world();
      await store.usage.addUsage(
        [3, 2, 1, 0].map((ago) => row(today(-ago), 'key_a', '1', 'stats', { requests: ago + 1 })),
        batch(),
      );
      await store.usage.pruneUsage(today(-2));
      expect(await store.usage.listUsage({ from: today(-10), to: today() })).toEqual([
        row(today(-2), 'key_a', '1', 'stats', { requests: 3 }),
        row(today(-1), 'key_a', '1', 'stats', { requests: 2 }),
        row(today(), 'key_a', '1', 'stats', { requests: 1 }),
      ]);
      await store.usage.pruneUsage(today(1));
      expect(await store.usage.listUsage({ from: today(-10), to: today(1) })).toEqual([]);
    });

    it("each row counts in its day's row and in its hour's row: the hours of a day sum to the day, for every counter, once per batch", async () => {
      const { store } = backend.world();
      const [d0, d1] = [today(-1), today()];
      const at = (day: string, h: number) => `${day}T${String(h).padStart(2, '0')}:00:00Z`;
      const route = 'blocks/{block_hash_or_number_param}';
      const deltas: UsageRow[] = [
        { ...row(d1, 'key_h', '1', route, { requests: 3, credits: 60, cacheHits: 1, refused: 1, rateLimited: 1 }), hour: at(d1, 0) },
        { ...row(d1, 'key_h', '1', route, { requests: 2, credits: -20, errors: 1, clientErrors: 1 }), hour: at(d1, 5) },
        { ...row(d1, 'key_h', '1', route, { requests: 4, refused: 3, outOfCredits: 2, forbidden: 1 }), hour: at(d1, 23) },
        { ...row(d1, 'key_h', '1', route, { requests: 1, credits: 20 }), hour: at(d1, 5) },
        { ...row(d1, 'key_g', '10', 'stats', { requests: 7, credits: 140, cacheHits: 7 }), hour: at(d1, 5) },
        { ...row(d0, 'key_h', '1', route, { requests: 9, credits: 180 }), hour: at(d0, 23) },
      ];
      const id = batch();
      await store.usage.addUsage(deltas.slice(0, 3), batch());
      await store.usage.addUsage(deltas.slice(3), id);
      await store.usage.addUsage(deltas.slice(3), id); // sent again: nothing added to either
      const hourly = await store.usage.listUsage({ from: d0, to: d1, granularity: 'hour' });
      expect(hourly).toEqual([
        { ...row(d0, 'key_h', '1', route, { requests: 9, credits: 180 }), hour: at(d0, 23) },
        { ...row(d1, 'key_h', '1', route, { requests: 3, credits: 60, cacheHits: 1, refused: 1, rateLimited: 1 }), hour: at(d1, 0) },
        { ...row(d1, 'key_g', '10', 'stats', { requests: 7, credits: 140, cacheHits: 7 }), hour: at(d1, 5) },
        { ...row(d1, 'key_h', '1', route, { requests: 3, credits: 0, errors: 1, clientErrors: 1 }), hour: at(d1, 5) },
        { ...row(d1, 'key_h', '1', route, { requests: 4, refused: 3, outOfCredits: 2, forbidden: 1 }), hour: at(d1, 23) },
      ]);
      const daily = await store.usage.listUsage({ from: d0, to: d1 });
      expect(daily).toEqual([
        row(d0, 'key_h', '1', route, { requests: 9, credits: 180 }),
        row(d1, 'key_g', '10', 'stats', { requests: 7, credits: 140, cacheHits: 7 }),
        row(d1, 'key_h', '1', route, {
          requests: 10,
          credits: 60,
          cacheHits: 1,
          refused: 4,
          rateLimited: 1,
          outOfCredits: 2,
          forbidden: 1,
          clientErrors: 1,
          errors: 1,
        }),
      ]);
      // Every daily row is the sum of its hours', counter by counter.
      for (const d of daily) {
        const hours = hourly.filter((h) => h.day === d.day && h.keyId === d.keyId && h.chain === d.chain && h.route === d.route);
        const sums = Object.fromEntries(COUNTERS.map((c) => [c, hours.reduce((n, h) => n + h[c], 0)]));
        expect(sums, `${d.day} ${d.keyId}`).toEqual(Object.fromEntries(COUNTERS.map((c) => [c, d[c]])));
      }
      // The query's filters apply to hourly rows as to daily ones.
      expect(await store.usage.listUsage({ from: d1, to: d1, granularity: 'hour', keyIds: new Set(['key_h']), chain: '1', route })).toEqual(
        hourly.slice(1).filter((h) => h.keyId === 'key_h'),
      );
      expect(await store.usage.listUsage({ from: d0, to: d0, granularity: 'day' })).toEqual(daily.slice(0, 1));
    });

    it('a batch of many day rows, each with several hours, adds every one to its day and its hour, once', async () => {
      const { store } = backend.world();
      const d = today();
      const deltas = Array.from({ length: 3 * USAGE_ROWS_PER_CALL }, (_, i) => ({
        ...row(d, `key_${Math.floor(i / 3) % 2}`, '1', `route-${String(Math.floor(i / 3)).padStart(3, '0')}`, {
          requests: 1 + (i % 3),
          credits: i,
        }),
        hour: `${d}T${String(i % 3).padStart(2, '0')}:00:00Z`,
      }));
      const id = batch();
      await store.usage.addUsage(deltas, id);
      await store.usage.addUsage(deltas, id);
      const hourly = await store.usage.listUsage({ from: d, to: d, granularity: 'hour' });
      const daily = await store.usage.listUsage({ from: d, to: d });
      expect(hourly).toHaveLength(deltas.length);
      expect(daily).toHaveLength(deltas.length / 3);
      for (const c of ['requests', 'credits'] as const) {
        const all = deltas.reduce((n, r) => n + r[c], 0);
        expect(hourly.reduce((n, r) => n + r[c], 0)).toBe(all);
        expect(daily.reduce((n, r) => n + r[c], 0)).toBe(all);
      }
      expect(hourly.map((r) => r.hour)).toEqual([...hourly.map((r) => r.hour!)].sort());
    });

    it("the account is part of a row's identity: a key counted under two accounts has a row under each, selected by `accounts`", async () => {
      const { store } = backend.world();
      const d = today();
      const hour = `${d}T09:00:00Z`;
      const under = (account: string, counts: Partial<UsageRow>, keyId = 'key_m') => ({ ...row(d, keyId, '1', 'stats', counts), account });
      await store.usage.addUsage(
        [
          { ...under('', { requests: 1, credits: 20 }), hour },
          { ...under('acc_one', { requests: 2, credits: 40 }), hour },
          { ...under('acc_one', { requests: 1, refused: 1, rateLimited: 1 }), hour },
          { ...under('acc_two', { requests: 4, credits: 80 }), hour },
          { ...under('acc_two', { requests: 5 }, 'key_n'), hour },
        ],
        batch(),
      );
      const none = under('', { requests: 1, credits: 20 });
      const one = under('acc_one', { requests: 3, credits: 40, refused: 1, rateLimited: 1 });
      const two = under('acc_two', { requests: 4, credits: 80 });
      const twoN = under('acc_two', { requests: 5 }, 'key_n');
      expect(await store.usage.listUsage({ from: d, to: d })).toEqual([none, one, two, twoN]);
      expect(await store.usage.listUsage({ from: d, to: d, accounts: new Set(['acc_two']) })).toEqual([two, twoN]);
      expect(await store.usage.listUsage({ from: d, to: d, accounts: new Set(['acc_one', '']) })).toEqual([none, one]);
      expect(await store.usage.listUsage({ from: d, to: d, accounts: new Set(['acc_two']), keyIds: new Set(['key_m']) })).toEqual([two]);
      expect(await store.usage.listUsage({ from: d, to: d, accounts: new Set<string>() })).toEqual([]);
      expect(await store.usage.listUsage({ from: d, to: d, granularity: 'hour', accounts: new Set(['acc_one']) })).toEqual([
        { ...one, hour },
      ]);
    });

    it('a row whose hour is not an hour of its day is refused, and nothing of its batch is written', async () => {
      const { store } = backend.world();
      const d = today();
      const good = { ...row(d, 'key_q', '1', 'stats', { requests: 1 }), hour: `${d}T01:00:00Z` };
      for (const hour of [`${today(-1)}T01:00:00Z`, `${d}T24:00:00Z`, `${d}T01:30:00Z`, `${d} 01:00`]) {
        await expect(store.usage.addUsage([good, { ...good, hour }], batch())).rejects.toThrow(RangeError);
      }
      expect(await store.usage.listUsage({ from: today(-1), to: d })).toEqual([]);
      expect(await store.usage.listUsage({ from: today(-1), to: d, granularity: 'hour' })).toEqual([]);
    });

    it('pruneHourlyUsage forgets the hourly rows of days before the given one and keeps their daily rows; pruneUsage forgets both', async () => {
      const { store } = backend.world();
      const deltas = [3, 2, 1, 0].map((ago) => ({
        ...row(today(-ago), 'key_p', '1', 'stats', { requests: ago + 1 }),
        hour: `${today(-ago)}T12:00:00Z`,
      }));
      await store.usage.addUsage(deltas, batch());
      await store.usage.pruneHourlyUsage(today(-1));
      expect(await store.usage.listUsage({ from: today(-10), to: today(), granularity: 'hour' })).toEqual(deltas.slice(2));
      expect(await store.usage.listUsage({ from: today(-10), to: today() })).toEqual(deltas.map(({ hour: _, ...daily }) => daily));
      await store.usage.pruneUsage(today());
      expect(await store.usage.listUsage({ from: today(-10), to: today(), granularity: 'hour' })).toEqual(deltas.slice(3));
      expect(await store.usage.listUsage({ from: today(-10), to: today() })).toEqual(deltas.slice(3).map(({ hour: _, ...daily }) => daily));
    });
  });

  it('holds no secret: the only stored values beginning with egw_ are the shown prefixes, and no secret appears anywhere', async () => {
    const world = backend.world();
    const { store } = world;
    /** What is stored now: only shown prefixes begin with egw_, no secret is in any value. */
    const check = async (prefixes: string[], digest: string) => {
      const stored = await world.dump();
      const withPrefix = stored.filter((v) => v.startsWith('egw_'));
      expect(new Set(withPrefix)).toEqual(new Set(prefixes));
      for (const v of withPrefix) expect(shownPrefixes.has(v) && v.length === 12).toBe(true);
      for (const secret of secrets) expect(stored.some((v) => v.includes(secret))).toBe(false);
      // The dump did read the record: its digest is there.
      expect(stored).toContain(digest);
    };
    const a = key();
    const secret = secrets.at(-1)!;
    // A caller's object carrying its secret along: only KeyRecord's fields are stored.
    expect(await store.keys.createKey({ ...a, secret } as KeyRecord, note('create'))).toBe(true);
    await check([a.prefix], a.digest);
    const rolled = newSecret();
    const after = { ...a, digest: rolled.digest, prefix: rolled.prefix, previous: { digest: a.digest, until: 1 } };
    expect(await store.keys.updateKey({ ...after, secret: rolled.secret } as KeyRecord, note('update'))).toBe(true);
    await store.audit.appendAudit({
      at: Date.now(),
      action: 'roll',
      actor: 'ops',
      keyId: a.id,
      before: { prefix: a.prefix },
      after: { prefix: rolled.prefix },
    });
    await store.usage.addUsage([row(today(), a.id, '1', 'stats', { requests: 1 })], batch());
    // a.prefix is still stored, in the audit entry's `before`.
    await check([a.prefix, rolled.prefix], rolled.digest);
  });
});

// --- ledgers: the backends a gateway without Redis keeps its quota ledgers in ---

const ledgerBackends = [memory, sqlite, postgres];
describe.each(ledgerBackends)('ledger contract: $name', (backend) => {
  it('saveLedgers upserts every row, and loadLedgers returns what was written, by account', async () => {
    const world = backend.world();
    const ledgers = world.store.ledgers!;
    expect(await ledgers.loadLedgers()).toEqual([]);
    await ledgers.saveLedgers([
      { account: 'a', day: 'd20261130', daySpent: 10, month: 'm202611', monthSpent: 40, topup: 100 },
      { account: 'b', day: 'd20261130', daySpent: 20, month: 'm202611', monthSpent: 20, topup: 0 },
    ]);
    await ledgers.saveLedgers([
      { account: 'a', day: 'd20261201', daySpent: 0, month: 'm202612', monthSpent: 0, topup: 90 },
      // A ledger of bought credits only: no day or month yet.
      { account: 'c', day: '', daySpent: 0, month: '', monthSpent: 0, topup: 1 },
    ]);
    await ledgers.saveLedgers([]);
    const expected = [
      { account: 'a', day: 'd20261201', daySpent: 0, month: 'm202612', monthSpent: 0, topup: 90 },
      { account: 'b', day: 'd20261130', daySpent: 20, month: 'm202611', monthSpent: 20, topup: 0 },
      { account: 'c', day: '', daySpent: 0, month: '', monthSpent: 0, topup: 1 },
    ];
    expect(await ledgers.loadLedgers()).toEqual(expected);
    // Another store on the same data (a restart) reads them too.
    expect(await world.another().ledgers!.loadLedgers()).toEqual(expected);
  });
});

// --- several gateway processes on one Redis ---

describe.each([redis, cluster])('Redis store, several gateway processes: $name', (backend) => {
  it("two stores on one prefix see each other's keys", async () => {
    const world = backend.world();
    const one = world.store;
    const two = world.another();
    const a = key();
    await one.keys.createKey(a, note('create'));
    expect(await two.keys.getKey(a.id)).toEqual(a);
    const updated: KeyRecord = { ...a, plan: 'pro', name: 'moved' };
    expect(await two.keys.updateKey(updated, note('update'))).toBe(true);
    expect(await one.keys.getKey(a.id)).toEqual(updated);
    expect(await one.keys.createKey(key({ name: 'moved' }), note('create'))).toBe(false);
    expect(await two.keys.createKey(key({ name: a.name }), note('create'))).toBe(true);
    await two.keys.deleteKey(a.id, note('revoke'));
    expect((await one.keys.listKeys()).map((k) => k.name)).toEqual([a.name]);
  });

  it('two creates of one name at once store exactly one of them; so do two renames onto one name', async () => {
    const world = backend.world();
    const one = world.store;
    const two = world.another();
    for (let i = 0; i < 20; i++) {
      const name = `contested ${i}`;
      const x = key({ name });
      const y = key({ name });
      const results = await Promise.all([one.keys.createKey(x, note('create')), two.keys.createKey(y, note('create'))]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? x : y;
      expect((await one.keys.listKeys()).filter((k) => k.name === name)).toEqual([winner]);
    }
    const p = key();
    const q = key();
    await one.keys.createKey(p, note('create'));
    await one.keys.createKey(q, note('create'));
    const renames = await Promise.all([
      one.keys.updateKey({ ...p, name: 'target' }, note('update')),
      two.keys.updateKey({ ...q, name: 'target' }, note('update')),
    ]);
    expect(renames.filter(Boolean)).toHaveLength(1);
    expect((await two.keys.listKeys()).filter((k) => k.name === 'target')).toHaveLength(1);
  });

  it('watchKeys hears, within a second, the ids of the changes made through the other store', async () => {
    const world = backend.world();
    const watcher = world.store;
    const writer = world.another();
    const heard: string[] = [];
    let resyncs = 0;
    watcher.keys.watchKeys(
      (id) => heard.push(id),
      () => resyncs++,
    );
    const probe = await listening(writer, heard);
    const a = key();
    const b = key();
    await writer.keys.createKey(a, note('create'));
    await until(() => heard.includes(a.id), 'the create', 1_000);
    await writer.keys.updateKey({ ...a, status: 'disabled' }, note('update'));
    await until(() => heard.filter((id) => id === a.id).length === 2, 'the update', 1_000);
    await writer.keys.deleteKey(a.id, note('revoke'));
    await until(() => heard.filter((id) => id === a.id).length === 3, 'the delete', 1_000);
    await writer.keys.createKey(b, note('create'));
    await until(() => heard.includes(b.id), 'the last create', 1_000);
    expect(heard.filter((id) => id !== probe)).toEqual([a.id, a.id, a.id, b.id]);
    expect(resyncs).toBe(0);
  });

  it('usage deltas from two processes, added at once, are summed exactly', async () => {
    const world = backend.world();
    const stores = [world.store, world.another()];
    const days = [today(-1), today()];
    const batches = Array.from({ length: 40 }, (_, i) =>
      days.flatMap((day) => [
        row(day, 'key_a', '1', 'stats', { requests: 1, credits: 20, cacheHits: i % 2, refused: 1, rateLimited: 1 }),
        row(day, 'key_a', '1', 'blocks/{block_hash_or_number_param}', {
          requests: 2,
          credits: 10,
          errors: 1,
          refused: 2,
          outOfCredits: 1,
          forbidden: 1,
          clientErrors: i % 2,
        }),
      ]),
    );
    await Promise.all(batches.map((rows, i) => stores[i % 2]!.usage.addUsage(rows, batch())));
    const expected = days.flatMap((day) => [
      row(day, 'key_a', '1', 'blocks/{block_hash_or_number_param}', {
        requests: 80,
        credits: 400,
        errors: 40,
        refused: 80,
        outOfCredits: 40,
        forbidden: 40,
        clientErrors: 20,
      }),
      row(day, 'key_a', '1', 'stats', { requests: 40, credits: 800, cacheHits: 20, refused: 40, rateLimited: 40 }),
    ]);
    expect(await world.another().usage.listUsage({ from: days[0]!, to: days[1]! })).toEqual(expected);
  });
});

// --- Redis only ---

describe('Redis store', () => {
  const target = new URL(REDIS_URL);

  /** A connection as src/redis/client.ts makes them: no offline queue, no retries, a command timeout. */
  function productionLike(port: number): Redis {
    // Through the loopback proxy (test/support/tcp-proxy.ts).
    const c = new Redis(port, '127.0.0.1', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 1_000,
      retryStrategy: (attempt) => Math.min(attempt * 50, 1_000),
    });
    c.on('error', () => {});
    cleanups.push(() => c.disconnect());
    return c;
  }

  it('a subscriber that is cut and comes back asks for a resync, once per loss, then hears changes again', async () => {
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    cleanups.push(() => proxy.close());
    const writer = redis.world().store;
    const prefix = redis.prefix();
    const watcher = new RedisStore(redis.client(), prefix, () => productionLike(proxy.port));
    cleanups.push(() => watcher.close());
    const heard: string[] = [];
    let resyncs = 0;
    watcher.keys.watchKeys(
      (id) => heard.push(id),
      () => resyncs++,
    );
    await listening(writer, heard);
    expect(resyncs).toBe(0); // not on the first connect

    await proxy.cut();
    const missed = key();
    await writer.keys.createKey(missed, note('create')); // published while the subscriber is away: lost
    await proxy.restore();
    await until(() => resyncs === 1, 'a resync after the subscriber came back');
    expect(heard).not.toContain(missed.id);
    // Subscribed again before the resync was asked for: a change now is heard.
    await writer.keys.updateKey({ ...missed, plan: 'pro' }, note('update'));
    await until(() => heard.includes(missed.id), 'a change after the resync', 1_000);

    await proxy.cut();
    await proxy.restore();
    await until(() => resyncs === 2, 'a resync after the second loss');
  });

  it('commands reject at once while Redis is away, and work again when it is back', async () => {
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    cleanups.push(() => proxy.close());
    const client = productionLike(proxy.port);
    await until(() => client.status === 'ready', 'the connection');
    const store = new RedisStore(client, `${redis.prefix()}away:`, () => client.duplicate());
    cleanups.push(() => store.close());
    const a = key();
    expect(await store.keys.createKey(a, note('create'))).toBe(true);
    await proxy.cut();
    await until(() => client.status !== 'ready', 'the connection to notice the cut');
    await expect(store.keys.getKey(a.id)).rejects.toThrow();
    await expect(store.keys.createKey(key(), note('create'))).rejects.toThrow();
    await expect(store.usage.addUsage([row(today(), a.id, '1', 'stats', { requests: 1 })], batch())).rejects.toThrow();
    await expect(store.usage.listUsage({ from: today(), to: today() })).rejects.toThrow();
    await proxy.restore();
    await until(() => client.status === 'ready', 'the connection again');
    expect(await store.keys.getKey(a.id)).toEqual(a);
  });

  it("a day's usage expires its retention after the end of its day, as the gateway's clock sees it", async () => {
    redis.world();
    const prefix = redis.prefix();
    // A gateway whose clock is an hour behind Redis's: its expiries must follow its own clock.
    const skew = -3_600_000;
    const options: RedisStoreOptions = { retentionDays: 30, now: () => Date.now() + skew };
    const store = new RedisStore(redis.client(), prefix, () => redis.client().duplicate(), options);
    cleanups.push(() => store.close());
    const past = today(-10);
    const future = today(3);
    const expired = today(-40); // ended more than 30 days ago
    const before = Date.now() + skew;
    await store.usage.addUsage(
      [past, future, expired].map((day) => row(day, 'key_a', '1', 'stats', { requests: 1 })),
      batch(),
    );
    for (const day of [past, future]) {
      const expected = dayEnd(day) + 30 * DAY_MS - before;
      for (const name of [store.usageKey(day, 'key_a'), store.usageIdsKey(day)]) {
        const pttl = await redis.client().pttl(name);
        expect(pttl).toBeLessThanOrEqual(expected);
        expect(pttl).toBeGreaterThan(expected - 2_000);
      }
    }
    expect(await redis.client().exists(store.usageKey(expired, 'key_a'), store.usageIdsKey(expired))).toBe(0);
    expect(await store.usage.listUsage({ from: expired, to: future })).toEqual(
      [past, future].map((day) => row(day, 'key_a', '1', 'stats', { requests: 1 })),
    );
  });

  it('lays its data out as documented at the top of src/store/redis.ts', async () => {
    const { store } = redis.world();
    const p = redis.prefix();
    const c = redis.client();
    const a = key({ name: 'team {1}|ops:main' });
    const created: AuditEntry = {
      at: 1_790_000_000_100,
      action: 'create',
      actor: 'ops',
      keyId: a.id,
      before: null,
      after: { name: a.name },
    };
    await store.keys.createKey(a, created);
    await store.audit.appendAudit({
      at: 1_790_000_000_123,
      action: 'credits',
      actor: 'ops',
      keyId: a.id,
      before: null,
      after: { added: 5 },
    });
    const batchId = batch();
    await store.usage.addUsage([row(today(), a.id, '8453', 'blocks/{block_hash_or_number_param}', { requests: 2, credits: 40 })], batchId);

    expect(await c.smembers(`${p}{keys}:ids`)).toEqual([a.id]);
    expect(JSON.parse((await c.get(`${p}{keys}:key:${a.id}`))!)).toEqual(a);
    expect(await c.get(`${p}{keys}:name:team {1}|ops:main`)).toBe(a.id);
    const [[id0, fields0], [id1, fields1]] = (await c.xrange(`${p}{keys}:audit`, '-', '+')) as [string, string[]][] as [
      [string, string[]],
      [string, string[]],
    ];
    expect([id0, fields0[0], JSON.parse(fields0[1]!)]).toEqual(['1790000000100-0', 'e', created]);
    expect([id1, fields1[0], JSON.parse(fields1[1]!)]).toEqual([
      '1790000000123-0',
      'e',
      { at: 1_790_000_000_123, action: 'credits', actor: 'ops', keyId: a.id, before: null, after: { added: 5 } },
    ]);
    expect(await c.smembers(`${p}usage:{${today()}}:keys`)).toEqual([a.id]);
    expect(await c.hgetall(`${p}usage:{${today()}}:key:${a.id}`)).toEqual({
      '8453|blocks/{block_hash_or_number_param}': '2 40 0 0 0 0 0 0 0',
    });
    expect((await dumpRedis(c, p)).filter((v) => v.startsWith(p)).sort()).toEqual(
      [
        `${p}{keys}:ids`,
        `${p}{keys}:key:${a.id}`,
        `${p}{keys}:name:team {1}|ops:main`,
        `${p}{keys}:audit`,
        `${p}usage:{${today()}}:keys`,
        `${p}usage:{${today()}}:key:${a.id}`,
        `${p}usage:{${today()}}:batch:${batchId}`,
      ].sort(),
    );
    // The batch's marker is forgotten after an hour.
    const markerTtl = await c.pttl(`${p}usage:{${today()}}:batch:${batchId}`);
    expect(markerTtl).toBeGreaterThan(3_000_000);
    expect(markerTtl).toBeLessThanOrEqual(3_600_000);
  });

  it("a key hash's value of five counts (an earlier gateway's) reads with 0 of each cause, and is written back with nine", async () => {
    const { store } = redis.world();
    const p = redis.prefix();
    const c = redis.client();
    const d = today();
    const route = 'blocks/{block_hash_or_number_param}';
    const hash = `${p}usage:{${d}}:key:key_a`;
    // As a gateway before the counters by cause wrote them: requests, credits, cacheHits, refused, errors.
    await c.sadd(`${p}usage:{${d}}:keys`, 'key_a');
    await c.hset(hash, { [`1|${route}`]: '7 140 2 3 1', '1|stats': '1 20 0 0 0' });
    expect(await store.usage.listUsage({ from: d, to: d })).toEqual([
      row(d, 'key_a', '1', route, { requests: 7, credits: 140, cacheHits: 2, refused: 3, errors: 1 }),
      row(d, 'key_a', '1', 'stats', { requests: 1, credits: 20 }),
    ]);
    const id = batch();
    const added = [
      row(d, 'key_a', '1', route, { requests: 3, refused: 3, rateLimited: 1, outOfCredits: 1, forbidden: 1, clientErrors: 2 }),
    ];
    await store.usage.addUsage(added, id);
    await store.usage.addUsage(added, id);
    expect(await c.hgetall(hash)).toEqual({ [`1|${route}`]: '10 140 2 6 1 1 1 1 2', '1|stats': '1 20 0 0 0' });
    expect(await store.usage.listUsage({ from: d, to: d })).toEqual([
      row(d, 'key_a', '1', route, {
        requests: 10,
        credits: 140,
        cacheHits: 2,
        refused: 6,
        errors: 1,
        rateLimited: 1,
        outOfCredits: 1,
        forbidden: 1,
        clientErrors: 2,
      }),
      row(d, 'key_a', '1', 'stats', { requests: 1, credits: 20 }),
    ]);
    // A value of neither five nor nine counts is no row of this store's: skipped when read, and an
    // error when added to, which leaves the hash as it was.
    await c.hset(hash, '1|stats', '1 20 0 0 0 0');
    expect(await store.usage.listUsage({ from: d, to: d, route: 'stats' })).toEqual([]);
    await expect(store.usage.addUsage([row(d, 'key_a', '1', 'stats', { requests: 1 })], batch())).rejects.toThrow(
      'not five or nine counts',
    );
    expect(await c.hget(hash, '1|stats')).toBe('1 20 0 0 0 0');
  });

  it("usage an earlier gateway wrote in one hash per day is listed, summed with this layout's rows, and pruned", async () => {
    const { store } = redis.world();
    const p = redis.prefix();
    const c = redis.client();
    const [d0, d1] = [today(-1), today()];
    const route = 'blocks/{block_hash_or_number_param}';
    // As that gateway wrote them: `<keyId>|<chain>|<route>|<counter>`, parts encodeURIComponent'ed.
    const field = (keyId: string, chain: string, r: string, counter: string) =>
      [keyId, chain, r].map(encodeURIComponent).join('|') + `|${counter}`;
    await c.hset(`${p}usage:{${d0}}`, {
      [field('key_a', '1', route, 'requests')]: '3',
      [field('key_a', '1', route, 'credits')]: '60',
      [field('key_b', '1', 'stats', 'requests')]: '1',
    });
    await c.hset(`${p}usage:{${d1}}`, { [field('key_a', '1', route, 'requests')]: '2', [field('key_a', '1', route, 'errors')]: '1' });
    await store.usage.addUsage(
      [row(d1, 'key_a', '1', route, { requests: 5, credits: 100 }), row(d1, 'key_c', '1', 'stats', { requests: 1 })],
      batch(),
    );
    const a0 = row(d0, 'key_a', '1', route, { requests: 3, credits: 60 });
    const b0 = row(d0, 'key_b', '1', 'stats', { requests: 1 });
    const a1 = row(d1, 'key_a', '1', route, { requests: 7, credits: 100, errors: 1 });
    const c1 = row(d1, 'key_c', '1', 'stats', { requests: 1 });
    expect(await store.usage.listUsage({ from: d0, to: d1 })).toEqual([a0, b0, a1, c1]);
    expect(await store.usage.listUsage({ from: d0, to: d1, keyIds: new Set(['key_a']) })).toEqual([a0, a1]);
    expect(await store.usage.listUsage({ from: d0, to: d1, keyIds: new Set(['key_b', 'key_c']), route: 'stats' })).toEqual([b0, c1]);
    await store.usage.pruneUsage(d1);
    expect(await c.exists(`${p}usage:{${d0}}`)).toBe(0);
    expect(await store.usage.listUsage({ from: d0, to: d1 })).toEqual([a1, c1]);
  });

  it.each([redis, cluster])(
    '$name: a batch of several script calls, sent again after only its first ran, adds each row once',
    async (b) => {
      const { store } = b.world();
      const d = today();
      const rows = Array.from({ length: 2 * USAGE_ROWS_PER_CALL + 7 }, (_, i) =>
        row(d, `key_${String(Math.floor(i / 3)).padStart(4, '0')}`, '1', `route-${i % 3}`, { requests: 1, credits: i }),
      );
      const id = batch();
      // The batch's rows are cut into calls in order: its first rows are its first call.
      await store.usage.addUsage(rows.slice(0, USAGE_ROWS_PER_CALL), id);
      await store.usage.addUsage(rows, id);
      await store.usage.addUsage(rows, id);
      expect(await store.usage.listUsage({ from: d, to: d })).toEqual(rows);
    },
  );

  it.each([redis, cluster])(
    '$name: a day row and its hours go in one script call: a batch whose first call alone ran, sent again, keeps every day equal to its hours',
    async (b) => {
      const { store } = b.world();
      const d = today();
      // Each day row with its three hours: 4 rows a unit, USAGE_ROWS_PER_CALL / 4 units a call.
      const deltas = Array.from({ length: 3 * USAGE_ROWS_PER_CALL }, (_, i) => ({
        ...row(d, 'key_u', '1', `route-${String(Math.floor(i / 3)).padStart(3, '0')}`, { requests: 1, credits: i }),
        hour: `${d}T${String(10 + (i % 3))}:00:00Z`,
      }));
      const id = batch();
      await store.usage.addUsage(deltas.slice(0, (USAGE_ROWS_PER_CALL / 4) * 3), id);
      const first = await store.usage.listUsage({ from: d, to: d });
      expect(first).toHaveLength(USAGE_ROWS_PER_CALL / 4);
      expect((await store.usage.listUsage({ from: d, to: d, granularity: 'hour' })).length).toBe(3 * first.length);
      await store.usage.addUsage(deltas, id);
      await store.usage.addUsage(deltas, id);
      const daily = await store.usage.listUsage({ from: d, to: d });
      const hourly = await store.usage.listUsage({ from: d, to: d, granularity: 'hour' });
      expect(daily).toHaveLength(USAGE_ROWS_PER_CALL);
      expect(hourly).toHaveLength(3 * USAGE_ROWS_PER_CALL);
      for (const r of daily) {
        const hours = hourly.filter((h) => h.route === r.route);
        expect(hours.map((h) => h.hour)).toEqual([`${d}T10:00:00Z`, `${d}T11:00:00Z`, `${d}T12:00:00Z`]);
        expect([hours.reduce((n, h) => n + h.requests, 0), hours.reduce((n, h) => n + h.credits, 0)]).toEqual([r.requests, r.credits]);
        expect(r.requests).toBe(3);
      }
    },
  );

  it('lays out hourly rows and accounts as documented at the top of src/store/redis.ts, each hour hash with its own retention', async () => {
    redis.world();
    const p = redis.prefix();
    const c = redis.client();
    const store = new RedisStore(c, p, () => c.duplicate(), { retentionDays: 30, hourlyRetentionDays: 5 });
    cleanups.push(() => store.close());
    const d = today();
    const old = today(-10); // past the hourly retention, within the daily one
    await store.usage.addUsage(
      [
        { ...row(d, 'key_l', '1', 'a|b', { requests: 2, credits: 40 }), hour: `${d}T07:00:00Z` },
        { ...row(d, 'key_l', '1', 'a|b', { requests: 1 }), account: 'acc_l', hour: `${d}T08:00:00Z` },
        { ...row(old, 'key_l', '1', 'stats', { requests: 1 }), hour: `${old}T08:00:00Z` },
      ],
      batch(),
    );
    expect(await c.hgetall(`${p}usage:{${d}}:key:key_l`)).toEqual({
      '1|a%7Cb': '2 40 0 0 0 0 0 0 0',
      '1|a%7Cb|acc_l': '1 0 0 0 0 0 0 0 0',
    });
    expect(await c.hgetall(`${p}usage:{${d}}:hour:key_l`)).toEqual({
      '07|1|a%7Cb': '2 40 0 0 0 0 0 0 0',
      '08|1|a%7Cb|acc_l': '1 0 0 0 0 0 0 0 0',
    });
    const hourTtl = await c.pttl(`${p}usage:{${d}}:hour:key_l`);
    expect(hourTtl).toBeLessThanOrEqual(dayEnd(d) + 5 * DAY_MS - Date.now() + 1_000);
    expect(hourTtl).toBeGreaterThan(dayEnd(d) + 5 * DAY_MS - Date.now() - 5_000);
    expect(await c.pttl(`${p}usage:{${d}}:key:key_l`)).toBeGreaterThan(dayEnd(d) + 29 * DAY_MS - Date.now());
    // A day past the hourly retention: its day row, no hourly row.
    expect(await c.exists(`${p}usage:{${old}}:key:key_l`)).toBe(1);
    expect(await c.exists(`${p}usage:{${old}}:hour:key_l`)).toBe(0);
    await store.usage.pruneHourlyUsage(today(1));
    expect(await c.exists(`${p}usage:{${d}}:hour:key_l`)).toBe(0);
    expect(await c.exists(`${p}usage:{${d}}:key:key_l`, `${p}usage:{${d}}:keys`)).toBe(2);
  });

  it('an audit entry older than the last one is kept, at its own instant, and the lag it caused is remembered', async () => {
    const { store } = redis.world();
    const p = redis.prefix();
    await store.audit.appendAudit({ at: 5_000, action: 'create', actor: 'ops', keyId: 'key_a', before: null, after: null });
    await store.audit.appendAudit({ at: 3_000, action: 'update', actor: 'ops', keyId: 'key_a', before: null, after: null });
    expect((await redis.client().xrange(`${p}{keys}:audit`, '-', '+')).map(([id]) => id)).toEqual(['5000-0', '5000-1']);
    expect(await redis.client().get(`${p}{keys}:audit:lag`)).toBe('2000');
    expect((await store.audit.listAudit({ from: 3_000, to: 3_000 })).map((e) => e.action)).toEqual(['update']);
    await expect(
      store.audit.appendAudit({ at: -1, action: 'create', actor: 'ops', keyId: 'key_a', before: null, after: null }),
    ).rejects.toThrow(RangeError);
    // A key write's entry is shifted the same way, inside its script.
    const k = key();
    await store.keys.createKey(k, { at: 4_000, action: 'create', actor: 'ops', keyId: k.id, before: null, after: null });
    expect((await store.audit.listAudit({ from: 4_000, to: 4_000 })).map((e) => e.keyId)).toEqual([k.id]);
  });

  it('a key write whose audit entry Redis refuses inside the script (the stream key of another type) writes nothing of the key', async () => {
    const { store } = redis.world();
    const p = redis.prefix();
    const c = redis.client();
    const a = key();
    expect(await store.keys.createKey(a, note('create'))).toBe(true);
    // Scripts are not rolled back on an error: the entry is appended before the key is written.
    await c.del(`${p}{keys}:audit`);
    await c.set(`${p}{keys}:audit`, 'not a stream');
    const b = key();
    await expect(store.keys.createKey(b, note('create'))).rejects.toThrow(/WRONGTYPE/);
    await expect(store.keys.updateKey({ ...a, name: 'renamed', plan: 'pro' }, note('update'))).rejects.toThrow(/WRONGTYPE/);
    await expect(store.keys.deleteKey(a.id, note('revoke'))).rejects.toThrow(/WRONGTYPE/);
    expect(await store.keys.listKeys()).toEqual([a]);
    expect(await c.exists(`${p}{keys}:key:${b.id}`, `${p}{keys}:name:${b.name}`, `${p}{keys}:name:renamed`)).toBe(0);
    expect(await c.get(`${p}{keys}:name:${a.name}`)).toBe(a.id);
  });

  it('the audit trail an earlier gateway wrote at {audit} is still listed, merged by instant with the new one', async () => {
    const { store } = redis.world();
    const p = redis.prefix();
    const c = redis.client();
    const old = { at: 2_000, action: 'create', keyId: 'key_old', before: null, after: { name: 'old' } };
    const shifted = { at: 1_500, action: 'update', keyId: 'key_old', before: null, after: null };
    // As the gateway before the key scripts wrote them: `<at>-*` ids, a lag for a shifted entry.
    await c.xadd(`${p}{audit}`, '2000-*', 'e', JSON.stringify(old));
    await c.xadd(`${p}{audit}`, '2000-*', 'e', JSON.stringify(shifted));
    await c.set(`${p}{audit}:lag`, '500');
    const now: AuditEntry = { at: 1_800, action: 'credits', actor: 'ops', keyId: 'key_new', before: null, after: null };
    await store.audit.appendAudit(now);
    expect(await store.audit.listAudit({ from: 0, to: 10_000 })).toEqual([{ ...shifted, actor: null }, now, { ...old, actor: null }]);
    expect(await store.audit.listAudit({ from: 1_500, to: 1_500 })).toEqual([{ ...shifted, actor: null }]);
    expect(await store.audit.listAudit({ from: 0, to: 10_000, keyId: 'key_new' })).toEqual([now]);
  });
});

// --- SQLite only ---

/**
 * A file of the current schema taken back to version 7 (src/store/sqlite.ts, SCHEMA_V8 and after):
 * the tables of later versions dropped, the usage table without its account (its rows of no account kept).
 */
function backToVersion7(db: Database.Database): void {
  const v7 = new Set(['audit', 'keys', 'ledgers', 'meta', 'objects', 'sqlite_sequence', 'usage', 'usage_batches']);
  for (const t of db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()) {
    if (!v7.has(t)) db.exec(`DROP TABLE "${t}"`);
  }
  db.exec(`CREATE TABLE usage_v7 (day TEXT NOT NULL, key_id TEXT NOT NULL, chain TEXT NOT NULL, route TEXT NOT NULL,
      requests INTEGER NOT NULL, credits INTEGER NOT NULL, cache_hits INTEGER NOT NULL, refused INTEGER NOT NULL, errors INTEGER NOT NULL,
      rate_limited INTEGER NOT NULL DEFAULT 0, out_of_credits INTEGER NOT NULL DEFAULT 0, forbidden INTEGER NOT NULL DEFAULT 0,
      client_errors INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (day, key_id, chain, route)) STRICT, WITHOUT ROWID;
    INSERT INTO usage_v7 SELECT day, key_id, chain, route, requests, credits, cache_hits, refused, errors,
      rate_limited, out_of_credits, forbidden, client_errors FROM usage WHERE account = '';
    DROP TABLE usage;
    ALTER TABLE usage_v7 RENAME TO usage;`);
  db.pragma('user_version = 7');
}

describe('SQLite store', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'egw-sqlite-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a store reopened on the same file keeps its keys, audit, usage and ledgers', async () => {
    const file = join(dir, 'reopen', 'store.db');
    const first = new SqliteStore(file);
    const a = key({ chains: ['1'], previous: { digest: 'cd'.repeat(32), until: 1_790_000_000_000 } });
    const audit: AuditEntry = { at: 1_790_000_000_000, action: 'create', actor: 'ops', keyId: a.id, before: null, after: { name: a.name } };
    const usage = row(today(), a.id, '1', 'stats', { requests: 3, credits: 60, cacheHits: 1, refused: 1, errors: 1 });
    const ledgers = [
      { account: 'acct-1', day: 'd20261123', daySpent: 20, month: 'm202611', monthSpent: 120, topup: 5_000 },
      { account: 'acct-2', day: 'd20261123', daySpent: 0, month: 'm202611', monthSpent: 0, topup: 0 },
    ];
    const created = note('create');
    await first.keys.createKey(a, created);
    await first.audit.appendAudit(audit);
    await first.usage.addUsage([usage], batch());
    await first.ledgers.saveLedgers(ledgers);
    await first.close();

    const second = new SqliteStore(file);
    cleanups.push(() => second.close());
    expect(await second.keys.listKeys()).toEqual([a]);
    expect(await second.audit.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER })).toEqual([audit, created]);
    expect(await second.usage.listUsage({ from: today(), to: today() })).toEqual([usage]);
    expect(await second.ledgers.loadLedgers()).toEqual(ledgers);
  });

  it('a ledger batch is one transaction: a row that cannot be stored leaves none of the batch', async () => {
    const store = new SqliteStore(':memory:');
    cleanups.push(() => store.close());
    await store.ledgers.saveLedgers([{ account: 'a', day: 'd20261130', daySpent: 10, month: 'm202611', monthSpent: 10, topup: 100 }]);
    // A fractional spend is not an INTEGER.
    await expect(
      store.ledgers.saveLedgers([
        { account: 'd', day: 'd20261130', daySpent: 1, month: 'm202611', monthSpent: 1, topup: 0 },
        { account: 'e', day: 'd20261130', daySpent: 1, month: 'm202611', monthSpent: 1.5, topup: 0 },
      ]),
    ).rejects.toThrow();
    expect((await store.ledgers.loadLedgers()).map((l) => l.account)).toEqual(['a']);
  });

  it('a usage batch is one transaction: a row that cannot be stored leaves none of the batch', async () => {
    const store = new SqliteStore(':memory:');
    cleanups.push(() => store.close());
    await expect(
      store.usage.addUsage(
        [row(today(), 'key_a', '1', 'stats', { requests: 1 }), row(today(), 'key_b', '1', 'stats', { requests: 0.5 })],
        batch(),
      ),
    ).rejects.toThrow();
    expect(await store.usage.listUsage({ from: today(), to: today() })).toEqual([]);
  });

  it('makes the directory of its file, and writes the file in WAL mode at the schema version', async () => {
    const file = join(dir, 'fresh', 'nested', 'store.db');
    expect(existsSync(join(dir, 'fresh'))).toBe(false);
    const store = new SqliteStore(file);
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
      expect(SQLITE_SCHEMA_VERSION).toBe(9);
      expect(db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all()).toEqual([
        'audit',
        'keys',
        'ledgers',
        'meta',
        'objects',
        'sqlite_sequence',
        'usage',
        'usage_batches',
        'usage_hours',
        'webhook_deliveries',
      ]);
    } finally {
      db.close();
    }
  });

  it('refuses a file written by a newer schema version rather than misread it', () => {
    const file = join(dir, 'newer', 'store.db');
    mkdirSync(join(dir, 'newer'));
    const db = new Database(file);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => new SqliteStore(file)).toThrow(
      `the store file has schema version ${SQLITE_SCHEMA_VERSION + 1}; this gateway knows up to ${SQLITE_SCHEMA_VERSION}`,
    );
  });

  it('brings a version 1 file to the current version, keeping its usage', async () => {
    const file = join(dir, 'v1', 'store.db');
    const first = new SqliteStore(file);
    const usage = row(today(), 'key_v1', '1', 'stats', { requests: 3 });
    await first.usage.addUsage([usage], batch());
    await first.close();
    const db = new Database(file);
    // What version 1 did not have, its usage table of five counters, and its ledgers table of one period's spend.
    backToVersion7(db);
    db.exec(`DROP TABLE usage_batches; DROP TABLE meta; DROP TABLE ledgers;
      ALTER TABLE keys DROP COLUMN terms; ALTER TABLE audit DROP COLUMN actor; DROP TABLE objects;
      ALTER TABLE usage DROP COLUMN rate_limited; ALTER TABLE usage DROP COLUMN out_of_credits;
      ALTER TABLE usage DROP COLUMN forbidden; ALTER TABLE usage DROP COLUMN client_errors;
      CREATE TABLE ledgers (account TEXT PRIMARY KEY, period_id TEXT NOT NULL, spent INTEGER NOT NULL, topup INTEGER NOT NULL) STRICT;`);
    db.pragma('user_version = 1');
    db.close();
    const second = new SqliteStore(file);
    cleanups.push(() => second.close());
    expect(await second.usage.listUsage({ from: today(), to: today() })).toEqual([usage]);
    const again = batch();
    await second.usage.addUsage([usage], again);
    await second.usage.addUsage([usage], again);
    expect((await second.usage.listUsage({ from: today(), to: today() }))[0]?.requests).toBe(6);
  });

  it('brings a version 7 file to version 8: its usage rows stay, under no account and with no hourly rows; later rows have both', async () => {
    const file = join(dir, 'v7', 'store.db');
    const first = new SqliteStore(file);
    const d = today();
    const old = row(d, 'key_v7', '1', 'stats', { requests: 3, credits: 60, refused: 1, rateLimited: 1 });
    await first.usage.addUsage([{ ...old, hour: `${d}T05:00:00Z` }], batch());
    await first.close();
    const db = new Database(file);
    backToVersion7(db);
    db.close();

    const second = new SqliteStore(file);
    cleanups.push(() => second.close());
    expect(await second.usage.listUsage({ from: d, to: d })).toEqual([old]);
    expect(await second.usage.listUsage({ from: d, to: d, granularity: 'hour' })).toEqual([]);
    const mine = { ...row(d, 'key_v7', '1', 'stats', { requests: 2, credits: 40 }), account: 'acc_v7' };
    const none = row(d, 'key_v7', '1', 'stats', { requests: 1, credits: 20 });
    await second.usage.addUsage(
      [
        { ...mine, hour: `${d}T07:00:00Z` },
        { ...none, hour: `${d}T07:00:00Z` },
      ],
      batch(),
    );
    expect(await second.usage.listUsage({ from: d, to: d })).toEqual([{ ...old, requests: 4, credits: 80 }, mine]);
    expect(await second.usage.listUsage({ from: d, to: d, granularity: 'hour' })).toEqual([
      { ...none, hour: `${d}T07:00:00Z` },
      { ...mine, hour: `${d}T07:00:00Z` },
    ]);
    const check = new Database(file, { readonly: true });
    try {
      expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    } finally {
      check.close();
    }
  });

  it('brings a version 3 file to the current version: each ledger keeps its spend, as its day or month counter, under its row name', async () => {
    // A file as a gateway of schema 3 wrote it: its SQL (src/store/sqlite.ts at version 3, the
    // ledgers keeping one period's spend), a ledger_secret, rows named by HMAC-SHA256 under it.
    const file = join(dir, 'v3', 'store.db');
    mkdirSync(join(dir, 'v3'));
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(`
      CREATE TABLE keys (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, owner TEXT, plan TEXT NOT NULL, chains TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'disabled')), expires_at INTEGER, created_at INTEGER NOT NULL,
        prefix TEXT NOT NULL, digest TEXT NOT NULL, previous_digest TEXT, previous_until INTEGER) STRICT;
      CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, action TEXT NOT NULL, key_id TEXT NOT NULL,
        before TEXT, after TEXT) STRICT;
      CREATE INDEX audit_at ON audit (at);
      CREATE INDEX audit_key_at ON audit (key_id, at);
      CREATE TABLE usage (day TEXT NOT NULL, key_id TEXT NOT NULL, chain TEXT NOT NULL, route TEXT NOT NULL, requests INTEGER NOT NULL,
        credits INTEGER NOT NULL, cache_hits INTEGER NOT NULL, refused INTEGER NOT NULL, errors INTEGER NOT NULL,
        PRIMARY KEY (day, key_id, chain, route)) STRICT, WITHOUT ROWID;
      CREATE TABLE ledgers (account TEXT PRIMARY KEY, period_id TEXT NOT NULL, spent INTEGER NOT NULL, topup INTEGER NOT NULL) STRICT;
      CREATE TABLE usage_batches (id TEXT PRIMARY KEY, at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
      CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
    `);
    const secret = randomBytes(32);
    db.prepare("INSERT INTO meta (name, value) VALUES ('ledger_secret', ?)").run(secret.toString('hex'));
    const seal = (account: string) => createHmac('sha256', secret).update(account, 'utf8').digest('hex');
    const now = Date.now();
    const day = periodWindow('daily', now).id;
    const month = periodWindow('monthly', now).id;
    const insert = db.prepare<[string, string, number, number]>(
      'INSERT INTO ledgers (account, period_id, spent, topup) VALUES (?, ?, ?, ?)',
    );
    insert.run(seal('on-monthly'), month, 400, 0);
    insert.run(seal('on-daily'), day, 250, 10);
    insert.run(seal('bought-only'), '', 0, 70);
    db.pragma('user_version = 3');
    db.close();

    const store = new SqliteStore(file);
    cleanups.push(() => store.close());
    expect(store.sealAccount('on-monthly')).toBe(seal('on-monthly'));
    const rows = [
      { account: seal('on-monthly'), day: '', daySpent: 0, month, monthSpent: 400, topup: 0 },
      // What was spent that day was spent in its month.
      { account: seal('on-daily'), day, daySpent: 250, month, monthSpent: 250, topup: 10 },
      { account: seal('bought-only'), day: '', daySpent: 0, month: '', monthSpent: 0, topup: 70 },
    ];
    expect(await store.ledgers.loadLedgers()).toEqual([...rows].sort((a, b) => (a.account < b.account ? -1 : 1)));
    const quota = new MemoryQuotaStore(store);
    await quota.start();
    expect(await quota.balance('on-monthly', 'monthly', now)).toEqual({ spent: 400, topup: 0, periodId: month });
    expect(await quota.balance('on-daily', 'daily', now)).toEqual({ spent: 250, topup: 10, periodId: day });
    expect(await quota.balance('on-daily', 'monthly', now)).toEqual({ spent: 250, topup: 10, periodId: month });
    expect(await quota.balance('bought-only', 'monthly', now)).toEqual({ spent: 0, topup: 70, periodId: month });
    await quota.close();
  });

  it('calls the watcher after its own writes, never from inside them', async () => {
    const store = new SqliteStore(':memory:');
    cleanups.push(() => store.close());
    const heard: string[] = [];
    store.keys.watchKeys(
      (id) => heard.push(id),
      () => expect.unreachable('SQLite never asks for a resync'),
    );
    const a = key();
    const written = store.keys.createKey(a, note('create'));
    expect(heard).toEqual([]); // the write has happened; its notice is queued
    expect(await written).toBe(true);
    await Promise.resolve();
    expect(heard).toEqual([a.id]);
  });
});
