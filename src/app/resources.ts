// What lives as long as the process, whatever configuration is loaded: the logger, the Redis
// connection, the records (run-time keys, audit, usage: store/open.ts chooses where), the
// quota store and step, the shared cache tier, the in-process cache, usage counting and the
// metrics registry. Made once at start; `redis`, `storage`, `usage`, `admin`, `metrics` and
// `health` changes need a restart.
import cluster from 'node:cluster';
import { pino, type Logger } from 'pino';
import { RedisCacheTier } from '../cache/redis-tier.js';
import { ResponseCache } from '../cache/response-cache.js';
import type { Config } from '../config/schema.js';
import { Metrics } from '../observability/metrics.js';
import { HealthBook } from '../upstream/health.js';
import { LogDestination } from '../observability/log-destination.js';
import { LogOutput } from '../observability/log-output.js';
import { ThrottledWarning, ThrottledWarnings } from '../observability/throttled-log.js';
import { MemoryQuotaStore } from '../quota/memory.js';
import { RedisQuotaStore } from '../quota/redis.js';
import { QuotaStep } from '../quota/step.js';
import { OutageBook } from '../quota/outage.js';
import type { QuotaStore, SeparateUsageCredits } from '../quota/types.js';
import { createRedis, type RedisClient } from '../redis/client.js';
import { KEEPS_NOTHING, keepsNothing, lostOnRestart, readPersistence, VOLATILE_FIX, volatileRefusal } from '../redis/persistence.js';
import { RuntimeKeys, type KeyChange } from '../keys/runtime.js';
import { openStorage } from '../store/open.js';
import type { Storage, StoreFaults } from '../store/types.js';
import { UsageRecorder } from '../usage/recorder.js';
import { Webhooks } from '../webhooks/webhooks.js';

export interface ServerDeps {
  /** Clock for everything time-based (ms since the epoch). */
  now?: () => number;
  /** A quota store to use instead of the one the config implies (tests). */
  quotaStore?: QuotaStore;
  /** Where log lines go instead of stdout, line by line (tests). */
  logStream?: { write(line: string): void };
  /** A file log lines go to instead of stdout, buffered as stdout's are (benchmarks: /dev/null). */
  logFile?: string;
  /** How often batched log lines are written at least (default LOG_FLUSH_MS; tests: longer, to see what does not wait for it). */
  logFlushMs?: number;
}

/**
 * Log lines are written when this many bytes are waiting ... (each write is a trip through
 * libuv's thread pool, which shares the gateway's core: one per ~150 access lines, not per 20).
 */
const LOG_BUFFER_BYTES = 32 * 1024;
/**
 * Cluster workers share the primary's stdout. A pipe keeps a write whole only up to PIPE_BUF
 * bytes (4,096 on Linux, pipe(7)); larger writes of two processes may interleave, so a worker
 * writes at most that much at once. (Not reproduced here: test/process/worker-log-lines.test.ts
 * fills the pipe with two workers writing and finds every line whole either way.)
 */
export const PIPE_BUF = 4096;
/** What one write(2) of the log takes, at most. */
const LOG_MAX_WRITE_BYTES = 4 * LOG_BUFFER_BYTES;

/**
 * How access lines are batched (LogOutput) and written (observability/log-destination.ts): `batch` bytes of lines are
 * handed over at once; the destination writes once `minLength` bytes wait, at most `maxWrite` in one
 * write(2) (it merges batches up to that). With `sharedStdout`, no write exceeds PIPE_BUF.
 */
export function logWriteSizes(sharedStdout: boolean): { batch: number; minLength: number; maxWrite: number } {
  const batch = sharedStdout ? PIPE_BUF : LOG_BUFFER_BYTES;
  return { batch, minLength: batch / 2, maxWrite: sharedStdout ? PIPE_BUF : LOG_MAX_WRITE_BYTES };
}
/** ... and at least this often, however few. */
const LOG_FLUSH_MS = 1_000;
/** At close, how long the last lines may take to be written before what is left is written synchronously. */
const LOG_SETTLE_MS = 2_000;
/** How often the records' store is asked whether it answers (/readyz, egw_storage_up). */
const STORAGE_PING_MS = 5_000;

