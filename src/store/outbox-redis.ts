// The webhook outbox (store/outbox.ts) in Redis, for RedisStore (store/redis.ts). Layout, every
// name under the store's prefix and the one hash tag `{webhooks}`, so that each script's keys live
// in one slot on Redis Cluster (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags):
//
//   <prefix>{webhooks}:d:<id>           hash  one delivery: Delivery's fields (numbers in decimal) and `m`, its member below
//   <prefix>{webhooks}:due              zset  the id of every pending delivery, scored by its nextAttemptAt
//   <prefix>{webhooks}:all              zset  every delivery as the member `<createdAt, 16 digits>|<id>`, all scored 0
//   <prefix>{webhooks}:w:<webhook>      zset  the same members, of one webhook
//   <prefix>{webhooks}:k:<keyId>        zset  of one key ('' for none)
//   <prefix>{webhooks}:t:<type>         zset  of one event type
//   <prefix>{webhooks}:s:<status>       zset  of one status (pending, delivered, failed)
//
// Members of one score are ordered by their bytes (https://redis.io/docs/latest/commands/zrangebylex/),
// and a 16-digit createdAt orders as its number (2^53 - 1 has 16 digits): so ZREVRANGEBYLEX
// lists newest first, createdAt then id descending, and a page starts after its cursor's member,
// exclusive (`(`), whatever was written or pruned since. A filtered listing reads the smallest
// index of its filters and checks the rest on each delivery; its pages are read LIST_STEP
// members a step, one short command after the other, never one long one.
//
// Enqueue, claim, settle, redeliver and prune are each one script, atomic
// (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/), and every key a
// script touches is in its KEYS, as store/redis.ts's scripts do. So a claim reads the first
// `limit` due ids (ZRANGEBYSCORE), then claims them in a script that checks each again (still
// pending, still due) and passes over one another claim took meanwhile: at most `limit` members
// per script. When another process took some, it reads the due ids again, CLAIM_ROUNDS times at
// most. A script is not rolled back when one of its commands fails (the same page), so each
// writes its hash first and its indexes after, and each index write is idempotent.
import { readFileSync } from 'node:fs';
import type { RedisClient } from '../redis/client.js';
import type { Delivery, DeliveryPage, DeliveryQuery, DeliveryStatus, NewDelivery, OutboxStore, Settlement } from './outbox.js';
import {
  checkClaim,
  checkInstant,
  checkNewDeliveries,
  checkPruneBefore,
  checkQuery,
  checkSettle,
  compareCodePoints,
  EMPTY_PAGE,
  encodeCursor,
  lookupId,
  matches,
  type CursorPosition,
} from './outbox-common.js';

/** Deliveries per enqueue script call (4 keys and 8 arguments each). */
const ENQUEUE_PER_CALL = 100;
/** Members read per step of a listing and of a prune. */
const LIST_STEP = 200;
const PRUNE_STEP = 100;
/** How many times a claim reads the due ids again after another process took some of those it read. */
const CLAIM_ROUNDS = 4;

// Each script's body is a file, src/store/lua/outbox-<name>.lua, read once at start and sent
// after a newline: the text the scripts had when they were template strings here, so their SHA1s
// (EVALSHA's names) stay the same. test/unit/lua-scripts.test.ts parses each.
const lua = (name: string): string => `\n${readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8')}`;

// KEYS[1] due, KEYS[2] all, KEYS[3] s:pending, then per delivery: its hash, w:, k:, t:. ARGV per
// delivery: id, member, createdAt, eventId, type, webhook, keyId, body. One 1 (stored) or 0 (its
// id was there) per delivery.
const ENQUEUE_LUA = lua('outbox-enqueue');

// KEYS[1] due, KEYS[2..] the hash of each id read as due; ARGV[1] now, ARGV[2] the lease's end,
// ARGV[3..] the ids. Each one still pending and due is claimed: attempts + 1, nextAttemptAt and
// its due score the lease's end. Per claimed delivery: its score before, and its hash after.
const CLAIM_LUA = lua('outbox-claim');

