// What the gateway keeps beyond its configuration, so that an API business can run on it: the
// keys created at run time, the audit trail of every admin write, and usage rows to bill from.
// Two implementations with one contract suite (test/contracts/store.test.ts): SQLite
// (sqlite.ts, the embedded store of a gateway without Redis) and Redis (redis.ts, shared by every
// gateway process). Times are unix milliseconds; days are UTC `YYYY-MM-DD`.

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
}

/** One admin write. `before` and `after` hold the key's public fields, never a secret or a digest. */
export interface AuditEntry {
  at: number;
  action: 'create' | 'update' | 'credits' | 'roll' | 'revoke';
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
  /** Refused by the key's status, rate or balance (402, 403, 429): not billed. */
  refused: number;
  /** Answered 5xx: refunded. */
  errors: number;
}

/** One row per UTC day, key, chain and route. As a delta, its counts are added to the row's. */
export interface UsageRow extends UsageCounts {
  day: string;
  keyId: string;
  chain: string;
  route: string;
}

export interface UsageQuery {
  /** Inclusive, `YYYY-MM-DD`. */
  from: string;
  /** Inclusive, `YYYY-MM-DD`. */
  to: string;
  keyIds?: ReadonlySet<string> | undefined;
  chain?: string | undefined;
  route?: string | undefined;
}

export interface Store {
  readonly kind: 'sqlite' | 'redis';

  /** Every run-time key (the gateway holds them all in memory: keys/ring.ts). */
  listKeys(): Promise<KeyRecord[]>;
  getKey(id: string): Promise<KeyRecord | undefined>;
  /** Stores a new key; false (and nothing stored) when another run-time key has its name. */
  createKey(record: KeyRecord): Promise<boolean>;
  /** Replaces a key's record; false (and nothing changed) when another run-time key has the new name. */
  updateKey(record: KeyRecord): Promise<boolean>;
  /** Forgets a key (its usage rows and audit entries stay). */
  deleteKey(id: string): Promise<void>;
  /**
   * Tells this process when a key was created, changed or deleted by any process (this one
   * included), by id, and when it may have missed some (`resync`: read them all again). SQLite
   * serves one process, so it tells of its own writes only.
   */
  watchKeys(changed: (id: string) => void, resync: () => void): void;

  appendAudit(entry: AuditEntry): Promise<void>;
  /** Entries with `from <= at <= to`, oldest first, of one key if given. */
  listAudit(query: { from: number; to: number; keyId?: string | undefined }): Promise<AuditEntry[]>;

  /**
   * Adds the counts of each row to the stored row of its day, key, chain and route, atomically,
   * and at most once per `batchId`: the same batch sent again (after a write whose outcome is
   * unknown) adds nothing if it was added before.
   */
  addUsage(rows: readonly UsageRow[], batchId: string): Promise<void>;
  /** Stored rows matching the query, ordered by day, key, chain, route. */
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /** Forgets the rows of days before `day`. */
  pruneUsage(beforeDay: string): Promise<void>;

  close(): Promise<void>;
}

/**
 * What an in-process quota store (quota/memory.ts) needs to survive a restart without Redis:
 * the credits each account spent in its current period, and its bought credits. SQLite only.
 */
export interface LedgerPersistence {
  loadLedgers(): { account: string; periodId: string; spent: number; topup: number }[];
  /** Upserts, in one transaction. */
  saveLedgers(rows: readonly { account: string; periodId: string; spent: number; topup: number }[]): void;
}
