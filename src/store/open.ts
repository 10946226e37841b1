// Which backend keeps the records, from the configuration (docs/configuration.md, `storage`): PostgreSQL when
// `storage.url` is set (every host shares it; the quota counters stay in Redis when there is
// one, else PostgreSQL keeps this host's ledgers as SQLite would), else Redis when configured
// (every process of one Redis shares it), else the embedded SQLite file. A new backend is a file
// of this folder, one entry below and one in the contract suites (test/contracts/store.test.ts).
import type { RedisClient } from '../redis/client.js';
import { PostgresStore } from './postgres.js';
import { RedisStore } from './redis.js';
import { SqliteStore } from './sqlite.js';
import type { Storage } from './types.js';

export interface StorageOptions {
  /** `storage.url`: a database URL (`postgres://...`). */
  url?: string | undefined;
  /** `storage.schema`: the PostgreSQL schema of the tables. */
  schema?: string | undefined;
  /** `storage.path`: the SQLite file, or `:memory:`. */
  path: string;
  /** The gateway's Redis, when configured. */
  redis?: { client: RedisClient; prefix: string; subscriber: () => RedisClient } | undefined;
  /** How many days usage rows are kept. */
  retentionDays: number;
  /** How many days hourly usage rows are kept. */
  hourlyRetentionDays?: number | undefined;
  now: () => number;
  log?: { warn(obj: object, msg: string): void } | undefined;
}

interface Backend {
  /** Whether the configuration asks for this backend. */
  chosen(o: StorageOptions): boolean;
  open(o: StorageOptions): Storage;
}

/** In order: the first chosen one opens. */
const BACKENDS: readonly Backend[] = [
  {
    chosen: (o) => o.url !== undefined,
    open: (o) => new PostgresStore(o.url!, { schema: o.schema, ledgers: o.redis === undefined, now: o.now, log: o.log }),
  },
  {
    chosen: (o) => o.redis !== undefined,
    open: (o) =>
      new RedisStore(o.redis!.client, o.redis!.prefix, o.redis!.subscriber, {
        retentionDays: o.retentionDays,
        hourlyRetentionDays: o.hourlyRetentionDays,
        now: o.now,
      }),
  },
  { chosen: () => true, open: (o) => new SqliteStore(o.path, o.now) },
];

export function openStorage(options: StorageOptions): Storage {
  const backend = BACKENDS.find((b) => b.chosen(options));
  if (!backend) throw new Error('no storage backend for this configuration');
  return backend.open(options);
}