// KEYS[1] hash, KEYS[2] due, KEYS[3] s:pending, KEYS[4] s:<new status>; ARGV[1] id, ARGV[2]
// attempts, ARGV[3] status, ARGV[4] at, ARGV[5] nextAttemptAt, ARGV[6] lastStatus, ARGV[7]
// lastError. 1 recorded, 0 not (gone, no longer pending, or claimed again since).
const SETTLE_LUA = lua('outbox-settle');

// KEYS[1] hash, KEYS[2] due, KEYS[3] s:pending, KEYS[4] s:delivered, KEYS[5] s:failed; ARGV[1]
// id, ARGV[2] now. 1 made pending, 0 no such delivery.
const REDELIVER_LUA = lua('outbox-redeliver');

// KEYS[1] all, KEYS[2] due, KEYS[3..5] s:pending, s:delivered, s:failed, then per delivery: its
// hash, w:, k:, t: (read before: a delivery's webhook, key and type never change). ARGV per
// delivery: id, member. The hash and the due entry go only if the hash is still the member's (the
// id was not pruned and enqueued again meanwhile); the member goes from every index.
const PRUNE_LUA = lua('outbox-prune');

/** Each script's text as Redis runs it, by its file's name (test/unit/lua-scripts.test.ts parses them). */
export const OUTBOX_LUA: Readonly<Record<string, string>> = {
  'outbox-enqueue': ENQUEUE_LUA,
  'outbox-claim': CLAIM_LUA,
  'outbox-settle': SETTLE_LUA,
  'outbox-redeliver': REDELIVER_LUA,
  'outbox-prune': PRUNE_LUA,
};

interface OutboxCommands {
  egwOutboxEnqueue(numberOfKeys: number, ...keysAndArgs: string[]): Promise<number[]>;
  egwOutboxClaim(numberOfKeys: number, ...keysAndArgs: string[]): Promise<(string | string[])[]>;
  egwOutboxSettle(...keysAndArgs: string[]): Promise<number>;
  egwOutboxRedeliver(...keysAndArgs: string[]): Promise<number>;
  egwOutboxPrune(numberOfKeys: number, ...keysAndArgs: string[]): Promise<number>;
}

/** A delivery's member of the listing indexes: its createdAt in 16 digits, then its id. */
const memberOf = (d: CursorPosition): string => `${String(d.createdAt).padStart(16, '0')}|${d.id}`;
/** The id of a member (after the 16 digits and the bar). */
const idOf = (member: string): string => member.slice(17);

const STRING_FIELDS = ['id', 'eventId', 'type', 'webhook', 'keyId', 'body', 'status', 'lastError'] as const;
const NUMBER_FIELDS = ['createdAt', 'attempts', 'nextAttemptAt', 'lastAttemptAt', 'lastStatus', 'deliveredAt'] as const;

/** A delivery's hash (HGETALL's object or a script's flat list); undefined when there is none. */
function fromHash(hash: Record<string, string> | string[]): (Delivery & { m: string }) | undefined {
  let h: Record<string, string>;
  if (Array.isArray(hash)) {
    h = {};
    for (let i = 0; i + 1 < hash.length; i += 2) h[hash[i]!] = hash[i + 1]!;
  } else h = hash;
  if (h.id === undefined || h.m === undefined) return undefined;
  const d: Record<string, string | number> = { m: h.m };
  for (const f of STRING_FIELDS) d[f] = h[f] ?? '';
  for (const f of NUMBER_FIELDS) d[f] = Number(h[f] ?? '0');
  return d as unknown as Delivery & { m: string };
}

/** The delivery's own fields: without `m`. */
function strip(d: Delivery & { m: string }): Delivery {
  const { m: _m, ...rest } = d;
  return rest;
}

export class RedisOutbox implements OutboxStore {
  private readonly commands: OutboxCommands;
  private readonly base: string;

