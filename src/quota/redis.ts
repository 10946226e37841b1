// Redis quota store: the rate window and the credit balance of a key are decided by one Lua
// script, registered once (EVALSHA), so a decision is one atomic round trip shared by every
// gateway process; decisions of one event-loop turn share that round trip. The keys of one decision share the hash tag {<digest>}, so the script
// also runs on Redis Cluster.
//
// Why not rate-limiter-flexible's RateLimiterRedis here: its script takes one key and fixed
// arguments, so the credit decision would be a second round trip, or a non-atomic one. The
// window logic below is its incr-with-ttl script (fixed window, expiry set once on creation),
// with the credit step after it. The in-process store uses rate-limiter-flexible itself.
import type { RedisClient } from '../redis/client.js';
import { periodWindow } from './period.js';
import { RATE_WINDOW_MS, type QuotaDecision, type QuotaOutcome, type QuotaQuery, type QuotaStore, type Refund } from './types.js';

// Decides a batch of requests of one key, in arrival order, exactly as if each had been sent
// alone: request i is the (base + i)-th of its window, and takes credits only if the balance
// left by the requests before it covers its cost.
// KEYS[1] window counter, KEYS[2] credits spent in the period.
// ARGV: rps, window ms, plan credits, period end (unix seconds), then one cost per request.
// Returns, per request: outcome (0 ok, 1 rate limited, 2 out of credits), position in the
// window, window ttl ms, balance after it.
const DECIDE_LUA = `
local n = #ARGV - 4
redis.call('set', KEYS[1], 0, 'PX', ARGV[2], 'NX')
local base = redis.call('incrby', KEYS[1], n) - n
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
local rps = tonumber(ARGV[1])
local spentBefore = tonumber(redis.call('get', KEYS[2]) or '0')
local balance = tonumber(ARGV[3]) - spentBefore
local out = {}
for i = 1, n do
  local cost = tonumber(ARGV[4 + i])
  local outcome = 0
  if base + i > rps then
    outcome = 1
  elseif cost > 0 then
    if balance < cost then outcome = 2 else balance = balance - cost end
  end
  out[#out + 1] = outcome
  out[#out + 1] = base + i
  out[#out + 1] = ttl
  out[#out + 1] = balance
end
local spent = tonumber(ARGV[3]) - balance - spentBefore
if spent > 0 then
  redis.call('incrby', KEYS[2], spent)
  if redis.call('ttl', KEYS[2]) < 0 then redis.call('expireat', KEYS[2], ARGV[4]) end
end
return out
`;

// KEYS[1] credits spent in the period; ARGV[1] amount. A period that has expired is left alone.
const REFUND_LUA = `
if redis.call('exists', KEYS[1]) == 1 then return redis.call('decrby', KEYS[1], ARGV[1]) end
return 0
`;

interface QuotaCommands {
  egwQuotaDecide(rateKey: string, creditKey: string, ...args: (string | number)[]): Promise<number[]>;
  egwQuotaRefund(creditKey: string, amount: number): Promise<number>;
}

const OUTCOMES: readonly QuotaOutcome[] = ['ok', 'rate_limited', 'out_of_credits'];

/** Requests of one key (and plan and period) waiting for the same script call. */
interface Batch {
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
    client.defineCommand('egwQuotaDecide', { numberOfKeys: 2, lua: DECIDE_LUA });
    client.defineCommand('egwQuotaRefund', { numberOfKeys: 1, lua: REFUND_LUA });
    this.commands = client as unknown as QuotaCommands;
  }

  rateKey(digest: string): string {
    return `${this.prefix}{${digest}}:rate`;
  }

  creditKey(digest: string, periodId: string): string {
    return `${this.prefix}{${digest}}:credits:${periodId}`;
  }

  /**
   * Decisions that arrive in one event-loop turn are sent together, one script call per key
   * (setImmediate runs after the turn's I/O callbacks): the round trip is still one per
   * request, but its cost is shared. A burst on one key becomes one atomic call.
   */
  decide(q: QuotaQuery): Promise<QuotaDecision> {
    const period = periodWindow(q.period, q.nowMs);
    const id = `${q.digest}|${period.id}|${q.rps}|${q.credits}`;
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
        this.rateKey(q.digest),
        this.creditKey(q.digest, b.periodId),
        q.rps,
        RATE_WINDOW_MS,
        q.credits,
        Math.ceil(b.periodEndMs / 1000),
        ...b.costs,
      )
      .then(
        (reply) => {
          b.waiters.forEach((w, i) => {
            const [outcome = 0, position = 0, ttl = 0, balance = 0] = reply.slice(i * 4, i * 4 + 4);
            const result = OUTCOMES[outcome] ?? 'ok';
            const cost = b.costs[i] ?? 0;
            w.resolve({
              outcome: result,
              rateRemaining: Math.max(q.rps - position, 0),
              rateResetMs: ttl,
              credits: balance,
              billed: result === 'ok' ? cost : 0,
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
    await this.commands.egwQuotaRefund(this.creditKey(r.digest, r.periodId), r.amount);
  }

  async close(): Promise<void> {
    // The client is shared (cache tier); its owner closes it.
  }
}
