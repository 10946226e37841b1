// The JSON-RPC endpoint (`POST /{chain_id}/json-rpc`, `POST /{chain_id}/api/eth-rpc`): from the
// key step on, a body of one call or a batch. The rate limit counts HTTP requests: a batch is one
// request, however many calls it carries (at most `rpc.maxBatch`), so a batching client on the
// smallest plan is never refused for batching. Credits count calls: each costs its method's
// credits (`rpc.<method>`), and the request is billed their sum in the same decision (one round
// trip), paid whole or refused whole (429 or 402, with the quota headers and a -32005 error per
// call). Each call is answered from the shared cache or the chain's explorer, identical calls
// coalesced inside and across batches; a call whose answer is not billable (send.ts: its upstream
// failed) is refunded its cost. Answers
// keep the client's ids (as sent: rpc/protocol.ts) and order; notifications are carried out and
// not answered (JSON-RPC 2.0 section 4.1).
//
// The calls of a request are counted and recorded one by one here (usage rows and metrics per
// method); finish() then only writes the request's access line (ctx.perCall).
import { lifetimeOf } from '../finality/lifetime.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKey } from '../keys/ring.js';
import { ageSeconds, cacheKey, entryBody, type CacheEntry, type CacheOutcome } from '../cache/policy.js';
import { ERRORS, GatewayError } from '../http/errors.js';
import { chargedFor, type AnswerSource } from '../billing/rule.js';
import { settle } from '../billing/settle.js';
import { sendJson, sendNoContent } from './send.js';
import type { QuotaDecision } from '../quota/types.js';
import { pinFinality, rpcRouteName, type CheckedCall } from '../rpc/methods.js';
import {
  answer,
  errorMember,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  isRpcError,
  RESOURCE_UNAVAILABLE,
  LIMIT_EXCEEDED,
  parseBody,
  type ParsedCall,
  SERVER_ERROR,
  type RpcError,
} from '../rpc/protocol.js';
import { costOf, rpcTtlSeconds } from '../routes/settings.js';
import { UpstreamFailure } from '../upstream/failures.js';
import { readBody } from './body.js';
import type { RequestContext } from './context.js';
import { forwardCall } from './forward.js';
import type { Chain, GatewayState } from './state.js';

/** Largest JSON-RPC body, bytes (issue 21; geth's default is 5 MiB, Blockscout's Plug parser 8 MB). */
export const RPC_MAX_BODY_BYTES = 1024 * 1024;

/** One call of the request, as it goes through the steps. */
interface Slot {
  call: ParsedCall;
  /** The route it is counted under: `rpc.<method>`, or `rpc` for a call naming no known method. */
  route: string;
  cost: number;
  /** The answer's member (`"result":...` / `"error":{...}`) and its HTTP-like status for usage and refunds. */
  member: string;
  status: number;
  /** Who made the member: the explorer (from the cache or fetched), or the gateway (a refusal, a failure). */
  from: AnswerSource;
  cache: CacheOutcome | undefined;
  /** The cache entry the answer came from, for `Age`. */
  entry: CacheEntry | undefined;
}

const settled = <T>(value: T | Promise<T>): Promise<T> => (value instanceof Promise ? value : Promise.resolve(value));

/** The usage row a request's credits are counted in: its calls' route when they share one, else `rpc.batch`. */
function requestRoute(slots: readonly Slot[]): string {
  let route: string | undefined;
  for (const s of slots) {
    if (s.cost === 0) continue;
    if (route !== undefined && route !== s.route) return 'rpc.batch';
    route = s.route;
  }
  return route ?? slots[0]?.route ?? 'rpc';
}

