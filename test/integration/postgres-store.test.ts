// What only the PostgreSQL store promises, against a real PostgreSQL (test/support/postgres.ts):
// its schema migrated by gateways starting together, a newer schema refused, a database down at
// start or gone silent, a LISTEN connection killed and its resync, NOTIFY between gateways, a key
// write and its audit entry in one transaction, usage batches added at most once, ledgers. The
// contract every backend shares is test/contracts/store.test.ts.
//
// Nothing sleeps: a test that expects a notice waits for it (`until`), with a deadline of a
// second where the promise is "within a second".
import { NO_TERMS, zeroCounts } from '../../src/store/records.js';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { POSTGRES_SCHEMA_VERSION, PostgresStore, type PostgresStoreOptions } from '../../src/store/postgres.js';
import type { AuditEntry, KeyRecord, LedgerRow, UsageRow } from '../../src/store/types.js';
import { dumpSchema } from '../contracts/postgres-backend.js';
import { POSTGRES_URL, quoted, testSchemas, withClient } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const today = (n = 0) => utcDay(Date.now() + n * DAY_MS);
const batch = () => `batch-${randomUUID()}`;

let serial = 0;
function key(over: Partial<KeyRecord> = {}): KeyRecord {
  const secret = `egw_${randomBytes(32).toString('base64url')}`;
  const n = serial++;
  return {
    id: `key_${randomBytes(10).toString('hex').slice(0, 16)}`,
    name: `team ${n}`,
    owner: null,
    plan: 'small',
    chains: null,
    status: 'active',
    expiresAt: null,
    createdAt: 1_790_000_000_000 + n,
    prefix: secret.slice(0, 12),
    digest: createHash('sha256').update(secret).digest('hex'),
    previous: null,
    ...NO_TERMS,
    ...over,
  };
}

function audit(action: AuditEntry['action'], record: KeyRecord, at = 1_790_000_000_000 + serial++): AuditEntry {
  return { at, action, actor: 'ops', keyId: record.id, before: null, after: { name: record.name, plan: record.plan } };
}

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

const schemas = testSchemas('pgstore');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => schemas.dropAll());

/** The warnings a store logged. */
type Warnings = { msg: string; obj: object }[];

function open(schema: string, options: PostgresStoreOptions & { url?: string; warnings?: Warnings } = {}): PostgresStore {
  const { url = POSTGRES_URL, warnings = [], ...rest } = options;
  const store = new PostgresStore(url, { schema, log: { warn: (obj, msg) => warnings.push({ obj, msg }) }, ...rest });
  cleanups.push(() => store.close());
  return store;
}

/** A loopback proxy in front of the test database, and the database URL through it. */
async function proxied(): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(POSTGRES_URL);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  cleanups.push(() => proxy.close());
  const url = new URL(POSTGRES_URL);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return { proxy, url: url.href };
}

/**
 * Waits until `heard` holds a write made through `writer` (the watcher is listening), and
 * returns the probe key's id, for the test to leave out of what it counts.
 */
async function listening(writer: PostgresStore, heard: string[]): Promise<string> {
  const probe = key();
  expect(await writer.createKey(probe, audit('create', probe))).toBe(true);
  await until(async () => {
    if (heard.includes(probe.id)) return true;
    const moved = { ...probe, plan: `p${serial++}` };
    await writer.updateKey(moved, audit('update', moved));
    return false;
  }, 'the watcher to hear of the probe key');
  return probe.id;
}

/** One row per version applied, from 1. */
const allVersions = Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => ({ version: i + 1 }));
const versions = (schema: string) =>
  withClient(
    async (c) => (await c.query<{ version: number }>(`SELECT version FROM ${quoted(schema)}.schema_version ORDER BY version`)).rows,
  );

