// The store shared by every gateway process of one Redis (or Redis Cluster). Layout, every name
// under the configured prefix (`egw:` by default):
//
//   <prefix>{keys}:key:<id>      string   a KeyRecord as JSON (KeyRecord's fields only)
//   <prefix>{keys}:ids           set      the id of every run-time key
//   <prefix>{keys}:name:<name>   string   the id of the key named <name> (the uniqueness index)
//   <prefix>{keys}:changed       channel  PUBLISHed the id of each key created, changed or deleted, and
//                                         `<kind>:<id>` of each object (store/types.ts objectNotice)
//   <prefix>{keys}:obj:<kind>:<id>  string  a plan or account made at run time (StoredObject's value) as JSON
//   <prefix>{keys}:objs:<kind>   set      the id of every object of that kind
//   <prefix>{keys}:audit         stream   one entry per admin write, id `<at>-<seq>`, field `e`: the AuditEntry as JSON
//   <prefix>{keys}:audit:lag     string   the most an audit entry's id was moved past its `at`, in ms (see auditLua)
//   <prefix>{audit}, {audit}:lag          the same, as gateways before the key scripts wrote their own audit entries
//                                         kept them: read (listAudit), never written
//   <prefix>usage:{<day>}:keys         set   the id of every key with usage on UTC day <day> (`YYYY-MM-DD`)
//   <prefix>usage:{<day>}:key:<keyId>  hash  that key's usage that day: field `<chain>|<route>`, or
//                                            `<chain>|<route>|<account>` for a row counted under an account
//                                            (UsageRow.account; a field of two parts, as earlier gateways wrote
//                                            them all, is the row of no account) -> `<requests> <credits>
//                                            <cacheHits> <refused> <errors> <rateLimited> <outOfCredits> <forbidden>
//                                            <clientErrors>` (COUNTERS' order, decimal integers, one space apart; a
//                                            value of the first five only, written by an earlier gateway, is read with
//                                            0 of the other four and written back with all nine); `%` and `|` of
//                                            chain, route and account escaped as %25 and %7C
//   <prefix>usage:{<day>}:hour:<keyId> hash  that key's hourly rows that day: field `<HH>|` (the UTC hour, 00-23)
//                                            and the day hash's field -> the same nine counts; written by the same
//                                            script call as the day hash's (ADD_USAGE), so that a day's hours sum to
//                                            its day; kept `usage.hourlyRetentionDays` (pruneHourlyUsage)
//   <prefix>usage:{<day>}:batch:<id>   hash  the parts of usage batch <id> already added to that day (ADD_USAGE), for an hour
//   <prefix>usage:{<day>}              hash  the layout before this one, one hash per day: field
//                                            `<keyId>|<chain>|<route>|<counter>` -> count, each of the first three parts
//                                            encodeURIComponent'ed; still read (summed with the above) and pruned, never written
//
// Usage is laid out so that no usage command holds Redis for more than a few ms, whatever the
// number of keys: Redis runs one command at a time, and the quota decisions wait behind it
// (https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/latency/#single-threaded-nature-of-redis).
// The one hash per day of the layout before holds 600,000 fields for 10,000 keys on 12 routes;
// HGETALL is O(N) (https://redis.io/docs/latest/commands/hgetall/), and with the rows of
// test/process/usage-scale.test.ts (77 MB in that hash, on Redis 7.0) one HGETALL held Redis
// for 440 ms, one script call adding a batch of 10,000 rows for 100 to 280 ms. So:
//   - one small hash per day and key: a report on some keys reads only theirs. Every hash is read
//     with HSCAN, which returns a small hash whole in one call and a large one (a key on hundreds
//     of routes) LIST_BATCH fields a call (https://redis.io/docs/latest/commands/scan/); a day's
//     key ids come from its set by SSCAN, LIST_BATCH at a time; the hashes are read
//     USAGE_READ_KEYS at a time, one step after the other, so that other clients' commands (the
//     quota path's) are served between the steps;
//   - a row's counters in one field's value: the route's name is stored once per row, not
//     once per counter, and most fields stay under the 64 bytes that keep a small hash in its
//     compact encoding (hash-max-listpack-value:
//     https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/memory-optimization/).
//     0.84 MB per 1,000 keys a day on 12 routes, the set included (MEMORY USAGE, usage-scale.test.ts);
//   - a batch is added USAGE_ROWS_PER_CALL rows per script call, one call after the other, since
//     a script, too, runs whole before anything else; a day row and its hourly rows always go in
//     the same call;
//   - the old day hash is still read, with HSCAN too, never HGETALL; pruneUsage UNLINKs, which
//     frees a large value off the main thread (https://redis.io/docs/latest/commands/unlink/). A
//     day's hashes expire together, each small to free, where a 77 MB hash that expired was freed
//     whole on the main thread (lazyfree-lazy-expire is off by default: LAZY FREEING in
//     https://github.com/redis/redis/blob/7.0/redis.conf).
// usage-scale.test.ts holds it: a 30-day report of 120,000 rows while quota decisions go on, no
// command of its own in SLOWLOG at 20 ms, no decision waiting 50 ms.
//
// Hash tags (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags):
// the key store's keys share `{keys}` so that one script can read and write a record, the id set,
// the name index and the audit trail on Redis Cluster, where a script's keys must all live in one
// slot; thousands to a million small records fit one slot. Each usage day
// has its own tag, so days spread over the cluster and a day's script (its set, its marker and
// the hashes of its keys) stays in one slot. (A prefix
// holding braces of its own would move every key into the prefix's slot: still correct, unspread.)
//
// Every command may reject quickly while Redis is away (client.ts: no offline queue, no retries,
// a command timeout): errors propagate to the caller, who knows what to do with them.
import { readFileSync } from 'node:fs';
import { Cluster } from 'ioredis';
import type { RedisClient } from '../redis/client.js';
import { DAY_MS, dayStartMs, hourName, hourOfDay, utcDay } from './day.js';
import { checkUsageDelta, compareUsageRows, copyKeyRecord, copyTerms, COUNTERS, usageRowId, zeroCounts } from './records.js';
import type {
  AuditEntry,
  AuditStore,
  KeyRecord,
  KeyStore,
  ObjectKind,
  Storage,
  StoredObject,
  UsageCounts,
  UsageQuery,
  UsageRow,
  UsageStore,
} from './types.js';
import { objectNotice } from './types.js';
import type { OutboxStore } from './outbox.js';
import { RedisOutbox } from './outbox-redis.js';

