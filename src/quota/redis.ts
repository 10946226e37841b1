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
import type { RedisClient } from '../redis/client.js';
import { periodWindow, type Period } from './period.js';
import type { Balance, QuotaDecision, QuotaOutcome, QuotaQuery, QuotaStore, Refund } from './types.js';
import { RATE_WINDOW_MS } from './window.js';

/**
 * How long a rate window's key outlives its last request in Redis. Only for clean-up: whether a
 * window holds is decided from the decision's clock (window.ts), so this only needs to be longer
 * than a window plus any clock skew between gateway hosts.
 */
export const RATE_KEY_TTL_MS = 60_000;
/**
 * A credit counter is kept this long past its period's end (as the deciding gateway sees it), so
 * that a gateway whose clock is behind still finds the period's spend, and a late refund finds
 * its period. A new period is a new key: an old counter is never read for it.
 */
export const CREDIT_KEY_GRACE_MS = 3_600_000;

// Decides a batch of requests of one account, in arrival order, exactly as if each had been sent
// alone: request i is the (base + i)-th of its window, and takes credits only if the balance
// left by the requests before it covers its cost, from the period's allowance first, then from
// bought credits. window.ts and memory.ts are the same logic for one store.
// KEYS[1] rate window (hash: s = start ms, c = count), KEYS[2] credits spent in the period,
// KEYS[3] bought credits left.
// ARGV: now ms, rps, window ms, rate key ttl ms, plan credits, credit key ttl ms, then one cost
// per request. Returns, per request: outcome (0 ok, 1 rate limited, 2 out of credits), position
// in the window, ms until the window ends, balance after it, and what it took from bought credits.
const DECIDE_LUA = `
local now = tonumber(ARGV[1])
local rps = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local n = #ARGV - 6
local w = redis.call('hmget', KEYS[1], 's', 'c')
local start = tonumber(w[1])
local base = tonumber(w[2]) or 0
if not start or now >= start + windowMs or now <= start - windowMs then
  start = now
  base = 0
end
redis.call('hset', KEYS[1], 's', start, 'c', base + n)
redis.call('pexpire', KEYS[1], ARGV[4])
local reset = math.min(math.max(start + windowMs - now, 1), windowMs)
local spentBefore = tonumber(redis.call('get', KEYS[2]) or '0')
local topup = tonumber(redis.call('get', KEYS[3]) or '0')
local allowance = math.max(tonumber(ARGV[5]) - spentBefore, 0)
local fromAllowanceAll = 0
local fromTopupAll = 0
local out = {}
for i = 1, n do
  local cost = tonumber(ARGV[6 + i])
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
if fromAllowanceAll > 0 then
  redis.call('incrby', KEYS[2], fromAllowanceAll)
  if redis.call('pttl', KEYS[2]) < 0 then redis.call('pexpire', KEYS[2], ARGV[6]) end
end
if fromTopupAll > 0 then redis.call('decrby', KEYS[3], fromTopupAll) end
return out
`;

// KEYS[1] credits spent in the period, KEYS[2] bought credits; ARGV[1] back to the allowance,
// ARGV[2] back to bought credits. A period whose counter is gone has no allowance to give back to.
const REFUND_LUA = `
if tonumber(ARGV[1]) > 0 and redis.call('exists', KEYS[1]) == 1 then redis.call('decrby', KEYS[1], ARGV[1]) end
if tonumber(ARGV[2]) > 0 then redis.call('incrby', KEYS[2], ARGV[2]) end
return 0
`;

interface QuotaCommands {
  egwQuotaDecide(rateKey: string, creditKey: string, topupKey: string, ...args: (string | number)[]): Promise<number[]>;
  egwQuotaRefund(creditKey: string, topupKey: string, toAllowance: number, toTopup: number): Promise<number>;
}

const OUTCOMES: readonly QuotaOutcome[] = ['ok', 'rate_limited', 'out_of_credits'];

