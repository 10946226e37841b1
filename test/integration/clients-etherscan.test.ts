// Etherscan-style clients through a real gateway in front of the fixture explorer (issue 21,
// "Proof"): ethers v6's EtherscanProvider with only its host replaced (/v2/api?chainid=1, the
// proxy module by GET and by POSTed form), and contract verification as Foundry
// (foundry-block-explorers' submit_contract_verification: a urlencoded POST, module and action in
// the form, the key in --verifier-url's query) and Hardhat (hardhat-verify: the key in the form, or
// the key and chainid in the query) send it, multipart uploads included. Answers are checked
// against what the fixture explorer answers directly or against fixture/chain.ts; verification
// writes are shown to be forwarded once per request, billed once, never cached, and size-limited;
// no request the explorer receives carries the key.
//
// Every route is cached at its default lifetime here (legacy reads 30 s), so that "never cached"
// and "polled until it passes" mean something.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Contract, EtherscanProvider, Network, Wallet, getAddress, keccak256, isError } from 'ethers';
import { startFixtureExplorer, type FixtureExplorer, type RecordedRequest } from '../../fixture/explorer.js';
import { HEAD_BLOCK, tokenBalancesFor, transactionsFor, type Transaction } from '../../fixture/data.js';
import * as chain from '../../fixture/chain.js';
import { GAS_PRICE } from '../../fixture/rpc.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';

