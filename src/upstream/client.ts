// The explorers behind one chain: keep-alive undici pools, and the executor that gets one
// request answered by them (issue 37): the healthiest and fastest upstream first (health.ts), a
// read tried again on the next upstream after a timeout of its share of the deadline, a failed
// connection, a 5xx, a 429 or an answer that fails its checks, a read hedged when its upstream is
// slower than usual, a write sent once. One deadline per request, failures mapped to typed errors.
//
// undici is the engine under @fastify/reply-from and @fastify/http-proxy; it is used directly
// here because an answer must be read whole so that the cache and every coalesced waiter can
// share it, and because what is tried next is decided per failure (failures.ts).
import { connect } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { passableHeaders } from '../http/headers.js';
import { AttemptTimedOut, classify, DeadlinePassed, NoUpstreamAvailable, UpstreamFailure, UpstreamStatus } from './failures.js';
import type { UpstreamHealth } from './health.js';
import { choose, chooseTrial, HedgeBudget, HealthBook, hedgeDelayMs, type AttemptOutcome } from './health.js';

/** `chains.<id>.failover` (config/schema.ts failoverSchema, contract section 10). */
export interface FailoverConfig {
  readonly attemptTimeoutMs?: number | undefined;
  readonly hedgeAfterMs: number | 'auto';
  readonly hedgeMaxPercent: number;
  readonly eject: { readonly failures: number; readonly seconds: number };
}

const MAX_CONNECT_TIMEOUT_MS = 3_000;
/** Sockets one upstream's pool may open (http/connections.ts keeps file descriptors for them). */
export const POOL_CONNECTIONS = 128;
/** An active probe's own deadline, at most. */
const MAX_PROBE_MS = 5_000;

export interface UpstreamAnswer {
  status: number;
  /** Headers that may reach the client (hop-by-hop and upstream quota headers removed). */
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** Name of the upstream that answered (upstreamNames(): its host, never its credentials). */
  upstream: string;
  /** How long the request took, every attempt included, ms. */
  ms: number;
}

export interface UpstreamRequest {
  /** Path and canonical query, e.g. `/api/v2/addresses/0x…/transactions?filter=to`. */
  path: string;
  /** GET for reads; POST for JSON-RPC calls and contract verification, with `body`. */
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The request body of a POST, sent as it is (its content-type is in `headers`). */
  body?: string | Buffer | undefined;
  /**
   * Why an answer must not be passed on (request/forward.ts answerProblem and the route's own
   * checks), or undefined: an answer with a problem is a failed attempt, tried elsewhere when the
   * request may be.
   */
  check?: ((answer: UpstreamAnswer) => Error | undefined) | undefined;
  /**
   * A write (eth_sendRawTransaction, a verification, a service's POST): sent once, never hedged,
   * tried on another upstream only when no connection could be made.
   */
  write?: boolean | undefined;
}

/** The request an active probe sends to an upstream back from an ejection; a 200 with JSON passes. */
export interface ProbeRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** What the executor tells the metrics (app/resources.ts wires it to observability/metrics.ts). */
export interface UpstreamObserver {
  /** An attempt ended; `seconds` is how long it took (none for one cancelled by a hedge's answer). */
  attempt(owner: string, upstream: string, outcome: AttemptOutcome, seconds?: number): void;
  hedge(owner: string, outcome: 'won' | 'lost' | 'cancelled' | 'denied'): void;
  ejected(owner: string, upstream: string): void;
  /** The upstreams of an owner, so that its counters are exported from zero (a rate needs a first sample). */
  declare?(owner: string, upstreams: readonly string[]): void;
}

interface Target {
  /** What logs, metrics and /readyz call it: host[:port], never credentials, path or query. */
  name: string;
  base: string;
  origin: string;
  /** Basic credentials from the URL's user:password@, sent on every request as a browser would. */
  authorization: string | undefined;
  pool: Pool;
  host: string;
  port: number;
  pathPrefix: string;
  health: UpstreamHealth;
}

/** What a chain's pools are made from: the parts read here of its entry in `chains` (config/schema.ts chainSchema). */
export interface ChainTarget {
  readonly upstreams: readonly string[];
  /** Sent upstream as `apikey`; undefined or empty for none. */
  readonly upstreamApiKey?: string | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly failover?: FailoverConfig | undefined;
}

