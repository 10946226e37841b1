// Search across chains without an aggregator (contract section 9, `clusters`): a multichain route
// whose cluster is in `clusters` is answered by asking each of the cluster's chains' explorers in
// parallel (multichain/cluster-search.ts merges and pages). Each chain's call is a GET of the
// chain's own `/api/v2/search` or `/api/v2/search/quick`, kept in the shared cache and coalesced
// like any client's, under that route's TTL. The request was billed once, at its route's cost;
// a chain that fails or misses the cluster's deadline is named in the answer's `missing_chains`.
// When no chain answered at all, the request fails as an upstream failure would (refunded).
import type { FastifyReply } from 'fastify';
import { cacheKey } from '../cache/policy.js';
import { GatewayError } from '../http/errors.js';
import { answerCluster, isMultichainRoute, type ChainInfo, type ChainOutcome } from '../multichain/cluster-search.js';
import type { ClusterAsk } from '../routes/resolve.js';
import { ttlSecondsFor } from '../routes/settings.js';
import { UpstreamFailure } from '../upstream/failures.js';
import type { RequestContext } from './context.js';
import { forward } from './forward.js';
import { sendError, sendJson } from './send.js';
import type { GatewayState } from './state.js';

/** The chains a search asks: its cluster's, or for `search:quick` without one every cluster's, once each. */
function chainsOf(state: GatewayState, ask: ClusterAsk): ChainInfo[] {
  const clusters = state.config.clusters;
  const ids = ask.clusterId === undefined ? Object.values(clusters).flatMap((c) => c.chains) : (clusters[ask.clusterId]?.chains ?? []);
  return [...new Set(ids)].map((id) => ({ id, name: state.chains.get(id)?.name ?? id }));
}

/** The cluster's deadline: its own `timeoutMs`, or for `search:quick` without one the longest of them. */
function deadlineOf(state: GatewayState, ask: ClusterAsk): number {
  const clusters = state.config.clusters;
  if (ask.clusterId !== undefined) return clusters[ask.clusterId]?.timeoutMs ?? 3_000;
  return Math.max(...Object.values(clusters).map((c) => c.timeoutMs));
}

export async function clusterRequest(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  ask: ClusterAsk | undefined,
): Promise<void> {
  if (ask === undefined || !isMultichainRoute(ask.route)) return sendError(ctx, reply, 'UNKNOWN_ROUTE');
  const chains = chainsOf(state, ask);
  const askChain = async (chainId: string, path: string): Promise<ChainOutcome> => {
    const chain = state.chains.get(chainId);
    if (chain === undefined) return { ok: false, reason: 'error' };
    const route = path.startsWith('/api/v2/search/quick') ? 'search/quick' : 'search';
    const fetch = () => forward(chain, path, ctx.id, undefined, state.metrics, state.upstreamWarnings);
    try {
      const { entry } = await state.cache.get(cacheKey(chainId, path, undefined), ttlSecondsFor(state.config.cache, route), fetch);
      return { ok: true, status: entry.status, body: entry.body };
    } catch (err) {
      if (err instanceof UpstreamFailure && err.code === 'UPSTREAM_TIMEOUT') return { ok: false, reason: 'timeout' };
      if (err instanceof GatewayError) return { ok: false, reason: 'error' };
      throw err;
    }
  };
  const query = {
    ...(ask.q !== undefined ? { q: ask.q } : {}),
    ...(ask.chainIds !== undefined ? { chainIds: ask.chainIds } : {}),
    ...(ask.pageSize !== undefined ? { pageSize: ask.pageSize } : {}),
    ...(ask.pageToken !== undefined ? { pageToken: ask.pageToken } : {}),
    ...(ask.unlimitedPerChain !== undefined ? { unlimitedPerChain: ask.unlimitedPerChain } : {}),
  };
  const answer = await answerCluster(ask.route, chains, query, askChain, {
    deadlineMs: deadlineOf(state, ask),
    scope: ask.clusterId === undefined ? 'all' : 'cluster',
  });
  // Nothing to merge: every chain asked for this answer failed or missed the deadline.
  if (answer.status === 200 && answer.answered === 0 && answer.missing.length > 0) {
    return sendError(ctx, reply, answer.missing.every((m) => m.reason === 'timeout') ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR');
  }
  sendJson(ctx, reply, answer.status, answer.body);
}
