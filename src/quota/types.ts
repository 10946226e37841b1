// One interface for the quota decision, with an in-process and a Redis implementation that the
// same contract suite runs against (test/contracts/quota-store.test.ts).
import type { Period } from './period.js';

/** The rate-limit window: requests per second are counted in fixed one-second windows. */
export const RATE_WINDOW_MS = 1_000;

export interface QuotaQuery {
  /** sha256 of the API key: the identity every counter is kept under. */
  digest: string;
  /** Requests allowed per window (the plan's rps). */
  rps: number;
  /** Credits per period (the plan's credits). */
  credits: number;
  period: Period;
  /** Credits this request costs; 0 takes a rate-limit decision only (refused before billing). */
  cost: number;
  /** Wall clock for the credit period (unix ms). */
  nowMs: number;
}

export type QuotaOutcome = 'ok' | 'rate_limited' | 'out_of_credits';

export interface QuotaDecision {
  outcome: QuotaOutcome;
  /** Requests left in the current window. */
  rateRemaining: number;
  /** Milliseconds until the current window ends. */
  rateResetMs: number;
  /** Balance after this request was billed, or the balance left when refused. */
  credits: number;
  /** Credits actually taken (0 unless outcome is ok and cost > 0). */
  billed: number;
  /** The period the credits were taken from, for a refund. */
  periodId: string;
}

export interface Refund {
  digest: string;
  periodId: string;
  amount: number;
}

export interface QuotaStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Takes the rate-limit decision and, if the request is within its rate and costs something,
   * the credit decision, atomically: credits are taken only if enough remain. An in-process
   * store answers at once; a remote one answers with a promise, which rejects when the store
   * cannot answer (the caller applies `redis.onError`).
   */
  decide(query: QuotaQuery): QuotaDecision | Promise<QuotaDecision>;
  /** Gives credits back (a 5xx answer is not paid for). */
  refund(refund: Refund): Promise<void>;
  close(): Promise<void>;
}
