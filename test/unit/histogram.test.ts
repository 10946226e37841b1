// ScrapeHistogram (observability/histogram.ts) must expose what prom-client's Histogram exposes
// for the same observations: the text a scrape gets, and the JSON the cluster primary sums.
import fc from 'fast-check';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ScrapeHistogram } from '../../src/observability/histogram.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAME = 'egw_upstream_request_duration_seconds';
const HELP = 'Upstream request time';
type Obs = { chain: string; upstream: string; seconds: number };

function both(observations: Obs[]) {
  const mine = new Registry();
  const theirs = new Registry();
  const h = new ScrapeHistogram<'chain' | 'upstream'>(NAME, HELP, BUCKETS, [mine]);
  const p = new Histogram({ name: NAME, help: HELP, labelNames: ['chain', 'upstream'], buckets: BUCKETS, registers: [theirs] });
  for (const o of observations) {
    h.observer({ chain: o.chain, upstream: o.upstream })(o.seconds);
    p.observe({ chain: o.chain, upstream: o.upstream }, o.seconds);
  }
  return { mine, theirs };
}

const observations = fc.array(
  fc.record({
    chain: fc.constantFrom('1', '100', '8453'),
    upstream: fc.constantFrom('eth.blockscout.com', '127.0.0.1:4000'),
    seconds: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(...BUCKETS)),
  }),
  { maxLength: 60 },
);

describe('ScrapeHistogram', () => {
  it("exposes what prom-client's Histogram exposes for the same observations", async () => {
    await fc.assert(
      fc.asyncProperty(observations, async (obs) => {
        const { mine, theirs } = both(obs);
        expect(await mine.metrics()).toBe(await theirs.metrics());
      }),
      { numRuns: 300 },
    );
  });

  it('sums across workers as prom-client sums its own histograms', async () => {
    await fc.assert(
      fc.asyncProperty(observations, observations, async (a, b) => {
        const x = both(a);
        const y = both(b);
        const mine = AggregatorRegistry.aggregate([await x.mine.getMetricsAsJSON(), await y.mine.getMetricsAsJSON()]);
        const theirs = AggregatorRegistry.aggregate([await x.theirs.getMetricsAsJSON(), await y.theirs.getMetricsAsJSON()]);
        expect(await mine.metrics()).toBe(await theirs.metrics());
      }),
      { numRuns: 100 },
    );
  });

  it('starts again from nothing on reset, as the registry resets it', async () => {
    const r = new Registry();
    const h = new ScrapeHistogram<'chain'>(NAME, HELP, BUCKETS, [r]);
    const observe = h.observer({ chain: '1' });
    observe(0.2);
    expect(await r.metrics()).toContain(`${NAME}_count{chain="1"} 1`);
    r.resetMetrics();
    expect(await r.metrics()).not.toContain(`${NAME}_count`);
    observe(0.3);
    expect(await r.metrics()).toContain(`${NAME}_count{chain="1"} 1`);
  });
});
