// Hardhat's contract verification through a real gateway (issue 41, item 2): the released
// @nomicfoundation/hardhat-verify 2 run as its CLI, `npx hardhat verify --network gateway ADDRESS`,
// in test/clients/hardhat/ (its hardhat.config.cjs is what docs/clients.md copies), against the
// fixture explorer's VERIFIABLE_CONTRACT, whose code is that project's compiled Counter. Both of
// the plugin's modes: Etherscan mode (`etherscan.apiKey: {gateway: KEY}`, apiURL
// `GATEWAY/1/api`) and Blockscout mode (`blockscout.enabled`, apiURL `GATEWAY/key/KEY/1/api`: the
// plugin sends `apikey=api_key` and replaces apiURL's query on its GETs, so the key rides in the
// path). Each run asks getsourcecode, reads eth_chainId and eth_getCode from the network (the
// gateway's JSON-RPC, under a key of its own), posts verifysourcecode and polls
// checkverifystatus until it passes (the fixture answers "Pending in queue" once; the plugin then
// waits its fixed 3 s, src/internal/etherscan.ts VERIFICATION_STATUS_POLLING_TIME).
//
// Solidity is compiled offline by solcjs (the npm package `solc`, hardhat.config.cjs), once
// (`npx hardhat compile`, about 4 s), into a temporary directory both runs share. About 23 s in
// all on a 2-core machine: each run about 6 s, 3.7 s of them the plugin's own waits (700 ms before
// its first check, 3 s after "Pending in queue").
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAddress } from 'ethers';
import { startFixtureExplorer, type FixtureExplorer, type RecordedRequest } from '../../fixture/explorer.js';
import { VERIFIABLE_CONTRACT } from '../../fixture/chain.js';
import { makeConfig, startGateway, type TestGateway } from '../support/gateway.js';

const PROJECT = new URL('../clients/hardhat/', import.meta.url).pathname;
/** The key the verification uses, and the one the network's JSON-RPC uses: each key's bill is its own. */
const VERIFY_KEY = 'hardhat-verify-key';
const RPC_KEY = 'hardhat-rpc-key';
/** Route costs set here, so that each charge can be told apart. */
const COST = { getsourcecode: 3, verifysourcecode: 7, checkverifystatus: 2, default: 20 };
const CREDITS = 1_000_000;
/** What hardhat-verify 2.1 submits as the contract's name and compiler (hardhat.config.cjs pins solc 0.8.37). */
const CONTRACT_NAME = 'contracts/Counter.sol:Counter';
const COMPILER = 'v0.8.37+commit.f401782d';

let explorer: FixtureExplorer;
let gw: TestGateway;
let out: string;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(
    makeConfig([explorer.url], {
      plans: { free: { rps: 1000, credits: CREDITS, period: 'daily' } },
      keys: [
        { name: 'hardhat', key: VERIFY_KEY, plan: 'free' },
        { name: 'hardhat-rpc', key: RPC_KEY, plan: 'free' },
      ],
      costs: {
        default: COST.default,
        routes: {
          'legacy.contract.getsourcecode': COST.getsourcecode,
          'legacy.contract.verifysourcecode': COST.verifysourcecode,
          'legacy.contract.checkverifystatus': COST.checkverifystatus,
        },
      },
      // Wrong keys block an address after 2: a placeholder counted as one would show.
      security: { badKeys: { failures: 2, windowSeconds: 60, blockSeconds: 60 } },
    }),
  );
  out = mkdtempSync(join(tmpdir(), 'egw-hardhat-'));
  // hardhat-verify compiles nothing itself: it reads the project's artifacts, as after a deployment.
  const compiled = await hardhat(['compile'], 'etherscan');
  expect(compiled.code, compiled.output).toBe(0);
  expect(compiled.output).toContain('Compiled 1 Solidity file successfully');
});
afterAll(async () => {
  await gw.close();
  await explorer.close();
  rmSync(out, { recursive: true, force: true });
});
beforeEach(() => explorer.reset());
afterEach(() => {
  // Wherever hardhat-verify put the key (form, query, path), the explorer never gets it.
  for (const r of explorer.requests) {
    expect(r.url, r.url).not.toContain(VERIFY_KEY);
    expect(r.url.toLowerCase()).not.toContain('apikey');
    expect(r.url.startsWith('/key/')).toBe(false);
    expect(r.body?.includes(VERIFY_KEY) ?? false).toBe(false);
    expect(r.body?.toLowerCase().includes('apikey') ?? false).toBe(false);
  }
});

