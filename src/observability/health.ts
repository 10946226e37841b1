// /healthz says the process answers; /readyz says it can serve: a configuration is loaded,
// Redis answers when one is configured, and every chain has an upstream that accepted its last
// connection (a request or a probe: idle upstreams are probed on an interval).
import type { GatewayState } from '../gateway.js';
import type { RedisClient } from '../redis/client.js';

export interface Readiness {
  ready: boolean;
  checks: {
    config: 'ok';
    redis: 'ok' | 'down' | 'not configured';
    chains: Record<string, { ready: boolean; upstreams: Record<string, string> }>;
  };
}

export function readiness(state: GatewayState, redis: RedisClient | undefined): Readiness {
  const chains: Readiness['checks']['chains'] = {};
  let ready = true;
  for (const [id, chain] of state.chains) {
    const chainReady = chain.upstreams.reachable;
    chains[id] = { ready: chainReady, upstreams: chain.upstreams.status() };
    ready &&= chainReady;
  }
  const redisStatus = redis === undefined ? 'not configured' : redis.status === 'ready' ? 'ok' : 'down';
  ready &&= redisStatus !== 'down';
  return { ready, checks: { config: 'ok', redis: redisStatus, chains } };
}

/** Probes every chain's upstreams now and then every `intervalMs`; returns a stop function. */
export function startProbing(getState: () => GatewayState, intervalMs: number, timeoutMs: number): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    await Promise.all([...getState().chains.values()].map((c) => c.upstreams.probe(timeoutMs)));
    if (!stopped) timer = setTimeout(() => void round(), intervalMs).unref();
  };
  void round();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
