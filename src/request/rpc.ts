// The JSON-RPC endpoint (`POST /{chain_id}/json-rpc`, `POST /{chain_id}/api/eth-rpc`): from the
// key step on, a body of one call or a batch. Every call counts as one request for the rate limit
// and costs its method's credits (`rpc.<method>`); a batch that cannot be paid whole is refused
// whole (429 or 402, with the quota headers and a -32005 error per call). Each call is answered
// from the shared cache or the chain's explorer, identical calls coalesced inside and across
// batches; a call whose answer is not billable (send.ts: its upstream failed) is refunded. Answers keep the client's ids and order.
//
// The calls of a request are billed, counted and recorded one by one here (usage rows and
// metrics per method); finish() then only writes the request's access line (ctx.perCall).
import { lifetimeOf } from '../finality/lifetime.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKey } from '../keys/ring.js';
import { cacheKey, entryBody, type CacheOutcome } from '../cache/policy.js';
import { ERRORS, GatewayError } from '../http/errors.js';
import { chargedFor, sendJson, type AnswerSource } from './send.js';
import type { QuotaDecision } from '../quota/types.js';
import { rpcRouteName, type CheckedCall } from '../rpc/methods.js';
import {
  answer,
  errorMember,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  isRpcError,
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
  decision: QuotaDecision | undefined;
  /** The answer's member (`"result":...` / `"error":{...}`) and its HTTP-like status for billing. */
  member: string;
  status: number;
  /** Who made the member: the explorer (from the cache or fetched), or the gateway (a refusal, a failure). */
  from: AnswerSource;
  cache: CacheOutcome | undefined;
}

const settled = <T>(value: T | Promise<T>): Promise<T> => (value instanceof Promise ? value : Promise.resolve(value));

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
  // The decisions' instant is the usage rows' too: the credits counted as they are billed
  // (quota/memory.ts) and the request's other counts fall on one day.
  ctx.nowMs = now;
  if (parsed === undefined || parsed.kind === 'refused' || parsed.kind === 'too-many') {
    // A body that is no call (or too much of one) still counts as one request for the rate limit,
    // checked before validation (contract section 4), and costs nothing.
    const decided = await decideAll(state, ctx, key, [0], ['rpc'], now);
    if (decided.refusal !== undefined) return refuseQuota(state, ctx, reply, key, decided, [], 'refused');
    ctx.decision = summary(decided.decisions, 0);
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

  const slots: Slot[] = parsed.calls.map((parsedCall) => {
    let call = parsedCall;
    let valid = isRpcError(call.outcome) ? undefined : call.outcome;
    const route = valid ? rpcRouteName(valid.method) : 'rpc';
    // A key restricted by `routes` (keys/terms.ts) is refused the calls outside them, each on its
    // own, as an error member that costs nothing.
    if (valid && key.routes && !key.routes(route)) {
      call = {
        ...call,
        outcome: { code: SERVER_ERROR, message: `API key not allowed on this route: ${route} (key restriction: routes)` },
      };
      valid = undefined;
    }
    return {
      call,
      route,
      cost: valid ? (key.costs?.[route] ?? costOf(state.config.costs, route)) : 0,
      decision: undefined,
      member: '',
      status: 0,
      from: 'gateway',
      cache: undefined,
    };
  });
  ctx.route = parsed.kind === 'single' ? slots[0]!.route : 'rpc.batch';

  // Rate limit and credits: one decision per call, all taken in this turn (the Redis store sends
  // a turn's decisions as one script call per key).
  const decided = await decideAll(
    state,
    ctx,
    key,
    slots.map((s) => s.cost),
    slots.map((s) => s.route),
    now,
  );
  slots.forEach((s, i) => (s.decision = decided.decisions[i]));
  if (decided.refusal !== undefined) return refuseQuota(state, ctx, reply, key, decided, slots, parsed.kind);

  await Promise.all(slots.map((slot) => answerSlot(state, ctx, chain, slot, now)));

  let refunded = 0;
  for (const slot of slots) refunded += settle(state, ctx, key, slot);
  ctx.decision = summary(decided.decisions, refunded);
  if (parsed.kind === 'single') {
    const only = slots[0]!;
    ctx.cache = only.cache;
    return sendJson(ctx, reply, only.status, answer(only.call.idJson, only.member), only.cache ? { 'x-cache': only.cache } : undefined);
  }
  return sendJson(ctx, reply, 200, `[${slots.map((s) => answer(s.call.idJson, s.member)).join(',')}]`);
}

interface Decided {
  decisions: (QuotaDecision | undefined)[];
  /** Why the request as a whole is refused, if it is. */
  refusal: 'RATE_LIMITED' | 'OUT_OF_CREDITS' | 'QUOTA_UNAVAILABLE' | undefined;
}

