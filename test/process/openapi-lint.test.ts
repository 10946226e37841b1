// The two OpenAPI documents as the tools clients use read them (issue 41, item 6): Redocly's
// linter (@redocly/cli, its `recommended` ruleset) finds no error in either, and a Prism proxy
// (@stoplight/prism-cli) put in front of a real gateway and the fixture explorer and services,
// on loopback, validates real legacy, JSON-RPC, service and v2 requests and their answers
// against the public document without a violation. Prism's violations of a proxied exchange come
// back in its `sl-violations` header (docs.stoplight.io, Prism "Validation Proxy"); the requests
// that break the document are there to show Prism does check, and that what it names is the
// request's fault, never the answer's.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_TX_HASH, TOKEN_CONTRACT, blockTimestamp } from '../../fixture/chain.js';
import { HEAD_BLOCK } from '../../fixture/data.js';
import { VITALIK_ADDRESS } from '../../fixture/services-data.js';
import { ADMIN_TOKEN } from '../support/admin.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY, closedPort, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { useFixtureService } from '../support/services.js';

const run = promisify(execFile);
const BIN = new URL('../../node_modules/.bin/', import.meta.url).pathname;
// Nothing leaves the machine: no usage report, no update check (Redocly CLI's documented switches).
const QUIET = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

const explorer = useFixtureExplorer();
const stats = useFixtureService('stats', { head: () => explorer().head() });
const bens = useFixtureService('bens');
const metadata = useFixtureService('metadata');
const multichain = useFixtureService('multichain');

let gw: TestGateway;
let dir: string;
const files = { public: '', admin: '' };

beforeAll(async () => {
  gw = await startGateway(
    makeConfig([explorer().url], {
      chains: {
        '1': { name: 'Ethereum', upstreams: [explorer().url], timeoutMs: 2_000, stats: { upstreams: [stats().url] } },
        // No stats service: its routes' chain_id does not list this chain.
        '100': { name: 'Gnosis', upstreams: [explorer().url], timeoutMs: 2_000 },
      },
      services: {
        bens: { upstreams: [bens().url] },
        metadata: { upstreams: [metadata().url] },
        multichain: { upstreams: [multichain().url] },
      },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
    }),
  );
  dir = mkdtempSync(join(tmpdir(), 'egw-openapi-lint-'));
  files.public = join(dir, 'public.json');
  files.admin = join(dir, 'admin.json');
  const pub = await gw.get('/api/json/openapi', { key: null });
  expect(pub.status).toBe(200);
  writeFileSync(files.public, await pub.text());
  const admin = await fetch(`${gw.app.gateway.adminUrl()!}/openapi.json`);
  expect(admin.status).toBe(200);
  writeFileSync(files.admin, await admin.text());
  // Only the recommended rules, whatever configuration lies around.
  writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
});
afterAll(async () => {
  await gw?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

/** `redocly lint` on a file, its problems as its JSON report gives them. */
async function lint(file: string): Promise<Problem[]> {
  const args = ['lint', file, '--config', join(dir, 'redocly.yaml'), '--format', 'json', '--max-problems', '10000'];
  // It exits 1 when it finds an error; the report is on stdout either way.
  const { stdout } = await run(join(BIN, 'redocly'), args, { env: QUIET, cwd: dir, maxBuffer: 64 << 20 }).catch(
    (e: { stdout?: string; stderr?: string }) => {
      if (!e.stdout) throw new Error(`redocly lint ${file} gave no report: ${e.stderr ?? ''}`);
      return { stdout: e.stdout };
    },
  );
  return (JSON.parse(stdout) as { problems: Problem[] }).problems;
}
const errorsOf = (problems: Problem[]) =>
  problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);

describe('redocly lint, recommended rules', () => {
  it('finds no error in the public document', async () => {
    const problems = await lint(files.public);
    expect(errorsOf(problems)).toEqual([]);
    // It did read the document: its warnings are about it (ambiguous-looking paths of the PRO API).
    expect(problems.some((p) => p.ruleId === 'no-ambiguous-paths')).toBe(true);
  });

  it('finds no error in the admin document', async () => {
    expect(errorsOf(await lint(files.admin))).toEqual([]);
  });

  it('does find what the rules forbid (a query in a path, a brace in an operationId, no servers)', async () => {
    const doc = (await (await gw.get('/api/json/openapi', { key: null })).json()) as {
      servers?: unknown;
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const { servers: _servers, ...bare } = doc;
    bare.paths['/{chain_id}/api?module=account&action=balance'] = doc.paths['/{chain_id}/api']!;
    bare.paths['/{chain_id}/api/v2/tokens']!.get!.operationId = 'tokens/{x}';
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(bare));
    const rules = new Set((await lint(file)).filter((p) => p.severity === 'error').map((p) => p.ruleId));
    expect([...rules].sort()).toEqual([
      'no-empty-servers',
      'operation-operationId-unique',
      'operation-operationId-url-safe',
      'path-not-include-query',
    ]);
  });
});

// ---- Prism in front of the gateway

interface Violation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

/** `prism proxy` on the public document, in front of the gateway; resolves once it listens. */
async function startPrism(): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const port = await closedPort();
  const child = spawn(
    join(BIN, 'prism'),
    ['proxy', files.public, gw.url, '--host', '127.0.0.1', '--port', String(port), '--errors=false'],
    {
      env: QUIET,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Prism is listening on (http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.once('exit', (code) => reject(new Error(`prism exited (${String(code)}) before listening: ${output}`)));
    child.once('error', reject);
  });
  return { url, child, output: () => output };
}

const form = (body: string): RequestInit => ({
  method: 'POST',
  body,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});
const json = (body: unknown): RequestInit => ({
  method: 'POST',
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
});
const call = (id: number | string, method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id, method, params });