/**
 * Usage counters (COUNTERS, store/records.ts) are in their order in the values of a key's hash, and
 * named in the old day hash's fields. A value of the first OLD_COUNTERS only is an earlier gateway's.
 */
const OLD_COUNTERS = 5;
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
// is its audit entry (lua/audit.lua). Scripts are atomic: two processes creating one name at once see
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
// the lag key, so that listAudit reads that much further to find it. That is lua/audit.lua's
// function `audit`, sent before each script that appends an entry (luaWithAudit).
//
// Each script's body is a file, src/store/lua/<name>.lua, read once at start and sent after a
// newline (the text the scripts had when they were template strings here: ADD_USAGE_LUA keeps its
// SHA1, EVALSHA's name for it); a script that appends an audit entry gets lua/audit.lua first.
// test/unit/lua-scripts.test.ts parses each script as sent.
const lua = (name: string): string => `\n${readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8')}`;
const AUDIT_LUA = readFileSync(new URL('./lua/audit.lua', import.meta.url), 'utf8');
const luaWithAudit = (name: string): string => `${AUDIT_LUA}${lua(name)}`;

// KEYS[1] record, KEYS[2] id set, KEYS[3] name index, KEYS[4] audit stream, KEYS[5] its lag;
// ARGV[1] id, ARGV[2] record JSON, ARGV[3] channel, ARGV[4] audit at, ARGV[5] audit JSON.
// 1 created, 0 name taken, -1 id exists.
const CREATE_LUA = luaWithAudit('key-create');

// KEYS[1] record, KEYS[2] new name's index, KEYS[3] old name's index, KEYS[4] audit stream,
// KEYS[5] its lag; ARGV[1] id, ARGV[2] record JSON as read, ARGV[3] new record JSON, ARGV[4]
// channel, ARGV[5] audit at, ARGV[6] audit JSON. 1 updated, 0 name taken, -1 no such key, -2
// changed since read.
const UPDATE_LUA = luaWithAudit('key-update');

// KEYS[1] record, KEYS[2] id set, KEYS[3] name index, KEYS[4] audit stream, KEYS[5] its lag;
// ARGV[1] id, ARGV[2] record JSON as read, ARGV[3] channel, ARGV[4] audit at, ARGV[5] audit
// JSON. 1 deleted, 0 no such key, -2 changed since read.
const DELETE_LUA = luaWithAudit('key-delete');

