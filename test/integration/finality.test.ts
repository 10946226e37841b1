// Finality-aware caching through the whole gateway, against the fixture explorer with a head the
// tests move: the gateway learns the head (answers and its own poll), keeps answers about blocks
// below the finality line for cache.finalTtlSeconds, rewrites their confirmations from the head,
// and keeps everything else (within the depth, reorged, first pages, the tip) on its route's TTL.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, refusedPort, startGateway, type TestGateway } from '../support/gateway.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const DEPTH = 10;
/** Past a v2 by-number route's TTL (30 s) and the stale window (60 s): a kept entry must be final. */
const LATER_MS = 10 * 60_000;
/** The gateway's clock: tests move it to expire entries. */
const clock = { now: Date.now() };

let explorer: FixtureExplorer;
let gw: TestGateway;

const config = (upstream: string, extra: Parameters<typeof makeConfig>[1] = {}) =>
  makeConfig([upstream], {
    chains: { '1': { name: 'E', upstreams: [upstream], timeoutMs: 5_000, head: { pollSeconds: 1 }, finality: { depth: DEPTH } } },
    cache: { staleSeconds: 60 },
    ...extra,
  });

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(config(explorer.url), { now: () => clock.now });
});
afterAll(async () => {
  await gw?.close();
  await explorer?.close();
});

/** Requests the explorer received for a path (head polls are counted apart: explorer.headPolls()). */
const upstreamCalls = (path: string) => explorer.requests.filter((r) => r.path === path).length;
const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

interface ReadyHead {
  block: number | null;
  ageSeconds: number | null;
  finalityDepth: number;
}
async function readyHead(g: TestGateway = gw): Promise<ReadyHead> {
  const body = (await (await g.ops('/readyz')).json()) as { chains: Record<string, { head: ReadyHead }> };
  return body.chains['1']!.head;
}
/** Waits until the gateway knows the explorer's head, freshly (its poll runs every second). */
const learnHead = (g: TestGateway = gw) =>
  until(async () => {
    const h = await readyHead(g);
    return h.block === explorer.head() && h.ageSeconds !== null && h.ageSeconds < 1;
  }, "the gateway's head to reach the explorer's");