export class Resources {
  private readonly logDestination: LogDestination | undefined;
  private readonly logTimer: NodeJS.Timeout | undefined;
  readonly now: () => number;
  /** The gateway's logger; fastify itself runs without one (app/server.ts says why). */
  readonly log: Logger;
  /** Where lines written in pino's layout elsewhere go, to the logger's destination (app/access-log.ts). */
  readonly logOutput: LogOutput;
  readonly redis: RedisClient | undefined;
  readonly quotaStore: QuotaStore;
  /** Credits counted apart from the usage rows (the Redis store), chosen here: read with a usage report, settled and pruned with it. */
  readonly credits: SeparateUsageCredits | undefined;
  readonly quota: QuotaStep;
  readonly sharedTier: RedisCacheTier | undefined;
  readonly metrics: Metrics;
  /** Upstream failures, one line per chain and kind per interval: a dead explorer under load does not flood the log. */
  readonly upstreamWarnings: ThrottledWarnings;
  /** Every upstream's health, kept across reloads (upstream/health.ts). */
  readonly upstreamHealth = new HealthBook();
  /** The chains and services of the current state, for egw_upstream_up (app/state.ts sets it). */
  upstreamsNow: () => Iterable<{ upstreams: { owner: string; upGauge(): { upstream: string; up: number }[] } }> = () => [];
  /** Run-time keys, audit and usage (and ledgers without Redis): store/open.ts says where. */
  readonly store: Storage;
  readonly runtime: RuntimeKeys;
  /** Usage counting; undefined when `usage.enabled` is off. */
  readonly usage: UsageRecorder | undefined;
  /** Events to webhooks, and their delivery (webhooks/webhooks.ts). */
  readonly webhooks: Webhooks;
  /** The in-process cache tier; a reload with a new budget or stale window replaces it. */
  cache: ResponseCache;
  /** `redis.volatile` of the configuration the process started with. */
  private readonly volatileAccepted: boolean;
  /** Whether the run-time keys live in Redis (no `storage.url`: store/open.ts), for the messages. */
  private readonly keysInRedis: boolean;
  /** Set by the start's judgement of Redis's persistence; from then on every reconnect judges again. */
  private persistenceJudged = false;
  /** Whether the records' store answered its last ping (every STORAGE_PING_MS from start). */
  storageUp = true;
  private storagePing: NodeJS.Timeout | undefined;
  /** Where run-time key changes go: the key ring of the current configuration (app/state.ts sets it). */
  applyKeyChange: (change: KeyChange) => void = () => undefined;

