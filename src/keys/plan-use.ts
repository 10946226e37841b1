// Which plans the run-time keys and accounts are on that a configuration would take away. The
// admin API refuses to delete a plan still in use (409 PLAN_IN_USE, admin/service.ts deletePlan);
// a reload whose YAML drops such a plan is refused for the same reason (app/state.ts): its keys
// could no longer be served, and their clients would be refused for the operator's change.
import type { KeyRecord } from '../store/types.js';
import type { Account } from './objects.js';

export interface PlanInUse {
  readonly plan: string;
  /** Run-time keys on the plan, their own or their account's. */
  readonly keys: number;
  /** Accounts on the plan. */
  readonly accounts: number;
}

/**
 * The plans `records` and `accounts` are on that neither `configured` (a configuration's
 * `plans`) nor the run-time plans (`runtimePlans`) provide, by name, in name order.
 */
export function plansMissing(
  configured: Readonly<Record<string, unknown>>,
  runtimePlans: ReadonlyMap<string, unknown>,
  records: Iterable<KeyRecord>,
  accounts: ReadonlyMap<string, Account>,
): PlanInUse[] {
  const known = (name: string) => Object.hasOwn(configured, name) || runtimePlans.has(name);
  const use = new Map<string, { keys: number; accounts: number }>();
  const count = (plan: string, what: 'keys' | 'accounts') => {
    if (known(plan)) return;
    let u = use.get(plan);
    if (!u) use.set(plan, (u = { keys: 0, accounts: 0 }));
    u[what]++;
  };
  for (const a of accounts.values()) count(a.plan, 'accounts');
  for (const r of records) {
    const account = r.account === null ? undefined : accounts.get(r.account);
    // A key of an account takes the account's plan (keys/ring.ts dealOf); one whose account is
    // gone is refused whatever the configuration says, not for its plan.
    if (r.account !== null && account === undefined) continue;
    count(account ? account.plan : r.plan, 'keys');
  }
  return [...use].sort(([a], [b]) => (a < b ? -1 : 1)).map(([plan, u]) => ({ plan, ...u }));
}

/** A reload refused because it would take away plans still in use: the running configuration stays. */
export class PlansInUseError extends Error {
  constructor(readonly inUse: readonly PlanInUse[]) {
    super(
      inUse
        .map((u) => `plan ${u.plan} is removed but ${u.keys} key(s)${u.accounts > 0 ? ` and ${u.accounts} account(s)` : ''} use it`)
        .join('; '),
    );
    this.name = 'PlansInUseError';
  }
}
