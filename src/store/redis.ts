// The store shared by every gateway process of one Redis (or Redis Cluster). Layout, every name
// under the configured prefix (`egw:` by default):
//
//   <prefix>{keys}:key:<id>      string   a KeyRecord as JSON (KeyRecord's fields only)
//   <prefix>{keys}:ids           set      the id of every run-time key
//   <prefix>{keys}:name:<name>   string   the id of the key named <name> (the uniqueness index)
//   <prefix>{keys}:changed       channel  PUBLISHed the id of each key created, changed or deleted
//   <prefix>{keys}:audit         stream   one entry per admin write, id `<at>-<seq>`, field `e`: the AuditEntry as JSON
//   <prefix>{keys}:audit:lag     string   the most an audit entry's id was moved past its `at`, in ms (see auditLua)
//   <prefix>{audit}, {audit}:lag          the same, as gateways before the key scripts wrote their own audit entries
//                                         kept them: read (listAudit), never written
//   <prefix>usage:{<day>}        hash     one per UTC day `YYYY-MM-DD`: field `<keyId>|<chain>|<route>|<counter>` -> count,
//                                         each of the first three parts encodeURIComponent'ed, counter one of COUNTERS
//   <prefix>usage:{<day>}:batch:<id>  string  a usage batch already added to that day (ADD_USAGE), for an hour
//
// Hash tags (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags):
// the key store's keys share `{keys}` so that one script can read and write a record, the id set,
// the name index and the audit trail on Redis Cluster, where a script's keys must all live in one
// slot; thousands to a million small records fit one slot. Each usage day
// has its own tag, so days spread over the cluster and a day's script stays in one slot. (A prefix
// holding braces of its own would move every key into the prefix's slot: still correct, unspread.)
//
// Every command may reject quickly while Redis is away (client.ts: no offline queue, no retries,
// a command timeout): errors propagate to the caller, who knows what to do with them.
import { Cluster } from 'ioredis';
import type { RedisClient } from '../redis/client.js';
import { DAY_MS, dayStartMs, utcDay } from './day.js';
import type { AuditEntry, AuditStore, KeyRecord, KeyStore, Storage, UsageCounts, UsageQuery, UsageRow, UsageStore } from './types.js';

/** Usage counters as named in a day hash's fields. */
const COUNTERS = ['requests', 'credits', 'cacheHits', 'refused', 'errors'] as const satisfies readonly (keyof UsageCounts)[];
/** How many ids one SSCAN step and one MGET read when listing the keys. */
const LIST_BATCH = 1_000;
/** How often an update or delete is tried again when another process changed the record between its read and its write. */
const CAS_ATTEMPTS = 10;

// Every key a script touches is passed in KEYS, as Redis requires for scripts to run on a cluster
// (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/): so an update or a
// delete first reads the record (to learn its current name, hence the name index to move), then
// runs its script with the record as read; the script refuses (-2) if the record changed
// meanwhile, and the client reads it again. The PUBLISH is inside the script: a write is never
// without its notice (a process dying between the two would leave others with a stale key); so
// is its audit entry (auditLua). Scripts are atomic: two processes creating one name at once see
// one of them win. A script is not rolled back when one of its commands fails, though: what it
// wrote before stays (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/,
// https://redis.io/docs/latest/develop/interact/transactions/), so
// each script checks first, appends the audit entry (the command most likely to fail: the
// stream's key of another type, memory) next, and only then writes the key.

// The audit stream's ids are the entries' instants (`<ms>-*`, Redis 7: https://redis.io/docs/latest/commands/xadd/),
// so a time range is an XRANGE. A stream's ids only grow, but `at` comes from the clocks of many
// gateway processes: two admin writes at once on two processes, or a host whose clock is behind,
// append an `at` older than the stream's last id, which XADD refuses. Such an entry gets the last
// id's time instead (its `at` stays as it was, in the JSON), and the largest such shift is kept at
// the lag key, so that listAudit reads that much further to find it.
function auditLua(stream: string, lag: string, at: string, json: string): string {
  return `local ms = ${at}
local top = redis.call('xrevrange', ${stream}, '+', '-', 'COUNT', 1)[1]
if top then
  local topMs = string.match(top[1], '^(%d+)-')
  local shift = tonumber(topMs) - tonumber(ms)
  if shift > 0 then
    if shift > tonumber(redis.call('get', ${lag}) or '0') then redis.call('set', ${lag}, string.format('%d', shift)) end
    ms = topMs
  end
end
redis.call('xadd', ${stream}, ms .. '-*', 'e', ${json})`;
}

