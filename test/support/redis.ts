// Tests talk to a real Redis: REDIS_URL, or 127.0.0.1:6379 (what .ci/run and docs/architecture.md set up).
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

/**
 * A MONITOR connection. ioredis switches a connection into monitor mode a microtask after
 * MONITOR's OK (node_modules/ioredis/built/redis/event_handler.js, readyHandler), so commands of
 * other clients that Redis lists in the same packet are taken for replies nobody asked for, each
 * an error event ("Command queue state error", node_modules/ioredis/built/DataHandler.js,
 * shiftCommand). On a Redis that other suites keep busy, that is most connections. Those lines
 * are of commands run before the connection was in monitor mode, so before any command a test
 * sends after this resolves: they are let go, and every line after them is listed.
 */
export function monitorConnection(redis: Redis): Promise<Redis> {
  const m = redis.duplicate({ monitor: true, lazyConnect: false });
  return new Promise((resolve, reject) => {
    m.on('error', (err: Error) => {
      if (!err.message.startsWith('Command queue state error')) reject(err);
    });
    m.once('monitoring', () => resolve(m));
  });
}
