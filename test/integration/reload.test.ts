// Reload while requests are in flight, in process: a changed or removed chain's pool stays open
// for the requests that already chose it.
import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import type { Period } from '../../src/quota/period.js';
import type { Balance, QuotaDecision, QuotaQuery, QuotaStore, Refund } from '../../src/quota/types.js';
import { startFixtureExplorer } from '../../fixture/explorer.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, makeConfig, startGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

/** The in-process store, answering only when the test opens the gate, like a Redis far away. */
class GatedStore implements QuotaStore {
  readonly kind = 'memory';
  private readonly inner = new MemoryQuotaStore();
  waiting = 0;
  private opened!: () => void;
  private readonly gate = new Promise<void>((r) => (this.opened = r));
  open(): void {
    this.opened();
  }
  decide(q: QuotaQuery): Promise<QuotaDecision> {
    this.waiting++;
    return this.gate.then(() => this.inner.decide(q));
  }
  refund(r: Refund): Promise<void> {
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
    return this.inner.start();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const fixture = useFixtureExplorer();

describe('reload with requests in flight', () => {
  it('a request that started before a chain changed still reaches its upstream', async () => {
    const config = makeConfig([fixture().url]);
    const moved = await startFixtureExplorer();
    const store = new GatedStore();
    const gw = await startGateway(config, { quotaStore: store });
    try {
      const inflight = gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`);
      await until(() => store.waiting === 1, 'the request to wait on its quota decision');
      // The chain moves to another explorer while the request waits.
      const before = fixture().hits();
      const changed = makeConfig([moved.url]);
      expect(gw.app.gateway.reload(changed)).toEqual([]);
      store.open();
      const res = await inflight;
      expect(res.status).toBe(200);
      // It went where its chain was when it started, through the retired pool ...
      expect(fixture().hits()).toBe(before + 1);
      expect(moved.hits()).toBe(0);
      // ... and the new configuration serves the next one.
      expect((await gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`)).status).toBe(200);
      expect(moved.hits()).toBe(1);
    } finally {
      await gw.close();
      await moved.close();
    }
  });

  it('reports what a reload cannot apply without a restart', async () => {
    const gw = await startGateway(makeConfig([fixture().url]));
    try {
      const next = makeConfig([fixture().url], { server: { host: '127.0.0.1', port: 9 }, metrics: { token: 'x' } });
      expect(gw.app.gateway.reload(next)).toEqual(['server (host, port, watchConfig, shutdownTimeoutMs)', 'metrics']);
    } finally {
      await gw.close();
    }
  });
});
