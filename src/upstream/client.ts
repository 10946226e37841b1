// The explorers behind one chain: keep-alive undici pools, failover in configured order when a
// connection cannot be made, one deadline per request, and failures mapped to typed errors.
//
// undici is the engine under @fastify/reply-from and @fastify/http-proxy; it is used directly
// here because an answer must be read whole so that the cache and every coalesced waiter can
// share it, and because failover must be decided per failure phase (failures.ts).
import { connect } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { passableHeaders } from '../http/headers.js';
import { classify, DeadlinePassed, UpstreamFailure } from './failures.js';

/** An upstream that refused a connection is tried last for this long. */
export const UPSTREAM_DOWN_MS = 5_000;
const MAX_CONNECT_TIMEOUT_MS = 3_000;
/** Sockets one upstream's pool may open (http/connections.ts keeps file descriptors for them). */
export const POOL_CONNECTIONS = 128;

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
}

/**
 * The one deadline of a request (the chain's timeoutMs), over every attempt: when it passes,
 * the attempt in flight is aborted and the request fails at once, even if its attempt is still
 * waiting in the pool's queue.
 */
class Deadline {
  passed = false;
  /** The attempt on a socket now, to abort. */
  attempt: Dispatcher.DispatchController | undefined;
  /** Fails the attempt's promise (an attempt still queued has no controller yet). */
  onPass: ((err: Error) => void) | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.passed = true;
      const err = new DeadlinePassed('upstream deadline');
      this.attempt?.abort(err);
      this.onPass?.(err);
    }, ms);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

interface Target {
  /** What logs, metrics and /readyz call it: host[:port], never credentials, path or query. */
  name: string;
  origin: string;
  /** Basic credentials from the URL's user:password@, sent on every request as a browser would. */
  authorization: string | undefined;
  pool: Pool;
  host: string;
  port: number;
  pathPrefix: string;
  downUntil: number;
  /** Whether the last connection attempt (a request or a probe) succeeded; undefined before the first. */
  reachable: boolean | undefined;
}

/** What a chain's pools are made from: the parts read here of its entry in `chains` (config/schema.ts chainSchema). */
export interface ChainTarget {
  /** Base URLs, tried in this order when a connection cannot be made. */
  readonly upstreams: readonly string[];
  /** Sent upstream as `apikey`; undefined or empty for none. */
  readonly upstreamApiKey?: string | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
}

export class ChainUpstreams {
  private readonly targets: Target[];
  readonly timeoutMs: number;
  private readonly apiKeyParam: string;

  constructor(
    chain: ChainTarget,
    private readonly now: () => number = Date.now,
  ) {
    this.timeoutMs = chain.timeoutMs;
    this.apiKeyParam = chain.upstreamApiKey ? `apikey=${encodeURIComponent(chain.upstreamApiKey)}` : '';
    const names = upstreamNames(chain.upstreams);
    this.targets = chain.upstreams.map((base, i) => {
      const url = new URL(base);
      return {
        name: names[i]!,
        origin: url.origin,
        authorization: basicAuthorization(url),
        host: url.hostname,
        port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        pathPrefix: url.pathname.replace(/\/+$/, ''),
        downUntil: 0,
        reachable: undefined,
        pool: new Pool(url.origin, {
          connections: POOL_CONNECTIONS,
          pipelining: 1,
          connect: { timeout: Math.min(chain.timeoutMs, MAX_CONNECT_TIMEOUT_MS) },
          // The overall deadline below is what clients see; these only stop a stuck socket.
          headersTimeout: chain.timeoutMs + 1_000,
          bodyTimeout: chain.timeoutMs + 1_000,
          maxResponseSize: chain.maxResponseBytes,
        }),
      };
    });
  }

  /** Healthy upstreams in configured order, then those that recently refused a connection. */
  private order(): Target[] {
    const t = this.now();
    const up = this.targets.filter((x) => x.downUntil <= t);
    return up.length === this.targets.length ? up : [...up, ...this.targets.filter((x) => x.downUntil > t)];
  }

