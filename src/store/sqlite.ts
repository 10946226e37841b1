// The embedded store of a gateway without Redis: one SQLite file, written by this process only.
// better-sqlite3 is synchronous (a statement runs on the calling thread, microseconds for these
// row sizes), so the methods are async only to share the other backends' signatures
// (store/types.ts). https://github.com/WiseLibs/better-sqlite3/blob/master/docs/api.md
//
// WAL journal with synchronous = NORMAL: a commit is an append to the write-ahead log, without an
// fsync per transaction; a power loss can lose the last transactions but never corrupts the file
// (https://www.sqlite.org/wal.html, https://www.sqlite.org/pragma.html#pragma_synchronous).
// better-sqlite3 recommends WAL for performance: https://github.com/WiseLibs/better-sqlite3/blob/master/docs/performance.md
//
// The schema's version is PRAGMA user_version (https://www.sqlite.org/pragma.html#pragma_user_version):
// 0 is a new file, which gets the schema below; a later gateway adds its migrations as steps
// from one version to the next. A file of a newer version than this code knows is refused
// rather than misread.
//
// No secret is ever stored, by construction: a record is written field by field (`toRow`), so a
// property the caller's object happens to carry beyond KeyRecord's fields never reaches the file.
//
// The file and its -wal and -shm (https://www.sqlite.org/tempfiles.html) are readable by the
// gateway's user only (0600): the file is created with that mode before SQLite opens it, and
// SQLite gives the -wal and -shm files the mode of their database file (findCreateFileMode in
// https://github.com/sqlite/sqlite/blob/master/src/os_unix.c). A store made by an earlier gateway
// with wider modes is narrowed to 0600 when opened.
//
// Ledger rows are not named by the account itself. A configured key's account is the sha256 of
// its secret (keys/ring.ts), and a weak secret written in the YAML is found from its sha256 in a
// published lookup table. The rows are named HMAC-SHA256(store secret, account) instead
// (`sealAccount`), the store secret being 32 random bytes made with the file (table meta). What
// that does: a copy of the file names no key a lookup table knows, and one key has unrelated row
// names in two stores. What it does not: whoever holds the whole file holds the store secret too
// and can test guesses one by one, as fast as against plain sha256; the 0600 mode is what keeps
// the host's other users out. A store secret kept outside the file would also guard a copy of the
// file alone, but a file restored without it would lose every bought credit, with no way back: not
// done. Naming rows by the key's id would need the key ring in the quota store, and would move a
// configured key's credits with its name instead of its secret. The account stays what it is in
// memory and in Redis (quota/redis-keys.ts); the in-process quota store names its rows through
// sealAccount (quota/memory.ts) and the store writes whatever names it is given. A file of
// version 2 has plain accounts: its migration renames them through a new store secret (it needs
// the account only, never the key), with secure_delete on so that the old names are overwritten
// rather than left in free pages (https://www.sqlite.org/pragma.html#pragma_secure_delete).
//
// A fault of the file or the disk never escapes as an exception: every method rejects with it,
// counts it (`failures`) and tells the listeners (app/resources.ts logs it once per interval and
// exports it as egw_store_errors_total{store="records"}); the callers keep what they could not
// write and try again (quota/memory.ts, usage/recorder.ts). ping() rejects while the file cannot
// be opened, while its path does not name the open file, or while writes fail (then it tries one
// small write, to learn when they work again): /readyz's storage check.
// - A full disk (or RLIMIT_FSIZE, https://man7.org/linux/man-pages/man2/setrlimit.2.html: Node
//   ignores SIGXFSZ, so the write fails with EFBIG, https://github.com/nodejs/node/pull/27798)
//   fails the transaction with SQLITE_FULL or SQLITE_IOERR_WRITE and rolls it back; the next
//   write works once there is room.
// - A file that cannot be opened at start (a read-only folder, a full disk, not a database)
//   leaves the store closed: each call tries to open it again, and rejects meanwhile.
// - A connection SQLite opened read-only (the file was) stays read-only: after a SQLITE_READONLY
//   write it is opened again.
// - A file deleted while open: SQLite goes on reading and writing the unlinked inode, which a
//   restart would not find (https://www.sqlite.org/howtocorrupt.html, "Unlinking or renaming a
//   database file while in use"). Each write, each ping and close() compare the path's inode
//   with the one opened; a file gone is written again at its path from the open connection
//   (VACUUM INTO, https://www.sqlite.org/lang_vacuum.html#vacuuminto): keys, audit, usage and
//   ledgers, nothing lost. Until that works (a read-only folder), writes are refused, so nothing
//   is acknowledged that a restart would not find; a path that names another file is left alone.
//   The old -wal and -shm files are removed before the copy takes the path: a new database must
//   never be paired with another's WAL (https://www.sqlite.org/howtocorrupt.html, "Deleting a
//   hot journal"; test/integration/sqlite-faults.test.ts deletes the file alone).
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type {
  AuditEntry,
  AuditStore,
  KeyRecord,
  KeyStore,
  LedgerRow,
  LedgerStore,
  ObjectKind,
  StoredObject,
  Storage,
  UsageBatch,
  UsageQuery,
  UsageRow,
  UsageStore,
  StoreEvent,
} from './types.js';
import { hourName } from './day.js';
import { checkUsageDelta, termsFromJson, termsJson } from './records.js';
import { objectNotice } from './types.js';
import type { OutboxStore } from './outbox.js';
import { SqliteOutbox } from './outbox-sqlite.js';
import { readMigrations } from './migrations.js';

