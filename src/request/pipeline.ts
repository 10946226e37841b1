// The request pipeline, in the contract's order of checks (section 4): route and chain, key,
// rate limit, validation, credits, cache, upstream. Each step is a few lines; the handler reads
// top to bottom as that list, and every way out goes through send.ts and finish().
import type { FastifyReply, FastifyRequest } from 'fastify';
import { conflictMessage, extractKey, type KeySource } from '../auth/credentials.js';
import type { ApiKey, KeyRing } from '../keys/ring.js';
import { addressAllowed } from '../keys/terms.js';
import { takePathKey } from '../auth/path-key.js';
import { takeApiKeys } from '../auth/query-key.js';
import { cacheKey } from '../cache/policy.js';
import type { ErrorCode } from '../http/errors.js';
import { H_SCAM } from '../http/headers.js';
import { closeUnread } from '../http/connections.js';
import { sendEntry, sendError, sendInvalid, sendJson, sendLegacyInvalid, sendPreflight } from './send.js';
import type { QuotaDecision } from '../quota/types.js';
import { SERVICES_SCOPE, type Route } from '../routes/resolve.js';
import { rpcStatusBody } from '../routes/service-check.js';
import { readBody } from './body.js';
import { clusterRequest } from './cluster.js';
import { SERVICE_MAX_BODY_BYTES, serviceGet, serviceMissing, servicePost, serviceTarget } from './service.js';
import type { Resolved } from '../routes/resolver.js';
import { RequestContext } from './context.js';
import { finish } from './finish.js';
import { forward } from './forward.js';
import { stream } from './stream.js';
import type { Form } from './body.js';
import { postedForm } from './form.js';
import { fillAndSend } from './fill.js';
import { lifetimeOf } from '../finality/lifetime.js';
import { proxyRequest } from './proxy.js';
import { rpcRequest } from './rpc.js';
import { formOfQuery, verifyRequest } from './verify.js';
import type { GatewayState } from './state.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The pipeline's context; null until the pipeline has seen the request (app/server.ts). */
    ctx: RequestContext | null;
  }
}

const NO_KEYS: readonly string[] = [];

export type Handler = (request: FastifyRequest, reply: FastifyReply) => undefined;

/**
 * The route handler. Neither async nor returning a promise: fastify has nothing to wait for,
 * every answer is written by send.ts. With in-process stores a cache hit is answered
 * and finished before the handler returns, without a promise; a remote quota store, the shared
 * tier or the upstream finish it later.
 */
export function makeHandler(getState: () => GatewayState, closing: () => boolean = () => false): Handler {
  return function handle(request, reply) {
    // The state is read once: a reload swaps it for new requests while this one finishes.
    const state = getState();
    const ctx = new RequestContext(request.id, state.accessLog === undefined ? 0 : performance.now());
    request.ctx = ctx;
    // A key in the target's path (`/key/<KEY>/...`) comes out before anything reads the target:
    // from here on `request.url` (fastify reads the raw request's) is the target without it, for
    // the route, the cache, what is forwarded and every log line.
    const pathKey = takePathKey(request.raw.url ?? '/');
    if (pathKey !== undefined) {
      request.raw.url = pathKey.url;
      ctx.pathKey = pathKey.key;
    }
    const origin = request.headers.origin;
    ctx.cors = state.cors.linesFor(origin);
    if (closing()) {
      sendError(ctx, reply, 'SHUTTING_DOWN');
      finish(state, ctx, request.method, request.url);
      return undefined;
    }
    // A CORS preflight (Fetch standard: OPTIONS with Origin and Access-Control-Request-Method)
    // asks whether the request may be sent; it is not one: on any path a 204 (a 405 would fail
    // every dapp's first call), no key read, nothing billed, rate-limited or forwarded; logged
    // and counted as a 204. A plain OPTIONS goes on to its 405.
    if (request.method === 'OPTIONS' && origin !== undefined && request.headers['access-control-request-method'] !== undefined) {
      sendPreflight(ctx, reply, state.cors.preflightFor(origin));
      finish(state, ctx, request.method, request.url);
      return undefined;
    }
    let pending: Promise<void> | undefined;
    try {
      pending = pipeline(state, ctx, request, reply);
    } catch (err) {
      failed(state, ctx, request, reply, err);
      return undefined;
    }
    if (pending === undefined) finish(state, ctx, request.method, request.url);
    else {
      pending.then(
        () => finish(state, ctx, request.method, request.url),
        (err: unknown) => failed(state, ctx, request, reply, err),
      );
    }
    return undefined;
  };
}

