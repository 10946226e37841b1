// The request pipeline, in the contract's order of checks (section 4): route and chain, key,
// rate limit, validation, credits, cache, upstream. Each step is a small function; the handler
// reads top to bottom as that list.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { extractKey, type ApiKey, type KeyRing } from './auth/keys.js';
import { ageSeconds, cacheKey, type CacheEntry, type CacheOutcome } from './cache/policy.js';
import type { ResponseCache } from './cache/response-cache.js';
import type { Config, RouteName } from './config/schema.js';
import { ERRORS, GatewayError, jsonErrorResponse, legacyErrorBody, messageBody, type ErrorCode } from './http/errors.js';
import { decimal, H_CREDITS, H_REQUEST_ID, H_SCAM, PER_ANSWER_HEADERS } from './http/headers.js';
import { stampQuotaHeaders, type QuotaStep } from './quota/step.js';
import type { QuotaDecision } from './quota/types.js';
import type { Route } from './routes/resolve.js';
import type { Resolved, Resolver } from './routes/resolver.js';
import type { Metrics, UpstreamErrorKind } from './observability/metrics.js';
import type { ChainUpstreams, UpstreamAnswer } from './upstream/client.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
const USER_AGENT = 'explorer-gateway/0.1 (+https://github.com/blockscout)';

/** What the access log and metrics want to know about a request, and what its answer needs. */
export interface RequestInfo {
  chainId: string | undefined;
  route: RouteName | undefined;
  /** The key, once the key step found it: every answer from then on carries the quota headers. */
  key: ApiKey | undefined;
  cache: CacheOutcome | undefined;
  upstream: string | undefined;
  upstreamMs: number | undefined;
  /** The quota decision; undefined before the quota step or when the store failed. */
  decision: QuotaDecision | undefined;
  /** Credits billed to this request and not refunded (0: nothing to refund). */
  billed: number;
  /** The quota step that billed it, for a refund. */
  quota: QuotaStep | undefined;
}

export interface Chain {
  id: string;
  name: string;
  /** The chain's settings as loaded, to tell on reload whether its pools can be kept. */
  fingerprint: string;
  upstreams: ChainUpstreams;
}

export interface GatewayState {
  config: Config;
  keys: KeyRing;
  chains: Map<string, Chain>;
  resolver: Resolver;
  quota: QuotaStep;
  cache: ResponseCache;
  now: () => number;
  /** What to do when the quota store fails: serve with -1 headers, or 503. */
  onQuotaError: 'open' | 'closed';
  metrics: Metrics;
  log: Logger;
}

export function newRequestInfo(): RequestInfo {
  return {
    chainId: undefined,
    route: undefined,
    key: undefined,
    cache: undefined,
    upstream: undefined,
    upstreamMs: undefined,
    decision: undefined,
    billed: 0,
    quota: undefined,
  };
}

/**
 * Every answer of the pipeline that is not a cache entry goes out here: the request id, the
 * quota headers once the quota step ran, and a JSON body.
 */
function sendJson(reply: FastifyReply, status: number, body: string, creditsAfterRefund?: number): FastifyReply {
  const info = reply.request.info as RequestInfo | null;
  reply.header(H_REQUEST_ID, reply.request.id);
  if (info?.key) stampQuotaHeaders(reply, info.key.rpsHeader, info.decision);
  if (creditsAfterRefund !== undefined) reply.header(H_CREDITS, decimal(creditsAfterRefund));
  return reply.code(status).header('content-type', JSON_TYPE).send(body);
}

export function sendError(reply: FastifyReply, code: ErrorCode, legacy: boolean): FastifyReply {
  const { status, message } = ERRORS[code];
  if (status === 401) reply.header('www-authenticate', code === 'NO_KEY' ? 'Bearer' : 'Bearer error="invalid_token"');
  if (status === 405) reply.header('allow', 'GET, HEAD');
  const info = reply.request.info as RequestInfo | null;
  const body = legacy ? legacyErrorBody(message) : messageBody(message);
  if (status < 500 || !info?.billed || !info.key || !info.decision || !info.quota) return sendJson(reply, status, body);
  // A 5xx answer, the gateway's or the upstream's, is not paid for (contract section 6).
  const { key, decision, billed, quota } = info;
  quota.refund({ digest: key.digest, periodId: decision.periodId, amount: billed });
  info.billed = 0;
  return sendJson(reply, status, body, Math.max(decision.credits, 0) + billed);
}

