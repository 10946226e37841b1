// buildServer(config): registers everything and never listens, so tests drive it with
// app.inject() or listen on port 0, and the CLI decides where to listen. What lives as long as
// the process (Redis, quota store, cache, metrics) is made here once; what a configuration
// describes (keys, plans, costs, chains, TTLs) is a GatewayState that reload() replaces.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino, type Logger } from 'pino';
import { KeyRing } from './auth/keys.js';
import { RedisCacheTier } from './cache/redis-tier.js';
import { ResponseCache } from './cache/response-cache.js';
import type { Config } from './config/schema.js';
import { countRequest, JSON_TYPE, makeHandler, newRequestInfo, sendError, type Chain, type GatewayState, type RequestInfo } from './gateway.js';
import { readiness, startProbing, type Readiness } from './observability/health.js';
import { Metrics } from './observability/metrics.js';
import { decimal } from './http/headers.js';
import { ThrottledWarning } from './observability/throttled-log.js';
import { MemoryQuotaStore } from './quota/memory.js';
import { RedisQuotaStore } from './quota/redis.js';
import { QuotaStep } from './quota/step.js';
import type { QuotaStore } from './quota/types.js';
import { createRedis, type RedisClient } from './redis/client.js';
import { Resolver } from './routes/resolver.js';
import { ChainUpstreams } from './upstream/client.js';

export interface GatewayControl {
  /** The state new requests see. */
  state(): GatewayState;
  /** Swaps in a new configuration for new requests; returns what it could not apply without a restart. */
  reload(config: Config): string[];
  readiness(): Readiness;
  metrics: Metrics;
  /** The gateway's logger (fastify itself runs without one). */
  log: Logger;
}