/** Requests of one account (and plan and period) waiting for the same script call. */
interface Batch {
  /** The first request's query: its clock reading stands for the batch (one event-loop turn). */
  query: QuotaQuery;
  periodId: string;
  periodEndMs: number;
  costs: number[];
  waiters: { resolve: (d: QuotaDecision) => void; reject: (e: unknown) => void }[];
}

export class RedisQuotaStore implements QuotaStore {
  readonly kind = 'redis';
  private readonly commands: QuotaCommands;
  private readonly pending = new Map<string, Batch>();
  private flushScheduled = false;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {
    client.defineCommand('egwQuotaDecide', { numberOfKeys: 3, lua: DECIDE_LUA });
    client.defineCommand('egwQuotaRefund', { numberOfKeys: 2, lua: REFUND_LUA });
    this.commands = client as unknown as QuotaCommands;
  }

  /**
   * A hash since the window is kept with its start instant; named apart from the plain counter
   * `:rate` that gateways before it wrote, so the two never meet as a WRONGTYPE during an upgrade.
   */
  rateKey(account: string): string {
    return `${this.prefix}{${account}}:window`;
  }

  creditKey(account: string, periodId: string): string {
    return `${this.prefix}{${account}}:credits:${periodId}`;
  }

  /** Bought credits: no period resets them, so the key never expires. */
  topupKey(account: string): string {
    return `${this.prefix}{${account}}:topup`;
  }

  /**
   * Decisions that arrive in one event-loop turn are sent together, one script call per key
   * (setImmediate runs after the turn's I/O callbacks): the round trip is still one per
   * request, but its cost is shared. A burst on one key becomes one atomic call.
   */
  decide(q: QuotaQuery): Promise<QuotaDecision> {
    const period = periodWindow(q.period, q.nowMs);
    const id = `${q.account}|${period.id}|${q.rps}|${q.credits}`;
    let batch = this.pending.get(id);
    if (!batch) {
      batch = { query: q, periodId: period.id, periodEndMs: period.endMs, costs: [], waiters: [] };
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
    this.commands
      .egwQuotaDecide(
        this.rateKey(q.account),
        this.creditKey(q.account, b.periodId),
        this.topupKey(q.account),
        q.nowMs,
        q.rps,
        RATE_WINDOW_MS,
        RATE_KEY_TTL_MS,
        q.credits,
        Math.max(b.periodEndMs - q.nowMs, 1) + CREDIT_KEY_GRACE_MS,
        ...b.costs,
      )
      .then(
        (reply) => {
          b.waiters.forEach((w, i) => {
            const [outcome = 0, position = 0, reset = 0, balance = 0, fromTopup = 0] = reply.slice(i * 5, i * 5 + 5);
            const result = OUTCOMES[outcome] ?? 'ok';
            const cost = b.costs[i] ?? 0;
            w.resolve({
              outcome: result,
              rateRemaining: Math.max(q.rps - position, 0),
              rateResetMs: reset,
              credits: balance,
              billed: result === 'ok' ? cost : 0,
              fromTopup,
              periodId: b.periodId,
            });
          });
        },
        (err: unknown) => {
          for (const w of b.waiters) w.reject(err);
        },
      );
  }

  async refund(r: Refund): Promise<void> {
    await this.commands.egwQuotaRefund(
      this.creditKey(r.account, r.periodId),
      this.topupKey(r.account),
      r.amount - r.fromTopup,
      r.fromTopup,
    );
  }

  async topUp(account: string, amount: number): Promise<number> {
    return this.client.incrby(this.topupKey(account), amount);
  }

  async balance(account: string, period: Period, nowMs: number): Promise<Balance> {
    const { id: periodId } = periodWindow(period, nowMs);
    // One slot: both keys share the account's hash tag.
    const [spent, topup] = await this.client.mget(this.creditKey(account, periodId), this.topupKey(account));
    return { spent: Number(spent ?? 0), topup: Number(topup ?? 0), periodId };
  }

  async close(): Promise<void> {
    // The client is shared (cache tier); its owner closes it.
  }
}
