// The explorers behind one chain: keep-alive undici pools, failover in configured order when a
// connection cannot be made, one deadline per request, and failures mapped to typed errors.
//
// undici is the engine under @fastify/reply-from and @fastify/http-proxy; it is used directly
// here because an answer must be read whole so that the cache and every coalesced waiter can
// share it, and because failover must be decided per failure phase (see isConnectFailure).
import { connect } from 'node:net';
import { Pool } from 'undici';
import type { ChainConfig } from '../config/schema.js';
import { GatewayError } from '../http/errors.js';
import { connectionTokens, isPassableResponseHeader } from '../http/headers.js';

/** An upstream that refused a connection is tried last for this long. */
export const UPSTREAM_DOWN_MS = 5_000;
/** Larger answers are refused (502): a cache entry and a coalesced answer are held in memory. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const MAX_CONNECT_TIMEOUT_MS = 3_000;

export interface UpstreamAnswer {
  status: number;
  /** Headers that may reach the client (hop-by-hop and upstream quota headers removed). */
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** Base URL of the upstream that answered. */
  upstream: string;
}

export interface UpstreamRequest {
  /** Path and canonical query, e.g. `/api/v2/addresses/0x…/transactions?filter=to`. */
  path: string;
  method: 'GET';
  headers: Record<string, string>;
}

/** Error codes raised before a request could be written: the next upstream may be tried. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function isConnectFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return CONNECT_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('CERT_') || code === 'DEPTH_ZERO_SELF_SIGNED_CERT';
}

class Timeout extends Error {
  override readonly name = 'TimeoutError';
}

interface Target {
  base: string;
  pool: Pool;
  host: string;
  port: number;
  pathPrefix: string;
  downUntil: number;
  /** Whether the last connection attempt (a request or a probe) succeeded; undefined before the first. */
  reachable: boolean | undefined;
}

export class ChainUpstreams {
  private readonly targets: Target[];
  readonly timeoutMs: number;
  private readonly apiKeyParam: string;

  constructor(
    chain: ChainConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.timeoutMs = chain.timeoutMs;
    this.apiKeyParam = chain.upstreamApiKey ? `apikey=${encodeURIComponent(chain.upstreamApiKey)}` : '';
    this.targets = chain.upstreams.map((base) => {
      const url = new URL(base);
      return {
        base,
        host: url.hostname,
        port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        pathPrefix: url.pathname.replace(/\/+$/, ''),
        downUntil: 0,
        reachable: undefined,
        pool: new Pool(url.origin, {
          connections: 128,
          pipelining: 1,
          connect: { timeout: Math.min(chain.timeoutMs, MAX_CONNECT_TIMEOUT_MS) },
          // The overall deadline below is what clients see; these only stop a stuck socket.
          headersTimeout: chain.timeoutMs + 1_000,
          bodyTimeout: chain.timeoutMs + 1_000,
          maxResponseSize: MAX_RESPONSE_BYTES,
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

  async request(req: UpstreamRequest): Promise<UpstreamAnswer> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Timeout('upstream deadline')), this.timeoutMs);
    let lastConnectError: unknown;
    try {
      for (const target of this.order()) {
        try {
          const answer = await this.once(target, req, controller.signal);
          target.downUntil = 0;
          target.reachable = true;
          return answer;
        } catch (err) {
          if (controller.signal.aborted) throw new GatewayError('UPSTREAM_TIMEOUT', { cause: err });
          // Only a request that never reached the upstream is tried elsewhere: one that reached
          // it and then failed or timed out is not repeated on an explorer already in trouble.
          if (!isConnectFailure(err)) {
            if (err instanceof GatewayError) throw err;
            throw new GatewayError('UPSTREAM_ERROR', { cause: err });
          }
          target.downUntil = this.now() + UPSTREAM_DOWN_MS;
          target.reachable = false;
          lastConnectError = err;
        }
      }
      throw new GatewayError('UPSTREAM_UNREACHABLE', { cause: lastConnectError });
    } finally {
      clearTimeout(timer);
    }
  }

  private async once(target: Target, req: UpstreamRequest, signal: AbortSignal): Promise<UpstreamAnswer> {
    let path = target.pathPrefix + req.path;
    if (this.apiKeyParam) path += (path.includes('?') ? '&' : '?') + this.apiKeyParam;
    const res = await target.pool.request({ path, method: req.method, headers: req.headers, signal });
    // Read whole (the cache and coalesced waiters share it); undici enforces maxResponseSize.
    const body = Buffer.from(await res.body.arrayBuffer());
    const tokens = connectionTokens(res.headers.connection);
    const headers: Record<string, string | string[]> = {};
    for (const name in res.headers) {
      const value = res.headers[name];
      if (value !== undefined && isPassableResponseHeader(name, tokens)) headers[name] = value;
    }
    return { status: res.statusCode, headers, body, upstream: target.base };
  }

  /** At least one upstream answered its last connection attempt (for /readyz). */
  get reachable(): boolean {
    return this.targets.some((t) => t.reachable === true);
  }

  /** Per upstream base URL: reachable, unreachable or unknown (never tried). */
  status(): Record<string, 'reachable' | 'unreachable' | 'unknown'> {
    const out: Record<string, 'reachable' | 'unreachable' | 'unknown'> = {};
    for (const t of this.targets) out[t.base] = t.reachable === undefined ? 'unknown' : t.reachable ? 'reachable' : 'unreachable';
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
