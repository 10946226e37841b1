import { describe, expect, it } from 'vitest';
import { extractKey, hashKey, KeyRing } from '../../src/auth/keys.js';

describe('extractKey', () => {
  it('reads a Bearer credential, case-insensitively', () => {
    expect(extractKey('Bearer abc', [])).toEqual({ kind: 'key', key: 'abc' });
    expect(extractKey('bearer   abc ', [])).toEqual({ kind: 'key', key: 'abc' });
  });

  it('reads apikey from the query', () => {
    expect(extractKey(undefined, ['abc'])).toEqual({ kind: 'key', key: 'abc' });
  });

  it('accepts both when they agree and refuses them when they differ', () => {
    expect(extractKey('Bearer abc', ['abc'])).toEqual({ kind: 'key', key: 'abc' });
    expect(extractKey('Bearer abc', ['xyz'])).toEqual({ kind: 'conflict' });
    expect(extractKey(undefined, ['abc', 'xyz'])).toEqual({ kind: 'conflict' });
  });

  it('refuses an Authorization header that is not Bearer', () => {
    expect(extractKey('Basic dXNlcjpwYXNz', [])).toEqual({ kind: 'bad-scheme' });
    expect(extractKey('Bearer', ['abc'])).toEqual({ kind: 'bad-scheme' });
  });

  it('finds no key in empty values', () => {
    expect(extractKey(undefined, [])).toEqual({ kind: 'none' });
    expect(extractKey('', [''])).toEqual({ kind: 'none' });
  });
});

describe('KeyRing', () => {
  const plans = { free: { rps: 5, credits: 10, period: 'daily' as const } };
  const ring = new KeyRing({
    plans,
    keys: [
      { name: 'clear', key: 'k-clear', plan: 'free', status: 'active' },
      { name: 'digest', sha256: hashKey('k-digest').toUpperCase(), plan: 'free', status: 'disabled', chains: ['1'] },
    ],
  });

  it('hashes keys with sha256', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('finds keys given in clear or as a digest, by the digest', () => {
    expect(ring.find('k-clear')).toMatchObject({ name: 'clear', digest: hashKey('k-clear'), planName: 'free' });
    expect(ring.find('k-clear')).toBe(ring.find('k-clear'));
    expect(ring.find('k-digest')).toMatchObject({ name: 'digest', status: 'disabled' });
    expect(ring.find('k-digest')?.chains?.has('1')).toBe(true);
    expect(ring.find('nope')).toBeUndefined();
  });
});