interface Run {
  code: number | null;
  output: string;
}
/** `npx hardhat ARGS` in the project, hardhat-verify in `mode`; killed after 90 s. */
function hardhat(args: readonly string[], mode: 'etherscan' | 'blockscout'): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GATEWAY_URL: gw.url,
    GATEWAY_KEY: VERIFY_KEY,
    RPC_URL: `${gw.url}/1/json-rpc?apikey=${RPC_KEY}`,
    VERIFY_MODE: mode,
    HARDHAT_OUT: out,
    HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
  };
  // hardhat-verify sends through undici's ProxyAgent when http_proxy is set (src/internal/undici.ts).
  for (const name of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY']) delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['hardhat', ...args], {
      cwd: PROJECT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 90_000,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

const legacy = (r: RecordedRequest): string => `${r.method} ${r.query.action ?? ''}`;
const fieldsOf = (r: RecordedRequest): Record<string, string> => Object.fromEntries(new URLSearchParams(r.body));
/** The key's credits left after a check (guid 0) that costs COST.checkverifystatus. */
async function creditsLeft(key: string): Promise<number> {
  const res = await gw.get('/1/api?module=contract&action=checkverifystatus&guid=0', { key });
  expect(res.status).toBe(200);
  return Number(res.headers.get('x-credits-remaining'));
}

describe.each([
  [
    'etherscan',
    "etherscan: { apiKey: { gateway: KEY }, customChains: [{ network: 'gateway', chainId: 1, urls: { apiURL: 'GATEWAY/1/api' } }] }",
  ],
  [
    'blockscout',
    "blockscout: { enabled: true, customChains: [{ network: 'gateway', chainId: 1, urls: { apiURL: 'GATEWAY/key/KEY/1/api' } }] }",
  ],
] as const)('npx hardhat verify (hardhat-verify 2, %s mode)', (mode, setting) => {
  it(`verifies the contract through the gateway with ${setting}`, async () => {
    const before = await creditsLeft(VERIFY_KEY);
    const run = await hardhat(['verify', '--network', 'gateway', getAddress(VERIFIABLE_CONTRACT)], mode);
    expect(run.output).toContain(`Successfully submitted source code for contract\n${CONTRACT_NAME} at ${getAddress(VERIFIABLE_CONTRACT)}`);
    expect(run.output).toContain('Successfully verified contract Counter on the block explorer.');
    expect(run.code, run.output).toBe(0);

    // What reached the explorer: the plugin's four legacy calls, in order, and the two JSON-RPC reads.
    // (creditsLeft's own checks, guid 0, left out)
    const api = explorer.requests.filter((r) => r.path === '/api' && r.query.guid !== '0');
    expect(api.map(legacy)).toEqual(['GET getsourcecode', 'POST verifysourcecode', 'GET checkverifystatus', 'GET checkverifystatus']);
    const submitted = fieldsOf(api[1]!);
    expect(submitted).toMatchObject({
      contractaddress: getAddress(VERIFIABLE_CONTRACT),
      codeformat: 'solidity-standard-json-input',
      contractname: CONTRACT_NAME,
      compilerversion: COMPILER,
      constructorArguements: '',
    });
    const input = JSON.parse(submitted.sourceCode!) as { language: string; sources: Record<string, { content: string }> };
    expect(input.language).toBe('Solidity');
    expect(input.sources['contracts/Counter.sol']?.content).toContain('contract Counter');
    const rpcMethods = explorer.requests
      .filter((r) => r.path === '/api/eth-rpc')
      .map((r) => (JSON.parse(r.body!) as { method: string }).method);
    expect(rpcMethods).toContain('eth_getCode');

    // Billed to the verification key: each of the four at its route's cost, nothing else.
    const spent = COST.getsourcecode + COST.verifysourcecode + 2 * COST.checkverifystatus;
    expect(await creditsLeft(VERIFY_KEY)).toBe(before - spent - COST.checkverifystatus);
    // The placeholder that Blockscout mode sends beside the key counted as no wrong key: the
    // address is not blocked (a request without a key is refused 401, not 429).
    expect((await gw.get('/1/api?module=contract&action=checkverifystatus&guid=0', { key: null })).status).toBe(401);
  });
});

describe('the key as a path prefix, /key/KEY/ (what Blockscout mode needs)', () => {
  it('is the key for any request, taken out of what is forwarded; beside another key it is a conflict naming both places', async () => {
    const ok = await gw.get(`/key/${VERIFY_KEY}/1/api?module=contract&action=checkverifystatus&guid=0`, { key: null });
    expect(ok.status).toBe(200);
    expect(explorer.requests.map((r) => r.url)).toEqual(['/api?module=contract&action=checkverifystatus&guid=0']);
    const rpc = await gw.get(`/key/${RPC_KEY}/1/json-rpc`, {
      key: null,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    });
    expect(await rpc.json()).toEqual({ jsonrpc: '2.0', id: 1, result: '0x1' });

    const conflict = await gw.get(`/key/${VERIFY_KEY}/1/api?apikey=${RPC_KEY}&module=contract&action=checkverifystatus&guid=0`, {
      key: null,
    });
    expect(conflict.status).toBe(401);
    expect(((await conflict.json()) as { message: string }).message).toBe(
      'Conflicting API keys in the /key/ path prefix and the apikey query parameter',
    );
    const withBearer = await gw.get(`/key/${VERIFY_KEY}/1/api?module=contract&action=checkverifystatus&guid=0`, { key: RPC_KEY });
    expect(((await withBearer.json()) as { message: string }).message).toBe(
      'Conflicting API keys in the Authorization header and the /key/ path prefix',
    );
    // An unknown key in the path is a wrong key like any other.
    expect((await gw.get('/key/nope/1/api?module=contract&action=checkverifystatus&guid=0', { key: null })).status).toBe(401);
  });
});