const rpc = (g: TestGateway, method: string, params: unknown[]) =>
  g.get('/1/json-rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });

describe('the head', () => {
  it('is polled when the chain is quiet, shown in /readyz and the metrics, and billed to no key', async () => {
    await learnHead();
    const h = await readyHead();
    expect(h).toMatchObject({ block: explorer.head(), finalityDepth: DEPTH });
    const metrics = parsePrometheus(await (await gw.ops('/metrics')).text());
    expect(valueOf(metrics, 'egw_chain_head_block', { chain: '1' })).toBe(explorer.head());
    expect(valueOf(metrics, 'egw_head_polls_total', { chain: '1', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(metrics, 'egw_chain_head_age_seconds', { chain: '1' })).toBeLessThan(30);
    // The explorer saw them as polls (x-egw-purpose: head-poll), apart from client traffic.
    expect(explorer.headPolls()).toBeGreaterThanOrEqual(1);
    expect(explorer.requests).toEqual([]);
  });

  it('follows the explorer as it advances', async () => {
    explorer.setHead(explorer.head() + 3);
    clock.now += 2_000; // a poll interval with nothing seen
    await learnHead();
  });
});

describe('answers below the finality line', () => {
  it('an old block is fetched once and kept past its route TTL; one within the depth is not', async () => {
    await learnHead();
    const old = explorer.head() - 100;
    const recent = explorer.head() - 2;
    for (const n of [old, recent]) expect((await gw.get(`/1/api/v2/blocks/${n}`)).headers.get('x-cache')).toBe('MISS');
    clock.now += LATER_MS;
    const again = await gw.get(`/1/api/v2/blocks/${old}`);
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(Number(again.headers.get('age'))).toBe(LATER_MS / 1000);
    expect((await json(again)).height).toBe(old);
    expect(upstreamCalls(`/api/v2/blocks/${old}`)).toBe(1);
    // Within the depth: its route's TTL, expired long ago.
    expect((await gw.get(`/1/api/v2/blocks/${recent}`)).headers.get('x-cache')).toBe('MISS');
    expect(upstreamCalls(`/api/v2/blocks/${recent}`)).toBe(2);
  });

  it("a final transaction's confirmations follow the head on every answer, with the right length", async () => {
    await learnHead();
    const list = await json(await gw.get(`/1/api/v2/addresses/${ADDRESS}/transactions`));
    const items = list.items as { hash: string; block_number: number }[];
    const tx = items.find((t) => t.block_number < explorer.head() - DEPTH)!;
    const path = `/1/api/v2/transactions/${tx.hash}`;
    const first = await gw.get(path);
    expect(first.headers.get('x-cache')).toBe('MISS');
    expect((await json(first)).confirmations).toBe(explorer.head() - tx.block_number + 1);
    // The chain moves on by 995 blocks (a confirmations count one digit longer or not, either way).
    explorer.setHead(explorer.head() + 995);
    clock.now += LATER_MS;
    await learnHead();
    const later = await gw.get(path);
    expect(later.headers.get('x-cache')).toBe('HIT');
    const text = await later.text();
    expect(Number(later.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect((JSON.parse(text) as { confirmations: number }).confirmations).toBe(explorer.head() - tx.block_number + 1);
    expect(upstreamCalls(`/api/v2/transactions/${tx.hash}`)).toBe(1);
  });

  it('a page of history below its cursor is final; the first page is not', async () => {
    await learnHead();
    // An address with more than one page (the fixture gives each address 0 to 140 transactions).
    let path = '';
    let cursor: Record<string, string | number> | null = null;
    for (let i = 1; cursor === null; i++) {
      path = `/api/v2/addresses/0x${i.toString(16).padStart(40, 'a')}/transactions`;
      cursor = (await json(await gw.get(`/1${path}`))).next_page_params as typeof cursor;
    }
    const query = new URLSearchParams(Object.entries(cursor).map(([k, v]): [string, string] => [k, String(v)])).toString();
    const paged = await gw.get(`/1${path}?${query}`);
    expect(paged.status).toBe(200);
    const before = upstreamCalls(path);
    clock.now += LATER_MS;
    await learnHead();
    expect((await gw.get(`/1${path}?${query}`)).headers.get('x-cache')).toBe('HIT');
    expect((await gw.get(`/1${path}`)).headers.get('x-cache')).toBe('MISS');
    expect(upstreamCalls(path)).toBe(before + 1);
  });

  it('a reorged block is never kept as final', async () => {
    await learnHead();
    const n = explorer.head() - 200;
    const { hash } = (await json(await gw.get(`/1/api/v2/blocks/${n}`))) as { hash: string };
    explorer.markReorg(n);
    const path = `/api/v2/blocks/${hash}`;
    const reorged = await json(await gw.get(`/1${path}`));
    expect(reorged.type).toBe('reorg');
    clock.now += LATER_MS;
    await learnHead();
    expect((await gw.get(`/1${path}`)).headers.get('x-cache')).toBe('MISS');
    expect(upstreamCalls(path)).toBe(2);
  });

  it('JSON-RPC and legacy calls with an explicit old block are kept; `latest` is not', async () => {
    await learnHead();
    const old = `0x${(explorer.head() - 500).toString(16)}`;
    const byNumber = await (await rpc(gw, 'eth_getBlockByNumber', [old, false])).json();
    expect((byNumber as { result: { number: string } }).result.number).toBe(old);
    const reward = `/1/api?module=block&action=getblockreward&blockno=${explorer.head() - 500}`;
    expect((await gw.get(reward)).headers.get('x-cache')).toBe('MISS');
    const rpcCalls = () => explorer.requests.filter((r) => r.path === '/api/eth-rpc').length;
    const before = rpcCalls();
    clock.now += LATER_MS;
    await learnHead();
    await rpc(gw, 'eth_getBlockByNumber', [old, false]);
    expect(rpcCalls()).toBe(before);
    expect((await gw.get(reward)).headers.get('x-cache')).toBe('HIT');
    await rpc(gw, 'eth_getBlockByNumber', ['latest', false]);
    clock.now += LATER_MS;
    await learnHead();
    await rpc(gw, 'eth_getBlockByNumber', ['latest', false]);
    expect(rpcCalls()).toBe(before + 2);
  });
});

describe('turned off, or without a head', () => {
  it('cache.finalTtlSeconds 0 keeps every answer on its route TTL', async () => {
    const off = await startGateway(config(explorer.url, { cache: { staleSeconds: 60, finalTtlSeconds: 0 } }), { now: () => clock.now });
    try {
      await learnHead(off);
      const n = explorer.head() - 300;
      await off.get(`/1/api/v2/blocks/${n}`);
      clock.now += LATER_MS;
      expect((await off.get(`/1/api/v2/blocks/${n}`)).headers.get('x-cache')).toBe('MISS');
    } finally {
      await off.close();
    }
  });

  it('a poll that fails is counted, and the head stays unknown', async () => {
    const gone = await startGateway(
      makeConfig([`http://127.0.0.1:${await refusedPort()}`], {
        chains: { '1': { name: 'E', upstreams: [`http://127.0.0.1:${await refusedPort()}`], timeoutMs: 1_000, head: { pollSeconds: 1 } } },
      }),
      { now: () => clock.now },
    );
    try {
      await until(async () => {
        const metrics = parsePrometheus(await (await gone.ops('/metrics')).text());
        return valueOf(metrics, 'egw_head_polls_total', { chain: '1', outcome: 'error' }) >= 1;
      }, 'a failed head poll to be counted');
      expect(await readyHead(gone)).toEqual({ block: null, ageSeconds: null, finalityDepth: 64 });
    } finally {
      await gone.close();
    }
  });

  it('a chain never polled and never seen caches as today', async () => {
    const blind = await startGateway(
      makeConfig([explorer.url], {
        chains: { '1': { name: 'E', upstreams: [explorer.url], head: { pollSeconds: 0 }, finality: { depth: DEPTH } } },
        cache: { staleSeconds: 60 },
      }),
      { now: () => clock.now },
    );
    try {
      const n = explorer.head() - 400;
      await blind.get(`/1/api/v2/blocks/${n}`);
      expect((await readyHead(blind)).block).toBeNull();
      clock.now += LATER_MS;
      expect((await blind.get(`/1/api/v2/blocks/${n}`)).headers.get('x-cache')).toBe('MISS');
    } finally {
      await blind.close();
    }
  });
});

describe('the shared tier', () => {
  let redis: Redis;
  const prefix = testPrefix('finality');
  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it("keeps a final entry for finalTtlSeconds, and another gateway serves it with today's confirmations", async () => {
    const shared = (cfg: ReturnType<typeof config>) => startGateway(cfg, { now: () => clock.now });
    const cfg = config(explorer.url, {
      redis: { url: REDIS_URL, keyPrefix: prefix },
      keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
    });
    const a = await shared(cfg);
    const b = await shared(cfg);
    try {
      await learnHead(a);
      const list = await json(await a.get(`/1/api/v2/addresses/${ADDRESS}/transactions`));
      const tx = (list.items as { hash: string; block_number: number }[]).find((t) => t.block_number < explorer.head() - DEPTH)!;
      const path = `/1/api/v2/transactions/${tx.hash}`;
      const before = upstreamCalls(`/api/v2/transactions/${tx.hash}`);
      expect((await a.get(path)).headers.get('x-cache')).toBe('MISS');
      const keys = await until(async () => {
        const found = await redis.keys(`${prefix}cache:*`);
        const ttls = await Promise.all(found.map((k) => redis.pttl(k)));
        return ttls.some((t) => t > 3_600_000) ? ttls : undefined;
      }, 'a final entry in Redis');
      expect(Math.max(...keys)).toBeGreaterThan(86_000_000);
      explorer.setHead(explorer.head() + 7);
      clock.now += 2_000;
      await learnHead(b);
      const fromShared = await b.get(path);
      expect(fromShared.headers.get('x-cache')).toBe('HIT'); // from Redis: b's own tier was empty
      expect((await json(fromShared)).confirmations).toBe(explorer.head() - tx.block_number + 1);
      expect(upstreamCalls(`/api/v2/transactions/${tx.hash}`)).toBe(before + 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