/** The key step: 401 without a usable key, 403 when the key may not be used here. */
function authenticate(request: FastifyRequest, route: Route, keys: KeyRing): ApiKey | ErrorCode {
  const auth = request.headers.authorization;
  const source = extractKey(auth, route.apikeys);
  if (source.kind === 'none') return 'NO_KEY';
  if (source.kind === 'conflict') return 'CONFLICTING_KEYS';
  if (source.kind === 'bad-scheme') return 'BAD_AUTH_SCHEME';
  const key = keys.find(source.key);
  if (!key) return 'BAD_KEY';
  if (key.status === 'unverified') return 'UNVERIFIED_KEY';
  if (key.status === 'disabled') return 'DISABLED_KEY';
  if (key.chains && !key.chains.has(route.chainId)) return 'CHAIN_NOT_ALLOWED';
  return key;
}

/** Counts a finished request (also called by the error handler). */
export function countRequest(metrics: Metrics, info: RequestInfo, status: number): void {
  metrics.request(info.chainId ?? 'none', info.route ?? 'none', status);
  if (info.billed > 0 && info.key) metrics.spent(info.key.name, info.billed);
}

/**
 * The route handler. Not an async function: with in-process stores, a cache hit is answered
 * before the handler returns, without a promise; only a remote quota store, the shared tier or
 * the upstream make it return one.
 */
export function makeHandler(getState: () => GatewayState) {
  return function handle(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    // The state is read once: a reload swaps it for new requests while this one finishes.
    const state = getState();
    let pending: Promise<void> | undefined;
    try {
      pending = pipeline(state, request, reply);
    } catch (err) {
      failedAfterAnswer(state, request, reply, err);
      return undefined;
    }
    if (pending === undefined) {
      countRequest(state.metrics, request.info, reply.statusCode);
      return undefined;
    }
    return pending.then(
      () => countRequest(state.metrics, request.info, reply.statusCode),
      (err: unknown) => failedAfterAnswer(state, request, reply, err),
    );
  };
}

/**
 * An error before the answer goes on to the error handler (a 500); one after the answer was
 * written can only be logged (fastify, which has no logger here, would drop it).
 */
function failedAfterAnswer(state: GatewayState, request: FastifyRequest, reply: FastifyReply, err: unknown): void {
  if (!reply.sent) throw err;
  state.log.error({ reqId: request.id, err }, 'error after the answer was sent');
  countRequest(state.metrics, request.info, reply.statusCode);
}

/** Steps 1 to 3; the rest follows the quota decision, at once or when the store answers. */
function pipeline(state: GatewayState, request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
  const info = newRequestInfo();
  request.info = info;

  // 1. Route and chain (memoised per URL, with the route's cost, TTL and cache key).
  const resolved = state.resolver.resolve(request.url);
  const resolution = resolved.resolution;
  if (resolution.kind === 'refusal') return void sendError(reply, resolution.code, resolution.legacy);
  info.chainId = resolution.chainId;
  info.route = resolution.route;
  if (request.method !== 'GET' && request.method !== 'HEAD') return void sendError(reply, 'METHOD_NOT_ALLOWED', resolution.legacy);

  // 2. Key.
  const key = authenticate(request, resolution, state.keys);
  if (typeof key === 'string') return void sendError(reply, key, resolution.legacy);
  info.key = key;

  // 3. Rate limit, and credits in the same decision when the request is valid: one round trip.
  // One clock reading serves the decision and, when the store answers at once, the cache.
  const now = state.now();
  const decided = state.quota.decide(key, resolved.cost, now);
  if (decided instanceof Promise) return decided.then((decision) => afterQuota(state, request, reply, key, resolved, decision, state.now()));
  return afterQuota(state, request, reply, key, resolved, decided, now);
}