// KEYS[1] record, KEYS[2] id set, KEYS[3] name index, KEYS[4] audit stream, KEYS[5] its lag;
// ARGV[1] id, ARGV[2] record JSON, ARGV[3] channel, ARGV[4] audit at, ARGV[5] audit JSON.
// 1 created, 0 name taken, -1 id exists.
const CREATE_LUA = `
if redis.call('exists', KEYS[1]) == 1 then return -1 end
if redis.call('exists', KEYS[3]) == 1 then return 0 end
${auditLua('KEYS[4]', 'KEYS[5]', 'ARGV[4]', 'ARGV[5]')}
redis.call('set', KEYS[1], ARGV[2])
redis.call('sadd', KEYS[2], ARGV[1])
redis.call('set', KEYS[3], ARGV[1])
redis.call('publish', ARGV[3], ARGV[1])
return 1
`;

// KEYS[1] record, KEYS[2] new name's index, KEYS[3] old name's index, KEYS[4] audit stream,
// KEYS[5] its lag; ARGV[1] id, ARGV[2] record JSON as read, ARGV[3] new record JSON, ARGV[4]
// channel, ARGV[5] audit at, ARGV[6] audit JSON. 1 updated, 0 name taken, -1 no such key, -2
// changed since read.
const UPDATE_LUA = `
local current = redis.call('get', KEYS[1])
if not current then return -1 end
if current ~= ARGV[2] then return -2 end
if KEYS[2] ~= KEYS[3] then
  local owner = redis.call('get', KEYS[2])
  if owner and owner ~= ARGV[1] then return 0 end
end
${auditLua('KEYS[4]', 'KEYS[5]', 'ARGV[5]', 'ARGV[6]')}
if KEYS[2] ~= KEYS[3] then
  redis.call('set', KEYS[2], ARGV[1])
  if redis.call('get', KEYS[3]) == ARGV[1] then redis.call('del', KEYS[3]) end
end
redis.call('set', KEYS[1], ARGV[3])
redis.call('publish', ARGV[4], ARGV[1])
return 1
`;

// KEYS[1] record, KEYS[2] id set, KEYS[3] name index, KEYS[4] audit stream, KEYS[5] its lag;
// ARGV[1] id, ARGV[2] record JSON as read, ARGV[3] channel, ARGV[4] audit at, ARGV[5] audit
// JSON. 1 deleted, 0 no such key, -2 changed since read.
const DELETE_LUA = `
local current = redis.call('get', KEYS[1])
if not current then return 0 end
if current ~= ARGV[2] then return -2 end
${auditLua('KEYS[4]', 'KEYS[5]', 'ARGV[4]', 'ARGV[5]')}
redis.call('del', KEYS[1])
redis.call('srem', KEYS[2], ARGV[1])
if redis.call('get', KEYS[3]) == ARGV[1] then redis.call('del', KEYS[3]) end
redis.call('publish', ARGV[3], ARGV[1])
return 1
`;

// An audit entry of its own (a top-up): KEYS[1] stream, KEYS[2] lag; ARGV[1] at, ARGV[2] entry JSON.
const APPEND_AUDIT_LUA = `
${auditLua('KEYS[1]', 'KEYS[2]', 'ARGV[1]', 'ARGV[2]')}
return 1
`;

// One usage batch of one day, at most once: a write whose reply timed out may still run when a
// stalled Redis resumes, and the recorder then sends the same batch again (usage/recorder.ts).
// The first to run leaves a marker (in the day's slot), and any later copy finds it and adds
// nothing. KEYS: the day hash, the marker. ARGV: the hash's TTL, the marker's TTL (ms), then
// field and increment pairs.
const ADD_USAGE_LUA = `
if not redis.call('set', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return 0 end
for i = 3, #ARGV, 2 do redis.call('hincrby', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('pexpire', KEYS[1], ARGV[1])
return 1
`;
/** How long a batch's marker outlives the batch's first run: far longer than any retry takes to follow it. */
const BATCH_MARKER_MS = 3_600_000;

interface KeyCommands {
  egwAddUsage(hash: string, marker: string, ...args: string[]): Promise<number>;
  egwKeyCreate(...keysAndArgs: string[]): Promise<number>;
  egwKeyUpdate(...keysAndArgs: string[]): Promise<number>;
  egwKeyDelete(...keysAndArgs: string[]): Promise<number>;
  egwAuditAppend(stream: string, lag: string, at: string, json: string): Promise<number>;
}

