// The one place Redis connections are made. Commands never queue while disconnected and never
// wait longer than commandTimeoutMs, so a dead Redis costs a request milliseconds, not seconds;
// ioredis keeps reconnecting in the background and enforcement resumes when it answers again.
import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** What a connection is made from: the parts read here of `redis` (config/schema.ts redisSchema). */
export interface RedisTarget {
  /** One Redis (or a primary) URL. */
  readonly url?: string | undefined;
  /** Redis Cluster seed nodes, instead of url. */
  readonly cluster?: readonly string[] | undefined;
  readonly commandTimeoutMs: number;
}

/** Reconnect backoff: 50 ms, 100 ms, ... capped at 1 s. */
export const reconnectDelayMs = (attempt: number): number => Math.min(attempt * 50, 1_000);

export function createRedis(config: RedisTarget): RedisClient {
  const options: RedisOptions = {
    enableOfflineQueue: false,
    commandTimeout: config.commandTimeoutMs,
    connectTimeout: Math.max(config.commandTimeoutMs * 4, 1_000),
    maxRetriesPerRequest: 0,
    retryStrategy: reconnectDelayMs,
    lazyConnect: false,
  };
  if (config.cluster) {
    return new Cluster(
      config.cluster.map((url) => url),
      {
        enableOfflineQueue: false,
        clusterRetryStrategy: reconnectDelayMs,
        redisOptions: options,
      },
    );
  }
  return new Redis(config.url ?? 'redis://127.0.0.1:6379', options);
}
