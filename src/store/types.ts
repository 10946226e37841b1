// What the gateway keeps beyond its configuration, so that an API business can run on it: the
// keys created at run time, the audit trail of every admin write, usage rows to bill from, and
// (for a gateway without Redis) what each account spent. Four interfaces, each with one contract
// suite that every backend runs (test/contracts/store.test.ts): memory (memory.ts), SQLite
// (sqlite.ts, the embedded default), Redis (redis.ts, shared by every gateway process of one
// Redis) and PostgreSQL (postgres.ts, shared by every host). open.ts chooses the backend from the
// configuration. Every method is asynchronous, so that a networked database can implement it.
// Times are unix milliseconds; days are UTC `YYYY-MM-DD` (day.ts). The webhook outbox has its
// own interface (outbox.ts), one file per backend (outbox-*.ts) and its own contract suite
// (test/contracts/outbox.test.ts).
import type { OutboxStore } from './outbox.js';

/** A key created through the admin API. Its secret is never stored: only its sha256 digest. */
export interface KeyRecord {
  /** `key_` and 16 base-32 characters, random; what the admin API and usage rows name a key by. */
  id: string;
  /** Unique among all keys, run-time and configured. */
  name: string;
  owner: string | null;
  /** A plan of the configuration. */
  plan: string;
  /** Allow-list of chain ids; null: every chain. */
  chains: string[] | null;
  status: 'active' | 'disabled';
  /** When the key stops working (403); null: never. */
  expiresAt: number | null;
  createdAt: number;
  /** The secret's first characters (`egw_` and a few more), for operators to tell keys apart. */
  prefix: string;
  /** sha256 hex of the current secret. */
  digest: string;
  /** The secret a roll replaced, still accepted until `until`; null when there is none. */
  previous: { digest: string; until: number } | null;
  /** A deal of the key's own over its plan's limits; null: the plan's. */
  limits: KeyLimits | null;
  /** Allowed route families (route names or patterns: `tokens/*`, `legacy.account.*`); null: every route. */
  routes: string[] | null;
  /** Allowed client networks (addresses or CIDR blocks); null: any. */
  ips: string[] | null;
  /** Allowed browser origins (`Origin`, `scheme://host[:port]`); null: any. */
  origins: string[] | null;
  /** The operator's own JSON about the key (keys/terms.ts bounds its size); null: none. */
  meta: Record<string, unknown> | null;
  /** The account (ObjectKind `account`) whose plan, limits, credits and rate the key shares; null: its own. */
  account: string | null;
}

/** Per-key overrides of its plan (issue 25, item 1): each null field is the plan's. */
export interface KeyLimits {
  rps: number | null;
  credits: number | null;
  period: 'daily' | 'monthly' | null;
  /** Credits per route name, over the configuration's `costs`; null: the configuration's. */
  costs: Record<string, number> | null;
}

/** A key's fields beyond its identity, kept as one JSON value by the SQL backends. */
export type KeyTerms = Pick<KeyRecord, 'limits' | 'routes' | 'ips' | 'origins' | 'meta' | 'account'>;

/**
 * What else the admin API creates at run time, beside keys: plans (issue 25, item 1) and
 * accounts (item 2), each a JSON object under its kind and id. Kept by the key store, written
 * with their audit entry in one transaction and told to every process as keys are (watchKeys,
 * with the id `<kind>:<id>`).
 */
export type ObjectKind = 'plan' | 'account' | 'webhook';

export interface StoredObject {
  kind: ObjectKind;
  id: string;
  value: Record<string, unknown>;
}

/** The id watchKeys tells of when an object changed: a key's id never holds a colon. */
export const objectNotice = (kind: ObjectKind, id: string): string => `${kind}:${id}`;

