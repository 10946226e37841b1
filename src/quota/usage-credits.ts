// Usage credits with Redis: the credits each usage row was billed, counted by the same script
// call that bills them (redis-scripts.ts: a decision billing in Redis, a lease's settlement, a
// refund, a void), per account and UTC day (redis-keys.ts, usageCredits) and per account and UTC
// hour (usageHourCredits), in the same call, so that a day's hours always sum to the day. Usage
// rows written by the usage recorder (requests, cache hits, refusals, errors) live in the records
// store and may lose the last second to a crash; credits counted here cannot differ from what was
// billed, since one atomic script changes both. A lease's spending counts when it is billed: a lease a crashed
// process never settled bills nothing and counts nothing. The admin API's usage report adds these
// credits to the records store's rows (admin/service.ts).
import { Cluster } from 'ioredis';
import type { RedisClient } from '../redis/client.js';
import { DAY_MS, dayStartMs, hourName, utcDay } from '../store/day.js';
import { compareUsageRows, usageRowId, zeroCounts } from '../store/records.js';
import type { UsageQuery, UsageRow } from '../store/types.js';
import { parseUsageCreditField, type QuotaKeys } from './redis-keys.js';

/** Hashes read at once (one pipelined HGETALL each): an account's day is a few fields per route (per route and hour, hourly). */
const STEP = 100;

/**
 * The credits billed per usage row on the days of `q` (daily rows, or hourly rows for
 * `granularity: 'hour'`), rows of no credits left out. `accounts` names the quota accounts (the
 * ledgers: keys/ring.ts ApiKey.account) to read when every one is known; otherwise every account
 * with usage credits on a day is read (the day's usage accounts).
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
  const hourly = q.granularity === 'hour';
  const rows: UsageRow[] = [];
  for (let at = from; at <= to; at += DAY_MS) {
    const day = utcDay(at);
    const ofDay = accounts ?? (await members(client, keys.usageAccounts(day)));
    for (let i = 0; i < ofDay.length; i += STEP) {
      const step = ofDay.slice(i, i + STEP);
      const hashes = await Promise.all(
        step.map((account) => client.hgetall(hourly ? keys.usageHourCredits(account, day) : keys.usageCredits(account, day))),
      );
      for (const hash of hashes) {
        for (const [field, value] of Object.entries(hash)) {
          // An hourly field is `<HH>|` and the day's field.
          const h = hourly ? (/^\d\d\|/.test(field) ? Number(field.slice(0, 2)) : 24) : undefined;
          if (h !== undefined && h > 23) continue;
          const row = parseUsageCreditField(h === undefined ? field : field.slice(3));
          const credits = Number(value);
          if (row === undefined || !Number.isSafeInteger(credits) || credits === 0) continue;
          if (q.keyIds !== undefined && !q.keyIds.has(row.keyId)) continue;
          if (q.accounts !== undefined && !q.accounts.has(row.account)) continue;
          if (q.chain !== undefined && q.chain !== row.chain) continue;
          if (q.route !== undefined && q.route !== row.route) continue;
          const out: UsageRow = { day, ...row, ...zeroCounts(), credits };
          if (h !== undefined) out.hour = hourName(day, h);
          rows.push(out);
        }
      }
    }
  }
  return rows;
}

/** Keys SCANned per step, and UNLINKed per step, when pruning. */
const PRUNE_STEP = 1_000;

/**
 * Forgets the usage credits (and the usage accounts sets) of days before `beforeDay`, and the
 * hourly credits of days before `hoursBeforeDay`, as the records store prunes its rows
 * (app/server.ts): their ttl removes them then too, as the clock that set it saw it, and this holds
 * the report to the retention whatever that clock did or the configuration became. SCAN on every
 * master of a cluster, page by page; each key UNLINKed on its own (the accounts' keys live in
 * slots of their own), one page's at a time.
 */
export async function pruneUsageCredits(client: RedisClient, keys: QuotaKeys, beforeDay: string, hoursBeforeDay: string): Promise<void> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', keys.usagePattern(), 'COUNT', PRUNE_STEP);
      cursor = next;
      const old = found.filter((key) => {
        const of = keys.usageDayOf(key);
        return of !== undefined && dayStartMs(of.day) !== undefined && of.day < (of.hourly ? hoursBeforeDay : beforeDay);
      });
      await Promise.all(old.map((key) => client.unlink(key)));
    } while (cursor !== '0');
  }
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
 * order (store/records.ts, compareUsageRows). A row only Redis has (its requests lost to a crash)
 * is added with its credits; only then is the whole sorted again.
 */
export function addUsageCredits(rows: readonly UsageRow[], credits: readonly UsageRow[]): UsageRow[] {
  if (credits.length === 0) return [...rows];
  const out = rows.map((r) => ({ ...r }));
  const byId = new Map<string, UsageRow>();
  for (const r of out) byId.set(usageRowId(r), r);
  let added = false;
  for (const c of credits) {
    const id = usageRowId(c);
    const r = byId.get(id);
    if (r !== undefined) {
      r.credits += c.credits;
      continue;
    }
    const row = { ...c };
    byId.set(id, row);
    out.push(row);
    added = true;
  }
  if (!added) return out;
  return out.sort(compareUsageRows);
}
