// Redis quota store: the rate window and the credit balance of a key are decided by one Lua
// script, registered once (EVALSHA), so a decision is one atomic round trip shared by every
// gateway process; decisions of one event-loop turn share that round trip. The keys of one
// decision share the hash tag {<account>}, so the script also runs on Redis Cluster.
//
// Time comes from the decision, never from the Redis server's clock: the window's start is an
// instant of the decision's clock, and every expiry is relative (PEXPIRE with the time left, as
// the decision's clock sees it). A gateway host whose clock differs from Redis's, or a test that
// hands in an instant of another year, gets the same answers as the in-process store.
//
// Why not rate-limiter-flexible's RateLimiterRedis here: its script takes one key and fixed
// arguments, so the credit decision would be a second round trip, or a non-atomic one; and it
// reads the window from Redis's clock. The window below is window.ts in Lua.
//
// Leases: a round trip per request (or per turn) made a hit on Redis cost 0.6 of a bare route,
// the process idling while Redis decided (bench/results/2026-11-23-targets.md). So a process that
// keeps deciding for one account is granted a lease by the same script: request slots of the
// current window, counted at once, and a reservation of credits, which other processes cannot
// take. It hands them out locally, in the order and with the headers the script would have
// given, until they run out, the window ends or the period does; its next call settles the lease
// (bills what it spent, releases the rest) and asks for a larger one (Doorman's and Envoy's
// quota leases are the same idea). Billing happens at settlement and only while Redis still
// holds the reservation, so a settlement sent twice bills once; a reservation nobody settles (a
// call whose reply was lost, a crashed process) lapses LEASE_GRACE_MS after its window, and its
// credits are free again. Credits are never taken beyond the balance nor twice. A lease is
// granted only while the window and the balance keep LEASE_SHARE times of it and it covers
// LEASE_MIN_REQUESTS requests, so a key near a limit is decided request by request, exactly, by
// every process. What it costs: until a lease is settled (a second or two), other processes see
// its reservation as spent, and one of them may refuse a request for credits the lease will
// release. `redis.leases: false` turns leases off.
import type { RedisClient } from '../redis/client.js';
import { periodWindow, type Period, type PeriodWindow } from './period.js';
import {
  covers,
  emptyLease,
  giveBack,
  LEASE_MIN_REQUESTS,
  LEASE_SHARE,
  LEASE_SWEEP_MS,
  leaseDeadlineMs,
  leaseOver,
  renew,
  settlement,
  spend,
  wantedSlots,
  type Grant,
  type Lease,
  type Settlement,
} from './lease.js';
import { creditKeyTtlMs, QuotaKeys, RATE_KEY_TTL_MS } from './redis-keys.js';
import type { Balance, QuotaDecision, QuotaOutcome, QuotaQuery, QuotaStore, Refund } from './types.js';
import { RATE_WINDOW_MS } from './window.js';

export { LEASE_GRACE_MS, LEASE_MAX_REQUESTS, LEASE_MIN_REQUESTS, LEASE_SHARE, LEASE_SWEEP_MS } from './lease.js';
export { CREDIT_KEY_GRACE_MS, RATE_KEY_TTL_MS } from './redis-keys.js';

/**
 * Lua that settles a lease, given where its parts are (KEYS[...], ARGV[...]): if the period's
 * reservations still hold the lease's id, removes it and bills what the lease spent, from the
 * allowance (the credit key gets its ttl if it had none) and from bought credits. Once: a second
 * settlement finds no reservation. Shared by the decision script and the settlement script.
 */
function settleLua(at: {
  reservations: string;
  credits: string;
  topup: string;
  id: string;
  allowance: string;
  bought: string;
  ttl: string;
}): string {
  return `if ${at.id} ~= '' and redis.call('hdel', ${at.reservations}, ${at.id}) == 1 then
  if tonumber(${at.allowance}) > 0 then
    redis.call('incrby', ${at.credits}, ${at.allowance})
    if redis.call('pttl', ${at.credits}) < 0 then redis.call('pexpire', ${at.credits}, ${at.ttl}) end
  end
  if tonumber(${at.bought}) > 0 then redis.call('decrby', ${at.topup}, ${at.bought}) end
end`;
}

