// Header helpers: decimal() must write exactly what String() writes, for every number.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimal, isPassableResponseHeader } from '../../src/http/headers.js';

describe('decimal', () => {
  it('writes the same digits as String() for every safe integer', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => decimal(n) === String(n)),
      { numRuns: 20_000 },
    );
  });

  it('writes the same as String() at the group boundaries and for anything else', () => {
    const cases = [0, 9, 10, 999, 1000, 1001, 999_999, 1_000_000, 1_000_000_007, Number.MAX_SAFE_INTEGER, -1, -0, 0.5, 1e21, NaN, Infinity];
    for (const n of cases) expect(decimal(n)).toBe(String(n));
    fc.assert(fc.property(fc.double(), (n) => decimal(n) === String(n)));
  });
});

describe('response headers an upstream may pass on', () => {
  const none = new Set<string>();
  it('drops what the gateway sets itself', () => {
    for (const name of ['x-request-id', 'x-cache', 'age', 'x-ratelimit-limit', 'x-credits-remaining', 'content-length', 'date']) {
      expect(isPassableResponseHeader(name, none)).toBe(false);
    }
    expect(isPassableResponseHeader('cache-control', none)).toBe(true);
  });
});
