// resolve() with a bounded memo per raw URL: a repeated request (the common case behind a
// cache) skips parsing and zod, and finds what depends only on the URL and the configuration
// (cost, TTL, cache key) already worked out. URLs that carry `apikey` are never memoised, so
// no client key is kept as a memo key. A reload builds a new Resolver.
import { LRUCache } from 'lru-cache';
import { cacheKey, ttlSecondsFor } from '../cache/policy.js';
import type { Config } from '../config/schema.js';
import { costOf } from '../quota/step.js';
import { resolve, type Resolution } from './resolve.js';

export const RESOLUTION_MEMO_ENTRIES = 10_000;

export interface Resolved {
  resolution: Resolution;
  /** Credits the route costs when the request is valid; 0 otherwise. */
  cost: number;
  /** The route's cache TTL (0: not cached). */
  ttlSeconds: number;
  /** The cache key for requests without show-scam-tokens ('' when the request is invalid). */
  cacheKey: string;
}

export class Resolver {
  private readonly memo = new LRUCache<string, Resolved>({ max: RESOLUTION_MEMO_ENTRIES });

  constructor(
    private readonly chains: { has(id: string): boolean },
    private readonly config: Pick<Config, 'costs' | 'cache'>,
  ) {}

  resolve(rawUrl: string): Resolved {
    const known = this.memo.get(rawUrl);
    if (known) return known;
    const resolution = resolve(rawUrl, this.chains);
    const valid = resolution.kind === 'route' && resolution.validation.ok ? resolution : undefined;
    const resolved: Resolved = {
      resolution,
      cost: valid ? costOf(this.config.costs, valid.route) : 0,
      ttlSeconds: valid ? ttlSecondsFor(this.config.cache, valid.route) : 0,
      cacheKey: valid && valid.validation.ok ? cacheKey(valid.chainId, valid.validation.upstreamPath, undefined) : '',
    };
    // Not when the query carried a key, however it was spelled (`%61pikey=` decodes to apikey).
    const carriesKey = resolution.kind === 'route' ? resolution.apikeys.length > 0 : /apikey/i.test(decodeURIComponentSafe(rawUrl));
    if (!carriesKey && !rawUrl.includes('apikey')) this.memo.set(rawUrl, resolved);
    return resolved;
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
