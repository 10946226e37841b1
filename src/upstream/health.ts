// What the gateway knows of each upstream's health, and the choices made from it: which upstream
// a request goes to first, when a read is hedged, when an upstream leaves the rotation and how it
// comes back. Pure logic on one injected clock (tests move time, never sleep); upstream/client.ts
// acts on it.
//
// The model is Envoy's outlier detection (consecutive failures eject a host for a base time
// multiplied by the number of times it was ejected:
// https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/outlier), with an
// active check before an ejected host takes traffic again (Kong's active health checks:
// https://docs.konghq.com/gateway/latest/how-kong-works/health-checks/), selection by latency
// times outstanding requests (Envoy's least-request balancer weighs outstanding requests;
// eRPC scores upstreams by latency and errors), and hedging after a percentile of recent latency
// ("The Tail at Scale", Dean and Barroso, CACM 2013: hedged requests after the 95th percentile,
// bounded to a few percent of the load).

/** How an attempt on one upstream ended (the `outcome` label of egw_upstream_attempts_total). */
export type AttemptOutcome = 'ok' | 'timeout' | '5xx' | '429' | 'refused' | 'invalid' | 'reset' | 'cancelled';

export interface EjectSettings {
  readonly failures: number;
  readonly seconds: number;
}

/** Ejections double while an upstream keeps failing, up to this. */
export const MAX_EJECT_MS = 600_000;
/** An upstream that refused a connection is left out of the rotation for this long. */
export const REFUSED_MS = 5_000;
/** A 429 without a usable Retry-After cools its upstream this long; a Retry-After is honoured up to MAX_COOL_MS. */
export const DEFAULT_COOL_MS = 1_000;
export const MAX_COOL_MS = 300_000;
/** Latencies kept per upstream for its p95. */
const RING = 64;
/** `auto` hedging needs this many samples of the upstream before it trusts their p95. */
export const MIN_SAMPLES = 8;
/** `auto` never hedges sooner than this: below it a second request costs more than it saves. */
export const MIN_AUTO_HEDGE_MS = 25;
/** EWMA weight of a new latency sample. */
const ALPHA = 0.3;
/** Another upstream is preferred to one earlier in the YAML only when its score is this much lower. */
const CLEARLY_BETTER = 0.8;

export class UpstreamHealth {
  /** Requests on this upstream now (attempts, hedges, trials, probes not included). */
  inflight = 0;
  consecutiveFailures = 0;
  /** Ejections in a row without a success in between (the back-off's exponent). */
  ejections = 0;
  ejectedUntil = 0;
  /** The ejection ended but a probe has not yet said the upstream answers again. */
  awaitingProbe = false;
  /** A probe (active, or a request sent as a trial) is in flight. */
  probing = false;
  /** A 429's Retry-After. */
  coolUntil = 0;
  /** A refused connection. */
  downUntil = 0;
  /** Whether the last connection attempt (request or probe) reached it; undefined before the first. */
  reachable: boolean | undefined;
  ewmaMs: number | undefined;
  private readonly samples: number[] = [];
  private next = 0;

  constructor(
    /** Set again by a reload (HealthBook.healthOf). */
    public eject: EjectSettings,
    private readonly now: () => number,
  ) {}

  /** In the rotation: neither ejected (nor waiting for its probe), cooling after a 429, nor refusing connections. */
  inRotation(t = this.now()): boolean {
    return !this.awaitingProbe && t >= this.ejectedUntil && t >= this.coolUntil && t >= this.downUntil;
  }

  /** When it may take traffic again (ms on the clock), for a Retry-After. */
  backAt(): number {
    return Math.max(this.ejectedUntil, this.coolUntil, this.downUntil);
  }

  /** The ejection time is over and the upstream needs its probe. */
  dueForProbe(t = this.now()): boolean {
    return this.awaitingProbe && !this.probing && t >= this.ejectedUntil;
  }

  succeeded(ms: number): void {
    this.consecutiveFailures = 0;
    this.ejections = 0;
    this.reachable = true;
    this.downUntil = 0;
    this.sample(ms);
  }

  /**
   * A failed attempt; true when it ejected the upstream. A 429 cools the upstream (and is not a
   * sign of a broken one: it counts toward no ejection); a refused connection leaves the rotation
   * for REFUSED_MS and counts as a failure like a timeout or a 5xx.
   */
  failed(outcome: Exclude<AttemptOutcome, 'ok' | 'cancelled'>, detail: { ms?: number; retryAfterMs?: number | undefined } = {}): boolean {
    const t = this.now();
    if (outcome === '429') {
      const wait = detail.retryAfterMs ?? DEFAULT_COOL_MS;
      this.coolUntil = Math.max(this.coolUntil, t + Math.min(Math.max(wait, 0), MAX_COOL_MS));
      this.reachable = true;
      return false;
    }
    if (outcome === 'refused') {
      this.reachable = false;
      this.downUntil = t + REFUSED_MS;
    } else this.reachable = true;
    // A timeout is a latency sample too: a slow upstream's p95 and score show it.
    if (outcome === 'timeout' && detail.ms !== undefined) this.sample(detail.ms);
    this.consecutiveFailures++;
    if (this.consecutiveFailures < this.eject.failures) return false;
    this.ejectNow();
    return true;
  }

