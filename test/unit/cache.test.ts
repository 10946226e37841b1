import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/cache/coalesce.js';
import { ageSeconds, cacheKey, ENTRY_OVERHEAD_BYTES, isStorable, toEntry } from '../../src/cache/policy.js';
import { costOf, ttlSecondsFor } from '../../src/routes/settings.js';
import { decodeEntry, encodeEntry } from '../../src/cache/redis-tier.js';
import { ResponseCache, REFRESH_RETRY_MS } from '../../src/cache/response-cache.js';
import { configSchema } from '../../src/config/schema.js';
import { GatewayError } from '../../src/http/errors.js';
import type { UpstreamAnswer } from '../../src/upstream/client.js';

const answer = (body: string, status = 200, headers: Record<string, string> = { 'content-type': 'application/json' }): UpstreamAnswer => ({
  status,
  headers,
  body: Buffer.from(body),
  upstream: 'http://u',
  ms: 1,
});

function counting(make: () => UpstreamAnswer | Error) {
  const f = async () => {
    f.calls++;
    await new Promise((r) => setImmediate(r)); // answered later, as an upstream is
    const a = make();
    if (a instanceof Error) throw a;
    return a;
  };
  f.calls = 0;
  return f;
}

describe('cache policy', () => {
  const cache = configSchema.shape.cache.parse({
    ttlSeconds: { legacy: 45, 'legacy.getTokenHolders': 0, 'blocks/{block_hash_or_number_param}': 7 },
  });
  const defaults = configSchema.shape.cache.parse({});

  it("takes a route's own TTL, else `legacy` for legacy actions, else the family's default", () => {
    expect(ttlSecondsFor(cache, 'blocks/{block_hash_or_number_param}')).toBe(7);
    expect(ttlSecondsFor(cache, 'legacy.getToken')).toBe(45);
    expect(ttlSecondsFor(cache, 'legacy.account.balance')).toBe(45);
    expect(ttlSecondsFor(cache, 'legacy.getTokenHolders')).toBe(0);
    expect(ttlSecondsFor(cache, 'token-balances')).toBe(15);
    // Defaults: the two routes served first keep theirs; the families of routes/table.ts.
    expect(ttlSecondsFor(defaults, 'token-balances')).toBe(15);
    expect(ttlSecondsFor(defaults, 'transactions')).toBe(5);
    expect(ttlSecondsFor(defaults, 'legacy.getToken')).toBe(30);
    expect(ttlSecondsFor(defaults, 'main-page/blocks')).toBe(5);
    expect(ttlSecondsFor(defaults, 'transactions/{transaction_hash_param}/logs')).toBe(30);
    expect(ttlSecondsFor(defaults, 'smart-contracts/{address_hash_param}')).toBe(300);
    expect(ttlSecondsFor(defaults, 'addresses/{address_hash_param}/transactions/csv')).toBe(0);
  });

  it("costs a route's own price, else the PRO API's, else costs.default", () => {
    const costs = configSchema.shape.costs.parse({ default: 10, routes: { 'search/quick': 1 } });
    expect(costOf(costs, 'search/quick')).toBe(1);
    expect(costOf(costs, 'transactions/{transaction_hash_param}/summary')).toBe(50);
    expect(costOf(costs, 'blocks/{block_hash_or_number_param}')).toBe(10);
    expect(costOf(configSchema.shape.costs.parse({}), 'blocks/{block_hash_or_number_param}')).toBe(20);
  });

  it('keys by chain, upstream path and show-scam-tokens only', () => {
    expect(cacheKey('1', '/api/v2/x?a=1', undefined)).not.toBe(cacheKey('100', '/api/v2/x?a=1', undefined));
    expect(cacheKey('1', '/api/v2/x', 'true')).not.toBe(cacheKey('1', '/api/v2/x', undefined));
    // Forwarded as sent, so keyed as sent: "TRUE" is not "true" to an instance.
    expect(cacheKey('1', '/api/v2/x', 'TRUE')).not.toBe(cacheKey('1', '/api/v2/x', 'true'));
  });

  it('stores 200 answers only, never no-store ones, never with TTL 0', () => {
    expect(isStorable(answer('{}'), 15)).toBe(true);
    expect(isStorable(answer('{}', 404), 15)).toBe(false);
    expect(isStorable(answer('{}'), 0)).toBe(false);
    expect(isStorable(answer('{}', 200, { 'cache-control': 'private, no-store' }), 15)).toBe(false);
    expect(isStorable(answer('{}', 200, { 'cache-control': 'max-age=0, private, must-revalidate' }), 15)).toBe(true);
  });

  it('ages in whole seconds', () => {
    const e = toEntry(answer('{}'), 1_000, 15, 60);
    expect(e).toMatchObject({ storedAt: 1_000, freshUntil: 16_000, staleUntil: 76_000 });
    expect(ageSeconds(e, 3_999)).toBe(2);
  });
});

