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
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type {
  AuditEntry,
  AuditStore,
  KeyRecord,
  KeyStore,
  LedgerRow,
  LedgerStore,
  Storage,
  UsageQuery,
  UsageRow,
  UsageStore,
} from './types.js';

/** The user_version this code writes and reads. */
export const SQLITE_SCHEMA_VERSION = 2;

// STRICT tables (https://www.sqlite.org/stricttables.html): a value of the wrong type is an error
// instead of being stored as whatever it is. Credits are integers (config/schema.ts).
const SCHEMA_V1 = `
CREATE TABLE keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  owner TEXT,
  plan TEXT NOT NULL,
  chains TEXT, -- JSON array of chain ids; NULL: every chain
  status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  prefix TEXT NOT NULL,
  digest TEXT NOT NULL,
  previous_digest TEXT, -- with previous_until: the secret a roll replaced; both NULL when none
  previous_until INTEGER
) STRICT;

CREATE TABLE audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  action TEXT NOT NULL,
  key_id TEXT NOT NULL,
  before TEXT, -- JSON object or NULL
  after TEXT
) STRICT;
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_key_at ON audit (key_id, at);

CREATE TABLE usage (
  day TEXT NOT NULL,
  key_id TEXT NOT NULL,
  chain TEXT NOT NULL,
  route TEXT NOT NULL,
  requests INTEGER NOT NULL,
  credits INTEGER NOT NULL,
  cache_hits INTEGER NOT NULL,
  refused INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  PRIMARY KEY (day, key_id, chain, route)
) STRICT, WITHOUT ROWID;

CREATE TABLE ledgers (
  account TEXT PRIMARY KEY,
  period_id TEXT NOT NULL,
  spent INTEGER NOT NULL,
  topup INTEGER NOT NULL
) STRICT;
`;

// Version 2: the usage batches already added, so that one sent again adds nothing (store/types.ts).
const SCHEMA_V2 = `
CREATE TABLE usage_batches (
  id TEXT PRIMARY KEY,
  at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`;

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
}

interface AuditRow {
  at: number;
  action: string;
  key_id: string;
  before: string | null;
  after: string | null;
}

interface UsageDbRow {
  day: string;
  key_id: string;
  chain: string;
  route: string;
  requests: number;
  credits: number;
  cache_hits: number;
  refused: number;
  errors: number;
}

interface LedgerDbRow {
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
  };
}

