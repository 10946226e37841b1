// The keys created at run time, as this process knows them: all of them, loaded from the store at
// start, and kept in step with it (the store tells of every change, by any process; with Redis
// through pub/sub, within milliseconds; after a lost subscription everything is read again).
// Each change is applied to the key ring of the current configuration (keys/ring.ts); a reload
// builds its ring from `records`.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { hashKey } from '../auth/digest.js';
import type { KeyRecord, KeyStore, ObjectKind, StoredObject } from '../store/types.js';
import { accountFromObject, planFromObject, type Account, type RuntimePlan } from './objects.js';
import type { RingObjects } from './ring.js';

/** A change to apply to the current key ring; `objects`: plans or accounts changed, build it again. */
export type KeyChange = { put: KeyRecord } | { remove: string } | { objects: true };

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

/** `acc_` and 16 base-32 characters, as key ids are made. */
export function newAccountId(): string {
  return `acc_${newKeyId().slice('key_'.length)}`;
}

export class RuntimeKeys implements RingObjects {
  readonly records = new Map<string, KeyRecord>();
  readonly plans = new Map<string, RuntimePlan>();
  readonly accounts = new Map<string, Account>();
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
    let plans: StoredObject[];
    let accounts: StoredObject[];
    try {
      // Plans and accounts first: the keys are then put into a ring that knows them.
      [plans, accounts] = await Promise.all([this.store.listObjects('plan'), this.store.listObjects('account')]);
      all = await this.store.listKeys();
    } catch (err) {
      const retryInMs = Math.min(RESYNC_MAX_MS, RESYNC_FIRST_MS * 2 ** this.failures++);
      this.log.error({ err: (err as Error).message, retryInMs }, 'could not read the run-time keys; keeping the ones known, trying again');
      this.resyncIn(retryInMs);
      return;
    }
    this.failures = 0;
    this.setObjects(plans, accounts);
    const seen = new Set<string>();
    for (const record of all) {
      seen.add(record.id);
      this.set(record);
    }
    for (const id of [...this.records.keys()]) if (!seen.has(id)) this.drop(id);
  }

  /** Replaces what is known of plans and accounts, and has the ring built again when it changed. */
  private setObjects(plans: StoredObject[], accounts: StoredObject[]): void {
    const before = JSON.stringify([[...this.plans.values()], [...this.accounts.values()]]);
    this.plans.clear();
    this.accounts.clear();
    for (const o of plans) this.putObject(o);
    for (const o of accounts) this.putObject(o);
    if (JSON.stringify([[...this.plans.values()], [...this.accounts.values()]]) !== before) this.apply({ objects: true });
  }

  private putObject(o: StoredObject): void {
    const parsed = o.kind === 'plan' ? planFromObject(o) : accountFromObject(o);
    if (!parsed) {
      this.log.error({ kind: o.kind, id: o.id }, 'a stored plan or account does not have the expected shape; ignored');
      return;
    }
    if (o.kind === 'plan') this.plans.set(o.id, parsed as RuntimePlan);
    else this.accounts.set(o.id, parsed as Account);
  }

  /** Applies an object this process just wrote (or learnt of), or its deletion (`undefined`). */
  setObject(kind: ObjectKind, id: string, object: StoredObject | undefined): void {
    if (object) this.putObject(object);
    else if (kind === 'plan') this.plans.delete(id);
    else this.accounts.delete(id);
    this.apply({ objects: true });
  }

  /** Reads one key again after the store said it changed. */
  async refresh(id: string): Promise<void> {
    const colon = id.indexOf(':');
    if (colon > 0) return this.refreshObject(id.slice(0, colon) as ObjectKind, id.slice(colon + 1));
    try {
      const record = await this.store.getKey(id);
      if (record) this.set(record);
      else this.drop(id);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, keyId: id }, 'could not read a changed key; reading all of them again soon');
      this.resyncIn(RESYNC_FIRST_MS);
    }
  }

  private async refreshObject(kind: ObjectKind, id: string): Promise<void> {
    if (kind !== 'plan' && kind !== 'account') return;
    try {
      this.setObject(kind, id, await this.store.getObject(kind, id));
    } catch (err) {
      this.log.warn({ err: (err as Error).message, kind, id }, 'could not read a changed plan or account; reading everything again soon');
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