/** Requests the document describes: each a status and not one violation. */
const VALID: readonly { what: string; path: string; init?: RequestInit; status: number }[] = [
  // legacy, the chain in the path: several modules, a comma list, a POSTed form with numbers in it
  { what: 'account.balance', path: `/1/api?module=account&action=balance&address=${ADDRESS}`, status: 200 },
  {
    what: 'account.txlist',
    path: `/1/api?module=account&action=txlist&address=${ADDRESS}&startblock=0&endblock=99999999&sort=asc&page=1&offset=5`,
    status: 200,
  },
  { what: 'account.balancemulti', path: `/1/api?module=account&action=balancemulti&address=${ADDRESS},${TOKEN_CONTRACT}`, status: 200 },
  {
    what: 'account.tokenbalance',
    path: `/1/api?module=account&action=tokenbalance&contractaddress=${TOKEN_CONTRACT}&address=${ADDRESS}`,
    status: 200,
  },
  { what: 'token.getToken', path: `/1/api?module=token&action=getToken&contractaddress=${TOKEN_CONTRACT}`, status: 200 },
  { what: 'token.bridgedTokenList', path: '/1/api?module=token&action=bridgedTokenList&chainid=100', status: 200 },
  { what: 'stats.ethsupply', path: '/1/api?module=stats&action=ethsupply', status: 200 },
  { what: 'stats.tokensupply', path: `/1/api?module=stats&action=tokensupply&contractaddress=${TOKEN_CONTRACT}`, status: 200 },
  { what: 'block.getblockreward', path: '/1/api?module=block&action=getblockreward&blockno=100', status: 200 },
  {
    what: 'block.getblocknobytime',
    path: `/1/api?module=block&action=getblocknobytime&timestamp=${blockTimestamp(HEAD_BLOCK - 100)}&closest=before`,
    status: 200,
  },
  { what: 'logs.getLogs', path: `/1/api?module=logs&action=getLogs&fromBlock=1&toBlock=100&address=${TOKEN_CONTRACT}`, status: 200 },
  { what: 'contract.getabi', path: `/1/api?module=contract&action=getabi&address=${TOKEN_CONTRACT}`, status: 200 },
  { what: 'contract.checkverifystatus', path: '/1/api?module=contract&action=checkverifystatus&guid=abc', status: 200 },
  {
    what: 'transaction.gettxreceiptstatus',
    path: `/1/api?module=transaction&action=gettxreceiptstatus&txhash=${KNOWN_TX_HASH}`,
    status: 200,
  },
  { what: 'proxy.eth_blockNumber', path: '/1/api?module=proxy&action=eth_blockNumber', status: 200 },
  { what: 'proxy.eth_getBlockByNumber', path: '/1/api?module=proxy&action=eth_getBlockByNumber&tag=0x10&boolean=false', status: 200 },
  { what: 'legacy form', path: '/1/api', init: form(`module=account&action=txlist&address=${ADDRESS}&page=1&offset=5`), status: 200 },
  {
    what: 'legacy form, module and action in the query',
    path: '/1/api?module=account&action=balance',
    init: form(`address=${ADDRESS}`),
    status: 200,
  },
  // legacy, the chain in `chainid`
  { what: 'chainid, /v2/api', path: `/v2/api?chainid=1&module=account&action=balance&address=${ADDRESS}`, status: 200 },
  { what: 'chainid, /api', path: '/api?chainid=100&module=proxy&action=eth_blockNumber', status: 200 },
  { what: 'chainid, POSTed form', path: '/v2/api?chainid=1', init: form(`module=account&action=balance&address=${ADDRESS}`), status: 200 },
  // JSON-RPC: one call, a batch, the second path, a notification
  { what: 'json-rpc, one call', path: '/1/json-rpc', init: json(call(1, 'eth_blockNumber')), status: 200 },
  { what: 'json-rpc, a batch', path: '/1/json-rpc', init: json([call(1, 'eth_blockNumber'), call('b', 'eth_chainId')]), status: 200 },
  { what: 'api/eth-rpc', path: '/100/api/eth-rpc', init: json(call(7, 'eth_getBalance', [ADDRESS, 'latest'])), status: 200 },
  {
    what: 'json-rpc, a notification',
    path: '/1/json-rpc',
    init: json({ jsonrpc: '2.0', method: 'eth_blockNumber', params: [] }),
    status: 204,
  },
  // services
  { what: 'stats counters', path: '/1/stats-service/api/v1/counters', status: 200 },
  { what: 'stats line', path: '/1/stats-service/api/v1/lines/newTxns?resolution=DAY', status: 200 },
  { what: 'bens protocols', path: '/services/bens/api/v1/protocols', status: 200 },
  { what: 'bens domain', path: '/services/bens/api/v1/domains/vitalik.eth', status: 200 },
  {
    what: 'bens batch-resolve',
    path: '/services/bens/api/v1/addresses:batch-resolve',
    init: json({ addresses: [VITALIK_ADDRESS] }),
    status: 200,
  },
  { what: 'metadata tag types', path: '/services/metadata/api/v1/public-tag-types', status: 200 },
  { what: 'multichain quick search', path: '/services/multichain/api/v1/search:quick?q=vitalik', status: 200 },
  { what: 'explorer search', path: '/1/api/v1/search?q=weth', status: 200 },
  {
    what: 'explorer block by time',
    path: `/1/api/legacy/block/get-block-number-by-time?timestamp=${blockTimestamp(HEAD_BLOCK - 100)}&closest=before`,
    status: 200,
  },
  // v2: JSON, the path Blockscout spells with a trailing slash, a CSV export
  { what: 'v2 token-balances', path: `/1/api/v2/addresses/${ADDRESS}/token-balances`, status: 200 },
  { what: 'v2 tokens', path: '/1/api/v2/tokens', status: 200 },
  {
    what: 'v2 CSV export',
    path: `/1/api/v2/addresses/${ADDRESS}/transactions/csv?from_period=2024-01-01&to_period=2024-01-02`,
    status: 200,
  },
  // refusals the document names, with a request it takes: an unknown key
  {
    what: 'legacy, unknown key',
    path: `/1/api?module=account&action=balance&address=${ADDRESS}`,
    init: { headers: { authorization: 'Bearer nope' } },
    status: 401,
  },
  {
    what: 'json-rpc, unknown key',
    path: '/1/json-rpc',
    init: { ...json(call(1, 'eth_blockNumber')), headers: { authorization: 'Bearer nope', 'content-type': 'application/json' } },
    status: 401,
  },
  {
    what: 'stats, unknown key',
    path: '/1/stats-service/api/v1/counters',
    init: { headers: { authorization: 'Bearer nope' } },
    status: 401,
  },
];

