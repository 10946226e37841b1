// The miss path's upstream request: the headers an explorer gets, the checks its answer must
// pass before anyone is given it or it is kept, and the failure reported once per fetch
// (metrics, a throttled warning), not once per coalesced waiter.
import { H_REQUEST_ID, H_SCAM } from '../http/headers.js';
import { isJson } from '../http/json-check.js';
import type { Metrics } from '../observability/metrics.js';
import type { ThrottledWarnings } from '../observability/throttled-log.js';
import type { FastifyReply } from 'fastify';
import type { UpstreamAnswer } from '../upstream/client.js';
import { retryAfterMs, UpstreamFailure, UpstreamInvalidBody, UpstreamStatus } from '../upstream/failures.js';
import type { RequestContext } from './context.js';
import { sendError, sendJson } from './send.js';
import type { Chain, GatewayState, Target } from './state.js';
import type { CheckedCall } from '../rpc/methods.js';
import { upstreamBody, upstreamMember } from '../rpc/protocol.js';
import { UPSTREAM_RPC_PATH } from '../routes/resolve.js';

export const USER_AGENT = 'explorer-gateway/0.1 (+https://github.com/blockscout)';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * A 5xx, a 3xx or a 429 is never passed on, streamed (request/stream.ts) or read whole: an
 * explorer's 429 is its own rate limit, not the client's (issue 37), so the request is tried on
 * the next upstream and that one cools for its Retry-After.
 */
export function statusProblem(status: number, headers?: Record<string, string | string[] | undefined>): UpstreamStatus | undefined {
  if (status === 429) return new UpstreamStatus(429, retryAfterMs(headers?.['retry-after'], Date.now()));
  return status >= 500 || (status >= 300 && status < 400) ? new UpstreamStatus(status) : undefined;
}

/**
 * Why an answer must not be passed on, or undefined when it may be. Every route that is read
 * whole is JSON in Blockscout's documents (spec/), so a 2xx must be JSON that parses (isJson,
 * JSON.parse's verdict without building anything): an HTML
 * page or a truncated body from a broken explorer or a proxy in front of it is a 502, never an
 * entry served to everyone. A 5xx or a 3xx is a 502 too; a 4xx is Blockscout's own answer to
 * the request (404, 422) and passes as it is.
 */
export function answerProblem(answer: Pick<UpstreamAnswer, 'status' | 'headers' | 'body'>): Error | undefined {
  const { status } = answer;
  const problem = statusProblem(status, answer.headers);
  if (problem !== undefined) return problem;
  if (status < 200 || status >= 300 || status === 204) return undefined;
  const type = answer.headers['content-type'];
  if (typeof type !== 'string' || !JSON_TYPE.test(type)) return new UpstreamInvalidBody(`a ${status} answer of type ${String(type)}`);
  if (!isJson(answer.body)) return new UpstreamInvalidBody(`a ${status} answer whose body is not JSON`);
  return undefined;
}

/**
 * One request to the chain's explorers. Request headers are built from scratch: nothing of the
 * client's is forwarded but show-scam-tokens, which changes token results (contract section 5).
 * An answer with a problem (answerProblem) is a failure: its body is not passed on, and it is
 * never cached.
 */
export async function forward(
  chain: Target,
  path: string,
  requestId: string,
  showScam: string | undefined,
  metrics: Metrics,
  warnings: ThrottledWarnings,
): Promise<UpstreamAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT, [H_REQUEST_ID]: requestId };
  if (showScam !== undefined) headers[H_SCAM] = showScam;
  try {
    // Each attempt's time is observed per upstream by the executor (upstream/client.ts observer).
    return await chain.upstreams.request({ path, method: 'GET', headers, check: answerProblem });
  } catch (err) {
    if (err instanceof UpstreamFailure) reportFailure(chain, err, requestId, metrics, warnings);
    throw err;
  }
}