  constructor(
    private readonly client: RedisClient,
    prefix: string,
  ) {
    // Registered once per store, as store/redis.ts does; ioredis sends EVALSHA and loads a script
    // Redis lacks (https://github.com/redis/ioredis#lua-scripting). No numberOfKeys where a call
    // passes its own.
    client.defineCommand('egwOutboxEnqueue', { lua: ENQUEUE_LUA });
    client.defineCommand('egwOutboxClaim', { lua: CLAIM_LUA });
    client.defineCommand('egwOutboxSettle', { numberOfKeys: 4, lua: SETTLE_LUA });
    client.defineCommand('egwOutboxRedeliver', { numberOfKeys: 5, lua: REDELIVER_LUA });
    client.defineCommand('egwOutboxPrune', { lua: PRUNE_LUA });
    this.commands = client as unknown as OutboxCommands;
    this.base = `${prefix}{webhooks}:`;
  }

  hashKey(id: string): string {
    return `${this.base}d:${id}`;
  }

  private get dueKey(): string {
    return `${this.base}due`;
  }

  private get allKey(): string {
    return `${this.base}all`;
  }

  private statusKey(status: DeliveryStatus): string {
    return `${this.base}s:${status}`;
  }

  private indexKeys(d: Pick<Delivery, 'webhook' | 'keyId' | 'type'>): [string, string, string] {
    return [`${this.base}w:${d.webhook}`, `${this.base}k:${d.keyId}`, `${this.base}t:${d.type}`];
  }

  async enqueue(deliveries: readonly NewDelivery[]): Promise<string[]> {
    const fresh = checkNewDeliveries(deliveries);
    const stored: string[] = [];
    for (let i = 0; i < fresh.length; i += ENQUEUE_PER_CALL) {
      const part = fresh.slice(i, i + ENQUEUE_PER_CALL);
      const keys = [this.dueKey, this.allKey, this.statusKey('pending')];
      const args: string[] = [];
      for (const d of part) {
        keys.push(this.hashKey(d.id), ...this.indexKeys(d));
        args.push(d.id, memberOf(d), String(d.createdAt), d.eventId, d.type, d.webhook, d.keyId, d.body);
      }
      const flags = await this.commands.egwOutboxEnqueue(keys.length, ...keys, ...args);
      part.forEach((d, j) => {
        if (flags[j] === 1) stored.push(d.id);
      });
    }
    return stored;
  }

  async claim(now: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    const args = checkClaim(now, leaseMs, limit);
    const claimed: { was: number; d: Delivery }[] = [];
    for (let round = 0; round < CLAIM_ROUNDS && claimed.length < args.limit; round++) {
      const want = args.limit - claimed.length;
      const ids = await this.client.zrangebyscore(this.dueKey, '-inf', args.now, 'LIMIT', 0, want);
      if (ids.length === 0) break;
      const out = await this.commands.egwOutboxClaim(
        1 + ids.length,
        this.dueKey,
        ...ids.map((id) => this.hashKey(id)),
        String(args.now),
        String(args.leaseEnd),
        ...ids,
      );
      for (let i = 0; i + 1 < out.length; i += 2) {
        const d = fromHash(out[i + 1] as string[]);
        if (d) claimed.push({ was: Number(out[i]), d: strip(d) });
      }
      // Every id read was claimed, and they were all that was due: nothing more to read.
      if (out.length / 2 === ids.length && ids.length < want) break;
    }
    return claimed.sort((a, b) => a.was - b.was || compareCodePoints(a.d.id, b.d.id)).map((c) => c.d);
  }

