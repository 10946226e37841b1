// resolve() with a bounded memo per URL, from a URL's second request on: a repeated request (the common case behind a cache)
// skips parsing and zod, and finds what depends only on the URL and the configuration (cost,
// TTL, cache key) already worked out. The URL comes without its `apikey` (auth/query-key.ts), so
// no client key is kept as a memo key and one entry serves every client. A reload builds a new
// Resolver.
import { LRUCache } from 'lru-cache';
import { cacheKey } from '../cache/policy.js';
import { costOf, proxyCost, rpcTtlSeconds, ttlSecondsFor, type CostSettings, type TtlSettings } from './settings.js';
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

/**
 * URLs seen once, as bits of their hashes (a Bloom filter of two probes; no URL is kept): the
 * memo admits a URL on its second sighting. A stream of URLs that never repeat (misses, each a
 * new address) then leaves nothing behind to be promoted and collected later: memoising every
 * one cost a miss ~10 us of garbage collection (bench/results/2026-11-23-miss-path.md). The
 * doorkeeper of TinyLFU (Einziger, Friedman, Manes: https://arxiv.org/abs/1512.00727) does the
 * same for a cache. A false positive only memoises a URL at its first sighting.
 */
export class SeenOnce {
  private readonly bits: Uint32Array;
  private readonly mask: number;
  private added = 0;

  /** `log2Bits` bits; cleared after bits/16 additions, which keeps false positives below 2 %. */
  constructor(log2Bits = 17) {
    this.bits = new Uint32Array((1 << log2Bits) / 32);
    this.mask = (1 << log2Bits) - 1;
  }

  /** Whether `s` was (probably) added since the last clearing; adds it if not. */
  seen(s: string): boolean {
    // FNV-1a over the UTF-16 code units (http://www.isthe.com/chongo/tech/comp/fnv/).
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    const a = h & this.mask;
    const b = (Math.imul(h, 0x9e3779b1) >>> 7) & this.mask;
    const bits = this.bits;
    if ((bits[a >>> 5]! & (1 << (a & 31))) !== 0 && (bits[b >>> 5]! & (1 << (b & 31))) !== 0) return true;
    if (++this.added > (this.mask + 1) / 16) {
      bits.fill(0);
      this.added = 1;
    }
    bits[a >>> 5]! |= 1 << (a & 31);
    bits[b >>> 5]! |= 1 << (b & 31);
    return false;
  }
}

export class Resolver {
  private readonly memo = new LRUCache<string, Resolved>({ max: RESOLUTION_MEMO_ENTRIES });
  private readonly seenOnce = new SeenOnce();

  constructor(
    private readonly chains: { has(id: string): boolean },
    private readonly config: { readonly costs: CostSettings; readonly cache: TtlSettings },
  ) {}

  resolve(url: string): Resolved {
    const known = this.memo.get(url);
    if (known) return known;
    const resolved = this.resolveOnce(url);
    if (this.seenOnce.seen(url)) this.memo.set(url, resolved);
    return resolved;
  }

  /** resolve() without the memo: for targets made from a POSTed form, which may be large and never repeat. */
  resolveOnce(url: string): Resolved {
    const resolution = resolve(url, this.chains);
    const valid = resolution.kind === 'route' && resolution.validation.ok ? resolution : undefined;
    if (valid?.call !== undefined) {
      const { call } = valid;
      return {
        resolution,
        cost: proxyCost(this.config.costs, valid.route, call.method),
        ttlSeconds: rpcTtlSeconds(this.config.cache, call.method, call.freshness, valid.route),
        cacheKey: cacheKey(valid.chainId, call),
      };
    }
    return {
      resolution,
      cost: valid ? costOf(this.config.costs, valid.route) : 0,
      ttlSeconds: valid ? ttlSecondsFor(this.config.cache, valid.route) : 0,
      cacheKey: valid && valid.validation.ok ? cacheKey(valid.cacheScope ?? valid.chainId, valid.validation.upstreamPath, undefined) : '',
    };
  }
}