const EOA = '0x742d35cc6634c0532925a3b844bc454e4438f44e';
const topic = (address: string): string => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;
const ERC20_ABI = [
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function balanceOf(address) view returns (uint256)',
];
const EIP1967_IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
const seedTransactions = chain.SEED_ACCOUNTS.flatMap((a) => transactionsFor(a));
const fixtureTx = (hash: string): Transaction => seedTransactions.find((t) => t.hash === hash)!;
const KNOWN = fixtureTx(chain.KNOWN_TX_HASH);
const TRANSFER = fixtureTx(chain.KNOWN_TRANSFER_HASH);
const HOLDER = chain.SEED_ACCOUNTS.concat(Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, 'a')}`)).find((a) =>
  tokenBalancesFor(a, false).some((b) => b.token?.symbol === 'WETH'),
)!;
const HELD = BigInt(tokenBalancesFor(HOLDER, false).find((b) => b.token?.symbol === 'WETH')!.value);

/** Route costs set here, so that a charge can be told apart from any other. */
const COST = {
  verifysourcecode: 7,
  verify_via_sourcify: 9,
  checkverifystatus: 2,
  default: 20,
};
/** Small, so that the limit can be passed without megabytes (the default is 20 MiB). */
const MAX_VERIFY_BYTES = 32 * 1024;

let explorer: FixtureExplorer;
let gw: TestGateway;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(
    makeConfig([explorer.url], {
      cache: { ttlSeconds: {} },
      costs: {
        default: COST.default,
        routes: {
          'legacy.contract.verifysourcecode': COST.verifysourcecode,
          'legacy.contract.verify_via_sourcify': COST.verify_via_sourcify,
          'legacy.contract.checkverifystatus': COST.checkverifystatus,
        },
      },
      rpc: { maxVerifyBytes: MAX_VERIFY_BYTES },
    }),
  );
});
afterAll(async () => {
  await gw.close();
  await explorer.close();
});
beforeEach(() => explorer.reset());
afterEach(() => {
  // Whatever spelling and place the client used (query, form field, multipart part, Bearer), the
  // explorer gets no key: not in the URL, the headers or the body, and no apikey parameter at all.
  for (const r of explorer.requests) {
    expect(r.url, r.url).not.toContain(DEMO_KEY);
    expect(r.url.toLowerCase()).not.toContain('apikey');
    expect(JSON.stringify(r.headers)).not.toContain(DEMO_KEY);
    expect(r.bodyBytes?.includes(DEMO_KEY) ?? false).toBe(false);
    expect(r.body?.toLowerCase().includes('apikey') ?? false).toBe(false);
  }
});

interface UpstreamCall {
  method: string;
  params: unknown[];
}
const upstreamCalls = (): UpstreamCall[] =>
  explorer.requests.filter((r) => r.path === '/api/eth-rpc').map((r) => JSON.parse(r.body!) as UpstreamCall);
const credits = (res: Response): number => Number(res.headers.get('x-credits-remaining'));

// ---- ethers v6 EtherscanProvider

interface Fetched {
  module: string;
  action: unknown;
  post: boolean;
  url: string;
}
/** EtherscanProvider with the host of both its URLs replaced by the gateway's; it logs what it fetches. */
class GatewayEtherscan extends EtherscanProvider {
  readonly fetched: Fetched[] = [];
  override getUrl(module: string, params: Record<string, string>): string {
    return super.getUrl(module, params).replace('https://api.etherscan.io', gw.url);
  }
  override getPostUrl(): string {
    return super.getPostUrl().replace('https://api.etherscan.io', gw.url);
  }
  override fetch(module: string, params: Record<string, unknown>, post?: boolean): Promise<unknown> {
    const url = post === true ? this.getPostUrl() : this.getUrl(module, params as Record<string, string>);
    this.fetched.push({ module, action: params.action, post: post === true, url });
    return super.fetch(module, params, post);
  }
}

/** The fixture explorer's own answer to the last legacy GET the gateway sent it. */
async function directAnswerToLast(path: string): Promise<{ result: unknown }> {
  const sent = explorer.requests.filter((r) => r.path === path && r.method === 'GET').at(-1)!;
  return (await (await fetch(`${explorer.url}${sent.url}`)).json()) as { result: unknown };
}

describe('ethers v6 EtherscanProvider at /v2/api?chainid=1', () => {
  let provider: GatewayEtherscan;
  beforeEach(() => {
    provider = new GatewayEtherscan(Network.from(1), DEMO_KEY);
  });
  afterEach(() => provider.destroy());

  it('its 14 methods that reach the network answer (11 by GET, 3 by POSTed form), getStorage for slots written alike in decimal and hex', async () => {
    // 1. getBlockNumber (proxy eth_blockNumber)
    expect(await provider.getBlockNumber()).toBe(HEAD_BLOCK);

    // 2. getBlock by number and by tag, with and without transactions (proxy eth_getBlockByNumber)
    const n = KNOWN.block_number;
    const block = (await provider.getBlock(n))!;
    expect(block).toMatchObject({
      number: n,
      hash: chain.blockHash(n),
      parentHash: chain.blockHash(n - 1),
      timestamp: chain.blockTimestamp(n),
    });
    expect(block.transactions).toEqual(chain.blockTransactions(n).map(chain.txHash));
    const full = (await provider.getBlock(n, true))!;
    expect(full.prefetchedTransactions.map((t) => t.hash)).toEqual(block.transactions);
    expect(full.prefetchedTransactions[KNOWN.position]!.from.toLowerCase()).toBe(KNOWN.from.hash.toLowerCase());
    expect(await provider.getBlock('latest')).toMatchObject({ number: HEAD_BLOCK, hash: chain.blockHash(HEAD_BLOCK) });

    // 3. getFeeData: getGasPrice (proxy eth_gasPrice) and the latest block; on mainnet ethers
    // answers getPriorityFee itself (1 gwei), without a request.
    const fees = await provider.getFeeData();
    expect(fees.gasPrice).toBe(GAS_PRICE);
    expect(fees.maxPriorityFeePerGas).toBe(1_000_000_000n);
    expect(fees.maxFeePerGas).toBe(chain.blockAt(HEAD_BLOCK)!.baseFeePerGas * 2n + 1_000_000_000n);

    // 4. getBalance (account balance, a decimal result): the explorer's own answer to what was forwarded
    const balance = await provider.getBalance(chain.SAMPLE_ACCOUNT);
    expect(balance).toBe(BigInt((await directAnswerToLast('/api')).result as string));
    // (ethers adds tag=latest, which the action does not declare: the gateway leaves it out.)
    expect(explorer.requests.filter((r) => r.path === '/api').at(-1)!.query).toEqual({
      module: 'account',
      action: 'balance',
      address: chain.SAMPLE_ACCOUNT,
    });

    // 5. getTransactionCount, 6. getCode (proxy eth_getTransactionCount, eth_getCode)
    expect(await provider.getTransactionCount(chain.SAMPLE_ACCOUNT)).toBe(chain.transactionCountAt(chain.SAMPLE_ACCOUNT, HEAD_BLOCK));
    expect(await provider.getCode(chain.TOKEN_CONTRACT)).toBe(chain.codeAt(chain.TOKEN_CONTRACT));

    // 7. getStorage (proxy eth_getStorageAt): EtherscanProvider puts the slot in the URL without a
    // prefix, in decimal (`position: req.position`, a bigint in a template string); the gateway
    // reads digits alone as the decimal slot they are (issue 41), so the EIP-1967 slot and slot 10
    // are the slots meant (the fixture's slot 10 holds the token's decimals, its slot 0x10 nothing).
    expect(await provider.getStorage(chain.PROXY_CONTRACT, 2n)).toBe(chain.storageAt(chain.PROXY_CONTRACT, 2n));
    expect(provider.fetched.at(-1)!.url).toContain('&position=2&');
    expect(await provider.getStorage(chain.PROXY_CONTRACT, BigInt(EIP1967_IMPLEMENTATION_SLOT))).toBe(topic(chain.USDC_IMPLEMENTATION));
    expect(provider.fetched.at(-1)!.url).toContain(`&position=${BigInt(EIP1967_IMPLEMENTATION_SLOT).toString()}&`);
    expect(await provider.getStorage(chain.TOKEN_CONTRACT, 10n)).toBe(`0x${(18).toString(16).padStart(64, '0')}`);
    expect(provider.fetched.at(-1)!.url).toContain('&position=10&');
    expect(chain.storageAt(chain.TOKEN_CONTRACT, 0x10n)).not.toBe(chain.storageAt(chain.TOKEN_CONTRACT, 10n));
    // The explorer was asked for the hex quantities of those slots.
    expect(
      upstreamCalls()
        .filter((c) => c.method === 'eth_getStorageAt')
        .map((c) => c.params[1]),
    ).toEqual(['0x2', EIP1967_IMPLEMENTATION_SLOT, '0xa']);
    // A 0x-prefixed position stays hex, as Etherscan documents it.
    const hex = await fetch(
      `${gw.url}/v2/api?chainid=1&module=proxy&action=eth_getStorageAt&address=${chain.TOKEN_CONTRACT}&position=0xa&apikey=${DEMO_KEY}`,
    );
    expect(((await hex.json()) as { result: string }).result).toBe(chain.storageAt(chain.TOKEN_CONTRACT, 10n));

    // 8. getTransaction, 9. getTransactionReceipt (proxy eth_getTransactionByHash, eth_getTransactionReceipt)
    const tx = (await provider.getTransaction(chain.KNOWN_TX_HASH))!;
    expect(tx).toMatchObject({ hash: KNOWN.hash, blockNumber: n, index: KNOWN.position, nonce: KNOWN.nonce, value: BigInt(KNOWN.value) });
    const receipt = (await provider.getTransactionReceipt(chain.KNOWN_TRANSFER_HASH))!;
    expect(receipt).toMatchObject({
      hash: TRANSFER.hash,
      status: 1,
      blockNumber: TRANSFER.block_number,
      gasUsed: BigInt(String(TRANSFER.gas_used)),
    });
    expect(receipt.logs.map((l) => [l.topics[0], l.topics[1]])).toEqual([[chain.TRANSFER_TOPIC, topic(TRANSFER.from.hash)]]);

    // 10. call: a Contract's reads, each a POSTed form (proxy eth_call)
    const token = new Contract(chain.TOKEN_CONTRACT, ERC20_ABI, provider);
    expect(await token.getFunction('balanceOf')(HOLDER)).toBe(HELD);
    expect(await token.getFunction('symbol')()).toBe('WETH');
    expect(await token.getFunction('decimals')()).toBe(18n);

    // 11. estimateGas (POSTed proxy eth_estimateGas; ethers writes gasLimit, the gateway reads it as gas)
    expect(await provider.estimateGas({ to: EOA, value: 1n })).toBe(21_000n);
    const data = new Contract(chain.TOKEN_CONTRACT, ERC20_ABI).interface.encodeFunctionData('balanceOf', [HOLDER]);
    expect(await provider.estimateGas({ to: chain.TOKEN_CONTRACT, data, gasLimit: 100_000n })).toBe(
      chain.estimateGas(chain.TOKEN_CONTRACT, data),
    );
    expect(
      upstreamCalls()
        .filter((c) => c.method === 'eth_estimateGas')
        .at(-1)!.params,
    ).toEqual([{ data, gas: '0x186a0', to: chain.TOKEN_CONTRACT }, 'latest']);

    // 12. broadcastTransaction (POSTed proxy eth_sendRawTransaction): the explorer gets it exactly once
    const wallet = Wallet.createRandom();
    const signed = await wallet.signTransaction({ to: EOA, value: 1n, chainId: 1n, nonce: 0, gasLimit: 21_000n, gasPrice: GAS_PRICE });
    const sent = await provider.broadcastTransaction(signed);
    expect(sent.hash).toBe(keccak256(signed));
    expect(sent.from).toBe(wallet.address);
    expect(explorer.rawTransactions).toEqual([signed]);

    // 13. getEtherPrice (stats ethprice): the explorer's ethusd
    const price = await provider.getEtherPrice();
    expect(price).toBe(Number(((await directAnswerToLast('/api')).result as { ethusd: string }).ethusd));

    // 14. getContract (contract getabi): a Contract with the ABI the explorer has
    const contract = (await provider.getContract(chain.TOKEN_CONTRACT))!;
    expect(contract).not.toBeNull();
    const abi = JSON.parse((await directAnswerToLast('/api')).result as string) as { name?: string }[];
    expect(contract.interface.fragments.map((f) => (f as { name?: string }).name)).toEqual(abi.map((f) => f.name));
    expect(await contract.getAddress()).toBe(getAddress(chain.TOKEN_CONTRACT));

    // What it fetched, and how: every URL on the gateway's /v2/api?chainid=1, writes and calls by POST.
    const actions = provider.fetched.map((f) => `${f.module}.${String(f.action)}${f.post ? ' POST' : ''}`);
    expect(new Set(actions)).toEqual(
      new Set([
        'proxy.eth_blockNumber',
        'proxy.eth_getBlockByNumber',
        'proxy.eth_gasPrice',
        'account.balance',
        'proxy.eth_getTransactionCount',
        'proxy.eth_getCode',
        'proxy.eth_getStorageAt',
        'proxy.eth_getTransactionByHash',
        'proxy.eth_getTransactionReceipt',
        'proxy.eth_call POST',
        'proxy.eth_estimateGas POST',
        'proxy.eth_sendRawTransaction POST',
        'stats.ethprice',
        'contract.getabi',
      ]),
    );
    for (const f of provider.fetched) expect(f.url.startsWith(`${gw.url}/v2/api?chainid=1`), f.url).toBe(true);
  });

  it('what it cannot do, it refuses itself, before any request: getBlock by hash, getLogs, a call at a past block', async () => {
    // EtherscanProvider._perform asserts that getBlock takes a tag, never a hash.
    await expect(provider.getBlock(chain.blockHash(KNOWN.block_number))).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
      shortMessage: 'getBlock by blockHash not supported by Etherscan',
    });
    // Its getLogs is commented out in ethers 6: AbstractProvider._perform refuses the method.
    await expect(provider.getLogs({ address: chain.TOKEN_CONTRACT, fromBlock: 1, toBlock: 2 })).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
      shortMessage: 'unsupported method: getLogs',
    });
    // eth_call is only ever sent at latest.
    const error: unknown = await provider.call({ to: chain.TOKEN_CONTRACT, data: '0x95d89b41', blockTag: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('EtherscanProvider does not support blockTag for call');
    expect(provider.fetched).toEqual([]);
    expect(explorer.requests).toEqual([]);
  });

  it("passes the node's errors on as ethers expects them: a revert is CALL_EXCEPTION, a bad transaction SERVER_ERROR", async () => {
    await expect(provider.call({ to: chain.REVERTING_CONTRACT, data: '0x' })).rejects.toMatchObject({ code: 'CALL_EXCEPTION' });
    await expect(provider.estimateGas({ to: chain.REVERTING_CONTRACT })).rejects.toMatchObject({ code: 'CALL_EXCEPTION' });
    const wallet = Wallet.createRandom();
    const elsewhere = await wallet.signTransaction({ to: EOA, value: 1n, chainId: 5n, nonce: 0, gasLimit: 21_000n, gasPrice: 1n });
    const error: unknown = await provider.broadcastTransaction(elsewhere).catch((e: unknown) => e);
    expect(isError(error, 'SERVER_ERROR')).toBe(true);
    expect((error as { info: { result: unknown } }).info.result).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32000, message: 'invalid chain id for signer' },
    });
    expect(explorer.rawTransactions).toEqual([]);
  });
});

// ---- contract verification, as Foundry and Hardhat send it

const COMPILER = 'v0.8.28+commit.7893614a';
const CONTRACT_NAME = 'src/Counter.sol:Counter';
const standardJson = (padding = ''): string =>
  JSON.stringify({
    language: 'Solidity',
    sources: {
      'src/Counter.sol': {
        content: `// SPDX-License-Identifier: MIT\npragma solidity ^0.8.28;\ncontract Counter { uint256 public n; }\n${padding}`,
      },
    },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun' },
  });
