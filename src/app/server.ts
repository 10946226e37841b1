// buildServer(config): the gateway as a fastify instance that never listens by itself, so tests
// drive it on port 0 and the CLI decides where to listen. A short composition of named parts:
// the process-lifetime resources (resources.ts), the state a configuration gives and its reload
// (state.ts), the operations endpoints (ops.ts), and the request pipeline (request/).
import cluster from 'node:cluster';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import replyFrom from '@fastify/reply-from';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { adminTokens, type Config } from '../config/schema.js';
import { ROUTE_NAMES } from '../routes/table.js';
import { answerClientError, capConnections, defaultMaxConnections, drainable, endWithError, openFileLimit } from '../http/connections.js';
import { H_REQUEST_ID } from '../http/headers.js';
import { JSON_TYPE } from '../http/respond.js';
import { takePathKey } from '../auth/path-key.js';
import { takeApiKeys } from '../auth/query-key.js';
import { readiness, startProbing, type Readiness } from '../observability/health.js';
import { startHeadPolls } from '../finality/poll.js';
import type { Metrics } from '../observability/metrics.js';
import { ThrottledWarning } from '../observability/throttled-log.js';
import { RequestContext } from '../request/context.js';
import { finish } from '../request/finish.js';
import { refusalBody, sendError } from '../request/send.js';
import { makeHandler, type Handler } from '../request/pipeline.js';
import type { GatewayState } from '../request/state.js';
import { buildAdminServer } from '../admin/server.js';
import { DAY_MS, utcDay } from '../store/day.js';
import { clusterMetrics, shareMetrics } from '../process/primary.js';
import { POOL_CONNECTIONS } from '../upstream/client.js';
import { registerDiscovery } from './discovery.js';
import { registerOpenApi } from './openapi.js';
import { registerOps } from './ops.js';
import { requestId } from './request-id.js';
import { Resources, type ServerDeps } from './resources.js';
import { GatewayStates } from './state.js';

export type { ServerDeps };
/** What GatewayControl.reload throws for a configuration that removes plans still in use (keys/plan-use.ts). */
export { PlansInUseError } from '../keys/plan-use.js';

export interface GatewayControl {
  /** The state new requests see. */
  state(): GatewayState;
  /**
   * Swaps in a new configuration for new requests; returns what it could not apply without a
   * restart. Throws PlansInUseError, and changes nothing, when it removes a plan run-time keys or
   * accounts are on.
   */
  reload(config: Config): string[];
  readiness(): Readiness;
  metrics: Metrics;
  /** The gateway's logger (fastify itself runs without one). */
  log: Logger;
  /** The admin API's base URL once it listens (`http://host:port/admin/v1`); undefined without `admin.token`. */
  adminUrl(): string | undefined;
  /** Writes every log line still buffered (the CLI calls it before any process.exit). */
  flushLogs(): void;
  /** The operations listener's URL once it listens (`metrics.port`); undefined without one. */
  opsUrl(): string | undefined;
  /**
   * Deletes the usage rows past `usage.retentionDays` and the hourly rows past
   * `usage.hourlyRetentionDays`, as of the gateway's clock: what runs every USAGE_PRUNE_MS, now.
   */
  pruneUsage(): Promise<void>;
  /**
   * The start of the process's shutdown, before close(): the public listener takes no new
   * connection, requests get the pipeline's 503, every answer not yet begun says
   * `Connection: close`, and idle keep-alive connections stay until their next request or their
   * keep-alive timeout (http/connections.ts: drainable). Resolves once none is left.
   */
  drain(): Promise<void>;
  /** Requests on the public listener whose answer is not written in full. */
  inFlight(): number;
}

declare module 'fastify' {
  interface FastifyInstance {
    gateway: GatewayControl;
  }
}

/** Methods the router lists; any other (TRACE, PROPFIND, ...) reaches the pipeline as not found. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** How long start-up waits for Redis to connect before serving without it. */
const REDIS_STARTUP_WAIT_MS = 2_000;
/** How often usage rows past `usage.retentionDays` (hourly rows: `usage.hourlyRetentionDays`) are deleted. */
const USAGE_PRUNE_MS = 3_600_000;
/** Sockets the streamed routes' agent may open per upstream (reply-from's undici option below). */
const STREAM_CONNECTIONS = 32;

/** File descriptors the upstream sockets of `config` may take, at most. */
function upstreamSockets(config: Config): number {
  const upstreams = Object.values(config.chains).reduce((n, c) => n + c.upstreams.length, 0);
  return upstreams * (POOL_CONNECTIONS + STREAM_CONNECTIONS);
}