declare module 'fastify' {
  interface FastifyRequest {
    info: RequestInfo;
  }
  interface FastifyInstance {
    gateway: GatewayControl;
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * Request ids: a random prefix per process and a counter, unique across processes and restarts
 * like a UUID but without drawing randomness per request.
 */
const REQUEST_ID_PREFIX = `${randomUUID().replaceAll('-', '').slice(0, 16)}-`;
let requestCounter = 0;
const nextRequestId = (): string => REQUEST_ID_PREFIX + decimal(++requestCounter);
/** After a reload, a retired chain's pool stays open this long past its timeoutMs. */
const RETIRED_POOL_GRACE_MS = 5_000;
/** How long start-up waits for Redis to connect before serving without it. */
const REDIS_STARTUP_WAIT_MS = 2_000;

export interface ServerDeps {
  /** Clock for everything time-based (ms since the epoch). */
  now?: () => number;
  /** A quota store to use instead of the one the config implies (tests). */
  quotaStore?: QuotaStore;
  /** Where log lines go instead of stdout (tests, benchmarks). */
  logStream?: { write(line: string): void };
}

/** Chains of a new configuration; a chain whose settings did not change keeps its pools. */
function buildChains(config: Config, now: () => number, previous?: Map<string, Chain>): { chains: Map<string, Chain>; retired: Chain[] } {
  const chains = new Map<string, Chain>();
  for (const [id, settings] of Object.entries(config.chains)) {
    const old = previous?.get(id);
    const fingerprint = JSON.stringify(settings);
    chains.set(id, old && old.fingerprint === fingerprint ? { ...old, name: settings.name } : { id, name: settings.name, fingerprint, upstreams: new ChainUpstreams(settings, now) });
  }
  const retired = [...(previous?.values() ?? [])].filter((c) => chains.get(c.id)?.upstreams !== c.upstreams);
  return { chains, retired };
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function buildServer(config: Config, deps: ServerDeps = {}): FastifyInstance {
  const now = deps.now ?? Date.now;

  // frameworkErrors is given before the handler exists; it reaches it through this reference.
  const handlerRef: { current?: ReturnType<typeof makeHandler> } = {};
  // The gateway's own logger. fastify runs without one: with a logger, fastify makes a child
  // logger and adds two response listeners per request (measurable on a cache hit), for lines
  // this gateway does not write. Keys never reach a log line: the access log carries the path
  // without its query, and these paths are redacted wherever a request or headers are logged.
  const loggerOptions = { level: config.log.level, redact: ['req.headers.authorization', 'headers.authorization', 'req.query.apikey', 'req.url'] };
  const log: Logger = deps.logStream ? pino(loggerOptions, deps.logStream) : pino(loggerOptions);
  const app = Fastify({
    logger: false,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
    },
    // Explorer data is read-only; request bodies are never read.
    bodyLimit: 1024,
    // A path the router cannot decode (`%zz`) goes to the pipeline, which answers 404 or 422
    // with the contract's bodies instead of fastify's own 400.
    frameworkErrors: (err, request, reply) => {
      if (err.code === 'FST_ERR_BAD_URL' && handlerRef.current) return void handlerRef.current(request, reply);
      return void (reply as FastifyReply).code(400).header('content-type', JSON_TYPE).send('{"message":"Bad request"}');
    },
    return503OnClosing: true,
  });

  // Process-lifetime parts.
  const redis: RedisClient | undefined = config.redis && !deps.quotaStore ? createRedis(config.redis) : undefined;
  redis?.on('error', () => {
    // Connection errors surface as failed commands, handled and logged (rate-limited) by the
    // quota step and the cache tier; ioredis keeps reconnecting.
  });
  const store = deps.quotaStore ?? (redis && config.redis ? new RedisQuotaStore(redis, config.redis.keyPrefix) : new MemoryQuotaStore());
  const quota = new QuotaStep(store, log, now);
  const cacheWarning = new ThrottledWarning(log, 'shared cache tier failed; treating as a miss', now);
  const sharedTier = redis && config.redis ? new RedisCacheTier(redis, config.redis.keyPrefix, (err) => cacheWarning.warn(err)) : undefined;
  const newCache = (c: Config) => new ResponseCache({ maxBytes: c.cache.maxBytes, staleSeconds: c.cache.staleSeconds, now, shared: sharedTier });
  let cache = newCache(config);
  const metrics = new Metrics(() => ({
    cache: () => ({ ...cache.counters, bytes: cache.bytes, entries: cache.entries }),
    quotaStoreFailures: () => quota.failures,
    cacheStoreFailures: () => sharedTier?.failures ?? 0,
  }));

  const makeState = (c: Config, previous?: GatewayState): { state: GatewayState; retired: Chain[] } => {
    const { chains, retired } = buildChains(c, now, previous?.chains);
    const state: GatewayState = {
      config: c,
      keys: new KeyRing(c),
      chains,
      resolver: new Resolver(chains, c),
      quota,
      cache,
      now,
      onQuotaError: config.redis?.onError ?? 'open',
      metrics,
      log,
    };
    return { state, retired };
  };
  let state = makeState(config).state;
  /** Pools of chains a reload changed or removed, waiting to be closed. */
  const retiring = new Map<NodeJS.Timeout, Chain>();

  const reload = (next: Config): string[] => {
    const notApplied: string[] = [];
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (!same(next.server, state.config.server)) notApplied.push('server (host, port, watchConfig, shutdownTimeoutMs)');
    if (!same(next.redis, state.config.redis)) notApplied.push('redis');
    if (!same(next.metrics, state.config.metrics)) notApplied.push('metrics');
    if (!same(next.health, state.config.health)) notApplied.push('health');
    if (next.log.requests && !config.log.requests) notApplied.push('log.requests (turning request lines on)');
    if (next.cache.maxBytes !== state.config.cache.maxBytes || next.cache.staleSeconds !== state.config.cache.staleSeconds) {
      cache = newCache(next); // a new budget or stale window starts an empty in-process tier
    }
    log.level = next.log.level;
    const { state: nextState, retired } = makeState(next, state);
    state = nextState;
    // Requests in flight keep the old state, and may not have reached their pool yet (waiting
    // on a quota decision or the shared tier): a retired pool closes once they have had time to.
    for (const c of retired) {
      const timer = setTimeout(() => {
        retiring.delete(timer);
        void c.upstreams.close();
      }, c.upstreams.timeoutMs + RETIRED_POOL_GRACE_MS);
      timer.unref();
      retiring.set(timer, c);
    }
    return notApplied;
  };

  app.decorate('gateway', { state: () => state, reload, readiness: () => readiness(state, redis), metrics, log });
  // Set by the gateway handler (no onRequest hook: every hook costs on the hot path).
  app.decorateRequest('info', null as unknown as RequestInfo);

  // Bodies are not part of any route; accept and ignore them so a POST gets its 405, not a parse error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  app.setErrorHandler((err: Error & { code?: string }, request, reply) => {
    // A body with a malformed Content-Type fails before any handler; no route reads bodies, so
    // the pipeline answers (405 for a POST) rather than a 500.
    if (err.code?.startsWith('FST_ERR_CTP')) return handler(request, reply);
    log.error({ reqId: request.id, err }, 'unhandled error');
    request.info ??= newRequestInfo();
    sendError(reply, 'INTERNAL', request.info.route?.startsWith('legacy.') ?? false);
    countRequest(metrics, request.info, 500);
    return reply;
  });

