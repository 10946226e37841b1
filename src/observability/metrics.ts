// Prometheus metrics (prom-client). Label values are bounded: chain ids, route names and plan
// names come from the config, statuses from a small set, upstreams from the config; never a raw
// key or a path. Key names label only `egw_credits_spent_total`, and only with
// `metrics.perKey: true`: a series per key grows with the customers, which Prometheus advises
// against (https://prometheus.io/docs/practices/naming/#labels); the usage store answers per key.
// What is counted on every request (requests, credits) is kept in plain integers and handed to
// prom-client at scrape time (collect), so the hot path does a few Map lookups and an addition;
// cache and quota-store counts live in their own objects likewise.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { CacheCounters } from '../cache/response-cache.js';
import type { ConnectionStats } from '../http/connections.js';
import type { UpstreamErrorKind } from '../upstream/failures.js';
import { ScrapeHistogram } from './histogram.js';

export interface MetricSources {
  cache: () => CacheCounters & { bytes: number; entries: number };
  quotaStoreFailures: () => number;
  cacheStoreFailures: () => number;
  /** Whether the records' store (keys, audit, usage) answered its last ping. */
  storageUp: () => boolean;
  /** Reads and writes of the embedded SQLite store that failed for a reason of its file or disk (store/sqlite.ts). */
  recordsStoreFailures: () => number;
  /** Usage rows counted but not written to the store yet (a store away keeps them waiting). */
  usageRowsWaiting: () => number;
  /** Log lines dropped because the log's destination failed or stalled (observability/log-destination.ts). */
  logLinesDropped?: () => number;
  /** Writes of the log that failed (each tried again later). */
  logWriteFailures?: () => number;
  /** What was decided in process while the quota store was away (quota/step.ts, quota/outage.ts). */
  quotaOutage?: () => {
    decisions: Record<'ok' | 'rate_limited' | 'out_of_credits', number>;
    owed: number;
    billed: number;
    overdraft: number;
  };
  /** Every chain's and service's upstreams, 1 while in the rotation (upstream/client.ts upGauge). */
  upstreamUp?: () => { chain: string; upstream: string; up: number }[];
}

/** What the head metrics read of a chain's head (finality/head.ts ChainHead). */
export interface ChainHeadView {
  readonly chainId: string;
  readonly number: number | undefined;
  ageSeconds(nowMs: number): number | undefined;
}

/** What became of a configuration reload (Metrics.reloaded). */
export type ReloadOutcome = 'ok' | 'invalid' | 'refused';

export interface MetricsOptions {
  /** `metrics.perKey`: label credits spent with the key's name as well as its plan. */
  perKey?: boolean;
}

export class Metrics {
  readonly registry = new Registry();
  /** chain -> route -> status -> count: plain integers on the hot path, exported on scrape. */
  private readonly requestCounts = new Map<string, Map<string, Map<number, number>>>();
  /** plan -> key name (`''` without `metrics.perKey`) -> credits spent. */
  private readonly creditCounts = new Map<string, Map<string, number>>();
  private readonly perKey: boolean;
  private readonly upstreamSeconds: ScrapeHistogram<'chain' | 'upstream'>;
  /** Observers bound once per chain and upstream (both from the config). */
  private readonly upstreamObservers = new Map<string, (seconds: number) => void>();
  private readonly upstreamErrors: Counter<'chain' | 'kind'>;
  private readonly refusals: Counter<'plan' | 'reason'>;
  private readonly upstreamAttempts: Counter<'chain' | 'upstream' | 'outcome'>;
  private readonly upstreamHedges: Counter<'chain' | 'outcome'>;
  private readonly upstreamEjections: Counter<'chain' | 'upstream'>;
  private headPolls: Counter<'chain' | 'outcome'> | undefined;
  private readonly reloads: Counter<'outcome'>;
  private readonly lastReloadOk: Gauge;