export interface RedisStoreOptions {
  /** How many days a day's usage hash is kept after the day ends. */
  retentionDays?: number | undefined;
  /** The gateway's clock, for usage expiries. */
  now?: (() => number) | undefined;
}

/** The record's fields, and only those: whatever else the caller's object carries is never stored. */
function toJson(r: KeyRecord): string {
  const record: KeyRecord = {
    id: r.id,
    name: r.name,
    owner: r.owner,
    plan: r.plan,
    chains: r.chains === null ? null : [...r.chains],
    status: r.status,
    expiresAt: r.expiresAt,
    createdAt: r.createdAt,
    prefix: r.prefix,
    digest: r.digest,
    previous: r.previous === null ? null : { digest: r.previous.digest, until: r.previous.until },
  };
  return JSON.stringify(record);
}

function fromJson(json: string): KeyRecord {
  const r = JSON.parse(json) as KeyRecord;
  return {
    id: r.id,
    name: r.name,
    owner: r.owner ?? null,
    plan: r.plan,
    chains: r.chains ?? null,
    status: r.status,
    expiresAt: r.expiresAt ?? null,
    createdAt: r.createdAt,
    prefix: r.prefix,
    digest: r.digest,
    previous: r.previous ?? null,
  };
}

/** An audit entry as the scripts take it: its instant, and the entry as JSON. */
function auditArgs(entry: AuditEntry): [string, string] {
  if (!Number.isSafeInteger(entry.at) || entry.at < 0) throw new RangeError(`audit instant must be a non-negative integer: ${entry.at}`);
  return [
    String(entry.at),
    JSON.stringify({ at: entry.at, action: entry.action, keyId: entry.keyId, before: entry.before, after: entry.after }),
  ];
}

/** Milliseconds of a day's start, UTC; RangeError for anything but a real `YYYY-MM-DD`. */
function dayStart(day: string): number {
  const ms = dayStartMs(day);
  if (ms === undefined) throw new RangeError(`not a day (YYYY-MM-DD): ${day}`);
  return ms;
}

/** The fields of a day hash, less the counter: parts encoded, so none holds the `|` that joins them. */
const fieldBase = (keyId: string, chain: string, route: string) =>
  `${encodeURIComponent(keyId)}|${encodeURIComponent(chain)}|${encodeURIComponent(route)}`;