function auditRow(entry: AuditEntry): AuditRow {
  return {
    at: entry.at,
    action: entry.action,
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

/** Prepared once: better-sqlite3 compiles a statement at prepare(), and run/get/all reuse it. */
function prepareStatements(db: Database.Database) {
  return {
    listKeys: db.prepare<[], KeyRow>('SELECT * FROM keys ORDER BY id'),
    getKey: db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE id = ?'),
    insertKey: db.prepare<KeyRow>(
      `INSERT INTO keys (id, name, owner, plan, chains, status, expires_at, created_at, prefix, digest, previous_digest, previous_until)
       VALUES (@id, @name, @owner, @plan, @chains, @status, @expires_at, @created_at, @prefix, @digest, @previous_digest, @previous_until)`,
    ),
    updateKey: db.prepare<KeyRow>(
      `UPDATE keys SET name = @name, owner = @owner, plan = @plan, chains = @chains, status = @status, expires_at = @expires_at,
         created_at = @created_at, prefix = @prefix, digest = @digest, previous_digest = @previous_digest, previous_until = @previous_until
       WHERE id = @id`,
    ),
    deleteKey: db.prepare<[string]>('DELETE FROM keys WHERE id = ?'),
    insertAudit: db.prepare<AuditRow>(
      'INSERT INTO audit (at, action, key_id, before, after) VALUES (@at, @action, @key_id, @before, @after)',
    ),
    listAudit: db.prepare<{ from: number; to: number; key: string | null }, AuditRow>(
      `SELECT at, action, key_id, before, after FROM audit
       WHERE at BETWEEN @from AND @to AND (@key IS NULL OR key_id = @key)
       ORDER BY at, id`,
    ),
    // https://www.sqlite.org/lang_upsert.html: `excluded` is the row that was to be inserted.
    addUsage: db.prepare<UsageDbRow>(
      `INSERT INTO usage (day, key_id, chain, route, requests, credits, cache_hits, refused, errors)
       VALUES (@day, @key_id, @chain, @route, @requests, @credits, @cache_hits, @refused, @errors)
       ON CONFLICT (day, key_id, chain, route) DO UPDATE SET
         requests = requests + excluded.requests,
         credits = credits + excluded.credits,
         cache_hits = cache_hits + excluded.cache_hits,
         refused = refused + excluded.refused,
         errors = errors + excluded.errors`,
    ),
    // The key filter is a JSON array read with json_each (https://www.sqlite.org/json1.html#jeach),
    // so one prepared statement serves every query.
    usage: db.prepare<{ from: string; to: string; keys: string | null; chain: string | null; route: string | null }, UsageDbRow>(
      `SELECT * FROM usage
       WHERE day BETWEEN @from AND @to
         AND (@keys IS NULL OR key_id IN (SELECT value FROM json_each(@keys)))
         AND (@chain IS NULL OR chain = @chain)
         AND (@route IS NULL OR route = @route)
       ORDER BY day, key_id, chain, route`,
    ),
    pruneUsage: db.prepare<[string]>('DELETE FROM usage WHERE day < ?'),
    addBatch: db.prepare<[string, number]>('INSERT INTO usage_batches (id, at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING'),
    forgetBatches: db.prepare<[number]>('DELETE FROM usage_batches WHERE at < ?'),
    loadLedgers: db.prepare<[], LedgerDbRow>('SELECT * FROM ledgers ORDER BY account'),
    saveLedger: db.prepare<LedgerDbRow>(
      `INSERT INTO ledgers (account, period_id, spent, topup) VALUES (@account, @period_id, @spent, @topup)
       ON CONFLICT (account) DO UPDATE SET period_id = excluded.period_id, spent = excluded.spent, topup = excluded.topup`,
    ),
  };
}

export class SqliteStore implements Storage, KeyStore, AuditStore, UsageStore, LedgerStore {
  readonly kind = 'sqlite';
  readonly keys = this;
  readonly audit = this;
  readonly usage = this;
  readonly ledgers = this;
  private readonly db: Database.Database;
  private readonly watchers: { changed: (id: string) => void }[] = [];
  private readonly stmt: ReturnType<typeof prepareStatements>;
  /** Transaction functions, made once too (https://github.com/WiseLibs/better-sqlite3/blob/master/docs/api.md#transactionfunction---function). */
  private readonly addUsageTx: (rows: readonly UsageRow[], batchId: string) => void;
  private readonly saveLedgersTx: (rows: readonly LedgerRow[]) => void;
  /** A key write and its audit entry: both or neither. */
  private readonly keyWriteTx: (write: () => boolean, audit: AuditEntry) => boolean;

  constructor(
    path: string,
    private readonly now: () => number = Date.now,
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.migrate();
    } catch (err) {
      this.db.close();
      throw err;
    }
    const stmt = (this.stmt = prepareStatements(this.db));
    this.addUsageTx = this.db.transaction((rows: readonly UsageRow[], batchId: string) => {
      const at = this.now();
      stmt.forgetBatches.run(at - BATCH_MEMORY_MS);
      if (stmt.addBatch.run(batchId, at).changes === 0) return; // added before
      for (const r of rows) {
        stmt.addUsage.run({
          day: r.day,
          key_id: r.keyId,
          chain: r.chain,
          route: r.route,
          requests: r.requests,
          credits: r.credits,
          cache_hits: r.cacheHits,
          refused: r.refused,
          errors: r.errors,
        });
      }
    });
    this.saveLedgersTx = this.db.transaction((rows: readonly LedgerRow[]) => {
      for (const r of rows) stmt.saveLedger.run({ account: r.account, period_id: r.periodId, spent: r.spent, topup: r.topup });
    });
    // The write, then its audit entry if it changed something; an error in either undoes both.
    this.keyWriteTx = this.db.transaction((write: () => boolean, audit: AuditEntry): boolean => {
      const changed = write();
      if (changed) stmt.insertAudit.run(auditRow(audit));
      return changed;
    });
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new Error(
        `the store file has schema version ${version}; this gateway knows up to ${SQLITE_SCHEMA_VERSION}: run a newer gateway`,
      );
    }
    if (version === SQLITE_SCHEMA_VERSION) return;
    // One transaction: a crash mid-way leaves the file at the version it had.
    this.db.transaction(() => {
      if (version < 1) this.db.exec(SCHEMA_V1);
      if (version < 2) this.db.exec(SCHEMA_V2);
      this.db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
    })();
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
    return attempt(() => this.stmt.listKeys.all().map(fromRow));
  }

  getKey(id: string): Promise<KeyRecord | undefined> {
    return attempt(() => {
      const row = this.stmt.getKey.get(id);
      return row ? fromRow(row) : undefined;
    });
  }

  createKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    return attempt(() => {
      const created = this.keyWriteTx(() => {
        try {
          this.stmt.insertKey.run(toRow(record));
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
    return attempt(() => {
      const updated = this.keyWriteTx(() => {
        let changes: number;
        try {
          changes = this.stmt.updateKey.run(toRow(record)).changes;
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
    return attempt(() => {
      const deleted = this.keyWriteTx(() => this.stmt.deleteKey.run(id).changes > 0, audit);
      if (deleted) this.notify(id);
      return deleted;
    });
  }

  watchKeys(changed: (id: string) => void, _resync: () => void): void {
    // `_resync` is never called: a single process misses none of its own writes.
    this.watchers.push({ changed });
  }

  appendAudit(entry: AuditEntry): Promise<void> {
    return attempt(() => {
      this.stmt.insertAudit.run(auditRow(entry));
    });
  }

  listAudit(query: { from: number; to: number; keyId?: string | undefined }): Promise<AuditEntry[]> {
    return attempt(() =>
      this.stmt.listAudit.all({ from: query.from, to: query.to, key: query.keyId ?? null }).map((r) => ({
        at: r.at,
        action: r.action as AuditEntry['action'],
        keyId: r.key_id,
        before: r.before === null ? null : (JSON.parse(r.before) as Record<string, unknown>),
        after: r.after === null ? null : (JSON.parse(r.after) as Record<string, unknown>),
      })),
    );
  }

  addUsage(rows: readonly UsageRow[], batchId: string): Promise<void> {
    // One transaction: the batch's id and all its rows, or nothing.
    return attempt(() => {
      if (rows.length > 0) this.addUsageTx(rows, batchId);
    });
  }

  listUsage(query: UsageQuery): Promise<UsageRow[]> {
    return attempt(() =>
      this.stmt.usage
        .all({
          from: query.from,
          to: query.to,
          keys: query.keyIds === undefined ? null : JSON.stringify([...query.keyIds]),
          chain: query.chain ?? null,
          route: query.route ?? null,
        })
        .map((r) => ({
          day: r.day,
          keyId: r.key_id,
          chain: r.chain,
          route: r.route,
          requests: r.requests,
          credits: r.credits,
          cacheHits: r.cache_hits,
          refused: r.refused,
          errors: r.errors,
        })),
    );
  }

  pruneUsage(beforeDay: string): Promise<void> {
    // `YYYY-MM-DD` strings order as their days do.
    return attempt(() => {
      this.stmt.pruneUsage.run(beforeDay);
    });
  }

  loadLedgers(): Promise<LedgerRow[]> {
    return attempt(() =>
      this.stmt.loadLedgers.all().map((r) => ({ account: r.account, periodId: r.period_id, spent: r.spent, topup: r.topup })),
    );
  }

  saveLedgers(rows: readonly LedgerRow[]): Promise<void> {
    return attempt(() => {
      if (rows.length > 0) this.saveLedgersTx(rows);
    });
  }

  /** An open file answers. */
  ping(): Promise<void> {
    return this.db.open ? Promise.resolve() : Promise.reject(new Error('the store file is closed'));
  }

  close(): Promise<void> {
    this.watchers.length = 0;
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}
