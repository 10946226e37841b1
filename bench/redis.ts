// Redis for the quota-redis variant and its clean-up, always through the gateway's own client
// factory (src/redis/client.ts). Clean-up is SCAN + DEL under the bench's own prefix, never
// KEYS or FLUSHDB.
import { once } from 'node:events';
import { Cluster } from 'ioredis';
import { redisSchema } from '../src/config/schema.js';
import { createRedis, type RedisClient } from '../src/redis/client.js';
import { redisUrl } from './shared.js';

const READY_TIMEOUT_MS = 5_000;
const SCAN_COUNT = 500;

/** A connected client, or an error naming the URL (the gateway's client has no offline queue). */
export async function connectRedis(): Promise<RedisClient> {
  const redis = createRedis(redisSchema.parse({ url: redisUrl() }));
  redis.on('error', () => {}); // reported below as "not reachable", not as unhandled events
  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(READY_TIMEOUT_MS) });
    return redis;
  } catch {
    redis.disconnect();
    throw new Error(`Redis at ${redisUrl()} is not reachable (set REDIS_URL, or leave quota-redis out with --only)`);
  }
}

/** Deletes the keys matching `prefix*` and returns how many there were. */
export async function deletePrefix(redis: RedisClient, prefix: string): Promise<number> {
  // A Cluster spreads keys over its masters: scan each of them.
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', SCAN_COUNT);
      cursor = next;
      // One DEL per key: the keys of a batch may sit in different cluster slots.
      for (const key of keys) deleted += await node.del(key);
    } while (cursor !== '0');
  }
  return deleted;
}
