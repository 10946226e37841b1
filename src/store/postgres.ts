// The store shared by every gateway host of one PostgreSQL database: run-time keys, the audit
// trail, usage rows, and the quota ledgers when the gateway has no Redis (store/open.ts). Through
// node-postgres (https://node-postgres.com/): a pool for the records, and one client of its own
// that LISTENs for key changes.
//
// Every table lives in one PostgreSQL schema (`public` unless told otherwise), created and
// migrated by the gateway itself, lazily: the first call of any method runs the migration, every
// call awaits it, and one that failed (the database down) is tried again by the next call. So a
// gateway whose database is down at start still starts, and its calls reject until it is back.
//
// A database that does not answer never holds a caller up: a new connection gives up after
// CONNECT_TIMEOUT_MS, a statement after STATEMENT_TIMEOUT_MS (server side, statement_timeout)
// or QUERY_TIMEOUT_MS (client side, for a server that stopped answering altogether); a connection
// that fails while idle in the pool is logged and dropped, never an uncaught error
// (https://node-postgres.com/apis/pool#error).
//
// No secret is ever stored, by construction: a record is written column by column, so a
// property the caller's object carries beyond KeyRecord's fields never reaches the database (as
// sqlite.ts does with `toRow`).
//
// Ledger rows are named HMAC-SHA256(store secret, account), not by the account (a configured
// key's sha256), for the reasons sqlite.ts's head gives: the store secret is 32 random bytes made
// with the schema (table meta, `ledger_secret`), and the in-process quota store names its rows
// through sealAccount (quota/memory.ts). A schema of version 2 has plain accounts: its migration
// renames them. PostgreSQL keeps the old row versions until VACUUM reclaims them
// (https://www.postgresql.org/docs/current/routine-vacuuming.html): `VACUUM FULL <schema>.ledgers`
// after the upgrade removes them at once.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ClientConfig, PoolClient, PoolConfig } from 'pg';
import { dayStartMs, hourName, hourOfDay } from './day.js';
import { checkUsageDelta, compareUsageRows, copyTerms, copyUsageRow, COUNTERS, termsJson, usageRowId } from './records.js';
import type {
  AuditEntry,
  AuditStore,
  KeyRecord,
  KeyStore,
  KeyTerms,
  LedgerRow,
  LedgerStore,
  ObjectKind,
  StoredObject,
  Storage,
  UsageBatch,
  UsageQuery,
  UsageRow,
  UsageStore,
} from './types.js';
import { objectNotice, withOutcomeUnknown } from './types.js';
import type { OutboxStore } from './outbox.js';
import { PostgresOutbox } from './outbox-postgres.js';
import { inSchema, readMigrations } from './migrations.js';

/** The newest schema version this code writes and reads: the last of MIGRATIONS. */
export const POSTGRES_SCHEMA_VERSION = 8;

/** A new connection that is not up by then fails (the pool's connectionTimeoutMillis). */
const CONNECT_TIMEOUT_MS = 2_000;
/** The server cancels a statement running longer (https://www.postgresql.org/docs/current/runtime-config-client.html#GUC-STATEMENT-TIMEOUT). */
const STATEMENT_TIMEOUT_MS = 5_000;
/** The client gives up on an answer that has not come by then: a server that stopped answering cannot cancel anything. */
const QUERY_TIMEOUT_MS = 6_000;
/**
 * The server ends a session left idle inside a transaction that long, releasing its locks: a
 * gateway that stalls mid-transaction never blocks the others for longer
 * (https://www.postgresql.org/docs/current/runtime-config-client.html#GUC-IDLE-IN-TRANSACTION-SESSION-TIMEOUT).
 */
const IDLE_IN_TRANSACTION_MS = 10_000;
/** ping()'s own, shorter bound: /readyz answers quickly either way. */
const PING_TIMEOUT_MS = 2_000;
/** How long a usage batch's id is remembered, ms: far longer than a retry takes to follow (as sqlite.ts). */
const BATCH_MEMORY_MS = 3_600_000;
/** The listener's reconnection delays: the first, doubling up to the last. */
const LISTEN_RETRY_FIRST_MS = 100;
const LISTEN_RETRY_MAX_MS = 2_000;
/**
 * How often the listener asks its connection a `SELECT 1`. A connection that died without a word
 * (a host or a network gone, no TCP reset) is otherwise noticed only by TCP keepalive, minutes
 * later; meanwhile every notice would be lost without a resync.
 */
const LISTEN_HEARTBEAT_MS = 10_000;

/**
 * Each step brings the schema from the version before it to its own, in the migration's
 * transaction: the file src/store/sql/postgres/<version>-<name>.sql (store/migrations.ts), its
 * schema named `:schema`, or code. A later gateway appends steps; it never edits one that shipped.
 */
