// Clients migrating from Etherscan change only their host: one base URL, the chain in `chainid`
// (`/v2/api?chainid=N&module=...`, also `/api?chainid=N&...`), as Blockscout's PRO API documents.
// ethers v6's EtherscanProvider builds exactly these URLs; pointed at the gateway (getUrl
// subclassed to replace the host only) it works against a real fixture explorer. Also here:
// /api/json/config, what the gateway offers, without a key.
import { EtherscanProvider, Network } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ROUTE_NAMES } from '../../src/routes/table.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { SAMPLE_ADDRESS } from '../support/samples.js';

let explorer: FixtureExplorer;
let gw: TestGateway;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(
    makeConfig([explorer.url], {
      chains: {
        '1': { name: 'Ethereum', upstreams: [explorer.url] },
        '100': { name: 'Gnosis', upstreams: [explorer.url], upstreamApiKey: 'upstream-secret' },
      },
      costs: { default: 20, routes: { 'legacy.account.balance': 3 } },
    }),
  );
});
afterAll(async () => {
  await gw.close();
  await explorer.close();
});

/** EtherscanProvider with only the host of its URLs replaced by the gateway's. */
class GatewayEtherscan extends EtherscanProvider {
  override getUrl(module: string, params: Record<string, string>): string {
    return super.getUrl(module, params).replace('https://api.etherscan.io', gw.url);
  }
}

describe('the Etherscan V2 form', () => {
  it('/v2/api?chainid=N: the chain from the query, chainid not forwarded, billed and stamped as usual', async () => {
    const res = await gw.get(`/v2/api?chainid=100&module=account&action=balance&address=${SAMPLE_ADDRESS}&apikey=${DEMO_KEY}`, {
      key: null,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ message: 'OK', status: '1' });
    expect(res.headers.get('x-credits-remaining')).toBe(String(1_000_000 - 3));
    const sent = explorer.requests.at(-1)!;
    expect(sent.path).toBe('/api');
    // The chain's own upstream key replaces the client's; chainid never reaches the explorer.
    expect(sent.query).toEqual({ module: 'account', action: 'balance', address: SAMPLE_ADDRESS, apikey: 'upstream-secret' });
  });

  it('/api?chainid=N is the same; an unknown chainid is 404 and a missing one 400, with the envelope', async () => {
    const res = await gw.get(`/api?chainid=1&module=account&action=balance&address=${SAMPLE_ADDRESS}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: '1' });
    const unknown = await gw.get(`/v2/api?chainid=31337&module=account&action=balance&address=${SAMPLE_ADDRESS}`);
    expect([unknown.status, await unknown.json()]).toEqual([404, { message: 'Network not supported', result: null, status: '0' }]);
    const missing = await gw.get(`/v2/api?module=account&action=balance&address=${SAMPLE_ADDRESS}`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      result: null,
      status: '0',
      message: expect.stringMatching(/chainid is required/) as unknown,
    });
  });

  it("ethers v6's EtherscanProvider works by changing only its host: getBalance and the generic fetch", async () => {
    const provider = new GatewayEtherscan(Network.from(1), DEMO_KEY);
    const balance = await provider.getBalance(SAMPLE_ADDRESS);
    expect(typeof balance).toBe('bigint');
    const fixture = (await (await fetch(`${explorer.url}/api?module=account&action=balance&address=${SAMPLE_ADDRESS}`)).json()) as {
      result: string;
    };
    expect(balance).toBe(BigInt(fixture.result));
    const holders = (await provider.fetch('token', {
      action: 'getTokenHolders',
      contractaddress: '0xb7d311e2eb55f2f68a9440da38e7989210b9a05e',
      page: '1',
      offset: '2',
    })) as { address: string; value: string }[];
    expect(holders).toHaveLength(2);
    const sent = explorer.requests.at(-1)!;
    expect(sent.url).not.toContain(DEMO_KEY);
    expect(sent.query.chainid).toBeUndefined();
  });
});

describe('/api/json/config', () => {
  it('lists the chains (id and name only) and the cost of every route, without a key', async () => {
    const res = await gw.get('/api/json/config', { key: null });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { chains: unknown[]; costs: { default: number; routes: Record<string, number> } };
    expect(body.chains).toEqual([
      { id: '1', name: 'Ethereum' },
      { id: '100', name: 'Gnosis' },
    ]);
    expect(Object.keys(body.costs.routes).sort()).toEqual([...ROUTE_NAMES].sort());
    expect(body.costs.routes['legacy.account.balance']).toBe(3);
    expect(body.costs.routes['transactions/{transaction_hash_param}/summary']).toBe(50);
    expect(body.costs.routes['blocks/{block_hash_or_number_param}']).toBe(20);
    const text = JSON.stringify(body);
    expect(text).not.toContain(explorer.url);
    expect(text).not.toContain('upstream-secret');
    expect(text).not.toContain(DEMO_KEY);
  });
});
