// The one place a request ends: after its answer was written, finish() settles its credits (an
// answer that is not billable, send.ts, is refunded whole), feeds the metrics and writes its access-log line. It runs once per request,
// whichever way the request ended (answered at once, after the store or the upstream, or by the
// error handler), as a direct call: no response listeners on the hot path.
import { chargedFor } from './send.js';
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
  if (d !== undefined && key !== undefined && d.billed > 0) {
    charged = chargedFor(d.billed, ctx.status, ctx.answeredBy);
    const usage =
      ctx.chainId !== undefined && ctx.route !== undefined
        ? { nowMs: ctx.nowMs, keyId: key.id, account: key.usageAccount, chain: ctx.chainId, route: ctx.route }
        : undefined;
    // Decided while the store was away: owed to it, or back to the local allowance (quota/outage.ts).
    if (d.local) state.quota.settleLocal(key, d, charged, usage);
    // All of it back, to the buckets it came from (all or nothing), once: finish() runs once.
    else if (charged < d.billed)
      state.quota.refund({ account: key.account, periodId: d.periodId, amount: d.billed, fromTopup: d.fromTopup, usage });
  }
  const { metrics } = state;
  metrics.request(ctx.chainId ?? 'none', ctx.route ?? 'none', ctx.status);
  if (key !== undefined) {
    if (d !== undefined && !d.local) state.alerts?.decided(key, d, ctx.status, ctx.nowMs);
    if (charged > 0) metrics.spent(key.planName, key.name, charged);
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
