// Finality-aware caching, its pure parts: the head and its line, what an answer is about, where
// its confirmations sit, and the lifetime a miss gets.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findConfirmations, withConfirmations } from '../../src/cache/confirmations.js';
import { entryBody, packed, type CacheEntry, type LifetimeOf } from '../../src/cache/policy.js';
import { REFRESH_RETRY_MS, ResponseCache } from '../../src/cache/response-cache.js';
import { judge, mayJudge, MAX_JUDGED_BYTES, type Asked } from '../../src/finality/classify.js';
import { DEFAULT_FINALITY_DEPTH, finalityDepth } from '../../src/finality/depth.js';
import { ChainHead, staleAfterMs } from '../../src/finality/head.js';
import { lifetimeOf } from '../../src/finality/lifetime.js';
import { polledHead } from '../../src/finality/poll.js';
import type { RpcMethod } from '../../src/rpc/methods.js';
import type { UpstreamAnswer } from '../../src/upstream/client.js';

const T0 = 1_000_000; // an arbitrary instant: nothing here reads the real clock
const v2 = (route: string, upstreamPath: string): Asked => ({ kind: 'path', route, upstreamPath });
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const answer = (value: unknown): UpstreamAnswer => ({ status: 200, headers: {}, body: json(value), upstream: 'u', ms: 1 });

describe('ChainHead', () => {
  it('keeps the highest block seen and draws the finality line depth blocks behind it', () => {
    const head = new ChainHead('1', 64, 5);
    expect(head.finalLine(T0)).toBeUndefined();
    head.observe(1_000, T0);
    head.observe(990, T0 + 1); // an upstream behind the others
    expect(head.current(T0 + 2)).toBe(1_000);
    expect(head.finalLine(T0 + 2)).toBe(936);
  });

  it('goes stale after three poll intervals (30 s at least), and a new sighting revives it', () => {
    const head = new ChainHead('1', 10, 5);
    head.observe(500, T0);
    expect(staleAfterMs(5)).toBe(30_000);
    expect(head.finalLine(T0 + 30_000)).toBe(490);
    expect(head.finalLine(T0 + 30_001)).toBeUndefined();
    expect(head.number).toBe(500); // still shown, with its age
    expect(head.ageSeconds(T0 + 30_001)).toBeCloseTo(30.001);
    head.observe(500, T0 + 40_000); // a quiet chain: the same head, confirmed again
    expect(head.finalLine(T0 + 40_000)).toBe(490);
  });

  it('ignores what is not a block height', () => {
    const head = new ChainHead('1', 10, 5);
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) head.observe(bad, T0);
    expect(head.number).toBeUndefined();
  });

  it('is due a poll only when nothing confirmed it for a poll interval, and never with polls off', () => {
    const head = new ChainHead('1', 10, 5);
    expect(head.pollDue(T0)).toBe(true);
    head.observe(7, T0);
    expect(head.pollDue(T0 + 4_999)).toBe(false);
    expect(head.pollDue(T0 + 5_000)).toBe(true);
    head.polling = true;
    expect(head.pollDue(T0 + 5_000)).toBe(false);
    expect(new ChainHead('1', 10, 0).pollDue(T0)).toBe(false);
  });

  it('reads a poll answer', () => {
    expect(polledHead({ status: 200, body: json({ jsonrpc: '2.0', id: 1, result: '0x1b4' }) })).toBe(436);
    expect(polledHead({ status: 200, body: json({ jsonrpc: '2.0', id: 1, error: { code: -32000 } }) })).toBeUndefined();
    expect(polledHead({ status: 502, body: Buffer.from('<html>') })).toBeUndefined();
  });
});

describe('finality depths', () => {
  it('takes the configured depth, else the known one, else the conservative default', () => {
    expect(finalityDepth('1', undefined)).toBe(64);
    expect(finalityDepth('1', 3)).toBe(3);
    expect(finalityDepth('424242', undefined)).toBe(DEFAULT_FINALITY_DEPTH);
  });
});

