// resolve() with a bounded memo per raw URL: a repeated request (the common case behind a
// cache) skips parsing and zod. URLs that carry `apikey` are never memoised, so no client key
// is kept as a memo key.
import { LRUCache } from 'lru-cache';
import { resolve, type Resolution } from './resolve.js';

export const RESOLUTION_MEMO_ENTRIES = 10_000;

export class Resolver {
  private readonly memo = new LRUCache<string, Resolution>({ max: RESOLUTION_MEMO_ENTRIES });

  constructor(private readonly chains: { has(id: string): boolean }) {}

  resolve(rawUrl: string): Resolution {
    const known = this.memo.get(rawUrl);
    if (known) return known;
    const resolution = resolve(rawUrl, this.chains);
    if (!rawUrl.includes('apikey')) this.memo.set(rawUrl, resolution);
    return resolution;
  }
}