export interface ChainUpstreamsOptions {
  now?: () => number;
  /** Where health is kept across reloads; a private one when absent. */
  book?: HealthBook;
  /** The chain id or service name: the owner of the upstreams' health, and the `chain` label of metrics. */
  owner?: string;
  /** The request that tells an ejected upstream answers again; without one, a TCP connection does. */
  probe?: ProbeRequest;
  observer?: UpstreamObserver;
}

const DEFAULT_FAILOVER: FailoverConfig = { hedgeAfterMs: 'auto', hedgeMaxPercent: 10, eject: { failures: 5, seconds: 30 } };

/** The state of one upstream, as /readyz and the console show it. */
export interface UpstreamView {
  state: 'up' | 'ejected' | 'cooling' | 'refusing' | 'probing' | 'unknown';
  /** Seconds until it may take traffic again, when out of the rotation. */
  backInSeconds?: number;
  ejections?: number;
  p95Ms?: number;
}

export class ChainUpstreams {
  private readonly targets: Target[];
  readonly timeoutMs: number;
  readonly owner: string;
  readonly failover: FailoverConfig;
  private readonly apiKeyParam: string;
  readonly now: () => number;
  private readonly budget: HedgeBudget;
  private readonly probeRequest: ProbeRequest | undefined;
  readonly observer: UpstreamObserver | undefined;
  /** Each attempt's share of the deadline when another upstream is left to try. */
  readonly attemptMs: number;

  constructor(chain: ChainTarget, options: ChainUpstreamsOptions | (() => number) = {}) {
    const opts = typeof options === 'function' ? { now: options } : options;
    this.now = opts.now ?? Date.now;
    this.owner = opts.owner ?? '';
    this.observer = opts.observer;
    this.probeRequest = opts.probe;
    this.timeoutMs = chain.timeoutMs;
    this.failover = chain.failover ?? DEFAULT_FAILOVER;
    this.attemptMs = this.failover.attemptTimeoutMs ?? Math.max(1, Math.floor(chain.timeoutMs / chain.upstreams.length));
    this.budget = new HedgeBudget(this.failover.hedgeMaxPercent);
    this.apiKeyParam = chain.upstreamApiKey ? `apikey=${encodeURIComponent(chain.upstreamApiKey)}` : '';
    const book = opts.book ?? new HealthBook();
    const names = upstreamNames(chain.upstreams);
    this.observer?.declare?.(this.owner, names);
    this.targets = chain.upstreams.map((base, i) => {
      const url = new URL(base);
      return {
        name: names[i]!,
        base,
        origin: url.origin,
        authorization: basicAuthorization(url),
        host: url.hostname,
        port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        pathPrefix: url.pathname.replace(/\/+$/, ''),
        health: book.healthOf(this.owner, base, this.failover.eject, this.now),
        pool: new Pool(url.origin, {
          connections: POOL_CONNECTIONS,
          pipelining: 1,
          connect: { timeout: Math.min(chain.timeoutMs, MAX_CONNECT_TIMEOUT_MS) },
          // The deadline and the attempt's share are what clients see; these only stop a stuck socket.
          headersTimeout: chain.timeoutMs + 1_000,
          bodyTimeout: chain.timeoutMs + 1_000,
          maxResponseSize: chain.maxResponseBytes,
        }),
      };
    });
  }

  /** The upstreams' URLs with their owner, for HealthBook.retain(). */
  healthKeys(): [string, string][] {
    return this.targets.map((t) => [this.owner, t.base]);
  }

  /**
   * One request to the chain's upstreams (see the file's head); any failure is an
   * UpstreamFailure (failures.ts). A 4xx answer that passes `check` is an answer.
   */
  request(req: UpstreamRequest): Promise<UpstreamAnswer> {
    this.budget.request();
    return new Promise((resolve, reject) => new Exchange(this, req, resolve, reject).start());
  }