/** foundry-block-explorers' VerifyContract for a Standard JSON input, in its field order (Query puts module and action first). */
const foundryFields = (sourceCode = standardJson()): [string, string][] => [
  ['module', 'contract'],
  ['action', 'verifysourcecode'],
  ['contractaddress', getAddress(chain.VERIFIABLE_CONTRACT)],
  ['sourceCode', sourceCode],
  ['codeformat', 'solidity-standard-json-input'],
  ['contractname', CONTRACT_NAME],
  ['compilerversion', COMPILER],
  ['evmversion', 'cancun'],
  ['viaIR', 'false'],
];
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const postForm = (target: string, fields: [string, string][], headers: Record<string, string> = FORM) =>
  fetch(`${gw.url}${target}`, { method: 'POST', headers, body: new URLSearchParams(fields).toString() });
interface Envelope {
  status: string;
  message: string;
  result: unknown;
}
const json = async (res: Response): Promise<Envelope> => (await res.json()) as Envelope;

/** The verification writes the explorer received: POSTs to /api. */
const writes = (): RecordedRequest[] => explorer.requests.filter((r) => r.method === 'POST' && r.path === '/api');
const fieldsOf = (r: RecordedRequest): Record<string, string> => Object.fromEntries(new URLSearchParams(r.body));

