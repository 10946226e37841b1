// The JSON-RPC clients customers bring, unmodified but for their URL, through a real gateway in
// front of the fixture explorer (issue 21, "Proof"): ethers v6's JsonRpcProvider at
// /1/json-rpc?apikey=, its BlockscoutProvider at /1/api/eth-rpc, and viem's public client with the
// key as Bearer. Every answer is checked against what the fixture explorer answers directly or
// against fixture/chain.ts, batches are shown to travel as one HTTP request (the client's log of
// what it sent, and the explorer's log of the request id the gateway stamped on each call), and
// no request the explorer receives carries the key.
//
// The gateway caches the rpc routes at their default lifetimes (makeConfig turns off only three
// non-rpc routes), as it runs in production.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BlockscoutProvider,
  Contract,
  FetchRequest,
  Interface,
  JsonRpcProvider,
  Wallet,
  keccak256,
  parseEther,
  type FetchGetUrlFunc,
} from 'ethers';
import { createPublicClient, erc20Abi, http, parseAbiItem, type Address } from 'viem';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { HEAD_BLOCK, HOLDABLE_TOKENS, tokenBalancesFor, transactionsFor, type Transaction } from '../../fixture/data.js';
import * as chain from '../../fixture/chain.js';
import { GAS_PRICE, PRIORITY_FEE } from '../../fixture/rpc.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const EOA = '0x742d35cc6634c0532925a3b844bc454e4438f44e';
const toHex = (value: bigint): string => `0x${value.toString(16)}`;
const topic = (address: string): string => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;
const ERC20_ABI = [
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address) view returns (uint256)',
];
const ERC20 = new Interface(ERC20_ABI);
const EIP1967_IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