const MIGRATION_FILES = readMigrations('postgres', POSTGRES_SCHEMA_VERSION, [3]);
type MigrationStep = (s: string) => string | ((client: PoolClient) => Promise<void>);
const MIGRATIONS: ReadonlyMap<number, MigrationStep> = new Map<number, MigrationStep>([
  ...[...MIGRATION_FILES].map(([version, sql]) => [version, (s: string) => inSchema(sql, s)] as [number, MigrationStep]),
  // Version 3: the store secret, and every ledger row renamed by it (the head of this file).
  [
    3,
    (s: string) => async (client: PoolClient) => {
      await client.query(`CREATE TABLE ${s}.meta (name text COLLATE "C" PRIMARY KEY, value text NOT NULL)`);
      const secret = randomBytes(32);
      await client.query(`INSERT INTO ${s}.meta (name, value) VALUES ('ledger_secret', $1)`, [secret.toString('hex')]);
      const { rows } = await client.query<{ account: string }>(`SELECT account FROM ${s}.ledgers`);
      if (rows.length === 0) return;
      const plain = rows.map((r) => r.account);
      await client.query(
        `UPDATE ${s}.ledgers AS l SET account = n.sealed FROM unnest($1::text[], $2::text[]) AS n(plain, sealed) WHERE l.account = n.plain`,
        [plain, plain.map((a) => sealWith(secret, a))],
      );
    },
  ],
]);

const sealWith = (secret: Buffer, account: string): string => createHmac('sha256', secret).update(account, 'utf8').digest('hex');

export interface PostgresStoreOptions {
  /** The gateway's clock: usage batch instants. */
  now?: (() => number) | undefined;
  /** Whether this store keeps the quota ledgers (a gateway without Redis). */
  ledgers?: boolean | undefined;
  /** The PostgreSQL schema holding the tables; `public` by default. Made if missing. */
  schema?: string | undefined;
  log?: { warn(obj: object, msg: string): void } | undefined;
}

