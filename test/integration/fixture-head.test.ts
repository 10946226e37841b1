// Each fixture explorer has a head of its own that moves forward (fixture/head.ts): setHead() or a
// timer (blockMs). What depends on it follows it, over real HTTP on loopback: JSON-RPC's block number
// and blocks, the v2 block and transaction routes (fixture/head-routes.ts), `confirmations` (Blockscout's
// max(1 + head - block_number, 1)), the address transaction lists and the legacy eth_block_number.
// Bodies are checked against the PRO API 0.5.0 document's own 200 schemas.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { HEAD_BLOCK, transactionsFor } from '../../fixture/data.js';
import * as chain from '../../fixture/chain.js';
import { until } from '../support/wait.js';
import { toJsonSchema } from '../support/json-schema.js';

// ---- the document's 200 schemas (test/support/json-schema.ts)
interface Spec {
  components: { schemas: Record<string, unknown> };
  paths: Record<string, { get: { responses: Record<string, { content?: Record<string, { schema: unknown }> }> } }>;
}
const spec = JSON.parse(readFileSync(new URL('../../spec/pro-api-0.5.0.json', import.meta.url), 'utf8')) as Spec;
const ok200 = (path: string): unknown =>
  spec.paths[`/{chain_id}/api/v2/${path}`]?.get.responses['200']?.content?.['application/json']?.schema;
const ROOT = 'https://fixture.test/pro-api-0.5.0.json';
const ROUTES = {
  blocks: 'blocks',
  mainPage: 'main-page/blocks',
  block: 'blocks/{block_hash_or_number_param}',
  blockTransactions: 'blocks/{block_hash_or_number_param}/transactions',
  transaction: 'transactions/{transaction_hash_param}',
  logs: 'transactions/{transaction_hash_param}/logs',
  addressTransactions: 'addresses/{address_hash_param}/transactions',
} as const;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(
  toJsonSchema({
    $id: ROOT,
    components: spec.components,
    responses: Object.fromEntries(Object.entries(ROUTES).map(([name, path]) => [name, ok200(path)])),
  }) as object,
);
const validators = new Map<string, ValidateFunction>();
const expectValid = (route: keyof typeof ROUTES, body: unknown): void => {
  let validate = validators.get(route);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `${ROOT}#/responses/${route}` });
    validators.set(route, validate);
  }
  expect(validate(body), `${route}: ${ajv.errorsText(validate.errors)}`).toBe(true);
};