const seedTransactions = chain.SEED_ACCOUNTS.flatMap((a) => transactionsFor(a));
const fixtureTx = (hash: string): Transaction => seedTransactions.find((t) => t.hash === hash)!;
const KNOWN = fixtureTx(chain.KNOWN_TX_HASH);
const TRANSFER = fixtureTx(chain.KNOWN_TRANSFER_HASH);
const WETH = HOLDABLE_TOKENS.find((t) => t.symbol === 'WETH')!;
/** An account holding WETH in fixture/data.ts, and how much (what balanceOf must answer). */
const HOLDER = chain.SEED_ACCOUNTS.concat(Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, 'a')}`)).find((a) =>
  tokenBalancesFor(a, false).some((b) => b.token?.symbol === 'WETH'),
)!;
const HELD = BigInt(tokenBalancesFor(HOLDER, false).find((b) => b.token?.symbol === 'WETH')!.value);

let explorer: FixtureExplorer;
let gw: TestGateway;
/** ethers reading the fixture explorer itself: the answers the gateway's must equal. */
let direct: JsonRpcProvider;

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(makeConfig([explorer.url]));
  direct = new JsonRpcProvider(`${explorer.url}/api/eth-rpc`, 1, { staticNetwork: true });
});
afterAll(async () => {
  direct.destroy();
  await gw.close();
  await explorer.close();
});
beforeEach(() => explorer.reset());
afterEach(() => {
  // The key reaches the gateway in the query or as Bearer; the explorer never sees it.
  for (const r of explorer.requests) {
    expect(r.url, r.url).not.toContain(DEMO_KEY);
    expect(JSON.stringify(r.headers)).not.toContain(DEMO_KEY);
    expect(r.bodyBytes?.includes(DEMO_KEY) ?? false).toBe(false);
  }
});

interface UpstreamCall {
  method: string;
  params: unknown[];
  /** The x-request-id the gateway sent with it: the client request the call came in. */
  requestId: string;
}
/** The JSON-RPC calls the explorer received since the last reset(), in arrival order. */
function upstreamCalls(): UpstreamCall[] {
  return explorer.requests
    .filter((r) => r.path === '/api/eth-rpc')
    .map((r) => {
      const body = JSON.parse(r.body!) as { method: string; params: unknown[] };
      return { method: body.method, params: body.params, requestId: String(r.headers['x-request-id']) };
    });
}

/** One HTTP request a client sent to the gateway: its JSON body and the x-request-id it was answered with. */
interface SentRequest {
  url: string;
  body: unknown;
  status: number;
  requestId: string | null;
}
/** An ethers object (Block, Log, TransactionResponse, ...) as plain data, without its provider. */
const plain = (value: { toJSON(): unknown }): unknown => value.toJSON();

/** The calls of a JSON-RPC body: a batch's, or the one call. */
const callsIn = (body: unknown): { method: string; params: unknown[] }[] =>
  (Array.isArray(body) ? body : [body]) as { method: string; params: unknown[] }[];

/** A FetchRequest for ethers that logs every HTTP request it makes (its clones, one per send, share the function). */
function loggingRequest(url: string, log: SentRequest[]): FetchRequest {
  const request = new FetchRequest(url);
  const send = FetchRequest.createGetUrlFunc();
  const logged: FetchGetUrlFunc = async (req, signal) => {
    const response = await send(req, signal);
    const id = response.headers['x-request-id'];
    log.push({
      url: req.url,
      body: JSON.parse(Buffer.from(req.body ?? new Uint8Array()).toString('utf8')) as unknown,
      status: response.statusCode,
      requestId: id ?? null,
    });
    return response;
  };
  request.getUrlFunc = logged;
  return request;
}

describe('ethers v6 JsonRpcProvider at /1/json-rpc?apikey=', () => {
  const sent: SentRequest[] = [];
  let provider: JsonRpcProvider;
  beforeAll(() => {
    provider = new JsonRpcProvider(loggingRequest(`${gw.url}/1/json-rpc?apikey=${DEMO_KEY}`, sent), 1, { staticNetwork: true });
  });
  afterAll(() => provider.destroy());
  beforeEach(() => {
    sent.length = 0;
  });

  it('getBlockNumber, and getBlock by number, tag and hash, with and without prefetched transactions', async () => {
    expect(await provider.getBlockNumber()).toBe(HEAD_BLOCK);
    const n = KNOWN.block_number;
    const byNumber = (await provider.getBlock(n))!;
    expect(byNumber.toJSON()).toEqual((await direct.getBlock(n))!.toJSON());
    expect(byNumber).toMatchObject({
      number: n,
      hash: chain.blockHash(n),
      parentHash: chain.blockHash(n - 1),
      timestamp: chain.blockTimestamp(n),
      baseFeePerGas: chain.blockAt(n)!.baseFeePerGas,
    });
    expect(byNumber.transactions).toEqual(chain.blockTransactions(n).map(chain.txHash));
    expect(byNumber.transactions[KNOWN.position]).toBe(KNOWN.hash);

    const byHash = (await provider.getBlock(chain.blockHash(n)))!;
    expect(byHash.toJSON()).toEqual(byNumber.toJSON());
    for (const full of [(await provider.getBlock(n, true))!, (await provider.getBlock(chain.blockHash(n), true))!]) {
      expect(full.prefetchedTransactions.map((t) => t.hash)).toEqual(byNumber.transactions);
      const tx = full.prefetchedTransactions[KNOWN.position]!;
      expect([tx.hash, tx.from.toLowerCase(), tx.to?.toLowerCase(), tx.value, tx.nonce, tx.blockNumber, tx.index]).toEqual([
        KNOWN.hash,
        KNOWN.from.hash.toLowerCase(),
        KNOWN.to.hash.toLowerCase(),
        BigInt(KNOWN.value),
        KNOWN.nonce,
        n,
        KNOWN.position,
      ]);
    }
    expect(await provider.getBlock('latest')).toMatchObject({ number: HEAD_BLOCK, hash: chain.blockHash(HEAD_BLOCK) });
    expect(await provider.getBlock('earliest')).toMatchObject({ number: 0, parentHash: chain.ZERO_HASH });
    expect(await provider.getBlock(HEAD_BLOCK + 1)).toBeNull();
    // The methods the explorer was asked, in the client's form (the gateway writes ethers' own).
    expect(new Set(upstreamCalls().map((c) => c.method))).toEqual(
      new Set(['eth_blockNumber', 'eth_getBlockByNumber', 'eth_getBlockByHash']),
    );
  });

  it("getTransaction and getTransactionReceipt: the explorer's answers, fixture/data.ts's values", async () => {
    const tx = (await provider.getTransaction(chain.KNOWN_TX_HASH))!;
    expect(tx.toJSON()).toEqual((await direct.getTransaction(chain.KNOWN_TX_HASH))!.toJSON());
    expect(tx).toMatchObject({
      hash: KNOWN.hash,
      blockNumber: KNOWN.block_number,
      blockHash: chain.blockHash(KNOWN.block_number),
      index: KNOWN.position,
      nonce: KNOWN.nonce,
      value: BigInt(KNOWN.value),
      gasLimit: BigInt(String(KNOWN.gas_limit)),
      chainId: 1n,
    });
    expect(tx.from.toLowerCase()).toBe(KNOWN.from.hash.toLowerCase());

    const receipt = (await provider.getTransactionReceipt(chain.KNOWN_TRANSFER_HASH))!;
    expect(receipt.toJSON()).toEqual((await direct.getTransactionReceipt(chain.KNOWN_TRANSFER_HASH))!.toJSON());
    expect(receipt).toMatchObject({
      hash: TRANSFER.hash,
      status: 1,
      blockNumber: TRANSFER.block_number,
      gasUsed: BigInt(String(TRANSFER.gas_used)),
      gasPrice: BigInt(String(TRANSFER.gas_price)),
    });
    expect(receipt.logs.map((l) => [l.address.toLowerCase(), l.topics[0], l.topics[1]])).toEqual([
      [TRANSFER.to.hash.toLowerCase(), chain.TRANSFER_TOPIC, topic(TRANSFER.from.hash)],
    ]);
    expect(await provider.getTransaction(`0x${'ab'.repeat(32)}`)).toBeNull();
  });

  it('getBalance (a hex block written in decimal for Blockscout), getTransactionCount, getCode and getStorage', async () => {
    expect(await provider.getBalance(chain.SAMPLE_ACCOUNT)).toBe(chain.balanceAt(chain.SAMPLE_ACCOUNT, HEAD_BLOCK));
    const oldest = transactionsFor(chain.SAMPLE_ACCOUNT).at(-1)!.block_number;
    expect(await provider.getBalance(chain.SAMPLE_ACCOUNT, oldest)).toBe(chain.balanceAt(chain.SAMPLE_ACCOUNT, oldest));
    expect(sent.at(-1)!.body).toMatchObject({ method: 'eth_getBalance', params: [chain.SAMPLE_ACCOUNT, `0x${oldest.toString(16)}`] });
    expect(upstreamCalls().at(-1)!.params).toEqual([chain.SAMPLE_ACCOUNT, String(oldest)]);
    // Before its first transaction Blockscout has no balance: its string error, as EIP-1474's object.
    await expect(provider.getBalance(chain.SAMPLE_ACCOUNT, oldest - 1)).rejects.toMatchObject({
      error: { code: -32000, message: 'Balance not found' },
    });

    expect(await provider.getTransactionCount(chain.SAMPLE_ACCOUNT)).toBe(chain.transactionCountAt(chain.SAMPLE_ACCOUNT, HEAD_BLOCK));
    expect(await provider.getCode(chain.TOKEN_CONTRACT)).toBe(chain.codeAt(chain.TOKEN_CONTRACT));
    expect(await provider.getCode(EOA)).toBe('0x');
    expect(BigInt(await provider.getStorage(chain.TOKEN_CONTRACT, 2))).toBe(BigInt(WETH.total_supply!));
    expect(await provider.getStorage(chain.PROXY_CONTRACT, EIP1967_IMPLEMENTATION_SLOT)).toBe(topic(chain.USDC_IMPLEMENTATION));
  });

  it('getLogs by address and topics (positional, with null and OR): what the explorer finds directly', async () => {
    const from = TRANSFER.block_number - 50_000;
    const to = TRANSFER.block_number + 50_000;
    const bySender = { address: TRANSFER.to.hash, topics: [chain.TRANSFER_TOPIC, topic(TRANSFER.from.hash)], fromBlock: from, toBlock: to };
    const logs = await provider.getLogs(bySender);
    expect(logs.map(plain)).toEqual((await direct.getLogs(bySender)).map(plain));
    expect(logs.find((l) => l.transactionHash === TRANSFER.hash)).toMatchObject({
      blockNumber: TRANSFER.block_number,
      blockHash: chain.blockHash(TRANSFER.block_number),
    });
    for (const log of logs) {
      expect(log.address.toLowerCase()).toBe(TRANSFER.to.hash.toLowerCase());
      expect(log.topics.slice(0, 2)).toEqual([chain.TRANSFER_TOPIC, topic(TRANSFER.from.hash)]);
    }
    const recipient = `0x${String(TRANSFER.raw_input).slice(34, 74)}`;
    const byRecipient = {
      address: [TRANSFER.to.hash, chain.TOKEN_CONTRACT],
      topics: [[chain.TRANSFER_TOPIC, `0x${'11'.repeat(32)}`], null, topic(recipient)],
      fromBlock: TRANSFER.block_number,
      toBlock: TRANSFER.block_number,
    };
    const found = await provider.getLogs(byRecipient);
    expect(found.map(plain)).toEqual((await direct.getLogs(byRecipient)).map(plain));
    expect(found.map((l) => l.transactionHash)).toContain(TRANSFER.hash);
  });

  it('call: an ethers Contract with the ERC-20 ABI reads balanceOf, symbol and decimals; a revert is CALL_EXCEPTION', async () => {
    const token = new Contract(chain.TOKEN_CONTRACT, ERC20_ABI, provider);
    expect(await token.getFunction('balanceOf')(HOLDER)).toBe(HELD);
    expect(HELD).toBeGreaterThan(0n);
    expect(await token.getFunction('balanceOf')(EOA)).toBe(0n);
    expect(await token.getFunction('symbol')()).toBe('WETH');
    expect(await token.getFunction('decimals')()).toBe(18n);
    expect(await token.getFunction('totalSupply')()).toBe(BigInt(WETH.total_supply!));
    const calls = upstreamCalls().filter((c) => c.method === 'eth_call');
    expect(calls[0]!.params).toEqual([{ data: ERC20.encodeFunctionData('balanceOf', [HOLDER]), to: chain.TOKEN_CONTRACT }, 'latest']);
    await expect(provider.call({ to: chain.REVERTING_CONTRACT, data: '0x' })).rejects.toMatchObject({ code: 'CALL_EXCEPTION' });
  });

  it('estimateGas: ethers sends one param, the gateway adds "latest" for the explorer, never kept', async () => {
    expect(await provider.estimateGas({ to: EOA, value: 1n })).toBe(21_000n);
    const data = ERC20.encodeFunctionData('balanceOf', [HOLDER]);
    const expected = chain.estimateGas(chain.TOKEN_CONTRACT, data);
    expect(await provider.estimateGas({ to: chain.TOKEN_CONTRACT, data })).toBe(expected);
    // The same estimate from another client (ethers itself dedupes identical calls for 250 ms).
    const other = new JsonRpcProvider(loggingRequest(`${gw.url}/1/json-rpc?apikey=${DEMO_KEY}`, sent), 1, { staticNetwork: true });
    try {
      expect(await other.estimateGas({ to: chain.TOKEN_CONTRACT, data })).toBe(expected);
    } finally {
      other.destroy();
    }
    const fromClient = sent.flatMap((s) => callsIn(s.body)).filter((b) => b.method === 'eth_estimateGas');
    expect(fromClient.map((b) => b.params.length)).toEqual([1, 1, 1]);
    const upstream = upstreamCalls().filter((c) => c.method === 'eth_estimateGas');
    expect(upstream.map((c) => c.params)).toEqual([
      [{ to: EOA, value: '0x1' }, 'latest'],
      [{ data, to: chain.TOKEN_CONTRACT }, 'latest'],
      [{ data, to: chain.TOKEN_CONTRACT }, 'latest'],
    ]);
    await expect(provider.estimateGas({ to: chain.REVERTING_CONTRACT })).rejects.toMatchObject({ code: 'CALL_EXCEPTION' });
  });

  it("getFeeData: the explorer's gas price and priority fee, and the head block's base fee", async () => {
    const fees = await provider.getFeeData();
    expect(fees.gasPrice).toBe(GAS_PRICE);
    expect(fees.maxPriorityFeePerGas).toBe(PRIORITY_FEE);
    expect(fees.maxFeePerGas).toBe(chain.blockAt(HEAD_BLOCK)!.baseFeePerGas * 2n + PRIORITY_FEE);
  });

  it('broadcastTransaction: the signed bytes reach the explorer exactly once, and a second broadcast is not served from the cache', async () => {
    const wallet = Wallet.createRandom();
    const signed = await wallet.signTransaction({
      to: EOA,
      value: parseEther('0.01'),
      chainId: 1n,
      nonce: 0,
      gasLimit: 21_000n,
      maxFeePerGas: GAS_PRICE * 2n,
      maxPriorityFeePerGas: PRIORITY_FEE,
    });
    const tx = await provider.broadcastTransaction(signed);
    expect(tx.hash).toBe(keccak256(signed));
    expect(tx.from).toBe(wallet.address);
    expect(explorer.rawTransactions).toEqual([signed]);
    expect(upstreamCalls().filter((c) => c.method === 'eth_sendRawTransaction')).toHaveLength(1);
    // Another client sends the same bytes: the gateway keeps no answer to a write.
    const other = new JsonRpcProvider(`${gw.url}/1/json-rpc?apikey=${DEMO_KEY}`, 1, { staticNetwork: true });
    try {
      expect((await other.broadcastTransaction(signed)).hash).toBe(tx.hash);
    } finally {
      other.destroy();
    }
    expect(explorer.rawTransactions).toEqual([signed, signed]);
  });

  it('reads a call the gateway refuses as its JSON-RPC error (HTTP 200), the message naming the parameter', async () => {
    // With HTTP 400 ethers reported "server response 400 Bad Request" and lost the message.
    await expect(provider.send('eth_getBlockByNumber', [5, false])).rejects.toMatchObject({
      error: {
        code: -32602,
        message:
          'Invalid params: block: expected a block tag (latest, pending, safe, finalized, earliest) or a hex block number (0x...), got the number 5',
      },
    });
    expect(sent.at(-1)!.status).toBe(200);
  });

  it('batches concurrent calls: one HTTP request to the gateway carries them all, answered in one array', async () => {
    // Calls no other test makes, so that none is answered from the cache.
    const [a, b, c] = chain.POOL_ACCOUNTS.slice(40, 43) as [string, string, string];
    const results = await Promise.all([
      provider.getBalance(a),
      provider.getBalance(b),
      provider.getTransactionCount(c),
      provider.getCode(a),
      provider.getStorage(chain.TOKEN_CONTRACT, 4),
    ]);
    expect(results).toEqual([
      chain.balanceAt(a, HEAD_BLOCK),
      chain.balanceAt(b, HEAD_BLOCK),
      chain.transactionCountAt(c, HEAD_BLOCK),
      '0x',
      chain.storageAt(chain.TOKEN_CONTRACT, 4n),
    ]);
    // ethers sent one HTTP request, a JSON array of the five calls...
    expect(sent).toHaveLength(1);
    const batch = sent[0]!.body as { method: string }[];
    expect(batch.map((call) => call.method)).toEqual([
      'eth_getBalance',
      'eth_getBalance',
      'eth_getTransactionCount',
      'eth_getCode',
      'eth_getStorageAt',
    ]);
    // ...and the gateway took it as one request: every call it forwarded carries that request's id.
    const upstream = upstreamCalls();
    expect(upstream.map((u) => u.method).sort()).toEqual(batch.map((call) => call.method).sort());
    expect(new Set(upstream.map((u) => u.requestId))).toEqual(new Set([sent[0]!.requestId]));
  });

  it("serves a repeated read from the gateway's cache, across clients", async () => {
    const other = new JsonRpcProvider(`${gw.url}/1/json-rpc?apikey=${DEMO_KEY}`, 1, { staticNetwork: true });
    try {
      const slot3 = chain.storageAt(chain.TOKEN_CONTRACT, 3n);
      // At a block number: kept 30 s (at `latest`, 2 s).
      expect(await provider.getStorage(chain.TOKEN_CONTRACT, 3, KNOWN.block_number)).toBe(slot3);
      expect(await other.getStorage(chain.TOKEN_CONTRACT, 3, KNOWN.block_number)).toBe(slot3);
    } finally {
      other.destroy();
    }
    expect(upstreamCalls().map((c) => c.method)).toEqual(['eth_getStorageAt']);
  });
});

/**
 * ethers' BlockscoutProvider, pointed at the gateway. Its constructor builds its connection with
 * `BlockscoutProvider.getRequest(network)`, by class name, from a fixed host table, and (ethers
 * 6.17) never sends its apiKey anywhere: a subclass overrides `_getConnection()`, which every send
 * calls, and puts the provider's own apiKey in the query.
 */
class GatewayBlockscout extends BlockscoutProvider {
  override _getConnection(): FetchRequest {
    const request = new FetchRequest(`${gw.url}/1/api/eth-rpc?apikey=${encodeURIComponent(this.apiKey ?? '')}`);
    request.allowGzip = true;
    return request;
  }
}

describe('ethers v6 BlockscoutProvider at /1/api/eth-rpc', () => {
  let provider: GatewayBlockscout;
  beforeAll(() => {
    provider = new GatewayBlockscout('mainnet', DEMO_KEY);
  });
  afterAll(() => provider.destroy());

  it('a static getRequest() override is never used: the constructor calls BlockscoutProvider.getRequest by name', () => {
    class StaticOverride extends BlockscoutProvider {
      static override getRequest(): FetchRequest {
        return new FetchRequest(`${gw.url}/1/api/eth-rpc?apikey=${DEMO_KEY}`);
      }
    }
    const readme = new StaticOverride('mainnet', DEMO_KEY);
    try {
      // Still eth.blockscout.com, and without the key: the provider would not reach the gateway.
      expect(readme._getConnection().url).toBe('https://eth.blockscout.com/api/eth-rpc');
    } finally {
      readme.destroy();
    }
    expect(provider._getConnection().url).toBe(`${gw.url}/1/api/eth-rpc?apikey=${DEMO_KEY}`);
  });

  it('getBlockNumber, getBalance, getBlock, getTransaction, getLogs, call and estimateGas', async () => {
    expect(await provider.getBlockNumber()).toBe(HEAD_BLOCK);
    expect(await provider.getBalance(chain.SAMPLE_ACCOUNT)).toBe(chain.balanceAt(chain.SAMPLE_ACCOUNT, HEAD_BLOCK));
    const n = TRANSFER.block_number;
    const block = (await provider.getBlock(n))!;
    expect(block.toJSON()).toEqual((await direct.getBlock(n))!.toJSON());
    expect(block.hash).toBe(chain.blockHash(n));
    const tx = (await provider.getTransaction(TRANSFER.hash))!;
    expect(tx.toJSON()).toEqual((await direct.getTransaction(TRANSFER.hash))!.toJSON());
    expect([tx.blockNumber, tx.index, tx.data]).toEqual([n, TRANSFER.position, TRANSFER.raw_input]);
    const filter = { address: TRANSFER.to.hash, topics: [chain.TRANSFER_TOPIC], fromBlock: n, toBlock: n };
    const logs = await provider.getLogs(filter);
    expect(logs.map(plain)).toEqual((await direct.getLogs(filter)).map(plain));
    expect(logs.map((l) => l.transactionHash)).toContain(TRANSFER.hash);
    const token = new Contract(chain.TOKEN_CONTRACT, ERC20_ABI, provider);
    expect(await token.getFunction('name')()).toBe('Wrapped Ether');
    expect(await token.getFunction('balanceOf')(HOLDER)).toBe(HELD);
    // BlockscoutProvider adds the block tag to eth_estimateGas itself (getRpcRequest).
    expect(await provider.estimateGas({ to: EOA, value: 2n })).toBe(21_000n);
    const calls = upstreamCalls();
    expect(calls.find((c) => c.method === 'eth_estimateGas')!.params).toEqual([{ to: EOA, value: '0x2' }, 'latest']);
    expect(explorer.requests.every((r) => r.path === '/api/eth-rpc')).toBe(true);
  });

  it('is refused without a key the gateway knows: the apiKey it was given is the one sent', async () => {
    const stranger = new GatewayBlockscout('mainnet', 'not-a-key');
    try {
      await expect(stranger.getBlockNumber()).rejects.toMatchObject({ code: 'SERVER_ERROR', response: { statusCode: 401 } });
    } finally {
      stranger.destroy();
    }
    expect(explorer.requests).toHaveLength(0);
  });
});

describe('viem public client at /1/json-rpc, batching, the key as Bearer', () => {
  const sent: SentRequest[] = [];
  /** headers null: none at all (the key, if any, is in the URL). */
  const client = (url = `${gw.url}/1/json-rpc`, headers: Record<string, string> | null = { authorization: `Bearer ${DEMO_KEY}` }) => {
    let pending: { url: string; body: unknown } | undefined;
    return createPublicClient({
      transport: http(url, {
        batch: true,
        retryCount: 0,
        fetchOptions: headers === null ? undefined : { headers },
        onFetchRequest: (request, init) => {
          pending = { url: request.url, body: JSON.parse(init.body as string) as unknown };
        },
        onFetchResponse: (response) => {
          sent.push({ ...pending!, status: response.status, requestId: response.headers.get('x-request-id') });
        },
      }),
    });
  };
  beforeEach(() => {
    sent.length = 0;
  });
  const token = chain.TOKEN_CONTRACT as Address;

  it('getBlockNumber, getChainId, getBalance and readContract (ERC-20 balanceOf, symbol, decimals)', async () => {
    const viem = client();
    expect(await viem.getBlockNumber()).toBe(BigInt(HEAD_BLOCK));
    expect(await viem.getChainId()).toBe(1);
    expect(await viem.getBalance({ address: chain.SAMPLE_ACCOUNT as Address })).toBe(chain.balanceAt(chain.SAMPLE_ACCOUNT, HEAD_BLOCK));
    expect(await viem.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [HOLDER as Address] })).toBe(HELD);
    expect(await viem.readContract({ address: token, abi: erc20Abi, functionName: 'symbol' })).toBe('WETH');
    expect(await viem.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' })).toBe(18);
    expect(sent.every((s) => s.status === 200)).toBe(true);
  });

  it('getLogs with an event decodes the Transfer; without one viem sends topics [], which the gateway drops', async () => {
    const viem = client();
    const block = BigInt(TRANSFER.block_number);
    const address = TRANSFER.to.hash as Address;
    const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
    const decoded = await viem.getLogs({ address, event: transfer, fromBlock: block, toBlock: block });
    const recipient = `0x${String(TRANSFER.raw_input).slice(34, 74)}`;
    const amount = BigInt(`0x${String(TRANSFER.raw_input).slice(74)}`);
    const ours = decoded.find((l) => l.transactionHash === TRANSFER.hash)!;
    expect([ours.args.from?.toLowerCase(), ours.args.to?.toLowerCase(), ours.args.value]).toEqual([
      TRANSFER.from.hash.toLowerCase(),
      recipient,
      amount,
    ]);
    expect(decoded.length).toBe(
      (await direct.getLogs({ address, topics: [chain.TRANSFER_TOPIC], fromBlock: Number(block), toBlock: Number(block) })).length,
    );

    // No event: viem asks with `topics: []`, which Blockscout itself fails on ("Something went wrong.").
    explorer.reset();
    const all = await viem.getLogs({ address, fromBlock: block, toBlock: block });
    expect(callsIn(sent.at(-1)!.body).map((c) => c.params)).toEqual([
      [{ address: address.toLowerCase(), topics: [], fromBlock: toHex(block), toBlock: toHex(block) }],
    ]);
    expect(upstreamCalls().map((c) => c.params)).toEqual([
      [{ address: address.toLowerCase(), fromBlock: toHex(block), toBlock: toHex(block) }],
    ]);
    const everything = await direct.getLogs({ address, fromBlock: Number(block), toBlock: Number(block) });
    expect(all.map((l) => [l.transactionHash, l.logIndex])).toEqual(everything.map((l) => [l.transactionHash, l.index]));
    expect(all.map((l) => l.transactionHash)).toContain(TRANSFER.hash);
  });

  it('batches: several concurrent calls travel as one HTTP request, and reach the explorer under its request id', async () => {
    const viem = client();
    const [a, b, c] = chain.POOL_ACCOUNTS.slice(50, 53) as [Address, Address, Address];
    const usdc = chain.PROXY_CONTRACT as Address;
    const results = await Promise.all([
      viem.getBalance({ address: a }),
      viem.getBalance({ address: b }),
      viem.getTransactionCount({ address: c }),
      viem.readContract({ address: usdc, abi: erc20Abi, functionName: 'symbol' }),
      viem.readContract({ address: usdc, abi: erc20Abi, functionName: 'decimals' }),
    ]);
    expect(results).toEqual([
      chain.balanceAt(a, HEAD_BLOCK),
      chain.balanceAt(b, HEAD_BLOCK),
      chain.transactionCountAt(c, HEAD_BLOCK),
      'USDC',
      6,
    ]);
    expect(sent).toHaveLength(1);
    const batch = sent[0]!.body as { method: string }[];
    expect(Array.isArray(batch)).toBe(true);
    expect(batch.map((call) => call.method).sort()).toEqual([
      'eth_call',
      'eth_call',
      'eth_getBalance',
      'eth_getBalance',
      'eth_getTransactionCount',
    ]);
    const upstream = upstreamCalls();
    expect(upstream.map((u) => u.method).sort()).toEqual(batch.map((call) => call.method).sort());
    expect(new Set(upstream.map((u) => u.requestId))).toEqual(new Set([sent[0]!.requestId]));
  });

  it('takes the key from ?apikey= as well, and is refused (401) with none', async () => {
    const viem = client(`${gw.url}/1/json-rpc?apikey=${DEMO_KEY}`, null);
    expect(await viem.getTransactionCount({ address: chain.SAMPLE_ACCOUNT as Address })).toBe(
      chain.transactionCountAt(chain.SAMPLE_ACCOUNT, HEAD_BLOCK),
    );
    expect(sent.at(-1)).toMatchObject({ url: `${gw.url}/1/json-rpc?apikey=${DEMO_KEY}`, status: 200 });
    // The 401 is a JSON-RPC error object (-32002, the gateway's message), which viem reads as such.
    await expect(client(`${gw.url}/1/json-rpc`, null).getBlockNumber()).rejects.toMatchObject({
      name: 'ResourceUnavailableRpcError',
      code: -32002,
      details: 'API key required',
    });
    expect(sent.at(-1)!.status).toBe(401);
  });
});

// Issue 41, item 1: a batch is one request for the rate limit, and its calls' credits are billed
// together. The gateway's clock is frozen so that every request of a test falls in one rate window
// (a fresh one per test): a client that is refused for batching would be refused forever.
describe('batching clients on small plans: the rate counts HTTP requests, credits count calls', () => {
  const clock = { now: Date.now() };
  const BALANCE_COST = 7;
  const CREDITS = 1_000_000;
  let small: TestGateway;
  beforeAll(async () => {
    small = await startGateway(
      makeConfig([explorer.url], {
        plans: {
          free: { rps: 5, credits: CREDITS, period: 'daily' },
          pro: { rps: 30, credits: CREDITS, period: 'daily' },
        },
        keys: [
          { name: 'viem-free', key: 'viem-free-key', plan: 'free' },
          { name: 'viem-free-unbatched', key: 'viem-unbatched-key', plan: 'free' },
          { name: 'ethers-free', key: 'ethers-free-key', plan: 'free' },
          { name: 'viem-pro', key: 'viem-pro-key', plan: 'pro' },
        ],
        costs: { default: 20, routes: { 'rpc.eth_getBalance': BALANCE_COST } },
        // Every call reaches the explorer: credits are billed for hits too, this only keeps the
        // explorer's log complete.
        cache: { ttlSeconds: { 'rpc.eth_getBalance': 0 } },
      }),
      { now: () => clock.now },
    );
  });
  afterAll(() => small.close());
  beforeEach(() => {
    clock.now += 1_000;
  });

  /** viem on `key`, logging each HTTP request's body, status and credits left. */
  const viemOn = (key: string, batch: boolean, log: { body: unknown; status: number; credits: string | null }[]) => {
    let body: unknown;
    return createPublicClient({
      transport: http(`${small.url}/1/json-rpc`, {
        batch,
        retryCount: 0,
        fetchOptions: { headers: { authorization: `Bearer ${key}` } },
        onFetchRequest: (_request, init) => {
          body = JSON.parse(init.body as string) as unknown;
        },
        onFetchResponse: (response) => {
          log.push({ body, status: response.status, credits: response.headers.get('x-credits-remaining') });
        },
      }),
    });
  };
  const accounts = (n: number, from: number) => chain.POOL_ACCOUNTS.slice(from, from + n) as Address[];

  it('viem with batch: true reads 8 balances in parallel on a 5-rps key: all 8 succeed, in one request billed 8 calls', async () => {
    const log: { body: unknown; status: number; credits: string | null }[] = [];
    const viem = viemOn('viem-free-key', true, log);
    const eight = accounts(8, 0);
    const balances = await Promise.all(eight.map((address) => viem.getBalance({ address })));
    expect(balances).toEqual(eight.map((a) => chain.balanceAt(a, HEAD_BLOCK)));
    expect(log).toHaveLength(1);
    expect(callsIn(log[0]!.body)).toHaveLength(8);
    expect(log[0]!.status).toBe(200);
    expect(Number(log[0]!.credits)).toBe(CREDITS - 8 * BALANCE_COST);

    // The same reads without batching are eight requests: the first five of the window pass.
    const unbatched: typeof log = [];
    const single = viemOn('viem-unbatched-key', false, unbatched);
    const outcomes = await Promise.allSettled(eight.map((address) => single.getBalance({ address })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    expect(unbatched.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  });

  it("ethers' default batching reads 8 balances in parallel on a 5-rps key: all 8 succeed, billed 8 calls", async () => {
    const sent: { body: unknown; status: number; credits: string | undefined }[] = [];
    const request = new FetchRequest(`${small.url}/1/json-rpc?apikey=ethers-free-key`);
    const send = FetchRequest.createGetUrlFunc();
    request.getUrlFunc = async (req, signal) => {
      const response = await send(req, signal);
      sent.push({
        body: JSON.parse(Buffer.from(req.body ?? new Uint8Array()).toString('utf8')) as unknown,
        status: response.statusCode,
        credits: response.headers['x-credits-remaining'],
      });
      return response;
    };
    const provider = new JsonRpcProvider(request, 1, { staticNetwork: true });
    try {
      const eight = accounts(8, 8);
      const balances = await Promise.all(eight.map((address) => provider.getBalance(address)));
      expect(balances).toEqual(eight.map((a) => chain.balanceAt(a, HEAD_BLOCK)));
      expect(sent.map((s) => [s.status, callsIn(s.body).length])).toEqual([[200, 8]]);
      expect(Number(sent[0]!.credits)).toBe(CREDITS - 8 * BALANCE_COST);
    } finally {
      provider.destroy();
    }
  });

  it('a 40-call batch on a 30-rps key succeeds whole, billed 40 calls', async () => {
    const log: { body: unknown; status: number; credits: string | null }[] = [];
    const viem = viemOn('viem-pro-key', true, log);
    const forty = accounts(40, 16);
    const balances = await Promise.all(forty.map((address) => viem.getBalance({ address })));
    expect(balances).toEqual(forty.map((a) => chain.balanceAt(a, HEAD_BLOCK)));
    expect(log.map((r) => [r.status, callsIn(r.body).length])).toEqual([[200, 40]]);
    expect(Number(log[0]!.credits)).toBe(CREDITS - 40 * BALANCE_COST);
    expect(upstreamCalls().filter((c) => c.method === 'eth_getBalance')).toHaveLength(40);
  });
});

// Issue 41, item 4 (g): Blockscout refuses the `finalized` and `safe` tags (eth_rpc_helper.ex
// block_validator/1 takes latest, earliest, pending and hex numbers: "Invalid block number"); the
// gateway names the block its head and the chain's finality.depth (64 for chain 1) give.
describe('the finalized and safe block tags', () => {
  const DEPTH = 64;
  it('are refused by the explorer itself, and answered through the gateway from its head: ethers and viem', async () => {
    const direct = await fetch(`${explorer.url}/api/eth-rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['finalized', false] }),
    });
    expect(await direct.json()).toMatchObject({ error: 'Invalid block number' });

    // The gateway knows the head once an answer or its poll showed it.
    await until(async () => {
      const ready = (await (await gw.ops('/readyz')).json()) as { chains: Record<string, { head: { block: number | null } }> };
      return ready.chains['1']!.head.block === HEAD_BLOCK;
    }, "the gateway's head");
    const provider = new JsonRpcProvider(`${gw.url}/1/json-rpc?apikey=${DEMO_KEY}`, 1, { staticNetwork: true });
    try {
      explorer.reset();
      const finalized = await provider.getBlock('finalized');
      expect(finalized?.number).toBe(HEAD_BLOCK - DEPTH);
      expect(upstreamCalls().map((c) => c.params)).toEqual([[toHex(BigInt(HEAD_BLOCK - DEPTH)), false]]);
    } finally {
      provider.destroy();
    }
    const viem = createPublicClient({
      transport: http(`${gw.url}/1/json-rpc`, { retryCount: 0, fetchOptions: { headers: { authorization: `Bearer ${DEMO_KEY}` } } }),
    });
    expect((await viem.getBlock({ blockTag: 'safe' })).number).toBe(BigInt(HEAD_BLOCK - DEPTH));
    expect(await viem.getBalance({ address: chain.SAMPLE_ACCOUNT as Address, blockTag: 'finalized' })).toBe(
      chain.balanceAt(chain.SAMPLE_ACCOUNT, HEAD_BLOCK - DEPTH),
    );
  });

  it('are refused with a JSON-RPC error naming why while the gateway does not know the head, nothing forwarded', async () => {
    const headless = await startGateway(
      makeConfig([explorer.url], { chains: { '1': { name: 'Ethereum', upstreams: [explorer.url], head: { pollSeconds: 0 } } } }),
    );
    try {
      explorer.reset();
      const res = await headless.get('/1/json-rpc', {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['finalized', false] }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { error: { code: number; message: string } }).error).toMatchObject({
        code: -32000,
        message: expect.stringContaining('does not know yet') as unknown,
      });
      expect(upstreamCalls()).toHaveLength(0);
    } finally {
      await headless.close();
    }
  });
});
