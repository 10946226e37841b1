// Where the Redis quota store keeps an account, and for how long. Every key of an account shares
// the hash tag {<account>}, so one script call may touch all of them, on Redis Cluster too. The
// names are what running gateways have written: a change here is a migration.

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

/** The ttl a credit counter (and a period's reservations) gets when it has none: what is left of its period, plus the grace. */
export function creditKeyTtlMs(periodEndMs: number, nowMs: number): number {
  return Math.max(periodEndMs - nowMs, 1) + CREDIT_KEY_GRACE_MS;
}

/**
 * How long a decision call's record (what it billed, or that it was voided) and a refund's
 * marker are kept. The void or the refund sent again follows the call on the same connection
 * (Redis runs a connection's commands in order) or within a sweep (LEASE_SWEEP_MS) of Redis
 * answering again, so a minute is far more than needed; each record is a small string, one per
 * decision call that billed (with leases, a few per busy key and second).
 */
export const CALL_RECORD_MS = 60_000;
/**
 * How long a charge's marker is kept (outage.ts): a charge is sent again until Redis answers, so
 * its marker must outlive every resend; a day is far beyond any.
 */
export const CHARGE_MARKER_MS = 86_400_000;

const escapePart = (s: string) => s.replace(/[%|\r\n]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/**
 * A usage row's field in an account's usage credits of a day (QuotaKeys.usageCredits): the key's
 * id, the chain and the route, and the row's account (UsageRow.account) only when it has one (three
 * parts: none, as gateways before rows recorded accounts wrote them all), each with `%`, `|` and
 * line ends escaped, so that the parts split back apart and a call's record (redis-scripts.ts) can
 * list fields one a line.
 */
export function usageCreditField(keyId: string, chain: string, route: string, account = ''): string {
  const field = `${escapePart(keyId)}|${escapePart(chain)}|${escapePart(route)}`;
  return account === '' ? field : `${field}|${escapePart(account)}`;
}

/** The key's id, account, chain and route of a usage credits field; undefined for one this store did not write. */
export function parseUsageCreditField(field: string): { keyId: string; account: string; chain: string; route: string } | undefined {
  const parts = field.split('|');
  if (parts.length !== 3 && parts.length !== 4) return undefined;
  try {
    const [keyId = '', chain = '', route = '', account = ''] = parts.map(decodeURIComponent);
    return { keyId, account, chain, route };
  } catch {
    return undefined;
  }
}

/** The UTC hour of an instant as the hourly usage credits name it (QuotaKeys.usageHourCredits): `00` to `23`. */
export function usageHour(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(11, 13);
}

export class QuotaKeys {
  constructor(private readonly prefix: string) {}

  /**
   * A hash since the window is kept with its start instant; named apart from the plain counter
   * `:rate` that gateways before it wrote, so the two never meet as a WRONGTYPE during an upgrade.
   */
  rate(account: string): string {
    return `${this.prefix}{${account}}:window`;
  }

  /** Credits spent from the period's allowance. */
  credits(account: string, periodId: string): string {
    return `${this.prefix}{${account}}:credits:${periodId}`;
  }

  /** Bought credits: no period resets them, so the key never expires. */
  topup(account: string): string {
    return `${this.prefix}{${account}}:topup`;
  }

  /** What one decision call billed, or that it was voided (redis-scripts.ts, VOID_LUA). */
  call(account: string, callId: string): string {
    return `${this.prefix}{${account}}:call:${callId}`;
  }

  /** That a refund was applied: a refund sent again (its first reply lost) gives nothing more. */
  refund(account: string, refundId: string): string {
    return `${this.prefix}{${account}}:refund:${refundId}`;
  }

  /** That a charge of an outage was billed (outage.ts): a charge sent again bills nothing more. */
  charge(account: string, chargeId: string): string {
    return `${this.prefix}{${account}}:charge:${chargeId}`;
  }

  /** The pub/sub channel of lease recalls (recall.ts): one for every account. */
  recallChannel(): string {
    return `${this.prefix}quota:recall`;
  }

  /**
   * Credits billed to the account on a UTC day, by usage row (hash: usageCreditField -> credits):
   * written by the same script call that bills them, so that usage equals billing whatever
   * happens to a gateway process (usage-credits.ts reads them).
   */
  usageCredits(account: string, day: string): string {
    return `${this.prefix}{${account}}:usage:${day}`;
  }

  /**
   * The same credits per UTC hour of the day (hash: `<HH>|<usageCreditField>` -> credits), counted
   * by the same script calls as the day's, so that a day's hours sum to the day; kept
   * `usage.hourlyRetentionDays` after the day (usage-credits.ts reads them).
   */
  usageHourCredits(account: string, day: string): string {
    return `${this.prefix}{${account}}:usage-hours:${day}`;
  }

  /**
   * The accounts with usage credits on a UTC day (a set, in a slot of its own): how a report of
   * every key finds them. Each process adds an account before its first decision call of the day.
   */
  usageAccounts(day: string): string {
    return `${this.prefix}quota:usage-accounts:{${day}}`;
  }

  /** A SCAN pattern that finds every account's usage credits (usageCredits, usageHourCredits) and the usage accounts sets, among others. */
  usagePattern(): string {
    return `${this.prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*usage*`;
  }

  /** The day a key of the usage credits is of (and whether it holds hours); undefined for any other key. */
  usageDayOf(key: string): { day: string; hourly: boolean } | undefined {
    if (!key.startsWith(this.prefix)) return undefined;
    const rest = key.slice(this.prefix.length);
    const credits = /^\{[^}]*\}:usage(-hours)?:(\d{4}-\d{2}-\d{2})$/.exec(rest);
    if (credits) return { day: credits[2]!, hourly: credits[1] !== undefined };
    const accounts = /^quota:usage-accounts:\{(\d{4}-\d{2}-\d{2})\}$/.exec(rest);
    return accounts ? { day: accounts[1]!, hourly: false } : undefined;
  }

  /** Credits leases hold in a period, by lease. */
  reservations(account: string, periodId: string): string {
    return `${this.prefix}{${account}}:leases:${periodId}`;
  }
}
