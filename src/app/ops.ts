// The operations endpoints, without an API key. The public listener answers only what a load
// balancer needs: /healthz (the process answers) and /readyz (it can serve), bare. What an
// operator needs, and nobody else should see (key names and their spend, upstream names,
// Redis and chain states), is on the operations listener of `metrics.port`, on 127.0.0.1 by
// default as Kong's status listener and APISIX's are: /metrics (Prometheus), /healthz, and
// /readyz with every check. Without `metrics.port` there is no operations listener.
import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { corsOnReply, JSON_TYPE } from '../http/respond.js';
import type { Readiness } from '../observability/health.js';
import type { Metrics } from '../observability/metrics.js';

export interface OpsSources {
  readiness(): Readiness;
  metrics: Metrics;
  log: Logger;
  /** The whole gateway's metrics when this process is one of several workers (process/primary.ts); else this registry's. */
  metricsText?: (() => Promise<string>) | undefined;
  /**
   * The CORS lines for a request's Origin (http/cors.ts), on the public listener's /healthz and
   * /readyz only: a browser page may check the gateway; the operations listener never answers CORS.
   */
  cors?: ((origin: string | undefined) => readonly string[] | undefined) | undefined;
}

/** Compared in constant time, so that the token cannot be guessed from response times. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function registerOps(app: FastifyInstance, config: Config['metrics'], sources: OpsSources): { url(): string | undefined } {
  const healthz = (_req: FastifyRequest, reply: FastifyReply) => reply.header('content-type', JSON_TYPE).send('{"status":"ok"}');
  const readyz = (details: boolean) => (_req: FastifyRequest, reply: FastifyReply) => {
    const r = sources.readiness();
    const status = r.ready ? 'ready' : 'not ready';
    return reply
      .code(r.ready ? 200 : 503)
      .header('content-type', JSON_TYPE)
      .send(JSON.stringify(details ? { status, ...r.checks } : { status }));
  };
  const metrics = async (req: FastifyRequest, reply: FastifyReply) => {
    if (config.token !== undefined && !bearerMatches(req.headers.authorization, config.token)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .header('content-type', JSON_TYPE)
        .send('{"message":"Metrics token required"}');
    }
    const { registry } = sources.metrics;
    const text = sources.metricsText ? await sources.metricsText() : await registry.metrics();
    return reply.header('content-type', registry.contentType).send(text);
  };
  const withCors = (handler: (req: FastifyRequest, reply: FastifyReply) => FastifyReply) => (req: FastifyRequest, reply: FastifyReply) => {
    corsOnReply(reply, sources.cors?.(req.headers.origin));
    return handler(req, reply);
  };
  app.get('/healthz', withCors(healthz));
  app.get('/readyz', withCors(readyz(false)));
  if (config.port === undefined) return { url: () => undefined };
  const own = Fastify({ logger: false });
  if (config.enabled) own.get('/metrics', metrics);
  own.get('/healthz', healthz);
  own.get('/readyz', readyz(true));
  const { port, host } = config;
  let url: string | undefined;
  // Listening before the public listener (as the admin API does, app/server.ts), so its URL is
  // known once the gateway listens. A port that cannot be had stops the start, as the admin
  // API's does: a gateway serving without /metrics would go unwatched, and a supervisor would
  // see it healthy. The message says which listener and which address.
  app.addHook('onReady', async () => {
    try {
      url = await own.listen({ port, host });
    } catch (err) {
      throw new Error(`operations listener (metrics.port): cannot listen on ${host}:${port}: ${(err as Error).message}`, { cause: err });
    }
  });
  app.addHook('onClose', async () => {
    await own.close();
  });
  return { url: () => url };
}
