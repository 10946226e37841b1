// From a configuration to the state the pipeline works with (request/state.ts), and reload: a
// new configuration becomes a new state for new requests, while requests in flight finish with
// the one they started with. Chains whose settings did not change keep their connection pools;
// the pools of changed or removed chains close once the requests that chose them had time to.
import { BadKeys } from '../auth/bad-keys.js';
import { plansMissing, PlansInUseError } from '../keys/plan-use.js';
import { KeyRing } from '../keys/ring.js';
import type { Config, ServiceConfig } from '../config/schema.js';
import { finalityDepth } from '../finality/depth.js';
import { ChainHead } from '../finality/head.js';
import { corsPolicy } from '../http/cors.js';
import { accessLog } from './access-log.js';
import type { AccessLog, Chain, GatewayState, ServiceTarget } from '../request/state.js';
import { Resolver } from '../routes/resolver.js';
import { ChainUpstreams, type ChainUpstreamsOptions } from '../upstream/client.js';
import { EXPLORER_PROBE, SERVICE_PROBE } from '../upstream/probes.js';
import type { Resources } from './resources.js';

/** After a reload, a retired chain's pool stays open this long past its timeoutMs. */
const RETIRED_POOL_GRACE_MS = 5_000;

/**
 * Chains of a new configuration; a chain whose settings did not change keeps its pools. A chain's
 * head outlives reloads (`heads`, one per chain id): the depth and poll interval are reconfigured.
 */
function buildChains(
  config: Config,
  upstreams: Omit<ChainUpstreamsOptions, 'owner' | 'probe'>,
  heads: Map<string, ChainHead>,
  previous?: Map<string, Chain>,
): { chains: Map<string, Chain>; retired: Chain[] } {
  const chains = new Map<string, Chain>();
  for (const [id, settings] of Object.entries(config.chains)) {
    const old = previous?.get(id);
    const fingerprint = JSON.stringify(settings);
    let head = heads.get(id);
    const depth = finalityDepth(id, settings.finality.depth);
    if (head === undefined) heads.set(id, (head = new ChainHead(id, depth, settings.head.pollSeconds)));
    head.depth = depth;
    head.pollSeconds = settings.head.pollSeconds;
    chains.set(
      id,
      old && old.fingerprint === fingerprint
        ? { ...old, name: settings.name }
        : {
            id,
            name: settings.name,
            fingerprint,
            upstreams: new ChainUpstreams(settings, { ...upstreams, owner: id, probe: EXPLORER_PROBE }),
            head,
          },
    );
  }
  const retired = [...(previous?.values() ?? [])].filter((c) => chains.get(c.id)?.upstreams !== c.upstreams);
  return { chains, retired };
}

/** Every configured service (request/state.ts ServiceTarget); one whose settings did not change keeps its pools. */
function buildServices(
  config: Config,
  upstreams: Omit<ChainUpstreamsOptions, 'owner' | 'probe'>,
  previous?: Map<string, ServiceTarget>,
): { services: Map<string, ServiceTarget>; retired: ServiceTarget[] } {
  const services = new Map<string, ServiceTarget>();
  const add = (id: string, settings: ServiceConfig | undefined) => {
    if (settings === undefined) return;
    const fingerprint = JSON.stringify(settings);
    const old = previous?.get(id);
    services.set(
      id,
      old && old.fingerprint === fingerprint
        ? old
        : { id, fingerprint, upstreams: new ChainUpstreams(settings, { ...upstreams, owner: id, probe: SERVICE_PROBE }) },
    );
  };
  for (const [id, chain] of Object.entries(config.chains)) add(`stats:${id}`, chain.stats);
  add('bens', config.services.bens);
  add('metadata', config.services.metadata);
  add('multichain', config.services.multichain);
  const retired = [...(previous?.values() ?? [])].filter((s) => services.get(s.id)?.upstreams !== s.upstreams);
  return { services, retired };
}

export class GatewayStates {
  /** The state new requests see. */
  current: GatewayState;
  /** Pools of chains a reload changed or removed, waiting to be closed. */
  private readonly retiring = new Map<NodeJS.Timeout, Pick<Chain, 'upstreams'>>();
  private readonly lines: AccessLog;
  /** Outlives reloads: a reload must not lift the blocks made (it reconfigures them). */
  private readonly badKeys: BadKeys;
  /** Each chain's head, kept across reloads. */
  private readonly heads = new Map<string, ChainHead>();

