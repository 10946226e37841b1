// The response cache shared by all keys: an in-process LRU tier bounded by bytes, an optional
// Redis tier, coalescing of identical misses, and stale answers (RFC 5861's
// stale-while-revalidate and stale-if-error, with the window set by cache.staleSeconds).
import { LRUCache } from 'lru-cache';
import type { UpstreamAnswer } from '../upstream/client.js';
import { Coalescer } from './coalesce.js';
import { entrySize, isStorable, packed, toEntry, type CacheEntry, type CacheOutcome, type LifetimeOf } from './policy.js';
import type { RedisCacheTier } from './redis-tier.js';

/** After a failed background refresh, wait this long before trying the upstream again. */
export const REFRESH_RETRY_MS = 1_000;

/** The upstream request a fill made: every request that waited on the fill is told of it. */
export interface Fetched {
  upstream: string;
  ms: number;
}

export interface CacheResult {
  entry: CacheEntry;
  outcome: CacheOutcome;
  /** The upstream request behind a MISS (undefined when the answer came from a cache tier). */
  fetched?: Fetched | undefined;
}

/** Where a fill found its answer, and whether it now holds a fresh entry. */
interface Fill extends CacheResult {
  fresh: boolean;
}

export interface CacheCounters {
  hits: number;
  misses: number;
  stale: number;
  coalesced: number;
  refreshFailures: number;
  /** Answers stored as final (kept for cache.finalTtlSeconds). */
  finalStores: number;
}

export interface ResponseCacheOptions {
  maxBytes: number;
  /** Larger entries are not kept in the in-process tier (default: maxBytes). */
  maxEntryBytes?: number;
  staleSeconds: number;
  now: () => number;
  shared?: RedisCacheTier | undefined;
}