// KEYS[1] object, KEYS[2] its kind's id set, KEYS[3] audit stream, KEYS[4] its lag; ARGV[1] id,
// ARGV[2] value JSON, ARGV[3] 'create' or 'replace', ARGV[4] channel, ARGV[5] notice, ARGV[6]
// audit at, ARGV[7] audit JSON. 1 written, 0 not (exists on create, missing on replace).
const OBJECT_PUT_LUA = luaWithAudit('object-put');

// KEYS as OBJECT_PUT_LUA's; ARGV[1] id, ARGV[2] channel, ARGV[3] notice, ARGV[4] audit at,
// ARGV[5] audit JSON. 1 deleted, 0 there was none.
const OBJECT_DELETE_LUA = luaWithAudit('object-delete');

// An audit entry of its own (a top-up): KEYS[1] stream, KEYS[2] lag; ARGV[1] at, ARGV[2] entry JSON.
const APPEND_AUDIT_LUA = luaWithAudit('audit-append');

// One part of a usage batch for one day, at most once: a write whose reply timed out may still
// run when a stalled Redis resumes, and the recorder then sends the same batch again
// (usage/recorder.ts), cut into the same parts (addUsage). The first run of a part marks it in the
// batch's marker (in the day's slot), and any later copy finds it and adds nothing.
// KEYS[1] the day's key-id set, KEYS[2] the marker, KEYS[3..] the hashes of the part (a key's day
// hash, and its hour hash with the hourly rows of the same rows). ARGV[1] the TTL of the day's
// set, ARGV[2] the marker's (ms), ARGV[3] the part's number; then, for each hash of KEYS[3..] in
// order, its key id, its TTL (ms), its number of rows n, and n times a field and the row's nine
// counts (COUNTERS' order). Each row's counts are read (one HMGET per hash) and summed before
// anything is written: a stored value of five counts (an earlier gateway's, which counted no
// causes) has 0 of the last four, and is written back with nine; one that is not five or nine
// integers, or a sum a Lua number (a double) cannot hold exactly, is an error that leaves the
// hashes as they were. (The part is marked by then, as in the layout before, whose HINCRBY
// refused an overflow halfway: a part sent again must never be added twice; no day of one key on
// one route comes near 2^53.)
const ADD_USAGE_LUA = lua('add-usage');
/** Each script's text as Redis runs it, by its file's name (test/unit/lua-scripts.test.ts parses them). */
export const STORE_LUA: Readonly<Record<string, string>> = {
  'key-create': CREATE_LUA,
  'key-update': UPDATE_LUA,
  'key-delete': DELETE_LUA,
  'object-put': OBJECT_PUT_LUA,
  'object-delete': OBJECT_DELETE_LUA,
  'audit-append': APPEND_AUDIT_LUA,
  'add-usage': ADD_USAGE_LUA,
};
/** How long a batch's marker outlives the batch's last part: far longer than any retry takes to follow it. */
const BATCH_MARKER_MS = 3_600_000;
/**
 * Rows of one day per ADD_USAGE call. The script's time grows with its rows; this many keep one
 * call around half a ms of Redis's time (test/process/usage-scale.test.ts holds every call
 * under 20 ms on a busy host). The script's unpack of a key's fields and values (2 per row, 200 at
 * most) stays far within the 8,000 values Lua 5.1 allows (LUAI_MAXCSTACK in Redis's Lua,
 * https://github.com/redis/redis/blob/unstable/deps/lua/src/luaconf.h).
 */
export const USAGE_ROWS_PER_CALL = 100;
/** Hashes of one day read per step of listUsage (one pipelined HSCAN each). */
const USAGE_READ_KEYS = 100;

interface KeyCommands {
  egwAddUsage(numberOfKeys: number, ...keysAndArgs: string[]): Promise<number>;
  egwKeyCreate(...keysAndArgs: string[]): Promise<number>;
  egwKeyUpdate(...keysAndArgs: string[]): Promise<number>;
  egwKeyDelete(...keysAndArgs: string[]): Promise<number>;
  egwAuditAppend(stream: string, lag: string, at: string, json: string): Promise<number>;
  egwObjectPut(...keysAndArgs: string[]): Promise<number>;
  egwObjectDelete(...keysAndArgs: string[]): Promise<number>;
}