  constructor(
    private readonly resources: Resources,
    /** The configuration the process started with: `onError` and the restart-only sections are its. */
    private readonly started: Config,
  ) {
    this.lines = accessLog(resources.log, resources.logOutput);
    this.badKeys = new BadKeys(started.security.badKeys);
    this.current = this.make(started).state;
    // The keys whose expiry webhooks are told of: the current ring's, configured and run-time.
    resources.webhooks.keys = () => this.current.keys.all().flatMap((k) => (k.key === undefined ? [] : [k.key]));
    // A run-time key created, changed or revoked (by any process) reaches the current ring.
    resources.applyKeyChange = (change) => {
      if ('put' in change) this.current.keys.put(change.put);
      else if ('remove' in change) this.current.keys.remove(change.remove);
      // A plan or account changed: a ring of its own for the next requests (they are few, keys many).
      else this.current.keys = new KeyRing(this.current.config, resources.runtime.records.values(), resources.runtime);
    };
  }

  private make(config: Config, previous?: GatewayState): { state: GatewayState; retired: Pick<Chain, 'upstreams'>[] } {
    const r = this.resources;
    const upstreams = { now: r.now, book: r.upstreamHealth, observer: r.metrics };
    const built = buildChains(config, upstreams, this.heads, previous?.chains);
    const { chains } = built;
    const { services, retired: retiredServices } = buildServices(config, upstreams, previous?.services);
    // Health is kept for the upstreams still listed (by owner and URL), forgotten for the others.
    r.upstreamHealth.retain([...chains.values(), ...services.values()].flatMap((c) => c.upstreams.healthKeys()));
    r.upstreamsNow = () => [...chains.values(), ...services.values()];
    const retired: Pick<Chain, 'upstreams'>[] = [...built.retired, ...retiredServices];
    const state: GatewayState = {
      config,
      keys: new KeyRing(config, r.runtime.records.values(), r.runtime),
      chains,
      services,
      resolver: new Resolver(chains, config),
      quota: r.quota,
      cache: r.cache,
      now: r.now,
      onQuotaError: this.started.redis?.onError ?? 'open',
      metrics: r.metrics,
      log: r.log,
      upstreamWarnings: r.upstreamWarnings,
      accessLog: config.log.requests ? this.lines : undefined,
      usage: r.usage,
      cors: corsPolicy(config.server.cors),
      badKeys: this.badKeys,
      alerts: r.webhooks.credits,
    };
    r.webhooks.configure(config.webhooks, config.security);
    return { state, retired };
  }

  /** Swaps in a new configuration for new requests; returns what it could not apply without a restart. */
  reload(next: Config): string[] {
    const now = this.current.config;
    // A plan the running configuration has, that run-time keys or accounts are on, may not be
    // taken away: refused as the admin API refuses deleting it (409 PLAN_IN_USE). A plan already
    // missing before (the operator's to restore) does not hold other changes back.
    const runtime = this.resources.runtime;
    const inUse = plansMissing(next.plans, runtime.plans, runtime.records.values(), runtime.accounts).filter((u) =>
      Object.hasOwn(now.plans, u.plan),
    );
    if (inUse.length > 0) throw new PlansInUseError(inUse);
    const notApplied: string[] = [];
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    // server.cors is part of the state (the next requests answer with it); the rest of server is not.
    if (!same({ ...next.server, cors: undefined }, { ...now.server, cors: undefined }))
      notApplied.push('server (host, port, watchConfig, shutdownTimeoutMs)');
    if (!same(next.redis, now.redis)) notApplied.push('redis');
    // redis.volatile too: it judges a start. Turned off on a Redis that keeps nothing, the next
    // start will be refused, and the log says so now.
    if (this.started.redis?.volatile && next.redis && !next.redis.volatile) void this.resources.checkNextStart(next);
    if (!same(next.metrics, now.metrics)) notApplied.push('metrics');
    if (!same(next.health, now.health)) notApplied.push('health');
    if (!same(next.admin, now.admin)) notApplied.push('admin');
    if (!same(next.storage, now.storage)) notApplied.push('storage');
    if (!same(next.usage, now.usage)) notApplied.push('usage');
    if (next.cache.maxBytes !== now.cache.maxBytes || next.cache.staleSeconds !== now.cache.staleSeconds) {
      this.resources.cache = this.resources.newCache(next); // a new budget or stale window starts an empty in-process tier
    }
    this.resources.log.level = next.log.level;
    this.badKeys.configure(next.security.badKeys);
    const { state, retired } = this.make(next, this.current);
    this.current = state;
    // Requests in flight keep the old state, and may not have reached their pool yet (waiting
    // on a quota decision or the shared tier): a retired pool closes once they have had time to.
    for (const c of retired) {
      const timer = setTimeout(() => {
        this.retiring.delete(timer);
        void c.upstreams.close();
      }, c.upstreams.timeoutMs + RETIRED_POOL_GRACE_MS);
      timer.unref();
      this.retiring.set(timer, c);
    }
    return notApplied;
  }

  async close(): Promise<void> {
    for (const timer of this.retiring.keys()) clearTimeout(timer);
    const all = [...this.current.chains.values(), ...this.current.services.values(), ...this.retiring.values()];
    await Promise.all(all.map((c) => c.upstreams.close()));
  }
}
