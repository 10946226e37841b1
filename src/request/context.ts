// What one request knows, filled in by the pipeline's steps in the contract's order. Each field
// is undefined until its step has run (or when the step found nothing), and says so in its type.
// Work shared by coalesced requests (one upstream fetch) reports its facts to every request that
// waited on it, through the cache's result, never into another request's context.
import type { ApiKey } from '../keys/ring.js';
import type { CacheOutcome } from '../cache/policy.js';
import type { RouteName } from '../routes/table.js';
import type { QuotaDecision } from '../quota/types.js';
import type { AnswerSource } from '../billing/rule.js';

export type { AnswerSource } from '../billing/rule.js';

export class RequestContext {
  /** The chain, once the route step found it. */
  chainId: string | undefined = undefined;
  route: RouteName | undefined = undefined;
  /** Answers use the legacy envelope (`/{chain}/api?module=...`). */
  legacy = false;
  /** A JSON-RPC path: refusals are JSON-RPC error objects (request/send.ts sendError). */
  rpc = false;
  /**
   * The CORS header lines every answer to this request carries (http/cors.ts, one shared array
   * per configuration and origin); undefined for none. Set when the request comes in.
   */
  cors: readonly string[] | undefined = undefined;
  /** The key the target's `/key/<KEY>/` prefix gave (auth/path-key.ts), taken out of the URL; undefined without one. */
  pathKey: string | undefined = undefined;
  /** The key the client's secret named, accepted or refused (403): what usage is recorded under. */
  identified: ApiKey | undefined = undefined;
  /** The key, once the key step accepted it: every answer from then on carries the quota headers. */
  key: ApiKey | undefined = undefined;
  /** The clock reading of the key step (unix ms): the instant usage is recorded at. */
  nowMs = 0;
  /** The quota store's decision; undefined before the quota step, and when the store failed. */
  decision: QuotaDecision | undefined = undefined;
  cache: CacheOutcome | undefined = undefined;
  /** The upstream that answered (or failed), and how long the fetch took, when one was asked. */
  upstream: string | undefined = undefined;
  upstreamMs: number | undefined = undefined;
  /** The status written; 0 before the answer, 499 when the client went away before it. */
  status = 0;
  /** Who wrote the status: an upstream's answer passed on, or the gateway's own (send.ts, billable). */
  answeredBy: AnswerSource = 'gateway';
  /**
   * The request's calls were billed, counted and recorded one by one (the JSON-RPC endpoint,
   * request/rpc.ts): finish() only writes its access line.
   */
  perCall = false;
  /** finish() has run. */
  finished = false;
  /** performance.now() when finish() ran, for the access line's `ms`; 0 when no line wants it. */
  finishedAt = 0;

  constructor(
    /** The request id (x-request-id). */
    readonly id: string,
    /** performance.now() when the request came in; 0 when no access log line will want it. */
    readonly startedAt: number,
  ) {}
}