// Decides a batch of requests of one account, in arrival order, exactly as if each had been sent
// alone: request i is the (base + i)-th of its window, and takes credits only if the balance
// left by the requests before it covers its cost, from the period's allowance first, then from
// bought credits. window.ts and memory.ts are the same logic for one store.
//
// Before deciding, it settles the lease this process gives back (the file's head explains
// leases) and lets reservations past their deadline lapse; after deciding, it may grant a new
// lease. The balance it decides from leaves out every live reservation.
// KEYS[1] rate window (hash: s = start ms, c = count), KEYS[2] credits spent in the period,
// KEYS[3] bought credits left, KEYS[4] the period's reservations (hash: lease id -> "allowance:
// bought:deadline ms"), KEYS[5] and KEYS[6] the same two for the settled lease's period.
// ARGV: now ms, rps, window ms, rate key ttl ms, plan credits, credit key ttl ms, lease slots
// wanted, the settled lease's window start, unused slots, id ('' for none), allowance and bought
// credits it spent, the new lease's id and deadline, then one cost per request. Returns, per
// request: outcome (0 ok, 1 rate limited, 2 out of credits), position in the window, ms until
// the window ends, balance after it, and what it took from bought credits; then the window's
// start, the lease's slots, allowance and bought credits, the window's count and the balance left
// besides every reservation.
const DECIDE_LUA = `
local now = tonumber(ARGV[1])
local rps = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local n = #ARGV - 14
local w = redis.call('hmget', KEYS[1], 's', 'c')
local start = tonumber(w[1])
local base = tonumber(w[2]) or 0
if not start or now >= start + windowMs or now <= start - windowMs then
  start = now
  base = 0
elseif tonumber(ARGV[9]) > 0 and tonumber(ARGV[8]) == start then
  base = math.max(base - tonumber(ARGV[9]), 0)
end
${settleLua({ reservations: 'KEYS[6]', credits: 'KEYS[5]', topup: 'KEYS[3]', id: 'ARGV[10]', allowance: 'ARGV[11]', bought: 'ARGV[12]', ttl: 'ARGV[6]' })}
local reservedAllowance = 0
local reservedTopup = 0
local held = redis.call('hgetall', KEYS[4])
for i = 1, #held, 2 do
  local a, t, deadline = string.match(held[i + 1], '^(%d+):(%d+):(%d+)$')
  if not deadline or tonumber(deadline) <= now then
    redis.call('hdel', KEYS[4], held[i])
  else
    reservedAllowance = reservedAllowance + tonumber(a)
    reservedTopup = reservedTopup + tonumber(t)
  end
end
local reset = math.min(math.max(start + windowMs - now, 1), windowMs)
local spentBefore = tonumber(redis.call('get', KEYS[2]) or '0')
local topup = math.max(tonumber(redis.call('get', KEYS[3]) or '0') - reservedTopup, 0)
local allowance = math.max(tonumber(ARGV[5]) - spentBefore - reservedAllowance, 0)
local fromAllowanceAll = 0
local fromTopupAll = 0
local maxCost = 0
local out = {}
for i = 1, n do
  local cost = tonumber(ARGV[14 + i])
  if cost > maxCost then maxCost = cost end
  local outcome = 0
  local fromTopup = 0
  if base + i > rps then
    outcome = 1
  elseif cost > 0 then
    if allowance + topup < cost then
      outcome = 2
    else
      local fromAllowance = math.min(cost, allowance)
      fromTopup = cost - fromAllowance
      allowance = allowance - fromAllowance
      topup = topup - fromTopup
      fromAllowanceAll = fromAllowanceAll + fromAllowance
      fromTopupAll = fromTopupAll + fromTopup
    end
  end
  out[#out + 1] = outcome
  out[#out + 1] = base + i
  out[#out + 1] = reset
  out[#out + 1] = allowance + topup
  out[#out + 1] = fromTopup
end
local slots = math.min(tonumber(ARGV[7]), math.floor((rps - base - n) / ${LEASE_SHARE}))
local leaseAllowance = 0
local leaseTopup = 0
if slots < ${LEASE_MIN_REQUESTS} then
  slots = 0
elseif maxCost > 0 then
  local credits = math.min(slots * maxCost, math.floor((allowance + topup) / ${LEASE_SHARE}))
  if credits < ${LEASE_MIN_REQUESTS} * maxCost then
    slots = 0
  else
    leaseAllowance = math.min(credits, allowance)
    leaseTopup = credits - leaseAllowance
    allowance = allowance - leaseAllowance
    topup = topup - leaseTopup
    redis.call('hset', KEYS[4], ARGV[13], string.format('%d:%d:%d', leaseAllowance, leaseTopup, tonumber(ARGV[14])))
    if redis.call('pttl', KEYS[4]) < 0 then redis.call('pexpire', KEYS[4], ARGV[6]) end
  end
end
redis.call('hset', KEYS[1], 's', start, 'c', base + n + slots)
redis.call('pexpire', KEYS[1], ARGV[4])
if fromAllowanceAll > 0 then
  redis.call('incrby', KEYS[2], fromAllowanceAll)
  if redis.call('pttl', KEYS[2]) < 0 then redis.call('pexpire', KEYS[2], ARGV[6]) end
end
if fromTopupAll > 0 then redis.call('decrby', KEYS[3], fromTopupAll) end
out[#out + 1] = start
out[#out + 1] = slots
out[#out + 1] = leaseAllowance
out[#out + 1] = leaseTopup
out[#out + 1] = base + n + slots
out[#out + 1] = allowance + topup
return out
`;