describe('PostgreSQL store: schema', () => {
  it('gateways starting at once on a fresh schema all migrate it, and each version is recorded once', async () => {
    const schema = schemas.fresh();
    const stores = Array.from({ length: 4 }, () => open(schema));
    // Their first calls at once: each runs the migration, under the schema's advisory lock.
    expect(await Promise.all(stores.map((s) => s.listKeys()))).toEqual([[], [], [], []]);
    expect(await versions(schema)).toEqual(allVersions);
    const tables = await withClient(
      async (c) =>
        (
          await c.query<{ table_name: string }>(
            'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
            [schema],
          )
        ).rows,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'audit',
      'keys',
      'ledgers',
      'meta',
      'objects',
      'schema_version',
      'usage',
      'usage_batches',
      'usage_hours',
      'webhook_deliveries',
    ]);
    // One schema: a key one writes, another reads.
    const a = key();
    expect(await stores[0]!.createKey(a, audit('create', a))).toBe(true);
    expect(await stores[3]!.getKey(a.id)).toEqual(a);
    // A gateway started later finds the schema at its version, and changes nothing.
    const later = open(schema);
    expect(await later.listKeys()).toEqual([a]);
    expect(await versions(schema)).toEqual(allVersions);
  });

  it('refuses a schema of a newer version than it knows, with a clear error, on every call', async () => {
    const schema = schemas.fresh();
    await open(schema).migrate();
    const newer = POSTGRES_SCHEMA_VERSION + 1;
    await withClient((c) => c.query(`INSERT INTO ${quoted(schema)}.schema_version (version) VALUES ($1)`, [newer]));
    const store = open(schema);
    const refusal = `the PostgreSQL schema ${schema} has schema version ${newer}; this gateway knows up to ${POSTGRES_SCHEMA_VERSION}: run a newer gateway`;
    await expect(store.listKeys()).rejects.toThrow(refusal);
    const a = key();
    await expect(store.createKey(a, audit('create', a))).rejects.toThrow(refusal);
    await expect(store.ping()).rejects.toThrow(refusal);
    expect(await withClient(async (c) => (await c.query<{ id: string }>(`SELECT id FROM ${quoted(schema)}.keys`)).rows)).toEqual([]);
  });
});

