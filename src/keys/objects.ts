// Plans and accounts made at run time (issue 25, items 1 and 2), as the key ring uses them: read
// from the objects the key store keeps (store/types.ts StoredObject) and written back as such.
// A value that does not have the shape is skipped (and said so by the caller), never guessed at.
import type { PlanConfig } from '../config/schema.js';
import type { KeyLimits, StoredObject } from '../store/types.js';
import { copyTerms } from '../store/records.js';

/** A plan made through the admin API, beside the configuration's (which it may not shadow). */
export interface RuntimePlan extends PlanConfig {
  name: string;
  createdAt: number;
  updatedAt: number;
}

/** A customer (Unkey calls it an identity): keys that share its plan, limits, credits and rate. */
export interface Account {
  /** `acc_` and 16 base-32 characters. */
  id: string;
  name: string;
  plan: string;
  limits: KeyLimits | null;
  meta: Record<string, unknown> | null;
  createdAt: number;
}

const isInt = (v: unknown, min: number): v is number => Number.isSafeInteger(v) && (v as number) >= min;
const isPeriod = (v: unknown): v is PlanConfig['period'] => v === 'daily' || v === 'monthly';

export function planFromObject(o: StoredObject): RuntimePlan | undefined {
  const v = o.value;
  if (!isInt(v.rps, 1) || !isInt(v.credits, 0) || !isPeriod(v.period) || !isInt(v.createdAt, 0)) return undefined;
  return {
    name: o.id,
    rps: v.rps,
    credits: v.credits,
    period: v.period,
    createdAt: v.createdAt,
    updatedAt: isInt(v.updatedAt, 0) ? v.updatedAt : v.createdAt,
  };
}

export function planObject(p: RuntimePlan): StoredObject {
  return {
    kind: 'plan',
    id: p.name,
    value: { rps: p.rps, credits: p.credits, period: p.period, createdAt: p.createdAt, updatedAt: p.updatedAt },
  };
}

export function accountFromObject(o: StoredObject): Account | undefined {
  const v = o.value;
  if (typeof v.name !== 'string' || typeof v.plan !== 'string' || !isInt(v.createdAt, 0)) return undefined;
  const terms = copyTerms({ limits: v.limits as KeyLimits | null, meta: v.meta as Record<string, unknown> | null });
  return { id: o.id, name: v.name, plan: v.plan, limits: terms.limits, meta: terms.meta, createdAt: v.createdAt };
}

export function accountObject(a: Account): StoredObject {
  return { kind: 'account', id: a.id, value: { name: a.name, plan: a.plan, limits: a.limits, meta: a.meta, createdAt: a.createdAt } };
}