/** Counted every time; logged at most once per interval for a chain and kind. */
export function reportFailure(
  chain: Target,
  failure: UpstreamFailure,
  requestId: string,
  metrics: Metrics,
  warnings: ThrottledWarnings,
): void {
  metrics.upstreamError(chain.id, failure.kind);
  warnings.warn(`${chain.id} ${failure.kind}`, failure.cause ?? failure.code, {
    reqId: requestId,
    code: failure.code,
    kind: failure.kind,
    chain: chain.id,
    upstream: failure.upstream,
  });
}

/** An answer the cache must not keep (RFC 9111 5.2.2.5), for a JSON-RPC member that is an error or null. */
const NO_STORE: Record<string, string> = { 'cache-control': 'no-store' };

/**
 * One JSON-RPC call to the chain's explorers (`/api/eth-rpc`). The answer is re-addressed for
 * each client, so what is kept is its member (`"result":...` or `"error":{...}`: rpc/protocol.ts),
 * as the body of a 200 answer; an error or a null result is marked no-store. Anything but a 200
 * with a JSON-RPC answer is a failure (502), as for every other route; a connection that was never
 * made is tried on the next upstream, a request that was sent is never sent again (a raw
 * transaction reaches an explorer at most once).
 */
export async function forwardCall(
  chain: Chain,
  call: CheckedCall,
  requestId: string,
  metrics: Metrics,
  warnings: ThrottledWarnings,
): Promise<UpstreamAnswer> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [H_REQUEST_ID]: requestId,
  };
  // The member is read once, by the check that accepts the answer, and kept with that answer.
  const members = new WeakMap<UpstreamAnswer, NonNullable<ReturnType<typeof upstreamMember>>>();
  const check = (answer: UpstreamAnswer): Error | undefined => {
    const problem = answerProblem(answer);
    if (problem !== undefined) return problem;
    const member = answer.status === 200 ? upstreamMember(answer.body) : undefined;
    if (member === undefined) return new UpstreamInvalidBody(`a ${answer.status} answer to a JSON-RPC call that is no JSON-RPC answer`);
    members.set(answer, member);
    return undefined;
  };
  try {
    const answer = await chain.upstreams.request({
      path: UPSTREAM_RPC_PATH,
      method: 'POST',
      headers,
      body: upstreamBody(call),
      check,
      // A raw transaction reaches an explorer at most once.
      write: call.method === 'eth_sendRawTransaction',
    });
    const m = members.get(answer)!;
    return { ...answer, headers: m.storable ? {} : NO_STORE, body: Buffer.from(m.member, 'utf8') };
  } catch (err) {
    if (err instanceof UpstreamFailure) reportFailure(chain, err, requestId, metrics, warnings);
    throw err;
  }
}

/**
 * A write sent once (contract verification, a service's POST): the body goes to `target` as a
 * POST, never cached or coalesced, never to a second upstream once one may have received it
 * (upstream/client.ts fails over only when no connection was made). The answer is passed on when
 * answerProblem() lets it; a failed upstream is the usual 502 or 504, refunded by finish().
 */
export async function postOnce(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  target: Target,
  path: string,
  body: Buffer,
  contentType: string,
): Promise<void> {
  const headers = { accept: 'application/json', 'content-type': contentType, 'user-agent': USER_AGENT, [H_REQUEST_ID]: ctx.id };
  try {
    const answer = await target.upstreams.request({ path, method: 'POST', headers, body, check: answerProblem, write: true });
    ctx.upstream = answer.upstream;
    ctx.upstreamMs = answer.ms;
    ctx.answeredBy = 'upstream';
    sendJson(ctx, reply, answer.status, answer.body.toString('utf8'));
  } catch (err) {
    if (!(err instanceof UpstreamFailure)) throw err;
    reportFailure(target, err, ctx.id, state.metrics, state.upstreamWarnings);
    ctx.upstream = err.upstream;
    ctx.upstreamMs = err.ms;
    sendError(ctx, reply, err.code, err.headers);
  }
}
