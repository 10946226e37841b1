// One server variant per process: `node --import tsx bench/servers.ts VARIANT PORT [REDIS_PREFIX] [ORIGIN_URL]`.
// PORT 0 picks a free port; the process prints one ReadyLine on stdout once it listens, and
// closes cleanly (Redis connection included) on SIGTERM.
//
// bare and quota-* are the same fastify instance with the same options and the same route; the
// quota variants add only the gateway's quota step, built from the real exported classes
// (KeyRing, QuotaStep, the stores), so the difference to `bare` is its cost.
// gateway-* run the whole gateway (buildServer) in front of an origin process; the
// gateway-hit-webhook-* variants add a webhook receiver and an admin API making events
// (webhook-load.ts).
import cluster from 'node:cluster';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import proxy from '@fastify/http-proxy';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { extractKey } from '../src/auth/credentials.js';
import { KeyRing, type ApiKey } from '../src/keys/ring.js';
import { configSchema, costsSchema, keySchema, planSchema } from '../src/config/schema.js';
import { buildServer } from '../src/app/server.js';
import { MemoryQuotaStore } from '../src/quota/memory.js';
import { RedisQuotaStore } from '../src/quota/redis.js';
import { QuotaStep } from '../src/quota/step.js';
import { costOf } from '../src/routes/settings.js';
import { decimal } from '../src/http/headers.js';
import type { QuotaDecision, QuotaStore } from '../src/quota/types.js';
import { BODY, JSON_CONTENT_TYPE } from './body.js';
import { connectRedis } from './redis.js';
import { BENCH_RPC_TTLS } from './rpc.js';
import { BENCH_KEY, BENCH_ROUTE, isVariant, NEEDS_ORIGIN, redisUrl, type ReadyLine, type Variant } from './shared.js';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_WEBHOOK_SECRET,
  startKeyStream,
  startReceiver,
  WEBHOOK_PREROLL_MS,
  type KeyStream,
  type ReceiverKind,
} from './webhook-load.js';

/** A plan nothing is refused under: the bench measures the cost of deciding, not of refusing. */
const BENCH_PLAN = planSchema.parse({ rps: 10_000_000, credits: 1_000_000_000, period: 'daily' });
const BENCH_KEYS = new KeyRing({
  plans: { bench: BENCH_PLAN },
  keys: [keySchema.parse({ name: 'bench', key: BENCH_KEY, plan: 'bench' })],
});
/** What a token-balances request costs under the default costs: the decision includes billing. */
const COST = costOf(costsSchema.parse({}), 'token-balances');
/** The bench requests carry no `?apikey=`; the gateway would pass the query's values here. */
const NO_QUERY_KEYS: readonly string[] = [];

function sendBody(reply: FastifyReply): FastifyReply {
  return reply.header('content-type', JSON_CONTENT_TYPE).send(BODY);
}

function newApp(): FastifyInstance {
  // No logger in any variant: a log line per request costs more than what is measured here
  // (bench/results/2026-11-22-logging.md), and it is an operator switch, not the quota step.
  return Fastify({ logger: false });
}

function bareApp(): FastifyInstance {
  const app = newApp();
  app.get(BENCH_ROUTE, (_request, reply) => {
    sendBody(reply);
  });
  return app;
}

/** What `bare-spin` spends per request, in microseconds: about what an access line costs. */
const SPIN_US = 2;

/** The bare route after SPIN_US of busy CPU, read off the monotonic clock. */
function bareSpinApp(): FastifyInstance {
  const app = newApp();
  app.get(BENCH_ROUTE, (_request, reply) => {
    const until = performance.now() + SPIN_US / 1000;
    while (performance.now() < until);
    sendBody(reply);
  });
  return app;
}

/** The bare route plus the eight headers of a gateway hit, with constant values. */
function bareHeadersApp(): FastifyInstance {
  const app = newApp();
  let n = 0;
  app.get(BENCH_ROUTE, (_request, reply) => {
    reply
      .header('x-request-id', `0123456789abcdef-${(++n).toString(16).padStart(10, '0')}`)
      .header('x-ratelimit-limit', '10000000')
      .header('x-ratelimit-remaining', '9999999')
      .header('x-ratelimit-reset', '1000')
      .header('x-credits-remaining', '999999980')
      .header('x-cache', 'HIT')
      .header('age', '0');
    sendBody(reply);
  });
  return app;
}

/**
 * The gateway's key and quota steps in front of the body. A refusal or a failed store answers
 * non-2xx on purpose (not fail-open with -1 headers), so the runner notices it is measuring errors.
 */
function stampQuotaHeaders(reply: FastifyReply, rps: string, d: QuotaDecision | undefined): void {
  reply
    .header('x-ratelimit-limit', d ? rps : '-1')
    .header('x-ratelimit-remaining', d ? decimal(d.rateRemaining) : '-1')
    .header('x-ratelimit-reset', d ? decimal(d.rateResetMs) : '-1')
    .header('x-credits-remaining', d ? decimal(Math.max(d.credits, 0)) : '-1');
}

