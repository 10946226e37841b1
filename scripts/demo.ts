// `npm run demo`: the fixture explorer (deterministic Blockscout-shaped data, no network) and
// the gateway in front of it, with config/demo.yaml; prints ready-to-paste curl lines.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startFixtureExplorer } from '../fixture/explorer.js';
import { startFixtureService } from '../fixture/services.js';
import { KNOWN_TX_HASH, SAMPLE_ACCOUNT, TOKEN_CONTRACT, VERIFIABLE_CONTRACT } from '../fixture/chain.js';
import { loadConfig } from '../src/config/load.js';
import { buildServer } from '../src/app/server.js';

const explorer = await startFixtureExplorer({ port: Number(process.env.DEMO_EXPLORER_PORT ?? 0) });
process.env.DEMO_UPSTREAM = explorer.url;
// The services beside it (fixture/services.ts): chain 1's stats service, following the explorer's
// head, the name service and the metadata service, each on a free loopback port.
const services = await Promise.all([
  startFixtureService({ kind: 'stats', head: () => explorer.head() }),
  startFixtureService({ kind: 'bens' }),
  startFixtureService({ kind: 'metadata' }),
]);
const [stats, bens, metadata] = services;
process.env.DEMO_STATS = stats.url;
process.env.DEMO_BENS = bens.url;
process.env.DEMO_METADATA = metadata.url;
const config = loadConfig(new URL('../config/demo.yaml', import.meta.url).pathname);
const app = buildServer(config);

try {
  await app.listen({ host: config.server.host, port: config.server.port });
} catch (err) {
  if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
  app.gateway.log.warn(`port ${config.server.port} is taken; listening on a free port instead (set DEMO_PORT to choose)`);
  await app.listen({ host: config.server.host, port: 0 });
}

const { port } = app.server.address() as AddressInfo;
const base = `http://127.0.0.1:${port}`;
const key = config.keys.find((k) => k.name === 'demo')?.key ?? 'demo-key-change-me';
const address = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
const token = '0xb7d311e2eb55f2f68a9440da38e7989210b9a05e';
const tx = '0x2ab9c5e6b6f8d3b1c5a4f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0';
const bearer = `-H 'Authorization: Bearer ${key}'`;

/**
 * A webhook receiver on loopback, as an operator's billing system would run one: it checks each
 * delivery's signature with the `standardwebhooks` package and keeps what it was told.
 */
const told: { type: string; key: string; verified: boolean }[] = [];
let hookSecret = '';
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let event: { type: string; data: { key?: { name?: string } } };
    let verified = true;
    try {
      event = new Webhook(hookSecret).verify(body, req.headers as Record<string, string>) as typeof event;
    } catch {
      verified = false;
      event = JSON.parse(body) as typeof event;
    }
    told.push({ type: event.type, key: event.data.key?.name ?? '', verified });
    res.writeHead(verified ? 204 : 400).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

/**
 * What an operator sells, made through the admin API at start (the same calls the CLI makes): a
 * webhook to the receiver above, an account on plan pro whose two keys share its credits and
 * rate, and a key on plan free with a deal of its own. Undefined when the admin API is off.
 */