export function buildServer(config: Config, deps: ServerDeps = {}): FastifyInstance {
  const resources = new Resources(config, deps);
  const states = new GatewayStates(resources, config);
  const { log, redis, metrics } = resources;
  const handlerRef: { current?: Handler } = {};

  const app = Fastify({
    // With a logger, fastify makes a child logger and adds two response listeners per request
    // (measurable on a cache hit), for lines this gateway does not write: it logs through its own.
    logger: false,
    requestIdHeader: false,
    genReqId: requestId,
    // Which client address counts (request.ip): server.trustProxy.
    trustProxy: config.server.trustProxy,
    // Unused: no body goes through fastify's own parsers (request/body.ts reads them, bounded).
    bodyLimit: 1024,
    // A path the router cannot decode (`%zz`) goes to the pipeline, which answers 404 or 422
    // with the contract's bodies instead of fastify's own 400.
    frameworkErrors: (err, request, reply) => {
      if (err.code === 'FST_ERR_BAD_URL' && handlerRef.current) return void handlerRef.current(request, reply);
      return void (reply as FastifyReply).code(400).header('content-type', JSON_TYPE).send('{"message":"Bad request"}');
    },
    // A request that arrives while the gateway drains gets the gateway's own 503 (pipeline).
    return503OnClosing: false,
    // Malformed HTTP, headers too large or too slow: the gateway's own 400, 431 or 408.
    clientErrorHandler: answerClientError,
    // Slow and idle connections are closed on the configured timeouts, checked every second
    // (Node checks every 30 s by default, so a 10 s header timeout could take 40).
    keepAliveTimeout: config.server.keepAliveTimeoutMs,
    requestTimeout: config.server.requestTimeoutMs,
    http: {
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, config.server.headersTimeoutMs),
    },
  });
  const shedWarning = new ThrottledWarning(log, 'connection limit reached; closing connections that have sent no request', resources.now);
  const maxConnections = config.server.maxConnections ?? defaultMaxConnections(openFileLimit(), upstreamSockets(config));
  metrics.connections(
    capConnections(app.server, maxConnections, (reason) => shedWarning.warn(`connection closed (${reason})`, { max: maxConnections })),
  );
  const drain = drainable(app.server);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // CONNECT never reaches a route (Node's server hands its socket to a 'connect' listener, or
  // closes it): a 405 like any other method the gateway does not serve (RFC 9110 15.5.6), with
  // its request id and, on a legacy path, the legacy envelope (on a JSON-RPC path, its error).
  app.server.on('connect', (req: IncomingMessage, socket: Socket) => {
    const url = takePathKey(req.url ?? '/')?.url ?? req.url ?? '/';
    const resolution = states.current.resolver.resolve(takeApiKeys(url)?.url ?? url).resolution;
    // A JSON-RPC path answers a JSON-RPC error, as every refusal there (request/send.ts).
    endWithError(socket, 'METHOD_NOT_ALLOWED', refusalBody(resolution, 'METHOD_NOT_ALLOWED'), {
      ...(resolution.rpc === true ? { allow: 'POST' } : {}),
      [H_REQUEST_ID]: requestId(req),
    });
  });
  const health = () =>
    readiness(
      states.current.chains,
      redis?.status,
      { backend: resources.store.kind, up: resources.storageUp },
      resources.now(),
      states.current.services,
    );
  metrics.heads(() => [...states.current.chains.values()].map((c) => c.head), resources.now);
  const tokens = adminTokens(config.admin);
  const admin =
    tokens.length === 0
      ? undefined
      : buildAdminServer(tokens, {
          store: resources.store,
          quota: resources.quotaStore,
          credits: resources.credits,
          runtime: resources.runtime,
          states: () => states.current,
          now: resources.now,
          log,
          routeNames: ROUTE_NAMES,
          webhooks: resources.webhooks,
          // Usage counted in memory, and the credits this process's leases spent (billed, and so
          // counted, when settled: quota/usage-credits.ts), written before a report is read.
          flushUsage: async () => {
            await Promise.all([resources.usage?.flush(), resources.credits?.settleLeases()]);
          },
        });
  let adminUrl: string | undefined;
  const pruneUsage = async (): Promise<void> => {
    const now = resources.now();
    const usage = resources.store.usage;
    const days = utcDay(now - config.usage.retentionDays * DAY_MS);
    // Hourly rows never outlive their day's row.
    const hours = utcDay(now - Math.min(config.usage.hourlyRetentionDays, config.usage.retentionDays) * DAY_MS);
    await usage.pruneUsage(days);
    await usage.pruneHourlyUsage(hours);
    // With Redis, the credits of the rows are counted apart (quota/usage-credits.ts): pruned alike.
    await resources.credits?.pruneUsageCredits(days, hours);
  };
  app.decorate('gateway', {
    state: () => states.current,
    reload: (next: Config) => states.reload(next),
    readiness: health,
    metrics,
    log,
    adminUrl: () => adminUrl,
    flushLogs: () => resources.flushLogs(),
    opsUrl: () => ops.url(),
    pruneUsage,
    drain: () => {
      closing = true;
      return drain.begin();
    },
    inFlight: () => drain.inFlight(),
  });
  // Set by the pipeline (no onRequest hook: every hook costs on the hot path).
  app.decorateRequest('ctx', null);

  // Bodies are read by the routes that take one (request/body.ts: JSON-RPC, POSTed forms, a
  // service's POST), with their own limits; a POSTed legacy form without a known key only up to
  // rpc.maxKeylessBodyBytes, where its `apikey` field may be (request/form.ts). Every body is
  // handed on as the raw stream, unread, whatever its type, so a POST elsewhere gets its 405, not
  // a parse error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  // One of several workers: /metrics answers for the whole gateway (the primary sums them).
  if (cluster.isWorker) shareMetrics(metrics.registry);
  const ops = registerOps(app, config.metrics, {
    readiness: health,
    metrics,
    log,
    metricsText: cluster.isWorker ? clusterMetrics : undefined,
    cors: (origin) => states.current.cors.linesFor(origin),
  });
  registerDiscovery(app, () => states.current);
  registerOpenApi(app, () => states.current);
  // The streamed routes' client (request/stream.ts); its own undici agent, like the chains' pools
  // with a connect timeout of at most 3 s.
  void app.register(replyFrom, {
    undici: { connections: STREAM_CONNECTIONS, pipelining: 1, connect: { timeout: 3_000 } },
    disableRequestLogging: true,
  });

  const handler = makeHandler(
    () => states.current,
    () => closing,
  );
  handlerRef.current = handler;
  app.route({ method: METHODS, url: '*', exposeHeadRoute: false, handler });
  app.setNotFoundHandler(handler);
  app.setErrorHandler((err: Error & { code?: string }, request, reply) => {
    // A body with a malformed Content-Type fails before any handler; no route reads bodies, so
    // the pipeline answers (405 for a POST) rather than a 500.
    if (err.code?.startsWith('FST_ERR_CTP')) return handler(request, reply);
    log.error({ reqId: request.id, err }, 'unhandled error');
    let ctx = request.ctx;
    if (ctx === null) {
      ctx = new RequestContext(request.id, 0);
      ctx.cors = states.current.cors.linesFor(request.headers.origin);
    }
    sendError(ctx, reply, 'INTERNAL');
    finish(states.current, ctx, request.method, request.url);
    return reply;
  });

  let stopProbing: (() => void) | undefined;
  let stopHeadPolls: (() => void) | undefined;
  let pruning: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    stopProbing = startProbing(
      () => [...states.current.chains.values(), ...states.current.services.values()],
      config.health.probeIntervalMs,
      config.health.probeTimeoutMs,
    );
    stopHeadPolls = startHeadPolls(
      () => states.current.chains.values(),
      resources.now,
      (chain, outcome) => metrics.headPoll(chain, outcome),
    );
    await waitForRedis();
    // Run-time keys are read before the first request, so a restart never refuses a valid key.
    await resources.start();
    if (config.usage.enabled) {
      const prune = () =>
        void pruneUsage().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not prune old usage rows'));
      pruning = setInterval(prune, USAGE_PRUNE_MS).unref();
    }
    if (admin) {
      // An admin port that cannot be had stops the start: a gateway without its admin API would
      // sell keys nobody can manage. The message says which address.
      const { host, port } = config.admin;
      try {
        await admin.listen({ host, port });
      } catch (err) {
        throw new Error(`admin API: cannot listen on ${host}:${port}: ${(err as Error).message}`, { cause: err });
      }
      const address = admin.server.address();
      const shown =
        typeof address === 'object' && address !== null
          ? `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
          : `${host}:${port}`;
      adminUrl = `http://${shown}/admin/v1`;
      log.info({ url: adminUrl }, 'admin API listening');
    }
  });
  const waitForRedis = async () => {
    if (!redis || redis.status === 'ready') return;
    // Give Redis a moment to connect before the first request, so a gateway that starts next to
    // a healthy Redis does not begin by failing open. A Redis that is down does not stop the start.
    const ready = await Promise.race([
      new Promise<boolean>((r) => redis.once('ready', () => r(true))),
      new Promise<boolean>((r) => setTimeout(r, REDIS_STARTUP_WAIT_MS, false).unref()),
    ]);
    if (!ready) log.warn('Redis is not reachable yet; serving with redis.onError until it is');
  };
  app.addHook('onClose', async () => {
    stopProbing?.();
    stopHeadPolls?.();
    if (pruning) clearInterval(pruning);
    await admin?.close();
    await states.close();
    await resources.close();
  });
  return app;
}
