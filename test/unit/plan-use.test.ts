// Which plans a configuration would take away from run-time keys and accounts (keys/plan-use.ts):
// what a reload is refused for (app/state.ts), as the admin API refuses deleting a plan in use.
import { describe, expect, it } from 'vitest';
import { plansMissing, PlansInUseError } from '../../src/keys/plan-use.js';
import type { Account } from '../../src/keys/objects.js';
import type { KeyRecord } from '../../src/store/types.js';

const key = (id: string, plan: string, account: string | null = null): KeyRecord =>
  ({ id, name: id, plan, account, digest: id }) as unknown as KeyRecord;
const account = (id: string, plan: string): Account => ({ id, name: id, plan, limits: null, meta: null, createdAt: 0 });

describe('plansMissing', () => {
  const accounts = new Map([['acc_a', account('acc_a', 'team')]]);
  const records = [key('k1', 'gold'), key('k2', 'gold'), key('k3', 'free'), key('k4', 'free', 'acc_a'), key('k5', 'gold', 'acc_gone')];

  it('names each plan the configuration lacks, with its keys (their own plan or their account’s) and accounts', () => {
    expect(plansMissing({ free: {} }, new Map(), records, accounts)).toEqual([
      { plan: 'gold', keys: 2, accounts: 0 },
      { plan: 'team', keys: 1, accounts: 1 },
    ]);
  });

  it('counts a plan made at run time as present, and nothing when every plan is there', () => {
    expect(plansMissing({ free: {}, gold: {} }, new Map([['team', {}]]), records, accounts)).toEqual([]);
  });

  it('says what is in the way in its message', () => {
    const err = new PlansInUseError(plansMissing({ free: {} }, new Map(), records, accounts));
    expect(err.message).toBe('plan gold is removed but 2 key(s) use it; plan team is removed but 1 key(s) and 1 account(s) use it');
  });
});
