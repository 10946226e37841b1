// Test harness: a gateway built from a config object and listening on a real loopback port.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { configSchema, type Config, type ConfigInput } from '../../src/config/schema.js';
import { buildServer, type ServerDeps } from '../../src/app/server.js';

export const DEMO_KEY = 'test-key-demo';
export const ADDRESS = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

/**
 * A config with chain "1" on the given upstreams, plan free, key `demo`, no caching; `extra`
 * overrides sections. A `redis` section gets `volatile: true` unless it names `volatile` itself
 * (`volatile: undefined` for the default): the suites' Redis is a throwaway that keeps nothing on
 * disk (test/support/global-redis.ts, test/support/redis-cluster.ts), on which a gateway would
 * otherwise refuse to start (app/resources.ts).
 */
export function makeConfig(upstreams: string[], extra: Partial<ConfigInput> = {}): Config {
  const redis = extra.redis && !('volatile' in extra.redis) ? { redis: { ...extra.redis, volatile: true } } : {};
  return configSchema.parse({
    server: { host: '127.0.0.1', port: 0 },
    chains: { '1': { name: 'Ethereum', upstreams, timeoutMs: 2_000 } },
    plans: { free: { rps: 1000, credits: 1_000_000, period: 'daily' } },
    keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
    log: { level: 'silent', requests: false },
    // Every gateway its own embedded store, gone when it closes.
    storage: { path: ':memory:' },
    // An operations listener (/metrics, detailed /readyz) on a free loopback port.
    metrics: { port: 0, host: '127.0.0.1' },
    // Most suites test the pipeline without the cache; the cache suites turn it on.
    cache: { ttlSeconds: { 'token-balances': 0, transactions: 0, legacy: 0 } },
    ...extra,
    ...redis,
  });
}

export interface TestGateway {
  app: FastifyInstance;
  url: string;
  /** fetch relative to the gateway, with the demo key as Bearer unless headers say otherwise. */
  get(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /**
   * A GET with the request target exactly as given (fetch would resolve `..` and `%2e%2e`
   * segments before sending), with the demo key as Bearer; resolves with status and body.
   */
  raw(target: string): Promise<{ status: number; body: string }>;
  /** fetch on the operations listener (`/metrics`, `/readyz` with its checks). */
  ops(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startGateway(config: Config, deps: ServerDeps = {}): Promise<TestGateway> {
  const app = buildServer(config, deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    app,
    url,
    get(path, init = {}) {
      const { key = DEMO_KEY, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
      return fetch(url + path, { ...rest, headers });
    },
    async ops(path, init) {
      const base = app.gateway.opsUrl();
      if (base === undefined) throw new Error('this gateway has no operations listener (metrics.port)');
      return fetch(base + path, init);
    },
    raw(target) {
      return new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: target, headers: { authorization: `Bearer ${DEMO_KEY}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    },
    close: () => app.close(),
  };
}

/**
 * A free loopback port, for a server the test starts on it itself. It comes from the kernel's
 * ephemeral range, so until that server binds it another bind to port 0 may take it: a test
 * that needs a port nobody will answer on takes refusedPort().
 */
export async function closedPort(): Promise<number> {
  return (await released(0))!;
}

/** Binds `port` on loopback (0: any) and lets it go: the port bound, or undefined if it was taken. */
async function released(port: number): Promise<number | undefined> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!bound) return undefined;
  const { port: got } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return got;
}

/** Below Linux's default ephemeral range (32768-60999, ip(7) ip_local_port_range). */
const REFUSED_LOW = 20_000;
const REFUSED_HIGH = 32_767;

/**
 * A loopback port nothing listens on, and nothing in the suite will: connections to it are
 * refused. It lies below the ephemeral range, which every server of the suite binds in (port 0,
 * or closedPort()), so a server of another test file running meanwhile cannot take it.
 */
export async function refusedPort(): Promise<number> {
  for (;;) {
    const port = await released(REFUSED_LOW + Math.floor(Math.random() * (REFUSED_HIGH - REFUSED_LOW + 1)));
    if (port !== undefined) return port;
  }
}