export async function rpcRequest(
  state: GatewayState,
  ctx: RequestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  key: ApiKey,
  chain: Chain,
): Promise<void> {
  ctx.perCall = true;
  ctx.route = 'rpc';
  const read = await readBody(request, RPC_MAX_BODY_BYTES);
  const parsed = read.ok ? parseBody(read.body.toString('utf8'), state.config.rpc.maxBatch) : undefined;
  const now = state.now();
  // The decision's instant is the usage rows' too: the credits counted as they are billed
  // (quota/memory.ts) and the request's other counts fall on one day.
  ctx.nowMs = now;
  if (parsed === undefined || parsed.kind === 'refused' || parsed.kind === 'too-many') {
    // A body that is no call (or too much of one) still counts as one request for the rate limit,
    // checked before validation (contract section 4), and costs nothing.
    const decided = await decide(state, ctx, key, 0, 'rpc', now);
    if (decided.refusal !== undefined) return refuseQuota(state, ctx, reply, key, decided, [], 'refused');
    ctx.decision = summary(decided.decision, 0);
    let status = 200;
    let error: RpcError;
    if (parsed === undefined) {
      status = !read.ok && read.reason === 'too-large' ? 413 : 400;
      error = {
        code: INVALID_REQUEST,
        message: status === 413 ? `Request body larger than ${RPC_MAX_BODY_BYTES} bytes` : 'Request body not received whole',
      };
    } else if (parsed.kind === 'too-many') {
      status = 413;
      error = {
        code: INVALID_REQUEST,
        message: `Batch of ${parsed.count} calls is over the limit of ${state.config.rpc.maxBatch} (rpc.maxBatch)`,
      };
    } else {
      error = parsed.error;
    }
    recordCall(state, ctx, key, 'rpc', status === 200 ? 400 : status, 0, false);
    return sendJson(ctx, reply, status, answer('null', errorMember(error)));
  }

  // `finalized` and `safe`, which the explorer refuses, name the block the head and the chain's
  // finality depth give (rpc/methods.ts pinFinality).
  const finalLine = chain.head.finalLine(now);
  const slots: Slot[] = parsed.calls.map((parsedCall) => {
    let call = parsedCall;
    let valid = isRpcError(call.outcome) ? undefined : call.outcome;
    const route = valid ? rpcRouteName(valid.method) : 'rpc';
    // A key restricted by `routes` (keys/terms.ts) is refused the calls outside them, each on its
    // own, as an error member that costs nothing.
    if (valid && key.routes && !key.routes(route)) {
      call = {
        ...call,
        outcome: {
          code: RESOURCE_UNAVAILABLE,
          message: `API key not allowed on this route: ${route} (key restriction: routes)`,
        },
      };
      valid = undefined;
    }
    if (valid) {
      const pinned = pinFinality(valid, finalLine);
      call = {
        ...call,
        outcome: pinned ?? {
          code: SERVER_ERROR,
          message: `Block tags finalized and safe are answered from the chain's head, which the gateway does not know yet: try again shortly, or ask for a block number`,
        },
      };
      if (pinned === undefined) valid = undefined;
    }
    return {
      call,
      route,
      cost: valid ? (key.costs?.[route] ?? costOf(state.config.costs, route)) : 0,
      member: '',
      status: 0,
      from: 'gateway',
      cache: undefined,
      entry: undefined,
    };
  });
  ctx.route = parsed.kind === 'single' ? slots[0]!.route : 'rpc.batch';

  // One decision for the request: one slot of the rate window, and the sum of its calls' credits.
  const route = requestRoute(slots);
  const decided = await decide(
    state,
    ctx,
    key,
    slots.reduce((sum, s) => sum + s.cost, 0),
    route,
    now,
  );
  if (decided.refusal !== undefined) return refuseQuota(state, ctx, reply, key, decided, slots, parsed.kind);

  await Promise.all(slots.map((slot) => answerSlot(state, ctx, chain, slot, now)));

  const refunded = settleCalls(state, ctx, key, slots, decided.decision, route);
  ctx.decision = summary(decided.decision, refunded);
  const answered = slots.filter((s) => !s.call.notification);
  // Section 4.1: a notification gets no answer; a batch of them none at all (section 6, "should
  // return nothing at all"): HTTP 204, as the JSON-RPC 2.0 HTTP transport proposal has it
  // (https://www.simple-is-better.org/json-rpc/transport_http.html, "204 No Content").
  if (answered.length === 0) return sendNoContent(ctx, reply);
  const age = ageOf(answered, state.now());
  if (parsed.kind === 'single') {
    const only = slots[0]!;
    ctx.cache = only.cache;
    const extra = only.cache ? { 'x-cache': only.cache, age: age ?? '0' } : undefined;
    // A call refused by the gateway's own checks is an answer like any other: HTTP 200 (a failed
    // upstream keeps its status, 502 or 504).
    return sendJson(ctx, reply, only.status >= 500 ? only.status : 200, answer(only.call.idJson, only.member), extra);
  }
  return sendJson(
    ctx,
    reply,
    200,
    `[${answered.map((s) => answer(s.call.idJson, s.member)).join(',')}]`,
    age === undefined ? undefined : { age },
  );
}