  /** An attempt cancelled because a hedge answered first: as slow as it had been so far, at least. */
  outpaced(ms: number): void {
    this.sample(ms);
  }

  private ejectNow(): void {
    const base = this.eject.seconds * 1000;
    const ms = Math.min(base * 2 ** Math.min(this.ejections, 20), MAX_EJECT_MS);
    this.ejections++;
    this.consecutiveFailures = 0;
    this.ejectedUntil = this.now() + ms;
    this.awaitingProbe = true;
  }

  /** What the probe (or the trial request) found: back in the rotation, or ejected again for twice as long. */
  probed(ok: boolean): boolean {
    this.probing = false;
    if (ok) {
      this.awaitingProbe = false;
      this.consecutiveFailures = 0;
      this.downUntil = 0;
      this.reachable = true;
      // Old latencies describe the upstream before its trouble.
      this.samples.length = 0;
      this.next = 0;
      this.ewmaMs = undefined;
      return false;
    }
    this.ejectNow();
    return true;
  }

  private sample(ms: number): void {
    this.ewmaMs = this.ewmaMs === undefined ? ms : this.ewmaMs + ALPHA * (ms - this.ewmaMs);
    if (this.samples.length < RING) this.samples.push(ms);
    else this.samples[this.next] = ms;
    this.next = (this.next + 1) % RING;
  }

  /** The 95th percentile of the last RING latencies (nearest rank), undefined under MIN_SAMPLES. */
  p95(): number | undefined {
    const n = this.samples.length;
    if (n < MIN_SAMPLES) return undefined;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.min(n - 1, Math.ceil(0.95 * n) - 1)];
  }

  /**
   * Lower is better: expected latency, raised by a quarter for each request already on the
   * upstream (a damped least-request weight: on a 2-core loopback bench a full (inflight + 1)
   * factor sent a share of 16 concurrent reads to an upstream 50 times slower, whose p99 then
   * became the chain's). An upstream never measured scores 0, so it is tried.
   */
  score(): number {
    return (this.ewmaMs ?? 0) * (1 + this.inflight / 4);
  }
}

/**
 * The order in which a request tries the upstreams in the rotation: repeatedly, the first in
 * YAML order whose score is not clearly worse than the best one left (CLEARLY_BETTER), so that
 * equal upstreams keep the operator's order and a clearly faster or less loaded one goes first.
 */
export function choose<T extends { health: UpstreamHealth }>(inRotation: readonly T[]): T[] {
  const left = [...inRotation];
  const out: T[] = [];
  while (left.length > 0) {
    let best = Infinity;
    for (const t of left) best = Math.min(best, t.health.score());
    const i = left.findIndex((t) => best >= CLEARLY_BETTER * t.health.score());
    out.push(left.splice(i < 0 ? 0 : i, 1)[0]!);
  }
  return out;
}

/** When every upstream is out: the one due back first (the YAML order breaks ties), as the one trial allowed. */
export function chooseTrial<T extends { health: UpstreamHealth }>(all: readonly T[]): T | undefined {
  let pick: T | undefined;
  for (const t of all) {
    if (t.health.probing) return undefined; // one trial at a time per chain
    if (pick === undefined || t.health.backAt() < pick.health.backAt()) pick = t;
  }
  return pick;
}

/** How long to wait for `health`'s answer before hedging, or undefined for no hedge. */
export function hedgeDelayMs(setting: number | 'auto', health: UpstreamHealth): number | undefined {
  if (setting === 0) return undefined;
  if (setting !== 'auto') return setting;
  const p95 = health.p95();
  return p95 === undefined ? undefined : Math.max(p95, MIN_AUTO_HEDGE_MS);
}

/**
 * At most `percent` % of a chain's requests are hedged: each request adds percent/100 of a
 * token, a hedge takes one, and the bucket holds at most BURST (a token bucket, so a quiet chain
 * may hedge a short burst).
 */
export class HedgeBudget {
  static readonly BURST = 10;
  private tokens: number;

  constructor(private readonly percent: number) {
    this.tokens = percent > 0 ? HedgeBudget.BURST : 0;
  }

  request(): void {
    this.tokens = Math.min(HedgeBudget.BURST, this.tokens + this.percent / 100);
  }

  take(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * Health by upstream, kept across reloads: a chain rebuilt by a reload takes back the health of
 * each upstream whose URL (and so whose explorer) is unchanged (app/state.ts).
 */
export class HealthBook {
  private readonly byKey = new Map<string, UpstreamHealth>();

  healthOf(owner: string, url: string, eject: EjectSettings, now: () => number): UpstreamHealth {
    const key = `${owner} ${url}`;
    let h = this.byKey.get(key);
    if (h === undefined) {
      h = new UpstreamHealth(eject, now);
      this.byKey.set(key, h);
    } else h.eject = eject;
    return h;
  }

  /** Forgets the upstreams no chain or service lists any more (`live`: owner and URL pairs in use). */
  retain(live: Iterable<[string, string]>): void {
    const keep = new Set<string>();
    for (const [owner, url] of live) keep.add(`${owner} ${url}`);
    for (const key of this.byKey.keys()) if (!keep.has(key)) this.byKey.delete(key);
  }
}
