// The outage book's own logic (src/quota/outage.ts): the local window at the plan's rps, the
// allowance (a share of the balance last seen, or of the plan's credits), settlement of what
// was served and what goes back, and charges that keep their id until the store took them.
// The charger here is this repository's own interface (outage.ts, Charger), not a client library.
import { describe, expect, it } from 'vitest';
import { OutageBook, type Charge, type Charger } from '../../src/quota/outage.js';

class Ledger implements Charger {
  readonly billed = new Map<string, Charge>();
  balances = new Map<string, number>();
  failing = false;
  sends = 0;
  charge(c: Charge): Promise<{ overdraft: number }> {
    this.sends++;
    if (this.failing) return Promise.reject(new Error('Command timed out'));
    this.billed.set(c.id, structuredClone(c));
    return Promise.resolve({ overdraft: 0 });
  }
  knownBalance(account: string): number | undefined {
    return this.balances.get(account);
  }
  total(): number {
    let sum = 0;
    for (const c of this.billed.values()) for (const r of c.rows) sum += r.credits;
    return sum;
  }
}

const T0 = Date.now();
const plan = { rps: 3, credits: 1_000, period: 'daily' as const };
const q = (nowMs: number, cost = 20, account = 'acct') => ({
  account,
  ...plan,
  cost,
  nowMs,
  keyId: 'key_1',
  usageAccount: '',
  chain: '1',
  route: 'blocks',
});
const row = (nowMs: number) => ({ nowMs, keyId: 'key_1', account: '', chain: '1', route: 'blocks' });

describe('the outage book', () => {
  it('serves the plan rps per window and refuses the rest, then opens a new window', () => {
    const book = new OutageBook(new Ledger(), 1, 'p');
    const outcomes = Array.from({ length: 5 }, () => book.decide(q(T0)).outcome);
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'rate_limited', 'rate_limited']);
    const limited = book.decide(q(T0 + 400));
    expect(limited).toMatchObject({ outcome: 'rate_limited', local: true, billed: 0 });
    expect(limited.rateResetMs).toBe(600);
    expect(book.decide(q(T0 + 1_000)).outcome).toBe('ok');
  });

  it('allows a share of the balance it last saw, or of the plan credits when it saw none', () => {
    const ledger = new Ledger();
    ledger.balances.set('seen', 200);
    const book = new OutageBook(ledger, 0.5, 'p');
    // 0.5 x 200 = 100: five requests of 20, one window each.
    const seen = Array.from({ length: 6 }, (_, i) => book.decide(q(T0 + i * 1_000, 20, 'seen')).outcome);
    expect(seen).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'out_of_credits']);
    // 0.5 x 1000 = 500 for an account never seen.
    let served = 0;
    for (let i = 0; i < 40; i++) if (book.decide(q(T0 + i * 1_000, 20, 'unseen')).outcome === 'ok') served += 20;
    expect(served).toBe(500);
    // A share of 0 serves nothing.
    expect(new OutageBook(ledger, 0, 'p').decide(q(T0)).outcome).toBe('out_of_credits');
  });

  it('owes what was answered billable and gives the rest back to the allowance', () => {
    const book = new OutageBook(new Ledger(), 0.04, 'p'); // 40 credits
    const a = book.decide(q(T0));
    const b = book.decide(q(T0));
    expect(book.decide(q(T0)).outcome).toBe('out_of_credits');
    book.settle({ account: 'acct', ...plan }, a.billed, 0, row(T0)); // a 5xx: nothing owed
    book.settle({ account: 'acct', ...plan }, b.billed, 20, row(T0));
    expect(book.owed()).toBe(20);
    expect(book.decide(q(T0 + 1_000)).outcome).toBe('ok');
    expect(book.decide(q(T0 + 1_000)).outcome).toBe('out_of_credits');
  });

  it('sends a charge under the same id until the store takes it, once', async () => {
    const ledger = new Ledger();
    const book = new OutageBook(ledger, 1, 'p');
    for (let i = 0; i < 3; i++) book.settle({ account: 'acct', ...plan }, book.decide(q(T0)).billed, 20, row(T0));
    ledger.failing = true;
    expect(await book.flush()).toMatchObject({ done: false, billed: 0 });
    expect(await book.flush()).toMatchObject({ done: false, billed: 0 });
    // Served meanwhile: a charge of its own, the failed one keeps its id.
    book.settle({ account: 'acct', ...plan }, book.decide(q(T0 + 1_000)).billed, 20, row(T0 + 1_000));
    ledger.failing = false;
    expect(await book.flush()).toEqual({ done: true, billed: 80, overdraft: 0 });
    expect(ledger.billed.size).toBe(2);
    expect(ledger.total()).toBe(80);
    expect([...ledger.billed.values()].map((c) => c.rows)).toEqual([
      [{ keyId: 'key_1', usageAccount: '', chain: '1', route: 'blocks', credits: 60 }],
      [{ keyId: 'key_1', usageAccount: '', chain: '1', route: 'blocks', credits: 20 }],
    ]);
    expect(book.owed()).toBe(0);
    expect(await book.flush()).toEqual({ done: true, billed: 0, overdraft: 0 });
    expect(ledger.billed.size).toBe(2);
  });

  it('ends allowances once the store is back, except for answers still open', () => {
    const ledger = new Ledger();
    const book = new OutageBook(ledger, 0.02, 'p'); // 20 credits
    const open = book.decide(q(T0, 20, 'busy'));
    book.settle({ account: 'done', ...plan }, book.decide(q(T0, 20, 'done')).billed, 20, row(T0));
    book.recovered();
    // 'done' starts over with a new allowance; 'busy' keeps its (spent) one until it settles.
    expect(book.decide(q(T0 + 1_000, 20, 'done')).outcome).toBe('ok');
    expect(book.decide(q(T0 + 1_000, 20, 'busy')).outcome).toBe('out_of_credits');
    book.settle({ account: 'busy', ...plan }, open.billed, 20, row(T0));
    expect(book.busy()).toBe(true);
  });
});
