// etherscan-api 12 (node_modules/etherscan-api), the library Etherscan users bring, against a real
// gateway in front of the real fixture explorer, with the library's own defaults: txlist and the
// token transfer lists send `startblock=0&endblock=latest&page=1&offset=100&sort=asc`, balance
// and tokenbalance add `tag=latest`, every call adds `chainid` and `apikey`. An explorer ignores
// `endblock=latest` (address_controller.ex put_block/3), so the gateway drops it rather than
// refusing it (src/routes/legacy-rules.ts), and the explorer gets the canonical request.
//
// The library's host is fixed (`https://api.etherscan.io`, Etherscan V2's `/v2/api?chainid=N`
// form, which the gateway serves as is), but init() takes a transport: the test passes the
// library's own httpTransport with the host replaced by the gateway's and plain http allowed
// (the gateway listens on loopback). Nothing else of the library is changed.
import { init, httpTransport, type EtherscanApi, type Transport } from 'etherscan-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { SAMPLE_HASH } from '../support/samples.js';

const a = ADDRESS.toLowerCase();
const CONTRACT = '0xB7D311E2Eb55F2f68a9440da38e7989210b9A05E';
const c = CONTRACT.toLowerCase();
const OTHER_KEY = 'test-key-other';

let explorer: FixtureExplorer;
/** The cache off (makeConfig's default): every call reaches the explorer. */
let gw: TestGateway;
/** The cache on for legacy actions, and a second key. */
let cached: TestGateway;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(makeConfig([explorer.url]));
  cached = await startGateway(
    makeConfig([explorer.url], {
      keys: [
        { name: 'demo', key: DEMO_KEY, plan: 'free' },
        { name: 'other', key: OTHER_KEY, plan: 'free' },
      ],
      cache: { ttlSeconds: { legacy: 60 } },
    }),
  );
});
afterAll(async () => {
  await cached.close();
  await gw.close();
  await explorer.close();
});

/** etherscan-api's own transport, sending to the gateway instead of api.etherscan.io. */
const through =
  (gateway: () => TestGateway): Transport =>
  (url, options) =>
    httpTransport(url.replace('https://api.etherscan.io', gateway().url), { ...options, allowInsecure: true });

/** The client as a user makes it: a key and a chain, the library's defaults for everything else. */
const api = (gateway: () => TestGateway = () => gw, key = DEMO_KEY): EtherscanApi => init(key, 1, 5_000, through(gateway));

/** What the fixture explorer answers to this request itself. */
const direct = async (target: string): Promise<unknown> => (await fetch(explorer.url + target)).json();

type Call = (client: EtherscanApi) => Promise<unknown>;

