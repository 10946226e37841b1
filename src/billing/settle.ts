// The one place a decision's credits are settled once its answer is out, for every protocol: a
// request's answer (request/finish.ts) and a JSON-RPC batch's calls (request/rpc.ts, which sums
// what its calls cost) both end here. What was not charged (rule.ts) goes back: to the store's
// buckets it came from (a refund), or to the outage allowance when the decision was taken in
// process while the store was away (quota/outage.ts); what was charged is counted in the spend
// metric and told to the credit alerts.
import type { ApiKey } from '../keys/ring.js';
import type { QuotaStep } from '../quota/step.js';
import type { QuotaDecision, UsageRowRef } from '../quota/types.js';

/** Where a settlement writes: the quota step, the spend metric and the credit alerts. */
export interface Settling {
  readonly quota: Pick<QuotaStep, 'refund' | 'settleLocal'>;
  readonly metrics: { spent(plan: string, key: string, credits: number): void };
  readonly alerts?: { decided(key: ApiKey, d: QuotaDecision, status: number, nowMs: number): void } | undefined;
}

/**
 * Settles decision `d` (which billed `d.billed`) once `charged` of it is owed: the rest is given
 * back, bought credits first (they were spent last: quota/types.ts), counted against usage row
 * `usage`. `status` is the answer's, for the alerts (200 for a JSON-RPC batch; a 402 tells them
 * the key ran out). Runs once per decision, refusals included.
 */
export function settle(
  to: Settling,
  key: ApiKey,
  d: QuotaDecision,
  charged: number,
  status: number,
  nowMs: number,
  usage: UsageRowRef | undefined,
): void {
  if (d.local) {
    if (d.billed > 0) to.quota.settleLocal(key, d, charged, usage);
  } else if (charged < d.billed) {
    const back = d.billed - charged;
    to.quota.refund({ account: key.account, periodId: d.periodId, amount: back, fromTopup: Math.min(back, d.fromTopup), usage });
  }
  if (charged > 0) to.metrics.spent(key.planName, key.name, charged);
  // A decision taken in process says nothing of the shared balance the alerts watch.
  if (!d.local) to.alerts?.decided(key, charged === d.billed ? d : { ...d, billed: charged }, status, nowMs);
}
