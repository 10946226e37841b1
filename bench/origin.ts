// The upstream of the gateway and proxy variants: `node --import tsx bench/origin.ts PORT`.
// Answers every GET with the bench body, like an explorer whose answer is always the same
// 3 KB of JSON; node:http, so its own cost is as small as Node allows.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BODY, JSON_CONTENT_TYPE } from './body.js';
import type { ReadyLine } from './shared.js';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': JSON_CONTENT_TYPE, 'content-length': BODY.length });
  res.end(BODY);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const ready: ReadyLine = { ready: true, port: (server.address() as AddressInfo).port };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