// Settles a lease outside a decision: KEYS[1] credits spent in its period, KEYS[2] bought credits,
// KEYS[3] the period's reservations; ARGV: lease id, allowance and bought credits it spent, the
// credit key's ttl (what is left of the lease's period, plus the grace, as a decision sets it).
// Bills only if the reservation is still there (then removes it): once.
const SETTLE_LUA = `
${settleLua({ reservations: 'KEYS[3]', credits: 'KEYS[1]', topup: 'KEYS[2]', id: 'ARGV[1]', allowance: 'ARGV[2]', bought: 'ARGV[3]', ttl: 'ARGV[4]' })}
return 0
`;

// KEYS[1] credits spent in the period, KEYS[2] bought credits; ARGV[1] back to the allowance,
// ARGV[2] back to bought credits. A period whose counter is gone has no allowance to give back to.
const REFUND_LUA = `
if tonumber(ARGV[1]) > 0 and redis.call('exists', KEYS[1]) == 1 then redis.call('decrby', KEYS[1], ARGV[1]) end
if tonumber(ARGV[2]) > 0 then redis.call('incrby', KEYS[2], ARGV[2]) end
return 0
`;

interface QuotaCommands {
  egwQuotaDecide(...keysAndArgs: (string | number)[]): Promise<number[]>;
  egwQuotaRefund(creditKey: string, topupKey: string, toAllowance: number, toTopup: number): Promise<number>;
  egwQuotaSettle(
    creditKey: string,
    topupKey: string,
    reservations: string,
    id: string,
    allowance: number,
    topup: number,
    ttl: number,
  ): Promise<number>;
}

const OUTCOMES: readonly QuotaOutcome[] = ['ok', 'rate_limited', 'out_of_credits'];
/** Numbers the script returns per request (the lease's come after them). */
const PER_REQUEST = 5;
/** Names this store's leases apart from other processes' (the lease ids in Redis). */
let stores = 0;

/** Requests of one account (and plan and period) waiting for the same script call. */
interface Batch {
  /** The first request's query: its clock reading stands for the batch (one event-loop turn). */
  query: QuotaQuery;
  period: PeriodWindow;
  costs: number[];
  waiters: { resolve: (d: QuotaDecision) => void; reject: (e: unknown) => void }[];
}

export interface RedisQuotaOptions {
  /** Decide locally from leases (the file's head); default true. */
  leases?: boolean;
  /** The clock of the lease sweep; decisions bring their own. */
  now?: () => number;
}