/** The user_version this code writes and reads. */
export const SQLITE_SCHEMA_VERSION = 9;

// The schema's steps, src/store/sql/sqlite/<version>-<name>.sql (store/migrations.ts), each file
// saying what its version changes. STRICT tables (https://www.sqlite.org/stricttables.html): a
// value of the wrong type is an error instead of being stored as whatever it is.
const MIGRATIONS = readMigrations('sqlite', SQLITE_SCHEMA_VERSION);

/** How long a usage batch's id is remembered, ms: far longer than a retry takes to follow. */
const BATCH_MEMORY_MS = 3_600_000;

interface KeyRow {
  id: string;
  name: string;
  owner: string | null;
  plan: string;
  chains: string | null;
  status: string;
  expires_at: number | null;
  created_at: number;
  prefix: string;
  digest: string;
  previous_digest: string | null;
  previous_until: number | null;
  terms: string | null;
}

interface AuditRow {
  at: number;
  action: string;
  actor: string | null;
  key_id: string;
  before: string | null;
  after: string | null;
}

interface UsageDbRow {
  day: string;
  /** Hourly rows only (usage_hours): 0-23. */
  hour?: number;
  key_id: string;
  account: string;
  chain: string;
  route: string;
  requests: number;
  credits: number;
  cache_hits: number;
  refused: number;
  rate_limited: number;
  out_of_credits: number;
  forbidden: number;
  client_errors: number;
  errors: number;
}

interface LedgerDbRow {
  account: string;
  day: string;
  day_spent: number;
  month: string;
  month_spent: number;
  topup: number;
}

/** A ledger row of schema 3 and earlier: one period's spend. */
interface LedgerV3DbRow {
  account: string;
  period_id: string;
  spent: number;
  topup: number;
}

function toRow(r: KeyRecord): KeyRow {
  return {
    id: r.id,
    name: r.name,
    owner: r.owner,
    plan: r.plan,
    chains: r.chains === null ? null : JSON.stringify(r.chains),
    status: r.status,
    expires_at: r.expiresAt,
    created_at: r.createdAt,
    prefix: r.prefix,
    digest: r.digest,
    previous_digest: r.previous?.digest ?? null,
    previous_until: r.previous?.until ?? null,
    terms: termsJson(r),
  };
}

function fromRow(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    owner: row.owner,
    plan: row.plan,
    chains: row.chains === null ? null : (JSON.parse(row.chains) as string[]),
    status: row.status as KeyRecord['status'],
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    prefix: row.prefix,
    digest: row.digest,
    previous:
      row.previous_digest === null || row.previous_until === null ? null : { digest: row.previous_digest, until: row.previous_until },
    ...termsFromJson(row.terms),
  };
}

function auditRow(entry: AuditEntry): AuditRow {
  return {
    at: entry.at,
    action: entry.action,
    actor: entry.actor ?? null,
    key_id: entry.keyId,
    before: entry.before === null ? null : JSON.stringify(entry.before),
    after: entry.after === null ? null : JSON.stringify(entry.after),
  };
}

/** A synchronous call as a promise: its error rejects it, never throws at the caller. */
function attempt<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/** better-sqlite3 throws a SqliteError whose `code` is SQLite's extended result code name. */
function isConstraint(err: unknown, code: 'SQLITE_CONSTRAINT_UNIQUE' | 'SQLITE_CONSTRAINT_PRIMARYKEY'): boolean {
  return err instanceof Database.SqliteError && err.code === code;
}

/** The store cannot serve a call for a reason of its file: not open, gone, or another file. */
export class StoreFault extends Error {}

/**
 * Whether an error is the file's or the disk's (a fault: counted, and ping() says so) rather than
 * the caller's data (a constraint, a wrong type: https://www.sqlite.org/rescode.html).
 */
export function isFault(err: unknown): boolean {
  if (err instanceof StoreFault) return true;
  if (err instanceof Database.SqliteError) return !/^SQLITE_(CONSTRAINT|MISMATCH|RANGE|TOOBIG)/.test(err.code);
  // node:fs's errors (mkdir, open, stat, rename of the store's files) carry a syscall.
  return typeof (err as NodeJS.ErrnoException | undefined)?.syscall === 'string';
}