function quotaApp(store: QuotaStore): FastifyInstance {
  const app = newApp();
  const quota = new QuotaStep(store, pino({ level: 'warn' }), Date.now);
  const answer = (reply: FastifyReply, key: ApiKey, decision: QuotaDecision | undefined): FastifyReply => {
    stampQuotaHeaders(reply, key.rpsHeader, decision);
    if (decision === undefined) return reply.code(503).send();
    if (decision.outcome !== 'ok') return reply.code(429).send();
    return sendBody(reply);
  };
  // As in the gateway: not an async handler, and no promise when the store answers at once.
  app.get(BENCH_ROUTE, (request: FastifyRequest, reply: FastifyReply) => {
    const source = extractKey(request.headers.authorization, NO_QUERY_KEYS);
    const key = source.kind === 'key' ? BENCH_KEYS.find(source.key, Date.now()) : undefined;
    if (!key) return void reply.code(401).send();
    const decided = quota.decide(key, COST);
    if (decided instanceof Promise) return decided.then((d) => void answer(reply, key, d));
    answer(reply, key, decided);
  });
  return app;
}

/** The whole gateway, as `npm start` builds it, with one chain on the origin and one key. */
function gatewayApp(
  origin: string,
  opts: { log: boolean; redisPrefix?: string | undefined; cache: boolean; usage?: boolean; leases?: boolean; webhookUrl?: string },
): FastifyInstance {
  const config = configSchema.parse({
    server: { host: '127.0.0.1', port: 0 },
    chains: { '1': { name: 'Bench', upstreams: [origin] } },
    plans: { bench: { rps: 10_000_000, credits: 1_000_000_000 } },
    keys: [{ name: 'bench', key: BENCH_KEY, plan: 'bench' }],
    log: { level: 'info', requests: opts.log },
    // Hits: one long TTL, so the measured runs never refresh (the JSON-RPC calls of the
    // gateway-rpc-* variants too: the same server, asked by POST). Misses: nothing is cached.
    cache: { ttlSeconds: opts.cache ? { 'token-balances': 3600, ...BENCH_RPC_TTLS } : { 'token-balances': 0 } },
    metrics: { enabled: true },
    health: { probeIntervalMs: 3_600_000 },
    storage: { path: ':memory:' },
    usage: { enabled: opts.usage ?? true },
    // The bench's Redis is a throwaway (the machine's keeps nothing on disk): volatile accepts it.
    ...(opts.redisPrefix ? { redis: { url: redisUrl(), keyPrefix: opts.redisPrefix, leases: opts.leases ?? true, volatile: true } } : {}),
    // Every event to one receiver, and the admin API (loopback, a free port) that makes them.
    ...(opts.webhookUrl
      ? {
          admin: { token: BENCH_ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
          webhooks: [{ name: 'bench', url: opts.webhookUrl, events: ['*'], secret: BENCH_WEBHOOK_SECRET }],
          // The receiver is in this process, on loopback.
          security: { allowPrivateWebhooks: true },
        }
      : {}),
  });
  // Log lines are written (serialised, buffered and all) as on stdout in production, but to
  // /dev/null rather than the handshake pipe (nobody reads it once the server is ready: the
  // admin API's line per key created would fill it).
  return buildServer(config, opts.log || opts.webhookUrl ? { logFile: '/dev/null' } : {});
}

/** What a variant does once it listens, before it prints its ReadyLine. */
const afterListen = new WeakMap<FastifyInstance, () => Promise<void>>();

/**
 * gateway-hit with one webhook for every event (`*`) to a receiver in this process, up or down,
 * and keys created through the admin API at a fixed rate from the moment it listens until it
 * closes: each a `key.created` event, stored in the outbox and delivered (or attempted) while
 * the hits are measured. Ready only after WEBHOOK_PREROLL_MS of that, so the measured run sees
 * attempts to the down receiver time out and be retried. What was created and received is
 * printed on stderr at the close.
 */
async function webhookGatewayApp(variant: Variant, origin: string, kind: ReceiverKind): Promise<FastifyInstance> {
  const receiver = await startReceiver(kind);
  const app = gatewayApp(origin, { log: false, cache: true, webhookUrl: receiver.url });
  let stream: KeyStream | undefined;
  afterListen.set(app, async () => {
    const adminUrl = app.gateway.adminUrl();
    if (adminUrl === undefined) throw new Error(`${variant}: the admin API is not listening`);
    stream = startKeyStream(adminUrl, 'bench');
    await new Promise((resolve) => setTimeout(resolve, WEBHOOK_PREROLL_MS));
  });
  // Before the gateway closes (its delivery loop waits for the attempts in flight): no more
  // keys, and the held connections destroyed, so those attempts end at once.
  app.addHook('preClose', async () => {
    await stream?.stop();
    await receiver.close();
    process.stderr.write(`bench server ${variant}: ${stream?.describe() ?? 'no keys created'}; ${receiver.describe()}\n`);
  });
  return app;
}

/** A bare pass-through: @fastify/http-proxy (undici underneath) to the origin. */
function proxyApp(origin: string): FastifyInstance {
  const app = newApp();
  void app.register(proxy, { upstream: origin });
  return app;
}

async function buildVariant(variant: Variant, redisPrefix: string | undefined, origin: string | undefined): Promise<FastifyInstance> {
  if (variant === 'bare') return bareApp();
  if (variant === 'bare-headers') return bareHeadersApp();
  if (variant === 'bare-spin') return bareSpinApp();
  if (NEEDS_ORIGIN.has(variant) && !origin) throw new Error(`${variant} needs an origin URL argument`);
  const o = origin ?? '';
  if (variant === 'gateway-hit') return gatewayApp(o, { log: false, cache: true });
  if (variant === 'gateway-hit-log') return gatewayApp(o, { log: true, cache: true });
  if (variant === 'gateway-hit-nousage') return gatewayApp(o, { log: false, cache: true, usage: false });
  if (variant === 'gateway-hit-webhook-up') return webhookGatewayApp(variant, o, 'up');
  if (variant === 'gateway-hit-webhook-down') return webhookGatewayApp(variant, o, 'down');
  if (variant === 'gateway-hit-apikey') return gatewayApp(o, { log: false, cache: true });
  if (variant === 'gateway-rpc-hit' || variant === 'gateway-rpc-batch10') return gatewayApp(o, { log: false, cache: true });
  if (variant === 'gateway-hit-redis-apikey') return gatewayApp(o, { log: false, cache: true, redisPrefix });
  if (variant === 'gateway-hit-redis-calls') return gatewayApp(o, { log: false, cache: true, redisPrefix, leases: false });
  if (variant === 'gateway-hit-workers') return gatewayApp(o, { log: false, cache: true, redisPrefix });
  if (variant === 'gateway-hit-redis') return gatewayApp(o, { log: false, cache: true, redisPrefix });
  if (variant === 'gateway-miss') return gatewayApp(o, { log: false, cache: false });
  if (variant === 'proxy-bare') return proxyApp(o);
  if (variant === 'nginx-cache') throw new Error('nginx-cache is not a node server (see server-process.ts)');
  if (variant === 'quota-memory') return quotaApp(new MemoryQuotaStore());
  if (!redisPrefix) throw new Error('quota-redis needs a key prefix argument');
  // Connected before listening: with no offline queue, early requests would fail otherwise.
  const redis = await connectRedis();
  const app = quotaApp(new RedisQuotaStore(redis, redisPrefix));
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  return app;
}

function parseArgs(argv: readonly string[]): {
  variant: Variant;
  port: number;
  redisPrefix: string | undefined;
  origin: string | undefined;
} {
  const [variant, port = '0', redisPrefix, origin] = argv;
  if (variant === undefined || !isVariant(variant)) throw new Error(`usage: servers.ts VARIANT PORT [REDIS_PREFIX]; got ${variant}`);
  const n = Number(port);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`bad port ${port}`);
  return { variant, port: n, redisPrefix, origin: origin || undefined };
}

