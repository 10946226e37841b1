// Records copied field by field: what a backend keeps is exactly a record's fields, whatever else
// the caller's object carries (a secret never reaches a store by construction), and a caller's
// later change to its object never reaches what a backend holds.
import { dayStartMs, hourOfDay } from './day.js';
import type { AuditEntry, KeyLimits, KeyRecord, KeyTerms, StoredObject, UsageCounts, UsageRow } from './types.js';

/**
 * Usage counters by name, in the order backends list them. Redis keeps a row's counts in this
 * order in one value (store/redis.ts): a new counter is appended, never put between two others.
 */
export const COUNTERS = [
  'requests',
  'credits',
  'cacheHits',
  'refused',
  'errors',
  'rateLimited',
  'outOfCredits',
  'forbidden',
  'clientErrors',
] as const satisfies readonly (keyof UsageCounts)[];

export function copyKeyRecord(r: KeyRecord): KeyRecord {
  return {
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
    ...copyTerms(r),
  };
}

const list = (v: readonly string[] | null | undefined) => (v === null || v === undefined ? null : [...v]);

function copyLimits(l: KeyLimits | null | undefined): KeyLimits | null {
  if (l === null || l === undefined) return null;
  return { rps: l.rps ?? null, credits: l.credits ?? null, period: l.period ?? null, costs: l.costs ? { ...l.costs } : null };
}

/**
 * A key's terms, copied; a record written before they existed (a Redis value or JSON column
 * without them) reads as having none.
 */
export function copyTerms(r: Partial<KeyTerms>): KeyTerms {
  return {
    limits: copyLimits(r.limits),
    routes: list(r.routes),
    ips: list(r.ips),
    origins: list(r.origins),
    meta: r.meta === null || r.meta === undefined ? null : structuredClone(r.meta),
    account: r.account ?? null,
  };
}

/** A key without terms of its own: its plan's limits, every route, network and origin. */
export const NO_TERMS: Readonly<KeyTerms> = Object.freeze({
  limits: null,
  routes: null,
  ips: null,
  origins: null,
  meta: null,
  account: null,
});

/** The terms as one JSON value for a SQL column, or null when the key has none. */
export function termsJson(r: KeyTerms): string | null {
  const t = copyTerms(r);
  return Object.values(t).every((v) => v === null) ? null : JSON.stringify(t);
}

/** The terms a SQL column holds (termsJson), or none. */
export function termsFromJson(json: string | null): KeyTerms {
  return copyTerms(json === null ? {} : (JSON.parse(json) as Partial<KeyTerms>));
}

export function copyAuditEntry(e: AuditEntry): AuditEntry {
  return { at: e.at, action: e.action, actor: e.actor ?? null, keyId: e.keyId, before: e.before, after: e.after };
}

/** Every usage counter at 0. */
export function zeroCounts(): UsageCounts {
  return Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Record<(typeof COUNTERS)[number], number>;
}

/**
 * A usage row's counters and identity, copied; a row handed without an account (a delta of an
 * earlier gateway's, a test's) has none (''). An hour only where the row has one.
 */
export function copyUsageRow(r: UsageRow): UsageRow {
  const copy: UsageRow = {
    day: r.day,
    keyId: r.keyId,
    account: r.account ?? '',
    chain: r.chain,
    route: r.route,
    requests: r.requests,
    credits: r.credits,
    cacheHits: r.cacheHits,
    refused: r.refused,
    rateLimited: r.rateLimited ?? 0,
    outOfCredits: r.outOfCredits ?? 0,
    forbidden: r.forbidden ?? 0,
    clientErrors: r.clientErrors ?? 0,
    errors: r.errors,
  };
  if (r.hour !== undefined) copy.hour = r.hour;
  return copy;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The order every backend lists usage rows in: day, hour (of hourly rows), key, chain, route, account. */
export function compareUsageRows(a: UsageRow, b: UsageRow): number {
  return (
    compare(a.day, b.day) ||
    compare(a.hour ?? '', b.hour ?? '') ||
    compare(a.keyId, b.keyId) ||
    compare(a.chain, b.chain) ||
    compare(a.route, b.route) ||
    compare(a.account ?? '', b.account ?? '')
  );
}

/** A usage row's identity as one string: its day or hour, key, account, chain and route. */
export function usageRowId(r: UsageRow): string {
  return JSON.stringify([r.hour ?? r.day, r.keyId, r.account ?? '', r.chain, r.route]);
}

/**
 * A row handed to addUsage, checked before anything is written: its day a real `YYYY-MM-DD`, its
 * hour (if any) one of that day's; a RangeError otherwise. Returns the hour's number, or undefined.
 */
export function checkUsageDelta(r: UsageRow): number | undefined {
  if (dayStartMs(r.day) === undefined) throw new RangeError(`not a day (YYYY-MM-DD): ${r.day}`);
  if (r.hour === undefined) return undefined;
  const h = hourOfDay(r.hour, r.day);
  if (h === undefined) throw new RangeError(`not an hour (YYYY-MM-DDTHH:00:00Z) of ${r.day}: ${r.hour}`);
  return h;
}

export function copyObject(o: StoredObject): StoredObject {
  return { kind: o.kind, id: o.id, value: structuredClone(o.value) };
}