describe('PostgreSQL store: a database away', () => {
  it('a store whose database is unreachable at start is made all the same, rejects calls quickly, and works once it is reachable', async () => {
    const { proxy, url } = await proxied();
    await proxy.cut(); // the port refuses connections
    const schema = schemas.fresh();
    const warnings: Warnings = [];
    const store = open(schema, { url, warnings });
    const a = key();
    for (const call of [
      () => store.listKeys(),
      () => store.createKey(a, audit('create', a)),
      () => store.addUsage([row(today(), a.id, '1', 'stats', { requests: 1 })], batch()),
      () => store.ping(),
    ]) {
      const started = Date.now();
      await expect(call()).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(3_000);
    }
    await proxy.restore();
    // The failed migration is tried again by the next call.
    expect(await store.createKey(a, audit('create', a))).toBe(true);
    await store.ping();
    expect(await open(schema).getKey(a.id)).toEqual(a);
  });

  it('a database that stops answering makes calls reject within the timeouts instead of hanging, and the store recovers', async () => {
    const { proxy, url } = await proxied();
    const schema = schemas.fresh();
    const store = open(schema, { url });
    const a = key();
    expect(await store.createKey(a, audit('create', a))).toBe(true); // a pooled connection is open
    proxy.hang();
    let started = Date.now();
    await expect(store.getKey(a.id)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(8_000);
    started = Date.now();
    await expect(store.ping()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(4_000);
    await proxy.restore();
    expect(await until(() => store.getKey(a.id).catch(() => undefined), 'the store back')).toEqual(a);
  });
});

describe('PostgreSQL store: key notices', () => {
  it('a listener whose connection is killed connects again, asks for a resync once it listens, and hears changes again', async () => {
    const schema = schemas.fresh();
    const warnings: Warnings = [];
    const watcher = open(schema, { warnings });
    const writer = open(schema);
    const heard: string[] = [];
    let resyncs = 0;
    watcher.watchKeys(
      (id) => heard.push(id),
      () => resyncs++,
    );
    await listening(writer, heard);
    expect(resyncs).toBe(0); // not on the first connect

    const kill = () =>
      withClient(
        async (c) =>
          (
            await c.query<{ killed: boolean }>(
              'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1',
              [watcher.listenerName],
            )
          ).rows,
      );
    expect(await kill()).toEqual([{ killed: true }]);
    await until(() => resyncs === 1, 'a resync after the listener came back');
    // LISTEN was back before the resync was asked for: a change now is heard, without retries.
    const a = key();
    await writer.createKey(a, audit('create', a));
    await until(() => heard.includes(a.id), 'a change after the resync', 1_000);
    expect(warnings.map((w) => w.msg)).toContain('PostgreSQL key listener lost; connecting again');

    expect(await kill()).toEqual([{ killed: true }]);
    await until(() => resyncs === 2, 'a resync after the second loss');
    const moved = { ...a, plan: 'pro' };
    await writer.updateKey(moved, audit('update', moved));
    await until(() => heard.filter((id) => id === a.id).length === 2, 'a change after the second resync', 1_000);
  });

  it('NOTIFY of each write through another gateway reaches the watcher within a second, on commit only, and never crosses schemas', async () => {
    const schema = schemas.fresh();
    const watcher = open(schema);
    const writer = open(schema);
    const elsewhere = open(schemas.fresh());
    const heard: string[] = [];
    watcher.watchKeys(
      (id) => heard.push(id),
      () => expect.unreachable('no connection was lost'),
    );
    const probe = await listening(writer, heard);
    const a = key();
    const b = key();
    expect(await writer.createKey(a, audit('create', a))).toBe(true);
    await until(() => heard.includes(a.id), 'the create', 1_000);
    // Refused writes: a name taken, a key gone. Their transactions notify no one.
    const taken = key({ name: a.name });
    expect(await writer.createKey(taken, audit('create', taken))).toBe(false);
    const disabled = { ...a, status: 'disabled' as const };
    expect(await writer.updateKey(disabled, audit('update', disabled))).toBe(true);
    await until(() => heard.filter((id) => id === a.id).length === 2, 'the update', 1_000);
    expect(await writer.deleteKey(a.id, audit('revoke', a))).toBe(true);
    await until(() => heard.filter((id) => id === a.id).length === 3, 'the delete', 1_000);
    expect(await writer.deleteKey(a.id, audit('revoke', a))).toBe(false);
    // Another schema's write, committed before b's: were it heard, it would come before b.
    const other = key();
    expect(await elsewhere.createKey(other, audit('create', other))).toBe(true);
    // The watcher's own writes are heard too.
    expect(await watcher.createKey(b, audit('create', b))).toBe(true);
    await until(() => heard.includes(b.id), 'the last create', 1_000);
    expect(heard.filter((id) => id !== probe)).toEqual([a.id, a.id, a.id, b.id]);
  });

  it('a key write and its audit entry are one transaction: when the entry cannot be stored, neither is, and no one is told', async () => {
    const schema = schemas.fresh();
    const store = open(schema);
    const heard: string[] = [];
    store.watchKeys(
      (id) => heard.push(id),
      () => {},
    );
    // An entry the database refuses (key_id NOT NULL), written after the key in the transaction.
    const broken = (record: KeyRecord): AuditEntry => ({ ...audit('update', record), keyId: null as unknown as string });
    const a = key();
    await expect(store.createKey(a, broken(a))).rejects.toThrow();
    expect(await store.getKey(a.id)).toBeUndefined();
    expect(await store.createKey(a, audit('create', a))).toBe(true);
    const moved = { ...a, plan: 'pro' };
    await expect(store.updateKey(moved, broken(moved))).rejects.toThrow();
    expect(await store.getKey(a.id)).toEqual(a);
    await expect(store.deleteKey(a.id, broken(a))).rejects.toThrow();
    expect(await store.getKey(a.id)).toEqual(a);
    // What the other backends answer: an id that exists, a key that does not.
    await expect(store.createKey(key({ id: a.id }), audit('create', a))).rejects.toThrow(`key id ${a.id} exists`);
    const ghost = key();
    await expect(store.updateKey(ghost, audit('update', ghost))).rejects.toThrow(`no run-time key ${ghost.id}`);
    expect((await store.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER })).map((e) => e.action)).toEqual(['create']);
    // The one write that was stored is the one heard.
    await until(() => heard.includes(a.id), 'the create', 1_000);
    const c = key();
    expect(await store.createKey(c, audit('create', c))).toBe(true);
    await until(() => heard.includes(c.id), 'the next create', 1_000);
    expect(heard).toEqual([a.id, c.id]);
  });
});

