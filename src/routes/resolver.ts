// resolve() with a bounded memo per URL: a repeated request (the common case behind a cache)
// skips parsing and zod, and finds what depends only on the URL and the configuration (cost,
// TTL, cache key) already worked out. The URL comes without its `apikey` (auth/query-key.ts), so
// no client key is kept as a memo key and one entry serves every client. A reload builds a new
// Resolver.
import { LRUCache } from 'lru-cache';
import { cacheKey } from '../cache/policy.js';
import type { Config } from '../config/schema.js';
import { costOf, ttlSecondsFor } from './settings.js';
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

  resolve(url: string): Resolved {
    const known = this.memo.get(url);
    if (known) return known;
    const resolution = resolve(url, this.chains);
    const valid = resolution.kind === 'route' && resolution.validation.ok ? resolution : undefined;
    const resolved: Resolved = {
      resolution,
      cost: valid ? costOf(this.config.costs, valid.route) : 0,
      ttlSeconds: valid ? ttlSecondsFor(this.config.cache, valid.route) : 0,
      cacheKey: valid && valid.validation.ok ? cacheKey(valid.chainId, valid.validation.upstreamPath, undefined) : '',
    };
    this.memo.set(url, resolved);
    return resolved;
  }
}