// Each call, and the one request the explorer should get for it: module and action as the
// document spells them, then the parameters the action reads, canonical and sorted.
const SERVED: [string, Call, string][] = [
  ['account.balance', (x) => x.account.balance(ADDRESS), `/api?module=account&action=balance&address=${a}`],
  [
    'account.balance (a list: balancemulti)',
    (x) => x.account.balance([ADDRESS, CONTRACT]),
    `/api?module=account&action=balancemulti&address=${a}%2C${c}`,
  ],
  [
    'account.txlist',
    (x) => x.account.txlist(ADDRESS),
    `/api?module=account&action=txlist&address=${a}&offset=100&page=1&sort=asc&startblock=0`,
  ],
  [
    'account.txlistinternal by address',
    (x) => x.account.txlistinternal(undefined, ADDRESS),
    `/api?module=account&action=txlistinternal&address=${a}&sort=asc&startblock=0`,
  ],
  [
    'account.txlistinternal by transaction',
    (x) => x.account.txlistinternal(SAMPLE_HASH),
    `/api?module=account&action=txlistinternal&sort=asc&txhash=${SAMPLE_HASH}`,
  ],
  [
    'account.tokentx',
    (x) => x.account.tokentx(ADDRESS),
    `/api?module=account&action=tokentx&address=${a}&offset=100&page=1&sort=asc&startblock=0`,
  ],
  [
    'account.tokentx of one token',
    (x) => x.account.tokentx(ADDRESS, CONTRACT),
    `/api?module=account&action=tokentx&address=${a}&contractaddress=${c}&offset=100&page=1&sort=asc&startblock=0`,
  ],
  [
    'account.tokennfttx',
    (x) => x.account.tokennfttx(ADDRESS),
    `/api?module=account&action=tokennfttx&address=${a}&offset=100&page=1&sort=asc&startblock=0`,
  ],
  [
    'account.token1155tx',
    (x) => x.account.token1155tx(ADDRESS),
    `/api?module=account&action=token1155tx&address=${a}&offset=100&page=1&sort=asc&startblock=0`,
  ],
  [
    'account.tokenbalance',
    (x) => x.account.tokenbalance(ADDRESS, '', CONTRACT),
    `/api?module=account&action=tokenbalance&address=${a}&contractaddress=${c}`,
  ],
  ['account.getminedblocks', (x) => x.account.getminedblocks(ADDRESS), `/api?module=account&action=getminedblocks&address=${a}`],
  ['log.getLogs', (x) => x.log.getLogs(ADDRESS, 0, 'latest'), `/api?module=logs&action=getLogs&address=${a}&fromBlock=0&toBlock=latest`],
  [
    'log.getLogs by topic',
    (x) => x.log.getLogs(undefined, 100, 200, SAMPLE_HASH),
    `/api?module=logs&action=getLogs&fromBlock=100&toBlock=200&topic0=${SAMPLE_HASH}`,
  ],
  ['stats.tokensupply', (x) => x.stats.tokensupply(null, CONTRACT), `/api?module=stats&action=tokensupply&contractaddress=${c}`],
  ['stats.ethsupply', (x) => x.stats.ethsupply(), '/api?module=stats&action=ethsupply'],
  ['stats.ethprice', (x) => x.stats.ethprice(), '/api?module=stats&action=ethprice'],
  // The library sends an address too; block_controller.ex getblockreward/2 reads none: dropped.
  ['block.getblockreward', (x) => x.block.getblockreward(ADDRESS, 100), '/api?module=block&action=getblockreward&blockno=100'],
  [
    'block.getblocknobytime',
    (x) => x.block.getblocknobytime(1_700_000_000),
    '/api?module=block&action=getblocknobytime&closest=before&timestamp=1700000000',
  ],
  ['transaction.getstatus', (x) => x.transaction.getstatus(SAMPLE_HASH), `/api?module=transaction&action=getstatus&txhash=${SAMPLE_HASH}`],
  [
    'transaction.gettxreceiptstatus',
    (x) => x.transaction.gettxreceiptstatus(SAMPLE_HASH),
    `/api?module=transaction&action=gettxreceiptstatus&txhash=${SAMPLE_HASH}`,
  ],
  ['contract.getabi', (x) => x.contract.getabi(CONTRACT), `/api?module=contract&action=getabi&address=${c}`],
  ['contract.getsourcecode', (x) => x.contract.getsourcecode(CONTRACT), `/api?module=contract&action=getsourcecode&address=${c}`],
  [
    'contract.getcontractcreation',
    (x) => x.contract.getcontractcreation([CONTRACT]),
    `/api?module=contract&action=getcontractcreation&contractaddresses=${c}`,
  ],
];

// Calls for actions and modules a Blockscout instance does not have (RPCTranslator answers 400
// with its envelope): the gateway answers the same, and the library reports it.
const NOT_BLOCKSCOUTS: [string, Call, string][] = [
  ['account.fundedby', (x) => x.account.fundedby(ADDRESS), 'Unknown action'],
  ['account.txsBeaconWithdrawal', (x) => x.account.txsBeaconWithdrawal(ADDRESS), 'Unknown action'],
  ['account.getdeposittxs', (x) => x.account.getdeposittxs(ADDRESS), 'Unknown action'],
  ['account.getwithdrawaltxs', (x) => x.account.getwithdrawaltxs(ADDRESS), 'Unknown action'],
  ['account.txnbridge', (x) => x.account.txnbridge(ADDRESS), 'Unknown action'],
  ['stats.ethsupply2', (x) => x.stats.ethsupply2(), 'Unknown action'],
  ['stats.nodecount', (x) => x.stats.nodecount(), 'Unknown action'],
  ['stats.chainsize', (x) => x.stats.chainsize('2019-02-01', '2019-02-28'), 'Unknown action'],
  ['block.getblocktxnscount', (x) => x.block.getblocktxnscount(100), 'Unknown action'],
  ['gastracker.gasoracle', (x) => x.gastracker.gasoracle(), 'Unknown module'],
  ['usage.getapilimit', (x) => x.usage.getapilimit(), 'Unknown module'],
];