describe('PostgreSQL store: usage and ledgers', () => {
  it('a usage batch sent twice, even through two gateways at once, adds once; its id is forgotten after an hour', async () => {
    const schema = schemas.fresh();
    let now = Date.now();
    const clock = () => now;
    const one = open(schema, { now: clock });
    const two = open(schema, { now: clock });
    const d = today();
    // Beyond 32 bits: BIGINT columns, read back as numbers.
    const rows = [
      row(d, 'key_a', '1', 'stats', { requests: 2, credits: 3_000_000_000, cacheHits: 1 }),
      row(d, 'key_a', '1', 'stats', { requests: 1, credits: 1 }), // the same row twice in one batch: summed
      row(d, 'Key_B', '10', 'blocks/{block_hash_or_number_param}', { requests: 1, refused: 1, errors: 1 }),
    ];
    const id = batch();
    await Promise.all([one.addUsage(rows, id), two.addUsage(rows, id)]);
    await one.addUsage(rows, id);
    const once = [
      row(d, 'Key_B', '10', 'blocks/{block_hash_or_number_param}', { requests: 1, refused: 1, errors: 1 }),
      row(d, 'key_a', '1', 'stats', { requests: 3, credits: 3_000_000_001, cacheHits: 1 }),
    ];
    expect(await two.listUsage({ from: d, to: d })).toEqual(once);

    // An hour and a moment later, the next batch forgets the id; the same batch adds again.
    now += 3_600_001;
    await two.addUsage([row(d, 'key_c', '1', 'stats', { requests: 1 })], batch());
    const remembered = await withClient(async (c) => (await c.query(`SELECT id FROM ${quoted(schema)}.usage_batches`)).rows.length);
    expect(remembered).toBe(1);
    await one.addUsage(rows, id);
    expect((await one.listUsage({ from: d, to: d, keyIds: new Set(['key_a']) }))[0]).toMatchObject({ requests: 6, credits: 6_000_000_002 });
  });

  it('a schema of version 5 keeps its usage rows, with 0 of each cause, and sums the causes from then on', async () => {
    const schema = schemas.fresh();
    const d = today();
    const before = open(schema);
    await before.addUsage([row(d, 'key_a', '1', 'stats', { requests: 3, credits: 60, refused: 2, errors: 1 })], batch());
    await before.close();
    // Back to version 5: the usage table without the counters by cause (src/store/postgres.ts, MIGRATIONS[5]).
    await withClient(async (c) => {
      const s = quoted(schema);
      await c.query(`DROP TABLE IF EXISTS ${s}.webhook_deliveries`); // version 8 (src/store/outbox-postgres.ts)
      // Version 7: the usage rows' account and the hourly rows.
      await c.query(`DROP TABLE ${s}.usage_hours`);
      await c.query(`ALTER TABLE ${s}.usage DROP CONSTRAINT usage_pkey, DROP COLUMN account`);
      await c.query(`ALTER TABLE ${s}.usage ADD CONSTRAINT usage_pkey PRIMARY KEY (day, key_id, chain, route)`);
      await c.query(
        `ALTER TABLE ${s}.usage DROP COLUMN rate_limited, DROP COLUMN out_of_credits, DROP COLUMN forbidden, DROP COLUMN client_errors`,
      );
      await c.query(`DELETE FROM ${s}.schema_version WHERE version > 5`);
    });
    const after = open(schema);
    expect(await after.listUsage({ from: d, to: d })).toEqual([
      row(d, 'key_a', '1', 'stats', { requests: 3, credits: 60, refused: 2, errors: 1 }),
    ]);
    expect(await versions(schema)).toEqual(allVersions);
    const id = batch();
    const added = [
      row(d, 'key_a', '1', 'stats', { requests: 4, refused: 3, rateLimited: 1, outOfCredits: 1, forbidden: 1, clientErrors: 1 }),
    ];
    await after.addUsage(added, id);
    await after.addUsage(added, id);
    expect(await after.listUsage({ from: d, to: d })).toEqual([
      row(d, 'key_a', '1', 'stats', {
        requests: 7,
        credits: 60,
        refused: 5,
        errors: 1,
        rateLimited: 1,
        outOfCredits: 1,
        forbidden: 1,
        clientErrors: 1,
      }),
    ]);
  });

  it('a schema of version 6 keeps its usage rows, under no account and with no hourly rows; later rows have both', async () => {
    const schema = schemas.fresh();
    const d = today();
    const old = row(d, 'key_a', '1', 'stats', { requests: 3, credits: 60, refused: 1, rateLimited: 1 });
    const before = open(schema);
    await before.addUsage([{ ...old, hour: `${d}T04:00:00Z` }], batch());
    await before.close();
    // Back to version 6: the usage table without its account, no hourly rows (src/store/postgres.ts, MIGRATIONS[6]), nor the
    // tables of later versions.
    await withClient(async (c) => {
      const s = quoted(schema);
      await c.query(`DROP TABLE IF EXISTS ${s}.webhook_deliveries`); // version 8 (src/store/outbox-postgres.ts)
      await c.query(`DROP TABLE ${s}.usage_hours`);
      await c.query(`ALTER TABLE ${s}.usage DROP CONSTRAINT usage_pkey, DROP COLUMN account`);
      await c.query(`ALTER TABLE ${s}.usage ADD CONSTRAINT usage_pkey PRIMARY KEY (day, key_id, chain, route)`);
      await c.query(`DELETE FROM ${s}.schema_version WHERE version > 6`);
    });
    const after = open(schema);
    expect(await after.listUsage({ from: d, to: d })).toEqual([old]);
    expect(await after.listUsage({ from: d, to: d, granularity: 'hour' })).toEqual([]);
    expect(await versions(schema)).toEqual(allVersions);
    const mine = { ...row(d, 'key_a', '1', 'stats', { requests: 2, credits: 40 }), account: 'acc_pg' };
    const none = row(d, 'key_a', '1', 'stats', { requests: 1, credits: 20 });
    const id = batch();
    await after.addUsage(
      [
        { ...mine, hour: `${d}T05:00:00Z` },
        { ...none, hour: `${d}T05:00:00Z` },
      ],
      id,
    );
    await after.addUsage(
      [
        { ...mine, hour: `${d}T05:00:00Z` },
        { ...none, hour: `${d}T05:00:00Z` },
      ],
      id,
    );
    expect(await after.listUsage({ from: d, to: d })).toEqual([{ ...old, requests: 4, credits: 80 }, mine]);
    expect(await after.listUsage({ from: d, to: d, granularity: 'hour' })).toEqual([
      { ...none, hour: `${d}T05:00:00Z` },
      { ...mine, hour: `${d}T05:00:00Z` },
    ]);
  });

  it('a large batch is added whole, in one transaction: a row the database refuses leaves none of it', async () => {
    const schema = schemas.fresh();
    const store = open(schema);
    const d = today();
    const many = Array.from({ length: 2_000 }, (_, i) => row(d, `key_${String(i).padStart(4, '0')}`, '1', 'stats', { requests: i + 1 }));
    await store.addUsage(many, batch());
    const stored = await store.listUsage({ from: d, to: d });
    expect(stored).toHaveLength(2_000);
    expect(stored.reduce((sum, r) => sum + r.requests, 0)).toBe((2_000 * 2_001) / 2);
    await expect(
      store.addUsage([row(d, 'key_x', '1', 'stats', { requests: 1 }), row(d, 'key_y', '1', 'stats', { requests: 0.5 })], batch()),
    ).rejects.toThrow();
    expect(await store.listUsage({ from: d, to: d, keyIds: new Set(['key_x', 'key_y']) })).toEqual([]);
    await expect(store.addUsage([row('2027-02-30', 'key_x', '1', 'stats')], batch())).rejects.toThrow(RangeError);
  });

  it("names ledger rows by a keyed hash of the account, never by the account (a key's sha256), and renames a version 2 schema's rows", async () => {
    const account = createHash('sha256').update('a weak yaml secret').digest('hex');
    const rawAccounts = (schema: string) =>
      withClient(async (c) =>
        (await c.query<{ account: string }>(`SELECT account FROM ${quoted(schema)}.ledgers`)).rows.map((r) => r.account),
      );
    const storeSecret = (schema: string) =>
      withClient(
        async (c) =>
          (await c.query<{ value: string }>(`SELECT value FROM ${quoted(schema)}.meta WHERE name = 'ledger_secret'`)).rows[0]!.value,
      );
    const hmac = (secretHex: string, a: string) => createHmac('sha256', Buffer.from(secretHex, 'hex')).update(a).digest('hex');

    // Through the in-process quota store, as a gateway without Redis writes them.
    const schema = schemas.fresh();
    const store = open(schema, { ledgers: true });
    const quota = new MemoryQuotaStore(store);
    await quota.start();
    quota.decide({ account, rps: 10, credits: 100, period: 'daily', cost: 7, nowMs: Date.now() });
    await quota.close();
    const names = await rawAccounts(schema);
    expect(names).toEqual([hmac(await storeSecret(schema), account)]);
    expect(names).not.toContain(account);
    // Another schema, another secret: the same account has an unrelated name there.
    const other = schemas.fresh();
    const otherStore = open(other, { ledgers: true });
    await otherStore.saveLedgers([{ account: 'x', day: '', daySpent: 0, month: '', monthSpent: 0, topup: 1 }]);
    expect(await storeSecret(other)).not.toBe(await storeSecret(schema));
    // Read back under its account by a new quota store: nothing lost to the naming.
    const again = new MemoryQuotaStore(open(schema, { ledgers: true }));
    await again.start();
    expect((await again.balance(account, 'daily', Date.now())).spent).toBe(7);
    await again.close();

    // A schema of version 2 (plain accounts) is migrated: its rows renamed, their spend kept.
    const old = schemas.fresh();
    await withClient(async (c) => {
      const q = quoted(old);
      await c.query(`CREATE SCHEMA ${q}`);
      await c.query(`CREATE TABLE ${q}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      await c.query(`INSERT INTO ${q}.schema_version (version) VALUES (1), (2)`);
      // The tables of version 1 that later versions change (only their columns that matter here).
      await c.query(`CREATE TABLE ${q}.keys (id text COLLATE "C" PRIMARY KEY)`);
      await c.query(`CREATE TABLE ${q}.audit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY)`);
      await c.query(`CREATE TABLE ${q}.usage (day date NOT NULL, key_id text COLLATE "C" NOT NULL, chain text COLLATE "C" NOT NULL,
        route text COLLATE "C" NOT NULL, PRIMARY KEY (day, key_id, chain, route))`);
      await c.query(`CREATE TABLE ${q}.ledgers (account text COLLATE "C" PRIMARY KEY, day text NOT NULL, day_spent bigint NOT NULL,
        month text NOT NULL, month_spent bigint NOT NULL, topup bigint NOT NULL)`);
      await c.query(`INSERT INTO ${q}.ledgers VALUES ($1, '', 0, 'm202611', 40, 3)`, [account]);
    });
    const migrated = open(old, { ledgers: true });
    expect(await migrated.loadLedgers()).toEqual([
      { account: migrated.sealAccount(account), day: '', daySpent: 0, month: 'm202611', monthSpent: 40, topup: 3 },
    ]);
    expect(await rawAccounts(old)).toEqual([hmac(await storeSecret(old), account)]);
  });

  it('ledgers round trip between gateways, upserted all or nothing; a store told to keep none offers none', async () => {
    const schema = schemas.fresh();
    const one = open(schema, { ledgers: true });
    const two = open(schema, { ledgers: true });
    expect(one.ledgers).toBe(one);
    expect(open(schema).ledgers).toBeUndefined();
    expect(await two.loadLedgers()).toEqual([]);
    const first: LedgerRow[] = [
      { account: 'b', day: 'd20261130', daySpent: 1, month: 'm202611', monthSpent: 9_000_000_000, topup: 0 },
      { account: 'a', day: 'd20261123', daySpent: 120, month: 'm202611', monthSpent: 120, topup: 5_000 },
    ];
    await one.saveLedgers(first);
    expect(await two.loadLedgers()).toEqual([first[1], first[0]]);
    await two.saveLedgers([
      { account: 'a', day: 'd20261201', daySpent: 0, month: 'm202612', monthSpent: 0, topup: 4_880 },
      { account: 'c', day: 'd20261201', daySpent: 1, month: 'm202612', monthSpent: 1, topup: 0 },
      { account: 'c', day: 'd20261201', daySpent: 2, month: 'm202612', monthSpent: 2, topup: 0 }, // the last one given stands
    ]);
    const saved = [
      { account: 'a', day: 'd20261201', daySpent: 0, month: 'm202612', monthSpent: 0, topup: 4_880 },
      { account: 'b', day: 'd20261130', daySpent: 1, month: 'm202611', monthSpent: 9_000_000_000, topup: 0 },
      { account: 'c', day: 'd20261201', daySpent: 2, month: 'm202612', monthSpent: 2, topup: 0 },
    ];
    expect(await one.loadLedgers()).toEqual(saved);
    await expect(
      one.saveLedgers([
        { account: 'a', day: 'd20261201', daySpent: 5, month: 'm202612', monthSpent: 5, topup: 0 },
        { account: 'd', day: 'd20261201', daySpent: 1.5, month: 'm202612', monthSpent: 1.5, topup: 0 },
      ]),
    ).rejects.toThrow();
    expect(await two.loadLedgers()).toEqual(saved);
  });

  it('stores records column by column: what a caller adds to a record never reaches the database', async () => {
    const schema = schemas.fresh();
    const store = open(schema);
    const a = key({ chains: ['1', '8453'], previous: { digest: 'cd'.repeat(32), until: 1_790_000_000_000 } });
    const secret = `egw_${randomBytes(32).toString('base64url')}`;
    expect(await store.createKey({ ...a, secret } as KeyRecord, audit('create', a))).toBe(true);
    const stored = await dumpSchema(schema);
    expect(stored).toContain(a.digest);
    expect(stored.some((v) => v.includes(secret))).toBe(false);
    expect(await store.getKey(a.id)).toEqual(a);
  });

  it('close ends the pool and the listener, may be called twice, and later calls reject', async () => {
    const schema = schemas.fresh();
    const store = open(schema);
    store.watchKeys(
      () => {},
      () => {},
    );
    await store.ping();
    await until(
      () =>
        withClient(
          async (c) => (await c.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [store.listenerName])).rowCount === 1,
        ),
      'the listener',
    );
    await Promise.all([store.close(), store.close()]);
    await store.close();
    await expect(store.listKeys()).rejects.toThrow('closed');
    await until(
      () =>
        withClient(
          async (c) => (await c.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [store.listenerName])).rowCount === 0,
        ),
      'the listener gone',
    );
  });
});
