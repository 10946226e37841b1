// What the pipeline works with: the parts one configuration describes (keys, chains, routes,
// costs, TTLs) and the process-lifetime parts (quota step, cache, metrics, logs) they use. A
// reload builds a new state (app/state.ts); a request reads the state once, when it starts, and
// finishes with it.
import type { Logger } from 'pino';
import type { BadKeys } from '../auth/bad-keys.js';
import type { KeyRing } from '../keys/ring.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { Config } from '../config/schema.js';
import type { ChainHead } from '../finality/head.js';
import type { CorsPolicy } from '../http/cors.js';
import type { Metrics } from '../observability/metrics.js';
import type { ThrottledWarnings } from '../observability/throttled-log.js';
import type { QuotaStep } from '../quota/step.js';
import type { Resolver } from '../routes/resolver.js';
import type { ChainUpstreams } from '../upstream/client.js';
import type { UsageRecorder } from '../usage/recorder.js';
import type { CreditAlerts } from '../webhooks/credits.js';
import type { RequestContext } from './context.js';

/** Writes one line for a finished request (app/access-log.ts); finish() calls it. `url` is the request target as sent. */
export type AccessLog = (ctx: RequestContext, method: string, url: string) => void;

export interface Chain {
  id: string;
  name: string;
  /** The chain's settings as loaded, to tell on reload whether its pools can be kept. */
  fingerprint: string;
  upstreams: ChainUpstreams;
  /** The chain's head and finality depth: one per chain id for the life of the process, reloads included. */
  head: ChainHead;
}

/**
 * A service beside the explorers (routes/table.ts ServiceName): a chain's stats service
 * (`stats:<chain id>`), or `bens`, `metadata`, `multichain`. Its id names it in metrics and logs.
 */
export interface ServiceTarget {
  id: string;
  /** Its settings as loaded, to tell on reload whether its pools can be kept. */
  fingerprint: string;
  upstreams: ChainUpstreams;
}

/** What forward() needs of where a request goes: a chain's explorers or a service. */
export type Target = Pick<Chain, 'id' | 'upstreams'>;

export interface GatewayState {
  config: Config;
  keys: KeyRing;
  chains: Map<string, Chain>;
  /** The configured services, by ServiceTarget id; a service not configured is not here. */
  services: Map<string, ServiceTarget>;
  resolver: Resolver;
  quota: QuotaStep;
  cache: ResponseCache;
  now: () => number;
  /** What to do when the quota store fails: serve with -1 headers, or 503. */
  onQuotaError: 'open' | 'closed';
  metrics: Metrics;
  log: Logger;
  /** Upstream failure warnings, throttled per chain and kind. */
  upstreamWarnings: ThrottledWarnings;
  /** One line per finished request; undefined when `log.requests` is off. */
  accessLog: AccessLog | undefined;
  /** Usage rows; undefined when `usage.enabled` is off. */
  usage: UsageRecorder | undefined;
  /** CORS of the public listener, from `server.cors`: a reload applies a new one. */
  cors: CorsPolicy;
  /** Wrong keys per client address and the addresses they blocked (`security.badKeys`); one for the process, a reload reconfigures it. */
  badKeys: BadKeys;
  /** Told each decision when its request ends, for the credit webhooks (webhooks/credits.ts). */
  alerts: CreditAlerts | undefined;
}
