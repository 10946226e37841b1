// `apikey` comes out of the request target before route resolution, so that nothing after the
// key step (the per-URL memo, cache keys, logs, the upstream request) can hold a client's key.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { takeApiKeys } from '../../src/auth/query-key.js';

const P = '/1/api/v2/addresses/0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045/transactions';

/** `apikey` with each letter in either case, as a client might spell it. */
const anyCase = fc
  .array(fc.boolean(), { minLength: 6, maxLength: 6 })
  .map((upper) => [...'apikey'].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

describe('takeApiKeys', () => {
  it('leaves a target without apikey alone (undefined: nothing to take)', () => {
    expect(takeApiKeys(P)).toBeUndefined();
    expect(takeApiKeys(`${P}?filter=to&items_count=5`)).toBeUndefined();
    expect(takeApiKeys(`${P}?q=apikey`)).toBeUndefined(); // a value, not the name
    expect(takeApiKeys(`${P}?q=%41`)).toBeUndefined();
  });

  it('takes every apikey, keeps the other parameters as sent and in order', () => {
    expect(takeApiKeys(`${P}?filter=to&apikey=k1&items_count=5&apikey=k2`)).toEqual({
      url: `${P}?filter=to&items_count=5`,
      apikeys: ['k1', 'k2'],
    });
    expect(takeApiKeys(`${P}?apikey=k1`)).toEqual({ url: P, apikeys: ['k1'] });
    expect(takeApiKeys(`${P}?apikey=`)).toEqual({ url: P, apikeys: [''] });
    expect(takeApiKeys(`${P}?apikey`)).toEqual({ url: P, apikeys: [''] });
  });

  it('finds the name however it is encoded, and decodes the value', () => {
    expect(takeApiKeys(`${P}?%61pikey=a%2Bb&x=1`)).toEqual({ url: `${P}?x=1`, apikeys: ['a+b'] });
    expect(takeApiKeys(`${P}?apikey=a+b`)).toEqual({ url: P, apikeys: ['a b'] });
    expect(takeApiKeys(`${P}?apikey=%E0%A4%A`)).toEqual({ url: P, apikeys: ['%E0%A4%A'] });
  });

  it('finds the name in any letter case: apiKey (etherscan-api 10, Etherscan itself), APIKEY, encoded too', () => {
    expect(takeApiKeys(`${P}?module=account&apiKey=k1&x=1`)).toEqual({ url: `${P}?module=account&x=1`, apikeys: ['k1'] });
    expect(takeApiKeys(`${P}?APIKEY=k1`)).toEqual({ url: P, apikeys: ['k1'] });
    expect(takeApiKeys(`${P}?x=1&ApIkEy=k1`)).toEqual({ url: `${P}?x=1`, apikeys: ['k1'] });
    expect(takeApiKeys(`${P}?%41PI%4Bey=k1&x=1`)).toEqual({ url: `${P}?x=1`, apikeys: ['k1'] });
    expect(takeApiKeys(`${P}?apiKey`)).toEqual({ url: P, apikeys: [''] });
    expect(takeApiKeys(`${P}?apikey=k1&x=1&APIKEY=k2&apiKey=k3`)).toEqual({ url: `${P}?x=1`, apikeys: ['k1', 'k2', 'k3'] });
    expect(takeApiKeys(`${P}?APIKEY=k1&apikey=k2`)).toEqual({ url: P, apikeys: ['k1', 'k2'] });
  });

  it('takes only that name: not a longer one, not a look-alike letter, not a value', () => {
    expect(takeApiKeys(`${P}?apiKeys=1&xApiKey=2&api_key=3`)).toBeUndefined();
    // U+212A KELVIN SIGN lower-cases to k in Unicode; the name is compared in ASCII's case only.
    expect(takeApiKeys(`${P}?api%E2%84%AAey=1`)).toBeUndefined();
    expect(takeApiKeys(`${P}?q=APIKEY&r=apiKey`)).toBeUndefined();
    // A key may read like the name (etherscan-api's default key is YourApiKeyToken).
    expect(takeApiKeys(`${P}?apikey=YourApiKeyToken&x=1`)).toEqual({ url: `${P}?x=1`, apikeys: ['YourApiKeyToken'] });
    expect(takeApiKeys(`${P}?x=1&apiKey=MyAPIKEY`)).toEqual({ url: `${P}?x=1`, apikeys: ['MyAPIKEY'] });
  });

  it('never leaves a key in the target, whatever the query', () => {
    const pair = fc.tuple(
      fc.constantFrom('apikey', '%61pikey', 'apik%65y', 'apiKey', 'APIKEY', '%41piKey', 'filter', 'x'),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(pair, { maxLength: 6 }), fc.stringMatching(/^[A-Za-z0-9]{12,20}$/), anyCase, (pairs, secret, spelling) => {
        const query = [...pairs.map(([n, v]) => `${n}=${encodeURIComponent(v)}`), `${spelling}=${secret}`].join('&');
        const taken = takeApiKeys(`${P}?${query}`);
        expect(taken?.apikeys).toContain(secret);
        expect(taken?.url).not.toContain(secret);
        expect(decodeURIComponent(taken?.url ?? '')).not.toMatch(/[?&]apikey=/i);
      }),
      { seed: 20261123 },
    );
  });
});

describe('takeApiKeys, the usual form and the general one', () => {
  /** What the query means: its pairs in order, decoded, those named apikey (in any ASCII case) taken out. */
  function reference(query: string): { rest: string[]; keys: string[] } {
    const rest: string[] = [];
    const keys: string[] = [];
    for (const pair of query.split('&')) {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      if (decodeURIComponent(name).replace(/[A-Z]/g, (c) => c.toLowerCase()) === 'apikey')
        keys.push(decodeURIComponent(eq === -1 ? '' : pair.slice(eq + 1)));
      else rest.push(pair);
    }
    return { rest, keys };
  }

  it('agree with what the query means, for plain and encoded queries alike', () => {
    const name = fc.oneof(
      fc.constantFrom('apikey', 'apikeys', 'xapikey', 'filter', 'a', '%61pikey', '%41PIKEY', 'APIKEYS', 'api%E2%84%AAey'),
      anyCase,
    );
    const value = fc.oneof(fc.stringMatching(/^[A-Za-z0-9._~-]{0,12}$/), anyCase, fc.constantFrom('YourApiKeyToken', 'x%2By'));
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { minLength: 1, maxLength: 5 }), (pairs) => {
        const query = pairs.map(([n, v]) => `${n}=${v}`).join('&');
        const taken = takeApiKeys(`${P}?${query}`);
        const { rest, keys } = reference(query);
        if (keys.length === 0) expect(taken).toBeUndefined();
        else expect(taken).toEqual({ url: rest.length > 0 ? `${P}?${rest.join('&')}` : P, apikeys: keys });
      }),
      { seed: 20261124, numRuns: 500 },
    );
  });
});