export interface RedisStoreOptions {
  /** How many days a day's usage hash is kept after the day ends. */
  retentionDays?: number | undefined;
  /** How many days a day's hourly usage hashes are kept after the day ends (`usage.hourlyRetentionDays`); default 35. */
  hourlyRetentionDays?: number | undefined;
  /** The gateway's clock, for usage expiries. */
  now?: (() => number) | undefined;
}

/** The record's fields, and only those: whatever else the caller's object carries is never stored. */
function toJson(r: KeyRecord): string {
  return JSON.stringify(copyKeyRecord(r));
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
    ...copyTerms(r),
  };
}

/** An audit entry as the scripts take it: its instant, and the entry as JSON. */
function auditArgs(entry: AuditEntry): [string, string] {
  if (!Number.isSafeInteger(entry.at) || entry.at < 0) throw new RangeError(`audit instant must be a non-negative integer: ${entry.at}`);
  return [
    String(entry.at),
    JSON.stringify({
      at: entry.at,
      action: entry.action,
      actor: entry.actor ?? null,
      keyId: entry.keyId,
      before: entry.before,
      after: entry.after,
    }),
  ];
}

/** Milliseconds of a day's start, UTC; RangeError for anything but a real `YYYY-MM-DD`. */
function dayStart(day: string): number {
  const ms = dayStartMs(day);
  if (ms === undefined) throw new RangeError(`not a day (YYYY-MM-DD): ${day}`);
  return ms;
}

/**
 * A chain or a route in a key's hash: only `%` and `|` escaped (decodeURIComponent undoes it), so
 * that a route's name stays as short as it is and most fields within the 64 bytes of a compact hash.
 */
const escapePart = (s: string) => s.replace(/[%|]/g, (c) => (c === '%' ? '%25' : '%7C'));
/** A row's field in a key's day hash: its account a third part, only when it has one (two parts: none, as earlier gateways wrote). */
const usageField = (chain: string, route: string, account: string) =>
  account === '' ? `${escapePart(chain)}|${escapePart(route)}` : `${escapePart(chain)}|${escapePart(route)}|${escapePart(account)}`;
/** A row's field in a key's hour hash: the hour (00-23), then its day hash's field. */
const hourField = (hour: number, field: string) => `${String(hour).padStart(2, '0')}|${field}`;

/** A row of a key's hash (its hour hash's, given `hour`); undefined for a field or value this store did not write. */
function parseUsage(day: string, keyId: string, field: string, value: string, hour?: boolean): UsageRow | undefined {
  let h: number | undefined;
  if (hour) {
    h = /^\d\d\|/.test(field) ? Number(field.slice(0, 2)) : 24;
    if (h > 23) return undefined;
    field = field.slice(3);
  }
  const parts = field.split('|');
  const counts = value.split(' ').map(Number);
  if (
    (parts.length !== 2 && parts.length !== 3) ||
    (counts.length !== COUNTERS.length && counts.length !== OLD_COUNTERS) ||
    !counts.every(Number.isSafeInteger)
  ) {
    return undefined;
  }
  try {
    // COUNTERS' order; an earlier gateway's value stops after `errors`.
    const [
      requests = 0,
      credits = 0,
      cacheHits = 0,
      refused = 0,
      errors = 0,
      rateLimited = 0,
      outOfCredits = 0,
      forbidden = 0,
      clientErrors = 0,
    ] = counts;
    const row: UsageRow = {
      day,
      keyId,
      account: parts[2] === undefined ? '' : decodeURIComponent(parts[2]),
      chain: decodeURIComponent(parts[0]!),
      route: decodeURIComponent(parts[1]!),
      requests,
      credits,
      cacheHits,
      refused,
      rateLimited,
      outOfCredits,
      forbidden,
      clientErrors,
      errors,
    };
    if (h !== undefined) row.hour = hourName(day, h);
    return row;
  } catch {
    return undefined; // a malformed escape (URIError)
  }
}

/** Counts of one day row and of its hourly rows, to be written by one script call. */
interface DayUnit {
  counts: UsageCounts;
  /** Hour field (hourField) -> counts. */
  hours: Map<string, UsageCounts>;
}

function addCounts(into: Map<string, UsageCounts>, field: string, r: UsageRow): void {
  const sum = into.get(field);
  if (sum) for (const c of COUNTERS) sum[c] += r[c] ?? 0;
  else {
    const counts = {} as UsageCounts;
    for (const c of COUNTERS) counts[c] = r[c] ?? 0;
    into.set(field, counts);
  }
}

