// The pure parts of `npm run bench -- --replay` (bench/replay.ts): the seeded workload, the
// requests made of it, the ideal cache's lower bound, the freshness check, the report, the flags.
import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/args.js';
import { replayConfig } from '../../bench/replay/config.js';
import { FRESHNESS_GRACE_MS, freshnessExcessMs, impliedHeads, isViolation } from '../../bench/replay/freshness.js';
import { isFinal, leastUpstreamCalls, type StreamItem } from '../../bench/replay/ideal.js';
import { seeded, Zipf } from '../../bench/replay/random.js';
import { goalMet, markdownReport, summarise, type RunFacts } from '../../bench/replay/report.js';
import { nextPageParams, RequestMaker, type ChainView } from '../../bench/replay/requests.js';
import { readCacheMetrics, upstreamRoute, type Sent } from '../../bench/replay/runner.js';
import {
  countByKind,
  EVENT_KINDS,
  generateWorkload,
  INDEXERS,
  MIX,
  OLD_MIN_AGE,
  OLD_SPAN,
  type ReplayEvent,
  type WorkloadSettings,
} from '../../bench/replay/workload.js';

const START = 25_712_000;
const SETTINGS: WorkloadSettings = { durationS: 60, rate: 390, seed: 1, startBlock: START };

describe('replay workload', () => {
  it('is the same for the same settings, and another for another seed', () => {
    const a = generateWorkload(SETTINGS);
    const b = generateWorkload({ ...SETTINGS });
    expect(b.events).toEqual(a.events);
    expect(b.addresses).toEqual(a.addresses);
    const c = generateWorkload({ ...SETTINGS, seed: 2 });
    expect(c.events).not.toEqual(a.events);
  });

  it('arrives in time order within the duration, at about the rate', () => {
    const { events } = generateWorkload(SETTINGS);
    expect(events.length).toBeGreaterThan(390 * 60 * 0.95);
    expect(events.length).toBeLessThan(390 * 60 * 1.05);
    for (let i = 1; i < events.length; i++) expect(events[i]!.atMs).toBeGreaterThanOrEqual(events[i - 1]!.atMs);
    expect(events[0]!.atMs).toBeGreaterThanOrEqual(0);
    expect(events.at(-1)!.atMs).toBeLessThan(60_000);
  });

  it('follows the mix, and asks for old history well below the start head', () => {
    const { events } = generateWorkload({ ...SETTINGS, durationS: 300 });
    const counts = countByKind(events);
    const total = EVENT_KINDS.reduce((s, k) => s + MIX[k], 0);
    for (const kind of EVENT_KINDS) expect(Math.abs(counts[kind] / events.length - MIX[kind] / total)).toBeLessThan(0.004);
    for (const e of events) {
      if ('block' in e) {
        expect(e.block).toBeLessThanOrEqual(START - OLD_MIN_AGE);
        expect(e.block).toBeGreaterThan(START - OLD_MIN_AGE - OLD_SPAN);
      }
      if (e.kind === 'indexer-page') expect(e.indexer).toBeLessThan(INDEXERS);
    }
  });

  it('leads the address pool with the addresses given, and makes the rest from the seed', () => {
    const first = ['0xD8dA6BF26964aF9D7eEd9e03E53415D37aA96045'];
    const { addresses } = generateWorkload(SETTINGS, first);
    expect(addresses[0]).toBe(first[0]!.toLowerCase());
    expect(new Set(addresses).size).toBe(addresses.length);
    for (const a of addresses) expect(a).toMatch(/^0x[0-9a-f]{40}$/);
  });

  it('draws popular old blocks the most (Zipf)', () => {
    const zipf = new Zipf(1_000, 1);
    const rng = seeded('test');
    const hits = new Map<number, number>();
    for (let i = 0; i < 50_000; i++) {
      const k = zipf.draw(rng);
      hits.set(k, (hits.get(k) ?? 0) + 1);
    }
    expect((hits.get(1) ?? 0) / 50_000).toBeCloseTo(zipf.probability(1), 2);
    expect(hits.get(1)!).toBeGreaterThan(hits.get(2)!);
    expect(hits.get(2)!).toBeGreaterThan(hits.get(10) ?? 0);
    expect(Math.min(...hits.keys())).toBe(1);
    expect(Math.max(...hits.keys())).toBeLessThanOrEqual(1_000);
  });
});