/**
 * An error before the answer goes to fastify's error handler (app/server.ts: a 500, then
 * finish); one after the answer was written can only be logged.
 */
function failed(state: GatewayState, ctx: RequestContext, request: FastifyRequest, reply: FastifyReply, err: unknown): void {
  if (!reply.sent) {
    reply.send(err instanceof Error ? err : new Error(String(err)));
    return;
  }
  state.log.error({ reqId: ctx.id, err }, 'error after the answer was sent');
  finish(state, ctx, request.method, request.url);
}

/** Steps 1 to 3; the rest follows the quota decision, at once or when the store answers. */
function pipeline(state: GatewayState, ctx: RequestContext, request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
  // 1. Route and chain (memoised per URL, with the route's cost, TTL and cache key). The query's
  // `apikey` comes out first: what follows never sees a client's key.
  const taken = takeApiKeys(request.url);
  const resolved = state.resolver.resolve(taken === undefined ? request.url : taken.url);
  const resolution = resolved.resolution;
  ctx.legacy = resolution.legacy;
  ctx.rpc = resolution.rpc === true;
  // The legacy API takes its parameters by POST too, in a form body (its document says so; ethers'
  // EtherscanProvider posts eth_call, Foundry and Hardhat post verification): read the form, then
  // resolve the request its fields make (request/form.ts).
  if (request.method === 'POST' && resolution.legacy && !(resolution.kind === 'refusal' && resolution.code === 'UNKNOWN_CHAIN')) {
    const queryKeys = taken === undefined ? NO_KEYS : taken.apikeys;
    const now = state.now();
    return postedForm(state, request, taken, (formKeys) => keyUsable(state, request, ctx.pathKey, queryKeys, formKeys, now)).then(
      (posted) => {
        if (posted === 'PAYLOAD_TOO_LARGE') return void sendError(ctx, reply, posted, unreadClose(request));
        if (typeof posted === 'string') return void sendError(ctx, reply, posted);
        if ('keyless' in posted) return void refuseKeyless(state, ctx, request, reply, queryKeys, posted.formKeys);
        return afterRoute(state, ctx, request, reply, posted.resolved, posted.apikeys, posted.form, undefined, posted.formKeys);
      },
    );
  }
  const apikeys = taken === undefined ? NO_KEYS : taken.apikeys;
  // A service's POST (a batch of names to resolve, tags to submit): its JSON body is read and
  // checked before anything is billed, so a body that is not JSON is refused as a bad parameter.
  if (request.method === 'POST' && resolution.kind === 'route' && resolution.service?.method === 'POST') {
    return readBody(request, SERVICE_MAX_BODY_BYTES).then((read) => {
      if (!read.ok) return void sendError(ctx, reply, read.reason === 'too-large' ? 'PAYLOAD_TOO_LARGE' : 'BODY_INCOMPLETE');
      if (!isJsonObject(read.body) && resolution.validation.ok) {
        const refused: Route = { ...resolution, validation: { ok: false, serviceMessage: 'invalid body: expected a JSON object' } };
        return afterRoute(state, ctx, request, reply, { ...resolved, resolution: refused, cost: 0 }, apikeys, undefined, read.body);
      }
      return afterRoute(state, ctx, request, reply, resolved, apikeys, undefined, read.body);
    });
  }
  return afterRoute(state, ctx, request, reply, resolved, apikeys, undefined);
}

/**
 * The headers of an answer sent before its request's body was read whole: the connection closes
 * after it, what is left of the body is never read (http/connections.ts, closeUnread).
 */
function unreadClose(request: FastifyRequest): { connection: 'close' } {
  closeUnread(request.raw.socket);
  return { connection: 'close' };
}

/**
 * Whether a POSTed form may be read past `rpc.maxKeylessBodyBytes`: the request names a key of
 * the gateway's, active and unexpired, and its address is not blocked (security.badKeys).
 * Whatever else the key step checks is checked once the form is read (afterRoute).
 */