/** Workers of gateway-hit-workers: as `server.workers` runs them (process/primary.ts), node:cluster on one port. */
const WORKERS = 2;

async function primary(): Promise<void> {
  // A free port first: workers listening on 0 would each get their own.
  const port = await new Promise<number>((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
  const workers = Array.from({ length: WORKERS }, () => cluster.fork({ EGW_BENCH_PORT: String(port) }));
  await Promise.all(workers.map((w) => new Promise<void>((resolve) => w.once('listening', () => resolve()))));
  const ready: ReadyLine = { ready: true, port, workers: workers.map((w) => w.process.pid!) };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  process.once('SIGTERM', () => {
    let left = workers.length;
    for (const w of workers) {
      w.once('exit', () => --left === 0 && process.exit(0));
      w.process.kill('SIGTERM');
    }
  });
}

async function main(): Promise<void> {
  const { variant, port: given, redisPrefix, origin } = parseArgs(process.argv.slice(2));
  if (variant === 'gateway-hit-workers' && cluster.isPrimary) return primary();
  const port = cluster.isWorker ? Number(process.env.EGW_BENCH_PORT) : given;
  const app = await buildVariant(variant, redisPrefix, origin);
  await app.listen({ host: '127.0.0.1', port });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address');
  process.once('SIGTERM', () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  await afterListen.get(app)?.();
  const ready: ReadyLine = { ready: true, port: address.port };
  // A worker's readiness is the primary's to say (cluster's 'listening' event).
  if (cluster.isPrimary) process.stdout.write(`${JSON.stringify(ready)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
