// A Prometheus histogram counted in plain numbers on the hot path and handed to prom-client at
// scrape time, as the request counters are (observability/metrics.ts). prom-client's Histogram
// validates and hashes the labels on every observe(), even through a child bound to them
// (node_modules/prom-client/lib/histogram.js, observe()): 2 us of a miss in a profile
// (bench/results/2026-11-23-miss-path.md). This registers with a prom-client Registry as any
// metric does, and get() returns what prom-client's Histogram returns for the same observations
// (test/unit/histogram.test.ts), so the exposition and the cluster sums are unchanged.
import type { Registry } from 'prom-client';

/** One line of the exposition, as prom-client's Histogram.get() gives it. */
export interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

interface Series<L extends string> {
  labels: Record<L, string>;
  /** Observations per bucket, not cumulative; the last one is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class ScrapeHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series<L>>();

  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds, ascending. */
    private readonly buckets: readonly number[],
    registers: readonly Registry[],
  ) {
    // prom-client's Registry takes any object with its metrics' name, get() and reset().
    for (const r of registers) r.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** An observer for one set of label values: an array lookup and three additions per call. */
  observer(labels: Record<L, string>): (value: number) => void {
    const key = JSON.stringify(labels);
    const bounds = this.buckets;
    return (value: number) => {
      // Looked up per call: reset() (prom-client's Registry.resetMetrics) starts new series.
      let s = this.series.get(key);
      if (s === undefined) this.series.set(key, (s = { labels, counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 }));
      if (!Number.isFinite(value)) return;
      let i = 0;
      while (i < bounds.length && value > bounds[i]!) i++;
      s.counts[i]!++;
      s.sum += value;
      s.count++;
    };
  }

  get(): Promise<{ name: string; help: string; type: 'histogram'; values: HistogramValue[]; aggregator: 'sum' }> {
    const values: HistogramValue[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += s.counts[i]!;
        const le = i < this.buckets.length ? this.buckets[i]! : '+Inf';
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    this.series.clear();
  }
}
