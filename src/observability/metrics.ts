// Prometheus metrics (prom-client). Label values are bounded: chain ids, route names, plan and
// key names come from the config, statuses from a small set, upstreams from the config; never
// a raw key or a path. The request counter's children are bound once per label set, so the
// hot path does one Map lookup and an increment; cache and quota-store counts live in their
// own objects as plain integers and are read at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Counter as CounterT } from 'prom-client';
import type { CacheCounters } from '../cache/response-cache.js';

export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'status_5xx' | 'error';

export interface MetricSources {
  cache: () => CacheCounters & { bytes: number; entries: number };
  quotaStoreFailures: () => number;
  cacheStoreFailures: () => number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'chain' | 'route' | 'status'>;
  private readonly requestChildren = new Map<string, CounterT.Internal>();
  private readonly upstreamSeconds: Histogram<'chain' | 'upstream'>;
  private readonly upstreamErrors: Counter<'chain' | 'kind'>;
  private readonly refusals: Counter<'plan' | 'reason'>;
  private readonly credits: Counter<'key'>;

  constructor(sources: () => MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'egw_' });
    this.requests = new Counter({
      name: 'egw_requests_total',
      help: 'Requests answered, by chain, route and status (route "none" before a route was found)',
      labelNames: ['chain', 'route', 'status'],
      registers,
    });
    this.upstreamSeconds = new Histogram({
      name: 'egw_upstream_request_duration_seconds',
      help: 'Upstream request time, by chain and upstream base URL',
      labelNames: ['chain', 'upstream'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.upstreamErrors = new Counter({
      name: 'egw_upstream_errors_total',
      help: 'Upstream failures, by chain and kind (timeout, unreachable, status_5xx, error)',
      labelNames: ['chain', 'kind'],
      registers,
    });
    this.refusals = new Counter({
      name: 'egw_quota_refusals_total',
      help: 'Requests refused by the plan, by plan and reason (rate_limited, out_of_credits)',
      labelNames: ['plan', 'reason'],
      registers,
    });
    this.credits = new Counter({
      name: 'egw_credits_spent_total',
      help: 'Credits billed (after refunds of 5xx answers), by key name',
      labelNames: ['key'],
      registers,
    });
    // Counts kept as plain integers elsewhere, read at scrape time.
    new Counter({
      name: 'egw_cache_lookups_total',
      help: 'Cache lookups by outcome: hit, miss (memory miss), stale (served stale), coalesced (waited on another miss)',
      labelNames: ['outcome'],
      registers,
      collect() {
        const c = sources().cache();
        this.reset();
        this.inc({ outcome: 'hit' }, c.hits);
        this.inc({ outcome: 'miss' }, c.misses);
        this.inc({ outcome: 'stale' }, c.stale);
        this.inc({ outcome: 'coalesced' }, c.coalesced);
      },
    });
    new Gauge({
      name: 'egw_cache_bytes',
      help: 'Bytes held by the in-process cache tier',
      registers,
      collect() {
        this.set(sources().cache().bytes);
      },
    });
    new Gauge({
      name: 'egw_cache_entries',
      help: 'Entries held by the in-process cache tier',
      registers,
      collect() {
        this.set(sources().cache().entries);
      },
    });
    new Counter({
      name: 'egw_store_errors_total',
      help: 'Redis failures, by use: quota (decisions and refunds) and cache (the shared tier)',
      labelNames: ['store'],
      registers,
      collect() {
        this.reset();
        this.inc({ store: 'quota' }, sources().quotaStoreFailures());
        this.inc({ store: 'cache' }, sources().cacheStoreFailures());
      },
    });
  }

  request(chain: string, route: string, status: number): void {
    const id = `${chain}\u0000${route}\u0000${status}`;
    let child = this.requestChildren.get(id);
    if (!child) {
      child = this.requests.labels(chain, route, String(status));
      this.requestChildren.set(id, child);
    }
    child.inc();
  }

  upstream(chain: string, upstream: string, seconds: number): void {
    this.upstreamSeconds.labels(chain, upstream).observe(seconds);
  }

  upstreamError(chain: string, kind: UpstreamErrorKind): void {
    this.upstreamErrors.labels(chain, kind).inc();
  }

  refused(plan: string, reason: 'rate_limited' | 'out_of_credits'): void {
    this.refusals.labels(plan, reason).inc();
  }

  spent(key: string, credits: number): void {
    if (credits !== 0) this.credits.labels(key).inc(credits);
  }
}