/** Polls as the tools do, until the status is no longer pending; returns every answer's result. */
async function pollStatus(check: () => Promise<Response>): Promise<{ results: unknown[]; last: Response }> {
  const results: unknown[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await check();
    expect(res.status).toBe(200);
    const body = await json(res.clone());
    results.push(body.result);
    if (body.result !== 'Pending in queue') return { results, last: res };
  }
  throw new Error(`still pending after 5 checks: ${JSON.stringify(results)}`);
}

describe('contract verification through the gateway', () => {
  it('Foundry: a urlencoded POST to --verifier-url /1/api?apikey=KEY, module and action in the form; polled by POST until it passes', async () => {
    const fields = foundryFields();
    const submitted = await postForm(`/1/api?apikey=${DEMO_KEY}`, fields);
    expect(submitted.status).toBe(200);
    const answer = await json(submitted);
    expect(answer).toEqual({
      message: 'OK',
      status: '1',
      result: expect.stringMatching(new RegExp(`^${chain.VERIFIABLE_CONTRACT.slice(2)}[0-9a-f]{8,}$`)) as unknown,
    });
    const guid = answer.result as string;

    // Forwarded once, as a POST to /api?module=contract&action=verifysourcecode with every field of the form.
    const [write, ...more] = writes();
    expect(more).toEqual([]);
    expect(write!.query).toEqual({ module: 'contract', action: 'verifysourcecode' });
    expect(write!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(fieldsOf(write!)).toEqual(Object.fromEntries(fields));

    // forge verify-contract --watch posts its checks too (check_contract_verification_status).
    const { results } = await pollStatus(() =>
      postForm(`/1/api?apikey=${DEMO_KEY}`, [
        ['module', 'contract'],
        ['action', 'checkverifystatus'],
        ['guid', guid],
      ]),
    );
    // Pending, then Pass: the checks are never answered from the cache.
    expect(results).toEqual(['Pending in queue', 'Pass - Verified']);
    const checks = explorer.requests.filter((r) => r.query.action === 'checkverifystatus');
    expect(checks.map((r) => [r.method, r.query])).toEqual([
      ['GET', { module: 'contract', action: 'checkverifystatus', guid }],
      ['GET', { module: 'contract', action: 'checkverifystatus', guid }],
    ]);
    // Verified now: the same submission is the explorer's refusal, passed on as it is.
    expect(await json(await postForm(`/1/api?apikey=${DEMO_KEY}`, fields))).toEqual({
      message: 'Smart-contract already verified.',
      result: 'Smart-contract already verified.',
      status: '0',
    });
  });

  it('Hardhat (hardhat-verify 2): the key among the form fields, the status by GET with apikey', async () => {
    const fields: [string, string][] = [
      ['apikey', DEMO_KEY],
      ['module', 'contract'],
      ['action', 'verifysourcecode'],
      ['contractaddress', chain.VERIFIABLE_CONTRACT],
      ['sourceCode', standardJson()],
      ['codeformat', 'solidity-standard-json-input'],
      ['contractname', CONTRACT_NAME],
      ['compilerversion', COMPILER],
      ['constructorArguements', ''],
    ];
    const answer = await json(await postForm('/1/api', fields));
    expect(answer).toMatchObject({ message: 'OK', status: '1' });
    const { apikey: _key, ...forwarded } = Object.fromEntries(fields);
    expect(writes().map(fieldsOf)).toEqual([forwarded]);
    const { results } = await pollStatus(() =>
      fetch(`${gw.url}/1/api?apikey=${DEMO_KEY}&module=contract&action=checkverifystatus&guid=${String(answer.result)}`),
    );
    expect(results).toEqual(['Pending in queue', 'Pass - Verified']);
  });

  it('Hardhat (hardhat-verify 3): module, action, chainid and apikey in the query, the contract in the form', async () => {
    const body: [string, string][] = [
      ['contractaddress', chain.VERIFIABLE_CONTRACT],
      ['sourceCode', standardJson()],
      ['codeformat', 'solidity-standard-json-input'],
      ['contractname', CONTRACT_NAME],
      ['compilerversion', COMPILER],
      ['constructorArguments', ''],
    ];
    const query = `module=contract&action=verifysourcecode&chainid=1&apikey=${DEMO_KEY}`;
    const answer = await json(await postForm(`/1/api?${query}`, body));
    expect(answer).toMatchObject({ message: 'OK', status: '1' });
    const [write] = writes();
    expect(write!.query).toEqual({ module: 'contract', action: 'verifysourcecode' });
    expect(fieldsOf(write!)).toMatchObject(Object.fromEntries(body));
    expect(fieldsOf(write!).chainid).toBeUndefined();
    const { results } = await pollStatus(() =>
      fetch(`${gw.url}/1/api?module=contract&action=checkverifystatus&chainid=1&apikey=${DEMO_KEY}&guid=${String(answer.result)}`),
    );
    expect(results).toEqual(['Pending in queue', 'Pass - Verified']);
    // The same through the Etherscan V2 base URL, which is what hardhat-verify 3 calls by default.
    explorer.reset();
    const v2 = await json(await postForm(`/v2/api?${query}`, body));
    expect(v2).toMatchObject({ message: 'OK', status: '1' });
    expect(writes()).toHaveLength(1);
  });

  it('hardhat-upgrades (proxy verification): every field in the query, an empty body; the explorer gets them as its form (issue 41)', async () => {
    // hardhat-upgrades' verifyProxy calls hardhat-verify's customApiCall by POST with
    // {module, action, address, expectedimplementation} as query parameters beside chainid and
    // apikey, and no body: the explorer reads conn.params, the query's fields when the body has none.
    const query = (address: string) =>
      `chainid=1&apikey=${DEMO_KEY}&module=contract&action=verifyproxycontract&address=${address}&expectedimplementation=${chain.USDC_IMPLEMENTATION}`;
    for (const headers of [FORM, {}]) {
      explorer.reset();
      const submitted = await fetch(`${gw.url}/1/api?${query(chain.PROXY_CONTRACT)}`, { method: 'POST', headers });
      expect(submitted.status).toBe(200);
      const answer = await json(submitted);
      expect(answer).toMatchObject({ message: 'OK', status: '1', result: expect.stringMatching(/^[0-9a-f]{48,}$/) as unknown });
      const [write, ...more] = writes();
      expect(more).toEqual([]);
      expect(write!.query).toEqual({ module: 'contract', action: 'verifyproxycontract' });
      expect(fieldsOf(write!)).toEqual({ address: chain.PROXY_CONTRACT, expectedimplementation: chain.USDC_IMPLEMENTATION });
      // Then it polls checkproxyverification (GET, the same query shape) until the proxy is resolved.
      const check = () =>
        fetch(`${gw.url}/1/api?chainid=1&apikey=${DEMO_KEY}&module=contract&action=checkproxyverification&guid=${String(answer.result)}`);
      expect((await json(await check())).result).toBe('Verification in progress');
      expect((await json(await check())).result).toBe(
        `The proxy's (${chain.PROXY_CONTRACT}) implementation contract is found at ${chain.USDC_IMPLEMENTATION} and is successfully updated.`,
      );
    }
    // A field in both places: the body's wins, as in conn.params; the query's others still count.
    explorer.reset();
    const both = await postForm(`/1/api?${query(chain.TOKEN_CONTRACT)}`, [['address', chain.PROXY_CONTRACT]]);
    expect(await json(both)).toMatchObject({ message: 'OK', status: '1' });
    expect(writes().map(fieldsOf)).toEqual([{ expectedimplementation: chain.USDC_IMPLEMENTATION, address: chain.PROXY_CONTRACT }]);
    // The explorer's refusal of a bad address comes back as it is: no 502.
    const bad = await fetch(`${gw.url}/1/api?${query('0xnope')}`, { method: 'POST', headers: FORM });
    expect([bad.status, await json(bad)]).toEqual([200, { message: 'Invalid address hash', result: null, status: '0' }]);
  });

  it('bills a write its route cost once per request, forwards every identical request (never cached), and returns no cache header', async () => {
    const fields = foundryFields();
    const before = credits(await gw.get(`/1/api?module=contract&action=checkverifystatus&guid=0`));
    const first = await postForm(`/1/api?apikey=${DEMO_KEY}`, fields);
    const second = await postForm(`/1/api?apikey=${DEMO_KEY}`, fields);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(credits(first)).toBe(before - COST.verifysourcecode);
    expect(credits(second)).toBe(before - 2 * COST.verifysourcecode);
    expect([first.headers.get('x-cache'), second.headers.get('x-cache')]).toEqual([null, null]);
    const [a, b] = [await json(first), await json(second)];
    expect([a.status, b.status]).toEqual(['1', '1']);
    expect(a.result).not.toBe(b.result); // two submissions, two GUIDs
    expect(writes().map(fieldsOf)).toEqual([Object.fromEntries(fields), Object.fromEntries(fields)]);
    // Nothing more is taken afterwards: the next read costs its own price only.
    const after = await gw.get(`/1/api?module=contract&action=checkverifystatus&guid=${String(a.result)}`);
    expect(credits(after)).toBe(before - 2 * COST.verifysourcecode - COST.checkverifystatus);
  });

  it('a multipart upload (verify_via_sourcify) reaches the explorer multipart, its files byte for byte, without the key', async () => {
    // A .sol file that is not UTF-8 and holds what a multipart parser could stumble on.
    const sol = Buffer.concat([
      Buffer.from('// SPDX-License-Identifier: MIT\r\n--not-a-boundary\r\nContent-Disposition: form-data; name="x"\r\n\r\n'),
      Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0d, 0x0a, 0x2d, 0x2d]),
      Buffer.from('\ncontract Counter { uint256 public n; }\n'),
    ]);
    const metadata = Buffer.from(JSON.stringify({ compiler: { version: '0.8.28' }, language: 'Solidity', output: { abi: [] } }));
    const form = new FormData();
    form.append('module', 'contract');
    form.append('action', 'verify_via_sourcify');
    form.append('addressHash', chain.VERIFIABLE_CONTRACT);
    form.append('apiKey', DEMO_KEY);
    form.append('files[0]', new Blob([sol]), 'Counter.sol');
    form.append('files[1]', new Blob([metadata], { type: 'application/json' }), 'metadata.json');
    const before = credits(await gw.get(`/1/api?module=contract&action=checkverifystatus&guid=0`));
    const res = await fetch(`${gw.url}/1/api`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(credits(res)).toBe(before - COST.verify_via_sourcify);
    expect(await json(res)).toMatchObject({
      message: 'OK',
      status: '1',
      result: { Address: chain.VERIFIABLE_CONTRACT, ContractName: 'Counter' },
    });

    const [write, ...more] = writes();
    expect(more).toEqual([]);
    expect(write!.query).toEqual({ module: 'contract', action: 'verify_via_sourcify' });
    const type = write!.headers['content-type'] as string;
    expect(type).toMatch(/^multipart\/form-data; boundary=/);
    expect(write!.bodyBytes!.includes(sol)).toBe(true);
    expect(write!.bodyBytes!.includes(metadata)).toBe(true);
    const received = await new Request('http://explorer.invalid/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: write!.bodyBytes!,
    }).formData();
    expect([...received.keys()]).toEqual(['module', 'action', 'addressHash', 'files[0]', 'files[1]']);
    const files = [received.get('files[0]'), received.get('files[1]')] as File[];
    expect(files.map((f) => f.name)).toEqual(['Counter.sol', 'metadata.json']);
    expect(Buffer.from(await files[0]!.arrayBuffer()).equals(sol)).toBe(true);
    expect(Buffer.from(await files[1]!.arrayBuffer()).equals(metadata)).toBe(true);
    expect(files[1]!.type).toBe('application/json');
  });

  it('takes the key in any spelling and place, and the explorer never gets it', async () => {
    const check = (guid: string): [string, string][] => [
      ['module', 'contract'],
      ['action', 'checkverifystatus'],
      ['guid', guid],
    ];
    const guid = (await json(await postForm(`/1/api?APIKEY=${DEMO_KEY}`, foundryFields()))).result as string;
    const spellings: [string, [string, string][], Record<string, string>][] = [
      [`/1/api?apiKey=${DEMO_KEY}`, check(guid), FORM],
      ['/1/api', [...check(guid), ['ApiKey', DEMO_KEY]], FORM],
      [`/v2/api?chainid=1&apikey=${DEMO_KEY}`, [...check(guid), ['apikey', DEMO_KEY]], FORM],
      ['/1/api', check(guid), { ...FORM, authorization: `Bearer ${DEMO_KEY}` }],
    ];
    for (const [target, fields, headers] of spellings) expect((await postForm(target, fields, headers)).status, target).toBe(200);
    const multipart = new FormData();
    for (const [name, value] of foundryFields()) multipart.append(name, value);
    multipart.append('APIKEY', DEMO_KEY);
    expect((await fetch(`${gw.url}/1/api?apikey=${DEMO_KEY}`, { method: 'POST', body: multipart })).status).toBe(200);
    // Two writes and four checks reached the explorer; the afterEach hook finds no key in any of them.
    expect(explorer.requests).toHaveLength(6);
    // A key that differs between the query and the form is refused, and nothing is forwarded.
    explorer.reset();
    const conflicting = await postForm(`/1/api?apikey=${DEMO_KEY}`, [...foundryFields(), ['apikey', 'another-key']]);
    expect(conflicting.status).toBe(401);
    // The message names the two places the keys were found in (issue 41): no Authorization was sent.
    expect(await json(conflicting)).toEqual({
      message: 'Conflicting API keys in the apikey query parameter and the apikey form field',
      result: null,
      status: '0',
    });
    const withBearer = await postForm('/1/api', [...foundryFields(), ['apikey', 'another-key']], {
      ...FORM,
      authorization: `Bearer ${DEMO_KEY}`,
    });
    expect((await json(withBearer)).message).toBe('Conflicting API keys in the Authorization header and the apikey form field');
    expect(explorer.requests).toEqual([]);
    // The same key in the query and the form is that key.
    const same = await postForm(`/1/api?apikey=${DEMO_KEY}`, [...foundryFields(), ['apikey', DEMO_KEY]]);
    expect([same.status, (await json(same)).status]).toEqual([200, '1']);
  });

  it("hardhat-verify 2.1's Blockscout mode (its apikey=api_key), with the key in apiURL's query: the POSTed submission passes, its GETs lose the key (issue 41)", async () => {
    // The requests of @nomicfoundation/hardhat-verify 2.1.3 (src/internal/etherscan.ts) when its
    // Blockscout class makes them with the key "api_key" and apiURL `GATEWAY/1/api?apikey=KEY`:
    // isVerified and getVerificationStatus replace the URL's query (`url.search = ...`), so the
    // key written there is gone; verify keeps apiURL's query and posts its own apikey in the form.
    const isVerified = await fetch(
      `${gw.url}/1/api?apikey=api_key&module=contract&action=getsourcecode&address=${chain.VERIFIABLE_CONTRACT}`,
    );
    expect(isVerified.status).toBe(401);
    expect((await json(isVerified)).message).toBe(
      'Invalid API key: api_key and YourApiKeyToken are placeholders that clients send, not keys',
    );
    const submitted = await postForm(`/1/api?apikey=${DEMO_KEY}`, [
      ['apikey', 'api_key'],
      ['module', 'contract'],
      ['action', 'verifysourcecode'],
      ['contractaddress', chain.VERIFIABLE_CONTRACT],
      ['sourceCode', standardJson()],
      ['codeformat', 'solidity-standard-json-input'],
      ['contractname', CONTRACT_NAME],
      ['compilerversion', COMPILER],
      ['constructorArguements', ''],
    ]);
    const answer = await json(submitted);
    expect([submitted.status, answer.status, answer.message]).toEqual([200, '1', 'OK']);
    expect(writes()).toHaveLength(1);
    const poll = await fetch(`${gw.url}/1/api?apikey=api_key&module=contract&action=checkverifystatus&guid=${String(answer.result)}`);
    expect(poll.status).toBe(401);
  });

  it('refuses a body over rpc.maxVerifyBytes with 413 and forwards nothing: by Content-Length, chunked, and multipart', async () => {
    const big = foundryFields(standardJson('x'.repeat(MAX_VERIFY_BYTES)));
    const declared = await postForm(`/1/api?apikey=${DEMO_KEY}`, big);
    expect(declared.status).toBe(413);
    expect(await json(declared)).toMatchObject({ status: '0', result: null });

    // Without a Content-Length: cut off once the limit is passed.
    const bytes = new TextEncoder().encode(new URLSearchParams(big).toString());
    const chunked = await fetch(`${gw.url}/1/api?apikey=${DEMO_KEY}`, {
      method: 'POST',
      headers: FORM,
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 4096) controller.enqueue(bytes.subarray(i, i + 4096));
          controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);

    const multipart = new FormData();
    multipart.append('module', 'contract');
    multipart.append('action', 'verify_via_sourcify');
    multipart.append('addressHash', chain.VERIFIABLE_CONTRACT);
    multipart.append('files[0]', new Blob([Buffer.alloc(MAX_VERIFY_BYTES, 0x61)]), 'Counter.sol');
    multipart.append('files[1]', new Blob(['{}']), 'metadata.json');
    expect((await fetch(`${gw.url}/1/api?apikey=${DEMO_KEY}`, { method: 'POST', body: multipart })).status).toBe(413);
    expect(explorer.requests).toEqual([]);

    // Just under the limit is forwarded whole.
    const fits = foundryFields(standardJson('x'.repeat(MAX_VERIFY_BYTES - 2048)));
    expect(new URLSearchParams(fits).toString().length).toBeLessThan(MAX_VERIFY_BYTES);
    expect(await json(await postForm(`/1/api?apikey=${DEMO_KEY}`, fits))).toMatchObject({ status: '1', message: 'OK' });
    expect(writes().map(fieldsOf)).toEqual([Object.fromEntries(fits)]);
  });
});
