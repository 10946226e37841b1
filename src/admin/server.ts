// The admin API, under /admin/v1 on a listener of its own (loopback by default: Kong moved its
// Admin API there after many were found open on the internet): keys created, changed, topped
// up, rolled and revoked at run time; usage rows; plans; the audit trail. Every call needs
// `Authorization: Bearer <admin.token>`, compared in constant time; an address that keeps
// failing is refused for a while (rate-limiter-flexible, the stack's limiter, in memory: a guard,
// not a billing decision, so its own clock serves), but only its wrong or missing tokens: the
// right one is always served, so that no local process can lock the operator out. Every write is
// one audit entry in the store and one log line. Only the API's OpenAPI document (openapi.ts) is
// served without the token: it holds no data, only the shape of the API, and tools that read it
// (Swagger UI, client generators) then need no secret.
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { AdminToken } from '../config/schema.js';
import { JSON_TYPE } from '../http/respond.js';
import type { AdminDeps } from './context.js';
import { AdminError } from './errors.js';
import { adminOpenApi } from './openapi.js';
import { registerKeyRoutes } from './routes/keys.js';
import { registerObjectRoutes } from './routes/objects.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { WebhookAdmin } from './webhooks.js';
import { registerRecordRoutes } from './routes/records.js';
import { AdminService } from './service.js';
import { ADMIN_PREFIX, ADMIN_ROUTES, at, routeUrl } from './surface.js';
import { storeUnavailable } from '../store/faults.js';

/** Failed authentications an address may make per minute before it is refused for five. */
const FAILED_AUTH_POINTS = 10;
const FAILED_AUTH_WINDOW_S = 60;
const LOCKOUT_S = 300;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * The token the header names, or undefined. Every token is compared, in constant time, as its
 * sha256 (equal lengths for timingSafeEqual, whatever was sent): how long it takes tells neither
 * which token matched nor how much of one.
 */
function tokenOf(header: string | undefined, tokens: readonly { token: AdminToken; digest: Buffer }[]): AdminToken | undefined {
  const given = digest(header ?? '');
  let found: AdminToken | undefined;
  for (const t of tokens) if (timingSafeEqual(given, t.digest) && found === undefined) found = t.token;
  return found;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin token the call was made with (admin/server.ts); null on the open routes. */
    adminToken: AdminToken | null;
  }
}

export function buildAdminServer(tokens: readonly AdminToken[], deps: AdminDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  // An empty body sent as `application/json` is no body (a DELETE from a client that sets the
  // type on every call): fastify's own JSON parser refuses it (FST_ERR_CTP_EMPTY_JSON_BODY, a
  // 400). Anything else goes to that parser, prototype-poisoning checks and all
  // (https://fastify.dev/docs/latest/Reference/ContentTypeParser/, getDefaultJsonParser).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body.length === 0) return done(null, undefined);
    void json(request, body, done);
  });
  const service = new AdminService(deps);
  const failures = new RateLimiterMemory({ points: FAILED_AUTH_POINTS, duration: FAILED_AUTH_WINDOW_S, blockDuration: LOCKOUT_S });

  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.code(status).header('content-type', JSON_TYPE).header('cache-control', 'no-store').send(JSON.stringify(body));
  const refuse = (reply: FastifyReply, err: AdminError) => send(reply, err.status, { message: err.message, ...err.extra });

  /** The routes served without the token (surface.ts `open`), as fastify names them. */
  const open = new Set(
    Object.values(ADMIN_ROUTES)
      .filter((spec) => 'open' in spec && spec.open)
      .map((spec) => ADMIN_PREFIX + routeUrl(spec.path)),
  );
  /** The routes a `read` token may call, as fastify names them (surface.ts `scope`). */
  const reads = new Set(
    Object.values(ADMIN_ROUTES)
      .filter((spec) => spec.scope === 'read')
      .map((spec) => `${spec.method} ${ADMIN_PREFIX}${routeUrl(spec.path)}`),
  );
  const known = tokens.map((token) => ({ token, digest: digest(`Bearer ${token.token}`) }));
  app.decorateRequest('adminToken', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (open.has(request.routeOptions.url ?? '')) return undefined;
    // The token first: the right one is served whatever the address did before (a lockout that
    // refused it would let any local process lock the operator's CLI out for five minutes).
    const token = tokenOf(request.headers.authorization, known);
    if (token !== undefined) {
      request.adminToken = token;
      // A route that does not exist is a 404 for any token (the not-found handler).
      const route = request.routeOptions.url;
      if (token.scope === 'read' && route !== undefined && !reads.has(`${request.method} ${route}`)) {
        return refuse(
          reply,
          new AdminError('READ_ONLY_TOKEN', `the admin token "${token.name}" may read only (scope read): ask for a write token`),
        );
      }
      return undefined;
    }
    // A failure is counted; the first FAILED_AUTH_POINTS in a window resolve (401), the next one
    // rejects and blocks the address for blockDuration, and so does every one while it is blocked
    // (https://github.com/animir/node-rate-limiter-flexible/wiki/Options#blockduration).
    const locked = await failures.consume(request.ip).then(
      () => undefined,
      (res: unknown) => {
        if (res instanceof RateLimiterRes) return res;
        throw res;
      },
    );
    if (locked !== undefined) {
      return refuse(
        reply.header('retry-after', String(Math.max(1, Math.ceil(locked.msBeforeNext / 1000)))),
        new AdminError('AUTH_LOCKED', 'Too many failed admin authentications from this address; try again later'),
      );
    }
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
    if (storeUnavailable(err)) {
      deps.log.error({ err: err.message }, 'admin API: the store did not answer');
      reply.header('retry-after', '5');
      return refuse(
        reply,
        new AdminError('STORE_UNAVAILABLE', 'The store is not answering; try again (a GET shows whether the change was made)'),
      );
    }
    deps.log.error({ err }, 'admin API error');
    return refuse(reply, new AdminError('INTERNAL', 'Internal error'));
  });
  app.setNotFoundHandler((_request, reply) => refuse(reply, new AdminError('NO_SUCH_ROUTE', 'No such admin route')));

  const openapi = JSON.stringify(adminOpenApi());
  void app.register(
    (api, _opts, done) => {
      registerKeyRoutes(api, service, send);
      registerRecordRoutes(api, service, send);
      registerObjectRoutes(api, service, send);
      registerWebhookRoutes(api, new WebhookAdmin(deps), send);
      api.route({
        ...at('openapi'),
        handler: (_request, reply) =>
          reply
            .code(ADMIN_ROUTES.openapi.answer.status)
            .header('content-type', JSON_TYPE)
            .header('cache-control', 'no-store')
            .send(openapi),
      });
      done();
    },
    { prefix: ADMIN_PREFIX },
  );
  return app;
}