describe('header lines of an entry', () => {
  it("are its fields, its length, then the per-answer headers with empty values; the answer's own names win", () => {
    // An entry from the shared tier may have been stored by an older gateway that kept these.
    const e = toEntry(
      answer('{"a":1}', 200, {
        'content-type': 'application/json',
        vary: 'accept',
        age: '100',
        'x-cache': 'HIT from cdn',
        'content-length': '99',
      }),
      0,
      15,
      60,
    );
    expect(e.headerLines).toEqual([
      'content-type',
      'application/json',
      'vary',
      'accept',
      'content-length',
      '7',
      'x-request-id',
      '',
      'x-cache',
      '',
      'age',
      '',
      'x-ratelimit-limit',
      '',
      'x-ratelimit-remaining',
      '',
      'x-ratelimit-reset',
      '',
      'x-credits-remaining',
      '',
    ]);
  });

  it('repeat a field with several values', () => {
    const e = toEntry({ status: 200, headers: { link: ['<a>', '<b>'] }, body: Buffer.from(''), upstream: 'u', ms: 1 }, 0, 15, 60);
    expect(e.headerLines.slice(0, 6)).toEqual(['link', '<a>', 'link', '<b>', 'content-length', '0']);
  });
});

describe('Coalescer', () => {
  it('runs identical work once, shares its result and forgets it afterwards', async () => {
    const c = new Coalescer<number>();
    let runs = 0;
    const work = async () => {
      runs++;
      await new Promise((r) => setImmediate(r));
      return 42;
    };
    const calls = Array.from({ length: 10 }, () => c.run('k', work));
    expect(calls.filter((x) => x.joined)).toHaveLength(9);
    expect(await Promise.all(calls.map((x) => x.promise))).toEqual(Array(10).fill(42));
    expect(runs).toBe(1);
    expect(c.size).toBe(0);
  });

  it('gives every waiter the same error', async () => {
    const c = new Coalescer<number>();
    const err = new Error('boom');
    const calls = [c.run('k', () => Promise.reject(err)), c.run('k', () => Promise.resolve(1))];
    for (const x of calls) await expect(x.promise).rejects.toBe(err);
  });
});