  // One access-log line per request, written when the answer is sent. Without log.requests the
  // hook is not registered at all (like nginx's access_log off, for peak throughput); a reload
  // may turn the lines off, but turning them on needs a restart.
  if (config.log.requests) {
    app.addHook('onResponse', (request, reply, done) => {
      if (!state.config.log.requests) return done();
      const i = request.info ?? newRequestInfo();
      log.info(
        {
          reqId: request.id,
          method: request.method,
          path: request.url.split('?', 1)[0],
          status: reply.statusCode,
          chain: i.chainId,
          route: i.route,
          key: i.key?.name,
          cache: i.cache,
          upstream: i.upstream,
          upstreamMs: i.upstreamMs,
          ms: Math.round(reply.elapsedTime * 1000) / 1000,
        },
        'request',
      );
      done();
    });
  }

  // Operations endpoints: no API key.
  const healthz = (_req: FastifyRequest, reply: FastifyReply) => reply.header('content-type', JSON_TYPE).send('{"status":"ok"}');
  const readyz = (_req: FastifyRequest, reply: FastifyReply) => {
    const r = readiness(state, redis);
    return reply
      .code(r.ready ? 200 : 503)
      .header('content-type', JSON_TYPE)
      .send(JSON.stringify({ status: r.ready ? 'ready' : 'not ready', ...r.checks }));
  };
  const metricsRoute = async (req: FastifyRequest, reply: FastifyReply) => {
    const token = config.metrics.token;
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      return reply.code(401).header('www-authenticate', 'Bearer').header('content-type', JSON_TYPE).send('{"message":"Metrics token required"}');
    }
    return reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics());
  };
  app.get('/healthz', healthz);
  app.get('/readyz', readyz);

  if (config.metrics.enabled && config.metrics.port === undefined) app.get('/metrics', metricsRoute);
  if (config.metrics.enabled && config.metrics.port !== undefined) {
    // A separate listener (typically loopback) keeps /metrics off the public port.
    const admin = Fastify({ logger: false });
    admin.get('/metrics', metricsRoute);
    admin.get('/healthz', healthz);
    admin.get('/readyz', readyz);
    const { port, host } = config.metrics;
    // A metrics port that cannot be had does not stop the gateway from serving; it is logged.
    app.addHook('onListen', async () => {
      await admin.listen({ port, host }).catch((err: unknown) => log.error({ err, host, port }, 'metrics listener failed; serving without /metrics'));
    });
    app.addHook('onClose', async () => {
      await admin.close();
    });
  }

  const handler = makeHandler(() => state);
  handlerRef.current = handler;
  app.route({ method: METHODS, url: '*', exposeHeadRoute: false, handler });
  // Methods the router does not list (TRACE, PROPFIND, ...) get the pipeline's 404 / 405 too.
  app.setNotFoundHandler(handler);

  let stopProbing: (() => void) | undefined;
  app.addHook('onReady', async () => {
    stopProbing = startProbing(() => state, config.health.probeIntervalMs, config.health.probeTimeoutMs);
    if (!redis || redis.status === 'ready') return;
    // Give Redis a moment to connect before the first request, so a gateway that starts next to
    // a healthy Redis does not begin by failing open. A Redis that is down does not stop the start.
    const ready = await Promise.race([
      new Promise<boolean>((r) => redis.once('ready', () => r(true))),
      new Promise<boolean>((r) => setTimeout(r, REDIS_STARTUP_WAIT_MS, false).unref()),
    ]);
    if (!ready) log.warn('Redis is not reachable yet; serving with redis.onError until it is');
  });

  app.addHook('onClose', async () => {
    stopProbing?.();
    for (const timer of retiring.keys()) clearTimeout(timer);
    await Promise.all([...state.chains.values(), ...retiring.values()].map((c) => c.upstreams.close()));
    await store.close();
    if (redis) await redis.quit().catch(() => redis.disconnect());
  });
  return app;
}