  /** The next upstream to try, of those not yet `tried`: the best in the rotation, else (first try only) the chain's one trial. */
  pick(tried: ReadonlySet<Target>, allowTrial: boolean): { target: Target; trial: boolean } | undefined {
    const t = this.now();
    this.probeDue(t);
    const up = this.targets.filter((x) => !tried.has(x) && x.health.inRotation(t));
    if (up.length > 0) return { target: up.length === 1 ? up[0]! : choose(up)[0]!, trial: false };
    if (!allowTrial || this.targets.some((x) => x.health.inRotation(t))) return undefined;
    const trial = chooseTrial(this.targets.filter((x) => !tried.has(x)));
    if (trial === undefined) return undefined;
    trial.health.probing = true;
    return { target: trial, trial: true };
  }

  /** Whether another upstream in the rotation is left to try after `tried`. */
  hasSpare(tried: ReadonlySet<Target>): boolean {
    const t = this.now();
    return this.targets.some((x) => !tried.has(x) && x.health.inRotation(t));
  }

  /** Seconds until the first upstream is back in the rotation: a 503's Retry-After. */
  retryAfterSeconds(): number {
    const t = this.now();
    let soonest = Infinity;
    for (const x of this.targets) soonest = Math.min(soonest, x.health.backAt() - t);
    return Math.max(1, Math.ceil((Number.isFinite(soonest) ? soonest : 1000) / 1000));
  }

  takeHedge(): boolean {
    return this.budget.take();
  }

  /** The path an upstream is asked for: its own prefix, the rebuilt path, the chain's upstreamApiKey. */
  private upstreamPath(target: Target, path: string): string {
    const full = target.pathPrefix + path;
    return this.apiKeyParam ? full + (full.includes('?') ? '&' : '?') + this.apiKeyParam : full;
  }

  /**
   * Where a streamed request goes (request/stream.ts): the best upstream in the rotation (any,
   * when none is). A streamed request is neither retried nor hedged; what became of it is told
   * back (reportStream) so that the next request knows.
   */
  streamTarget(path: string): { name: string; url: string; authorization: string | undefined } {
    const t = this.now();
    const up = this.targets.filter((x) => x.health.inRotation(t));
    const target = up.length > 0 ? choose(up)[0]! : [...this.targets].sort((a, b) => a.health.backAt() - b.health.backAt())[0]!;
    return { name: target.name, url: target.origin + this.upstreamPath(target, path), authorization: target.authorization };
  }

  /** What a streamed request found of its upstream: answered (ms), or failed with an outcome of health.ts. */
  reportStream(name: string, outcome: AttemptOutcome, detail: { ms?: number; retryAfterMs?: number | undefined } = {}): void {
    const target = this.targets.find((t) => t.name === name);
    if (!target) return;
    this.observer?.attempt(this.owner, name, outcome);
    if (outcome === 'ok') target.health.succeeded(detail.ms ?? 0);
    else if (outcome !== 'cancelled' && target.health.failed(outcome, detail)) this.observer?.ejected(this.owner, name);
  }

