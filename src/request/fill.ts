// Step 7 for every form of request that is kept in the shared cache (a route's GET, a proxy
// action, a JSON-RPC call's proxy form): the entry from the cache's other tiers or the upstream,
// identical misses coalesced; the upstream that answered (or failed) told to the request's
// context; a failure answered with its registry error (502, 504), which finish() refunds.
import type { FastifyReply } from 'fastify';
import type { CacheEntry, CacheOutcome, LifetimeOf } from '../cache/policy.js';
import { GatewayError } from '../http/errors.js';
import { sendError } from './send.js';
import type { UpstreamAnswer } from '../upstream/client.js';
import { UpstreamFailure } from '../upstream/failures.js';
import type { RequestContext } from './context.js';
import type { GatewayState } from './state.js';

export function fillAndSend(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  key: string,
  ttlSeconds: number,
  fetch: () => Promise<UpstreamAnswer>,
  send: (entry: CacheEntry, outcome: CacheOutcome) => void,
  lifetime?: LifetimeOf,
): Promise<void> {
  return state.cache.get(key, ttlSeconds, fetch, lifetime).then(
    (result) => {
      if (result.fetched) {
        ctx.upstream = result.fetched.upstream;
        ctx.upstreamMs = result.fetched.ms;
      }
      send(result.entry, result.outcome);
    },
    (err: unknown) => {
      if (!(err instanceof GatewayError)) throw err;
      if (err instanceof UpstreamFailure) {
        ctx.upstream = err.upstream;
        ctx.upstreamMs = err.ms;
        sendError(ctx, reply, err.code, err.headers);
        return;
      }
      sendError(ctx, reply, err.code);
    },
  );
}