/** Escapes SCAN's glob characters (https://redis.io/docs/latest/commands/keys/) in a literal. */
const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class RedisStore implements Storage, KeyStore, AuditStore, UsageStore {
  readonly kind = 'redis';
  readonly faults = undefined;
  readonly keys = this;
  readonly audit = this;
  readonly usage = this;
  /** Where Redis keeps the quota counters, no ledger is kept beside them. */
  readonly ledgers = undefined;
  /** The webhook outbox, under this store's prefix and the hash tag `{webhooks}` (store/outbox-redis.ts). */
  readonly outbox: OutboxStore;
  private readonly commands: KeyCommands;
  private readonly idsKey: string;
  private readonly channel: string;
  private readonly auditKey: string;
  private readonly auditLagKey: string;
  /** Where gateways before this one kept the audit trail: still read. */
  private readonly legacyAuditKey: string;
  private readonly legacyAuditLagKey: string;
  private readonly retentionMs: number;
  private readonly hourlyRetentionMs: number;
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
    client.defineCommand('egwObjectPut', { numberOfKeys: 4, lua: OBJECT_PUT_LUA });
    client.defineCommand('egwObjectDelete', { numberOfKeys: 4, lua: OBJECT_DELETE_LUA });
    // No numberOfKeys: each call passes its own (a part has as many hashes as keys).
    client.defineCommand('egwAddUsage', { lua: ADD_USAGE_LUA });
    this.commands = client as unknown as KeyCommands;
    this.idsKey = `${prefix}{keys}:ids`;
    this.channel = `${prefix}{keys}:changed`;
    this.auditKey = `${prefix}{keys}:audit`;
    this.auditLagKey = `${prefix}{keys}:audit:lag`;
    this.legacyAuditKey = `${prefix}{audit}`;
    this.legacyAuditLagKey = `${prefix}{audit}:lag`;
    this.retentionMs = (options.retentionDays ?? 400) * DAY_MS;
    this.hourlyRetentionMs = (options.hourlyRetentionDays ?? 35) * DAY_MS;
    this.now = options.now ?? Date.now;
    this.outbox = new RedisOutbox(client, prefix);
  }

  recordKey(id: string): string {
    return `${this.prefix}{keys}:key:${id}`;
  }

  nameKey(name: string): string {
    return `${this.prefix}{keys}:name:${name}`;
  }

  /** One key's usage of one day. */
  usageKey(day: string, keyId: string): string {
    return `${this.prefix}usage:{${day}}:key:${keyId}`;
  }

  /** One key's hourly usage of one day. */
  hourlyUsageKey(day: string, keyId: string): string {
    return `${this.prefix}usage:{${day}}:hour:${keyId}`;
  }

  /** The ids of the keys with usage on one day. */
  usageIdsKey(day: string): string {
    return `${this.prefix}usage:{${day}}:keys`;
  }

  /** The parts of a usage batch already added to a day. */
  usageMarkerKey(day: string, batchId: string): string {
    return `${this.prefix}usage:{${day}}:batch:${batchId}`;
  }

  /** One day's usage as the layout before this one kept it: read and pruned, never written. */
  legacyUsageKey(day: string): string {
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

  // --- objects ---

  private objectKey(kind: ObjectKind, id: string): string {
    return `${this.prefix}{keys}:obj:${kind}:${id}`;
  }

  private objectIdsKey(kind: ObjectKind): string {
    return `${this.prefix}{keys}:objs:${kind}`;
  }

  async listObjects(kind: ObjectKind): Promise<StoredObject[]> {
    const ids = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.client.sscan(this.objectIdsKey(kind), cursor, 'COUNT', LIST_BATCH);
      cursor = next;
      for (const id of batch) ids.add(id);
    } while (cursor !== '0');
    const sorted = [...ids].sort(compare);
    const out: StoredObject[] = [];
    for (let i = 0; i < sorted.length; i += LIST_BATCH) {
      const page = sorted.slice(i, i + LIST_BATCH);
      const values = await this.client.mget(...page.map((id) => this.objectKey(kind, id)));
      page.forEach((id, j) => {
        const json = values[j];
        if (json !== null && json !== undefined) out.push({ kind, id, value: JSON.parse(json) as Record<string, unknown> });
      });
    }
    return out;
  }

  async getObject(kind: ObjectKind, id: string): Promise<StoredObject | undefined> {
    const json = await this.client.get(this.objectKey(kind, id));
    return json === null ? undefined : { kind, id, value: JSON.parse(json) as Record<string, unknown> };
  }

  async putObject(object: StoredObject, mode: 'create' | 'replace', audit: AuditEntry): Promise<boolean> {
    const entry = auditArgs(audit);
    const outcome = await this.commands.egwObjectPut(
      this.objectKey(object.kind, object.id),
      this.objectIdsKey(object.kind),
      this.auditKey,
      this.auditLagKey,
      object.id,
      JSON.stringify(object.value),
      mode,
      this.channel,
      objectNotice(object.kind, object.id),
      ...entry,
    );
    return outcome === 1;
  }

  async deleteObject(kind: ObjectKind, id: string, audit: AuditEntry): Promise<boolean> {
    const entry = auditArgs(audit);
    const outcome = await this.commands.egwObjectDelete(
      this.objectKey(kind, id),
      this.objectIdsKey(kind),
      this.auditKey,
      this.auditLagKey,
      id,
      this.channel,
      objectNotice(kind, id),
      ...entry,
    );
    return outcome === 1;
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
        entries.push({ at: e.at, action: e.action, actor: e.actor ?? null, keyId: e.keyId, before: e.before, after: e.after });
      }
      const last = page.at(-1);
      if (page.length < LIST_BATCH || last === undefined) break;
      from = `(${last[0]}`; // exclusive start (Redis 6.2)
    }
    return entries;
  }

  // --- usage ---

  /**
   * Per day, the rows cut into parts of USAGE_ROWS_PER_CALL, one ADD_USAGE_LUA call per part, one
   * part after the other: each call the HSETs of its keys' day hashes and hour hashes, their
   * expiries and the part's mark in the batch's marker, atomically (a part already marked is not
   * counted again). A day row and its hourly rows are never cut apart: they go in one call, so
   * that a day's hours always sum to the day. The parts are cut the same way each time the same
   * rows come (Maps keep their insertion order), so a batch sent again after a write that failed
   * halfway adds the parts that were not added, once. Atomic per part only, as a batch that spans
   * midnight was already atomic per day only.
   *
   * The expiry is relative, PEXPIRE with the time left as this gateway's clock sees it, never
   * PEXPIREAT/EXPIREAT, which Redis would read with its own clock
   * (https://redis.io/docs/latest/commands/pexpire/). A row of a day already past its retention
   * is dropped: its hash would expire at once; so are the hourly rows of a day past the hourly
   * retention.
   */
  async addUsage(rows: readonly UsageRow[], batchId: string): Promise<void> {
    // day -> key id -> day field -> the day row's counts and its hours', rows of one identity summed.
    const byDay = new Map<string, Map<string, Map<string, DayUnit>>>();
    for (const r of rows) {
      // A malformed day or hour is a RangeError, before anything is written.
      const hour = checkUsageDelta(r);
      let day = byDay.get(r.day);
      if (!day) byDay.set(r.day, (day = new Map<string, Map<string, DayUnit>>()));
      // So is a count the script would not store exactly (it writes integers: string.format's %d).
      for (const c of COUNTERS) if (!Number.isSafeInteger(r[c] ?? 0)) throw new RangeError(`usage ${c} must be an integer: ${r[c]}`);
      let fields = day.get(r.keyId);
      if (!fields) day.set(r.keyId, (fields = new Map<string, DayUnit>()));
      const field = usageField(r.chain, r.route, r.account ?? '');
      let unit = fields.get(field);
      if (!unit) fields.set(field, (unit = { counts: zeroCounts(), hours: new Map() }));
      for (const c of COUNTERS) unit.counts[c] += r[c] ?? 0;
      if (hour !== undefined) addCounts(unit.hours, hourField(hour, field), r);
    }
    const now = this.now();
    await Promise.all(
      [...byDay].map(async ([day, keys]) => {
        const ttl = dayStart(day) + DAY_MS + this.retentionMs - now;
        if (ttl <= 0) return;
        const dayTtl = String(Math.ceil(ttl));
        const hourlyTtl = dayStart(day) + DAY_MS + this.hourlyRetentionMs - now;
        const hoursTtl = hourlyTtl > 0 ? String(Math.ceil(hourlyTtl)) : undefined;
        const head = [dayTtl, String(BATCH_MARKER_MS)];
        const marker = this.usageMarkerKey(day, batchId);
        let part = 0;
        let hashes: string[] = [];
        let args: string[] = [];
        let inPart = 0;
        const send = async () => {
          await this.commands.egwAddUsage(2 + hashes.length, this.usageIdsKey(day), marker, ...hashes, ...head, String(part++), ...args);
          hashes = [];
          args = [];
          inPart = 0;
        };
        const put = (hash: string, keyId: string, hashTtl: string, entries: [string, UsageCounts][]) => {
          hashes.push(hash);
          args.push(keyId, hashTtl, String(entries.length));
          for (const [field, c] of entries) {
            args.push(field);
            for (const name of COUNTERS) args.push(String(c[name]));
          }
        };
        const sizeOf = (u: DayUnit) => 1 + (hoursTtl === undefined ? 0 : u.hours.size);
        for (const [keyId, fields] of keys) {
          const units = [...fields];
          let next = 0;
          while (next < units.length) {
            // Whole units (a day row and its hours) while they fit; at least one in a part.
            const taken: [string, DayUnit][] = [];
            let size = 0;
            while (next < units.length) {
              const s = sizeOf(units[next]![1]);
              if (inPart + size > 0 && inPart + size + s > USAGE_ROWS_PER_CALL) break;
              taken.push(units[next++]!);
              size += s;
            }
            if (taken.length === 0) {
              await send();
              continue;
            }
            put(
              this.usageKey(day, keyId),
              keyId,
              dayTtl,
              taken.map(([field, u]) => [field, u.counts]),
            );
            const hours = hoursTtl === undefined ? [] : taken.flatMap(([, u]) => [...u.hours]);
            if (hours.length > 0) put(this.hourlyUsageKey(day, keyId), keyId, hoursTtl!, hours);
            inPart += size;
            if (inPart >= USAGE_ROWS_PER_CALL) await send();
          }
        }
        if (inPart > 0) await send();
      }),
    );
  }

  /**
   * Day by day: the ids of the day's keys (the query's, or SSCAN of the day's set), their hashes
   * (day hashes, or hour hashes for hourly rows) read USAGE_READ_KEYS at a time, and the old day
   * hash's rows (HSCAN) summed in. Each day's rows are made in order (ids sorted, then each key's
   * few rows; hourly rows put in their hour's list, the day's 24 lists then joined): the report is
   * never sorted whole, which would hold this process's event loop for as long as a large report
   * takes to sort.
   */
  async listUsage(query: UsageQuery): Promise<UsageRow[]> {
    const first = dayStart(query.from);
    const last = dayStart(query.to);
    const hourly = query.granularity === 'hour';
    const rows: UsageRow[] = [];
    if (query.keyIds?.size === 0 || query.accounts?.size === 0) return rows;
    const wanted = (r: UsageRow) =>
      (query.chain === undefined || r.chain === query.chain) &&
      (query.route === undefined || r.route === query.route) &&
      (query.accounts === undefined || query.accounts.has(r.account));
    for (let ms = first; ms <= last; ms += DAY_MS) {
      const day = utcDay(ms);
      const ids = query.keyIds ? [...query.keyIds].sort(compare) : await this.usageIds(day);
      const ofDay: UsageRow[] = [];
      const ofHours: UsageRow[][] = hourly ? Array.from({ length: 24 }, () => []) : [];
      for (let i = 0; i < ids.length; i += USAGE_READ_KEYS) {
        const step = ids.slice(i, i + USAGE_READ_KEYS);
        const hashes = await Promise.all(step.map((id) => this.scanHash(hourly ? this.hourlyUsageKey(day, id) : this.usageKey(day, id))));
        step.forEach((keyId, j) => {
          const ofKey: UsageRow[] = [];
          for (const [field, value] of hashes[j]!) {
            const row = parseUsage(day, keyId, field, value, hourly);
            if (row && wanted(row)) ofKey.push(row);
          }
          ofKey.sort(compareUsageRows);
          if (hourly) for (const row of ofKey) ofHours[hourOfDay(row.hour!, day)!]!.push(row);
          else for (const row of ofKey) ofDay.push(row);
        });
      }
      if (hourly) {
        // The layout before had no hourly rows.
        for (const ofHour of ofHours) for (const row of ofHour) rows.push(row);
        continue;
      }
      const legacy = (await this.legacyUsage(day, query.keyIds)).filter(wanted);
      if (legacy.length === 0) {
        for (const row of ofDay) rows.push(row);
        continue;
      }
      // A day written by gateways of both layouts (a rolling upgrade): the same row's counts summed.
      const merged = new Map<string, UsageRow>();
      for (const row of [...ofDay, ...legacy]) {
        const id = usageRowId(row);
        const sum = merged.get(id);
        if (sum) for (const c of COUNTERS) sum[c] = (sum[c] ?? 0) + (row[c] ?? 0);
        else merged.set(id, row);
      }
      for (const row of [...merged.values()].sort(compareUsageRows)) rows.push(row);
    }
    return rows;
  }

  /** The ids of a day's keys, sorted; SSCAN may return one twice. */
  private async usageIds(day: string): Promise<string[]> {
    const ids = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.client.sscan(this.usageIdsKey(day), cursor, 'COUNT', LIST_BATCH);
      cursor = next;
      for (const id of batch) ids.add(id);
    } while (cursor !== '0');
    return [...ids].sort(compare);
  }

  /**
   * A hash's fields and values, HSCAN by HSCAN: one call for a small hash, LIST_BATCH fields a call
   * for a large one. HSCAN may return a field twice; the Map keeps it once.
   */
  private async scanHash(key: string, match?: string): Promise<Map<string, string>> {
    const fields = new Map<string, string>();
    let cursor = '0';
    do {
      const [next, flat] =
        match === undefined
          ? await this.client.hscan(key, cursor, 'COUNT', LIST_BATCH)
          : await this.client.hscan(key, cursor, 'MATCH', match, 'COUNT', LIST_BATCH);
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
    } while (cursor !== '0');
    return fields;
  }

  /** The rows of a day's old hash (the layout before), of the given keys if any; usually none. */
  private async legacyUsage(day: string, keyIds: ReadonlySet<string> | undefined): Promise<UsageRow[]> {
    // One key asked for: HSCAN's MATCH leaves the other keys' fields in Redis (it still walks them).
    const only = keyIds?.size === 1 ? [...keyIds][0]! : undefined;
    const match = only === undefined ? undefined : `${globEscape(encodeURIComponent(only))}|*`;
    const byBase = new Map<string, UsageRow>();
    for (const [field, value] of await this.scanHash(this.legacyUsageKey(day), match)) {
      const parts = field.split('|');
      if (parts.length !== 4) continue;
      const [keyPart = '', chainPart = '', routePart = '', counter = ''] = parts;
      if (!(COUNTERS as readonly string[]).includes(counter)) continue;
      const base = `${keyPart}|${chainPart}|${routePart}`;
      let row = byBase.get(base);
      if (!row) {
        const keyId = decodeURIComponent(keyPart);
        if (keyIds !== undefined && !keyIds.has(keyId)) continue;
        row = {
          day,
          keyId,
          account: '',
          chain: decodeURIComponent(chainPart),
          route: decodeURIComponent(routePart),
          ...zeroCounts(),
        };
        byBase.set(base, row);
      }
      row[counter as (typeof COUNTERS)[number]] = Number(value);
    }
    return [...byBase.values()];
  }

  /**
   * Finds the usage keys of each day, both layouts', with SCAN (on every master of a cluster), and
   * UNLINKs those of days before `beforeDay` (hour hashes included), page by page: a day's keys
   * are one slot, so up to LIST_BATCH of them go in one UNLINK.
   */
  async pruneUsage(beforeDay: string): Promise<void> {
    await this.prune(beforeDay, false);
  }

  /** The same for the hour hashes alone (`usage:{<day>}:hour:<keyId>`): the day hashes stay. */
  async pruneHourlyUsage(beforeDay: string): Promise<void> {
    await this.prune(beforeDay, true);
  }

  private async prune(beforeDay: string, hoursOnly: boolean): Promise<void> {
    dayStart(beforeDay);
    const head = `${this.prefix}usage:{`;
    const pattern = hoursOnly ? `${globEscape(head)}*}:hour:*` : `${globEscape(head)}*`;
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', LIST_BATCH);
        cursor = next;
        const old = new Map<string, string[]>();
        for (const key of keys) {
          const close = key.indexOf('}', head.length);
          if (!key.startsWith(head) || close < 0) continue;
          if (hoursOnly && !key.startsWith(':hour:', close + 1)) continue;
          const day = key.slice(head.length, close);
          if (dayStartMs(day) === undefined || day >= beforeDay) continue;
          let ofDay = old.get(day);
          if (!ofDay) old.set(day, (ofDay = []));
          ofDay.push(key);
        }
        // UNLINK frees a large hash (an old day hash) off Redis's main thread
        // (https://redis.io/docs/latest/commands/unlink/).
        for (const ofDay of old.values()) await this.client.unlink(...ofDay);
      } while (cursor !== '0');
    }
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