  constructor(config: Config, deps: ServerDeps) {
    this.now = deps.now ?? Date.now;
    // Keys never reach a log line: the access log carries the path without its query, and these
    // paths are redacted wherever a request or its headers are logged.
    const options = {
      level: config.log.level,
      redact: ['req.headers.authorization', 'headers.authorization', 'req.query.apikey', 'req.url'],
    };
    // Lines go out in batches of 32 KiB or once a second, not one write(2) per line (what made a
    // request line cost a quarter of a hit: bench/results/2026-11-22-logging.md), and every line
    // still reaches stdout when the gateway closes (flushLogs, from close() and the CLI's exits).
    if (deps.logStream) {
      const stream = deps.logStream;
      this.log = pino(options, stream);
      // One line at a time, as the stream's reader expects.
      this.logOutput = new LogOutput({ write: (chunk) => stream.write(chunk.toString('utf8')) }, LOG_BUFFER_BYTES, true);
    } else {
      const { batch, minLength, maxWrite } = logWriteSizes(cluster.isWorker);
      // Not pino.destination (sonic-boom): a full disk under the log hung the process in its
      // flushSync, then ended it (observability/log-destination.ts says how). Lines that cannot
      // be written are dropped and counted; requests are answered and billed all the same.
      const out = new LogDestination({
        ...(deps.logFile !== undefined ? { file: deps.logFile } : { fd: 1 }),
        minLength,
        maxWrite,
        recovered: ({ error, droppedLines }) =>
          this.log.warn({ error, droppedLines }, 'log lines are written again; lines that could not be written were dropped'),
      });
      // Warnings and errors are written at once, with the lines batched ahead of them (they keep
      // their order), not within LOG_FLUSH_MS: flush() writes what waits now, or once the write
      // under way ends. Requests' lines stay batched.
      const lines = new LogOutput(out, batch, false, () => out.flush());
      this.logDestination = out;
      this.logOutput = lines;
      this.logTimer = setInterval(() => {
        lines.drain();
        out.flush();
      }, deps.logFlushMs ?? LOG_FLUSH_MS).unref();
      this.log = pino(options, lines);
    }
    this.redis = config.redis && !deps.quotaStore ? createRedis(config.redis) : undefined;
    this.redis?.on('error', () => {
      // Connection errors surface as failed commands, handled and logged (rate-limited) by the
      // quota step and the cache tier; ioredis keeps reconnecting.
    });
    this.volatileAccepted = config.redis?.volatile ?? false;
    this.keysInRedis = config.storage.url === undefined;
    // Judged once at start (judgePersistence, which may refuse it), then after every reconnect:
    // a Redis that keeps nothing on disk forgets every key and credit when it restarts.
    this.redis?.on('ready', () => {
      if (this.persistenceJudged) void this.judgePersistence(false);
    });
    const redis = this.redis;
    this.store = openStorage({
      url: config.storage.url,
      schema: config.storage.schema,
      path: config.storage.path,
      redis: redis && config.redis ? { client: redis, prefix: config.redis.keyPrefix, subscriber: () => redis.duplicate() } : undefined,
      retentionDays: config.usage.retentionDays,
      hourlyRetentionDays: Math.min(config.usage.hourlyRetentionDays, config.usage.retentionDays),
      now: this.now,
      log: this.log,
    });
    if (this.store.faults !== undefined) this.watchFaults(this.store.faults);
    const redisQuota =
      deps.quotaStore === undefined && redis && config.redis
        ? new RedisQuotaStore(redis, config.redis.keyPrefix, {
            leases: config.redis.leases,
            now: this.now,
            subscriber: () => redis.duplicate(),
            retentionDays: config.usage.retentionDays,
            hourlyRetentionDays: Math.min(config.usage.hourlyRetentionDays, config.usage.retentionDays),
          })
        : undefined;
    const memoryQuota = deps.quotaStore === undefined && redisQuota === undefined ? new MemoryQuotaStore(this.store.ledgers) : undefined;
    this.quotaStore = deps.quotaStore ?? redisQuota ?? memoryQuota!;
    // With Redis, credits are counted apart from the usage rows (quota/usage-credits.ts).
    this.credits = redisQuota;
    // While Redis is away, `onError: open` serves within a local window and allowance, billed once
    // it is back (quota/outage.ts); `closed` refuses instead.
    const outage =
      redisQuota && config.redis?.onError === 'open'
        ? new OutageBook(redisQuota, config.redis.outageShare, `${process.pid.toString(36)}.${this.now().toString(36)}`)
        : undefined;
    this.quota = new QuotaStep(this.quotaStore, this.log, this.now, outage);
    this.runtime = new RuntimeKeys(this.store.keys, (change) => this.applyKeyChange(change), this.log);
    const usage = this.store.usage;
    this.usage = config.usage.enabled ? new UsageRecorder((rows, batchId) => usage.addUsage(rows, batchId), this.log, this.now) : undefined;
    // Without Redis the ledgers and the usage rows live in one store: credits are counted in usage
    // as they are billed, and both are written in one transaction (quota/memory.ts, joinUsage).
    if (this.usage && memoryQuota) memoryQuota.joinUsage(this.usage);
    // With Redis, the scripts that bill credits count them per usage row (quota/usage-credits.ts).
    if (this.usage && this.credits) this.usage.countCreditsElsewhere();
    this.webhooks = new Webhooks(
      config.webhooks,
      {
        keys: this.store.keys,
        outbox: this.store.outbox,
        quota: this.quotaStore,
        now: this.now,
        log: this.log,
      },
      config.security,
    );
    this.upstreamWarnings = new ThrottledWarnings(this.log, 'upstream failure', this.now);
    const cacheWarning = new ThrottledWarning(this.log, 'shared cache tier failed; treating as a miss', this.now);
    this.sharedTier =
      this.redis && config.redis ? new RedisCacheTier(this.redis, config.redis.keyPrefix, (err) => cacheWarning.warn(err)) : undefined;
    this.cache = this.newCache(config);
    this.metrics = new Metrics(
      () => ({
        cache: () => ({ ...this.cache.counters, bytes: this.cache.bytes, entries: this.cache.entries }),
        quotaStoreFailures: () => this.quota.failures,
        quotaOutage: () => ({
          decisions: this.quota.outageDecisions,
          owed: this.quota.outageOwed,
          billed: this.quota.outageBilled,
          overdraft: this.quota.outageOverdraft,
        }),
        cacheStoreFailures: () => this.sharedTier?.failures ?? 0,
        storageUp: () => this.storageUp,
        recordsStoreFailures: () => this.store.faults?.failures ?? 0,
        usageRowsWaiting: () => this.usage?.waitingRows ?? 0,
        logLinesDropped: () => this.logDestination?.droppedLines ?? 0,
        logWriteFailures: () => this.logDestination?.failedWrites ?? 0,
        upstreamUp: () =>
          [...this.upstreamsNow()].flatMap(({ upstreams: u }) =>
            u.upGauge().map((g) => ({ chain: u.owner, upstream: g.upstream, up: g.up })),
          ),
      }),
      { perKey: config.metrics.perKey },
    );
  }

