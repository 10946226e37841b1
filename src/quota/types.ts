// One interface for the quota decision, with an in-process and a Redis implementation that the
// same contract suite runs against (test/contracts/quota-store.test.ts).
//
// What is kept per account is what it *spent* in the current period, not what it has left: a
// plan change keeps the spend, and the new plan's allowance applies from the change on. Bought
// credits (top-ups) are a balance of their own that no period resets, spent after the period's
// allowance. The balance shown to clients is both together.
import type { UsageQuery, UsageRow } from '../store/types.js';
import type { Period } from './period.js';

export interface QuotaQuery {
  /**
   * The identity every counter is kept under: a configured key's sha256 digest, a run-time key's
   * id (which a new secret keeps: keys/ring.ts).
   */
  account: string;
  /** Requests allowed per window (the plan's rps). */
  rps: number;
  /** Credits per period (the plan's credits). */
  credits: number;
  period: Period;
  /** Credits this request costs; 0 takes a rate-limit decision only (refused before billing). */
  cost: number;
  /**
   * The decision's clock (unix ms): the rate window and the credit period are both read from
   * it, never from a store's own clock.
   */
  nowMs: number;
  /**
   * The usage row the credits count in (the key's id, the chain, the route), for a store that
   * counts them when it bills them (memory.ts, joined to the usage recorder); others ignore them.
   */
  keyId?: string | undefined;
  /** The usage row's account (UsageRow.account: the key's `acc_...`, '' for none); not `account` above, the ledger's. */
  usageAccount?: string | undefined;
  chain?: string | undefined;
  route?: string | undefined;
}

/** The usage row a decision's credits were counted in, at the decision's instant (QuotaQuery). */
export interface UsageRowRef {
  nowMs: number;
  keyId: string;
  /** The row's account (UsageRow.account), '' for none: not the ledger's (Refund.account). */
  account: string;
  chain: string;
  route: string;
}

export type QuotaOutcome = 'ok' | 'rate_limited' | 'out_of_credits';

export interface QuotaDecision {
  outcome: QuotaOutcome;
  /** Requests left in the current window. */
  rateRemaining: number;
  /** Milliseconds until the current window ends. */
  rateResetMs: number;
  /** Balance after this request was billed (the period's allowance left, plus bought credits), or the balance left when refused. */
  credits: number;
  /** Credits actually taken (0 unless outcome is ok and cost > 0). */
  billed: number;
  /** Of `billed`, what came from bought credits (the period's allowance is spent first). */
  fromTopup: number;
  /** The period the credits were taken from, for a refund. */
  periodId: string;
  /**
   * Decided in this process while the store was away (outage.ts): its credits are owed to the
   * store, settled by QuotaStep.settleLocal, never refunded; the quota headers read -1.
   */
  local?: true;
}

/** Gives back what a decision took, to the buckets it came from. */
export interface Refund {
  account: string;
  periodId: string;
  amount: number;
  /** Of `amount`, what goes back to bought credits. */
  fromTopup: number;
  /** The usage row the decision counted its credits in, taken off it as well (QuotaQuery.keyId). */
  usage?: UsageRowRef | undefined;
}

/** An account's standing in the period `nowMs` falls in. */
export interface Balance {
  /** Credits spent from the period's allowance. */
  spent: number;
  /** Bought credits left. */
  topup: number;
  periodId: string;
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
  /** Adds bought credits; resolves with the account's bought credits left afterwards. */
  topUp(account: string, amount: number): Promise<number>;
  /**
   * Changes bought credits by `delta` (may be negative) atomically; refuses (nothing changed) when
   * the result would be below zero, with a TopUpBelowZero. `before` and `after` are the bought
   * credits the change acted on: with Redis, those no process's lease holds (redis.ts, adjustTopUp).
   * Both stores implement it; optional only so that test doubles of this interface need not.
   */
  adjustTopUp(account: string, delta: number): Promise<{ before: number; after: number }>;
  /** Sets bought credits to `value` (>= 0) atomically (with Redis, those no lease holds: redis.ts, setTopUp). */
  setTopUp(account: string, value: number): Promise<{ before: number; after: number }>;
  balance(account: string, period: Period, nowMs: number): Promise<Balance>;
  /** Reads what the store keeps across restarts, before the first decision (memory.ts's ledgers; nothing for Redis). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A store that counts the credits it bills per usage row apart from the usage rows (redis.ts:
 * usage-credits.ts), chosen at wiring (app/resources.ts): a usage report adds them to the rows.
 */
export interface SeparateUsageCredits {
  /** The credits billed per usage row; `accounts`: the accounts of `q.keyIds`, when all are known. */
  usageCredits(q: UsageQuery, accounts?: readonly string[]): Promise<UsageRow[]>;
  /** Forgets those of days before `beforeDay`, and the hourly ones of days before `hoursBeforeDay`, as the records store prunes its rows. */
  pruneUsageCredits(beforeDay: string, hoursBeforeDay: string): Promise<void>;
  /** Settles what this process decided locally and has not billed yet (leases), before a usage report. */
  settleLeases(): Promise<void>;
}

/** The balance a client sees: the allowance left (never below 0: a plan may shrink) and bought credits. */
export function remaining(credits: number, b: Pick<Balance, 'spent' | 'topup'>): number {
  return Math.max(credits - b.spent, 0) + b.topup;
}

/** A change of bought credits refused because it would leave them below zero: nothing was changed. */
export class TopUpBelowZero extends Error {
  override readonly name = 'TopUpBelowZero';
  constructor(
    /** Bought credits the account has left now, that a correction may take away. */
    readonly available: number,
    /** The change asked for. */
    readonly delta: number,
  ) {
    super(`bought credits cannot go below zero: ${available} left, change of ${delta} refused`);
  }
}

/** Refuses a change of bought credits that is not a whole number of credits (Redis counts them with INCRBY). */
export function checkTopUpDelta(delta: number): void {
  if (!Number.isSafeInteger(delta)) throw new RangeError(`a change of bought credits must be a whole number, not ${delta}`);
}

/** Refuses a value of bought credits that is not a whole number of at least 0. */
export function checkTopUpValue(value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`bought credits must be a whole number of at least 0, not ${value}`);
}
