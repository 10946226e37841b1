// auth/bad-keys.ts on its own: the sliding window, the block and its end, the bounds, reconfiguring.
import { describe, expect, it } from 'vitest';
import { BadKeys, type BadKeysSettings } from '../../src/auth/bad-keys.js';

const DEFAULTS: BadKeysSettings = { failures: 20, windowSeconds: 60, blockSeconds: 300, maxAddresses: 10_000 };
const T0 = 1_700_000_000_000;

/** `n` wrong keys from `address` at `at`, `stepMs` apart; whether the last one blocked. */
function fail(guard: BadKeys, address: string, n: number, at: number, stepMs = 0): boolean {
  let blocked = false;
  for (let i = 0; i < n; i++) blocked = guard.failed(address, at + i * stepMs);
  return blocked;
}

describe('BadKeys', () => {
  it('blocks on the 20th wrong key within 60 s, for 300 s; other addresses untouched', () => {
    const guard = new BadKeys(DEFAULTS);
    expect(guard.blocking).toBe(false);
    expect(fail(guard, 'a', 19, T0, 1_000)).toBe(false);
    expect(guard.blocking).toBe(false);
    expect(guard.failed('a', T0 + 59_999)).toBe(true);
    expect(guard.blocking).toBe(true);
    expect(guard.blockedMs('a', T0 + 59_999)).toBe(300_000);
    expect(guard.blockedMs('b', T0 + 59_999)).toBe(0);
    expect(guard.blockedMs(undefined, T0 + 59_999)).toBe(0);
    expect(guard.blockedMs('a', T0 + 59_999 + 299_999)).toBe(1);
    expect(guard.blockedMs('a', T0 + 59_999 + 300_000)).toBe(0);
    // Ended blocks are swept: requests are back to the size check alone.
    expect(guard.blocking).toBe(false);
  });

  it('does not block 20 wrong keys spanning the window or more', () => {
    const guard = new BadKeys(DEFAULTS);
    // The 20 latest always span 19 * 3,158 = 60,002 ms.
    expect(fail(guard, 'a', 200, T0, 3_158)).toBe(false);
    // Exactly 60 s between the first and the 20th is outside a 60 s window.
    const other = new BadKeys(DEFAULTS);
    expect(fail(other, 'b', 19, T0, 0)).toBe(false);
    expect(other.failed('b', T0 + 60_000)).toBe(false);
    expect(other.blocking).toBe(false);
  });

  it('counts afresh after a block ends', () => {
    const guard = new BadKeys({ ...DEFAULTS, failures: 3, windowSeconds: 3_600, blockSeconds: 10 });
    expect(fail(guard, 'a', 3, T0)).toBe(true);
    expect(guard.blockedMs('a', T0 + 10_000)).toBe(0);
    expect(fail(guard, 'a', 2, T0 + 10_000)).toBe(false);
    expect(guard.failed('a', T0 + 10_001)).toBe(true);
  });

  it('failures: 1 blocks on the first wrong key; failures: 0 never', () => {
    const one = new BadKeys({ ...DEFAULTS, failures: 1 });
    expect(one.failed('a', T0)).toBe(true);
    const off = new BadKeys({ ...DEFAULTS, failures: 0 });
    expect(fail(off, 'a', 1_000, T0)).toBe(false);
    expect(off.counted).toBe(0);
    expect(off.blocking).toBe(false);
  });

  it('holds counters and blocks of at most maxAddresses addresses, however many fail', () => {
    const guard = new BadKeys({ ...DEFAULTS, failures: 2, maxAddresses: 1_000 });
    for (let i = 0; i < 100_000; i++) guard.failed(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, T0 + i);
    expect(guard.counted).toBeLessThanOrEqual(1_000);
    expect(guard.blocked).toBe(0);
    // Blocks: 5,000 addresses blocked, the 1,000 most recent kept.
    for (let i = 0; i < 5_000; i++) fail(guard, `b${i}`, 2, T0 + 200_000 + i);
    expect(guard.blocked).toBe(1_000);
    expect(guard.counted).toBeLessThanOrEqual(1_000);
    expect(guard.blockedMs('b4999', T0 + 205_000)).toBeGreaterThan(0);
    expect(guard.blockedMs('b0', T0 + 205_000)).toBe(0);
  });

  it('makes room for a new block by dropping ended ones first', () => {
    const guard = new BadKeys({ ...DEFAULTS, failures: 1, blockSeconds: 10, maxAddresses: 2 });
    guard.failed('a', T0);
    guard.failed('b', T0 + 20_000);
    guard.failed('c', T0 + 20_001); // a has ended: dropped, b kept
    expect(guard.blocked).toBe(2);
    expect(guard.blockedMs('b', T0 + 20_001)).toBeGreaterThan(0);
    expect(guard.blockedMs('c', T0 + 20_001)).toBeGreaterThan(0);
  });

  it('configure: new settings apply, blocks stay, failures: 0 lifts them all', () => {
    const guard = new BadKeys({ ...DEFAULTS, failures: 2 });
    fail(guard, 'a', 2, T0);
    guard.failed('b', T0);
    guard.configure({ ...DEFAULTS, failures: 3 });
    expect(guard.blockedMs('a', T0)).toBe(300_000);
    expect(guard.counted).toBe(0); // counters of the old shape started afresh
    expect(fail(guard, 'b', 2, T0)).toBe(false);
    expect(guard.failed('b', T0)).toBe(true);
    guard.configure({ ...DEFAULTS, failures: 3, maxAddresses: 1 });
    expect(guard.blocked).toBe(1);
    guard.configure({ ...DEFAULTS, failures: 0 });
    expect(guard.blocking).toBe(false);
    expect(guard.blockedMs('b', T0)).toBe(0);
  });
});