/**
 * `Age` (RFC 9111 section 5.1) of answers that came from the cache: the oldest one's, in whole
 * seconds; undefined when none did.
 */
function ageOf(slots: readonly Slot[], nowMs: number): string | undefined {
  let age: number | undefined;
  for (const s of slots) if (s.entry !== undefined) age = Math.max(age ?? 0, ageSeconds(s.entry, nowMs));
  return age === undefined ? undefined : String(age);
}

interface Decided {
  decision: QuotaDecision | undefined;
  /** Why the request as a whole is refused, if it is. */
  refusal: 'RATE_LIMITED' | 'OUT_OF_CREDITS' | 'QUOTA_UNAVAILABLE' | undefined;
}

async function decide(state: GatewayState, ctx: RequestContext, key: ApiKey, cost: number, route: string, now: number): Promise<Decided> {
  const decision = await settled(state.quota.decide(key, cost, now, ctx.chainId ?? 'none', route)).catch((err: unknown) =>
    state.quota.storeFailed(err, key, cost, now, ctx.chainId ?? 'none', route),
  );
  let refusal: Decided['refusal'];
  if (decision === undefined && state.onQuotaError === 'closed') refusal = 'QUOTA_UNAVAILABLE';
  else if (decision?.outcome === 'rate_limited') refusal = 'RATE_LIMITED';
  else if (decision?.outcome === 'out_of_credits') refusal = 'OUT_OF_CREDITS';
  return { decision, refusal };
}

/** The quota headers' decision: the balance after the request, refunds included. undefined when the store failed (the headers read -1). */
function summary(decision: QuotaDecision | undefined, refunded: number): QuotaDecision | undefined {
  if (decision === undefined) return undefined;
  return { ...decision, outcome: 'ok', credits: Math.max(decision.credits, 0) + refunded, billed: 0, fromTopup: 0 };
}

/** A request that cannot be paid whole, or over the rate: each call is told why, and nothing was billed. */
function refuseQuota(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  key: ApiKey,
  decided: Decided,
  slots: Slot[],
  kind: 'single' | 'batch' | 'refused',
): void {
  const code = decided.refusal!;
  const spec = ERRORS[code];
  const d = decided.decision;
  if (d?.outcome === 'out_of_credits' && !d.local) state.alerts?.decided(key, d, 402, ctx.nowMs);
  ctx.decision = summary(d, 0);
  const error: RpcError = { code: code === 'QUOTA_UNAVAILABLE' ? INTERNAL_ERROR : LIMIT_EXCEEDED, message: spec.message };
  const extra: Record<string, string> = {};
  if (code === 'RATE_LIMITED' && d !== undefined) extra['retry-after'] = String(Math.max(1, Math.ceil(d.rateResetMs / 1000)));
  for (const slot of slots) recordCall(state, ctx, key, slot.route, spec.status, 0, false);
  if (slots.length === 0) recordCall(state, ctx, key, 'rpc', spec.status, 0, false);
  if (code === 'RATE_LIMITED') state.metrics.refused(key.planName, 'rate_limited');
  else if (code === 'OUT_OF_CREDITS') state.metrics.refused(key.planName, 'out_of_credits');
  const member = errorMember(error);
  // The HTTP request itself is refused: its calls (notifications left out) are told why, and a
  // request of notifications only gets the one error, id null, as a refusal before the body is read.
  const told = slots.filter((s) => !s.call.notification);
  const body =
    kind === 'batch' && told.length > 0
      ? `[${told.map((s) => answer(s.call.idJson, member)).join(',')}]`
      : answer(told[0]?.call.idJson ?? 'null', member);
  sendJson(ctx, reply, spec.status, body, extra);
}