/** A write that failed this way leaves the connection unable to write until it is opened again. */
function needsReopen(err: unknown): boolean {
  return err instanceof Database.SqliteError && /^SQLITE_(READONLY|CANTOPEN)/.test(err.code);
}

const sealWith = (secret: Buffer, account: string): string => createHmac('sha256', secret).update(account, 'utf8').digest('hex');

const USAGE_COUNTERS_SQL = 'requests, credits, cache_hits, refused, errors, rate_limited, out_of_credits, forbidden, client_errors';

/** The upsert of a usage row into `table` (daily or hourly, whose identity has `extra` columns): its counts added to the row's. */
function usageUpsert(table: string, extra: string[]): string {
  const identity = ['day', ...extra, 'key_id', 'account', 'chain', 'route'];
  const counters = USAGE_COUNTERS_SQL.split(', ');
  return `INSERT INTO ${table} (${[...identity, ...counters].join(', ')})
    VALUES (${[...identity, ...counters].map((c) => `@${c}`).join(', ')})
    ON CONFLICT (day, ${extra.map((c) => `${c}, `).join('')}key_id, chain, route, account) DO UPDATE SET
      ${counters.map((c) => `${c} = ${c} + excluded.${c}`).join(',\n      ')}`;
}

/** The named parameters of a usage query. */
interface UsageFilter {
  from: string;
  to: string;
  keys: string | null;
  accounts: string | null;
  chain: string | null;
  route: string | null;
}

/** The rows of `table` a query asks for, in the order of its primary key (store/records.ts, compareUsageRows). */
function usageSelect(table: string, extra: string[]): string {
  return `SELECT day, ${extra.map((c) => `${c}, `).join('')}key_id, account, chain, route, ${USAGE_COUNTERS_SQL} FROM ${table}
    WHERE day BETWEEN @from AND @to
      AND (@keys IS NULL OR key_id IN (SELECT value FROM json_each(@keys)))
      AND (@accounts IS NULL OR account IN (SELECT value FROM json_each(@accounts)))
      AND (@chain IS NULL OR chain = @chain)
      AND (@route IS NULL OR route = @route)
    ORDER BY day, ${extra.map((c) => `${c}, `).join('')}key_id, chain, route, account`;
}

/** A usage row's columns, from a row handed to addUsage (its hour number for usage_hours). */
function usageDbRow(r: UsageRow, hour?: number): UsageDbRow {
  const row: UsageDbRow = {
    day: r.day,
    key_id: r.keyId,
    account: r.account ?? '',
    chain: r.chain,
    route: r.route,
    requests: r.requests,
    credits: r.credits,
    cache_hits: r.cacheHits,
    refused: r.refused,
    rate_limited: r.rateLimited ?? 0,
    out_of_credits: r.outOfCredits ?? 0,
    forbidden: r.forbidden ?? 0,
    client_errors: r.clientErrors ?? 0,
    errors: r.errors,
  };
  if (hour !== undefined) row.hour = hour;
  return row;
}