async function decideAll(
  state: GatewayState,
  ctx: RequestContext,
  key: ApiKey,
  costs: number[],
  routes: string[],
  now: number,
): Promise<Decided> {
  const chain = ctx.chainId ?? 'none';
  const pending = costs.map((cost, i) =>
    settled(state.quota.decide(key, cost, now, chain, routes[i])).catch((err: unknown) => state.quota.storeFailed(err)),
  );
  const decisions = await Promise.all(pending);
  let refusal: Decided['refusal'];
  if (decisions.some((d) => d === undefined) && state.onQuotaError === 'closed') refusal = 'QUOTA_UNAVAILABLE';
  else if (decisions.some((d) => d?.outcome === 'rate_limited')) refusal = 'RATE_LIMITED';
  else if (decisions.some((d) => d?.outcome === 'out_of_credits')) refusal = 'OUT_OF_CREDITS';
  return { decisions, refusal };
}

/**
 * The quota headers of a request of several decisions: the last one's window (it counted every
 * call before it) and the balance after everything, refunds included. undefined when the store
 * failed for any call (the headers then read -1).
 */
function summary(decisions: (QuotaDecision | undefined)[], refunded: number): QuotaDecision | undefined {
  const last = decisions.at(-1);
  if (last === undefined || decisions.some((d) => d === undefined)) return undefined;
  return { ...last, outcome: 'ok', credits: Math.max(last.credits, 0) + refunded, billed: 0, fromTopup: 0 };
}

/** A batch that cannot be paid whole: what its calls took is given back, and each call is told why. */
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
  let refunded = 0;
  decided.decisions.forEach((d, i) => {
    if (d?.outcome === 'out_of_credits') state.alerts?.decided(key, d, 402, ctx.nowMs);
    if (d === undefined || d.billed === 0) return;
    const usage = {
      nowMs: ctx.nowMs,
      keyId: key.id,
      account: key.usageAccount,
      chain: ctx.chainId ?? 'none',
      route: slots[i]?.route ?? 'rpc',
    };
    state.quota.refund({ account: key.account, periodId: d.periodId, amount: d.billed, fromTopup: d.fromTopup, usage });
    refunded += d.billed;
  });
  ctx.decision = summary(decided.decisions, refunded);
  const error: RpcError = { code: code === 'QUOTA_UNAVAILABLE' ? INTERNAL_ERROR : LIMIT_EXCEEDED, message: spec.message };
  const extra: Record<string, string> = {};
  const last = decided.decisions.at(-1);
  if (code === 'RATE_LIMITED' && last !== undefined) extra['retry-after'] = String(Math.max(1, Math.ceil(last.rateResetMs / 1000)));
  for (const slot of slots) recordCall(state, ctx, key, slot.route, spec.status, 0, false);
  if (slots.length === 0) recordCall(state, ctx, key, 'rpc', spec.status, 0, false);
  if (code === 'RATE_LIMITED') state.metrics.refused(key.planName, 'rate_limited');
  else if (code === 'OUT_OF_CREDITS') state.metrics.refused(key.planName, 'out_of_credits');
  const member = errorMember(error);
  const body =
    kind === 'batch' ? `[${slots.map((s) => answer(s.call.idJson, member)).join(',')}]` : answer(slots[0]?.call.idJson ?? 'null', member);
  sendJson(ctx, reply, spec.status, body, extra);
}

/** The answer to one call: its refusal, the shared cache, or the explorer (coalesced). */
async function answerSlot(state: GatewayState, ctx: RequestContext, chain: Chain, slot: Slot, now: number): Promise<void> {
  const outcome = slot.call.outcome;
  if (isRpcError(outcome)) {
    slot.member = errorMember(outcome);
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
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    if (err instanceof UpstreamFailure) ctx.upstream = err.upstream;
    slot.member = errorMember({ code: INTERNAL_ERROR, message: err.message, data: { status: err.status } });
    slot.status = err.status;
  }
}

/** Bills one answered call (one that is not billable, send.ts, is refunded), counts and records it; returns what it gave back. */
function settle(state: GatewayState, ctx: RequestContext, key: ApiKey, slot: Slot): number {
  const d = slot.decision;
  let charged = d?.billed ?? 0;
  let refunded = 0;
  if (d !== undefined && d.billed > 0 && chargedFor(d.billed, slot.status, slot.from) < d.billed) {
    const usage = { nowMs: ctx.nowMs, keyId: key.id, account: key.usageAccount, chain: ctx.chainId ?? 'none', route: slot.route };
    state.quota.refund({ account: key.account, periodId: d.periodId, amount: d.billed, fromTopup: d.fromTopup, usage });
    refunded = d.billed;
    charged = 0;
  }
  if (charged > 0) state.metrics.spent(key.planName, key.name, charged);
  if (d !== undefined) state.alerts?.decided(key, d, slot.status, ctx.nowMs);
  recordCall(state, ctx, key, slot.route, slot.status, charged, slot.cache === 'HIT' || slot.cache === 'STALE');
  return refunded;
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
