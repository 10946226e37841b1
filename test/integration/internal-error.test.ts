// An error the pipeline did not expect (a bug) still gets the contract's answer: 500 with the
// gateway's own body, the request id, logged with its stack, counted, and the credits it took
// refunded; whether it is thrown at once or after a store answered.
import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import type { Period } from '../../src/quota/period.js';
import type { Balance, QuotaDecision, QuotaQuery, QuotaStore, Refund } from '../../src/quota/types.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, makeConfig, startGateway } from '../support/gateway.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();

/** A store whose decisions blow up when read, at once or in a promise. */
class BrokenStore implements QuotaStore {
  readonly kind = 'memory';
  private readonly inner = new MemoryQuotaStore();
  readonly refunds: Refund[] = [];
  constructor(private readonly later: boolean) {}
  decide(q: QuotaQuery): QuotaDecision | Promise<QuotaDecision> {
    const real = this.inner.decide(q);
    const broken = {
      ...real,
      get outcome(): never {
        throw new TypeError('a bug in the pipeline');
      },
    } as QuotaDecision;
    return this.later ? Promise.resolve(broken) : broken;
  }
  refund(r: Refund): Promise<void> {
    this.refunds.push(r);
    return this.inner.refund(r);
  }
  topUp(account: string, amount: number): Promise<number> {
    return this.inner.topUp(account, amount);
  }
  adjustTopUp(account: string, delta: number): Promise<{ before: number; after: number }> {
    return this.inner.adjustTopUp(account, delta);
  }
  setTopUp(account: string, value: number): Promise<{ before: number; after: number }> {
    return this.inner.setTopUp(account, value);
  }
  balance(account: string, period: Period, nowMs: number): Promise<Balance> {
    return this.inner.balance(account, period, nowMs);
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe.each([
  ['at once', false],
  ['after the store answered', true],
])('an unexpected error %s', (_when, later) => {
  it('is a 500 with the gateway body, logged, counted and refunded', async () => {
    const lines: string[] = [];
    const store = new BrokenStore(later);
    const gw = await startGateway(makeConfig([fixture().url], { log: { level: 'error', requests: false } }), {
      quotaStore: store,
      logStream: { write: (l: string) => void lines.push(l) },
    });
    try {
      const res = await gw.get(BALANCES, { headers: { 'x-request-id': 'bug-1' } });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ message: 'Internal error' });
      expect(res.headers.get('x-request-id')).toBe('bug-1');
      expect(lines.map((l) => JSON.parse(l) as { msg: string; reqId: string }).find((l) => l.msg === 'unhandled error')).toMatchObject({
        reqId: 'bug-1',
      });
      const metrics = parsePrometheus(await (await gw.ops('/metrics')).text());
      expect(valueOf(metrics, 'egw_requests_total', { status: '500', route: 'token-balances' })).toBe(1);
      expect(fixture().hits()).toBe(0);
      // The credits the decision took are all given back.
      await until(() => store.refunds.length > 0, 'the refund');
      expect(store.refunds).toHaveLength(1);
      const { account, periodId, amount } = store.refunds[0]!;
      expect(amount).toBeGreaterThan(0);
      const balance = await store.balance(account, 'daily', Date.now());
      if (balance.periodId === periodId) expect(balance.spent).toBe(0);
    } finally {
      await gw.close();
    }
  });
});