/** Prepared once: better-sqlite3 compiles a statement at prepare(), and run/get/all reuse it. */
function prepareStatements(db: Database.Database) {
  return {
    listKeys: db.prepare<[], KeyRow>('SELECT * FROM keys ORDER BY id'),
    getKey: db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE id = ?'),
    insertKey: db.prepare<KeyRow>(
      `INSERT INTO keys (id, name, owner, plan, chains, status, expires_at, created_at, prefix, digest, previous_digest, previous_until, terms)
       VALUES (@id, @name, @owner, @plan, @chains, @status, @expires_at, @created_at, @prefix, @digest, @previous_digest, @previous_until, @terms)`,
    ),
    updateKey: db.prepare<KeyRow>(
      `UPDATE keys SET name = @name, owner = @owner, plan = @plan, chains = @chains, status = @status, expires_at = @expires_at,
         created_at = @created_at, prefix = @prefix, digest = @digest, previous_digest = @previous_digest, previous_until = @previous_until,
         terms = @terms
       WHERE id = @id`,
    ),
    deleteKey: db.prepare<[string]>('DELETE FROM keys WHERE id = ?'),
    listObjects: db.prepare<[string], { id: string; value: string }>('SELECT id, value FROM objects WHERE kind = ? ORDER BY id'),
    getObject: db.prepare<[string, string], { value: string }>('SELECT value FROM objects WHERE kind = ? AND id = ?'),
    insertObject: db.prepare<[string, string, string]>('INSERT OR IGNORE INTO objects (kind, id, value) VALUES (?, ?, ?)'),
    replaceObject: db.prepare<[string, string, string]>('UPDATE objects SET value = ? WHERE kind = ? AND id = ?'),
    deleteObject: db.prepare<[string, string]>('DELETE FROM objects WHERE kind = ? AND id = ?'),
    insertAudit: db.prepare<AuditRow>(
      'INSERT INTO audit (at, action, actor, key_id, before, after) VALUES (@at, @action, @actor, @key_id, @before, @after)',
    ),
    listAudit: db.prepare<{ from: number; to: number; key: string | null }, AuditRow>(
      `SELECT at, action, actor, key_id, before, after FROM audit
       WHERE at BETWEEN @from AND @to AND (@key IS NULL OR key_id = @key)
       ORDER BY at, id`,
    ),
    // https://www.sqlite.org/lang_upsert.html: `excluded` is the row that was to be inserted.
    addUsage: db.prepare<UsageDbRow>(usageUpsert('usage', [])),
    addHourlyUsage: db.prepare<UsageDbRow>(usageUpsert('usage_hours', ['hour'])),
    // The key and account filters are JSON arrays read with json_each
    // (https://www.sqlite.org/json1.html#jeach), so one prepared statement serves every query.
    usage: db.prepare<UsageFilter, UsageDbRow>(usageSelect('usage', [])),
    hourlyUsage: db.prepare<UsageFilter, UsageDbRow>(usageSelect('usage_hours', ['hour'])),
    pruneUsage: db.prepare<[string]>('DELETE FROM usage WHERE day < ?'),
    pruneHourlyUsage: db.prepare<[string]>('DELETE FROM usage_hours WHERE day < ?'),
    addBatch: db.prepare<[string, number]>('INSERT INTO usage_batches (id, at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING'),
    forgetBatches: db.prepare<[number]>('DELETE FROM usage_batches WHERE at < ?'),
    loadLedgers: db.prepare<[], LedgerDbRow>('SELECT account, day, day_spent, month, month_spent, topup FROM ledgers ORDER BY account'),
    saveLedger: db.prepare<LedgerDbRow>(
      `INSERT INTO ledgers (account, day, day_spent, month, month_spent, topup)
       VALUES (@account, @day, @day_spent, @month, @month_spent, @topup)
       ON CONFLICT (account) DO UPDATE SET day = excluded.day, day_spent = excluded.day_spent, month = excluded.month,
         month_spent = excluded.month_spent, topup = excluded.topup`,
    ),
    probe: db.prepare<[string]>(
      "INSERT INTO meta (name, value) VALUES ('probe', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    ),
    // VACUUM INTO takes an expression: the copy's path is bound, never spliced into the SQL.
    copyTo: db.prepare<[string]>('VACUUM INTO ?'),
  };
}

/** One open database: its statements and transactions, and which file it is. */
interface Connection {
  db: Database.Database;
  stmt: ReturnType<typeof prepareStatements>;
  addUsageTx: (rows: readonly UsageRow[], batchId: string) => void;
  saveLedgersTx: (rows: readonly LedgerRow[]) => void;
  /** Ledger rows and usage batches: all or nothing (the inner transactions become savepoints). */
  saveLedgersAndUsageTx: (rows: readonly LedgerRow[], batches: readonly UsageBatch[]) => void;
  /** A key write and its audit entry: both or neither. */
  keyWriteTx: (write: () => boolean, audit: AuditEntry) => boolean;
  /** The file's device and inode when opened; undefined for `:memory:`. */
  file: { dev: number; ino: number } | undefined;
  /** The key of the ledger rows' names, from the file. */
  secret: Buffer;
}

/** Narrows a store file an earlier gateway made readable by others to the owner's read and write. */
function narrowMode(file: string): void {
  try {
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
  } catch {
    // Not ours to change: left as it is.
  }
}

/**
 * Gives the -wal and -shm files their database file's mode, as SQLite does when it creates them.
 * One left from an open of a read-only file (read-only too) would keep the file read-only once it
 * is writable again, and one an earlier gateway made wider is narrowed.
 */
function matchModes(path: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o700;
  } catch {
    return;
  }
  for (const file of [`${path}-wal`, `${path}-shm`]) {
    try {
      if ((statSync(file).mode & 0o777) !== mode) chmodSync(file, mode);
    } catch {
      // Not there yet (SQLite creates it with the file's mode), or not ours to change.
    }
  }
}

function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SQLITE_SCHEMA_VERSION) {
    throw new Error(`the store file has schema version ${version}; this gateway knows up to ${SQLITE_SCHEMA_VERSION}: run a newer gateway`);
  }
  if (version === SQLITE_SCHEMA_VERSION) return;
  // Version 3 renames the plain ledger names of an earlier file: they are overwritten.
  const renames = version >= 1 && version < 3;
  if (renames) db.pragma('secure_delete = ON');
  // One transaction: a crash mid-way leaves the file at the version it had.
  db.transaction(() => {
    for (let v = version + 1; v <= SQLITE_SCHEMA_VERSION; v++) {
      db.exec(MIGRATIONS.get(v)!);
      // Version 3 made the store secret's table: the ledger rows are renamed by a new secret.
      if (v === 3) {
        const secret = randomBytes(32);
        db.prepare("INSERT INTO meta (name, value) VALUES ('ledger_secret', ?)").run(secret.toString('hex'));
        const rows = db.prepare<[], LedgerV3DbRow>('SELECT * FROM ledgers').all();
        db.exec('DELETE FROM ledgers');
        const insert = db.prepare<LedgerV3DbRow>(
          'INSERT INTO ledgers (account, period_id, spent, topup) VALUES (@account, @period_id, @spent, @topup)',
        );
        for (const r of rows) insert.run({ ...r, account: sealWith(secret, r.account) });
      }
    }
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  })();
  if (renames) {
    db.pragma('secure_delete = OFF');
    // The pages that held the old names, overwritten in the WAL, reach the file now.
    db.pragma('wal_checkpoint(TRUNCATE)');
  }
}

