// Usage credits with Redis: the credits each usage row was billed, counted by the same script
// call that bills them (redis-scripts.ts: a decision billing in Redis, a lease's settlement, a
// refund, a void), per account and UTC day (redis-keys.ts, usageCredits). Usage rows written by
// the usage recorder (requests, cache hits, refusals, errors) live in the records store and may
// lose the last second to a crash; credits counted here cannot differ from what was billed, since
// one atomic script changes both. A lease's spending counts when it is billed: a lease a crashed
// process never settled bills nothing and counts nothing. The admin API's usage report adds these
// credits to the records store's rows (admin/service.ts).
import type { RedisClient } from '../redis/client.js';
import { DAY_MS, dayStartMs, utcDay } from '../store/day.js';
import { zeroCounts } from '../store/records.js';
import type { UsageQuery, UsageRow } from '../store/types.js';
import { parseUsageCreditField, type QuotaKeys } from './redis-keys.js';

/** Hashes read at once (one pipelined HGETALL each): an account's day is a few fields per route. */
const STEP = 100;

/**
 * The credits billed per usage row on the days of `q`, rows of no credits left out. `accounts`
 * names the accounts of `q.keyIds` when every one is known (keys/ring.ts); otherwise every
 * account with usage credits on a day is read (the day's usage accounts).
 */
export async function listUsageCredits(
  client: RedisClient,
  keys: QuotaKeys,
  q: UsageQuery,
  accounts?: readonly string[],
): Promise<UsageRow[]> {
  const from = dayStartMs(q.from);
  const to = dayStartMs(q.to);
  if (from === undefined || to === undefined) return [];
  const rows: UsageRow[] = [];
  for (let at = from; at <= to; at += DAY_MS) {
    const day = utcDay(at);
    const ofDay = accounts ?? (await members(client, keys.usageAccounts(day)));
    for (let i = 0; i < ofDay.length; i += STEP) {
      const step = ofDay.slice(i, i + STEP);
      const hashes = await Promise.all(step.map((account) => client.hgetall(keys.usageCredits(account, day))));
      for (const hash of hashes) {
        for (const [field, value] of Object.entries(hash)) {
          const row = parseUsageCreditField(field);
          const credits = Number(value);
          if (row === undefined || !Number.isSafeInteger(credits) || credits === 0) continue;
          if (q.keyIds !== undefined && !q.keyIds.has(row.keyId)) continue;
          if (q.chain !== undefined && q.chain !== row.chain) continue;
          if (q.route !== undefined && q.route !== row.route) continue;
          rows.push({ day, ...row, ...zeroCounts(), credits });
        }
      }
    }
  }
  return rows;
}

/** A set's members, with SSCAN (never one reply of a whole large set). */
async function members(client: RedisClient, key: string): Promise<string[]> {
  const out = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await client.sscan(key, cursor, 'COUNT', 1000);
    for (const m of batch) out.add(m);
    cursor = next;
  } while (cursor !== '0');
  return [...out].sort();
}

/**
 * The rows of the records store with the credits counted in Redis added, in the records store's
 * order (day, key, chain, route). A row only Redis has (its requests lost to a crash) is added with
 * its credits; only then is the whole sorted again.
 */
export function addUsageCredits(rows: readonly UsageRow[], credits: readonly UsageRow[]): UsageRow[] {
  if (credits.length === 0) return [...rows];
  const id = (r: UsageRow) => `${r.day}\n${r.keyId}\n${r.chain}\n${r.route}`;
  const out = rows.map((r) => ({ ...r }));
  const byId = new Map<string, UsageRow>();
  for (const r of out) byId.set(id(r), r);
  let added = false;
  for (const c of credits) {
    const r = byId.get(id(c));
    if (r !== undefined) {
      r.credits += c.credits;
      continue;
    }
    const row = { ...c };
    byId.set(id(c), row);
    out.push(row);
    added = true;
  }
  if (!added) return out;
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return out.sort((a, b) => cmp(a.day, b.day) || cmp(a.keyId, b.keyId) || cmp(a.chain, b.chain) || cmp(a.route, b.route));
}