export class ResponseCache {
  readonly counters: CacheCounters = { hits: 0, misses: 0, stale: 0, coalesced: 0, refreshFailures: 0, finalStores: 0 };
  private readonly memory: LRUCache<string, CacheEntry> | undefined;
  private readonly inflight = new Coalescer<Fill>();
  /** Keys whose background refresh failed recently, and when they may be tried again. */
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly options: ResponseCacheOptions) {
    this.memory =
      options.maxBytes > 0
        ? new LRUCache<string, CacheEntry>({
            maxSize: options.maxBytes,
            maxEntrySize: options.maxEntryBytes ?? options.maxBytes,
            sizeCalculation: (entry, key) => entrySize(key, entry),
          })
        : undefined;
  }

  /** Bytes held by the in-process tier. */
  get bytes(): number {
    return this.memory?.calculatedSize ?? 0;
  }

  get entries(): number {
    return this.memory?.size ?? 0;
  }

  /** Settles when no fill or background refresh is running (tests wait on it instead of sleeping). */
  idle(): Promise<void> {
    return this.inflight.idle();
  }

  /**
   * A fresh entry from the in-process tier, synchronously: the hit path takes no promise and
   * no closure. Anything else (stale, missing) goes through get().
   */
  peek(key: string, ttlSeconds: number, nowMs: number): CacheEntry | undefined {
    if (ttlSeconds <= 0 || !this.memory) return undefined;
    const held = this.memory.get(key);
    if (held && nowMs < held.freshUntil) {
      this.counters.hits++;
      return held;
    }
    return undefined;
  }

  /**
   * The answer for `key`: fresh from the cache (HIT), stale while one background refresh runs
   * (STALE), or from the shared tier or the upstream with identical misses coalesced (MISS).
   * `fetch` throws a GatewayError for anything that is not an answer to pass on (5xx, timeout).
   * `lifetime` may keep an answer longer than `ttlSeconds` (a final one), decided from the answer.
   */
  async get(key: string, ttlSeconds: number, fetch: () => Promise<UpstreamAnswer>, lifetime?: LifetimeOf): Promise<CacheResult> {
    const now = this.options.now();
    const held = ttlSeconds > 0 ? this.memory?.get(key) : undefined;
    if (held && now < held.freshUntil) {
      this.counters.hits++;
      return { entry: held, outcome: 'HIT' };
    }
    // The tip is served stale only while its upstream fails (a failed fill left it in retryAt):
    // then, as any entry, at once, with one refresh after the pause.
    if (held && now < held.staleUntil && (!held.tip || this.retryAt.has(key))) {
      this.counters.stale++;
      this.refreshInBackground(key, ttlSeconds, fetch, now, lifetime);
      return { entry: held, outcome: 'STALE' };
    }
    // The tip past its freshness: asked again now, and served stale only if that fails.
    const fallback = held && now < held.staleUntil ? held : undefined;
    const { promise, joined } = this.inflight.run(key, () => this.fill(key, ttlSeconds, fetch, lifetime, fallback));
    if (joined) this.counters.coalesced++;
    else this.counters.misses++;
    return promise;
  }

  private refreshInBackground(
    key: string,
    ttlSeconds: number,
    fetch: () => Promise<UpstreamAnswer>,
    now: number,
    lifetime: LifetimeOf | undefined,
  ): void {
    if (this.inflight.has(key) || (this.retryAt.get(key) ?? 0) > now) return;
    const { promise } = this.inflight.run(key, () => this.fill(key, ttlSeconds, fetch, lifetime));
    // Keep serving the old entry until staleUntil (stale-if-error), and do not hammer an
    // upstream that fails, or answers something not worth keeping (a 429, a 404): try again
    // after a pause.
    const pause = () => {
      this.counters.refreshFailures++;
      this.pause(key);
    };
    promise.then((fill) => (fill.fresh ? this.retryAt.delete(key) : pause()), pause);
  }

  /** The upstream failed a refresh of `key`: not asked again for it before REFRESH_RETRY_MS. */
  private pause(key: string): void {
    this.retryAt.set(key, this.options.now() + REFRESH_RETRY_MS);
    if (this.retryAt.size > 10_000) this.retryAt.clear();
  }

  /**
   * Into the in-process tier. A final entry is kept deflated once the tier is half full: then
   * the budget, not the CPU, decides how many answers it holds, and an answer kept costs an
   * inflate per hit (about 10 us for a 2 KB transaction) where one evicted costs an upstream
   * call (milliseconds); below half full nothing is evicted and the raw body is served as it is
   * (bench/results/2026-11-27-replay.md measures both).
   */
  private keep(key: string, entry: CacheEntry): void {
    const memory = this.memory;
    if (!memory) return;
    memory.set(key, entry.final && memory.calculatedSize * 2 >= this.options.maxBytes ? packed(entry) : entry);
  }

  /** One trip for a key: the shared tier first, then the upstream. */
  private async fill(
    key: string,
    ttlSeconds: number,
    fetch: () => Promise<UpstreamAnswer>,
    lifetime: LifetimeOf | undefined,
    fallback?: CacheEntry,
  ): Promise<Fill> {
    const shared = ttlSeconds > 0 ? await this.options.shared?.get(key) : undefined;
    if (shared && this.options.now() < shared.freshUntil) {
      this.keep(key, shared);
      return { entry: shared, outcome: 'HIT', fresh: true };
    }
    let answer: UpstreamAnswer;
    try {
      answer = await fetch();
    } catch (err) {
      // stale-if-error: an entry from the shared tier still inside its stale window will do.
      const now = this.options.now();
      if (shared && now < shared.staleUntil) return { entry: shared, outcome: 'STALE', fresh: false };
      if (fallback && now < fallback.staleUntil) {
        this.pause(key);
        return { entry: fallback, outcome: 'STALE', fresh: false };
      }
      throw err;
    }
    const now = this.options.now();
    const storable = isStorable(answer, ttlSeconds);
    // Judged afresh on every fill: an entry stored near the finality line is never promoted, it
    // expires with its route's TTL and the next fill may find it final.
    const life = storable && lifetime !== undefined ? lifetime(answer, now) : undefined;
    const entry = toEntry(answer, now, ttlSeconds, this.options.staleSeconds, life);
    if (entry.final) this.counters.finalStores++;
    if (storable) {
      this.keep(key, entry);
      this.options.shared?.set(key, entry, now);
      this.retryAt.delete(key);
    }
    return { entry, outcome: 'MISS', fresh: storable, fetched: { upstream: answer.upstream, ms: answer.ms } };
  }
}
