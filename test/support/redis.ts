// Tests talk to a real Redis: REDIS_URL, or 127.0.0.1:6379 (what .ci/run and the README set up).
// Each suite writes under its own key prefix and deletes it afterwards.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function testPrefix(suite: string): string {
  return `egw-test:${suite}:${randomBytes(4).toString('hex')}:`;
}

export function connect(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: false });
}

/** Deletes every key under a prefix (SCAN, never KEYS). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
