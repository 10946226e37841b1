// The keys created at run time, as this process knows them: all of them, loaded from the store at
// start, and kept in step with it (the store tells of every change, by any process; with Redis
// through pub/sub, within milliseconds; after a lost subscription everything is read again).
// Each change is applied to the key ring of the current configuration (keys/ring.ts); a reload
// builds its ring from `records`.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { hashKey } from '../auth/digest.js';
import type { KeyRecord, KeyStore } from '../store/types.js';

/** A change to apply to the current key ring. */
export type KeyChange = { put: KeyRecord } | { remove: string };

/**
 * New secrets: a recognisable prefix, so that secret scanners can find leaked ones (GitHub's
 * tokens are built the same way: `ghp_` and base-62), then 43 base-62 characters: 256 random
 * bits (43 x log2(62) = 256.03), `egw_[A-Za-z0-9]{43}`.
 */
export const SECRET_PREFIX = 'egw_';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_CHARS = 43;
/** How much of a secret operators are shown to tell keys apart: the prefix and 8 characters. */
const SHOWN_CHARS = SECRET_PREFIX.length + 8;
/**
 * What follows them, in the store and on screen: a character outside the scanners' class. The
 * store keeps a key's shown part next to its 64-hex digest (store/sqlite.ts: the `prefix` and
 * `digest` columns, whose values follow each other in a row's bytes,
 * https://www.sqlite.org/fileformat2.html#record_format), and `egw_` + 8 + 64 characters read
 * as a leaked secret, `egw_[A-Za-z0-9]{43}`, to any scanner of a backup. The ellipsis also says
 * that the secret goes on.
 */
const SHOWN_END = '\u2026';

/**
 * How a stored prefix is shown: as it is, or with SHOWN_END after it when a gateway before
 * SHOWN_END wrote it (`egw_AbCdEfGh`), so that every key is shown in one shape.
 */
export function shownPrefix(stored: string): string {
  return stored.endsWith(SHOWN_END) ? stored : stored + SHOWN_END;
}

export function newSecret(): { secret: string; digest: string; prefix: string } {
  let secret = SECRET_PREFIX;
  while (secret.length < SECRET_PREFIX.length + SECRET_CHARS) {
    // Bytes of 248 and above are dropped, so each character is uniform (248 = 4 x 62).
    for (const byte of randomBytes(64)) if (byte < 248 && secret.length < SECRET_PREFIX.length + SECRET_CHARS) secret += BASE62[byte % 62];
  }
  return { secret, digest: hashKey(secret), prefix: secret.slice(0, SHOWN_CHARS) + SHOWN_END };
}

/** `key_` and 16 base-32 characters (80 random bits): an id, not a secret. */
export function newKeyId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let id = 'key_';
  for (const byte of randomBytes(16)) id += alphabet[byte & 31];
  return id;
}

/** A failed read of every key is tried again after this long, doubling up to RESYNC_MAX_MS. */
export const RESYNC_FIRST_MS = 1_000;
const RESYNC_MAX_MS = 30_000;

export class RuntimeKeys {
  readonly records = new Map<string, KeyRecord>();
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly store: KeyStore,
    private readonly apply: (change: KeyChange) => void,
    private readonly log: Pick<Logger, 'warn' | 'error'>,
  ) {}

  /** Reads every key and starts following changes. */
  async start(): Promise<void> {
    // Listening first, then reading: a change made between the two is not missed.
    this.store.watchKeys(
      (id) => void this.refresh(id),
      () => void this.resync(),
    );
    await this.resync();
  }

  /**
   * Reads every key again (at start, and after changes may have been missed). A read that fails
   * (the store away, or a command connection not back yet when the subscription is) is tried
   * again until one succeeds: a process must not keep a revoked key because one read failed.
   */
  async resync(): Promise<void> {
    let all: KeyRecord[];
    try {
      all = await this.store.listKeys();
    } catch (err) {
      const retryInMs = Math.min(RESYNC_MAX_MS, RESYNC_FIRST_MS * 2 ** this.failures++);
      this.log.error({ err: (err as Error).message, retryInMs }, 'could not read the run-time keys; keeping the ones known, trying again');
      this.resyncIn(retryInMs);
      return;
    }
    this.failures = 0;
    const seen = new Set<string>();
    for (const record of all) {
      seen.add(record.id);
      this.set(record);
    }
    for (const id of [...this.records.keys()]) if (!seen.has(id)) this.drop(id);
  }

  /** Reads one key again after the store said it changed. */
  async refresh(id: string): Promise<void> {
    try {
      const record = await this.store.getKey(id);
      if (record) this.set(record);
      else this.drop(id);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, keyId: id }, 'could not read a changed key; reading all of them again soon');
      this.resyncIn(RESYNC_FIRST_MS);
    }
  }

  /** One read of every key, `ms` from now, unless one is already due. */
  private resyncIn(ms: number): void {
    if (this.retry !== undefined || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.resync();
    }, ms).unref();
  }

  /** No more reads (the gateway is closing). */
  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.retry = undefined;
  }

  /** Applies a record this process just wrote, without waiting for the store's notice. */
  set(record: KeyRecord): void {
    this.records.set(record.id, record);
    this.apply({ put: record });
  }

  drop(id: string): void {
    if (!this.records.delete(id)) return;
    this.apply({ remove: id });
  }
}