/** Requests that break the document: the violations Prism must name, all in the request. */
const INVALID: readonly { what: string; path: string; status: number; locations: string[] }[] = [
  {
    what: 'a chain without a stats service',
    path: '/100/stats-service/api/v1/counters',
    status: 404,
    locations: ['request.path.chain_id'],
  },
  { what: 'an unknown action', path: '/1/api?module=account&action=nope', status: 400, locations: ['request.query.action'] },
  {
    what: 'a bad address (answered 200 with status "0", as Blockscout does)',
    path: '/1/api?module=account&action=balance&address=0xnope',
    status: 200,
    locations: ['request.query.address'],
  },
  { what: 'an unknown chain', path: '/5/api/v2/tokens', status: 404, locations: ['request.path.chain_id'] },
];

describe('prism proxy in front of the gateway', () => {
  let prism: Awaited<ReturnType<typeof startPrism>>;
  beforeAll(async () => {
    prism = await startPrism();
  });
  afterAll(async () => {
    if (prism?.child.exitCode === null) {
      const exited = new Promise((r) => prism.child.once('exit', r));
      prism.child.kill();
      await exited;
    }
  });

  async function through(path: string, init: RequestInit = {}): Promise<{ status: number; violations: Violation[] }> {
    const headers = new Headers(init.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${DEMO_KEY}`);
    const res = await fetch(prism.url + path, { ...init, headers });
    await res.arrayBuffer();
    const header = res.headers.get('sl-violations');
    return { status: res.status, violations: header === null ? [] : (JSON.parse(header) as Violation[]) };
  }
  const said = (v: Violation[]) => v.map((x) => `${x.severity} ${x.location.join('.')}: ${x.message}`);

  it.each(VALID)('$what: no violation', async ({ path, init, status }) => {
    const got = await through(path, init);
    expect(said(got.violations)).toEqual([]);
    expect(got.status).toBe(status);
  });

  it.each(INVALID)('$what: the request violates the document, the answer does not', async ({ path, status, locations }) => {
    const got = await through(path);
    expect(got.status).toBe(status);
    expect([...new Set(got.violations.map((v) => v.location.join('.')))].sort(), said(got.violations).join('\n')).toEqual(locations);
  });
});