  newCache(config: Config): ResponseCache {
    return new ResponseCache({
      maxBytes: config.cache.maxBytes,
      // No one answer may take more than a sixteenth of the tier (8 MiB of the default 128 MiB):
      // a few big answers do not push out everything else.
      maxEntryBytes: Math.max(1, Math.floor(config.cache.maxBytes / 16)),
      staleSeconds: config.cache.staleSeconds,
      now: this.now,
      shared: this.sharedTier,
    });
  }

  /**
   * Reads the ledgers and the run-time keys; before the gateway takes requests. First, with Redis
   * ready (server.ts waits a moment for it), judges its persistence: throws, refusing the start,
   * when a master keeps nothing on disk and `redis.volatile` is not true.
   */
  async start(): Promise<void> {
    await this.judgePersistence(true);
    await this.quotaStore.start();
    await this.runtime.start();
    this.webhooks.start();
    await this.pingStorage();
    this.storagePing = setInterval(() => void this.pingStorage(), STORAGE_PING_MS).unref();
  }

  /**
   * Bought credits live in Redis whenever it is configured (the quota store), run-time keys too
   * without `storage.url` (store/open.ts): a Redis that keeps nothing on disk loses them when it
   * restarts (https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/). At
   * start such a Redis refuses the start unless `redis.volatile` is true (then a warning); found
   * after the start (Redis was not ready then, or restarted without persistence), it is an error
   * line, never an exit. A Redis that refuses CONFIG (managed services) is not judged: a warning
   * at start says so.
   */
  private async judgePersistence(atStart: boolean): Promise<void> {
    const redis = this.redis;
    if (!redis) return;
    if (atStart) {
      this.persistenceJudged = true;
      if (redis.status !== 'ready') {
        this.log.warn('Redis is not ready: whether it keeps anything on disk is checked when it answers (then logged, not refused)');
        return;
      }
    }
    const nodes = await readPersistence(redis);
    const volatile = nodes.filter(keepsNothing);
    const unchecked = nodes.filter((n) => n.error !== undefined);
    const where = { redis: volatile.map((n) => n.node) };
    if (volatile.length > 0 && this.volatileAccepted) {
      this.log.warn(
        where,
        `${KEEPS_NOTHING}: a restart of Redis loses ${lostOnRestart(this.keysInRedis)}; accepted by redis.volatile: true`,
      );
    } else if (volatile.length > 0 && atStart) {
      throw new Error(volatileRefusal(volatile, this.keysInRedis));
    } else if (volatile.length > 0) {
      this.log.error(
        where,
        `${KEEPS_NOTHING}: a restart of Redis loses ${lostOnRestart(this.keysInRedis)}; a start would be refused now: ${VOLATILE_FIX}`,
      );
    }
    if (atStart && (unchecked.length > 0 || nodes.length === 0)) {
      this.log.warn(
        { redis: unchecked.map((n) => n.node), reason: unchecked.map((n) => n.error) },
        'could not check whether Redis keeps anything on disk (CONFIG GET refused or unanswered); starting: make sure it runs with appendonly yes',
      );
    }
  }