export class RedisQuotaStore implements QuotaStore {
  readonly kind = 'redis';
  /** Where the store keeps each account (redis-keys.ts). */
  readonly keys: QuotaKeys;
  private readonly commands: QuotaCommands;
  private readonly pending = new Map<string, Batch>();
  private flushScheduled = false;
  private readonly leasing: boolean;
  private readonly leases = new Map<string, Lease>();
  /** Requests that arrived while their account's call was on its way, by account. */
  private readonly waiting = new Map<string, { query: QuotaQuery; resolve: (d: QuotaDecision) => void; reject: (e: unknown) => void }[]>();
  /** Settlements Redis has not taken yet (it failed): retried by the sweep. */
  private owed: Settlement[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly storeId = `${process.pid.toString(36)}.${Date.now().toString(36)}.${(stores++).toString(36)}`;
  private leaseIds = 0;
  private closed = false;

  constructor(
    private readonly client: RedisClient,
    prefix: string,
    options: RedisQuotaOptions = {},
  ) {
    this.keys = new QuotaKeys(prefix);
    client.defineCommand('egwQuotaDecide', { numberOfKeys: 6, lua: DECIDE_LUA });
    client.defineCommand('egwQuotaRefund', { numberOfKeys: 2, lua: REFUND_LUA });
    client.defineCommand('egwQuotaSettle', { numberOfKeys: 3, lua: SETTLE_LUA });
    this.commands = client as unknown as QuotaCommands;
    this.leasing = options.leases ?? true;
    this.now = options.now ?? Date.now;
  }

  /**
   * A connection lost may be a Redis that lost its data: stop deciding locally, and settle every
   * lease once Redis answers again (billed only if Redis still holds its reservation).
   */
  private readonly connectionLost = (): void => void this.retire(Number.POSITIVE_INFINITY);

  /**
   * A request its account's lease covers is decided here and now, with no round trip. The others
   * that arrive in one event-loop turn are sent together, one script call per key (setImmediate
   * runs after the turn's I/O callbacks): a burst on one key becomes one atomic call. With leases,
   * those that arrive while the key's call is on its way wait for it.
   */
  decide(q: QuotaQuery): QuotaDecision | Promise<QuotaDecision> {
    const lease = this.leasing ? this.leases.get(q.account) : undefined;
    if (lease !== undefined && covers(lease, q)) return spend(lease, q);
    // While a call for the account is on its way, the next requests wait for its lease rather
    // than ask for another: one reservation per account and process at a time.
    const waiting = this.leasing ? this.waiting.get(q.account) : undefined;
    if (waiting !== undefined) return new Promise((resolve, reject) => waiting.push({ query: q, resolve, reject }));
    const period = periodWindow(q.period, q.nowMs);
    const id = `${q.account}|${period.id}|${q.rps}|${q.credits}`;
    let batch = this.pending.get(id);
    if (!batch) {
      batch = { query: q, period, costs: [], waiters: [] };
      this.pending.set(id, batch);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    }
    batch.costs.push(q.cost);
    return new Promise((resolve, reject) => batch.waiters.push({ resolve, reject }));
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const batches = [...this.pending.values()];
    this.pending.clear();
    for (const b of batches) this.send(b);
  };

  private send(b: Batch): void {
    const q = b.query;
    const lease = this.leasing ? this.leases.get(q.account) : undefined;
    // The lease rides along to be settled before the batch is decided; a new one is asked for,
    // larger, if this process keeps deciding for the account.
    const back = lease === undefined ? undefined : settlement(lease);
    const want = this.leasing && !this.closed ? wantedSlots(lease, b.costs.length, q.nowMs) : 0;
    const leaseId = want > 0 ? `${this.storeId}.${(this.leaseIds++).toString(36)}` : '';
    const backPeriod = back?.periodId ?? b.period.id;
    if (this.leasing && !this.waiting.has(q.account)) this.waiting.set(q.account, []);
    this.commands
      .egwQuotaDecide(
        this.keys.rate(q.account),
        this.keys.credits(q.account, b.period.id),
        this.keys.topup(q.account),
        this.keys.reservations(q.account, b.period.id),
        this.keys.credits(q.account, backPeriod),
        this.keys.reservations(q.account, backPeriod),
        q.nowMs,
        q.rps,
        RATE_WINDOW_MS,
        RATE_KEY_TTL_MS,
        q.credits,
        creditKeyTtlMs(b.period.endMs, q.nowMs),
        want,
        back?.windowStartMs ?? 0,
        back?.slots ?? 0,
        back?.id ?? '',
        back?.allowance ?? 0,
        back?.topup ?? 0,
        leaseId,
        leaseDeadlineMs(q.nowMs),
        ...b.costs,
      )
      .then(
        (reply) => {
          b.waiters.forEach((w, i) => {
            const at = i * PER_REQUEST;
            const [outcome = 0, position = 0, reset = 0, balance = 0, fromTopup = 0] = reply.slice(at, at + PER_REQUEST);
            const result = OUTCOMES[outcome] ?? 'ok';
            const cost = b.costs[i] ?? 0;
            w.resolve({
              outcome: result,
              rateRemaining: Math.max(q.rps - position, 0),
              rateResetMs: reset,
              credits: balance,
              billed: result === 'ok' ? cost : 0,
              fromTopup,
              periodId: b.period.id,
            });
          });
          if (this.leasing) this.install(b, leaseId, reply.slice(b.costs.length * PER_REQUEST));
          this.release(q.account);
        },
        (err: unknown) => {
          // The call may still have run (a reply lost): its settlement is sent again, and bills
          // nothing the second time; a lease it granted lapses unused. No lease is trusted until
          // Redis answers again.
          if (back !== undefined) this.owed.push(back);
          this.retire(Number.POSITIVE_INFINITY);
          for (const w of b.waiters) w.reject(err);
          this.release(q.account);
        },
      );
  }

  /** Decides what waited for the account's call: from its lease, or in the next call. */
  private release(account: string): void {
    const queued = this.waiting.get(account);
    if (queued === undefined) return;
    this.waiting.delete(account);
    for (const w of queued) {
      const d = this.decide(w.query);
      if (d instanceof Promise) d.then(w.resolve, w.reject);
      else w.resolve(d);
    }
  }

  /** Keeps what the script granted as the account's lease. */
  private install(b: Batch, leaseId: string, granted: number[]): void {
    const [windowStartMs = 0, slots = 0, allowance = 0, topup = 0, count = 0, free = 0] = granted;
    const grant: Grant = { windowStartMs, slots, allowance, topup, count, free };
    const q = b.query;
    let lease = this.leases.get(q.account);
    if (lease === undefined) {
      lease = emptyLease(q.account, q, b.period.id, windowStartMs);
      this.leases.set(q.account, lease);
      // Armed with the first lease: a store that never leases keeps no timer and no listener.
      if (this.sweeper === undefined) {
        this.sweeper = setInterval(() => void this.sweep(this.now()), LEASE_SWEEP_MS).unref();
        this.client.on('close', this.connectionLost);
      }
    }
    // A lease another call was granted meanwhile is settled (renew): one reservation per lease.
    void this.sendSettlement(renew(lease, q, b.period, b.costs.length, grant, leaseId));
    if (this.closed) void this.sendSettlement(settlement(lease));
  }

  /** Sends a settlement (one without a reservation has nothing to bill); one Redis cannot take now is kept for the next sweep. */
  private sendSettlement(s: Settlement): Promise<void> {
    if (s.id === '') return Promise.resolve();
    return this.commands
      .egwQuotaSettle(
        this.keys.credits(s.account, s.periodId),
        this.keys.topup(s.account),
        this.keys.reservations(s.account, s.periodId),
        s.id,
        s.allowance,
        s.topup,
        creditKeyTtlMs(s.periodEndMs, this.now()),
      )
      .then(
        () => undefined,
        () => void this.owed.push(s),
      );
  }

  /** Retires every lease whose window is over at `nowMs` (all of them for +Infinity): its settlement is owed. */
  private retire(nowMs: number): void {
    for (const [account, lease] of this.leases) {
      if (!leaseOver(lease, nowMs)) continue;
      if (lease.id !== '') this.owed.push(settlement(lease));
      this.leases.delete(account);
    }
  }

  /**
   * Settles the leases of accounts that went quiet (a busy one settles with its next call) and
   * what Redis could not take before. Runs every LEASE_SWEEP_MS; a test calls it with the
   * instant it wants.
   */
  async sweep(nowMs: number): Promise<void> {
    this.retire(nowMs);
    const owed = this.owed;
    this.owed = [];
    await Promise.all(owed.map((s) => this.sendSettlement(s)));
  }

  /** A refund of a request this process's lease decided goes back into the lease (it is not billed yet). */
  async refund(r: Refund): Promise<void> {
    const lease = this.leases.get(r.account);
    if (lease !== undefined && giveBack(lease, r)) return;
    await this.commands.egwQuotaRefund(
      this.keys.credits(r.account, r.periodId),
      this.keys.topup(r.account),
      r.amount - r.fromTopup,
      r.fromTopup,
    );
    if (lease !== undefined) lease.free += lease.periodId === r.periodId ? r.amount : r.fromTopup;
  }

  async topUp(account: string, amount: number): Promise<number> {
    const topup = await this.client.incrby(this.keys.topup(account), amount);
    const lease = this.leases.get(account);
    if (lease !== undefined) lease.free += amount;
    return topup - (lease === undefined ? 0 : lease.grantedTopup - lease.topup);
  }

  /** The account's standing as this process sees it: what its own lease spent counts, not yet billed. */
  async balance(account: string, period: Period, nowMs: number): Promise<Balance> {
    const { id: periodId } = periodWindow(period, nowMs);
    // One slot: both keys share the account's hash tag.
    const [spent, topup] = await this.client.mget(this.keys.credits(account, periodId), this.keys.topup(account));
    const lease = this.leases.get(account);
    const own = lease !== undefined && lease.periodId === periodId ? lease.grantedAllowance - lease.allowance : 0;
    const ownTopup = lease === undefined ? 0 : lease.grantedTopup - lease.topup;
    return { spent: Number(spent ?? 0) + own, topup: Number(topup ?? 0) - ownTopup, periodId };
  }

  /** Settles every lease (the client is shared, the cache tier's too: its owner closes it). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.client.off('close', this.connectionLost);
    await this.sweep(Number.POSITIVE_INFINITY);
  }
}