describe('judge: which block an answer is about', () => {
  it('a block by number or hash, unless reorged or being refetched', () => {
    const asked = v2('blocks/{block_hash_or_number_param}', '/api/v2/blocks/100');
    expect(judge(asked, json({ height: 100, type: 'block' })).block).toBe(100);
    expect(judge(asked, json({ height: 100, type: 'reorg' })).block).toBeUndefined();
    expect(judge(asked, json({ height: 100, type: 'block', is_pending_update: true })).block).toBeUndefined();
  });

  it('a transaction by its block, with the head its confirmations imply; a pending one is never final', () => {
    const asked = v2('transactions/{transaction_hash_param}', '/api/v2/transactions/0xab');
    const mined = judge(asked, json({ hash: '0xab', block_number: 90, confirmations: 11 }));
    expect(mined).toEqual({ block: 90, head: 100, tip: false, confirmations: [90] });
    const pending = judge(asked, json({ hash: '0xab', block_number: null, confirmations: 0 }));
    expect(pending.block).toBeUndefined();
  });

  it("a transaction's logs by their blocks; an empty list cannot be told", () => {
    const asked = v2('transactions/{transaction_hash_param}/logs', '/api/v2/transactions/0xab/logs');
    expect(judge(asked, json({ items: [{ block_number: 90 }, { block_number: 90 }], next_page_params: null })).block).toBe(90);
    expect(judge(asked, json({ items: [], next_page_params: null })).block).toBeUndefined();
  });

  it('what a block holds, by the number asked for', () => {
    const asked = v2('blocks/{block_hash_or_number_param}/transactions', '/api/v2/blocks/50/transactions');
    expect(judge(asked, json({ items: [{ block_number: 50, confirmations: 51 }] })).block).toBe(50);
  });

  it('a later page of a list below its cursor, in the default order only; a first page never', () => {
    const route = 'transactions';
    const page = '/api/v2/addresses/0x01/transactions?block_number=40&index=3&items_count=50';
    const items = {
      items: [
        { block_number: 40, confirmations: 61 },
        { block_number: 12, confirmations: 89 },
      ],
    };
    expect(judge(v2(route, page), json(items)).block).toBe(40);
    expect(judge(v2(route, `${page}&sort=value&order=desc`), json(items)).block).toBeUndefined();
    expect(judge(v2(route, `${page}&sort=block_number&order=asc`), json(items)).block).toBeUndefined();
    expect(judge(v2(route, '/api/v2/addresses/0x01/transactions'), json(items)).block).toBeUndefined();
    // An item above the cursor: not what a cursor page holds, so not trusted.
    expect(judge(v2(route, page), json({ items: [{ block_number: 41, confirmations: 1 }] })).block).toBeUndefined();
  });

  it('legacy actions with an explicit block or end of range, and gettxinfo by its answer', () => {
    const ok = (result: unknown) => json({ status: '1', message: 'OK', result });
    expect(judge(v2('legacy.block.getblockreward', '/api?module=block&action=getblockreward&blockno=77'), ok({})).block).toBe(77);
    expect(judge(v2('legacy.account.txlist', '/api?module=account&action=txlist&address=0x01&endblock=70'), ok([])).block).toBe(70);
    expect(judge(v2('legacy.account.txlist', '/api?module=account&action=txlist&address=0x01'), ok([])).block).toBeUndefined();
    expect(judge(v2('legacy.logs.getLogs', '/api?module=logs&action=getLogs&fromBlock=1&toBlock=latest'), ok([])).block).toBeUndefined();
    const info = judge(
      v2('legacy.transaction.gettxinfo', '/api?module=transaction&action=gettxinfo&txhash=0xab'),
      ok({ blockNumber: '60', confirmations: '41' }),
    );
    expect(info).toEqual({ block: 60, head: 100, tip: false, confirmations: [60] });
    expect(
      judge(
        v2('legacy.block.eth_block_number', '/api?module=block&action=eth_block_number'),
        json({ jsonrpc: '2.0', id: 1, result: '0x64' }),
      ).head,
    ).toBe(100);
  });

  it('JSON-RPC calls by their explicit block, or the block of their answer', () => {
    const call = (method: RpcMethod, params: unknown[]): Asked => ({ kind: 'call', method, params });
    const member = (result: unknown) => Buffer.from(`"result":${JSON.stringify(result)}`);
    expect(judge(call('eth_getBlockByNumber', ['0x10', false]), member({ number: '0x10' })).block).toBe(16);
    expect(judge(call('eth_getBlockByNumber', ['latest', false]), member({ number: '0x99' }))).toMatchObject({
      block: undefined,
      head: 153,
    });
    expect(judge(call('eth_getTransactionReceipt', ['0xab']), member({ blockNumber: '0x20' })).block).toBe(32);
    expect(judge(call('eth_getTransactionReceipt', ['0xab']), Buffer.from('"result":null')).block).toBeUndefined();
    expect(judge(call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x30' }]), member([])).block).toBe(48);
    expect(judge(call('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]), member([])).block).toBeUndefined();
    expect(judge(call('eth_getBalance', ['0x01', { blockNumber: '0x5' }]), member('0x0')).block).toBe(5);
    expect(judge(call('eth_call', [{ to: '0x01' }, 'latest']), member('0x')).block).toBeUndefined();
    expect(judge(call('eth_blockNumber', []), member('0xff')).head).toBe(255);
  });

  it('the tip lists show the head and are never final', () => {
    const blocks = judge(
      v2('blocks', '/api/v2/blocks'),
      json({
        items: [
          { height: 120, type: 'block' },
          { height: 119, type: 'block' },
        ],
      }),
    );
    expect(blocks).toMatchObject({ block: undefined, head: 120 });
    expect(judge(v2('main-page/blocks', '/api/v2/main-page/blocks'), json([{ height: 121, type: 'block' }])).head).toBe(121);
  });

  it('leaves other routes alone, unparsed', () => {
    expect(judge(v2('stats', '/api/v2/stats'), Buffer.from('not json'))).toEqual({
      block: undefined,
      head: undefined,
      tip: false,
      confirmations: [],
    });
  });
});

describe('confirmations in a long-lived entry', () => {
  it('are found where they sit and rewritten from the head, growing only', () => {
    const body = Buffer.from(
      '{"a":{"confirmations":3,"block_number":98},"confirmations" : "12","blockNumber":"89","x":"\\"confirmations\\":1"}',
    );
    const marks = findConfirmations(body, [98, 89])!;
    expect(marks.stored).toEqual([3, 12]);
    const later = withConfirmations(body, marks, 1_000);
    expect(JSON.parse(later.toString())).toMatchObject({ a: { confirmations: 903 }, confirmations: '912' });
    // A head behind the one the explorer answered with: never fewer than stored.
    expect(JSON.parse(withConfirmations(body, marks, 50).toString())).toMatchObject({ a: { confirmations: 3 }, confirmations: '12' });
  });

  it('are not marked when the text holds a different number of them', () => {
    expect(findConfirmations(Buffer.from('{"confirmations":1}'), [1, 2])).toBeUndefined();
  });
});

describe('lifetimeOf', () => {
  const asked = v2('transactions/{transaction_hash_param}', '/api/v2/transactions/0xab');
  const tx = (block: number, confirmations: number) => answer({ hash: '0xab', block_number: block, confirmations });

  it('keeps an answer below the line for finalTtlSeconds, and tells the head what the answer shows', () => {
    const head = new ChainHead('1', 10, 5);
    const life = lifetimeOf(head, 86_400, asked)!;
    const kept = life(tx(50, 51), T0); // implies head 100: line 90
    expect(head.number).toBe(100);
    expect(kept).toMatchObject({ final: true, ttlSeconds: 86_400, tip: false });
    expect(kept?.confirmations?.block).toEqual([50]);
  });

  it('keeps the route TTL within the depth, with no head or a stale one, and when finality is off', () => {
    const head = new ChainHead('1', 10, 5);
    const life = lifetimeOf(head, 86_400, asked)!;
    // Head 100, line 90: 95 is within the depth. Moving, but its confirmations are still marked.
    const moving = life(tx(95, 6), T0);
    expect(moving).toMatchObject({ final: false, tip: false });
    expect(moving?.confirmations?.block).toEqual([95]);
    expect(life(tx(50, 51), T0 + staleAfterMs(5) + 1)?.final).toBe(true); // the answer itself renewed the head
    const unknown = new ChainHead('1', 10, 5);
    const lone = lifetimeOf(unknown, 86_400, v2('blocks/{block_hash_or_number_param}', '/api/v2/blocks/5'))!;
    expect(lone(answer({ height: 5, type: 'block' }), T0)).toBeUndefined();
    unknown.observe(100, T0);
    expect(lone(answer({ height: 5, type: 'block' }), T0 + 30_001)).toBeUndefined(); // stale
    expect(lone(answer({ height: 5, type: 'block' }), T0 + 1)?.final).toBe(true);
    expect(
      lifetimeOf(unknown, 0, v2('blocks/{block_hash_or_number_param}', '/api/v2/blocks/5'))!(answer({ height: 5 }), T0 + 1),
    ).toBeUndefined();
  });

  it('marks the tip, which is never served stale while it is refreshed', () => {
    const head = new ChainHead('1', 10, 5);
    const tip = lifetimeOf(head, 86_400, v2('main-page/blocks', '/api/v2/main-page/blocks'))!;
    expect(tip(answer([{ height: 120, type: 'block' }]), T0)).toEqual({
      final: false,
      ttlSeconds: 86_400,
      confirmations: undefined,
      tip: true,
    });
    expect(head.number).toBe(120);
  });

  it('is not made at all for routes whose answers are never judged', () => {
    expect(lifetimeOf(new ChainHead('1', 10, 5), 86_400, v2('stats', '/api/v2/stats'))).toBeUndefined();
  });
});

describe('final entries in the in-process tier', () => {
  // A 4 KB answer that deflates well, as explorer JSON does.
  const bodyOf = (i: number) =>
    json({ items: Array.from({ length: 40 }, (_, j) => ({ block_number: i, index: j, status: 'ok', result: 'success' })) });
  const final: LifetimeOf = () => ({ final: true, ttlSeconds: 86_400, confirmations: undefined, tip: false });
  const fetchOf = (i: number) => () => Promise.resolve({ status: 200, headers: {}, body: bodyOf(i), upstream: 'u', ms: 1 });

  it('are kept as they are while the tier is less than half full, deflated after, and served whole', async () => {
    const cache = new ResponseCache({ maxBytes: 64 * 1024, staleSeconds: 60, now: () => T0 });
    let i = 0;
    while (cache.bytes * 2 < 64 * 1024) await cache.get(`k${i}`, 30, fetchOf(i++), final);
    const rawEntry = cache.peek('k0', 30, T0)!;
    expect(rawEntry.deflated).toBe(false);
    const before = cache.bytes;
    await cache.get('late', 30, fetchOf(1_000), final);
    const late = cache.peek('late', 30, T0)!;
    expect(late.deflated).toBe(true);
    expect(cache.bytes - before).toBeLessThan(bodyOf(1_000).length / 2);
    expect(entryBody(late)).toEqual(bodyOf(1_000));
    // A moving entry is never deflated: it is read often and lives seconds.
    await cache.get('moving', 30, fetchOf(2_000));
    expect(cache.peek('moving', 30, T0)!.deflated).toBe(false);
    expect(cache.counters.finalStores).toBe(i + 1);
  });

  it('are never packed when deflate gains little', () => {
    const noise = randomBytes(4096);
    const entry = { ...packed({ ...baseEntry(), body: noise }) };
    expect(entry.deflated).toBe(false);
  });
});

function baseEntry(): CacheEntry {
  return {
    status: 200,
    headers: {},
    body: Buffer.alloc(0),
    headerLines: [],
    corsLines: undefined,
    corsFor: undefined,
    storedAt: T0,
    freshUntil: T0 + 1,
    staleUntil: T0 + 2,
    final: true,
    confirmations: undefined,
    tip: false,
    deflated: false,
  };
}

describe('the tip past its freshness', () => {
  const tip: LifetimeOf = () => ({ final: false, ttlSeconds: 86_400, confirmations: undefined, tip: true });
  const ok = (n: number) => () => Promise.resolve({ status: 200, headers: {}, body: json({ n }), upstream: 'u', ms: 1 });

  it('is asked for again at once, not served stale while a refresh runs; stale only when the upstream fails', async () => {
    const clock = { now: T0 };
    const cache = new ResponseCache({ maxBytes: 1 << 20, staleSeconds: 60, now: () => clock.now });
    await cache.get('tip', 5, ok(1), tip);
    clock.now += 6_000; // past the TTL, inside the stale window
    const again = await cache.get('tip', 5, ok(2), tip);
    expect(again.outcome).toBe('MISS');
    expect(JSON.parse(again.entry.body.toString())).toEqual({ n: 2 });
    clock.now += 6_000;
    const failed = await cache.get('tip', 5, () => Promise.reject(new Error('upstream down')), tip);
    expect(failed.outcome).toBe('STALE');
    expect(JSON.parse(failed.entry.body.toString())).toEqual({ n: 2 });
    // While the upstream keeps failing, the tip is served stale at once, asked for again only after a pause.
    let asked = 0;
    const down = () => {
      asked++;
      return Promise.reject(new Error('upstream down'));
    };
    expect((await cache.get('tip', 5, down, tip)).outcome).toBe('STALE');
    expect(asked).toBe(0);
    await cache.idle();
    clock.now += REFRESH_RETRY_MS;
    expect((await cache.get('tip', 5, down, tip)).outcome).toBe('STALE');
    await cache.idle();
    expect(asked).toBe(1);
    // Back: the pause over, one refresh brings it fresh, and the next expiry is asked for at once again.
    clock.now += REFRESH_RETRY_MS;
    expect((await cache.get('tip', 5, ok(5), tip)).outcome).toBe('STALE');
    await cache.idle();
    expect(JSON.parse((await cache.get('tip', 5, ok(6), tip)).entry.body.toString())).toEqual({ n: 5 });
    clock.now += 6_000;
    expect((await cache.get('tip', 5, ok(7), tip)).outcome).toBe('MISS');
    // Any other entry is served stale while it is refreshed, as before.
    await cache.get('other', 5, ok(3));
    clock.now += 6_000;
    expect((await cache.get('other', 5, ok(4))).outcome).toBe('STALE');
  });
});

describe('what is parsed', () => {
  it('only the routes that can be final or show the head, and never a body over 1 MiB', () => {
    const big = Buffer.from(JSON.stringify({ height: 5, type: 'block', pad: 'x'.repeat(MAX_JUDGED_BYTES) }));
    expect(judge(v2('blocks/{block_hash_or_number_param}', '/api/v2/blocks/5'), big).block).toBeUndefined();
    expect(mayJudge(v2('transactions/{transaction_hash_param}/raw-trace', '/api/v2/transactions/0xab/raw-trace'))).toBe(false);
    expect(mayJudge(v2('legacy.stats.ethprice', '/api?module=stats&action=ethprice'))).toBe(false);
    expect(mayJudge(v2('transactions', '/api/v2/addresses/0x01/transactions'))).toBe(true);
    expect(mayJudge(v2('tokens/{address_hash_param}/transfers', '/api/v2/tokens/0x01/transfers?block_number=5&index=1'))).toBe(true);
  });
});