/** Opens `path` (creating it 0600 if it is not there), brings it to this schema, prepares the statements. */
function openConnection(path: string, now: () => number): Connection {
  const memory = path === ':memory:';
  if (!memory) {
    mkdirSync(dirname(path), { recursive: true });
    if (!existsSync(path)) {
      // A -wal or -shm without its database is another file's: a new one must not pick it up.
      for (const left of [`${path}-wal`, `${path}-shm`]) rmSync(left, { force: true });
      try {
        closeSync(openSync(path, 'wx', 0o600));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
  }
  const db = new Database(path);
  try {
    // The modes first: SQLite gives the -wal and -shm it creates or opens next the file's.
    if (!memory) {
      narrowMode(path);
      matchModes(path);
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    migrate(db);
    const secretHex = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE name = 'ledger_secret'").get()?.value;
    if (secretHex === undefined) throw new StoreFault(`the store file ${path} has no ledger_secret`);
    const stmt = prepareStatements(db);
    const stat = memory ? undefined : statSync(path);
    const conn: Connection = {
      db,
      stmt,
      file: stat && { dev: stat.dev, ino: stat.ino },
      secret: Buffer.from(secretHex, 'hex'),
      addUsageTx: db.transaction((rows: readonly UsageRow[], batchId: string) => {
        // Checked before anything is written (a RangeError rolls the transaction back).
        const hours = rows.map(checkUsageDelta);
        const at = now();
        stmt.forgetBatches.run(at - BATCH_MEMORY_MS);
        if (stmt.addBatch.run(batchId, at).changes === 0) return; // added before
        // Each row to its daily row and its hourly row, in this one transaction.
        rows.forEach((r, i) => {
          stmt.addUsage.run(usageDbRow(r));
          const hour = hours[i];
          if (hour !== undefined) stmt.addHourlyUsage.run(usageDbRow(r, hour));
        });
      }),
      saveLedgersTx: db.transaction((rows: readonly LedgerRow[]) => {
        for (const r of rows) {
          stmt.saveLedger.run({
            account: r.account,
            day: r.day,
            day_spent: r.daySpent,
            month: r.month,
            month_spent: r.monthSpent,
            topup: r.topup,
          });
        }
      }),
      saveLedgersAndUsageTx: db.transaction((rows: readonly LedgerRow[], batches: readonly UsageBatch[]) => {
        // The two transactions of this connection: called inside this one, they are savepoints of it (https://github.com/WiseLibs/better-sqlite3/blob/master/docs/api.md#transactionfunction---function).
        conn.saveLedgersTx(rows);
        for (const b of batches) if (b.rows.length > 0) conn.addUsageTx(b.rows, b.id);
      }),
      // The write, then its audit entry if it changed something; an error in either undoes both.
      keyWriteTx: db.transaction((write: () => boolean, audit: AuditEntry): boolean => {
        const changed = write();
        if (changed) stmt.insertAudit.run(auditRow(audit));
        return changed;
      }),
    };
    return conn;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** What the store tells its listeners (app/resources.ts). */
export type SqliteStoreEvent = StoreEvent;

/** How long after a failed attempt to put a deleted file back the next one is made. */
const RESTORE_RETRY_MS = 5_000;

export class SqliteStore implements Storage, KeyStore, AuditStore, UsageStore, LedgerStore {
  readonly kind = 'sqlite';
  readonly faults = this;
  readonly keys = this;
  readonly audit = this;
  readonly usage = this;
  readonly ledgers = this;
  /** The webhook outbox, on this store's connection and its faults' handling (store/outbox-sqlite.ts). */
  readonly outbox: OutboxStore = new SqliteOutbox({
    read: (op, run) => this.read(op, (c) => run(c.db)),
    write: (op, run) => this.write(op, (c) => run(c.db)),
  });
  /** Calls that failed for a reason of the file or the disk (egw_store_errors_total{store="records"}). */
  failures = 0;
  private conn: Connection | undefined;
  /** The last write's fault, until a write works again. */
  private writeFault: Error | undefined;
  /** The path does not name the open file: gone and not put back yet, or another file. */
  private fileFault: Error | undefined;
  private reopenWanted = false;
  private restoreAfter = 0;
  /** A copy of a deleted file waiting to take its path (if the rename failed). */
  private pendingCopy: string | undefined;
  /** The ledger names' key, from the first file opened; a file with another one is not this store's. */
  private secret: Buffer | undefined;
  private closed = false;
  private readonly watchers: { changed: (id: string) => void }[] = [];
  private readonly listeners: ((event: SqliteStoreEvent) => void)[] = [];

  /**
   * Opens the file now if it can: a file of a newer schema throws; a fault of the file or the disk
   * (a read-only folder, a full disk) leaves the store closed, each call trying it again.
   */
  constructor(
    private readonly path: string,
    private readonly now: () => number = Date.now,
  ) {
    try {
      this.open();
    } catch (err) {
      if (!isFault(err)) throw err;
    }
  }

  /** Hears the store's faults and repairs. */
  listen(listener: (event: SqliteStoreEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(event: SqliteStoreEvent): void {
    for (const l of this.listeners) l(event);
  }

  private fault(op: string, err: unknown): void {
    this.failures++;
    this.emit({ type: 'fault', op, err: err instanceof Error ? err : new Error(String(err)) });
  }

  /** Opens the file at the path (putting a waiting copy there first); throws why not. */
  private open(): Connection {
    if (this.closed) throw new StoreFault('the store is closed');
    if (this.pendingCopy) {
      renameSync(this.pendingCopy, this.path);
      this.pendingCopy = undefined;
    }
    const conn = openConnection(this.path, this.now);
    if (this.secret && !this.secret.equals(conn.secret)) {
      conn.db.close();
      throw new StoreFault(`${this.path} is another store's file (its ledger_secret differs); leaving it alone`);
    }
    this.secret = conn.secret;
    this.conn = conn;
    return conn;
  }

  /** The open connection, for a read. */
  private connection(): Connection {
    return this.conn ?? this.open();
  }

  /**
   * The open connection, for a write: opened if it is not, the file put back if it was deleted,
   * opened again after a read-only refusal. Throws when the path does not name the open file.
   */
  private writable(): Connection {
    let conn = this.connection();
    this.checkFile(conn);
    if (this.fileFault) throw this.fileFault;
    conn = this.conn ?? this.open();
    if (this.reopenWanted) {
      this.reopenWanted = false;
      conn.db.close();
      this.conn = undefined;
      conn = this.open();
    }
    return conn;
  }

  /** Compares the path's inode with the open file's; puts a deleted file back. Sets `fileFault`. */
  private checkFile(conn: Connection): void {
    if (!conn.file) return;
    let stat: { dev: number; ino: number } | undefined;
    try {
      stat = statSync(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.fileFault = err as Error;
        return;
      }
    }
    if (stat) {
      this.fileFault =
        stat.dev === conn.file.dev && stat.ino === conn.file.ino
          ? undefined
          : new StoreFault(`${this.path} is no longer the file this gateway opened (replaced?); not writing to it`);
      return;
    }
    if (Date.now() < this.restoreAfter) return; // fileFault says why the last attempt failed
    try {
      this.restore(conn);
      this.fileFault = undefined;
      this.emit({ type: 'restored', path: this.path });
    } catch (err) {
      this.restoreAfter = Date.now() + RESTORE_RETRY_MS;
      this.fileFault = new StoreFault(`${this.path} was deleted and cannot be written again yet: ${(err as Error).message}`);
      this.fault('restore', this.fileFault);
    }
  }

  /** Writes the open (deleted) database to its path and opens that copy. */
  private restore(old: Connection): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const copy = `${this.path}.restore-${process.pid}`;
    rmSync(copy, { force: true });
    // Created 0600 and empty, as VACUUM INTO requires of an existing file.
    closeSync(openSync(copy, 'wx', 0o600));
    try {
      old.stmt.copyTo.run(copy);
    } catch (err) {
      rmSync(copy, { force: true });
      throw err;
    }
    // The copy holds everything: from here on, it is what the next open puts at the path. The
    // old connection's -wal and -shm still have the path's names: they go before the copy takes it.
    this.pendingCopy = copy;
    old.db.close();
    this.conn = undefined;
    for (const left of [`${this.path}-wal`, `${this.path}-shm`]) rmSync(left, { force: true });
    try {
      this.open();
    } catch {
      // The copy is at the path, or waits for it: the next call opens it.
    }
  }

  /** Runs a read; a fault is counted and told. */
  private read<T>(op: string, run: (conn: Connection) => T): Promise<T> {
    return attempt(() => {
      try {
        return run(this.connection());
      } catch (err) {
        if (isFault(err)) this.fault(op, err);
        throw err;
      }
    });
  }

  /** Runs a write; a fault is counted, told, and kept until a write works again. */
  private write<T>(op: string, run: (conn: Connection) => T): Promise<T> {
    return attempt(() => {
      try {
        const result = run(this.writable());
        this.writeFault = undefined;
        return result;
      } catch (err) {
        if (isFault(err)) {
          if (!(err instanceof StoreFault)) this.writeFault = err as Error;
          if (needsReopen(err)) this.reopenWanted = true;
          this.fault(op, err);
        }
        throw err;
      }
    });
  }

  /** The name of an account's ledger row in this file (see the top of this file). */
  sealAccount(account: string): string {
    if (!this.secret) throw new StoreFault(`the store file ${this.path} has not been opened yet`);
    return sealWith(this.secret, account);
  }

  /** SQLite serves this process only: its own writes are all the changes there are. */
  private notify(id: string): void {
    if (this.watchers.length === 0) return;
    // Asynchronously, as the Redis store's notices arrive: a watcher never runs inside a write.
    queueMicrotask(() => {
      for (const w of this.watchers) w.changed(id);
    });
  }

  listKeys(): Promise<KeyRecord[]> {
    return this.read('listKeys', (c) => c.stmt.listKeys.all().map(fromRow));
  }

  getKey(id: string): Promise<KeyRecord | undefined> {
    return this.read('getKey', (c) => {
      const row = c.stmt.getKey.get(id);
      return row ? fromRow(row) : undefined;
    });
  }

  createKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    return this.write('createKey', (c) => {
      const created = c.keyWriteTx(() => {
        try {
          c.stmt.insertKey.run(toRow(record));
        } catch (err) {
          if (isConstraint(err, 'SQLITE_CONSTRAINT_UNIQUE')) return false;
          // An id that exists is a caller's bug (ids are 80 random bits), not a taken name.
          if (isConstraint(err, 'SQLITE_CONSTRAINT_PRIMARYKEY')) throw new Error(`key id ${record.id} exists`);
          throw err;
        }
        return true;
      }, audit);
      if (created) this.notify(record.id);
      return created;
    });
  }

  updateKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    return this.write('updateKey', (c) => {
      const updated = c.keyWriteTx(() => {
        let changes: number;
        try {
          changes = c.stmt.updateKey.run(toRow(record)).changes;
        } catch (err) {
          if (isConstraint(err, 'SQLITE_CONSTRAINT_UNIQUE')) return false;
          throw err;
        }
        // Never an upsert: that would bring back a key another request deleted meanwhile.
        if (changes === 0) throw new Error(`no run-time key ${record.id}`);
        return true;
      }, audit);
      if (updated) this.notify(record.id);
      return updated;
    });
  }

  deleteKey(id: string, audit: AuditEntry): Promise<boolean> {
    return this.write('deleteKey', (c) => {
      const deleted = c.keyWriteTx(() => c.stmt.deleteKey.run(id).changes > 0, audit);
      if (deleted) this.notify(id);
      return deleted;
    });
  }

  watchKeys(changed: (id: string) => void, _resync: () => void): void {
    // `_resync` is never called: a single process misses none of its own writes.
    this.watchers.push({ changed });
  }

  listObjects(kind: ObjectKind): Promise<StoredObject[]> {
    return this.read('listObjects', (c) =>
      c.stmt.listObjects.all(kind).map((r) => ({ kind, id: r.id, value: JSON.parse(r.value) as Record<string, unknown> })),
    );
  }

  getObject(kind: ObjectKind, id: string): Promise<StoredObject | undefined> {
    return this.read('getObject', (c) => {
      const row = c.stmt.getObject.get(kind, id);
      return row ? { kind, id, value: JSON.parse(row.value) as Record<string, unknown> } : undefined;
    });
  }

  putObject(object: StoredObject, mode: 'create' | 'replace', audit: AuditEntry): Promise<boolean> {
    const json = JSON.stringify(object.value);
    return this.write('putObject', (c) => {
      const written = c.keyWriteTx(
        () =>
          (mode === 'create'
            ? c.stmt.insertObject.run(object.kind, object.id, json)
            : c.stmt.replaceObject.run(json, object.kind, object.id)
          ).changes > 0,
        audit,
      );
      if (written) this.notify(objectNotice(object.kind, object.id));
      return written;
    });
  }

  deleteObject(kind: ObjectKind, id: string, audit: AuditEntry): Promise<boolean> {
    return this.write('deleteObject', (c) => {
      const deleted = c.keyWriteTx(() => c.stmt.deleteObject.run(kind, id).changes > 0, audit);
      if (deleted) this.notify(objectNotice(kind, id));
      return deleted;
    });
  }

  appendAudit(entry: AuditEntry): Promise<void> {
    return this.write('appendAudit', (c) => {
      c.stmt.insertAudit.run(auditRow(entry));
    });
  }

  listAudit(query: { from: number; to: number; keyId?: string | undefined }): Promise<AuditEntry[]> {
    return this.read('listAudit', (c) =>
      c.stmt.listAudit.all({ from: query.from, to: query.to, key: query.keyId ?? null }).map((r) => ({
        at: r.at,
        action: r.action as AuditEntry['action'],
        actor: r.actor,
        keyId: r.key_id,
        before: r.before === null ? null : (JSON.parse(r.before) as Record<string, unknown>),
        after: r.after === null ? null : (JSON.parse(r.after) as Record<string, unknown>),
      })),
    );
  }

  addUsage(rows: readonly UsageRow[], batchId: string): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    // One transaction: the batch's id and all its rows, or nothing.
    return this.write('addUsage', (c) => c.addUsageTx(rows, batchId));
  }

  listUsage(query: UsageQuery): Promise<UsageRow[]> {
    const hourly = query.granularity === 'hour';
    return this.read('listUsage', (c) =>
      (hourly ? c.stmt.hourlyUsage : c.stmt.usage)
        .all({
          from: query.from,
          to: query.to,
          keys: query.keyIds === undefined ? null : JSON.stringify([...query.keyIds]),
          accounts: query.accounts === undefined ? null : JSON.stringify([...query.accounts]),
          chain: query.chain ?? null,
          route: query.route ?? null,
        })
        .map((r) => {
          const row: UsageRow = {
            day: r.day,
            keyId: r.key_id,
            account: r.account,
            chain: r.chain,
            route: r.route,
            requests: r.requests,
            credits: r.credits,
            cacheHits: r.cache_hits,
            refused: r.refused,
            rateLimited: r.rate_limited,
            outOfCredits: r.out_of_credits,
            forbidden: r.forbidden,
            clientErrors: r.client_errors,
            errors: r.errors,
          };
          if (hourly) row.hour = hourName(r.day, r.hour ?? 0);
          return row;
        }),
    );
  }

  pruneUsage(beforeDay: string): Promise<void> {
    // `YYYY-MM-DD` strings order as their days do.
    return this.write('pruneUsage', (c) => {
      c.stmt.pruneUsage.run(beforeDay);
      c.stmt.pruneHourlyUsage.run(beforeDay);
    });
  }

  pruneHourlyUsage(beforeDay: string): Promise<void> {
    return this.write('pruneHourlyUsage', (c) => {
      c.stmt.pruneHourlyUsage.run(beforeDay);
    });
  }

  loadLedgers(): Promise<LedgerRow[]> {
    return this.read('loadLedgers', (c) =>
      c.stmt.loadLedgers.all().map((r) => ({
        account: r.account,
        day: r.day,
        daySpent: r.day_spent,
        month: r.month,
        monthSpent: r.month_spent,
        topup: r.topup,
      })),
    );
  }

  saveLedgers(rows: readonly LedgerRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return this.write('saveLedgers', (c) => c.saveLedgersTx(rows));
  }

  /** One transaction; a failed one is rolled back before the call returns, so nothing is written. */
  saveLedgersAndUsage(rows: readonly LedgerRow[], batches: readonly UsageBatch[]): Promise<void> {
    if (rows.length === 0 && batches.every((b) => b.rows.length === 0)) return Promise.resolve();
    return this.write('saveLedgersAndUsage', (c) => c.saveLedgersAndUsageTx(rows, batches));
  }

  /**
   * Resolves when the file is open, its path names it, and writes work: after a write's fault,
   * one small write (meta's `probe`) is tried to learn whether they work again.
   */
  ping(): Promise<void> {
    return attempt(() => {
      if (this.closed) throw new StoreFault('the store is closed');
      const conn = this.writable();
      if (!this.writeFault) return;
      try {
        conn.stmt.probe.run(new Date(Date.now()).toISOString());
        this.writeFault = undefined;
      } catch (err) {
        if (needsReopen(err)) this.reopenWanted = true;
        throw err;
      }
    });
  }

  /** Closes the file, putting it back first if it was deleted (if it can be). */
  close(): Promise<void> {
    this.watchers.length = 0;
    if (this.closed) return Promise.resolve();
    const conn = this.conn;
    if (conn?.file) {
      this.restoreAfter = 0;
      this.checkFile(conn);
    }
    if (this.pendingCopy) {
      try {
        renameSync(this.pendingCopy, this.path);
        this.pendingCopy = undefined;
      } catch {
        // Left where it is, named after the path: an operator can move it there.
      }
    }
    this.closed = true;
    const lost = this.fileFault !== undefined && !existsSync(this.path);
    // checkFile may have replaced the connection with the restored copy.
    const current = this.conn;
    this.conn = undefined;
    if (current?.db.open) current.db.close();
    if (lost) {
      // What was written since the file was deleted is gone with it; its -wal and -shm must not
      // meet the next file at this path.
      for (const left of [`${this.path}-wal`, `${this.path}-shm`]) rmSync(left, { force: true });
    }
    return Promise.resolve();
  }
}