async function sell(): Promise<{ account: string; web: string; backend: string; deal: string; webhook: string } | undefined> {
  const adminUrl = app.gateway.adminUrl();
  if (adminUrl === undefined || config.admin.token === undefined) return undefined;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(adminUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${config.admin.token!}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`demo: POST ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { id: string; key: string; secret: string };
  };
  const webhook = await post('/webhooks', { url: receiverUrl, events: ['*'], description: 'the demo receiver' });
  hookSecret = webhook.secret;
  const account = await post('/accounts', { name: 'acme-corp', plan: 'pro', meta: { crm: 'cus_42' } });
  const web = await post('/keys', { name: 'acme-web', account: account.id, origins: ['https://app.acme.example'] });
  const backend = await post('/keys', { name: 'acme-backend', account: account.id });
  const deal = await post('/keys', { name: 'big-customer', plan: 'free', limits: { rps: 50, costs: { stats: 1 } } });
  return { account: account.id, web: web.key, backend: backend.key, deal: deal.key, webhook: webhook.id };
}
const sold = await sell();
const toldLine = () =>
  told.length === 0
    ? 'nothing within 10 seconds'
    : `${[...new Set(told.map((t) => t.type))].sort().join(', ')} for ${told
        .map((t) => t.key)
        .sort()
        .join(', ')}` + (told.every((t) => t.verified) ? ' (signatures verified)' : ' (a signature did NOT verify)');
const bearerOf = (secret: string) => `-H 'Authorization: Bearer ${secret}'`;
process.stdout.write(`
explorer-gateway demo
  fixture explorer: ${explorer.url}  (services: stats ${stats.url}, bens ${bens.url}, metadata ${metadata.url})
  gateway:          ${base}  (config/demo.yaml, key "demo" on plan free, 5 requests a second)

Try (every read route of Blockscout's PRO API and RPC API answers; these are a few):
  curl -s ${bearer} ${base}/1/api/v2/addresses/${address}/token-balances
  curl -s '${base}/100/api/v2/addresses/${address}/transactions?items_count=2&apikey=${key}'
  curl -s ${bearer} ${base}/1/api/v2/blocks/19000000
  curl -s ${bearer} ${base}/1/api/v2/transactions/${tx}/logs
  curl -s ${bearer} ${base}/1/api/v2/tokens/${token}/holders
  curl -s '${base}/1/api?module=token&action=getToken&contractaddress=${token}&apikey=${key}'
  curl -s '${base}/1/api?module=account&action=balance&address=${address}&apikey=${key}'
  curl -s '${base}/v2/api?chainid=100&module=account&action=balance&address=${address}&apikey=${key}'   # Etherscan V2 form
  curl -si ${base}/1/api/v2/addresses/0x123/token-balances ${bearer}   # 422, Blockscout's own error body
  curl -s ${base}/api/json/config   # chains and the cost of every route, no key

Beside the explorers (docs/configuration.md, services and clusters):
  curl -s ${bearer} ${base}/services/bens/api/v1/1/domains/vitalik.eth   # a name (the name service)
  curl -s ${bearer} '${base}/1/stats-service/api/v1/lines/newTxns?resolution=DAY'   # a stats line (chain 1's stats service)
  curl -s ${bearer} '${base}/services/multichain/api/v1/clusters/demo/search/tokens?q=USD'   # a search across chains 1 and 10, by the gateway
  curl -s ${bearer} '${base}/services/metadata/api/v1/metadata?addresses=${address}'   # public tags

Every client a customer brings (docs/clients.md):
  curl -s ${bearer} -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' ${base}/1/json-rpc   # JSON-RPC (ethers, viem)
  curl -s '${base}/1/api/eth-rpc?apikey=${key}' -d '[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["${SAMPLE_ACCOUNT}","latest"]},{"jsonrpc":"2.0","id":2,"method":"eth_getTransactionReceipt","params":["${KNOWN_TX_HASH}"]}]'   # a batch
  curl -s '${base}/v2/api?chainid=1&module=proxy&action=eth_call&to=${TOKEN_CONTRACT}&data=0x95d89b41&apikey=${key}'   # Etherscan's proxy module (symbol())
  curl -si -X OPTIONS -H 'Origin: https://dapp.example' -H 'Access-Control-Request-Method: GET' -H 'Access-Control-Request-Headers: authorization' ${base}/1/api/v2/blocks/1   # CORS preflight, 204
  curl -s '${base}/1/api?apikey=${key}' -d 'module=contract&action=verifysourcecode&contractaddress=${VERIFIABLE_CONTRACT}&contractname=Counter&compilerversion=v0.8.24%2Bcommit.e11b9ed9&codeformat=solidity-single-file&optimizationUsed=0&sourceCode=contract%20Counter%20%7B%7D'   # verification: a GUID
  curl -s '${base}/1/api?module=contract&action=checkverifystatus&guid=<GUID>&apikey=${key}'   # Pending in queue, then Pass - Verified

Sold at start through the admin API (docs/admin-api.md):${
  sold === undefined
    ? ' nothing (admin API off: set admin.token)'
    : `
  account ${sold.account} (acme-corp, plan pro): its keys acme-web (browser origin https://app.acme.example only) and acme-backend share one balance and one rate
  curl -s -D - -o /dev/null ${bearerOf(sold.backend)} ${base}/1/api/v2/stats | grep -i '^x-'   # x-credits-remaining: the account's
  curl -s -D - -o /dev/null ${bearerOf(sold.web)} -H 'Origin: https://app.acme.example' ${base}/1/api/v2/stats | grep -i '^x-credits'   # lower: the same balance
  curl -s ${bearerOf(sold.web)} ${base}/1/api/v2/stats; echo   # 403: no Origin, key restriction: origins
  key big-customer: plan free (5 requests a second) with a deal of its own, 50 a second and stats at 1 credit
  curl -s -D - -o /dev/null ${bearerOf(sold.deal)} ${base}/1/api/v2/stats | grep -i '^x-'   # x-ratelimit-limit: 50
  webhook ${sold.webhook} (events *) to a receiver on ${receiverUrl} that checks signatures (what it is told follows)
  npx tsx src/cli.ts webhooks deliveries --limit 3   # with EGW_ADMIN_URL and EGW_ADMIN_TOKEN below`
}

Sell more (the admin API, on its own loopback port; the CLI calls the same API):
  export EGW_ADMIN_URL=${app.gateway.adminUrl() ?? '(admin API off: set admin.token)'} EGW_ADMIN_TOKEN=${config.admin.token ?? ''}
  curl -s -H "Authorization: Bearer $EGW_ADMIN_TOKEN" -H 'content-type: application/json' -d '{"name":"acme","plan":"pro","owner":"acme-corp"}' $EGW_ADMIN_URL/keys
  npx tsx src/cli.ts keys list
  npx tsx src/cli.ts keys credits <id> 5000
  npx tsx src/cli.ts accounts list
  npx tsx src/cli.ts plans create --name team --rps 100 --credits 500000 --period monthly
  npx tsx src/cli.ts usage --format csv

Operate it (the operations listener, loopback only; the public port has a bare /healthz and /readyz):
  curl -s ${app.gateway.opsUrl() ?? '(no operations listener: set metrics.port)'}/readyz
  curl -s ${app.gateway.opsUrl() ?? ''}/metrics | grep '^egw_requests_total'

Ctrl-C stops both.
`);

// The key.created events of the keys sold above, delivered off the request path within a second or so.
if (sold !== undefined) {
  for (let i = 0; i < 200 && told.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
  process.stdout.write(`  webhook: it was told ${toldLine()}\n`);
}

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    receiver.closeAllConnections();
    void Promise.all([app.close(), explorer.close(), ...services.map((x) => x.close()), new Promise((r) => receiver.close(r))]).then(() =>
      process.exit(0),
    );
  });
}