/** One admin write. `before` and `after` hold the key's public fields, never a secret or a digest. */
export interface AuditEntry {
  at: number;
  action: 'create' | 'update' | 'credits' | 'roll' | 'revoke' | 'delete';
  /** Who made the write: the admin token's name (`admin.tokens`), `admin` for `admin.token`; null in entries made before names were kept. */
  actor: string | null;
  keyId: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface UsageCounts {
  /** Requests of the key that reached the key step, whatever their answer. */
  requests: number;
  /** Credits billed, refunds taken off. */
  credits: number;
  /** Answered from the cache (HIT or STALE). */
  cacheHits: number;
  /** Refused by the key's status, rate or balance (402, 403, 429): not billed. The sum of the three below. */
  refused: number;
  /** Refused by the key's rate (429 RATE_LIMITED; an address blocked for wrong keys is no key's). */
  rateLimited: number;
  /** Refused for want of credits (402). */
  outOfCredits: number;
  /** Refused by the key's status or restrictions (403). */
  forbidden: number;
  /** Any other 4xx answered to the key (400, 413, 422, the explorer's 404, a JSON-RPC call's 400): the client's mistake. */
  clientErrors: number;
  /** Answered 5xx: refunded. */
  errors: number;
}

/**
 * One row per UTC day, key, account, chain and route (a daily row), or per UTC hour, key,
 * account, chain and route (an hourly row, with `hour`). As a delta (addUsage), its counts are
 * added to the daily row of its day and, when it has an hour, to the hourly row of its hour, in
 * the same write: the hourly rows of a day always sum to its daily row (a delta without an hour,
 * which the usage recorder never hands, counts in its daily row only).
 */
export interface UsageRow extends UsageCounts {
  day: string;
  /** An hourly row's UTC hour, `YYYY-MM-DDTHH:00:00Z`, within `day` (day.ts); absent from a daily row. */
  hour?: string | undefined;
  keyId: string;
  /**
   * The account (`acc_...`, KeyRecord.account) the key belonged to when the counts were made; ''
   * for none, and in rows written before rows recorded it. Part of the row's identity: a key moved
   * to another account mid-day has a row under each, so each account keeps its own history. Not
   * the quota ledger's account (QuotaQuery.account).
   */
  account: string;
  chain: string;
  route: string;
}

export type UsageGranularity = 'day' | 'hour';

export interface UsageQuery {
  /** Inclusive, `YYYY-MM-DD`: whole UTC days, hourly rows included. */
  from: string;
  /** Inclusive, `YYYY-MM-DD`. */
  to: string;
  /** Daily rows (default) or hourly rows. */
  granularity?: UsageGranularity | undefined;
  keyIds?: ReadonlySet<string> | undefined;
  /** Only the rows recorded under these accounts (UsageRow.account). */
  accounts?: ReadonlySet<string> | undefined;
  chain?: string | undefined;
  route?: string | undefined;
}

/**
 * Run-time keys. Every write carries its audit entry and stores both in one transaction: a key
 * is never changed without its record in the audit trail, nor the other way round.
 */
export interface KeyStore {
  /** Every run-time key (the gateway holds them all in memory: keys/ring.ts). */
  listKeys(): Promise<KeyRecord[]>;
  getKey(id: string): Promise<KeyRecord | undefined>;
  /** Stores a new key and its audit entry; false (and nothing stored) when another run-time key has its name. */
  createKey(record: KeyRecord, audit: AuditEntry): Promise<boolean>;
  /** Replaces a key's record and appends its audit entry; false (and nothing changed) when another run-time key has the new name. */
  updateKey(record: KeyRecord, audit: AuditEntry): Promise<boolean>;
  /** Forgets a key (its usage rows and earlier audit entries stay) and appends its audit entry; false when there was no such key (nothing appended). */
  deleteKey(id: string, audit: AuditEntry): Promise<boolean>;
  /**
   * Tells this process when a key was created, changed or deleted by any process (this one
   * included), by id, and when it may have missed some (`resync`: read them all again). An
   * embedded store serves one process, so it tells of its own writes only.
   */
  watchKeys(changed: (id: string) => void, resync: () => void): void;
  /** Every object of a kind (plans, accounts), by id. */
  listObjects(kind: ObjectKind): Promise<StoredObject[]>;
  getObject(kind: ObjectKind, id: string): Promise<StoredObject | undefined>;
  /**
   * Stores an object and appends its audit entry, in one transaction: `create` only when there is
   * none of that kind and id, `replace` only when there is; false (nothing written) otherwise.
   */
  putObject(object: StoredObject, mode: 'create' | 'replace', audit: AuditEntry): Promise<boolean>;
  /** Forgets an object and appends its audit entry; false (nothing appended) when there was none. */
  deleteObject(kind: ObjectKind, id: string, audit: AuditEntry): Promise<boolean>;
}

/** The audit trail: what was changed by whom and when, to settle a dispute from. */
export interface AuditStore {
  /** An entry of a write that is not a key's (a top-up of credits). */
  appendAudit(entry: AuditEntry): Promise<void>;
  /** Entries with `from <= at <= to`, oldest first, of one key if given. */
  listAudit(query: { from: number; to: number; keyId?: string | undefined }): Promise<AuditEntry[]>;
}

export interface UsageStore {
  /**
   * Adds the counts of each row to the stored daily row of its day, key, account, chain and route
   * and to the hourly row of its hour, atomically, and at most once per `batchId`: the same batch
   * sent again (after a write whose outcome is unknown) adds nothing if it was added before. A
   * row whose `hour` is not an hour of its `day` is a RangeError, before anything is written.
   */
  addUsage(rows: readonly UsageRow[], batchId: string): Promise<void>;
  /** Stored rows matching the query, ordered by day, hour (hourly rows), key, chain, route, account (records.ts, compareUsageRows). */
  listUsage(query: UsageQuery): Promise<UsageRow[]>;
  /** Forgets the rows, daily and hourly, of days before `day`. */
  pruneUsage(beforeDay: string): Promise<void>;
  /** Forgets the hourly rows of days before `day`, and keeps their daily rows (`usage.hourlyRetentionDays`). */
  pruneHourlyUsage(beforeDay: string): Promise<void>;
}

/**
 * What an account spent of its plans' allowances in its current UTC day and in its current UTC
 * month, and its bought credits left. Every debit of an allowance counts in both, whatever the
 * plan's period (quota/memory.ts), so a plan change between a daily and a monthly plan keeps the
 * spend of the new plan's period. A counter's id is '' while it has none (a top-up before any
 * decision; a row of schema 3 or earlier that had no such counter).
 */
export interface LedgerRow {
  account: string;
  /** The day counter's day, as quota/period.ts names it: `d20261126`. */
  day: string;
  daySpent: number;
  /** The month counter's month: `m202611`. */
  month: string;
  monthSpent: number;
  topup: number;
}

/** Usage rows sent under one id: the store adds them at most once (UsageStore.addUsage). */
export interface UsageBatch {
  id: string;
  rows: readonly UsageRow[];
}

/**
 * What an in-process quota store (quota/memory.ts) needs to survive a restart without Redis:
 * every account's ledger. Not offered where Redis keeps the counters.
 */
export interface LedgerStore {
  loadLedgers(): Promise<LedgerRow[]>;
  /** Upserts, in one transaction. */
  saveLedgers(rows: readonly LedgerRow[]): Promise<void>;
  /**
   * Upserts the ledger rows and adds the usage batches (each at most once, as addUsage does) in
   * one transaction: all of it or nothing, so that the credits charged to the ledgers and the
   * credits in usage rows are written together (quota/memory.ts). A rejection means nothing was
   * written, unless `outcomeUnknown(err)`: the commit was sent and its answer lost.
   */
  saveLedgersAndUsage?(rows: readonly LedgerRow[], batches: readonly UsageBatch[]): Promise<void>;
}

/** Marks a write's error as one whose transaction may have been committed all the same. */
export function withOutcomeUnknown(err: unknown): Error {
  const error = err instanceof Error ? err : new Error(String(err));
  (error as Error & { outcomeUnknown?: boolean }).outcomeUnknown = true;
  return error;
}

/** Whether a failed write may have been committed all the same (LedgerStore.saveLedgersAndUsage). */
export function outcomeUnknown(err: unknown): boolean {
  return (err as { outcomeUnknown?: unknown } | undefined)?.outcomeUnknown === true;
}

export type StorageKind = 'memory' | 'sqlite' | 'redis' | 'postgres';

/** The records of one gateway, as open.ts chose them from its configuration. */
/** What happened to an embedded store's file (store/sqlite.ts). */
export type StoreEvent =
  /** A call failed for a reason of the file or the disk (counted in `failures`). */
  | { type: 'fault'; op: string; err: Error }
  /** The file was found deleted and written again at its path from the open connection. */
  | { type: 'restored'; path: string };

/** An embedded store's faults: counted, and told to listeners (Storage.faults). */
export interface StoreFaults {
  readonly failures: number;
  listen(listener: (event: StoreEvent) => void): void;
}

export interface Storage {
  readonly kind: StorageKind;
  readonly keys: KeyStore;
  readonly audit: AuditStore;
  readonly usage: UsageStore;
  /** Undefined where the quota counters live in Redis. */
  readonly ledgers: LedgerStore | undefined;
  /** The webhook outbox (outbox.ts): every delivery of an event to a webhook, until it is delivered or given up. */
  readonly outbox: OutboxStore;
  /**
   * The faults of an embedded file the gateway keeps serving through (SQLite: a full disk, a
   * deleted file), for the log and the metrics; undefined for a backend that is a server.
   */
  readonly faults: StoreFaults | undefined;
  /** Resolves when the backend answers; rejects with why not (/readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
