// The routes of the PRO API outside v2 (contract section 9), after the credit step: an explorer's
// own (`/{chain_id}/api/v1/search`, `/api/legacy/...`) go to the chain's explorers like a v2 GET;
// a chain's stats service and the shared services (name service, metadata, search across chains)
// to their own upstreams, with the same deadline, failover and answer checks, their answers
// cached under their own scope. A POST goes once with its JSON body, never kept. With no
// multichain aggregator configured, a cluster of `clusters` is searched by asking its chains'
// explorers (request/cluster.ts).
import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../http/errors.js';
import type { Route } from '../routes/resolve.js';
import type { Resolved } from '../routes/resolver.js';
import type { RequestContext } from './context.js';
import { fillAndSend } from './fill.js';
import { forward, postOnce } from './forward.js';
import { sendEntry } from './send.js';
import type { GatewayState, Target } from './state.js';

/** Largest JSON body a service route takes, bytes (a batch of names to resolve is a few KiB). */
export const SERVICE_MAX_BODY_BYTES = 256 * 1024;

/** The refusal of a service route whose service this gateway was not given; undefined when it can be served. */
export function serviceMissing(state: GatewayState, route: Route): ErrorCode | undefined {
  const service = route.service;
  if (service === undefined) return undefined;
  switch (service.name) {
    case 'explorer':
      return undefined;
    case 'stats':
      return state.services.has(`stats:${route.chainId}`) ? undefined : 'STATS_NOT_CONFIGURED';
    case 'bens':
      return state.services.has('bens') ? undefined : 'BENS_NOT_CONFIGURED';
    case 'metadata':
      return state.services.has('metadata') ? undefined : 'METADATA_NOT_CONFIGURED';
    case 'multichain': {
      if (state.services.has('multichain')) return undefined;
      const clusters = state.config.clusters;
      if (Object.keys(clusters).length === 0) return 'MULTICHAIN_NOT_CONFIGURED';
      const id = service.cluster?.clusterId;
      return id !== undefined && !Object.hasOwn(clusters, id) ? 'UNKNOWN_CLUSTER' : undefined;
    }
  }
}

/** Where a service route that can be served (serviceMissing) goes; undefined for a search the gateway answers itself. */
export function serviceTarget(state: GatewayState, route: Route): Target | undefined {
  const service = route.service;
  if (service === undefined || service.name === 'explorer') return state.chains.get(route.chainId);
  return state.services.get(service.name === 'stats' ? `stats:${route.chainId}` : service.name);
}

/** A GET of a service: from the cache, or the service with identical misses coalesced. */
export function serviceGet(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  target: Target,
  upstreamPath: string,
  resolved: Resolved,
  now: number,
): Promise<void> | undefined {
  const fresh = state.cache.peek(resolved.cacheKey, resolved.ttlSeconds, now);
  if (fresh) return void sendEntry(ctx, reply, fresh, 'HIT', now);
  const fetch = () => forward(target, upstreamPath, ctx.id, undefined, state.metrics, state.upstreamWarnings);
  return fillAndSend(state, ctx, reply, resolved.cacheKey, resolved.ttlSeconds, fetch, (entry, outcome) =>
    sendEntry(ctx, reply, entry, outcome, state.now()),
  );
}

/**
 * A POST of a service (`addresses:batch-resolve`, `addresses:submit`): sent once with the client's
 * JSON body (checked to be JSON before it was billed: pipeline.ts), as forward.ts postOnce sends
 * every write; the service's answer is passed on.
 */
export function servicePost(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  target: Target,
  upstreamPath: string,
  body: Buffer,
): Promise<void> {
  return postOnce(state, ctx, reply, target, upstreamPath, body, 'application/json');
}
