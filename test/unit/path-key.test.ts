// The key as the request target's `/key/<KEY>/` prefix comes out before anything reads the
// target (auth/path-key.ts; hardhat-verify 2's Blockscout mode, issue 41).
import { describe, expect, it } from 'vitest';
import { takePathKey } from '../../src/auth/path-key.js';

describe('takePathKey', () => {
  it('leaves every other target alone', () => {
    expect(takePathKey('/1/api?module=contract&action=getsourcecode')).toBeUndefined();
    expect(takePathKey('/1/api/v2/addresses/0x00/transactions')).toBeUndefined();
    expect(takePathKey('/KEY/abc/1/api')).toBeUndefined(); // lower case only
    expect(takePathKey('/keys/abc/1/api')).toBeUndefined();
    expect(takePathKey('/1/key/abc/api')).toBeUndefined(); // a prefix, nowhere else
  });

  it('takes the segment after /key/, the rest of the target kept as sent', () => {
    expect(takePathKey('/key/abc/1/api?module=contract&action=checkverifystatus&guid=1')).toEqual({
      url: '/1/api?module=contract&action=checkverifystatus&guid=1',
      key: 'abc',
    });
    expect(takePathKey('/key/abc/1/json-rpc')).toEqual({ url: '/1/json-rpc', key: 'abc' });
    expect(takePathKey('/key/abc')).toEqual({ url: '/', key: 'abc' });
    expect(takePathKey('/key/abc?x=1')).toEqual({ url: '/?x=1', key: 'abc' });
    expect(takePathKey('/key//1/api')).toEqual({ url: '/1/api', key: '' });
  });

  it('percent-decodes the key; one that does not decode is kept as sent', () => {
    expect(takePathKey('/key/a%2Fb%20c/1/api')).toEqual({ url: '/1/api', key: 'a/b c' });
    expect(takePathKey('/key/a%zz/1/api')).toEqual({ url: '/1/api', key: 'a%zz' });
  });
});