  /**
   * One attempt, read whole (the cache and coalesced waiters share the answer). Dispatched with
   * a handler of our own rather than through pool.request(): no Readable stream, no
   * AbortSignal per request, the chunks kept as they come and joined once. undici enforces
   * maxResponseSize while it parses.
   */
  dispatch(target: Target, req: Pick<UpstreamRequest, 'path' | 'method' | 'headers' | 'body'>, attempt: Attempt): Promise<UpstreamAnswer> {
    const path = this.upstreamPath(target, req.path);
    const headers = target.authorization === undefined ? req.headers : { ...req.headers, authorization: target.authorization };
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let raw: IncomingHttpHeaders = {};
      attempt.fail = reject;
      target.pool.dispatch(
        { path, method: req.method, headers, body: req.body ?? null },
        {
          onRequestStart(controller) {
            attempt.controller = controller;
            if (attempt.stopped !== undefined) controller.abort(attempt.stopped);
          },
          onResponseStart(_controller, statusCode, headers) {
            status = statusCode;
            raw = headers;
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            const headers = passableHeaders(raw);
            const retryAfter = raw['retry-after'];
            if (status === 429 && retryAfter !== undefined) headers['retry-after'] = retryAfter;
            const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
            resolve({ status, headers, body, upstream: target.name, ms: 0 });
          },
          onResponseError(_controller, err) {
            reject(err);
          },
        },
      );
    });
  }

  /** Active probes for the upstreams whose ejection is over: a probe's success puts one back in the rotation. */
  private probeDue(t: number): void {
    for (const target of this.targets) if (target.health.dueForProbe(t)) void this.probeOne(target);
  }

  private async probeOne(target: Target): Promise<void> {
    const health = target.health;
    health.probing = true;
    let ok = false;
    try {
      if (this.probeRequest === undefined) ok = await tcpReachable(target.host, target.port, Math.min(this.timeoutMs, MAX_PROBE_MS));
      else {
        const answer = await target.pool.request({
          path: this.upstreamPath(target, this.probeRequest.path),
          method: this.probeRequest.method,
          headers:
            target.authorization === undefined
              ? this.probeRequest.headers
              : { ...this.probeRequest.headers, authorization: target.authorization },
          body: this.probeRequest.body ?? null,
          headersTimeout: Math.min(this.timeoutMs, MAX_PROBE_MS),
          bodyTimeout: Math.min(this.timeoutMs, MAX_PROBE_MS),
        });
        const text = await answer.body.text();
        ok = answer.statusCode === 200 && isJsonText(text);
      }
    } catch {
      ok = false;
    }
    if (health.probed(ok)) this.observer?.ejected(this.owner, target.name);
  }

  /** At least one upstream is in the rotation or reached by its last connection (for /readyz's detail). */
  get reachable(): boolean {
    const t = this.now();
    return this.targets.some((x) => x.health.inRotation(t) && x.health.reachable !== false);
  }

  /** Per upstream name: its state in the rotation (/readyz, the console). */
  status(): Record<string, UpstreamView> {
    const t = this.now();
    const out: Record<string, UpstreamView> = {};
    for (const x of this.targets) {
      const h = x.health;
      const back = Math.max(0, Math.ceil((h.backAt() - t) / 1000));
      const state: UpstreamView['state'] = h.probing
        ? 'probing'
        : h.awaitingProbe || t < h.ejectedUntil
          ? 'ejected'
          : t < h.coolUntil
            ? 'cooling'
            : t < h.downUntil
              ? 'refusing'
              : h.reachable === undefined
                ? 'unknown'
                : 'up';
      const view: UpstreamView = { state };
      if (state !== 'up' && state !== 'unknown' && back > 0) view.backInSeconds = back;
      if (h.ejections > 0) view.ejections = h.ejections;
      const p95 = h.p95();
      if (p95 !== undefined) view.p95Ms = Math.round(p95);
      out[x.name] = view;
    }
    return out;
  }

  /** 1 for each upstream in the rotation, 0 for one out of it (egw_upstream_up). */
  upGauge(): { upstream: string; up: number }[] {
    const t = this.now();
    return this.targets.map((x) => ({ upstream: x.name, up: x.health.inRotation(t) ? 1 : 0 }));
  }

  /**
   * For idle chains (observability/health.ts startProbing): a TCP connection to every upstream
   * never tried or last found unreachable, and the active probe of each whose ejection is over.
   */
  async probe(timeoutMs: number): Promise<void> {
    this.probeDue(this.now());
    await Promise.all(
      this.targets.map(async (x) => {
        if (x.health.reachable === true || x.health.probing) return;
        const ok = await tcpReachable(x.host, x.port, timeoutMs);
        x.health.reachable = ok;
        if (!ok) x.health.downUntil = Math.max(x.health.downUntil, this.now() + 1);
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.targets.map((t) => t.pool.close()));
  }
}

/** One attempt of an Exchange on one upstream. */
interface Attempt {
  target: Target;
  hedge: boolean;
  trial: boolean;
  started: number;
  controller?: Dispatcher.DispatchController;
  /** Fails the attempt's promise (an attempt still queued in the pool has no controller yet). */
  fail?: (err: Error) => void;
  /** Why it was stopped (its share passed, the request ended), once it was. */
  stopped?: Error;
  timer?: NodeJS.Timeout | undefined;
  /** Its outcome is counted (health, metrics): once per attempt. */
  counted: boolean;
}

/** Stops an attempt whose answer is no longer wanted: a hedge answered first, or the request ended. */
class Cancelled extends Error {
  override readonly name = 'Cancelled';
}

/**
 * One request's way through the chain's upstreams (ChainUpstreams.request): one attempt at a
 * time, plus at most one hedge; the first good answer wins and the others are cancelled.
 */
class Exchange {
  private settled = false;
  private deadlinePassed = false;
  private hedged = false;
  private readonly live = new Set<Attempt>();
  private readonly tried = new Set<Target>();
  private last: UpstreamFailure | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private hedgeTimer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();

  constructor(
    private readonly up: ChainUpstreams,
    private readonly req: UpstreamRequest,
    private readonly resolve: (a: UpstreamAnswer) => void,
    private readonly reject: (e: UpstreamFailure) => void,
  ) {}

  private elapsed(): number {
    return Math.round((performance.now() - this.started) * 1000) / 1000;
  }

  start(): void {
    const first = this.up.pick(this.tried, true);
    if (first === undefined) {
      const cause = new NoUpstreamAvailable(this.up.retryAfterSeconds());
      this.settled = true;
      this.reject(new UpstreamFailure(classify(cause), { cause, ms: this.elapsed(), retryAfterSeconds: cause.retryAfterSeconds }));
      return;
    }
    this.deadline = setTimeout(() => this.onDeadline(), this.up.timeoutMs);
    this.launch(first.target, false, first.trial);
  }

  private launch(target: Target, hedge: boolean, trial: boolean): void {
    this.tried.add(target);
    target.health.inflight++;
    const attempt: Attempt = { target, hedge, trial, started: performance.now(), counted: false };
    this.live.add(attempt);
    // A read's attempt gets its share of the deadline while another upstream is left to try; the
    // last one (and a write, sent once) has the rest of the deadline.
    if (!this.req.write && this.up.hasSpare(this.tried)) {
      const left = this.up.timeoutMs - (performance.now() - this.started);
      if (this.up.attemptMs < left)
        attempt.timer = setTimeout(() => this.stop(attempt, new AttemptTimedOut('attempt share')), this.up.attemptMs);
    }
    this.up.dispatch(target, this.req, attempt).then(
      (answer) => this.onAnswer(attempt, answer),
      (err: unknown) => this.onError(attempt, err),
    );
    if (!hedge && !this.req.write && !this.hedged) this.scheduleHedge(target);
  }

  private scheduleHedge(target: Target): void {
    clearTimeout(this.hedgeTimer);
    const delay = hedgeDelayMs(this.up.failover.hedgeAfterMs, target.health);
    if (delay === undefined || delay >= this.up.timeoutMs - (performance.now() - this.started)) return;
    this.hedgeTimer = setTimeout(() => {
      if (this.settled || this.hedged) return;
      const next = this.up.pick(this.tried, false);
      if (next === undefined) return;
      if (!this.up.takeHedge()) {
        this.up.observer?.hedge(this.up.owner, 'denied');
        return;
      }
      this.hedged = true;
      this.launch(next.target, true, false);
    }, delay);
  }

  private stop(attempt: Attempt, why: Error): void {
    if (attempt.stopped !== undefined) return;
    attempt.stopped = why;
    if (attempt.controller !== undefined) attempt.controller.abort(why);
    else attempt.fail?.(why);
  }

  private done(attempt: Attempt): number {
    clearTimeout(attempt.timer);
    if (this.live.delete(attempt)) attempt.target.health.inflight--;
    return performance.now() - attempt.started;
  }

  private onAnswer(attempt: Attempt, answer: UpstreamAnswer): void {
    const ms = this.done(attempt);
    const problem = this.req.check?.(answer);
    if (problem === undefined) {
      this.count(attempt, 'ok', { ms });
      if (this.settled) return;
      answer.ms = this.elapsed();
      this.finish();
      if (this.hedged) this.up.observer?.hedge(this.up.owner, attempt.hedge ? 'won' : 'lost');
      this.resolve(answer);
      return;
    }
    this.onFailure(attempt, new UpstreamFailure(classify(problem), { cause: problem, upstream: answer.upstream, ms: this.elapsed() }), ms);
  }

  private onError(attempt: Attempt, err: unknown): void {
    const ms = this.done(attempt);
    if (attempt.stopped instanceof Cancelled) {
      // A hedge answered first: this upstream was the slower one this time.
      if (!attempt.counted) {
        attempt.counted = true;
        attempt.target.health.outpaced(ms);
        if (attempt.trial) attempt.target.health.probing = false;
        this.up.observer?.attempt(this.up.owner, attempt.target.name, 'cancelled');
      }
      return;
    }
    const cause: unknown = attempt.stopped ?? err;
    this.onFailure(attempt, new UpstreamFailure(classify(cause), { cause, upstream: attempt.target.name, ms: this.elapsed() }), ms);
  }

  /** Health and metrics learn how an attempt ended, once. */
  private count(attempt: Attempt, outcome: AttemptOutcome | undefined, detail: { ms: number; retryAfterMs?: number | undefined }): void {
    if (attempt.counted) return;
    attempt.counted = true;
    const h = attempt.target.health;
    if (outcome !== undefined) this.up.observer?.attempt(this.up.owner, attempt.target.name, outcome, detail.ms / 1000);
    let ejected = false;
    if (outcome === 'ok') {
      if (attempt.trial) h.probed(true);
      h.succeeded(detail.ms);
    } else if (outcome === undefined || outcome === 'cancelled') {
      if (attempt.trial) h.probing = false;
    } else if (attempt.trial && outcome !== '429') ejected = h.probed(false);
    else {
      if (attempt.trial) h.probing = false;
      ejected = h.failed(outcome, detail);
    }
    if (ejected) this.up.observer?.ejected(this.up.owner, attempt.target.name);
  }

  private onFailure(attempt: Attempt, failure: UpstreamFailure, ms: number): void {
    const cause = failure.cause;
    this.count(attempt, failure.rule.outcome, { ms, retryAfterMs: cause instanceof UpstreamStatus ? cause.retryAfterMs : undefined });
    if (this.settled) return;
    this.last = failure;
    const again = this.req.write ? failure.rule.beforeRequest : failure.rule.retryRead || failure.rule.beforeRequest;
    if (again && !this.deadlinePassed) {
      // One attempt on the way at a time: a hedge in flight is the next try already.
      if (this.live.size > 0) return;
      const next = this.up.pick(this.tried, false);
      if (next !== undefined) {
        this.launch(next.target, false, next.trial);
        return;
      }
    }
    if (again && this.live.size > 0) return;
    this.fail(failure);
  }

  private onDeadline(): void {
    if (this.settled) return;
    this.deadlinePassed = true;
    const cause = new DeadlinePassed('upstream deadline');
    // Every attempt still out timed out on its upstream.
    for (const a of this.live) {
      this.count(a, 'timeout', { ms: performance.now() - a.started });
      this.stop(a, cause);
    }
    const upstream = [...this.tried].at(-1)?.name;
    this.fail(new UpstreamFailure(classify(cause), { cause, upstream, ms: this.elapsed() }));
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.deadline);
    clearTimeout(this.hedgeTimer);
    for (const a of this.live) this.stop(a, new Cancelled('another upstream answered first'));
  }

  private fail(failure: UpstreamFailure): void {
    this.finish();
    if (this.hedged) this.up.observer?.hedge(this.up.owner, 'cancelled');
    // Every upstream throttled or out: come back when the first one is due back.
    const busy = failure.code === 'UPSTREAM_BUSY';
    const out = busy
      ? new UpstreamFailure(failure.rule, {
          cause: failure.cause,
          upstream: failure.upstream,
          ms: this.elapsed(),
          retryAfterSeconds: this.up.retryAfterSeconds(),
        })
      : failure;
    this.reject(out);
  }
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The names of a chain's upstreams: host and port (what URL.host gives), never the URL's
 * credentials, path or query, which may hold a secret. Two upstreams on the same host and port
 * are told apart by their position (`host#2`).
 */
export function upstreamNames(bases: readonly string[]): string[] {
  const hosts = bases.map((b) => new URL(b).host);
  return hosts.map((h, i) => (hosts.indexOf(h) === i ? h : `${h}#${i + 1}`));
}

/** An upstream URL as an operator's console may show it: no password, user or query. */
export function displayUpstream(base: string): string {
  const url = new URL(base);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.protocol}//${url.host}${path}${basicAuthorization(url) === undefined ? '' : ' (Basic auth)'}`;
}

/** `Basic base64(user:password)` from a URL's userinfo (RFC 7617), undefined without one. */
export function basicAuthorization(url: URL): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

function tcpReachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
