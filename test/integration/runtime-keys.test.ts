// A failed read of every run-time key is tried again until one succeeds (keys/runtime.ts). The
// chaos run found a gateway that kept a revoked key: after a Redis reconnect its subscription
// came back before its command connection, the read that followed failed, and nothing read
// again. Here a real store fails the read on purpose once, while a key is revoked behind the
// process's back.
import { NO_TERMS } from '../../src/store/records.js';
import type { Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { newKeyId, newSecret, RuntimeKeys } from '../../src/keys/runtime.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { AuditEntry, KeyRecord, KeyStore } from '../../src/store/types.js';
import { until } from '../support/wait.js';

const closing: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

function record(): KeyRecord {
  const { digest, prefix } = newSecret();
  return {
    id: newKeyId(),
    name: `acme-${newKeyId()}`,
    owner: null,
    plan: 'free',
    chains: null,
    status: 'active',
    expiresAt: null,
    createdAt: Date.now(),
    prefix,
    digest,
    previous: null,
    ...NO_TERMS,
  };
}

const audit = (action: AuditEntry['action'], keyId: string): AuditEntry => ({
  at: Date.now(),
  action,
  actor: 'ops',
  keyId,
  before: null,
  after: null,
});

/** The real store, whose next `failures` listKeys calls fail as a store away would. */
function faulty(store: SqliteStore): { store: KeyStore; fail: (n: number) => void; reads: () => number } {
  let failures = 0;
  let reads = 0;
  const wrapped = new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'listKeys') {
        return () => {
          reads++;
          if (failures > 0) {
            failures--;
            return Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false"));
          }
          return target.listKeys();
        };
      }
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, fail: (n) => (failures = n), reads: () => reads };
}

describe('run-time keys after a failed read', () => {
  it('are read again until a read succeeds, so a key revoked meanwhile is dropped', async () => {
    const real = new SqliteStore(':memory:');
    closing.push(() => real.close());
    const { store, fail, reads } = faulty(real);
    const errors: string[] = [];
    const log = { warn: () => undefined, error: (...args: unknown[]) => void errors.push(String(args[1])) } as unknown as Pick<
      Logger,
      'warn' | 'error'
    >;
    const runtime = new RuntimeKeys(store, () => undefined, log);
    closing.push(() => runtime.close());
    const k = record();
    await real.createKey(k, audit('create', k.id));
    await runtime.resync();
    expect(runtime.records.has(k.id)).toBe(true);

    // Revoked by another process; this one missed the notice and reads again, which fails twice.
    await real.deleteKey(k.id, audit('revoke', k.id));
    fail(2);
    await runtime.resync();
    expect(runtime.records.has(k.id)).toBe(true); // kept: nothing better is known yet
    expect(errors).toEqual(['could not read the run-time keys; keeping the ones known, trying again']);
    await until(() => !runtime.records.has(k.id), 'the key to be dropped by a later read');
    expect(reads()).toBe(4); // the first read, the failed one, one failed retry, one that worked
    expect(errors).toHaveLength(2);
  });
});