/** The answer to one call: its refusal, the shared cache, or the explorer (coalesced). */
async function answerSlot(state: GatewayState, ctx: RequestContext, chain: Chain, slot: Slot, now: number): Promise<void> {
  const outcome = slot.call.outcome;
  if (isRpcError(outcome)) {
    slot.member = errorMember(outcome);
    // For usage rows: a client error (the HTTP answer is 200, JSON-RPC's own error inside).
    slot.status = 400;
    return;
  }
  const call: CheckedCall = outcome;
  const key = cacheKey(chain.id, call);
  const ttl = rpcTtlSeconds(state.config.cache, call.method, call.freshness);
  const fresh = state.cache.peek(key, ttl, now);
  if (fresh) {
    slot.member = entryBody(fresh).toString('utf8');
    slot.status = 200;
    slot.from = 'upstream';
    slot.cache = 'HIT';
    slot.entry = fresh;
    return;
  }
  try {
    const lifetime = lifetimeOf(chain.head, state.config.cache.finalTtlSeconds, { kind: 'call', method: call.method, params: call.params });
    const result = await state.cache.get(key, ttl, () => forwardCall(chain, call, ctx.id, state.metrics, state.upstreamWarnings), lifetime);
    if (result.fetched) {
      ctx.upstream = result.fetched.upstream;
      ctx.upstreamMs = result.fetched.ms;
    }
    slot.member = entryBody(result.entry).toString('utf8');
    slot.status = 200;
    slot.from = 'upstream';
    slot.cache = result.outcome;
    slot.entry = result.entry;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    if (err instanceof UpstreamFailure) ctx.upstream = err.upstream;
    slot.member = errorMember({ code: INTERNAL_ERROR, message: err.message, data: { status: err.status } });
    slot.status = err.status;
  }
}

/**
 * Bills the answered calls: one that is not billable (billing/rule.ts) costs nothing, and what
 * they did not cost is settled with the decision once (billing/settle.ts); counts and records each
 * call. Returns what was given back.
 */
function settleCalls(
  state: GatewayState,
  ctx: RequestContext,
  key: ApiKey,
  slots: readonly Slot[],
  d: QuotaDecision | undefined,
  route: string,
): number {
  let charged = 0;
  for (const slot of slots) {
    const cost = d !== undefined && d.billed > 0 ? chargedFor(slot.cost, slot.status, slot.from) : 0;
    charged += cost;
    recordCall(state, ctx, key, slot.route, slot.status, cost, slot.cache === 'HIT' || slot.cache === 'STALE');
  }
  if (d === undefined) return 0;
  // The usage row the decision counted the credits in (requestRoute).
  const usage = { nowMs: ctx.nowMs, keyId: key.id, account: key.usageAccount, chain: ctx.chainId ?? 'none', route };
  settle(state, key, d, charged, 200, ctx.nowMs, usage);
  return d.billed - charged;
}

function recordCall(
  state: GatewayState,
  ctx: RequestContext,
  key: ApiKey,
  route: string,
  status: number,
  charged: number,
  hit: boolean,
): void {
  const chainId = ctx.chainId ?? 'none';
  state.metrics.request(chainId, route, status);
  state.usage?.record(ctx.nowMs, key.id, key.usageAccount, chainId, route, status, charged, hit);
}
