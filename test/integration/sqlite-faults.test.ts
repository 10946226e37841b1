// The embedded SQLite store's own answers to faults of its file (store/sqlite.ts), in this
// process: its files are 0600; a file deleted while open is written again at its path with
// everything it held; a file that cannot be opened at start leaves the store closed and every
// call rejected until it can; ledger rows are named by a keyed hash, and a version 2 file's plain
// sha256 names are renamed and overwritten. The same faults under a real gateway process (a full
// disk, a read-only folder) are in storage-faults.test.ts.
import { NO_TERMS } from '../../src/store/records.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/digest.js';
import { periodWindow } from '../../src/quota/period.js';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { SqliteStore, type SqliteStoreEvent } from '../../src/store/sqlite.js';
import type { AuditEntry, KeyRecord } from '../../src/store/types.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'egw-sqlite-faults-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const fresh = (): string => {
  const d = join(dir, `case-${++n}`);
  mkdirSync(d);
  return join(d, 'store.db');
};
const mode = (file: string): string => (statSync(file).mode & 0o777).toString(8);

const key = (name: string): KeyRecord => ({
  id: `key_${name.padEnd(16, 'a')}`,
  name,
  owner: null,
  plan: 'small',
  chains: null,
  status: 'active',
  expiresAt: null,
  createdAt: 1_790_000_000_000,
  prefix: 'egw_abcdefgh',
  digest: hashKey(name),
  previous: null,
  ...NO_TERMS,
});
const created = (k: KeyRecord): AuditEntry => ({
  at: 1_790_000_000_000,
  action: 'create',
  actor: 'ops',
  keyId: k.id,
  before: null,
  after: { name: k.name },
});

describe('the SQLite store', () => {
  it('creates its file, -wal and -shm readable by its user only, and narrows those of an older store', async () => {
    const file = fresh();
    const store = new SqliteStore(file);
    await store.keys.createKey(key('modes'), created(key('modes')));
    for (const f of [file, `${file}-wal`, `${file}-shm`]) expect([f, mode(f)]).toEqual([f, '600']);
    await store.close();

    // A store an earlier gateway left world-readable.
    const old = fresh();
    writeFileSync(old, '', { mode: 0o644 });
    const reopened = new SqliteStore(old);
    await reopened.ping();
    for (const f of [old, `${old}-wal`, `${old}-shm`]) expect([f, mode(f)]).toEqual([f, '600']);
    await reopened.close();
  });

  it.each([
    { label: 'the file', files: [''] },
    { label: 'the file, its -wal and -shm', files: ['', '-wal', '-shm'] },
  ])('writes $label deleted while open again at its path, with everything it held, and says so', async ({ files }) => {
    const file = fresh();
    const store = new SqliteStore(file);
    const events: SqliteStoreEvent[] = [];
    store.listen((e) => events.push(e));
    const a = key('before');
    await store.keys.createKey(a, created(a));
    await store.ledgers.saveLedgers([{ account: 'acct', day: 'd20261130', daySpent: 10, month: 'm202611', monthSpent: 10, topup: 5 }]);
    for (const f of files) unlinkSync(file + f);
    expect(existsSync(file)).toBe(false);

    // The next write notices, puts the file back, then writes to it.
    const b = key('after');
    expect(await store.keys.createKey(b, created(b))).toBe(true);
    expect(events).toEqual([{ type: 'restored', path: file }]);
    expect(existsSync(file)).toBe(true);
    expect(mode(file)).toBe('600');
    await store.ledgers.saveLedgers([{ account: 'acct', day: 'd20261130', daySpent: 30, month: 'm202611', monthSpent: 30, topup: 5 }]);
    await store.ping();
    await store.close();

    const again = new SqliteStore(file);
    expect((await again.keys.listKeys()).map((k) => k.name).sort()).toEqual(['after', 'before']);
    expect((await again.audit.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER })).map((e) => e.keyId).sort()).toEqual([a.id, b.id].sort());
    expect(await again.ledgers.loadLedgers()).toEqual([
      { account: 'acct', day: 'd20261130', daySpent: 30, month: 'm202611', monthSpent: 30, topup: 5 },
    ]);
    await again.close();
  });

  it('notices a deleted file on a ping too, without a write', async () => {
    const file = fresh();
    const store = new SqliteStore(file);
    const restored = new Promise<SqliteStoreEvent>((r) => store.listen(r));
    await store.ledgers.saveLedgers([{ account: 'acct', day: 'd20261130', daySpent: 1, month: 'm202611', monthSpent: 1, topup: 0 }]);
    unlinkSync(file);
    await store.ping();
    expect(await restored).toEqual({ type: 'restored', path: file });
    await store.close();
    const again = new SqliteStore(file);
    expect(await again.ledgers.loadLedgers()).toHaveLength(1);
    await again.close();
  });

  it('starts closed when its file cannot be opened, rejects every call as a fault meanwhile, and opens once it can', async () => {
    const parent = join(dir, `case-${++n}`);
    writeFileSync(parent, 'a file where the folder should be');
    const store = new SqliteStore(join(parent, 'store.db'));
    const faults: string[] = [];
    store.listen((e) => faults.push(e.type === 'fault' ? e.op : e.type));
    await expect(store.ping()).rejects.toThrow();
    await expect(store.keys.listKeys()).rejects.toThrow();
    await expect(
      store.ledgers.saveLedgers([{ account: 'acct', day: 'd20261130', daySpent: 1, month: 'm202611', monthSpent: 1, topup: 0 }]),
    ).rejects.toThrow();
    expect(faults).toEqual(['listKeys', 'saveLedgers']);
    expect(store.failures).toBe(2);

    rmSync(parent);
    await store.ping();
    await store.ledgers.saveLedgers([{ account: 'acct', day: 'd20261130', daySpent: 1, month: 'm202611', monthSpent: 1, topup: 0 }]);
    expect(await store.ledgers.loadLedgers()).toHaveLength(1);
    await store.close();
  });

  it("a caller's wrong data is not a fault: not counted, and the store stays up", async () => {
    const store = new SqliteStore(fresh());
    await expect(
      store.ledgers.saveLedgers([{ account: 'a', day: 'd20261130', daySpent: 1.5, month: 'm202611', monthSpent: 1.5, topup: 0 }]),
    ).rejects.toThrow();
    expect(store.failures).toBe(0);
    await store.ping();
    await store.close();
  });
});