  async settle(id: string, attempts: number, outcome: Settlement): Promise<boolean> {
    const s = checkSettle(id, attempts, outcome);
    if (s.id === undefined) return false;
    const done = await this.commands.egwOutboxSettle(
      this.hashKey(s.id),
      this.dueKey,
      this.statusKey('pending'),
      this.statusKey(s.status),
      s.id,
      String(s.attempts),
      s.status,
      String(s.at),
      String(s.nextAttemptAt),
      String(s.lastStatus),
      s.lastError,
    );
    return done === 1;
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const key = lookupId(id);
    if (key === undefined) return undefined;
    const d = fromHash(await this.client.hgetall(this.hashKey(key)));
    return d && strip(d);
  }

  async listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    const q = checkQuery(query);
    if (q.none) return EMPTY_PAGE();
    const filters: string[] = [];
    if (q.webhook !== undefined) filters.push(`${this.base}w:${q.webhook}`);
    if (q.keyId !== undefined) filters.push(`${this.base}k:${q.keyId}`);
    if (q.type !== undefined) filters.push(`${this.base}t:${q.type}`);
    if (q.status !== undefined) filters.push(this.statusKey(q.status));
    let index = this.allKey;
    if (filters.length > 0) {
      // The smallest index of the filters (ZCARD is O(1)): the fewest members read.
      const sizes = await Promise.all(filters.map((k) => this.client.zcard(k)));
      index = filters[sizes.indexOf(Math.min(...sizes))]!;
    }
    const found: Delivery[] = [];
    let max = q.after ? `(${memberOf(q.after)}` : '+';
    // One more than the page: whether there is a next one.
    while (found.length <= q.limit) {
      const members = await this.client.zrevrangebylex(index, max, '-', 'LIMIT', 0, LIST_STEP);
      if (members.length === 0) break;
      const hashes = await Promise.all(members.map((m) => this.client.hgetall(this.hashKey(idOf(m)))));
      members.forEach((m, i) => {
        const d = fromHash(hashes[i]!);
        // A member whose hash is another (pruned and enqueued again since) or gone is left out.
        if (d && d.m === m && matches(d, q) && found.length <= q.limit) found.push(strip(d));
      });
      if (members.length < LIST_STEP) break;
      max = `(${members[members.length - 1]!}`;
    }
    const page = found.slice(0, q.limit);
    const last = page[page.length - 1];
    return { deliveries: page, nextCursor: found.length > q.limit && last ? encodeCursor(last) : null };
  }

  async redeliver(id: string, now: number): Promise<boolean> {
    checkInstant('redeliver now', now);
    if (lookupId(id) === undefined) return false;
    const done = await this.commands.egwOutboxRedeliver(
      this.hashKey(id),
      this.dueKey,
      this.statusKey('pending'),
      this.statusKey('delivered'),
      this.statusKey('failed'),
      id,
      String(now),
    );
    return done === 1;
  }

  async pruneDeliveries(before: number): Promise<void> {
    checkPruneBefore(before);
    if (before <= 0) return; // nothing is created before 0
    // Members of createdAt < before: below `<before, 16 digits>`, exclusive.
    const bound = `(${String(before).padStart(16, '0')}`;
    for (;;) {
      const members = await this.client.zrangebylex(this.allKey, '-', bound, 'LIMIT', 0, PRUNE_STEP);
      if (members.length === 0) return;
      const fields = await Promise.all(members.map((m) => this.client.hmget(this.hashKey(idOf(m)), 'webhook', 'keyId', 'type')));
      const keys = [this.allKey, this.dueKey, this.statusKey('pending'), this.statusKey('delivered'), this.statusKey('failed')];
      const args: string[] = [];
      members.forEach((m, i) => {
        const [webhook, keyId, type] = fields[i]!;
        const id = idOf(m);
        // A hash gone already: the member's other indexes are unknown, and `all` stands in for them.
        const indexes =
          typeof webhook !== 'string' || typeof keyId !== 'string' || typeof type !== 'string'
            ? [this.allKey, this.allKey, this.allKey]
            : this.indexKeys({ webhook, keyId, type });
        keys.push(this.hashKey(id), ...indexes);
        args.push(id, m);
      });
      await this.commands.egwOutboxPrune(keys.length, ...keys, ...args);
    }
  }
}
