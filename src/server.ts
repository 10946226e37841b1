// buildServer(config): registers everything and never listens, so tests drive it with
// app.inject() or listen on port 0, and the CLI decides where to listen.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { KeyRing } from './auth/keys.js';
import type { Config } from './config/schema.js';
import { makeHandler, newRequestInfo, sendError, type Chain, type GatewayState, type RequestInfo } from './gateway.js';
import { RedisCacheTier } from './cache/redis-tier.js';
import { ResponseCache } from './cache/response-cache.js';
import { ThrottledWarning } from './observability/throttled-log.js';
import { MemoryQuotaStore } from './quota/memory.js';
import { RedisQuotaStore } from './quota/redis.js';
import { QuotaStep } from './quota/step.js';
import type { QuotaStore } from './quota/types.js';
import { createRedis, type RedisClient } from './redis/client.js';
import { Resolver } from './routes/resolver.js';
import { ChainUpstreams } from './upstream/client.js';

declare module 'fastify' {
  interface FastifyRequest {
    info: RequestInfo;
  }
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** How long start-up waits for Redis to connect before serving without it. */
const REDIS_STARTUP_WAIT_MS = 2_000;

export interface ServerDeps {
  /** Clock for everything time-based (ms since the epoch). */
  now?: () => number;
  /** A quota store to use instead of the one the config implies (tests). */
  quotaStore?: QuotaStore;
}

function buildChains(config: Config, now: () => number): Map<string, Chain> {
  const chains = new Map<string, Chain>();
  for (const [id, chain] of Object.entries(config.chains)) {
    chains.set(id, { id, name: chain.name, upstreams: new ChainUpstreams(chain, now) });
  }
  return chains;
}

export function buildServer(config: Config, deps: ServerDeps = {}): FastifyInstance {
  const now = deps.now ?? Date.now;

  const app = Fastify({
    logger: {
      level: config.log.level,
      // Keys never reach a log line: the query is not logged, and these paths are redacted
      // wherever a header object is logged.
      redact: ['req.headers.authorization', 'headers.authorization', 'req.query.apikey'],
    },
    // fastify's two lines per request are replaced by the one access-log line below.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Explorer data is read-only; request bodies are never read.
    bodyLimit: 1024,
    return503OnClosing: true,
  });

  const redis: RedisClient | undefined = config.redis && !deps.quotaStore ? createRedis(config.redis) : undefined;
  redis?.on('error', () => {
    // Connection errors surface as failed commands, handled (and logged, rate-limited) by the
    // quota step; ioredis keeps reconnecting.
  });
  const store = deps.quotaStore ?? (redis && config.redis ? new RedisQuotaStore(redis, config.redis.keyPrefix) : new MemoryQuotaStore());
  const cacheWarning = new ThrottledWarning(app.log, 'shared cache tier failed; treating as a miss', now);
  const sharedTier =
    redis && config.redis ? new RedisCacheTier(redis, config.redis.keyPrefix, (err) => cacheWarning.warn(err)) : undefined;
  const chains = buildChains(config, now);
  const state: GatewayState = {
    config,
    keys: new KeyRing(config),
    chains,
    resolver: new Resolver(chains),
    quota: new QuotaStep(store, app.log, now),
    cache: new ResponseCache({ maxBytes: config.cache.maxBytes, staleSeconds: config.cache.staleSeconds, now, shared: sharedTier }),
    now,
    onQuotaError: config.redis?.onError ?? 'open',
  };

  if (redis) {
    // Give Redis a moment to connect before the first request, so a gateway that starts next to a
    // healthy Redis does not begin by failing open. A Redis that is down does not stop the start.
    app.addHook('onReady', async () => {
      if (redis.status === 'ready') return;
      const ready = await Promise.race([
        new Promise<boolean>((r) => redis.once('ready', () => r(true))),
        new Promise<boolean>((r) => setTimeout(r, REDIS_STARTUP_WAIT_MS, false).unref()),
      ]);
      if (!ready) app.log.warn('Redis is not reachable yet; serving with redis.onError until it is');
    });
  }

  app.decorateRequest('info', null as unknown as RequestInfo);
  app.addHook('onRequest', (request, _reply, done) => {
    request.info = newRequestInfo();
    done();
  });

  // Bodies are not part of any route; accept and ignore them so a POST gets its 405, not a parse error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  app.setErrorHandler((err, request, reply) => {
    request.log.error({ err }, 'unhandled error');
    return sendError(reply, 'INTERNAL', request.info?.route?.startsWith('legacy.') ?? false);
  });

  if (config.log.requests) {
    app.addHook('onResponse', (request, reply, done) => {
      const i = request.info;
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?', 1)[0],
          status: reply.statusCode,
          chain: i.chainId,
          route: i.route,
          key: i.keyName,
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

  app.route({ method: METHODS, url: '*', exposeHeadRoute: false, handler: makeHandler(() => state) });

  app.addHook('onClose', async () => {
    await Promise.all([...state.chains.values()].map((c) => c.upstreams.close()));
    await store.close();
    if (redis) await redis.quit().catch(() => redis.disconnect());
  });
  return app;
}