function keyUsable(
  state: GatewayState,
  request: FastifyRequest,
  pathKey: string | undefined,
  queryKeys: readonly string[],
  formKeys: readonly string[],
  now: number,
): boolean {
  if (state.badKeys.blocking && state.badKeys.blockedMs(request.ip, now) > 0) return false;
  const source = extractKey(request.headers.authorization, queryKeys, formKeys, pathKey);
  if (source.kind !== 'key') return false;
  const key = state.keys.find(source.key, now);
  return key !== undefined && key.status === 'active' && (key.expiresAt === undefined || now < key.expiresAt);
}

/**
 * A POSTed form with no usable key in its first `rpc.maxKeylessBodyBytes` (nor in the header or
 * the query): the key step's refusal (a wrong key counted toward security.badKeys as there), and
 * the connection closed without reading the rest. Nothing is billed before the credit step.
 */
function refuseKeyless(
  state: GatewayState,
  ctx: RequestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  queryKeys: readonly string[],
  formKeys: readonly string[],
): void {
  const now = state.now();
  ctx.nowMs = now;
  const close = unreadClose(request);
  const blockedMs = state.badKeys.blocking ? state.badKeys.blockedMs(request.ip, now) : 0;
  if (blockedMs > 0) return sendError(ctx, reply, 'TOO_MANY_BAD_KEYS', { 'retry-after': String(Math.ceil(blockedMs / 1000)), ...close });
  const source = extractKey(request.headers.authorization, queryKeys, formKeys, ctx.pathKey);
  if (source.kind === 'conflict') return sendError(ctx, reply, 'CONFLICTING_KEYS', close, conflictMessage(source.places));
  const key = identify(ctx, source, state.keys, now);
  // keyUsable refused it, so identify() did too; NO_KEY only keeps the types honest.
  const code = typeof key === 'string' ? key : 'NO_KEY';
  if (code === 'BAD_KEY') badKeyFrom(state, request.ip, now);
  sendError(ctx, reply, code, close);
}

