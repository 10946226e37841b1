// Reload while requests are in flight, in process: a changed or removed chain's pool stays open
// for the requests that already chose it.
import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import type { QuotaDecision, QuotaQuery, QuotaStore, Refund } from '../../src/quota/types.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, makeConfig, startGateway } from '../support/gateway.js';

/** The in-process store, answering after a delay, like a Redis far away. */
class SlowStore implements QuotaStore {
  readonly kind = 'memory';
  private readonly inner = new MemoryQuotaStore();
  decide(q: QuotaQuery): Promise<QuotaDecision> {
    return new Promise((r) => setTimeout(r, 200)).then(() => this.inner.decide(q));
  }
  refund(r: Refund): Promise<void> {
    return this.inner.refund(r);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const fixture = useFixtureExplorer();

describe('reload with requests in flight', () => {
  it('a request that started before a chain changed still reaches its upstream', async () => {
    const config = makeConfig([fixture().url]);
    const gw = await startGateway(config, { quotaStore: new SlowStore() });
    try {
      const inflight = gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`);
      await new Promise((r) => setTimeout(r, 50));
      const changed = makeConfig([fixture().url], { chains: { '1': { name: 'Ethereum', upstreams: [fixture().url], timeoutMs: 3_000 } } });
      expect(gw.app.gateway.reload(changed)).toEqual([]);
      const res = await inflight;
      expect(res.status).toBe(200);
      // And the new configuration serves the next one.
      expect((await gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`)).status).toBe(200);
    } finally {
      await gw.close();
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
