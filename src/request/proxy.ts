// Etherscan's proxy module (`module=proxy&action=eth_...`), after the credit step: the JSON-RPC
// call it names (rpc/proxy.ts) answered from the same cache entry as the JSON-RPC form, or from
// the chain's explorer, and written in Etherscan's shape (`{"jsonrpc":"2.0","id":N,"result":...}`).
// Billed like any legacy route, under `legacy.proxy.<action>`; a failed upstream is the usual
// 502 or 504 in the legacy envelope, refunded by finish().
import type { FastifyReply } from 'fastify';
import { sendJson } from './send.js';
import { derive, proxyAnswer } from '../rpc/proxy.js';
import type { Route } from '../routes/resolve.js';
import type { Resolved } from '../routes/resolver.js';
import type { RequestContext } from './context.js';
import { fillAndSend } from './fill.js';
import { lifetimeOf } from '../finality/lifetime.js';
import { entryBody, type CacheEntry, type CacheOutcome } from '../cache/policy.js';
import { forwardCall } from './forward.js';
import type { Chain, GatewayState } from './state.js';

export function proxyRequest(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  chain: Chain,
  route: Route,
  resolved: Resolved,
  now: number,
): Promise<void> | undefined {
  const call = route.call!;
  const idJson = route.callId ?? '1';
  const { derivation } = route;
  const body = (member: Buffer) =>
    proxyAnswer(idJson, derivation === undefined ? member.toString('utf8') : derive(member.toString('utf8'), derivation));
  const fresh = state.cache.peek(resolved.cacheKey, resolved.ttlSeconds, now);
  if (fresh) {
    ctx.cache = 'HIT';
    return void sendJson(ctx, reply, 200, body(entryBody(fresh)), { 'x-cache': 'HIT' });
  }
  const fetch = () => forwardCall(chain, call, ctx.id, state.metrics, state.upstreamWarnings);
  const lifetime = lifetimeOf(chain.head, state.config.cache.finalTtlSeconds, { kind: 'call', method: call.method, params: call.params });
  const send = (entry: CacheEntry, outcome: CacheOutcome) => {
    ctx.cache = outcome;
    sendJson(ctx, reply, 200, body(entryBody(entry)), { 'x-cache': outcome });
  };
  return fillAndSend(state, ctx, reply, resolved.cacheKey, resolved.ttlSeconds, fetch, send, lifetime);
}