  /**
   * One request, failing over to the next upstream only when a connection could not be made;
   * any failure is an UpstreamFailure (failures.ts). The answer's status is not judged here.
   */
  async request(req: UpstreamRequest): Promise<UpstreamAnswer> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
    const deadline = new Deadline(this.timeoutMs);
    let last: UpstreamFailure | undefined;
    try {
      for (const target of this.order()) {
        try {
          const answer = await this.once(target, req, deadline);
          target.downUntil = 0;
          target.reachable = true;
          answer.ms = elapsed();
          return answer;
        } catch (err) {
          const cause: unknown = deadline.passed ? new DeadlinePassed('upstream deadline', { cause: err }) : err;
          const failure = new UpstreamFailure(classify(cause), { cause, upstream: target.name, ms: elapsed() });
          // Only a request that never reached the upstream is tried elsewhere: one that reached
          // it and then failed or timed out is not repeated on an explorer already in trouble.
          if (!failure.rule.beforeRequest) throw failure;
          target.downUntil = this.now() + UPSTREAM_DOWN_MS;
          target.reachable = false;
          last = failure;
        }
      }
      throw last ?? new Error('a chain has at least one upstream');
    } finally {
      deadline.clear();
    }
  }

  /** The path an upstream is asked for: its own prefix, the rebuilt path, the chain's upstreamApiKey. */
  private upstreamPath(target: Target, path: string): string {
    const full = target.pathPrefix + path;
    return this.apiKeyParam ? full + (full.includes('?') ? '&' : '?') + this.apiKeyParam : full;
  }

  /**
   * Where a streamed request goes (request/stream.ts): the first upstream in order. A streamed
   * request is not failed over; a connection it could not make marks the upstream down
   * (reportConnect), so the next request goes to the next one.
   */
  streamTarget(path: string): { name: string; url: string; authorization: string | undefined } {
    const target = this.order()[0]!;
    return { name: target.name, url: target.origin + this.upstreamPath(target, path), authorization: target.authorization };
  }

  /** What a streamed request learnt of an upstream's reachability. */
  reportConnect(name: string, reachable: boolean): void {
    const target = this.targets.find((t) => t.name === name);
    if (!target) return;
    target.reachable = reachable;
    target.downUntil = reachable ? 0 : this.now() + UPSTREAM_DOWN_MS;
  }

  /**
   * One attempt, read whole (the cache and coalesced waiters share the answer). Dispatched with
   * a handler of our own rather than through pool.request(): no Readable stream, no
   * AbortSignal per request, the chunks kept as they come and joined once. undici enforces
   * maxResponseSize while it parses.
   */
  private once(target: Target, req: UpstreamRequest, deadline: Deadline): Promise<UpstreamAnswer> {
    const path = this.upstreamPath(target, req.path);
    const headers = target.authorization === undefined ? req.headers : { ...req.headers, authorization: target.authorization };
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let raw: IncomingHttpHeaders = {};
      deadline.onPass = reject;
      target.pool.dispatch(
        { path, method: req.method, headers, body: req.body ?? null },
        {
          onRequestStart(controller) {
            deadline.attempt = controller;
            if (deadline.passed) controller.abort(new DeadlinePassed('upstream deadline'));
          },
          onResponseStart(_controller, statusCode, headers) {
            status = statusCode;
            raw = headers;
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            deadline.attempt = undefined;
            const headers = passableHeaders(raw);
            const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
            resolve({ status, headers, body, upstream: target.name, ms: 0 });
          },
          onResponseError(_controller, err) {
            deadline.attempt = undefined;
            reject(err);
          },
        },
      );
    });
  }

  /** At least one upstream answered its last connection attempt (for /readyz). */
  get reachable(): boolean {
    return this.targets.some((t) => t.reachable === true);
  }

  /** Per upstream name: reachable, unreachable or unknown (never tried). */
  status(): Record<string, 'reachable' | 'unreachable' | 'unknown'> {
    const out: Record<string, 'reachable' | 'unreachable' | 'unknown'> = {};
    for (const t of this.targets) out[t.name] = t.reachable === undefined ? 'unknown' : t.reachable ? 'reachable' : 'unreachable';
    return out;
  }

  /**
   * Opens (and closes) a TCP connection to every upstream: cheap, and enough to tell a dead
   * explorer from a live one when no traffic has gone there recently.
   */
  async probe(timeoutMs: number): Promise<void> {
    await Promise.all(
      this.targets.map(async (t) => {
        t.reachable = await tcpReachable(t.host, t.port, timeoutMs);
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.targets.map((t) => t.pool.close()));
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
