// Whether the Redis the gateway uses keeps anything on disk: an append-only file (`appendonly
// yes`) or RDB snapshots (a `save` schedule). A Redis with neither starts empty after a restart
// (https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/). Read with CONFIG
// GET on every master; a Redis that refuses CONFIG (managed services rename or disable it) or
// does not answer cannot be judged. What is done with the answer is app/resources.ts's (the
// start) and cli-main.ts's (check-config, a cluster primary).
import { createRedis, type RedisClient, type RedisTarget } from './client.js';

/** What one master said about its persistence. */
export interface NodePersistence {
  /** host:port of the master. */
  readonly node: string;
  /** CONFIG GET appendonly and save, when the master answered both. */
  readonly appendonly?: string;
  readonly save?: string;
  /** Why the master could not be asked: CONFIG refused, a timeout, no such parameter. */
  readonly error?: string;
}

/** The start of every message about a Redis without persistence (the tests look for it). */
export const KEEPS_NOTHING = 'Redis keeps nothing on disk (appendonly no, save "")';

/** A master that answered and keeps nothing: no AOF and no snapshot schedule. */
export const keepsNothing = (n: NodePersistence): boolean => n.appendonly === 'no' && n.save?.trim() === '';

/** The masters of `redis` (the one server, or every master of a Cluster), each asked once. */
export async function readPersistence(redis: RedisClient): Promise<NodePersistence[]> {
  const masters = 'nodes' in redis ? redis.nodes('master') : [redis];
  return Promise.all(
    masters.map(async (master): Promise<NodePersistence> => {
      const node = `${master.options.host ?? ''}:${master.options.port ?? ''}`;
      try {
        const [, appendonly] = (await master.config('GET', 'appendonly')) as [string?, string?];
        const [, save] = (await master.config('GET', 'save')) as [string?, string?];
        if (appendonly === undefined || save === undefined) return { node, error: 'CONFIG GET appendonly or save answered nothing' };
        return { node, appendonly, save };
      } catch (err) {
        return { node, error: (err as Error).message };
      }
    }),
  );
}

/**
 * Connects to `target`, waits at most `waitMs` for it to be ready, reads every master's
 * persistence and disconnects. Undefined when Redis was not ready in time.
 */
export async function probePersistence(target: RedisTarget, waitMs: number): Promise<NodePersistence[] | undefined> {
  const redis = createRedis(target);
  redis.on('error', () => undefined); // refused or unreachable: the wait below ends undefined
  try {
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), waitMs);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    return ready ? await readPersistence(redis) : undefined;
  } finally {
    redis.disconnect();
  }
}

/** What a restart of a Redis that keeps nothing loses: more when the run-time keys live there too (store/open.ts). */
export function lostOnRestart(keysInRedis: boolean): string {
  return keysInRedis
    ? "every run-time key (their customers then answered 401), bought credit, usage row and audit entry, and the period's spend"
    : "every bought credit and the period's spend";
}

/** The fix, as every message about it names it. */
export const VOLATILE_FIX = 'run Redis with appendonly yes, or set redis.volatile: true to accept losing them on a Redis restart';

/** Why a start is refused on `nodes` (masters that keep nothing), fix included. */
export function volatileRefusal(nodes: readonly NodePersistence[], keysInRedis: boolean): string {
  return (
    `${KEEPS_NOTHING} at ${nodes.map((n) => n.node).join(', ')}: a restart of Redis would lose ${lostOnRestart(keysInRedis)}. ` +
    `Not starting: ${VOLATILE_FIX} (docs/operator-guide.md, Redis persistence)`
  );
}