/** A chain whose block n holds n % 3 transactions, the second of them with a log. */
const CHAIN: ChainView = {
  transactions: (n) =>
    Array.from({ length: n % 3 }, (_, i) => ({ hash: `0x${n.toString(16).padStart(56, '0')}${i.toString(16).padStart(8, '0')}`, logs: i })),
};
const TTLS = { ttlSeconds: {} };
const ADDRESSES = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222'];

describe('replay requests', () => {
  const maker = () => new RequestMaker(CHAIN, TTLS, ADDRESSES, 1);

  it('asks for the tip with the routes’ own TTLs, never final', () => {
    const m = maker();
    const tip = m.make({ atMs: 0, kind: 'tip-main-page' }, 100)!;
    expect(tip).toMatchObject({
      route: 'main-page/blocks',
      path: '/1/api/v2/main-page/blocks',
      ttlSeconds: 5,
      finalBlock: undefined,
      heads: 'tip-list',
    });
    const rpc = m.make({ atMs: 0, kind: 'tip-rpc-block-number' }, 100)!;
    expect(rpc).toMatchObject({ route: 'rpc.eth_blockNumber', method: 'POST', path: '/1/json-rpc', ttlSeconds: 2, heads: 'result-number' });
    expect(JSON.parse(rpc.body!)).toEqual({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
    const legacy = m.make({ atMs: 0, kind: 'tip-legacy-block-number' }, 100)!;
    expect(legacy).toMatchObject({ route: 'legacy.block.eth_block_number', ttlSeconds: 30, finalBlock: undefined });
  });

  it('counts new blocks back from the head of the moment, and finds a transaction at or below them', () => {
    const m = maker();
    expect(m.make({ atMs: 0, kind: 'new-block', back: 2, pick: 0 }, 1_000)).toMatchObject({
      path: '/1/api/v2/blocks/998',
      route: 'blocks/{block_hash_or_number_param}',
      ttlSeconds: 30,
      finalBlock: 998,
    });
    // Block 999 (999 % 3 = 0) holds none: the newest one below it that does, 998, with two.
    const tx = m.make({ atMs: 0, kind: 'new-tx', back: 1, pick: 0.9 }, 1_000)!;
    expect(tx.finalBlock).toBe(998);
    expect(tx.path).toBe(`/1/api/v2/transactions/${CHAIN.transactions(998)[1]!.hash}`);
    // Logs: only a transaction that logs something (index 1 here).
    const logs = m.make({ atMs: 0, kind: 'old-tx-logs', block: 1_000, pick: 0 }, 5_000)!;
    expect(logs.path).toBe(`/1/api/v2/transactions/${CHAIN.transactions(998)[1]!.hash}/logs`);
  });

  it('writes JSON-RPC calls canonically and keys them as the gateway does', () => {
    const m = maker();
    const block = m.make({ atMs: 0, kind: 'rpc-block', block: 255 }, 5_000)!;
    expect(block).toMatchObject({
      route: 'rpc.eth_getBlockByNumber',
      key: 'rpc eth_getBlockByNumber ["0xff",false]',
      ttlSeconds: 30,
      finalBlock: 255,
    });
    const logs = m.make({ atMs: 0, kind: 'rpc-logs', block: 100 }, 5_000)!;
    expect(logs.finalBlock).toBe(100);
    expect((JSON.parse(logs.body!) as { params: unknown[] }).params[0]).toMatchObject({ fromBlock: '0x5b', toBlock: '0x64' });
    const txlist = m.make({ atMs: 0, kind: 'legacy-txlist', address: ADDRESSES[0]!, endBlock: 50_000 }, 5_000)!;
    expect(txlist).toMatchObject({ route: 'legacy.account.txlist', finalBlock: 50_000, heads: 'none' });
    expect(txlist.path).toContain('startblock=40001&endblock=50000');
  });

  it('pages an indexer with the previous answer’s next_page_params, then moves to another address', () => {
    const m = maker();
    const page: ReplayEvent = { atMs: 0, kind: 'indexer-page', indexer: 3 };
    const first = m.make(page, 5_000)!;
    expect(first).toMatchObject({ route: 'transactions', finalBlock: undefined, indexer: 3 });
    expect(first.path).toMatch(/^\/1\/api\/v2\/addresses\/0x[0-9a-f]{40}\/transactions\?items_count=20$/);
    const next = {
      block_number: 4_000,
      index: 7,
      items_count: 20,
      fee: '1',
      hash: `0x${'a'.repeat(64)}`,
      inserted_at: '2026-01-01T00:00:00Z',
      value: '0',
    };
    m.indexerAnswered(3, 200, JSON.stringify({ items: [], next_page_params: next }));
    const second = m.make(page, 5_000)!;
    expect(second.finalBlock).toBe(4_000);
    expect(new URL(second.path, 'http://x').searchParams.get('block_number')).toBe('4000');
    expect(second.path.split('?')[0]).toBe(first.path.split('?')[0]);
    m.indexerAnswered(3, 200, JSON.stringify({ items: [], next_page_params: null }));
    expect(m.make(page, 5_000)!.path).toMatch(/\?items_count=20$/);
  });

  it('reads next_page_params, and none from a last page or a broken answer', () => {
    expect(nextPageParams('{"items":[],"next_page_params":{"block_number":5,"index":0,"x":null}}')).toEqual({
      block_number: '5',
      index: '0',
    });
    expect(nextPageParams('{"items":[],"next_page_params":null}')).toBeUndefined();
    expect(nextPageParams('not json')).toBeUndefined();
  });
});

const item = (key: string, atS: number, over: Partial<StreamItem> = {}): StreamItem => ({
  key,
  atMs: atS * 1000,
  ttlSeconds: 30,
  final: false,
  storable: true,
  label: key.split(' ')[0] ?? key,
  ...over,
});

describe('the least possible upstream calls (an ideal cache)', () => {
  it('fetches a final answer once', () => {
    const stream = [0, 10, 100, 5_000, 80_000].map((t) => item('block 1', t, { final: true }));
    expect(leastUpstreamCalls(stream)).toMatchObject({ calls: 1, finalFetches: 1 });
  });

  it('fetches a moving answer again once its TTL has passed since its last fetch', () => {
    const stream = [0, 1, 4.9, 5, 9, 10.1, 14].map((t) => item('tip x', t, { ttlSeconds: 5 }));
    // Fetched at 0, 5 and 10.1.
    expect(leastUpstreamCalls(stream).calls).toBe(3);
  });

  it('keeps an answer fetched above the line moving until its TTL is over, then fetches it final, once', () => {
    const stream = [
      item('b 9', 0),
      item('b 9', 10, { final: true }),
      item('b 9', 31, { final: true }),
      item('b 9', 1_000, { final: true }),
    ];
    expect(leastUpstreamCalls(stream)).toMatchObject({ calls: 2, finalFetches: 1 });
  });

  it('fetches what no cache keeps every time: a non-200, a moving route with TTL 0', () => {
    const stream = [
      item('err 1', 0, { storable: false }),
      item('err 1', 1, { storable: false }),
      item('never 1', 0, { ttlSeconds: 0 }),
      item('never 1', 0.5, { ttlSeconds: 0 }),
    ];
    expect(leastUpstreamCalls(stream).calls).toBe(4);
  });

  it('reads the stream in time order, keys apart, and counts by label', () => {
    const stream = [item('a 1', 40), item('b 1', 0), item('a 1', 0), item('a 1', 20), item('b 1', 31)];
    expect(leastUpstreamCalls(stream)).toEqual({ calls: 4, finalFetches: 0, byLabel: { a: 2, b: 2 } });
  });

  it('calls a block final at or below head - depth', () => {
    expect(isFinal(88, 100, 12)).toBe(true);
    expect(isFinal(89, 100, 12)).toBe(false);
    expect(isFinal(undefined, 100, 12)).toBe(false);
  });
});

describe('freshness of moving fields', () => {
  it('reads the head a tip list, a block number result and confirmations imply', () => {
    expect(impliedHeads('tip-list', JSON.stringify([{ height: 7 }, { height: 9 }, { height: 8 }]))).toEqual([9]);
    expect(impliedHeads('tip-list', JSON.stringify({ items: [{ height: 12 }], next_page_params: null }))).toEqual([12]);
    expect(impliedHeads('result-number', '{"jsonrpc":"2.0","result":"0x10","id":1}')).toEqual([16]);
    const page = {
      items: [
        { block_number: 100, confirmations: 5, from: { hash: '0x1' } },
        { block_number: 90, confirmations: 0 },
        { nested: { block_number: 50, confirmations: 52 } },
      ],
    };
    // 100 + 5 - 1 and 50 + 52 - 1; the pending one (0 confirmations) implies nothing.
    expect(impliedHeads('confirmations', JSON.stringify(page))).toEqual([104, 101]);
    expect(impliedHeads('none', JSON.stringify(page))).toEqual([]);
    expect(impliedHeads('confirmations', 'not json')).toEqual([]);
  });

  it('measures how long past the TTL the head had passed the stalest implied head', () => {
    // The head reached n at n * 1000 ms.
    const changedAt = (n: number): number | undefined => (n <= 50 ? n * 1000 : undefined);
    // Head 40 was passed at 41 s; served at 50 s with a 5 s TTL: 4 s too late.
    expect(freshnessExcessMs([40], 50_000, 5, changedAt)).toBe(4_000);
    // The stalest of several counts; a head not passed yet (50 -> 51 not reached) does not.
    expect(freshnessExcessMs([44, 40, 50], 50_000, 5, changedAt)).toBe(4_000);
    expect(freshnessExcessMs([50], 50_000, 5, changedAt)).toBeUndefined();
    expect(freshnessExcessMs([], 50_000, 5, changedAt)).toBeUndefined();
    // Passed 3 s ago, TTL 5 s: fresh.
    expect(freshnessExcessMs([46], 50_000, 5, changedAt)).toBe(-2_000);
    expect(isViolation(4_000)).toBe(true);
    expect(isViolation(-2_000)).toBe(false);
    expect(isViolation(FRESHNESS_GRACE_MS)).toBe(false);
    expect(isViolation(undefined)).toBe(false);
  });
});

describe('the replay report', () => {
  const sent = (over: Partial<Sent>): Sent => ({
    ...item('GET /1/api/v2/blocks/5', 0),
    label: 'blocks/{block_hash_or_number_param}',
    kind: 'old-block',
    status: 200,
    xCache: 'MISS',
    lateMs: 0,
    excessMs: undefined,
    checked: false,
    ...over,
  });
  const facts = (mode: 'fixed' | 'finality', calls: number, extra: Sent[] = []): RunFacts => ({
    mode,
    sent: [sent({ final: true }), sent({ atMs: 40_000, final: true, xCache: mode === 'fixed' ? 'MISS' : 'HIT' }), ...extra],
    skipped: 0,
    errors: 0,
    upstream: { calls, headPolls: 3, byRoute: { 'blocks/{block_hash_or_number_param}': calls } },
    metrics: { entries: 10, bytes: 2 ** 19, lookups: {} },
    violations: [],
    elapsedS: 60,
    headAtStart: 1,
    headAtEnd: 300,
  });

  it('puts both runs beside the least possible, and judges the goal', () => {
    const fixed = summarise(facts('fixed', 2, [sent({ key: 'tip', xCache: 'STALE', excessMs: 5_000, checked: true })]));
    const aware = summarise(facts('finality', 1));
    expect(fixed).toMatchObject({ requests: 3, upstreamCalls: 2, headPolls: 3, answersPerMiB: 20 });
    expect(fixed.freshness).toMatchObject({ checked: 1, violations: 1, byCache: { STALE: 1 } });
    expect(aware).toMatchObject({ requests: 2, upstreamPer1000: 500, overLeast: 0, hitRatio: 0.5 });
    expect(goalMet(aware)).toBe(true);
    expect(goalMet(fixed)).toBe(false);
    const md = markdownReport(
      {
        date: '2026-01-01',
        code: 'abc',
        durationS: 60,
        rate: 390,
        seed: 1,
        blockMs: 200,
        depth: 12,
        pollSeconds: 5,
        connections: 64,
        blockTtlSeconds: 30,
        finalTtlSeconds: 86_400,
      },
      fixed,
      aware,
      facts('finality', 1).sent,
    );
    expect(md).toContain('| | fixed TTLs | finality-aware | least possible |');
    expect(md).toContain('| **upstream calls per 1,000 requests** | **667** | **500** | **500** |');
    expect(md).toContain('up to 2,880 times a day');
    expect(md).toContain('Goal met');
  });
});

describe('replay plumbing', () => {
  it('names the route of an upstream request as the gateway does', () => {
    expect(upstreamRoute({ url: '/api/v2/blocks/25712000', path: '/api/v2/blocks/25712000', body: undefined })).toBe(
      'blocks/{block_hash_or_number_param}',
    );
    expect(upstreamRoute({ url: '/api?module=block&action=getblockreward&blockno=5', path: '/api', body: undefined })).toBe(
      'legacy.block.getblockreward',
    );
    expect(
      upstreamRoute({ url: '/api/eth-rpc', path: '/api/eth-rpc', body: '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[]}' }),
    ).toBe('rpc.eth_getLogs');
  });

  it('reads the cache gauges and lookups from /metrics', () => {
    const text =
      '# HELP egw_cache_entries x\negw_cache_entries 42\negw_cache_bytes 1048576\negw_cache_lookups_total{outcome="hit"} 7\negw_cache_lookups_total{outcome="miss"} 3\n';
    expect(readCacheMetrics(text)).toEqual({ entries: 42, bytes: 1_048_576, lookups: { hit: 7, miss: 3 } });
  });

  it('configures the fixed-TTL run with finalTtlSeconds 0 and both with the chain’s depth and poll', () => {
    const fixed = replayConfig('http://127.0.0.1:1', 'fixed', { depth: 12, pollSeconds: 5 });
    const aware = replayConfig('http://127.0.0.1:1', 'finality', { depth: 12, pollSeconds: 5 });
    expect(fixed.cache.finalTtlSeconds).toBe(0);
    expect(aware.cache.finalTtlSeconds).toBe(86_400);
    expect(aware.chains['1']).toMatchObject({ head: { pollSeconds: 5 }, finality: { depth: 12 } });
  });
});

describe('bench flags', () => {
  it('keeps the variants’ flags and defaults', () => {
    expect(parseBenchArgs([])).toMatchObject({ durationS: 5, rounds: 3, connections: 64, loadgen: 'auto', replay: undefined });
    expect(parseBenchArgs(['--duration', '2', '--rounds', '4', '--only', 'bare'])).toMatchObject({
      durationS: 2,
      rounds: 4,
      variants: ['bare'],
    });
  });

  it('takes --replay with its own flags and defaults', () => {
    expect(parseBenchArgs(['--replay']).replay).toEqual({ durationS: 60, blockMs: 200, rate: 390, seed: 1, connections: 64 });
    expect(parseBenchArgs(['--replay', '--minutes', '10', '--block-ms', '100', '--rate', '500', '--seed', '7']).replay).toEqual({
      durationS: 600,
      blockMs: 100,
      rate: 500,
      seed: 7,
      connections: 64,
    });
    expect(parseBenchArgs(['--replay', '--duration', '30']).replay?.durationS).toBe(30);
  });

  it('refuses mixed flags', () => {
    expect(() => parseBenchArgs(['--replay', '--minutes', '1', '--duration', '60'])).toThrow(/not both/);
    expect(() => parseBenchArgs(['--replay', '--rounds', '3'])).toThrow(/does not take --rounds/);
    expect(() => parseBenchArgs(['--rate', '100'])).toThrow(/only with --replay/);
    expect(() => parseBenchArgs(['--replay', '--rate', '0'])).toThrow(/positive number/);
  });
});
