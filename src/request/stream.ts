// The routes whose answers are passed through as they arrive, never buffered or cached: the CSV
// exports, whose bodies can be large. @fastify/reply-from (what @fastify/http-proxy is built on)
// streams them, on undici. What reaches the explorer is still only what the pipeline rebuilt:
// the path and query of the route's template and validated values, and headers made from
// scratch; what reaches the client is the explorer's status and passable headers, the body as
// it comes, and the gateway's own request id, quota and CORS headers.
import type {} from '@fastify/reply-from'; // reply.from()
import type { FastifyReply, FastifyRequest } from 'fastify';
import { addCorsHeaders } from '../http/cors.js';
import { H_REQUEST_ID, H_SCAM, passableHeaders } from '../http/headers.js';
import { quotaHeaders, sendError } from './send.js';
import { classify, UpstreamFailure, UpstreamStatus } from '../upstream/failures.js';
import type { RequestContext } from './context.js';
import { reportFailure, statusProblem, USER_AGENT } from './forward.js';
import type { Chain, GatewayState } from './state.js';

/** Settles when the answer has been sent (or the client went away), so that finish() runs then. */
export function stream(
  state: GatewayState,
  ctx: RequestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  chain: Chain,
  upstreamPath: string,
  showScam: string | undefined,
): Promise<void> {
  const q = upstreamPath.indexOf('?');
  const { name, url, authorization } = chain.upstreams.streamTarget(q === -1 ? upstreamPath : upstreamPath.slice(0, q));
  // The chain's upstreamApiKey (if any) is in `url`'s query; the route's own parameters follow it.
  const [source, keyParam = ''] = url.split('?', 2);
  const query = [keyParam, q === -1 ? '' : upstreamPath.slice(q + 1)].filter((s) => s !== '').join('&');
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  ctx.upstream = name;

  return new Promise<void>((resolve) => {
    const done = () => {
      ctx.upstreamMs ??= elapsed();
      // The client went away before an answer could be written (nginx's 499).
      if (ctx.status === 0) ctx.status = 499;
      resolve();
    };
    reply.raw.once('close', done);
    const failed = (failure: UpstreamFailure) => {
      reportFailure(chain, failure, ctx.id, state.metrics, state.upstreamWarnings);
      const cause = failure.cause;
      if (failure.rule.outcome !== undefined)
        chain.upstreams.reportStream(name, failure.rule.outcome, {
          ms: elapsed(),
          retryAfterMs: cause instanceof UpstreamStatus ? cause.retryAfterMs : undefined,
        });
      ctx.upstreamMs = elapsed();
      sendError(
        ctx,
        reply,
        failure.code,
        failure.code === 'UPSTREAM_BUSY' ? { 'retry-after': String(chain.upstreams.retryAfterSeconds()) } : undefined,
      );
      done();
    };
    reply.from(source, {
      method: request.method === 'HEAD' ? 'HEAD' : 'GET',
      // Never the client's query (reply-from would pass it on when this one is empty).
      queryString: () => query,
      timeout: chain.upstreams.timeoutMs,
      // No retries: reply-from would repeat a GET that got 503 (its default), and a request that
      // reached an explorer is never repeated on one already in trouble.
      retryDelay: () => null,
      rewriteRequestHeaders: (_req, headers) => {
        const own: Record<string, string> = { accept: 'text/csv, application/json', 'user-agent': USER_AGENT, [H_REQUEST_ID]: ctx.id };
        if (typeof headers.host === 'string') own.host = headers.host;
        if (showScam !== undefined) own[H_SCAM] = showScam;
        if (authorization !== undefined) own.authorization = authorization;
        return own;
      },
      rewriteHeaders: (headers) => {
        const out = passableHeaders(headers);
        out[H_REQUEST_ID] = ctx.id;
        Object.assign(out, quotaHeaders(ctx, 200)); // rewritten in onResponse with the status
        if (ctx.cors !== undefined) addCorsHeaders(out, ctx.cors);
        return out;
      },
      onResponse: (_req, _reply, res) => {
        state.metrics.upstream(chain.id, name, elapsed() / 1000);
        const status = statusProblem(
          res.statusCode,
          (res as unknown as { headers: Record<string, string | string[] | undefined> }).headers,
        );
        if (status !== undefined) {
          // Not passed on (its body and Location neither): 502, refunded by finish().
          res.stream.resume();
          failed(new UpstreamFailure(classify(status), { cause: status, upstream: name }));
          return;
        }
        chain.upstreams.reportStream(name, 'ok', { ms: elapsed() });
        ctx.status = res.statusCode;
        ctx.answeredBy = 'upstream';
        ctx.upstreamMs = elapsed();
        // rewriteHeaders ran before the status was known: the balance as this status bills it
        // (a 400 or 422 of the explorer's is refunded, send.ts billable).
        void reply.headers(quotaHeaders(ctx, res.statusCode)).send(res.stream);
      },
      onError: (_reply, { error }) => failed(new UpstreamFailure(classify(error), { cause: error, upstream: name })),
    });
  });
}
