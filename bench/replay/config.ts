// The gateway configuration of each replay run: one chain on the fixture explorer, one key whose
// plan refuses nothing, in-process stores, an operations listener for /metrics. The two runs
// differ in one setting: `cache.finalTtlSeconds: 0` keeps every answer for its route's TTL (the
// gateway before finality-aware caching); the finality-aware run keeps the default.
import { configSchema, type Config } from '../../src/config/schema.js';
import { REPLAY_CHAIN } from './requests.js';

export type ReplayMode = 'fixed' | 'finality';
export const REPLAY_MODES: readonly ReplayMode[] = ['fixed', 'finality'];
export const MODE_TITLES: Readonly<Record<ReplayMode, string>> = { fixed: 'fixed TTLs', finality: 'finality-aware' };

/** The bench's key, sent as `Authorization: Bearer`. */
export const REPLAY_KEY = 'replay-bench-key';

export interface GatewaySettings {
  /** `chains.1.finality.depth`: small, so that blocks become final within the replay. */
  depth: number;
  /** `chains.1.head.pollSeconds`. */
  pollSeconds: number;
  /** `cache.maxBytes`; undefined: the gateway's default. */
  maxBytes?: number | undefined;
}

/** What the configuration file would say, before the schema's defaults. */
export function replayConfigInput(upstream: string, mode: ReplayMode, s: GatewaySettings): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    chains: {
      [REPLAY_CHAIN]: {
        name: 'Replay',
        upstreams: [upstream],
        timeoutMs: 10_000,
        head: { pollSeconds: s.pollSeconds },
        finality: { depth: s.depth },
      },
    },
    plans: { replay: { rps: 10_000_000, credits: 1_000_000_000, period: 'daily' } },
    keys: [{ name: 'replay', key: REPLAY_KEY, plan: 'replay' }],
    log: { level: 'error', requests: false },
    storage: { path: ':memory:' },
    metrics: { enabled: true, port: 0, host: '127.0.0.1' },
    health: { probeIntervalMs: 3_600_000 },
    cache: { ...(mode === 'fixed' ? { finalTtlSeconds: 0 } : {}), ...(s.maxBytes === undefined ? {} : { maxBytes: s.maxBytes }) },
  };
}

/** The parsed configuration; a gateway that does not know finality-aware caching yet refuses it, and says which key. */
export function replayConfig(upstream: string, mode: ReplayMode, s: GatewaySettings): Config {
  const parsed = configSchema.safeParse(replayConfigInput(upstream, mode, s));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`the gateway refused the replay's configuration (${issues}): does it have finality-aware caching yet?`);
  }
  return parsed.data;
}