/** A quoted identifier (https://www.postgresql.org/docs/current/sql-syntax-lexical.html#SQL-SYNTAX-IDENTIFIERS). */
function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Names are at most 63 bytes (NAMEDATALEN - 1); a longer one would be cut silently, and two
 * schemas could then share tables (https://www.postgresql.org/docs/current/sql-syntax-lexical.html#SQL-SYNTAX-IDENTIFIERS).
 */
const MAX_NAME_BYTES = 63;

function checkSchemaName(schema: string): void {
  const bytes = Buffer.byteLength(schema);
  if (bytes === 0 || bytes > MAX_NAME_BYTES || schema.includes('\0')) {
    throw new RangeError(`a PostgreSQL schema name is 1 to ${MAX_NAME_BYTES} bytes, without NUL: ${JSON.stringify(schema)}`);
  }
}

/** A name of at most 63 bytes made of `head` and the schema, or of a digest of it when too long. */
function nameFor(head: string, schema: string): string {
  const name = `${head}${schema}`;
  return Buffer.byteLength(name) <= MAX_NAME_BYTES ? name : `${head}${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

/**
 * The advisory lock key of a schema's migration: 64 bits of a digest of its name, so that two
 * schemas of one database migrate independently
 * (https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-ADVISORY-LOCKS).
 */
function migrationLockKey(schema: string): string {
  return createHash('sha256').update(`explorer-gateway migration ${schema}`).digest().readBigInt64BE(0).toString();
}

/** A bigint column as pg returns it (a string: int8 may exceed 2^53), as a number; the gateway's values stay far below. */
const int = (value: string | number): number => Number(value);
const intOrNull = (value: string | number | null): number | null => (value === null ? null : Number(value));

/** A day as a query or row names it; RangeError for anything but a real `YYYY-MM-DD` (as the Redis store). */
function checkDay(day: string): string {
  if (dayStartMs(day) === undefined) throw new RangeError(`not a day (YYYY-MM-DD): ${day}`);
  return day;
}

/** An instant bound of an audit query as a bigint parameter: whole milliseconds, within what a double holds exactly. */
function instant(ms: number, round: (n: number) => number): number {
  if (Number.isNaN(ms)) throw new RangeError('an audit instant is not a number');
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, round(ms)));
}

/** PostgreSQL's SQLSTATE for a unique constraint broken (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
const UNIQUE_VIOLATION = '23505';

function brokenConstraint(err: unknown): string | undefined {
  return err instanceof pg.DatabaseError && err.code === UNIQUE_VIOLATION ? err.constraint : undefined;
}

interface KeyDbRow {
  id: string;
  name: string;
  owner: string | null;
  plan: string;
  chains: string[] | null;
  status: string;
  expires_at: string | null;
  created_at: string;
  prefix: string;
  digest: string;
  previous_digest: string | null;
  previous_until: string | null;
  terms: Partial<KeyTerms> | null;
}

interface AuditDbRow {
  at: string;
  action: string;
  actor: string | null;
  key_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

interface UsageDbRow {
  day: string;
  /** Hourly rows only (usage_hours). */
  hour?: number;
  key_id: string;
  account: string;
  chain: string;
  route: string;
  requests: string;
  credits: string;
  cache_hits: string;
  refused: string;
  errors: string;
  rate_limited: string;
  out_of_credits: string;
  forbidden: string;
  client_errors: string;
}

interface LedgerDbRow {
  account: string;
  day: string;
  day_spent: string;
  month: string;
  month_spent: string;
  topup: string;
}

const KEY_COLUMNS = 'id, name, owner, plan, chains, status, expires_at, created_at, prefix, digest, previous_digest, previous_until, terms';

/** The record's fields, and only those, as the parameters $1..$13 of KEY_COLUMNS. */
function keyParams(r: KeyRecord): unknown[] {
  return [
    r.id,
    r.name,
    r.owner,
    r.plan,
    r.chains === null ? null : [...r.chains],
    r.status,
    r.expiresAt,
    r.createdAt,
    r.prefix,
    r.digest,
    r.previous?.digest ?? null,
    r.previous?.until ?? null,
    termsJson(r),
  ];
}

function fromKeyRow(row: KeyDbRow): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    owner: row.owner,
    plan: row.plan,
    chains: row.chains,
    status: row.status as KeyRecord['status'],
    expiresAt: intOrNull(row.expires_at),
    createdAt: int(row.created_at),
    prefix: row.prefix,
    digest: row.digest,
    previous:
      row.previous_digest === null || row.previous_until === null ? null : { digest: row.previous_digest, until: int(row.previous_until) },
    ...copyTerms(row.terms ?? {}),
  };
}

/** An audit entry's fields as parameters: `before` and `after` as JSON text (pg would send a JS array as a PostgreSQL array). */
function auditParams(e: AuditEntry): unknown[] {
  if (!Number.isSafeInteger(e.at)) throw new RangeError(`an audit instant is a whole number of milliseconds: ${e.at}`);
  return [
    e.at,
    e.action,
    e.keyId,
    e.before === null ? null : JSON.stringify(e.before),
    e.after === null ? null : JSON.stringify(e.after),
    e.actor ?? null,
  ];
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A batch's rows summed per row of `table`: per day (or hour), key, account, chain and route (one
 * upsert may not touch a row twice: https://www.postgresql.org/docs/current/sql-insert.html#SQL-ON-CONFLICT),
 * in one order shared by every gateway, so that two batches at once lock their rows in the same
 * order and never deadlock. The hourly sums leave out the rows without an hour.
 */
function sumRows(rows: readonly UsageRow[], table: 'usage' | 'usage_hours'): UsageRow[] {
  const sums = new Map<string, UsageRow>();
  for (const r of rows) {
    checkUsageDelta(r);
    const { hour, ...daily } = copyUsageRow(r);
    if (table === 'usage_hours' && hour === undefined) continue;
    const row = table === 'usage' ? daily : { ...daily, hour };
    const id = usageRowId(row);
    const sum = sums.get(id);
    if (sum) for (const c of COUNTERS) sum[c] = (sum[c] ?? 0) + (row[c] ?? 0);
    else sums.set(id, row);
  }
  return [...sums.values()].sort(compareUsageRows);
}

/** A batch's sums for both tables: its daily rows and its hourly rows, written in one transaction. */
interface BatchSums {
  daily: UsageRow[];
  hourly: UsageRow[];
}

function batchSums(rows: readonly UsageRow[]): BatchSums {
  return { daily: sumRows(rows, 'usage'), hourly: sumRows(rows, 'usage_hours') };
}

export class PostgresStore implements Storage, KeyStore, AuditStore, UsageStore, LedgerStore {
  readonly kind = 'postgres';
  readonly faults = undefined;
  readonly keys = this;
  readonly audit = this;
  readonly usage = this;
  /** Kept here only where no Redis keeps the quota counters (store/open.ts). */
  readonly ledgers: LedgerStore | undefined;
  /** The webhook outbox, in this schema (store/outbox-postgres.ts). */
  readonly outbox: OutboxStore;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The application_name of the LISTEN connection, as pg_stat_activity shows it. */
  readonly listenerName: string;
  private readonly pool: pg.Pool;
  private readonly listenerConfig: ClientConfig;
  private readonly now: () => number;
  private readonly log: { warn(obj: object, msg: string): void };
  /** The schema, quoted, to prefix table names with. */
  private readonly s: string;
  /** The NOTIFY channel of key changes: one per schema, so that two schemas of one database never hear each other. */
  private readonly channel: string;
  /** The key of the ledger rows' names, read with the migration (the head of this file). */
  private secret: Buffer | undefined;
  /** The migration, once it has succeeded or while it runs; cleared when it fails, for the next call to try again. */
  private migrated: Promise<void> | undefined;
  private readonly watchers: { changed: (id: string) => void; resync: () => void }[] = [];
  private listener: pg.Client | undefined;
  private listenTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private listenFailures = 0;
  /** Set when a LISTEN connection failed or was lost: notices may have been missed, so the next LISTEN asks for a resync. */
  private missed = false;
  private closed: Promise<void> | undefined;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.schema = options.schema ?? 'public';
    checkSchemaName(this.schema);
    this.s = identifier(this.schema);
    this.channel = nameFor('egw_keys:', this.schema);
    this.listenerName = nameFor('egw-listen:', this.schema);
    this.now = options.now ?? Date.now;
    this.log = options.log ?? { warn: (obj, msg) => console.warn(msg, obj) };
    this.ledgers = options.ledgers ? this : undefined;
    this.outbox = new PostgresOutbox(this.s, <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      this.query<R>(text, values),
    );
    const base: ClientConfig = {
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // Both sent at connection start: node-postgres's client options
      // (https://node-postgres.com/apis/client#new-client).
      statement_timeout: STATEMENT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      keepAlive: true,
    };
    const poolConfig: PoolConfig = { ...base, application_name: 'explorer-gateway' };
    // The pool connects lazily, on the first query (https://node-postgres.com/apis/pool).
    this.pool = new pg.Pool(poolConfig);
    this.pool.on('error', (err) => this.log.warn({ err: err.message }, 'a PostgreSQL connection failed while idle; dropped'));
    // A client's error while it is checked out: pg rejects its query and then emits 'error',
    // which would be uncaught without a listener; the query's rejection is what the caller sees.
    this.pool.on('connect', (client) => client.on('error', () => {}));
    this.listenerConfig = { ...base, application_name: this.listenerName, query_timeout: PING_TIMEOUT_MS };
  }

  // --- schema ---

  /**
   * Resolves when the schema is at this code's version, migrating it if need be: on first use,
   * and again after a failed attempt. Every method awaits it.
   */
  migrate(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the PostgreSQL store is closed'));
    this.migrated ??= this.runMigration().catch((err: unknown) => {
      this.migrated = undefined;
      throw err;
    });
    return this.migrated;
  }

  /**
   * One transaction under a transaction-level advisory lock of the schema: two gateways starting
   * together take turns, and the second finds the first one's work done. The lock is released at
   * commit or rollback. `schema_version` has a row per version applied.
   */
  private async runMigration(): Promise<void> {
    const s = this.s;
    await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [migrationLockKey(this.schema)]);
      // Made only when missing: CREATE SCHEMA needs the database's CREATE privilege
      // (https://www.postgresql.org/docs/current/sql-createschema.html), and PostgreSQL 15 checks
      // it before IF NOT EXISTS finds the schema there; a gateway given its schema by an operator
      // need not have it.
      const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schema]);
      if (!rowCount) await client.query(`CREATE SCHEMA ${s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${s}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${s}.schema_version`);
      const version = rows[0]?.version ?? 0;
      if (version > POSTGRES_SCHEMA_VERSION) {
        throw new Error(
          `the PostgreSQL schema ${this.schema} has schema version ${version}; this gateway knows up to ${POSTGRES_SCHEMA_VERSION}: run a newer gateway`,
        );
      }
      for (let v = version + 1; v <= POSTGRES_SCHEMA_VERSION; v++) {
        const step = MIGRATIONS.get(v)!(s);
        if (typeof step === 'string') await client.query(step);
        else await step(client);
        await client.query(`INSERT INTO ${s}.schema_version (version) VALUES ($1)`, [v]);
      }
      const secret = await client.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE name = 'ledger_secret'`);
      const hex = secret.rows[0]?.value;
      if (hex === undefined) throw new Error(`the PostgreSQL schema ${this.schema} has no ledger_secret`);
      this.secret = Buffer.from(hex, 'hex');
    });
  }

  /**
   * `run` inside BEGIN and COMMIT on one pooled connection. When the server refused a statement,
   * ROLLBACK, and the connection goes back to the pool. When the connection itself failed (lost,
   * or no answer within QUERY_TIMEOUT_MS), no ROLLBACK is tried, which would wait as long again:
   * the connection is closed instead (release with the error:
   * https://node-postgres.com/apis/pool#releasing-clients), and the server rolls back a
   * transaction whose session ends.
   */
  private async transaction<T>(run: (client: PoolClient) => Promise<T>, progress?: { committing: boolean }): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await run(client);
      if (progress) progress.committing = true;
      await client.query('COMMIT');
      return result;
    } catch (err) {
      broken = err instanceof Error ? err : new Error(String(err));
      if (err instanceof pg.DatabaseError) {
        try {
          await client.query('ROLLBACK');
          broken = undefined;
        } catch {
          // the connection failed too: closed below
        }
      }
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /** One statement, once the schema is ready. */
  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    await this.migrate();
    return this.pool.query<R>(text, values);
  }

  // --- keys ---

  async listKeys(): Promise<KeyRecord[]> {
    const { rows } = await this.query<KeyDbRow>(`SELECT ${KEY_COLUMNS} FROM ${this.s}.keys ORDER BY id`);
    return rows.map(fromKeyRow);
  }

  async getKey(id: string): Promise<KeyRecord | undefined> {
    const { rows } = await this.query<KeyDbRow>(`SELECT ${KEY_COLUMNS} FROM ${this.s}.keys WHERE id = $1`, [id]);
    return rows[0] && fromKeyRow(rows[0]);
  }

  /**
   * The write, its audit entry and its NOTIFY in one transaction: both records or neither, and
   * the notice is delivered at commit only, never for a write that was undone
   * (https://www.postgresql.org/docs/current/sql-notify.html). `write` says whether it changed
   * anything; when it did not, nothing else is written.
   */
  private async keyWrite(id: string, audit: AuditEntry, write: (client: PoolClient) => Promise<boolean>): Promise<boolean> {
    const entry = auditParams(audit);
    await this.migrate();
    return this.transaction(async (client) => {
      if (!(await write(client))) return false;
      await client.query(`INSERT INTO ${this.s}.audit (at, action, key_id, before, after, actor) VALUES ($1, $2, $3, $4, $5, $6)`, entry);
      await client.query('SELECT pg_notify($1, $2)', [this.channel, id]);
      return true;
    });
  }

  createKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    return this.keyWrite(record.id, audit, async (client) => {
      try {
        await client.query(
          `INSERT INTO ${this.s}.keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
          keyParams(record),
        );
      } catch (err) {
        const constraint = brokenConstraint(err);
        if (constraint === 'keys_name_key') return false;
        // An id that exists is a caller's bug (ids are 80 random bits), not a taken name.
        if (constraint === 'keys_pkey') throw new Error(`key id ${record.id} exists`);
        throw err;
      }
      return true;
    });
  }

  updateKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    return this.keyWrite(record.id, audit, async (client) => {
      let changed: number | null;
      try {
        ({ rowCount: changed } = await client.query(
          `UPDATE ${this.s}.keys SET name = $2, owner = $3, plan = $4, chains = $5, status = $6, expires_at = $7, created_at = $8,
             prefix = $9, digest = $10, previous_digest = $11, previous_until = $12, terms = $13
           WHERE id = $1`,
          keyParams(record),
        ));
      } catch (err) {
        if (brokenConstraint(err) === 'keys_name_key') return false;
        throw err;
      }
      // Never an upsert: that would bring back a key another gateway deleted meanwhile.
      if (!changed) throw new Error(`no run-time key ${record.id}`);
      return true;
    });
  }

  deleteKey(id: string, audit: AuditEntry): Promise<boolean> {
    return this.keyWrite(id, audit, async (client) => {
      const { rowCount } = await client.query(`DELETE FROM ${this.s}.keys WHERE id = $1`, [id]);
      return (rowCount ?? 0) > 0;
    });
  }

  async listObjects(kind: ObjectKind): Promise<StoredObject[]> {
    const { rows } = await this.query<{ id: string; value: Record<string, unknown> }>(
      `SELECT id, value FROM ${this.s}.objects WHERE kind = $1 ORDER BY id`,
      [kind],
    );
    return rows.map((r) => ({ kind, id: r.id, value: r.value }));
  }

  async getObject(kind: ObjectKind, id: string): Promise<StoredObject | undefined> {
    const { rows } = await this.query<{ value: Record<string, unknown> }>(
      `SELECT value FROM ${this.s}.objects WHERE kind = $1 AND id = $2`,
      [kind, id],
    );
    return rows[0] && { kind, id, value: rows[0].value };
  }

  putObject(object: StoredObject, mode: 'create' | 'replace', audit: AuditEntry): Promise<boolean> {
    const json = JSON.stringify(object.value);
    return this.keyWrite(objectNotice(object.kind, object.id), audit, async (client) => {
      const { rowCount } =
        mode === 'create'
          ? await client.query(`INSERT INTO ${this.s}.objects (kind, id, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
              object.kind,
              object.id,
              json,
            ])
          : await client.query(`UPDATE ${this.s}.objects SET value = $3 WHERE kind = $1 AND id = $2`, [object.kind, object.id, json]);
      return (rowCount ?? 0) > 0;
    });
  }

  deleteObject(kind: ObjectKind, id: string, audit: AuditEntry): Promise<boolean> {
    return this.keyWrite(objectNotice(kind, id), audit, async (client) => {
      const { rowCount } = await client.query(`DELETE FROM ${this.s}.objects WHERE kind = $1 AND id = $2`, [kind, id]);
      return (rowCount ?? 0) > 0;
    });
  }

  /**
   * LISTEN on a connection of its own (a pooled one is handed to other queries; a notice comes to
   * the session that listens: https://www.postgresql.org/docs/current/sql-listen.html). NOTIFY
   * reaches only sessions listening when it commits, so each time that connection is lost this
   * store connects again (after a delay, doubling up to LISTEN_RETRY_MAX_MS), LISTENs, and only
   * then asks for a resync, which reads every key after the LISTEN is back: nothing falls between
   * the two. Not when the first connection listens at once: the caller has just read every key
   * (keys/runtime.ts); but after a first attempt that failed, since the caller's read may have
   * come before the LISTEN.
   */
  watchKeys(changed: (id: string) => void, resync: () => void): void {
    this.watchers.push({ changed, resync });
    if (this.closed || this.listener || this.listenTimer) return;
    void this.listen();
  }

  private async listen(): Promise<void> {
    this.listenTimer = undefined;
    if (this.closed) return;
    const client = new pg.Client(this.listenerConfig);
    this.listener = client;
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      clearInterval(this.heartbeat);
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => {});
      if (this.closed) return;
      if (!this.missed || this.listenFailures === 0) {
        this.log.warn({ err: err?.message ?? 'connection ended', schema: this.schema }, 'PostgreSQL key listener lost; connecting again');
      }
      this.missed = true;
      const delay = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_FIRST_MS * 2 ** this.listenFailures++);
      this.listenTimer = setTimeout(() => void this.listen(), delay);
      this.listenTimer.unref();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (msg) => {
      if (msg.channel !== this.channel || msg.payload === undefined || this.closed) return;
      for (const w of this.watchers) w.changed(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${identifier(this.channel)}`);
    } catch (err) {
      onLost(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (lost) return;
    if (this.closed) {
      onLost();
      return;
    }
    this.listenFailures = 0;
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch((err: unknown) => onLost(err instanceof Error ? err : new Error(String(err))));
    }, LISTEN_HEARTBEAT_MS);
    this.heartbeat.unref();
    if (this.missed) {
      this.missed = false;
      this.log.warn({ schema: this.schema }, 'PostgreSQL key listener back; reading every key again');
      for (const w of this.watchers) w.resync();
    }
  }

  // --- audit ---

  async appendAudit(entry: AuditEntry): Promise<void> {
    await this.query(
      `INSERT INTO ${this.s}.audit (at, action, key_id, before, after, actor) VALUES ($1, $2, $3, $4, $5, $6)`,
      auditParams(entry),
    );
  }

  async listAudit(query: { from: number; to: number; keyId?: string | undefined }): Promise<AuditEntry[]> {
    const { rows } = await this.query<AuditDbRow>(
      `SELECT at, action, actor, key_id, before, after FROM ${this.s}.audit
       WHERE at BETWEEN $1 AND $2 AND ($3::text IS NULL OR key_id = $3)
       ORDER BY at, id`,
      [instant(query.from, Math.ceil), instant(query.to, Math.floor), query.keyId ?? null],
    );
    return rows.map((r) => ({
      at: int(r.at),
      action: r.action as AuditEntry['action'],
      actor: r.actor,
      keyId: r.key_id,
      before: r.before,
      after: r.after,
    }));
  }

  // --- usage ---

  /**
   * One transaction: the batch's id, then its rows in one statement (arrays unnested into rows:
   * https://www.postgresql.org/docs/current/functions-array.html), each added to the stored row
   * of its day, key, chain and route. An id already there (the same batch sent again after a
   * write whose outcome was unknown) adds nothing: the primary key of usage_batches decides, even
   * for two copies sent at once through two gateways (the second waits on the first's insert,
   * then finds it). Ids older than BATCH_MEMORY_MS are forgotten on the way.
   */
  async addUsage(rows: readonly UsageRow[], batchId: string): Promise<void> {
    const sums = batchSums(rows);
    if (sums.daily.length === 0) return;
    await this.migrate();
    const at = this.now();
    await this.transaction(async (client) => {
      await client.query(`DELETE FROM ${this.s}.usage_batches WHERE at < $1`, [at - BATCH_MEMORY_MS]);
      await this.addBatch(client, sums, batchId, at);
    });
  }

  /**
   * One batch's summed rows, inside a transaction, to its daily rows and its hourly rows (two
   * statements of the one transaction); nothing when its id is there already (added before).
   */
  private async addBatch(client: PoolClient, sums: BatchSums, batchId: string, at: number): Promise<void> {
    const { rowCount } = await client.query(`INSERT INTO ${this.s}.usage_batches (id, at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [
      batchId,
      at,
    ]);
    if (!rowCount) return; // added before
    await this.upsertUsage(client, 'usage', sums.daily);
    if (sums.hourly.length > 0) await this.upsertUsage(client, 'usage_hours', sums.hourly);
  }

  /** Rows added to `table`'s, in one statement (arrays unnested into rows). */
  private async upsertUsage(client: PoolClient, table: 'usage' | 'usage_hours', sums: readonly UsageRow[]): Promise<void> {
    const hourly = table === 'usage_hours';
    const identity = hourly ? ['day', 'hour', 'key_id', 'account', 'chain', 'route'] : ['day', 'key_id', 'account', 'chain', 'route'];
    const types = hourly ? ['date', 'smallint', 'text', 'text', 'text', 'text'] : ['date', 'text', 'text', 'text', 'text'];
    // The counters' columns in COUNTERS' order (store/records.ts), as the arrays below are.
    const counters = [
      'requests',
      'credits',
      'cache_hits',
      'refused',
      'errors',
      'rate_limited',
      'out_of_credits',
      'forbidden',
      'client_errors',
    ];
    const arrays = [...types, ...counters.map(() => 'bigint')].map((t, i) => `$${i + 1}::${t}[]`);
    const identityValues: unknown[][] = [
      sums.map((r) => r.day),
      ...(hourly ? [sums.map((r) => hourOfDay(r.hour ?? '', r.day))] : []),
      sums.map((r) => r.keyId),
      sums.map((r) => r.account),
      sums.map((r) => r.chain),
      sums.map((r) => r.route),
    ];
    await client.query(
      `INSERT INTO ${this.s}.${table} AS u (${[...identity, ...counters].join(', ')})
         SELECT * FROM unnest(${arrays.join(', ')})
         ON CONFLICT (day, ${hourly ? 'hour, ' : ''}key_id, chain, route, account) DO UPDATE SET
           ${counters.map((c) => `${c} = u.${c} + excluded.${c}`).join(',\n           ')}`,
      [...identityValues, ...COUNTERS.map((c) => sums.map((r) => r[c] ?? 0))],
    );
  }

  /** Days come back as `YYYY-MM-DD` whatever the session's DateStyle (to_char), not as a JS Date. */
  async listUsage(query: UsageQuery): Promise<UsageRow[]> {
    const hourly = query.granularity === 'hour';
    const { rows } = await this.query<UsageDbRow>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, ${hourly ? 'hour, ' : ''}key_id, account, chain, route, requests, credits, cache_hits,
         refused, errors, rate_limited, out_of_credits, forbidden, client_errors
       FROM ${this.s}.${hourly ? 'usage_hours' : 'usage'}
       WHERE day BETWEEN $1::date AND $2::date
         AND ($3::text[] IS NULL OR key_id = ANY ($3::text[]))
         AND ($4::text IS NULL OR chain = $4)
         AND ($5::text IS NULL OR route = $5)
         AND ($6::text[] IS NULL OR account = ANY ($6::text[]))
       ORDER BY day, ${hourly ? 'hour, ' : ''}key_id, chain, route, account`,
      [
        checkDay(query.from),
        checkDay(query.to),
        query.keyIds === undefined ? null : [...query.keyIds],
        query.chain ?? null,
        query.route ?? null,
        query.accounts === undefined ? null : [...query.accounts],
      ],
    );
    return rows.map((r) => {
      const row: UsageRow = {
        day: r.day,
        keyId: r.key_id,
        account: r.account,
        chain: r.chain,
        route: r.route,
        requests: int(r.requests),
        credits: int(r.credits),
        cacheHits: int(r.cache_hits),
        refused: int(r.refused),
        rateLimited: int(r.rate_limited),
        outOfCredits: int(r.out_of_credits),
        forbidden: int(r.forbidden),
        clientErrors: int(r.client_errors),
        errors: int(r.errors),
      };
      if (hourly) row.hour = hourName(r.day, Number(r.hour));
      return row;
    });
  }

  /** Both tables in one statement (one transaction). */
  async pruneUsage(beforeDay: string): Promise<void> {
    await this.query(
      `WITH hours AS (DELETE FROM ${this.s}.usage_hours WHERE day < $1::date) DELETE FROM ${this.s}.usage WHERE day < $1::date`,
      [checkDay(beforeDay)],
    );
  }

  async pruneHourlyUsage(beforeDay: string): Promise<void> {
    await this.query(`DELETE FROM ${this.s}.usage_hours WHERE day < $1::date`, [checkDay(beforeDay)]);
  }

  // --- ledgers ---

  /** The name of an account's ledger row in this schema; known once the store has answered (loadLedgers). */
  sealAccount(account: string): string {
    if (!this.secret) throw new Error(`the PostgreSQL schema ${this.schema} has not been read yet`);
    return sealWith(this.secret, account);
  }

  async loadLedgers(): Promise<LedgerRow[]> {
    const { rows } = await this.query<LedgerDbRow>(
      `SELECT account, day, day_spent, month, month_spent, topup FROM ${this.s}.ledgers ORDER BY account`,
    );
    return rows.map((r) => ({
      account: r.account,
      day: r.day,
      daySpent: int(r.day_spent),
      month: r.month,
      monthSpent: int(r.month_spent),
      topup: int(r.topup),
    }));
  }

  /** One statement, so one transaction: every row or none. An account given twice keeps its last row, as a map would. */
  async saveLedgers(rows: readonly LedgerRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.migrate();
    await this.saveLedgerRows(this.pool, rows);
  }

  /**
   * The ledger rows and the usage batches in one transaction (LedgerStore.saveLedgersAndUsage).
   * A failure before COMMIT was sent wrote nothing: the server rolls back a transaction that is
   * not committed, whether by ROLLBACK or by the end of its session (transaction() above); a
   * COMMIT refused by the server wrote nothing either. A COMMIT whose answer was lost may have
   * been committed: its error says so (withOutcomeUnknown), and the batches' ids keep their
   * rows from being added twice when they are sent again.
   */
  async saveLedgersAndUsage(rows: readonly LedgerRow[], batches: readonly UsageBatch[]): Promise<void> {
    const sums = batches.map((b) => ({ id: b.id, rows: batchSums(b.rows) })).filter((b) => b.rows.daily.length > 0);
    if (rows.length === 0 && sums.length === 0) return;
    await this.migrate();
    const at = this.now();
    const progress = { committing: false };
    try {
      await this.transaction(async (client) => {
        if (sums.length > 0) await client.query(`DELETE FROM ${this.s}.usage_batches WHERE at < $1`, [at - BATCH_MEMORY_MS]);
        for (const b of sums) await this.addBatch(client, b.rows, b.id, at);
        if (rows.length > 0) await this.saveLedgerRows(client, rows);
      }, progress);
    } catch (err) {
      throw progress.committing && !(err instanceof pg.DatabaseError) ? withOutcomeUnknown(err) : err;
    }
  }

  private async saveLedgerRows(client: PoolClient | pg.Pool, rows: readonly LedgerRow[]): Promise<void> {
    const last = new Map<string, LedgerRow>();
    for (const r of rows) last.set(r.account, r);
    if (last.size === 0) return;
    // Sorted, as usage rows are: two saves at once lock their rows in one order.
    const sorted = [...last.values()].sort((a, b) => compare(a.account, b.account));
    await client.query(
      `INSERT INTO ${this.s}.ledgers (account, day, day_spent, month, month_spent, topup)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])
       ON CONFLICT (account) DO UPDATE SET day = excluded.day, day_spent = excluded.day_spent, month = excluded.month,
         month_spent = excluded.month_spent, topup = excluded.topup`,
      [
        sorted.map((r) => r.account),
        sorted.map((r) => r.day),
        sorted.map((r) => r.daySpent),
        sorted.map((r) => r.month),
        sorted.map((r) => r.monthSpent),
        sorted.map((r) => r.topup),
      ],
    );
  }

  // --- lifecycle ---

  /** The schema is ready and the database answers a `SELECT 1`, within PING_TIMEOUT_MS. */
  async ping(): Promise<void> {
    await this.migrate();
    // A query's own query_timeout (node_modules/pg/lib/client.js, Client.query), which
    // @types/pg's QueryConfig does not list.
    await this.pool.query({ text: 'SELECT 1', query_timeout: PING_TIMEOUT_MS } as pg.QueryConfig);
  }

  /** Ends the listener and the pool; a second call waits for the first. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.watchers.length = 0;
      clearTimeout(this.listenTimer);
      this.listenTimer = undefined;
      clearInterval(this.heartbeat);
      const listener = this.listener;
      this.listener = undefined;
      await Promise.all([listener?.end().catch(() => {}), this.pool.end()]);
    })();
    return this.closed;
  }
}
