// /healthz says the process answers; /readyz says it can serve: a configuration is loaded and
// Redis answers when one is configured. Readiness is about this process (its listeners and
// stores): a chain whose explorers are all down is down for every replica at once, so failing
// every replica's readiness would only take the chains that still answer down with it (and
// their cached answers, served stale: issue 37). Each chain's and upstream's state is a detail
// here and a metric (egw_upstream_up). It also says whether the records' store answers. A shared store (PostgreSQL, Redis) away is away for every
// gateway, and the public path serves without it: not a condition of readiness. The embedded
// SQLite file failing (a full disk, a read-only or deleted file: store/sqlite.ts) is this
// instance's alone: it serves from memory, but what it counts may not outlive it, so it is not
// ready and a balancer sends traffic to an instance whose records are kept.

/** What readiness needs of a chain's upstreams (upstream/client.ts's ChainUpstreams). */
export interface ProbedUpstreams {
  /** At least one upstream is in the rotation. */
  readonly reachable: boolean;
  status(): Record<string, unknown>;
  probe(timeoutMs: number): Promise<void>;
}

/** What /readyz shows of a chain's head (finality/head.ts ChainHead); not a condition of readiness. */
export interface HeadView {
  readonly number: number | undefined;
  readonly depth: number;
  ageSeconds(nowMs: number): number | undefined;
}

export interface Readiness {
  ready: boolean;
  checks: {
    config: 'ok';
    redis: 'ok' | 'down' | 'not configured';
    /** The records' store: where it is and whether it answered its last ping. A condition of readiness for the embedded SQLite store only. */
    storage?: { backend: string; status: 'ok' | 'down' };
    /**
     * The services beside the explorers (a chain's stats service `stats:<id>`, `bens`, `metadata`,
     * `multichain`), when configured: shown, not a condition of readiness (the explorers' routes
     * serve without them).
     */
    services?: Record<string, { reachable: boolean; upstreams: Record<string, unknown> }>;
    chains: Record<
      string,
      {
        /** At least one upstream is in the rotation (a detail: not a condition of readiness). */
        ready: boolean;
        upstreams: Record<string, unknown>;
        /** The chain's head as last seen, how old that is, and the finality depth: null before one is seen. */
        head?: { block: number | null; ageSeconds: number | null; finalityDepth: number };
      }
    >;
  };
}

/** The stores of this instance alone, whose failure makes it not ready. */
const LOCAL_STORES: ReadonlySet<string> = new Set(['sqlite']);

/** `redisStatus`: ioredis's connection status, undefined without Redis. */
export function readiness(
  chains: Iterable<[string, { upstreams: ProbedUpstreams; head?: HeadView }]>,
  redisStatus: string | undefined,
  storage?: { backend: string; up: boolean },
  nowMs: number = Date.now(),
  services?: Iterable<[string, { upstreams: ProbedUpstreams }]>,
): Readiness {
  const checks: Readiness['checks']['chains'] = {};
  let ready = true;
  for (const [id, chain] of chains) {
    const chainReady = chain.upstreams.reachable;
    checks[id] = { ready: chainReady, upstreams: chain.upstreams.status() };
    const head = chain.head;
    if (head !== undefined) {
      const age = head.ageSeconds(nowMs);
      checks[id].head = {
        block: head.number ?? null,
        ageSeconds: age === undefined ? null : Math.round(age * 10) / 10,
        finalityDepth: head.depth,
      };
    }
  }
  const redis = redisStatus === undefined ? 'not configured' : redisStatus === 'ready' ? 'ok' : 'down';
  ready &&= redis !== 'down';
  if (storage && !storage.up && LOCAL_STORES.has(storage.backend)) ready = false;
  const stored =
    storage === undefined ? {} : { storage: { backend: storage.backend, status: storage.up ? ('ok' as const) : ('down' as const) } };
  const shown: NonNullable<Readiness['checks']['services']> = {};
  for (const [id, service] of services ?? []) shown[id] = { reachable: service.upstreams.reachable, upstreams: service.upstreams.status() };
  const servicesCheck = Object.keys(shown).length === 0 ? {} : { services: shown };
  return { ready, checks: { config: 'ok', redis, ...stored, ...servicesCheck, chains: checks } };
}

/** Probes every chain's (and service's) upstreams now and then every `intervalMs`; returns a stop function. */
export function startProbing(chains: () => Iterable<{ upstreams: ProbedUpstreams }>, intervalMs: number, timeoutMs: number): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    await Promise.all([...chains()].map((c) => c.upstreams.probe(timeoutMs)));
    if (!stopped) timer = setTimeout(() => void round(), intervalMs).unref();
  };
  void round();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