describe('ResponseCache', () => {
  it('peek() gives only a fresh entry (counted as a hit); anything else is left to get()', async () => {
    const cache = new ResponseCache({ maxBytes: 1_000_000, staleSeconds: 60, now: () => 0 });
    expect(cache.peek('k', 10, 0)).toBeUndefined();
    await cache.get(
      'k',
      10,
      counting(() => answer('{}')),
    );
    expect(cache.peek('k', 10, 9_999)?.body.toString()).toBe('{}');
    expect(cache.peek('k', 10, 10_000)).toBeUndefined(); // stale: get() serves it and refreshes
    expect(cache.peek('k', 0, 0)).toBeUndefined(); // a route with TTL 0 is never answered from the cache
    expect(cache.counters).toMatchObject({ hits: 1, misses: 1 });
  });

  it('is a miss, then a hit, then stale with one background refresh, then a hit again', async () => {
    let now = 0;
    const cache = new ResponseCache({ maxBytes: 1_000_000, staleSeconds: 60, now: () => now });
    let n = 0;
    const fetch = counting(() => answer(`{"n":${n++}}`));
    expect((await cache.get('k', 10, fetch)).outcome).toBe('MISS');
    expect((await cache.get('k', 10, fetch)).outcome).toBe('HIT');
    now = 10_000;
    const stale = await Promise.all([cache.get('k', 10, fetch), cache.get('k', 10, fetch)]);
    expect(stale.map((s) => s.outcome)).toEqual(['STALE', 'STALE']);
    expect(stale[0].entry.body.toString()).toBe('{"n":0}');
    await cache.idle();
    expect(fetch.calls).toBe(2);
    const fresh = await cache.get('k', 10, fetch);
    expect(fresh).toMatchObject({ outcome: 'HIT' });
    expect(fresh.entry.body.toString()).toBe('{"n":1}');
  });

  it('keeps serving the old entry while the upstream fails, retrying after a pause, until staleSeconds run out', async () => {
    let now = 0;
    const cache = new ResponseCache({ maxBytes: 1_000_000, staleSeconds: 60, now: () => now });
    let failing = false;
    const fetch = counting(() => (failing ? new GatewayError('UPSTREAM_TIMEOUT') : answer('{"ok":true}')));
    await cache.get('k', 10, fetch);
    failing = true;
    now = 20_000;
    expect((await cache.get('k', 10, fetch)).outcome).toBe('STALE');
    await cache.idle();
    expect((await cache.get('k', 10, fetch)).outcome).toBe('STALE');
    expect(fetch.calls).toBe(2); // one failed refresh, no retry yet
    now += REFRESH_RETRY_MS;
    await cache.get('k', 10, fetch);
    await cache.idle();
    expect(fetch.calls).toBe(3);
    now = 70_001;
    await expect(cache.get('k', 10, fetch)).rejects.toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
  });

  it('pauses refreshes while the upstream answers something not worth keeping (a 429)', async () => {
    let now = 0;
    const cache = new ResponseCache({ maxBytes: 1_000_000, staleSeconds: 60, now: () => now });
    let limited = false;
    const fetch = counting(() => (limited ? answer('{"message":"Too many requests"}', 429) : answer('{}')));
    await cache.get('k', 10, fetch);
    limited = true;
    now = 20_000;
    for (let i = 0; i < 10; i++) {
      expect((await cache.get('k', 10, fetch)).outcome).toBe('STALE');
      await cache.idle();
    }
    expect(fetch.calls).toBe(2); // the fill, and one refresh
  });

  it('never keeps errors or non-200 answers', async () => {
    const cache = new ResponseCache({ maxBytes: 1_000_000, staleSeconds: 60, now: () => 0 });
    const notFound = counting(() => answer('{}', 404));
    await cache.get('a', 10, notFound);
    await cache.get('a', 10, notFound);
    expect(notFound.calls).toBe(2);
    const failing = counting(() => new GatewayError('UPSTREAM_ERROR'));
    await expect(cache.get('b', 10, failing)).rejects.toBeInstanceOf(GatewayError);
    await expect(cache.get('b', 10, failing)).rejects.toBeInstanceOf(GatewayError);
    expect(failing.calls).toBe(2);
    expect(cache.entries).toBe(0);
  });

  it('evicts the least recently used entries to stay within its byte budget', async () => {
    const body = 'x'.repeat(1_000);
    const perEntry = body.length + ENTRY_OVERHEAD_BYTES + 'k0'.length;
    const cache = new ResponseCache({ maxBytes: perEntry * 3, staleSeconds: 60, now: () => 0 });
    const fetch = counting(() => answer(body));
    for (const k of ['k0', 'k1', 'k2']) await cache.get(k, 10, fetch);
    await cache.get('k0', 10, fetch); // k0 is now the most recently used
    await cache.get('k3', 10, fetch); // evicts k1
    expect(cache.bytes).toBeLessThanOrEqual(perEntry * 3);
    expect(cache.entries).toBe(3);
    expect((await cache.get('k0', 10, fetch)).outcome).toBe('HIT');
    expect((await cache.get('k1', 10, fetch)).outcome).toBe('MISS');
  });

  it('with maxBytes 0 keeps nothing but still coalesces', async () => {
    const cache = new ResponseCache({ maxBytes: 0, staleSeconds: 60, now: () => 0 });
    const fetch = counting(() => answer('{}'));
    await Promise.all([cache.get('k', 10, fetch), cache.get('k', 10, fetch)]);
    await cache.get('k', 10, fetch);
    expect(fetch.calls).toBe(2);
  });
});

describe('shared tier encoding', () => {
  it('round-trips entries, deflating large bodies', async () => {
    const big = toEntry(answer(JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ i, token: 'STAKE on xDai' })))), 5, 15, 60);
    const encoded = await encodeEntry(big);
    expect(encoded.length).toBeLessThan(big.body.length / 2);
    expect(await decodeEntry(encoded)).toEqual(big);
    const small = toEntry(answer('[]'), 5, 15, 60);
    expect(await decodeEntry(await encodeEntry(small))).toEqual(small);
  });

  it('refuses garbage', async () => {
    expect(await decodeEntry(Buffer.from([9, 0, 0, 0, 1, 0]))).toBeUndefined();
  });
});