  constructor(sources: () => MetricSources, options: MetricsOptions = {}) {
    const registers = [this.registry];
    const perKey = (this.perKey = options.perKey ?? false);
    collectDefaultMetrics({ register: this.registry, prefix: 'egw_' });
    const requestCounts = this.requestCounts;
    new Counter({
      name: 'egw_requests_total',
      help: 'Requests answered, by chain, route and status (route "none" before a route was found)',
      labelNames: ['chain', 'route', 'status'],
      registers,
      collect() {
        this.reset();
        for (const [chain, routes] of requestCounts) {
          for (const [route, statuses] of routes) {
            for (const [status, n] of statuses) this.inc({ chain, route, status: String(status) }, n);
          }
        }
      },
    });
    this.upstreamSeconds = new ScrapeHistogram(
      'egw_upstream_request_duration_seconds',
      'Upstream request time, by chain and upstream (its host and port, never its credentials)',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    );
    this.upstreamErrors = new Counter({
      name: 'egw_upstream_errors_total',
      help: 'Upstream requests that failed, every attempt tried, by chain and kind (timeout, unreachable, status_5xx, throttled, busy, redirect, invalid_body, reset, too_large, error)',
      labelNames: ['chain', 'kind'],
      registers,
    });
    // Issue 37 (contract section 10): what the failover executor (upstream/client.ts) did.
    this.upstreamAttempts = new Counter({
      name: 'egw_upstream_attempts_total',
      help: 'Attempts on an upstream, by chain, upstream and outcome (ok, timeout, 5xx, 429, refused, invalid, reset, cancelled: a hedge answered first)',
      labelNames: ['chain', 'upstream', 'outcome'],
      registers,
    });
    this.upstreamHedges = new Counter({
      name: 'egw_upstream_hedges_total',
      help: 'Hedged reads, by chain and outcome (won: the hedge answered first; lost: the first attempt did; cancelled: neither; denied: the hedge budget refused one)',
      labelNames: ['chain', 'outcome'],
      registers,
    });
    this.upstreamEjections = new Counter({
      name: 'egw_upstream_ejections_total',
      help: 'Upstreams taken out of the rotation after consecutive failures (or a failed probe), by chain and upstream',
      labelNames: ['chain', 'upstream'],
      registers,
    });
    new Gauge({
      name: 'egw_upstream_up',
      help: 'An upstream in the rotation (1), or out of it: ejected, cooling after a 429, refusing connections (0)',
      labelNames: ['chain', 'upstream'],
      registers,
      collect() {
        this.reset();
        for (const u of sources().upstreamUp?.() ?? []) this.labels(u.chain, u.upstream).set(u.up);
      },
    });
    this.refusals = new Counter({
      name: 'egw_quota_refusals_total',
      help: 'Requests refused by the plan, by plan and reason (rate_limited, out_of_credits)',
      labelNames: ['plan', 'reason'],
      registers,
    });
    // Named after Prometheus's own prometheus_config_last_reload_successful.
    this.reloads = new Counter({
      name: 'egw_config_reloads_total',
      help: 'Configuration reloads (SIGHUP, server.watchConfig), by outcome: ok, invalid (the file did not load), refused (it would take away a plan keys or accounts are on)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['ok', 'invalid', 'refused'] as const) this.reloads.labels(outcome).inc(0);
    this.lastReloadOk = new Gauge({
      name: 'egw_config_last_reload_successful',
      help: 'Whether the last configuration reload was applied (1; also before any reload), or the running configuration was kept (0)',
      registers,
      // Several workers: the gateway's last reload succeeded only if every worker's did.
      aggregator: 'min',
    });
    this.lastReloadOk.set(1);
    const creditCounts = this.creditCounts;
    new Counter({
      name: 'egw_credits_spent_total',
      help: perKey
        ? "Credits billed (after refunds of answers that are not billable: request/send.ts), by the key's plan and the key's name (metrics.perKey)"
        : "Credits billed (after refunds of answers that are not billable: request/send.ts), by the key's plan (metrics.perKey: true adds the key's name)",
      labelNames: perKey ? ['plan', 'key'] : ['plan'],
      registers,
      collect() {
        this.reset();
        for (const [plan, keys] of creditCounts) {
          for (const [key, n] of keys) this.inc(perKey ? { plan, key } : { plan }, n);
        }
      },
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
    new Counter({
      name: 'egw_cache_refresh_failures_total',
      help: 'Background refreshes of stale entries that failed, or answered something not worth keeping (the old entry is served meanwhile)',
      registers,
      collect() {
        this.reset();
        this.inc(sources().cache().refreshFailures);
      },
    });
    new Counter({
      name: 'egw_cache_final_stores_total',
      help: "Answers stored as final (about data below their chain's finality line), kept for cache.finalTtlSeconds instead of their route's TTL",
      registers,
      collect() {
        this.reset();
        this.inc(sources().cache().finalStores);
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
      help: 'Store failures, by use: quota (Redis: decisions and refunds), cache (Redis: the shared tier) and records (the embedded SQLite file: reads and writes that failed for its file or disk)',
      labelNames: ['store'],
      registers,
      collect() {
        this.reset();
        this.inc({ store: 'quota' }, sources().quotaStoreFailures());
        this.inc({ store: 'cache' }, sources().cacheStoreFailures());
        this.inc({ store: 'records' }, sources().recordsStoreFailures());
      },
    });
    new Counter({
      name: 'egw_quota_outage_decisions_total',
      help: 'Requests decided in process while the quota store (Redis) was away, by outcome (redis.onError: open; quota/outage.ts)',
      labelNames: ['outcome'],
      registers,
      collect() {
        this.reset();
        const o = sources().quotaOutage?.();
        if (o === undefined) return;
        for (const outcome of ['ok', 'rate_limited', 'out_of_credits'] as const) this.inc({ outcome }, o.decisions[outcome]);
      },
    });
    new Counter({
      name: 'egw_quota_outage_credits_total',
      help: 'Credits served while the quota store was away and billed once it was back (billed), and of those what the account did not have (overdraft)',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        const o = sources().quotaOutage?.();
        this.inc({ kind: 'billed' }, o?.billed ?? 0);
        this.inc({ kind: 'overdraft' }, o?.overdraft ?? 0);
      },
    });
    new Gauge({
      name: 'egw_quota_outage_owed_credits',
      help: 'Credits served while the quota store was away and not billed in it yet',
      registers,
      collect() {
        this.set(sources().quotaOutage?.().owed ?? 0);
      },
    });
    new Gauge({
      name: 'egw_storage_up',
      help: "1 when the records' store (run-time keys, audit, usage: storage.url, Redis or SQLite) answered its last ping, else 0 (SQLite: also while its writes fail or its file is gone)",
      registers,
      collect() {
        this.set(sources().storageUp() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'egw_usage_rows_waiting',
      help: 'Usage rows counted in memory and not yet written to the store (they wait while it is away)',
      registers,
      collect() {
        this.set(sources().usageRowsWaiting());
      },
    });
    new Counter({
      name: 'egw_log_lines_dropped_total',
      help: "Log lines dropped because the log's destination failed (a full disk, a file size limit, a closed pipe) or stopped taking them; requests are answered and billed all the same",
      registers,
      collect() {
        this.reset();
        this.inc(sources().logLinesDropped?.() ?? 0);
      },
    });
    new Counter({
      name: 'egw_log_write_failures_total',
      help: 'Writes of the log that failed (ENOSPC, EFBIG, EPIPE ...); each is tried again a second later, the lines kept meanwhile in a bounded buffer',
      registers,
      collect() {
        this.reset();
        this.inc(sources().logWriteFailures?.() ?? 0);
      },
    });
  }

  /** Each chain's head as the gateway knows it (finality/head.ts), read at scrape time. */
  heads(source: () => Iterable<ChainHeadView>, now: () => number): void {
    const registers = [this.registry];
    new Gauge({
      name: 'egw_chain_head_block',
      // With several workers the primary merges each one's gauge: the highest head any has seen.
      aggregator: 'max',
      help: 'The highest block the gateway has seen on each chain (in the answers it forwards, or by its own poll); absent until one is seen',
      labelNames: ['chain'],
      registers,
      collect() {
        this.reset();
        for (const h of source()) if (h.number !== undefined) this.set({ chain: h.chainId }, h.number);
      },
    });
    new Gauge({
      name: 'egw_chain_head_age_seconds',
      aggregator: 'min',
      help: "Seconds since the chain's head was last confirmed; past 3 poll intervals (30 s at least) answers are cached as if the head were unknown",
      labelNames: ['chain'],
      registers,
      collect() {
        this.reset();
        const at = now();
        for (const h of source()) {
          const age = h.ageSeconds(at);
          if (age !== undefined) this.set({ chain: h.chainId }, age);
        }
      },
    });
    this.headPolls = new Counter({
      name: 'egw_head_polls_total',
      help: "The gateway's own eth_blockNumber calls to a quiet chain's explorer (chains.<id>.head.pollSeconds), by chain and outcome (ok, error); billed to no key",
      labelNames: ['chain', 'outcome'],
      registers,
    });
  }

  /** One head poll's outcome (finality/poll.ts). */
  headPoll(chain: string, outcome: 'ok' | 'error'): void {
    this.headPolls?.inc({ chain, outcome });
  }

  /** The public listener's connections (http/connections.ts), read at scrape time. */
  connections(stats: () => ConnectionStats): void {
    const registers = [this.registry];
    new Gauge({
      name: 'egw_connections_open',
      help: 'Client connections open on the public listener',
      registers,
      collect() {
        this.set(stats().open);
      },
    });
    new Gauge({
      name: 'egw_connections_max',
      help: 'Most client connections held at once (server.maxConnections, or from the open-file limit)',
      registers,
      collect() {
        this.set(stats().max);
      },
    });
    new Counter({
      name: 'egw_connections_shed_total',
      help: 'Connections closed at the cap: pending (had sent no complete request) or refused (the newcomer, every other had)',
      labelNames: ['reason'],
      registers,
      collect() {
        const { shed } = stats();
        this.reset();
        this.inc({ reason: 'pending' }, shed.pending);
        this.inc({ reason: 'refused' }, shed.refused);
      },
    });
  }

  /**
   * A reload's outcome (SIGHUP, or the file changed with server.watchConfig): `ok` applied,
   * `invalid` the file did not load, `refused` it would take away a plan still in use
   * (keys/plan-use.ts); the last one's success as a gauge, for an alert.
   */
  reloaded(outcome: ReloadOutcome): void {
    this.reloads.labels(outcome).inc();
    this.lastReloadOk.set(outcome === 'ok' ? 1 : 0);
  }

  request(chain: string, route: string, status: number): void {
    let routes = this.requestCounts.get(chain);
    if (!routes) this.requestCounts.set(chain, (routes = new Map<string, Map<number, number>>()));
    let statuses = routes.get(route);
    if (!statuses) routes.set(route, (statuses = new Map<number, number>()));
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }

  upstream(chain: string, upstream: string, seconds: number): void {
    const id = `${chain} ${upstream}`;
    let observe = this.upstreamObservers.get(id);
    if (!observe) this.upstreamObservers.set(id, (observe = this.upstreamSeconds.observer({ chain, upstream })));
    observe(seconds);
  }

  upstreamError(chain: string, kind: UpstreamErrorKind): void {
    this.upstreamErrors.labels(chain, kind).inc();
  }

  /** upstream/client.ts UpstreamObserver. */
  attempt(chain: string, upstream: string, outcome: string, seconds?: number): void {
    this.upstreamAttempts.labels(chain, upstream, outcome).inc();
    if (seconds !== undefined) this.upstream(chain, upstream, seconds);
  }

  hedge(chain: string, outcome: string): void {
    this.upstreamHedges.labels(chain, outcome).inc();
  }

  ejected(chain: string, upstream: string): void {
    this.upstreamEjections.labels(chain, upstream).inc();
  }

  declare(chain: string, upstreams: readonly string[]): void {
    for (const outcome of ['won', 'lost', 'cancelled', 'denied']) this.upstreamHedges.labels(chain, outcome).inc(0);
    for (const upstream of upstreams) this.upstreamEjections.labels(chain, upstream).inc(0);
  }

  refused(plan: string, reason: 'rate_limited' | 'out_of_credits'): void {
    this.refusals.labels(plan, reason).inc();
  }

  /** Credits billed to a key on a plan; the key's name is kept only with `metrics.perKey`. */
  spent(plan: string, key: string, credits: number): void {
    if (credits === 0) return;
    let keys = this.creditCounts.get(plan);
    if (!keys) this.creditCounts.set(plan, (keys = new Map<string, number>()));
    const name = this.perKey ? key : '';
    keys.set(name, (keys.get(name) ?? 0) + credits);
  }
}