describe('ledger rows', () => {
  const digest = hashKey('weak-yaml-key');
  const periodId = periodWindow('monthly', Date.now()).id;
  const day = periodWindow('daily', Date.now()).id;

  it("are named by a keyed hash: the file holds no key's sha256, and the in-process quota store finds its ledger", async () => {
    const file = fresh();
    const store = new SqliteStore(file);
    const quota = new MemoryQuotaStore(store);
    await quota.start();
    quota.decide({ account: digest, rps: 10, credits: 1_000, period: 'monthly', cost: 20, nowMs: Date.now() });
    expect(await quota.topUp(digest, 7)).toBe(7);
    await quota.close();
    const rows = await store.ledgers.loadLedgers();
    expect(rows).toEqual([{ account: store.sealAccount(digest), day, daySpent: 20, month: periodId, monthSpent: 20, topup: 7 }]);
    expect(store.sealAccount(digest)).not.toBe(digest);
    await store.close();
    for (const f of [file, `${file}-wal`]) if (existsSync(f)) expect(readFileSync(f).includes(digest)).toBe(false);

    // Another store on the file (a restart) names them alike.
    const again = new SqliteStore(file);
    const next = new MemoryQuotaStore(again);
    await next.start();
    expect(await next.balance(digest, 'monthly', Date.now())).toEqual({ spent: 20, topup: 7, periodId });
    await next.close();
    await again.close();
  });

  it("of a version 2 file, named by the key's sha256, are renamed when it is opened, the old names overwritten", async () => {
    const file = fresh();
    // A version 2 file: the rows (one period's spend) under their plain accounts, no meta table.
    const writer = new SqliteStore(file);
    await writer.close();
    const db = new Database(file);
    db.exec(`DROP TABLE IF EXISTS webhook_deliveries; DROP TABLE meta; DROP TABLE ledgers; ALTER TABLE keys DROP COLUMN terms; ALTER TABLE audit DROP COLUMN actor; DROP TABLE objects;
      DROP TABLE usage_hours; DROP TABLE usage;
      CREATE TABLE usage (day TEXT NOT NULL, key_id TEXT NOT NULL, chain TEXT NOT NULL, route TEXT NOT NULL,
        requests INTEGER NOT NULL, credits INTEGER NOT NULL, cache_hits INTEGER NOT NULL, refused INTEGER NOT NULL,
        errors INTEGER NOT NULL, PRIMARY KEY (day, key_id, chain, route)) STRICT, WITHOUT ROWID;
      CREATE TABLE ledgers (account TEXT PRIMARY KEY, period_id TEXT NOT NULL, spent INTEGER NOT NULL, topup INTEGER NOT NULL) STRICT;`);
    const insert = db.prepare<[string, string, number, number]>(
      'INSERT INTO ledgers (account, period_id, spent, topup) VALUES (?, ?, ?, ?)',
    );
    insert.run(digest, periodId, 120, 50);
    insert.run('key_runtime0000000000', periodId, 3, 0);
    db.pragma('user_version = 2');
    db.close();
    expect(readFileSync(file).includes(digest)).toBe(true);

    const store = new SqliteStore(file);
    expect((await store.ledgers.loadLedgers()).map((r) => r.account).sort()).toEqual(
      [store.sealAccount(digest), store.sealAccount('key_runtime0000000000')].sort(),
    );
    for (const f of [file, `${file}-wal`]) if (existsSync(f)) expect([f, readFileSync(f).includes(digest)]).toEqual([f, false]);
    const quota = new MemoryQuotaStore(store);
    await quota.start();
    expect(await quota.balance(digest, 'monthly', Date.now())).toEqual({ spent: 120, topup: 50, periodId });
    expect(await quota.balance('key_runtime0000000000', 'monthly', Date.now())).toEqual({ spent: 3, topup: 0, periodId });
    await quota.close();
    await store.close();
  });
});