/** Escapes SCAN's glob characters (https://redis.io/docs/latest/commands/keys/) in a literal. */
const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class RedisStore implements Storage, KeyStore, AuditStore, UsageStore {
  readonly kind = 'redis';
  readonly keys = this;
  readonly audit = this;
  readonly usage = this;
  /** Where Redis keeps the quota counters, no ledger is kept beside them. */
  readonly ledgers = undefined;
  private readonly commands: KeyCommands;
  private readonly idsKey: string;
  private readonly channel: string;
  private readonly auditKey: string;
  private readonly auditLagKey: string;
  /** Where gateways before this one kept the audit trail: still read. */
  private readonly legacyAuditKey: string;
  private readonly legacyAuditLagKey: string;
  private readonly retentionMs: number;
  private readonly now: () => number;
  private readonly watchers: { changed: (id: string) => void; resync: () => void }[] = [];
  private sub: RedisClient | undefined;
  private closed = false;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly subscriber: () => RedisClient,
    options: RedisStoreOptions = {},
  ) {
    // Registered once per store; ioredis sends EVALSHA and loads the script when Redis lacks it
    // (https://github.com/redis/ioredis#lua-scripting).
    client.defineCommand('egwKeyCreate', { numberOfKeys: 5, lua: CREATE_LUA });
    client.defineCommand('egwKeyUpdate', { numberOfKeys: 5, lua: UPDATE_LUA });
    client.defineCommand('egwKeyDelete', { numberOfKeys: 5, lua: DELETE_LUA });
    client.defineCommand('egwAuditAppend', { numberOfKeys: 2, lua: APPEND_AUDIT_LUA });
    client.defineCommand('egwAddUsage', { numberOfKeys: 2, lua: ADD_USAGE_LUA });
    this.commands = client as unknown as KeyCommands;
    this.idsKey = `${prefix}{keys}:ids`;
    this.channel = `${prefix}{keys}:changed`;
    this.auditKey = `${prefix}{keys}:audit`;
    this.auditLagKey = `${prefix}{keys}:audit:lag`;
    this.legacyAuditKey = `${prefix}{audit}`;
    this.legacyAuditLagKey = `${prefix}{audit}:lag`;
    this.retentionMs = (options.retentionDays ?? 400) * DAY_MS;
    this.now = options.now ?? Date.now;
  }

  recordKey(id: string): string {
    return `${this.prefix}{keys}:key:${id}`;
  }

  nameKey(name: string): string {
    return `${this.prefix}{keys}:name:${name}`;
  }

  usageKey(day: string): string {
    return `${this.prefix}usage:{${day}}`;
  }

  // --- keys ---

  async listKeys(): Promise<KeyRecord[]> {
    // SSCAN rather than SMEMBERS: a million ids come in steps, never as one reply that holds
    // Redis up (https://redis.io/docs/latest/commands/scan/). SSCAN may return an id twice.
    const ids = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.client.sscan(this.idsKey, cursor, 'COUNT', LIST_BATCH);
      cursor = next;
      for (const id of batch) ids.add(id);
    } while (cursor !== '0');
    const sorted = [...ids].sort(compare);
    const batches: string[][] = [];
    for (let i = 0; i < sorted.length; i += LIST_BATCH) batches.push(sorted.slice(i, i + LIST_BATCH));
    // One slot ({keys}), so one MGET per batch works on a cluster too; the batches are pipelined.
    const values = await Promise.all(batches.map((b) => this.client.mget(b.map((id) => this.recordKey(id)))));
    // A key deleted between the two reads is null: it is gone, and its notice is on its way.
    return values.flat().flatMap((json) => (json === null ? [] : [fromJson(json)]));
  }

  async getKey(id: string): Promise<KeyRecord | undefined> {
    const json = await this.client.get(this.recordKey(id));
    return json === null ? undefined : fromJson(json);
  }

  async createKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    const outcome = await this.commands.egwKeyCreate(
      this.recordKey(record.id),
      this.idsKey,
      this.nameKey(record.name),
      this.auditKey,
      this.auditLagKey,
      record.id,
      toJson(record),
      this.channel,
      ...auditArgs(audit),
    );
    // An id that exists is a caller's bug (ids are 80 random bits), not a taken name.
    if (outcome === -1) throw new Error(`key id ${record.id} exists`);
    return outcome === 1;
  }

  async updateKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    const json = toJson(record);
    const entry = auditArgs(audit);
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const read = await this.client.get(this.recordKey(record.id));
      // Never an upsert: that would bring back a key another process deleted meanwhile.
      if (read === null) throw new Error(`no run-time key ${record.id}`);
      const outcome = await this.commands.egwKeyUpdate(
        this.recordKey(record.id),
        this.nameKey(record.name),
        this.nameKey(fromJson(read).name),
        this.auditKey,
        this.auditLagKey,
        record.id,
        read,
        json,
        this.channel,
        ...entry,
      );
      if (outcome === -1) throw new Error(`no run-time key ${record.id}`);
      if (outcome !== -2) return outcome === 1;
    }
    throw new Error(`key ${record.id} kept changing while it was being updated`);
  }

  async deleteKey(id: string, audit: AuditEntry): Promise<boolean> {
    const entry = auditArgs(audit);
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const read = await this.client.get(this.recordKey(id));
      if (read === null) return false;
      const outcome = await this.commands.egwKeyDelete(
        this.recordKey(id),
        this.idsKey,
        this.nameKey(fromJson(read).name),
        this.auditKey,
        this.auditLagKey,
        id,
        read,
        this.channel,
        ...entry,
      );
      if (outcome !== -2) return outcome === 1;
    }
    throw new Error(`key ${id} kept changing while it was being deleted`);
  }

  /**
   * Pub/sub delivers at most once, and nothing to a subscriber that is not connected
   * (https://redis.io/docs/latest/develop/interact/pubsub/): so each time the subscriber
   * connection is ready again after a loss, it subscribes again and then asks for a resync,
   * which reads every key after the subscription is back (nothing falls between the two).
   * Not on the first connect: the caller has just read every key (keys/runtime.ts).
   *
   * On Redis Cluster, ioredis moves a lost subscription to another node by itself
   * (ClusterSubscriber), without an event this store can see: pass a subscriber factory that
   * makes a plain Redis connection to one node (PUBLISH reaches every node of a cluster) for
   * losses there to be noticed too.
   */
  watchKeys(changed: (id: string) => void, resync: () => void): void {
    this.watchers.push({ changed, resync });
    if (this.sub || this.closed) return;
    const sub = this.subscriber();
    this.sub = sub;
    let connectedBefore = false;
    // The connection reconnects by itself; what this store does about a loss is the resync.
    sub.on('error', () => {});
    sub.on('message', (channel: string, id: string) => {
      if (channel !== this.channel || this.closed) return;
      for (const w of this.watchers) w.changed(id);
    });
    const onReady = () => {
      const again = connectedBefore;
      connectedBefore = true;
      sub.subscribe(this.channel).then(
        () => {
          if (again && !this.closed) for (const w of this.watchers) w.resync();
        },
        () => {
          // Not subscribed, on a connection that said it was ready: start it again, so that the
          // next 'ready' subscribes (and resyncs) instead of leaving this process deaf.
          if (!this.closed) sub.disconnect(true);
        },
      );
    };
    sub.on('ready', onReady);
    if (sub.status === 'ready') onReady();
  }

  // --- audit ---

  /**
   * Unbounded on purpose: no MAXLEN, no expiry. The audit trail is what operators settle billing
   * disputes from; trimming it is an operator's decision (XTRIM), not the gateway's.
   */
  async appendAudit(entry: AuditEntry): Promise<void> {
    await this.commands.egwAuditAppend(this.auditKey, this.auditLagKey, ...auditArgs(entry));
  }

  /** The entries of the stream and of the one earlier gateways wrote, merged by instant. */
  async listAudit(query: { from: number; to: number; keyId?: string | undefined }): Promise<AuditEntry[]> {
    if (query.from > query.to) return [];
    const [legacy, current] = await Promise.all([
      this.readAudit(this.legacyAuditKey, this.legacyAuditLagKey, query),
      this.readAudit(this.auditKey, this.auditLagKey, query),
    ]);
    // Stream order is arrival order; an entry whose id was shifted is put back at its instant.
    // Array.prototype.sort is stable: entries of one instant stay in arrival order.
    return [...legacy, ...current].sort((a, b) => a.at - b.at);
  }

  private async readAudit(
    stream: string,
    lagKey: string,
    query: { from: number; to: number; keyId?: string | undefined },
  ): Promise<AuditEntry[]> {
    const lag = Number((await this.client.get(lagKey)) ?? 0);
    const start = query.from <= 0 ? '-' : String(Math.ceil(query.from));
    const endMs = Math.floor(query.to) + lag;
    const end = endMs >= Number.MAX_SAFE_INTEGER ? '+' : endMs < 0 ? null : String(endMs);
    if (end === null) return [];
    const entries: AuditEntry[] = [];
    // In pages: a year of admin writes is still a reply of bounded size each.
    let from = start;
    for (;;) {
      const page = await this.client.xrange(stream, from, end, 'COUNT', LIST_BATCH);
      for (const [, fields] of page) {
        const json = fields[fields.indexOf('e') + 1];
        if (json === undefined) continue;
        const e = JSON.parse(json) as AuditEntry;
        if (e.at < query.from || e.at > query.to) continue;
        if (query.keyId !== undefined && e.keyId !== query.keyId) continue;
        entries.push({ at: e.at, action: e.action, keyId: e.keyId, before: e.before, after: e.after });
      }
      const last = page.at(-1);
      if (page.length < LIST_BATCH || last === undefined) break;
      from = `(${last[0]}`; // exclusive start (Redis 6.2)
    }
    return entries;
  }

  // --- usage ---

  /**
   * Per day, one call of the ADD_USAGE_LUA script: the day's HINCRBYs, the hash's expiry and the
   * batch's marker, atomically (a batch already marked is not counted again). Days are separate
   * hash tags, so a batch that spans midnight is atomic per day only.
   *
   * The expiry is relative, PEXPIRE with the time left as this gateway's clock sees it, never
   * PEXPIREAT/EXPIREAT, which Redis would read with its own clock
   * (https://redis.io/docs/latest/commands/pexpire/). A row of a day already past its retention
   * is dropped: its hash would expire at once.
   */
  async addUsage(rows: readonly UsageRow[], batchId: string): Promise<void> {
    const byDay = new Map<string, Map<string, UsageCounts>>();
    for (const r of rows) {
      let day = byDay.get(r.day);
      if (!day) {
        dayStart(r.day); // a malformed day is a RangeError, before anything is written
        byDay.set(r.day, (day = new Map<string, UsageCounts>()));
      }
      const base = fieldBase(r.keyId, r.chain, r.route);
      const sum = day.get(base);
      if (sum) for (const c of COUNTERS) sum[c] += r[c];
      else day.set(base, { requests: r.requests, credits: r.credits, cacheHits: r.cacheHits, refused: r.refused, errors: r.errors });
    }
    const now = this.now();
    await Promise.all(
      [...byDay].map(async ([day, sums]) => {
        const ttl = dayStart(day) + DAY_MS + this.retentionMs - now;
        if (ttl <= 0) return;
        const key = this.usageKey(day);
        const args: string[] = [];
        for (const [base, counts] of sums) {
          // `requests` always, so that a row of zeros exists as it would in SQLite; the others
          // only when they move.
          for (const c of COUNTERS) if (c === 'requests' || counts[c] !== 0) args.push(`${base}|${c}`, String(counts[c]));
        }
        await this.commands.egwAddUsage(key, `${key}:batch:${batchId}`, String(Math.ceil(ttl)), String(BATCH_MARKER_MS), ...args);
      }),
    );
  }

  /** One HGETALL per day of the range, pipelined (ioredis writes each without waiting for the replies before it). */
  async listUsage(query: UsageQuery): Promise<UsageRow[]> {
    const first = dayStart(query.from);
    const last = dayStart(query.to);
    const days: string[] = [];
    for (let ms = first; ms <= last; ms += DAY_MS) days.push(utcDay(ms));
    const hashes = await Promise.all(days.map((day) => this.client.hgetall(this.usageKey(day))));
    const rows: UsageRow[] = [];
    days.forEach((day, i) => {
      const byRow = new Map<string, UsageRow>();
      for (const [field, value] of Object.entries(hashes[i] ?? {})) {
        const parts = field.split('|');
        if (parts.length !== 4) continue;
        const [keyPart = '', chainPart = '', routePart = '', counter = ''] = parts;
        if (!(COUNTERS as readonly string[]).includes(counter)) continue;
        const base = `${keyPart}|${chainPart}|${routePart}`;
        let row = byRow.get(base);
        if (!row) {
          const keyId = decodeURIComponent(keyPart);
          const chain = decodeURIComponent(chainPart);
          const route = decodeURIComponent(routePart);
          row = { day, keyId, chain, route, requests: 0, credits: 0, cacheHits: 0, refused: 0, errors: 0 };
          byRow.set(base, row);
        }
        row[counter as (typeof COUNTERS)[number]] = Number(value);
      }
      for (const row of byRow.values()) {
        if (query.keyIds !== undefined && !query.keyIds.has(row.keyId)) continue;
        if (query.chain !== undefined && row.chain !== query.chain) continue;
        if (query.route !== undefined && row.route !== query.route) continue;
        rows.push(row);
      }
    });
    return rows.sort(
      (a, b) => compare(a.day, b.day) || compare(a.keyId, b.keyId) || compare(a.chain, b.chain) || compare(a.route, b.route),
    );
  }

  /** Finds the day hashes with SCAN (on every master of a cluster), and unlinks those before `beforeDay`. */
  async pruneUsage(beforeDay: string): Promise<void> {
    dayStart(beforeDay);
    const head = `${this.prefix}usage:{`;
    const pattern = `${globEscape(head)}*`;
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    const old: string[] = [];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', LIST_BATCH);
        cursor = next;
        for (const key of keys) {
          if (!key.startsWith(head) || !key.endsWith('}')) continue;
          const day = key.slice(head.length, -1);
          if (dayStartMs(day) !== undefined && day < beforeDay) old.push(key);
        }
      } while (cursor !== '0');
    }
    // UNLINK frees a large hash off Redis's main thread (https://redis.io/docs/latest/commands/unlink/);
    // one key per call, since each day is its own slot.
    await Promise.all([...new Set(old)].map((key) => this.client.unlink(key)));
  }

  /** Redis answers a PING. */
  async ping(): Promise<void> {
    await this.client.ping();
  }

  /** Disconnects the subscriber this store made; the shared client is its owner's to close. */
  close(): Promise<void> {
    this.closed = true;
    this.watchers.length = 0;
    this.sub?.disconnect();
    this.sub = undefined;
    return Promise.resolve();
  }
}
