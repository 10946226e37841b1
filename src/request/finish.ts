// The one place a request ends: after its answer was written, finish() settles its credits
// (billing/settle.ts: an answer that is not billable is refunded whole), feeds the metrics and
// writes its access-log line. It runs once per request,
// whichever way the request ended (answered at once, after the store or the upstream, or by the
// error handler), as a direct call: no response listeners on the hot path.
import { chargedFor } from '../billing/rule.js';
import { settle } from '../billing/settle.js';
import type { RequestContext } from './context.js';
import type { GatewayState } from './state.js';

export function finish(state: GatewayState, ctx: RequestContext, method: string, url: string): void {
  if (ctx.finished) return;
  ctx.finished = true;
  if (ctx.perCall) {
    state.accessLog?.(ctx, method, url);
    return;
  }
  const { decision: d, key } = ctx;
  let charged = 0;
  const { metrics } = state;
  metrics.request(ctx.chainId ?? 'none', ctx.route ?? 'none', ctx.status);
  if (key !== undefined) {
    if (d !== undefined) {
      charged = d.billed > 0 ? chargedFor(d.billed, ctx.status, ctx.answeredBy) : 0;
      // The usage row, for what is given back or owed (no object on a request charged as decided).
      const usage =
        (charged < d.billed || d.local) && ctx.chainId !== undefined && ctx.route !== undefined
          ? { nowMs: ctx.nowMs, keyId: key.id, account: key.usageAccount, chain: ctx.chainId, route: ctx.route }
          : undefined;
      settle(state, key, d, charged, ctx.status, ctx.nowMs, usage);
    }
    if (ctx.status === 429) metrics.refused(key.planName, 'rate_limited');
    else if (ctx.status === 402) metrics.refused(key.planName, 'out_of_credits');
  }
  const named = ctx.identified;
  if (state.usage !== undefined && named !== undefined && ctx.route !== undefined && ctx.chainId !== undefined) {
    const hit = ctx.cache === 'HIT' || ctx.cache === 'STALE';
    state.usage.record(ctx.nowMs, named.id, named.usageAccount, ctx.chainId, ctx.route, ctx.status, charged, hit);
  }
  state.accessLog?.(ctx, method, url);
}