/** Steps 3 (the refusals) to 7. */
function afterQuota(
  state: GatewayState,
  request: FastifyRequest,
  reply: FastifyReply,
  key: ApiKey,
  resolved: Resolved,
  decision: QuotaDecision | undefined,
  now: number,
): Promise<void> | undefined {
  const info = request.info;
  const resolution = resolved.resolution as Route;
  const { legacy } = resolution;
  info.decision = decision;
  if (decision === undefined) {
    // The store failed: redis.onError says whether to serve (headers -1) or refuse.
    if (state.onQuotaError === 'closed') return void sendError(reply, 'QUOTA_UNAVAILABLE', legacy);
  } else if (decision.outcome === 'rate_limited') {
    // RFC 9110 section 10.2.3: whole seconds, rounded up.
    reply.header('retry-after', String(Math.max(1, Math.ceil(decision.rateResetMs / 1000))));
    state.metrics.refused(key.planName, 'rate_limited');
    return void sendError(reply, 'RATE_LIMITED', legacy);
  }

  // 4. Validation (a v2 422 in the spec's JsonErrorResponse; legacy: HTTP 200, status "0").
  const v = resolution.validation;
  if (!v.ok) {
    if ('issues' in v) return void sendJson(reply, 422, jsonErrorResponse(v.issues));
    return void sendJson(reply, 200, legacyErrorBody(v.legacyMessage));
  }

  // 5. Credits (taken by the decision above only if enough remained).
  if (decision?.outcome === 'out_of_credits') {
    state.metrics.refused(key.planName, 'out_of_credits');
    return void sendError(reply, 'OUT_OF_CREDITS', legacy);
  }
  if (decision && decision.billed > 0) {
    info.billed = decision.billed;
    info.quota = state.quota;
  }

  // 6. Cache: a fresh in-process entry is answered at once.
  const scam = request.headers[H_SCAM];
  const showScam = typeof scam === 'string' ? scam : undefined;
  const chain = state.chains.get(resolution.chainId)!;
  const entryKey = showScam === undefined ? resolved.cacheKey : cacheKey(chain.id, v.upstreamPath, showScam);
  const fresh = state.cache.peek(entryKey, resolved.ttlSeconds, now);
  if (fresh) return sendEntry(request, reply, fresh, 'HIT', now);

  // 7. Stale, shared tier, or the upstream with identical misses coalesced.
  const fetchUpstream = () => fetchFromUpstream(state, request, chain, v.upstreamPath, showScam);
  return state.cache.get(entryKey, resolved.ttlSeconds, fetchUpstream).then(
    ({ entry, outcome }) => sendEntry(request, reply, entry, outcome, state.now()),
    (err: unknown) => {
      if (!(err instanceof GatewayError)) throw err;
      sendError(reply, err.code, legacy);
    },
  );
}

/**
 * A cache entry goes out through Node's writeHead with every header in one flat list: the
 * entry's own lines are worked out once, when it is stored, and end with the per-answer
 * headers, whose values are filled in here (writeHead reads the list at once, so one list per
 * entry serves every answer). fastify's reply.header() and send() cost more than the rest of
 * a hit. HEAD answers lose their body in Node; onResponse hooks (the access log) still run.
 */
function sendEntry(request: FastifyRequest, reply: FastifyReply, entry: CacheEntry, outcome: CacheOutcome, now: number): undefined {
  const info = request.info;
  info.cache = outcome;
  const d = info.decision;
  const lines = entry.headerLines;
  // The values of PER_ANSWER_HEADERS: request id, cache, age, then the four quota headers.
  const at = lines.length - 2 * PER_ANSWER_HEADERS.length + 1;
  lines[at] = request.id;
  lines[at + 2] = outcome;
  lines[at + 4] = String(ageSeconds(entry, now));
  lines[at + 6] = d ? info.key!.rpsHeader : '-1';
  lines[at + 8] = d ? decimal(d.rateRemaining) : '-1';
  lines[at + 10] = d ? decimal(d.rateResetMs) : '-1';
  lines[at + 12] = d ? decimal(Math.max(d.credits, 0)) : '-1';
  // writeHead first: if it throws, nothing was sent and the error handler can still answer.
  reply.raw.writeHead(entry.status, lines);
  reply.hijack();
  reply.raw.end(entry.body);
  return undefined;
}

const ERROR_KINDS: Partial<Record<ErrorCode, UpstreamErrorKind>> = {
  UPSTREAM_TIMEOUT: 'timeout',
  UPSTREAM_UNREACHABLE: 'unreachable',
};

/** The miss path: one upstream request, its failures logged once (not once per waiter). */
async function fetchFromUpstream(
  { metrics, log }: GatewayState,
  request: FastifyRequest,
  chain: Chain,
  path: string,
  showScam: string | undefined,
): Promise<UpstreamAnswer> {
  const info = request.info;
  const started = performance.now();
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT, [H_REQUEST_ID]: request.id };
  if (showScam !== undefined) headers[H_SCAM] = showScam;
  let kind: UpstreamErrorKind | undefined;
  try {
    const answer = await chain.upstreams.request({ path, method: 'GET', headers });
    info.upstream = answer.upstream;
    metrics.upstream(chain.id, answer.upstream, (performance.now() - started) / 1000);
    if (answer.status < 500) return answer;
    kind = 'status_5xx';
    throw new GatewayError('UPSTREAM_ERROR', { cause: `upstream answered ${answer.status}` });
  } catch (err) {
    if (err instanceof GatewayError) {
      metrics.upstreamError(chain.id, kind ?? ERROR_KINDS[err.code] ?? 'error');
      const cause = err.cause instanceof Error ? err.cause.message : typeof err.cause === 'string' ? err.cause : undefined;
      log.warn({ reqId: request.id, code: err.code, cause, chain: chain.id }, 'upstream failure');
    }
    throw err;
  } finally {
    info.upstreamMs = Math.round((performance.now() - started) * 1000) / 1000;
  }
}
