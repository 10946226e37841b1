// Whether an error a store call threw says the store is away or cannot write now (a full disk, a
// closed connection, a database shutting down) rather than that the call was wrong: the admin
// API answers the first with 503, so that an operator's script retries, and keeps 500 for bugs.
import { isFault as isSqliteFault } from './sqlite.js';

/**
 * PostgreSQL's classes 08 (connection exception), 53 (insufficient resources: disk full, out of
 * memory, too many connections) and 57 (operator intervention: shutdown, cancel), from
 * https://www.postgresql.org/docs/current/errcodes-appendix.html.
 */
const POSTGRES_AWAY = /^(08|53|57)/;
/** Messages of node-postgres (pg-pool, a client whose connection ended) and ioredis (a closed or stalled connection, no offline queue). */
const CLIENT_AWAY =
  /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end|Client was closed|Connection is closed|Stream isn't writeable|Command timed out|connect ECONNREFUSED/;

export function storeUnavailable(err: unknown): boolean {
  // SQLite's own faults, and node's socket and file errors (they carry a syscall).
  if (isSqliteFault(err)) return true;
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null | undefined;
  if (typeof e?.code === 'string' && POSTGRES_AWAY.test(e.code) && e.code.length === 5) return true;
  if (e?.name === 'MaxRetriesPerRequestError') return true;
  return typeof e?.message === 'string' && CLIENT_AWAY.test(e.message);
}
