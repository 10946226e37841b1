// Redis quota store: the rate window and the credit balance of a key are decided by one Lua
// script, registered once (EVALSHA), so a decision is one atomic round trip shared by every
// gateway process. The keys of one decision share the hash tag {<digest>}, so the script
// also runs on Redis Cluster.
//
// Why not rate-limiter-flexible's RateLimiterRedis here: its script takes one key and fixed
// arguments, so the credit decision would be a second round trip, or a non-atomic one. The
// window logic below is its incr-with-ttl script (fixed window, expiry set once on creation),
// with the credit step after it. The in-process store uses rate-limiter-flexible itself.
import type { RedisClient } from '../redis/client.js';
import { periodWindow } from './period.js';
import { RATE_WINDOW_MS, type QuotaDecision, type QuotaOutcome, type QuotaQuery, type QuotaStore, type Refund } from './types.js';

// KEYS[1] window counter, KEYS[2] credits spent in the period.
// ARGV: rps, window ms, cost, plan credits, period end (unix seconds).
// Returns {outcome (0 ok, 1 rate limited, 2 out of credits), consumed, window ttl ms, balance}.
const DECIDE_LUA = `
redis.call('set', KEYS[1], 0, 'PX', ARGV[2], 'NX')
local consumed = redis.call('incr', KEYS[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
local balance = tonumber(ARGV[4]) - tonumber(redis.call('get', KEYS[2]) or '0')
if consumed > tonumber(ARGV[1]) then return {1, consumed, ttl, balance} end
local cost = tonumber(ARGV[3])
if cost > 0 then
  if balance < cost then return {2, consumed, ttl, balance} end
  redis.call('incrby', KEYS[2], cost)
  if redis.call('ttl', KEYS[2]) < 0 then redis.call('expireat', KEYS[2], ARGV[5]) end
  balance = balance - cost
end
return {0, consumed, ttl, balance}
`;

// KEYS[1] credits spent in the period; ARGV[1] amount. A period that has expired is left alone.
const REFUND_LUA = `
if redis.call('exists', KEYS[1]) == 1 then return redis.call('decrby', KEYS[1], ARGV[1]) end
return 0
`;

type DecideReply = [number, number, number, number];

interface QuotaCommands {
  egwQuotaDecide(rateKey: string, creditKey: string, ...args: (string | number)[]): Promise<DecideReply>;
  egwQuotaRefund(creditKey: string, amount: number): Promise<number>;
}

const OUTCOMES: readonly QuotaOutcome[] = ['ok', 'rate_limited', 'out_of_credits'];

export class RedisQuotaStore implements QuotaStore {
  readonly kind = 'redis';
  private readonly commands: QuotaCommands;

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

  async decide(q: QuotaQuery): Promise<QuotaDecision> {
    const period = periodWindow(q.period, q.nowMs);
    const [outcome, consumed, ttl, balance] = await this.commands.egwQuotaDecide(
      this.rateKey(q.digest),
      this.creditKey(q.digest, period.id),
      q.rps,
      RATE_WINDOW_MS,
      q.cost,
      q.credits,
      Math.ceil(period.endMs / 1000),
    );
    const result = OUTCOMES[outcome] ?? 'ok';
    return {
      outcome: result,
      rateRemaining: Math.max(q.rps - consumed, 0),
      rateResetMs: ttl,
      credits: balance,
      billed: result === 'ok' ? q.cost : 0,
      periodId: period.id,
    };
  }

  async refund(r: Refund): Promise<void> {
    await this.commands.egwQuotaRefund(this.creditKey(r.digest, r.periodId), r.amount);
  }

  async close(): Promise<void> {
    // The client is shared (cache tier); its owner closes it.
  }
}
