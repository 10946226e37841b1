// The upstream of the gateway and proxy variants: `node --import tsx bench/origin.ts PORT`.
// Answers every GET with the bench body, like an explorer whose answer is always the same
// 3 KB of JSON; node:http, so its own cost is as small as Node allows. A POST is a JSON-RPC
// call (the gateway sends one call per request to `/api/eth-rpc`), answered with a fixed result
// (bench/rpc.ts): the gateway-rpc-* variants ask it only to warm their cache. `GET
// /bench/rpc-calls` says how many calls it has answered, so the runner can tell that a measured
// run reached it with none.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BODY, JSON_CONTENT_TYPE } from './body.js';
import { originResult, RPC_CALLS_PATH } from './rpc.js';
import type { ReadyLine } from './shared.js';

let rpcCalls = 0;

function answerRpc(req: IncomingMessage, res: ServerResponse): void {
  rpcCalls++;
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let call: { id?: unknown; method?: unknown; params?: unknown } = {};
    try {
      call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof call;
    } catch {
      // answered below with id null, as a node answers what it cannot read
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: originResult(call.method, call.params) });
    res.writeHead(200, { 'content-type': JSON_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

const server = createServer((req, res) => {
  if (req.method === 'POST') return answerRpc(req, res);
  if (req.url === RPC_CALLS_PATH) return void res.end(String(rpcCalls));
  res.writeHead(200, { 'content-type': JSON_CONTENT_TYPE, 'content-length': BODY.length });
  res.end(BODY);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const ready: ReadyLine = { ready: true, port: (server.address() as AddressInfo).port };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