  /**
   * A reload that turns `redis.volatile` off takes effect at the next start (like all of `redis`);
   * when the Redis in use keeps nothing on disk, that start will be refused: said now.
   */
  async checkNextStart(next: Config): Promise<void> {
    const redis = this.redis;
    if (!redis || !next.redis || next.redis.volatile || redis.status !== 'ready') return;
    const volatile = (await readPersistence(redis)).filter(keepsNothing);
    if (volatile.length === 0) return;
    this.log.error(
      { redis: volatile.map((n) => n.node) },
      `the reloaded configuration has redis.volatile false and ${KEEPS_NOTHING}: the next start will be refused; ${VOLATILE_FIX}`,
    );
  }

  /**
   * The embedded store's faults (a full disk, a read-only folder or file: store/sqlite.ts), one
   * line per interval however many calls failed; a deleted file put back, when it is.
   */
  private watchFaults(faults: StoreFaults): void {
    const warning = new ThrottledWarning(
      this.log,
      'the SQLite store failed; serving from memory, keeping what is not written and trying again',
      this.now,
    );
    faults.listen((event) => {
      if (event.type === 'fault') {
        warning.warn(event.err, { op: event.op, code: (event.err as { code?: unknown }).code });
        return;
      }
      this.log.warn(
        { path: event.path },
        'the SQLite store file was deleted while open; written again at its path from the open file (keys, audit, usage and ledgers kept)',
      );
    });
  }

  private async pingStorage(): Promise<void> {
    const up = await this.store.ping().then(
      () => true,
      (err: unknown) => {
        if (this.storageUp) this.log.warn({ err: (err as Error).message, storage: this.store.kind }, 'the records store does not answer');
        return false;
      },
    );
    if (up && !this.storageUp) this.log.info({ storage: this.store.kind }, 'the records store answers again');
    this.storageUp = up;
  }

  /** Writes every log line still waiting (synchronously: also from an exit handler). */
  flushLogs(): void {
    this.logOutput.drain();
    const out = this.logDestination;
    // Bounded (LogDestination.flushSync): a destination that fails loses its lines, not the exit.
    out?.flushSync();
  }

  async close(): Promise<void> {
    clearInterval(this.storagePing);
    this.runtime.close();
    await this.webhooks.close();
    // Usage and spend first, while their stores are still open: SIGTERM loses none.
    await this.usage?.close();
    await this.quota.close();
    await this.quotaStore.close();
    await this.store.close();
    const redis = this.redis;
    if (redis) await redis.quit().catch(() => redis.disconnect());
    if (this.logTimer) clearInterval(this.logTimer);
    this.logOutput.drain();
    await this.logDestination?.settle(LOG_SETTLE_MS);
    this.flushLogs();
  }
}
