import { NO_TERMS } from '../../src/store/records.js';
import { describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/digest.js';
import { conflictMessage, extractKey } from '../../src/auth/credentials.js';
import { configKeyId, KeyRing } from '../../src/keys/ring.js';
import type { KeyRecord } from '../../src/store/types.js';

describe('extractKey', () => {
  it('reads a Bearer credential, case-insensitively', () => {
    expect(extractKey('Bearer abc', [])).toEqual({ kind: 'key', key: 'abc' });
    expect(extractKey('bearer   abc ', [])).toEqual({ kind: 'key', key: 'abc' });
  });

  it('reads apikey from the query', () => {
    expect(extractKey(undefined, ['abc'])).toEqual({ kind: 'key', key: 'abc' });
  });

  it('accepts both when they agree and refuses them when they differ, naming the two places', () => {
    expect(extractKey('Bearer abc', ['abc'])).toEqual({ kind: 'key', key: 'abc' });
    expect(extractKey('Bearer abc', ['abc'], ['abc'])).toEqual({ kind: 'key', key: 'abc' });
    expect(extractKey(undefined, ['abc'], ['abc'])).toEqual({ kind: 'key', key: 'abc' });
    expect(extractKey(undefined, [], ['abc'])).toEqual({ kind: 'key', key: 'abc' });
    const cases: [ReturnType<typeof extractKey>, string][] = [
      [extractKey('Bearer abc', ['xyz']), 'Conflicting API keys in the Authorization header and the apikey query parameter'],
      [extractKey('Bearer abc', [], ['xyz']), 'Conflicting API keys in the Authorization header and the apikey form field'],
      [extractKey(undefined, ['abc'], ['xyz']), 'Conflicting API keys in the apikey query parameter and the apikey form field'],
      [extractKey(undefined, ['abc', 'xyz']), 'Conflicting API keys in two apikey query parameters'],
      [extractKey(undefined, [], ['abc', 'xyz']), 'Conflicting API keys in two apikey form fields'],
    ];
    for (const [source, message] of cases) {
      expect(source.kind).toBe('conflict');
      if (source.kind === 'conflict') expect(conflictMessage(source.places)).toBe(message);
    }
  });

  it('lets a real key win over a placeholder in any place; a placeholder alone is a key marked so (issue 41)', () => {
    // hardhat-verify's Blockscout mode: its apikey=api_key in the form, the key in apiURL's query.
    expect(extractKey(undefined, ['KEY'], ['api_key'])).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey(undefined, ['api_key', 'KEY'])).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey('Bearer KEY', ['YourApiKeyToken'])).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey('Bearer api_key', [], ['KEY'])).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey(undefined, [], ['api_key'])).toEqual({ kind: 'key', key: 'api_key', placeholder: true });
    expect(extractKey(undefined, ['api_key'], ['YourApiKeyToken'])).toEqual({ kind: 'key', key: 'api_key', placeholder: true });
    // Two real keys beside a placeholder still conflict.
    expect(extractKey(undefined, ['A', 'api_key'], ['B'])).toEqual({ kind: 'conflict', places: ['query', 'form'] });
  });

  it('reads the /key/ path prefix as a key of its own place: beside the others, a placeholder, or in conflict (issue 41)', () => {
    expect(extractKey(undefined, [], [], 'KEY')).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey('Bearer KEY', ['KEY'], ['KEY'], 'KEY')).toEqual({ kind: 'key', key: 'KEY' });
    // hardhat-verify's Blockscout mode: the key in apiURL's path, its own apikey=api_key in the query (GET) or form (POST).
    expect(extractKey(undefined, ['api_key'], [], 'KEY')).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey(undefined, [], ['api_key'], 'KEY')).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey(undefined, ['KEY'], [], 'api_key')).toEqual({ kind: 'key', key: 'KEY' });
    expect(extractKey(undefined, [], [], 'api_key')).toEqual({ kind: 'key', key: 'api_key', placeholder: true });
    expect(extractKey(undefined, [], [], '')).toEqual({ kind: 'none' });
    const cases: [ReturnType<typeof extractKey>, string][] = [
      [extractKey('Bearer abc', [], [], 'xyz'), 'Conflicting API keys in the Authorization header and the /key/ path prefix'],
      [extractKey(undefined, ['xyz'], [], 'abc'), 'Conflicting API keys in the /key/ path prefix and the apikey query parameter'],
      [extractKey(undefined, [], ['xyz'], 'abc'), 'Conflicting API keys in the /key/ path prefix and the apikey form field'],
    ];
    for (const [source, message] of cases) {
      expect(source.kind).toBe('conflict');
      if (source.kind === 'conflict') expect(conflictMessage(source.places)).toBe(message);
    }
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

  it('finds keys given in clear or as a digest, by the digest; a configured key counts under its digest', () => {
    expect(ring.find('k-clear', 0)).toMatchObject({
      name: 'clear',
      account: hashKey('k-clear'),
      planName: 'free',
      id: configKeyId('clear'),
    });
    expect(ring.find('k-clear', 0)).toBe(ring.find('k-clear', 0));
    expect(ring.find('k-digest', 0)).toMatchObject({ name: 'digest', status: 'disabled' });
    expect(ring.find('k-digest', 0)?.chains?.has('1')).toBe(true);
    expect(ring.find('nope', 0)).toBeUndefined();
  });

  const record = (over: Partial<KeyRecord> = {}): KeyRecord => ({
    id: 'key_aaaaaaaaaaaaaaaa',
    name: 'acme',
    owner: 'acme-corp',
    plan: 'free',
    chains: null,
    status: 'active',
    expiresAt: null,
    createdAt: 0,
    prefix: 'egw_abcdefgh',
    digest: hashKey('egw_first'),
    previous: null,
    ...NO_TERMS,
    ...over,
  });

  it('holds run-time keys beside configured ones; a run-time key counts under its id, whatever its secret', () => {
    const r = new KeyRing({ plans, keys: [] }, [record()]);
    expect(r.find('egw_first', 0)).toMatchObject({
      id: 'key_aaaaaaaaaaaaaaaa',
      account: 'key_aaaaaaaaaaaaaaaa',
      owner: 'acme-corp',
      source: 'runtime',
    });
    r.put(record({ digest: hashKey('egw_second'), previous: { digest: hashKey('egw_first'), until: 1_000 } }));
    expect(r.find('egw_second', 0)?.account).toBe('key_aaaaaaaaaaaaaaaa');
    // The rolled-away secret: accepted until its grace ends, then unknown.
    expect(r.find('egw_first', 999)?.id).toBe('key_aaaaaaaaaaaaaaaa');
    expect(r.find('egw_first', 1_000)).toBeUndefined();
    r.remove('key_aaaaaaaaaaaaaaaa');
    expect(r.find('egw_second', 0)).toBeUndefined();
  });

  it('keeps a run-time key whose plan the configuration lacks, refused until the plan is back', () => {
    const r = new KeyRing({ plans, keys: [] }, [record({ plan: 'gold' })]);
    expect(r.find('egw_first', 0)).toBeUndefined();
    expect(r.record('key_aaaaaaaaaaaaaaaa')?.plan).toBe('gold');
  });

  it('knows the names taken, by configured and run-time keys', () => {
    const r = new KeyRing({ plans, keys: [{ name: 'yaml', key: 'k', plan: 'free', status: 'active' }] }, [record()]);
    expect([r.nameTaken('yaml'), r.nameTaken('acme'), r.nameTaken('acme', 'key_aaaaaaaaaaaaaaaa'), r.nameTaken('free')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('new secrets', () => {
  it('are egw_ and 43 base-62 characters, all different, their prefix the first 12 characters and an ellipsis', async () => {
    const { newSecret } = await import('../../src/keys/runtime.js');
    const secrets = Array.from({ length: 200 }, () => newSecret());
    for (const s of secrets) {
      expect(s.secret).toMatch(/^egw_[A-Za-z0-9]{43}$/);
      expect(s.prefix).toBe(`${s.secret.slice(0, 12)}…`);
      expect(s.digest).toBe(hashKey(s.secret));
    }
    expect(new Set(secrets.map((s) => s.secret)).size).toBe(200);
    // Every character of the alphabet turns up: no bias toward a part of it.
    expect(new Set(secrets.flatMap((s) => [...s.secret.slice(4)])).size).toBe(62);
  });
});
