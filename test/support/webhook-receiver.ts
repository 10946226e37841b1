// A webhook receiver on loopback for tests: records every POST (headers and body as received) and
// answers with the statuses queued (`failNext`), else 200, or holds every request unanswered
// (`hang`), as a receiver that is down behind a load balancer would.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** What it was answered (0: held). */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** The next `n` requests are answered `status` (503 unless given). */
  failNext(n: number, status?: number): void;
  /** Holds every request from now on, unanswered, until `release`. */
  hang(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = [];
  let failures: number[] = [];
  let hanging = false;
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: 0 };
      received.push(r);
      if (hanging) return void held.push(res);
      r.status = failures.shift() ?? 200;
      res.writeHead(r.status, { 'content-type': 'text/plain' }).end(r.status === 200 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const release = () => {
    hanging = false;
    for (const res of held.splice(0)) res.destroy();
  };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    failNext(n, status = 503) {
      failures = [...failures, ...Array<number>(n).fill(status)];
    },
    hang() {
      hanging = true;
    },
    release,
    async close() {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