describe('etherscan-api 12 through the gateway', () => {
  it.each(SERVED)('%s: served as the explorer answers the canonical request', async (_name, call, target) => {
    const before = explorer.requests.length;
    const got = await call(api());
    expect(explorer.requests.length).toBe(before + 1);
    const sent = explorer.requests.at(-1)!;
    expect(sent.url).toBe(target);
    expect(got).toMatchObject({ status: '1', message: 'OK' });
    expect(got).toEqual(await direct(target));
  });

  it.each(NOT_BLOCKSCOUTS)("%s: Blockscout's own refusal, nothing forwarded", async (_name, call, message) => {
    const before = explorer.requests.length;
    await expect(call(api())).rejects.toThrow(`Request failed with status code 400: ${message}`);
    expect(explorer.requests.length).toBe(before);
  });

  it('answers an unknown action in the envelope an instance uses', async () => {
    const res = await gw.get(`/v2/api?chainid=1&module=account&action=fundedby&address=${ADDRESS}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message: 'Unknown action', result: null, status: '0' });
  });

  it('the explorer never got endblock=latest, a client key, or chainid', () => {
    expect(explorer.requests.length).toBeGreaterThan(SERVED.length);
    for (const r of explorer.requests) {
      expect(r.url).not.toMatch(/endblock/i);
      expect(r.url).not.toMatch(/apikey/i);
      expect(r.url).not.toContain(DEMO_KEY);
      expect(r.query.chainid).toBeUndefined();
    }
  });
});

describe('the key in etherscan-api 10 spelling, apiKey', () => {
  it('is the client key: served, never forwarded; a wrong one is refused', async () => {
    const before = explorer.requests.length;
    const res = await gw.get(`/v2/api?chainid=1&module=account&action=balance&address=${ADDRESS}&apiKey=${DEMO_KEY}`, { key: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(await direct(`/api?module=account&action=balance&address=${a}`));
    expect(explorer.requests.slice(before, before + 1).map((r) => r.url)).toEqual([`/api?module=account&action=balance&address=${a}`]);

    const chainPath = await gw.get(`/1/api?module=account&action=balance&address=${ADDRESS}&APIKEY=${DEMO_KEY}`, { key: null });
    expect(chainPath.status).toBe(200);
    const wrong = await gw.get(`/1/api?module=account&action=balance&address=${ADDRESS}&apiKey=not-a-key`, { key: null });
    expect(wrong.status).toBe(401);
    const none = await gw.get(`/1/api?module=account&action=balance&address=${ADDRESS}`, { key: null });
    expect(none.status).toBe(401);
    for (const r of explorer.requests.slice(before)) expect(r.url).not.toMatch(/apikey|test-key/i);
  });
});

describe('one cache entry for what the explorer reads as one request', () => {
  it('txlist with endblock=latest (the library) and without it (by hand): a hit the second time', async () => {
    const target = `/api?module=account&action=txlist&address=${a}&offset=100&page=1&sort=asc&startblock=0`;
    const before = explorer.requests.length;
    const first = await api(() => cached).account.txlist(ADDRESS);
    expect(explorer.requests.length).toBe(before + 1);
    expect(explorer.requests.at(-1)!.url).toBe(target);

    const second = await cached.get(
      `/v2/api?chainid=1&module=account&action=txlist&address=${a}&sort=asc&page=1&offset=100&startblock=0&apiKey=${DEMO_KEY}`,
      { key: null },
    );
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(await second.json()).toEqual(first);
    // Another key, another spelling of its name, values the explorer ignores: still that entry.
    const third = await cached.get(
      `/1/api?module=account&action=txlist&address=${ADDRESS}&startblock=0&endblock=99999999999&page=1&offset=100&sort=asc&filterby=both&APIKEY=${OTHER_KEY}`,
      { key: null },
    );
    expect(third.headers.get('x-cache')).toBe('HIT');
    expect(await third.json()).toEqual(first);
    expect(explorer.requests.length).toBe(before + 1);
  });
});