/** Whether a body is one JSON object, as every service POST of the document takes. */
function isJsonObject(body: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Steps 1 (what is left of it) to 3, for a resolved request target. */
function afterRoute(
  state: GatewayState,
  ctx: RequestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  resolved: Resolved,
  apikeys: readonly string[],
  form: Form | undefined,
  body?: Buffer,
  formKeys: readonly string[] = NO_KEYS,
): Promise<void> | undefined {
  const resolution = resolved.resolution;
  if (resolution.kind === 'refusal') return void sendError(ctx, reply, resolution.code);
  ctx.chainId = resolution.chainId;
  ctx.route = resolution.route;
  // A route of a service this gateway was not given: a 404 naming the setting, before any key.
  const missing = serviceMissing(state, resolution);
  if (missing !== undefined) return void sendError(ctx, reply, missing);
  const allowed = allowedMethods(resolution);
  if (!allowed.includes(request.method)) return void sendError(ctx, reply, 'METHOD_NOT_ALLOWED', { allow: allowed.join(', ') });

  // 2. Key. One clock reading serves the key's expiry, the decision and, when the store answers
  // at once, the cache.
  const now = state.now();
  ctx.nowMs = now;
  // An address blocked for wrong keys (security.badKeys, auth/bad-keys.ts) is refused whatever
  // key it sends, before any store is asked. A known key from an unblocked address pays only
  // `blocking` (a Map's size) here: the address is read and looked up only while some address is
  // blocked, and counted only on a wrong key (below).
  const badKeys = state.badKeys;
  if (badKeys.blocking) {
    const blockedMs = badKeys.blockedMs(request.ip, now);
    // RFC 9110 section 10.2.3: whole seconds, rounded up.
    if (blockedMs > 0) return void sendError(ctx, reply, 'TOO_MANY_BAD_KEYS', { 'retry-after': String(Math.ceil(blockedMs / 1000)) });
  }
  const source = extractKey(request.headers.authorization, apikeys, formKeys, ctx.pathKey);
  if (source.kind === 'conflict') return void sendError(ctx, reply, 'CONFLICTING_KEYS', undefined, conflictMessage(source.places));
  const key = authenticate(ctx, request, source, resolution, state.keys, now);
  if (typeof key === 'string') {
    // A placeholder (PLACEHOLDER_KEY) is no guess at a key: it never counts toward a block.
    if (key === 'BAD_KEY') badKeyFrom(state, request.ip, now);
    return void sendError(ctx, reply, key);
  }
  ctx.key = key;
  // The JSON-RPC endpoint: its calls are in the body, each decided on its own (request/rpc.ts).
  if (resolution.rpc) return rpcRequest(state, ctx, request, reply, key, state.chains.get(resolution.chainId)!);

  // 3. Rate limit, and credits in the same decision when the request is valid: one round trip.
  // A key's own price for the route (its deal, keys/terms.ts), for a request that is billed at all.
  const cost = key.costs === undefined || !resolution.validation.ok ? resolved.cost : (key.costs[resolution.route] ?? resolved.cost);
  const decided = state.quota.decide(key, cost, now, ctx.chainId, ctx.route);
  if (decided instanceof Promise) {
    return decided.then(
      (decision) => afterQuota(state, ctx, request, reply, resolved, decision, state.now(), form, body),
      (err: unknown) =>
        afterQuota(
          state,
          ctx,
          request,
          reply,
          resolved,
          state.quota.storeFailed(err, key, cost, now, ctx.chainId, ctx.route),
          state.now(),
          form,
          body,
        ),
    );
  }
  return afterQuota(state, ctx, request, reply, resolved, decided, now, form, body);
}

const READ_METHODS = ['GET', 'HEAD'];
const FORM_METHODS = ['GET', 'HEAD', 'POST'];
const RPC_METHODS = ['POST'];

/** RFC 9110 section 15.5.6: what a 405 lists. The legacy API takes POSTed forms, JSON-RPC and a service's writes only POST. */
function allowedMethods(route: Route): readonly string[] {
  if (route.rpc || route.service?.method === 'POST') return RPC_METHODS;
  return route.legacy ? FORM_METHODS : READ_METHODS;
}

/** Counts a wrong key from `address`; the one that blocks it is logged (one line per block, at most one per `failures` wrong keys). */
function badKeyFrom(state: GatewayState, address: string | undefined, now: number): void {
  if (!state.badKeys.failed(address, now)) return;
  const { failures, windowSeconds, blockSeconds } = state.config.security.badKeys;
  state.log.warn({ address, failures, windowSeconds, blockSeconds }, 'address blocked: too many invalid API keys');
}

/**
 * The key step: 401 without a key this gateway knows (unknown, revoked, or rolled away past its
 * grace), 503 for a key whose plan it lacks, 403 when the key may not be used here (then it is
 * still named in `ctx.identified`).
 */
function authenticate(
  ctx: RequestContext,
  request: FastifyRequest,
  source: Exclude<KeySource, { kind: 'conflict' }>,
  route: Route,
  keys: KeyRing,
  nowMs: number,
): ApiKey | ErrorCode {
  const key = identify(ctx, source, keys, nowMs);
  if (typeof key === 'string') return key;
  // The shared services under /services/ are no chain's: a key kept to some chains may use them.
  if (key.chains && route.chainId !== SERVICES_SCOPE && !key.chains.has(route.chainId)) return 'CHAIN_NOT_ALLOWED';
  // The key's own restrictions, read only for a key that has them (keys/terms.ts). The JSON-RPC
  // endpoint's route is decided per call (request/rpc.ts).
  if (key.routes && !route.rpc && !key.routes(route.route)) return 'ROUTE_NOT_ALLOWED';
  // fastify's request.ip: the socket's address, or what server.trustProxy lets X-Forwarded-For say.
  if (key.ips && !addressAllowed(key.ips, request.ip)) return 'ADDRESS_NOT_ALLOWED';
  if (key.origins) {
    const origin = request.headers.origin;
    if (origin === undefined || !key.origins.has(origin)) return 'ORIGIN_NOT_ALLOWED';
  }
  return key;
}

/** The first half of the key step: which key, and whether it is active and unexpired. */
function identify(ctx: RequestContext, source: Exclude<KeySource, { kind: 'conflict' }>, keys: KeyRing, nowMs: number): ApiKey | ErrorCode {
  if (source.kind === 'none') return 'NO_KEY';
  if (source.kind === 'bad-scheme') return 'BAD_AUTH_SCHEME';
  const key = keys.find(source.key, nowMs);
  // A key the gateway has, whose plan it lacks, is the operator's mistake: 503, not a wrong key.
  if (!key) return keys.lacksPlan(source.key) ? 'KEY_PLAN_MISSING' : source.placeholder ? 'PLACEHOLDER_KEY' : 'BAD_KEY';
  ctx.identified = key;
  if (key.status === 'unverified') return 'UNVERIFIED_KEY';
  if (key.status === 'disabled') return 'DISABLED_KEY';
  if (key.expiresAt !== undefined && nowMs >= key.expiresAt) return 'EXPIRED_KEY';
  return key;
}

/** Steps 3 (the refusals) to 7. */
function afterQuota(
  state: GatewayState,
  ctx: RequestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  resolved: Resolved,
  decision: QuotaDecision | undefined,
  now: number,
  form: Form | undefined,
  body: Buffer | undefined,
): Promise<void> | undefined {
  const route = resolved.resolution as Route;
  ctx.decision = decision;
  if (decision === undefined) {
    // The store failed: redis.onError says whether to serve (headers -1) or refuse.
    if (state.onQuotaError === 'closed') return void sendError(ctx, reply, 'QUOTA_UNAVAILABLE');
  } else if (decision.outcome === 'rate_limited') {
    // RFC 9110 section 10.2.3: whole seconds, rounded up.
    return void sendError(ctx, reply, 'RATE_LIMITED', { 'retry-after': String(Math.max(1, Math.ceil(decision.rateResetMs / 1000))) });
  }

  // 4. Validation (a v2 422 in the spec's JsonErrorResponse; legacy: HTTP 200, status "0").
  const v = route.validation;
  if (!v.ok) {
    if ('issues' in v) return void sendInvalid(ctx, reply, v.issues);
    if ('proxyBody' in v) return void sendJson(ctx, reply, 200, v.proxyBody);
    if ('serviceMessage' in v) return void sendJson(ctx, reply, 422, rpcStatusBody(3, v.serviceMessage));
    return void sendLegacyInvalid(ctx, reply, v.legacyMessage);
  }

  // 5. Credits (taken by the decision above only if enough remained).
  if (decision?.outcome === 'out_of_credits') return void sendError(ctx, reply, 'OUT_OF_CREDITS');

  // A route of the PRO API outside v2 other than an explorer's GET (request/service.ts).
  const service = route.service;
  if (service !== undefined && !(service.name === 'explorer' && service.method === 'GET')) {
    const target = serviceTarget(state, route);
    if (target === undefined) return clusterRequest(state, ctx, reply, service.cluster);
    if (service.method === 'POST') return servicePost(state, ctx, reply, target, v.upstreamPath, body ?? Buffer.alloc(0));
    return serviceGet(state, ctx, reply, target, v.upstreamPath, resolved, now);
  }
  // Normalised before it is forwarded or keyed: instances read only `true` as true
  // (docs/blockscout.md), so anything else means what no header means, and one client cannot
  // fill the cache with a copy per odd value.
  const showScam = request.headers[H_SCAM] === 'true' ? 'true' : undefined;
  const chain = state.chains.get(route.chainId)!;
  // Etherscan's proxy module: the JSON-RPC call it names, sharing its cache entries (request/proxy.ts).
  if (route.call !== undefined) return proxyRequest(state, ctx, reply, chain, route, resolved, now);
  // Contract verification: forwarded once with its form, never kept (request/verify.ts).
  if (route.write) return verifyRequest(state, ctx, reply, chain, v.upstreamPath, form ?? formOfQuery(request.url));
  // CSV exports go straight through, never kept (request/stream.ts).
  if (route.stream) return stream(state, ctx, request, reply, chain, v.upstreamPath, showScam);

  // 6. Cache: a fresh in-process entry is answered at once.
  const entryKey = showScam === undefined ? resolved.cacheKey : cacheKey(chain.id, v.upstreamPath, showScam);
  const fresh = state.cache.peek(entryKey, resolved.ttlSeconds, now);
  if (fresh) return void sendEntry(ctx, reply, fresh, 'HIT', now, chain.head.number);

  // 7. Stale, shared tier, or the upstream with identical misses coalesced; a final answer kept
  // for cache.finalTtlSeconds (finality/lifetime.ts).
  const fetch = () => forward(chain, v.upstreamPath, ctx.id, showScam, state.metrics, state.upstreamWarnings);
  const lifetime = lifetimeOf(chain.head, state.config.cache.finalTtlSeconds, {
    kind: 'path',
    route: route.route,
    upstreamPath: v.upstreamPath,
  });
  return fillAndSend(
    state,
    ctx,
    reply,
    entryKey,
    resolved.ttlSeconds,
    fetch,
    (entry, outcome) => sendEntry(ctx, reply, entry, outcome, state.now(), chain.head.number),
    lifetime,
  );
}