// ---- helpers
interface Block {
  height: number;
  hash: string;
  parent_hash: string;
  timestamp: string;
  type: string;
  transactions_count: number;
}
interface Tx {
  hash: string;
  block_number: number;
  confirmations: number;
  position: number;
}
interface Page<T> {
  items: T[];
  next_page_params: Record<string, unknown> | null;
}
async function get<T = unknown>(explorer: FixtureExplorer, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${explorer.url}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}
async function rpc(explorer: FixtureExplorer, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(`${explorer.url}/api/eth-rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const answer = (await res.json()) as { result?: unknown; error?: unknown };
  expect(answer.error, method).toBeUndefined();
  return answer.result;
}
const hex = (n: number): string => `0x${n.toString(16)}`;
const confirmations = (head: number, block: number): number => Math.max(1 + head - block, 1);
/** The first block above `from` that holds a filler transaction, and that transaction. */
function fillerAbove(from: number): { n: number; hash: string } {
  for (let n = from + 1; ; n++) {
    const tx = chain.blockTransactions(n)[0];
    if (tx !== undefined) return { n, hash: chain.txHash(tx) };
  }
}
const SAMPLE_TXS = transactionsFor(chain.SAMPLE_ACCOUNT);
const KNOWN_BLOCK = SAMPLE_TXS.find((t) => t.hash === chain.KNOWN_TX_HASH)?.block_number ?? -1;

const started: FixtureExplorer[] = [];
async function explorerWith(opts: Parameters<typeof startFixtureExplorer>[0] = {}): Promise<FixtureExplorer> {
  const explorer = await startFixtureExplorer({ port: 0, ...opts });
  started.push(explorer);
  return explorer;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
});

describe('the head', () => {
  it('starts at HEAD_BLOCK and answers it everywhere a head shows', async () => {
    const before = Date.now();
    const explorer = await explorerWith();
    const after = Date.now();
    expect(explorer.head()).toBe(HEAD_BLOCK);
    expect(await rpc(explorer, 'eth_blockNumber')).toBe(hex(HEAD_BLOCK));
    expect((await get(explorer, '/api?module=block&action=eth_block_number')).body).toEqual({
      jsonrpc: '2.0',
      result: hex(HEAD_BLOCK),
      id: 1,
    });
    // The start block was reached at start; blocks behind it and ahead of it have no time.
    const at = explorer.headChangedAt(HEAD_BLOCK);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    expect(explorer.headChangedAt(HEAD_BLOCK - 1)).toBeUndefined();
    expect(explorer.headChangedAt(HEAD_BLOCK + 1)).toBeUndefined();
  });

  it('setHead moves eth_blockNumber, "latest", the legacy block number, the blocks list and the main page', async () => {
    const explorer = await explorerWith();
    const head = HEAD_BLOCK + 7;
    explorer.setHead(head);
    expect(explorer.head()).toBe(head);
    expect(await rpc(explorer, 'eth_blockNumber')).toBe(hex(head));
    expect(await rpc(explorer, 'eth_getBlockByNumber', ['latest', false])).toMatchObject({
      number: hex(head),
      hash: chain.blockHash(head),
    });
    expect(await rpc(explorer, 'eth_getBlockByNumber', ['pending', false])).toMatchObject({ number: hex(head) });
    expect((await get(explorer, '/api?module=block&action=eth_block_number')).body).toMatchObject({ result: hex(head) });
    const countdown = await get<{ result: { currentBlock: string } }>(
      explorer,
      `/api?module=block&action=getblockcountdown&blockno=${head + 100}`,
    );
    expect(countdown.body.result).toMatchObject({ currentBlock: String(head), remainingBlock: '100' });

    const blocks = await get<Page<Block>>(explorer, '/api/v2/blocks');
    expect(blocks.status).toBe(200);
    expectValid('blocks', blocks.body);
    expect(blocks.body.items).toHaveLength(50);
    expect(blocks.body.items.map((b) => b.height)).toEqual(Array.from({ length: 50 }, (_, i) => head - i));
    expect(blocks.body.next_page_params).toEqual({ block_number: head - 49, items_count: 50 });

    const main = await get<Block[]>(explorer, '/api/v2/main-page/blocks');
    expectValid('mainPage', main.body);
    expect(main.body.map((b) => b.height)).toEqual([head, head - 1, head - 2, head - 3]);
  });

  it('moves only forward: a lower head throws, the same head is no change, reset() keeps it', async () => {
    const explorer = await explorerWith();
    explorer.setHead(HEAD_BLOCK + 3);
    expect(() => explorer.setHead(HEAD_BLOCK + 2)).toThrow(RangeError);
    expect(() => explorer.setHead(HEAD_BLOCK + 3.5)).toThrow(RangeError);
    const at = explorer.headChangedAt(HEAD_BLOCK + 3);
    explorer.setHead(HEAD_BLOCK + 3);
    expect(explorer.headChangedAt(HEAD_BLOCK + 3)).toBe(at);
    explorer.reset();
    expect(explorer.head()).toBe(HEAD_BLOCK + 3);
    expect(await rpc(explorer, 'eth_blockNumber')).toBe(hex(HEAD_BLOCK + 3));
  });

  it('headChangedAt records when each block was first reached', async () => {
    const explorer = await explorerWith({ startBlock: 1_000 });
    const t0 = Date.now();
    explorer.setHead(1_005); // 1001..1005 at once
    const t1 = Date.now();
    await until(() => Date.now() > t1, 'the clock to move');
    explorer.setHead(1_006);
    const t2 = Date.now();
    for (let n = 1_001; n <= 1_005; n++) {
      expect(explorer.headChangedAt(n)).toBeGreaterThanOrEqual(t0);
      expect(explorer.headChangedAt(n)).toBeLessThanOrEqual(t1);
    }
    expect(explorer.headChangedAt(1_006)).toBeGreaterThan(t1);
    expect(explorer.headChangedAt(1_006)).toBeLessThanOrEqual(t2);
    expect(explorer.headChangedAt(999)).toBeUndefined();
    expect(explorer.headChangedAt(1_007)).toBeUndefined();
  });

  it('is each explorer’s own', async () => {
    const [a, b] = [await explorerWith(), await explorerWith({ startBlock: 500 })];
    a.setHead(HEAD_BLOCK + 40);
    expect(b.head()).toBe(500);
    expect(await rpc(b, 'eth_blockNumber')).toBe(hex(500));
    expect(await rpc(a, 'eth_blockNumber')).toBe(hex(HEAD_BLOCK + 40));
  });

  it('advances by itself every blockMs, and stops on close()', async () => {
    const explorer = await explorerWith({ startBlock: 2_000, blockMs: 20 });
    const seen = await until(async () => {
      const n = Number(await rpc(explorer, 'eth_blockNumber'));
      return n >= 2_003 ? n : undefined;
    }, 'three new blocks');
    expect(explorer.head()).toBeGreaterThanOrEqual(seen);
    const times = [2_001, 2_002, 2_003].map((n) => explorer.headChangedAt(n) ?? NaN);
    expect(times.every((t) => Number.isFinite(t))).toBe(true);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    const blocks = await get<Page<Block>>(explorer, '/api/v2/blocks?items_count=2');
    expect(blocks.body.items[0]?.height).toBeGreaterThanOrEqual(seen);
    await explorer.close();
    const last = explorer.head();
    // Another explorer's timer ticks on: by the time it has moved five blocks, the closed one would have too.
    const other = await explorerWith({ startBlock: 0, blockMs: 20 });
    await until(() => other.head() >= 5, 'five blocks on another explorer');
    expect(explorer.head()).toBe(last);
  });

  it('refuses a bad startBlock or blockMs', async () => {
    await expect(startFixtureExplorer({ port: 0, startBlock: -1 })).rejects.toThrow(RangeError);
    await expect(startFixtureExplorer({ port: 0, blockMs: 0 })).rejects.toThrow(RangeError);
  });
});

describe('blocks follow the head', () => {
  it('a block above the head is 404 until the head reaches it, then the chain’s block', async () => {
    const explorer = await explorerWith();
    const n = HEAD_BLOCK + 2;
    expect(await get(explorer, `/api/v2/blocks/${n}`)).toEqual({ status: 404, body: { message: 'Not found' } });
    expect(await get(explorer, `/api/v2/blocks/${chain.blockHash(n)}`)).toEqual({ status: 404, body: { message: 'Not found' } });
    expect(await get(explorer, `/api/v2/blocks/${n}/transactions`)).toEqual({ status: 404, body: { message: 'Not found' } });
    expect(await rpc(explorer, 'eth_getBlockByNumber', [hex(n), false])).toBeNull();
    expect(await rpc(explorer, 'eth_getBlockByHash', [chain.blockHash(n), false])).toBeNull();

    explorer.setHead(n);
    const got = await get<Block>(explorer, `/api/v2/blocks/${n}`);
    expect(got.status).toBe(200);
    expectValid('block', got.body);
    expect(got.body).toMatchObject({
      height: n,
      hash: chain.blockHash(n),
      parent_hash: chain.blockHash(n - 1),
      type: 'block',
      transactions_count: chain.blockTransactions(n).length,
      timestamp: new Date(chain.blockTimestamp(n) * 1000).toISOString().replace('.000Z', '.000000Z'),
    });
    expect((await get(explorer, `/api/v2/blocks/${chain.blockHash(n)}`)).body).toEqual(got.body);
    expect(await rpc(explorer, 'eth_getBlockByNumber', [hex(n), false])).toMatchObject({ hash: chain.blockHash(n) });
  });

  it('an unknown block hash is 404', async () => {
    const explorer = await explorerWith();
    const unknown = `0x${'ab'.repeat(24)}${(100).toString(16).padStart(16, '0')}`;
    expect(await get(explorer, `/api/v2/blocks/${unknown}`)).toEqual({ status: 404, body: { message: 'Not found' } });
  });

  it('pages /api/v2/blocks by block_number, honouring items_count, down to genesis', async () => {
    const explorer = await explorerWith({ startBlock: 60 });
    const first = await get<Page<Block>>(explorer, '/api/v2/blocks');
    expect(first.body.next_page_params).toEqual({ block_number: 11, items_count: 50 });
    const second = await get<Page<Block>>(explorer, '/api/v2/blocks?block_number=11&items_count=50');
    expectValid('blocks', second.body);
    expect(second.body.items.map((b) => b.height)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(second.body.next_page_params).toBeNull();
    const small = await get<Page<Block>>(explorer, '/api/v2/blocks?items_count=3');
    expect(small.body.items.map((b) => b.height)).toEqual([60, 59, 58]);
    expect(small.body.next_page_params).toEqual({ block_number: 58, items_count: 3 });
    expect((await get<Page<Block>>(explorer, '/api/v2/blocks?type=uncle')).body).toEqual({ items: [], next_page_params: null });
    const genesis = await get<Block>(explorer, '/api/v2/blocks/0');
    expect(genesis.body.parent_hash).toBe(chain.ZERO_HASH);
  });

  it('markReorg: the old hash answers "type": "reorg", a new block takes the height', async () => {
    const explorer = await explorerWith();
    const n = HEAD_BLOCK - 2;
    const old = chain.blockHash(n);
    explorer.markReorg(n);
    const reorged = await get<Block>(explorer, `/api/v2/blocks/${old}`);
    expect(reorged.status).toBe(200);
    expectValid('block', reorged.body);
    expect(reorged.body).toMatchObject({ height: n, hash: old, type: 'reorg' });

    const current = await get<Block>(explorer, `/api/v2/blocks/${n}`);
    expect(current.body).toMatchObject({ height: n, type: 'block' });
    expect(current.body.hash).not.toBe(old);
    expect((await get<Block>(explorer, `/api/v2/blocks/${current.body.hash}`)).body).toEqual(current.body);
    expect((await get<Block>(explorer, `/api/v2/blocks/${n + 1}`)).body.parent_hash).toBe(current.body.hash);
    expect(await rpc(explorer, 'eth_getBlockByNumber', [hex(n), false])).toMatchObject({ hash: current.body.hash });
    expect(await rpc(explorer, 'eth_getBlockByHash', [old, false])).toBeNull();

    const list = await get<Page<Block>>(explorer, '/api/v2/blocks?type=reorg');
    expectValid('blocks', list.body);
    expect(list.body.items.map((b) => [b.height, b.hash, b.type])).toEqual([[n, old, 'reorg']]);
    // A second reorg at the same height reorgs the replacement.
    explorer.markReorg(n);
    expect((await get<Block>(explorer, `/api/v2/blocks/${current.body.hash}`)).body.type).toBe('reorg');
    expect(() => explorer.markReorg(HEAD_BLOCK + 1)).toThrow(RangeError);
    // Another explorer's chain is not reorged.
    const other = await explorerWith();
    expect((await get<Block>(other, `/api/v2/blocks/${old}`)).body.type).toBe('block');
  });
});

describe('transactions follow the head', () => {
  it('confirmations on /transactions/{hash} count from the head', async () => {
    const explorer = await explorerWith();
    const first = await get<Tx>(explorer, `/api/v2/transactions/${chain.KNOWN_TX_HASH}`);
    expect(first.status).toBe(200);
    expectValid('transaction', first.body);
    expect(first.body).toMatchObject({ hash: chain.KNOWN_TX_HASH, block_number: KNOWN_BLOCK });
    expect(first.body.confirmations).toBe(confirmations(HEAD_BLOCK, KNOWN_BLOCK));
    explorer.setHead(HEAD_BLOCK + 10);
    const later = await get<Tx>(explorer, `/api/v2/transactions/${chain.KNOWN_TX_HASH}`);
    expect(later.body.confirmations).toBe(first.body.confirmations + 10);
  });

  it('a filler transaction above the head is 404 (and null over JSON-RPC), then has 1 confirmation in the head block', async () => {
    const explorer = await explorerWith();
    const { n, hash } = fillerAbove(HEAD_BLOCK);
    expect(await get(explorer, `/api/v2/transactions/${hash}`)).toEqual({ status: 404, body: { message: 'Not found' } });
    expect(await get(explorer, `/api/v2/transactions/${hash}/logs`)).toEqual({ status: 404, body: { message: 'Not found' } });
    expect(await rpc(explorer, 'eth_getTransactionByHash', [hash])).toBeNull();
    expect(await rpc(explorer, 'eth_getTransactionReceipt', [hash])).toBeNull();

    explorer.setHead(n);
    const got = await get<Tx>(explorer, `/api/v2/transactions/${hash}`);
    expect(got.status).toBe(200);
    expectValid('transaction', got.body);
    expect(got.body).toMatchObject({ hash, block_number: n, confirmations: 1, position: 0 });
    expect(await rpc(explorer, 'eth_getTransactionByHash', [hash])).toMatchObject({
      hash,
      blockNumber: hex(n),
      blockHash: chain.blockHash(n),
    });
    explorer.setHead(n + 4);
    expect((await get<Tx>(explorer, `/api/v2/transactions/${hash}`)).body.confirmations).toBe(5);
  });

  it('logs of a transaction carry its block; a block’s transactions carry confirmations from the head', async () => {
    const explorer = await explorerWith();
    const tx = chain.transactionByHash(chain.KNOWN_TRANSFER_HASH);
    expect(tx).not.toBeNull();
    const n = tx?.blockNumber ?? -1;
    const logs = await get<Page<{ block_number: number; block_hash: string; transaction_hash: string; topics: (string | null)[] }>>(
      explorer,
      `/api/v2/transactions/${chain.KNOWN_TRANSFER_HASH}/logs`,
    );
    expect(logs.status).toBe(200);
    expectValid('logs', logs.body);
    expect(logs.body.items).toHaveLength(1);
    expect(logs.body.items[0]).toMatchObject({
      block_number: n,
      block_hash: chain.blockHash(n),
      transaction_hash: chain.KNOWN_TRANSFER_HASH,
      topics: [chain.TRANSFER_TOPIC, expect.any(String), expect.any(String), null],
    });

    explorer.setHead(HEAD_BLOCK + 3);
    // Every page of the block's transactions (50 a page, by index), each sent its next_page_params back.
    const all: Tx[] = [];
    let query = '';
    for (;;) {
      const page = await get<Page<Tx>>(explorer, `/api/v2/blocks/${n}/transactions${query}`);
      expect(page.status).toBe(200);
      expectValid('blockTransactions', page.body);
      expect(page.body.items.length).toBeLessThanOrEqual(50);
      all.push(...page.body.items);
      if (page.body.next_page_params === null) break;
      query = `?${new URLSearchParams(Object.fromEntries(Object.entries(page.body.next_page_params).map(([k, v]) => [k, String(v)]))).toString()}`;
    }
    expect(all.map((t) => t.hash)).toEqual(chain.blockTransactions(n).map((t) => chain.txHash(t)));
    expect(all.map((t) => t.position)).toEqual(chain.blockTransactions(n).map((t) => t.index));
    expect(all.every((t) => t.block_number === n && t.confirmations === confirmations(HEAD_BLOCK + 3, n))).toBe(true);
    expect(all.map((t) => t.hash)).toContain(chain.KNOWN_TRANSFER_HASH);
    // items_count sets the page size; the key is the last item's index.
    const one = await get<Page<Tx>>(explorer, `/api/v2/blocks/${n}/transactions?items_count=1`);
    expect(one.body.items.map((t) => t.hash)).toEqual([all[0]?.hash]);
    expect(one.body.next_page_params).toEqual({ block_number: n, index: all[0]?.position, items_count: 1 });
  });

  it('address transaction lists count confirmations from the head, and hold nothing above it', async () => {
    const explorer = await explorerWith();
    const path = `/api/v2/addresses/${chain.SAMPLE_ACCOUNT}/transactions`;
    const first = await get<Page<Tx>>(explorer, path);
    expectValid('addressTransactions', first.body);
    expect(first.body.items.every((t) => t.confirmations === confirmations(HEAD_BLOCK, t.block_number))).toBe(true);
    explorer.setHead(HEAD_BLOCK + 25);
    const later = await get<Page<Tx>>(explorer, path);
    expectValid('addressTransactions', later.body);
    expect(later.body.items.map((t) => t.hash)).toEqual(first.body.items.map((t) => t.hash));
    expect(later.body.items.every((t) => t.confirmations === confirmations(HEAD_BLOCK + 25, t.block_number))).toBe(true);
    // data.ts's shared objects are not changed by serving them.
    expect(SAMPLE_TXS[0]?.confirmations).toBe(HEAD_BLOCK - (SAMPLE_TXS[0]?.block_number ?? 0) + 1);

    // An explorer whose head is behind the newest of them: those are not there yet.
    const newest = SAMPLE_TXS[0]?.block_number ?? 0;
    const behind = await explorerWith({ startBlock: newest - 1 });
    const early = await get<Page<Tx>>(behind, path);
    expect(early.body.items.length).toBeGreaterThan(0);
    expect(early.body.items.every((t) => t.block_number <= newest - 1)).toBe(true);
    expect(early.body.items[0]?.hash).not.toBe(SAMPLE_TXS[0]?.hash);
    expect(await get(behind, `/api/v2/transactions/${SAMPLE_TXS[0]?.hash ?? ''}`)).toEqual({ status: 404, body: { message: 'Not found' } });
  });
});

let shared: FixtureExplorer;
beforeAll(async () => {
  shared = await startFixtureExplorer({ port: 0 });
});
afterAll(async () => {
  await shared.close();
});
describe('a hash the chain does not know', () => {
  it('keeps the sampled transaction body (fixture-surface.test.ts relies on it)', async () => {
    const hash = `0x${'5d'.repeat(32)}`;
    const got = await get<Tx>(shared, `/api/v2/transactions/${hash}`);
    expect(got.status).toBe(200);
    expectValid('transaction', got.body);
    expect(got.body.hash).toBe(hash);
  });
});
