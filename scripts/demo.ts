// `npm run demo`: the fixture explorer (deterministic Blockscout-shaped data, no network) and
// the gateway in front of it, with config/demo.yaml; prints ready-to-paste curl lines.
import type { AddressInfo } from 'node:net';
import { startFixtureExplorer } from '../fixture/explorer.js';
import { loadConfig } from '../src/config/load.js';
import { buildServer } from '../src/server.js';

const explorer = await startFixtureExplorer({ port: Number(process.env.DEMO_EXPLORER_PORT ?? 0) });
process.env.DEMO_UPSTREAM = explorer.url;
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
process.stdout.write(`
explorer-gateway demo
  fixture explorer: ${explorer.url}
  gateway:          ${base}  (config/demo.yaml, key "demo" on plan free)

Try:
  curl -s -H 'Authorization: Bearer ${key}' ${base}/1/api/v2/addresses/${address}/token-balances
  curl -s '${base}/100/api/v2/addresses/${address}/transactions?items_count=2&apikey=${key}'
  curl -s '${base}/1/api?module=token&action=getToken&contractaddress=0xb7d311e2eb55f2f68a9440da38e7989210b9a05e&apikey=${key}'
  curl -si ${base}/1/api/v2/addresses/0x123/token-balances -H 'Authorization: Bearer ${key}'   # 422

Ctrl-C stops both.
`);

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    void Promise.all([app.close(), explorer.close()]).then(() => process.exit(0));
  });
}
