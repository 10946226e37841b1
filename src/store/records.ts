// Records copied field by field: what a backend keeps is exactly a record's fields, whatever else
// the caller's object carries (a secret never reaches a store by construction), and a caller's
// later change to its object never reaches what a backend holds.
import type { KeyRecord, UsageCounts, UsageRow } from './types.js';

/** Usage counters by name, in the order backends list them. */
export const COUNTERS = ['requests', 'credits', 'cacheHits', 'refused', 'errors'] as const satisfies readonly (keyof UsageCounts)[];

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
  };
}

export function copyUsageRow(r: UsageRow): UsageRow {
  return {
    day: r.day,
    keyId: r.keyId,
    chain: r.chain,
    route: r.route,
    requests: r.requests,
    credits: r.credits,
    cacheHits: r.cacheHits,
    refused: r.refused,
    errors: r.errors,
  };
}
