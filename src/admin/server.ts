// The admin API, under /admin/v1 on a listener of its own (loopback by default: Kong moved its
// Admin API there after many were found open on the internet): keys created, changed, topped
// up, rolled and revoked at run time; usage rows; plans; the audit trail. Every call needs
// `Authorization: Bearer <admin.token>`, compared in constant time; an address that keeps
// failing is refused for a while (rate-limiter-flexible, the stack's limiter, in memory: a guard,
// not a billing decision, so its own clock serves). Every write is one audit entry in the store
// and one log line.
import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { JSON_TYPE } from '../http/respond.js';
import type { AdminDeps } from './context.js';
import { AdminError } from './errors.js';
import { registerKeyRoutes } from './routes/keys.js';
import { registerRecordRoutes } from './routes/records.js';
import { AdminService } from './service.js';

/** Failed authentications an address may make per minute before it is refused for five. */
const FAILED_AUTH_POINTS = 10;

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function buildAdminServer(token: string, deps: AdminDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  const service = new AdminService(deps);
  const failures = new RateLimiterMemory({ points: FAILED_AUTH_POINTS, duration: 60, blockDuration: 300 });

  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).header('content-type', JSON_TYPE).header('cache-control', 'no-store').send(JSON.stringify(body));
  const refuse = (reply: FastifyReply, err: AdminError) => send(reply, err.status, { message: err.message, ...err.extra });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const seen = await failures.get(request.ip);
    if (seen !== null && seen.consumedPoints > FAILED_AUTH_POINTS) {
      return refuse(
        reply.header('retry-after', String(Math.ceil(seen.msBeforeNext / 1000))),
        new AdminError('AUTH_LOCKED', 'Too many failed admin authentications from this address; try again later'),
      );
    }
    if (tokenMatches(request.headers.authorization, token)) return undefined;
    // Past the points, consume() rejects and blocks the address for blockDuration.
    await failures.consume(request.ip).catch(() => undefined);
    const missing = request.headers.authorization === undefined;
    return refuse(
      reply.header('www-authenticate', 'Bearer'),
      new AdminError(missing ? 'TOKEN_REQUIRED' : 'INVALID_TOKEN', missing ? 'Admin token required' : 'Invalid admin token'),
    );
  });

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, _request, reply) => {
    if (err instanceof AdminError) return refuse(reply, err);
    // fastify's own: a body that is not JSON, too large, of another type.
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return refuse(reply, new AdminError('BAD_REQUEST', err.message, {}, err.statusCode));
    }
    deps.log.error({ err }, 'admin API error');
    return refuse(reply, new AdminError('INTERNAL', 'Internal error'));
  });
  app.setNotFoundHandler((_request, reply) => refuse(reply, new AdminError('NO_SUCH_ROUTE', 'No such admin route')));

  void app.register(
    (api, _opts, done) => {
      registerKeyRoutes(api, service, send);
      registerRecordRoutes(api, service, send);
      done();
    },
    { prefix: '/admin/v1' },
  );
  return app;
}
