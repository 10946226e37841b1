// The webhook side of the gateway-hit-webhook-up and -down variants (servers.ts): a receiver in
// the server's own process, and a steady stream of `key.created` events made through the admin
// API (`POST /keys`, docs/admin-api.md). The receiver is up (204 at once) or down (it accepts
// connections and never answers, so each delivery attempt waits out the gateway's 10 s timeout,
// ATTEMPT_TIMEOUT_MS in src/webhooks/delivery.ts, and is retried after its back-off). Loopback only.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** The admin token of the webhook variants (admin.token: at least 16 characters). */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';
/** A signing secret of the form the configuration asks for: `whsec_` and base64 of 32 bytes. */
export const BENCH_WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
/** Keys created (and so `key.created` events) per second, all through a webhook variant's life. */
export const KEYS_PER_SECOND = 20;
/**
 * How long a webhook variant makes events before it says it is ready. Past the first attempt's
 * 10 s timeout, so that a measured run of 10 s or more sees the down receiver's steady state:
 * a batch of attempts timing out, retries scheduled, the next batch's connections opened.
 */
export const WEBHOOK_PREROLL_MS = 10_500;

export type ReceiverKind = 'up' | 'down';

export interface Receiver {
  url: string;
  /** What it saw, for the line a variant prints when it closes. */
  describe(): string;
  close(): Promise<void>;
}

function listenLoopback(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`));
  });
}

/** Answers every POST with 204 as soon as it has its headers (the body is read and dropped). */
async function upReceiver(): Promise<Receiver> {
  let answered = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    answered++;
    res.writeHead(204).end();
  });
  const url = await listenLoopback(server);
  return {
    url,
    describe: () => `receiver up: ${answered} deliveries answered 204`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Accepts every connection, reads and drops what comes, never answers; closing destroys them all. */
async function downReceiver(): Promise<Receiver> {
  const held = new Set<Socket>();
  let accepted = 0;
  const server = createNetServer((socket) => {
    accepted++;
    held.add(socket);
    socket.on('close', () => held.delete(socket));
    socket.on('error', () => undefined);
    socket.resume();
  });
  const url = await listenLoopback(server);
  return {
    url,
    describe: () => `receiver down: ${accepted} connections accepted and never answered (${held.size} still open at the close)`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const s of held) s.destroy();
      }),
  };
}

export function startReceiver(kind: ReceiverKind): Promise<Receiver> {
  return kind === 'up' ? upReceiver() : downReceiver();
}

export interface KeyStream {
  describe(): string;
  /** No more keys; resolves when the calls in flight have ended. */
  stop(): Promise<void>;
}

/** How often the stream looks whether keys are due (it catches up on a late tick). */
const TICK_MS = 25;
/** A key creation not answered by then is counted as failed. */
const CALL_TIMEOUT_MS = 5_000;

/**
 * Creates KEYS_PER_SECOND keys a second through the admin API at `adminUrl`, each with its own
 * name. Paced by the clock, not by the ticks: a tick that comes late (the event loop is busy
 * with the load) creates every key due since, so the rate holds on average.
 */
export function startKeyStream(adminUrl: string, plan: string): KeyStream {
  const started = performance.now();
  let made = 0;
  let created = 0;
  let failed = 0;
  let stoppedAt: number | undefined;
  const inFlight = new Set<Promise<void>>();
  const create = (n: number) => {
    const call = fetch(`${adminUrl}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench-webhook-${n}`, plan }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    }).then(
      async (res) => {
        await res.arrayBuffer();
        if (res.status === 201) created++;
        else failed++;
      },
      () => void failed++,
    );
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call));
  };
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) * KEYS_PER_SECOND) / 1000);
    while (made < due) create(++made);
  }, TICK_MS);
  return {
    describe: () => {
      const seconds = ((stoppedAt ?? performance.now()) - started) / 1000;
      return `${created} keys created in ${seconds.toFixed(1)} s (${(created / seconds).toFixed(1)}/s), ${failed} failed`;
    },
    async stop() {
      clearInterval(timer);
      stoppedAt ??= performance.now();
      await Promise.all(inFlight);
    },
  };
}
