// request/form.ts keysInPrefix: the `apikey` fields of the first bytes of a posted form, what the
// gateway reads of a request that named no usable key elsewhere (rpc.maxKeylessBodyBytes).
import { describe, expect, it } from 'vitest';
import { keysInPrefix } from '../../src/request/form.js';

const FORM = 'application/x-www-form-urlencoded';
const part = (b: string, name: string, value: string, file?: string): string =>
  `--${b}\r\nContent-Disposition: form-data; name="${name}"${file === undefined ? '' : `; filename="${file}"`}\r\n\r\n${value}\r\n`;

describe('keysInPrefix', () => {
  it('urlencoded: the fields before the last & (the one after may be cut), apikey in any case, percent-decoded', () => {
    expect(keysInPrefix(FORM, Buffer.from('apikey=K1&module=contract&sourceCode=aaaa'))).toEqual(['K1']);
    expect(keysInPrefix(undefined, Buffer.from('module=contract&APIKEY=K%2B2&sourceCode=aa'))).toEqual(['K+2']);
    // A key as the last field of the prefix may be cut short: not taken.
    expect(keysInPrefix(FORM, Buffer.from('module=contract&apikey=K1'))).toEqual([]);
    expect(keysInPrefix(FORM, Buffer.from('sourceCode=aaaa'))).toEqual([]);
  });

  it('multipart: the text parts whole in the prefix, until the first file part', () => {
    const b = 'XyZ';
    const type = `multipart/form-data; boundary=${b}`;
    expect(
      keysInPrefix(type, Buffer.from(part(b, 'module', 'contract') + part(b, 'apiKey', 'K1') + part(b, 'files[0]', 'aaaa', 'a.sol'))),
    ).toEqual(['K1']);
    // After a file part nothing is looked at.
    expect(keysInPrefix(type, Buffer.from(part(b, 'files[0]', 'aaaa', 'a.sol') + part(b, 'apikey', 'K1')))).toEqual([]);
    // A part cut off by the prefix's end is not taken.
    expect(
      keysInPrefix(type, Buffer.from(`${part(b, 'module', 'contract')}--${b}\r\nContent-Disposition: form-data; name="apikey"\r\n\r\nK1`)),
    ).toEqual([]);
    // A quoted boundary, a preamble, and the closing delimiter.
    expect(
      keysInPrefix('multipart/form-data; boundary="a b"', Buffer.from(`preamble\r\n${part('a b', 'apikey', 'K2')}--a b--\r\n`)),
    ).toEqual(['K2']);
    expect(keysInPrefix('multipart/form-data', Buffer.from(part(b, 'apikey', 'K1')))).toEqual([]);
  });

  it('another type carries no key', () => {
    expect(keysInPrefix('application/json', Buffer.from('{"apikey":"K1"}&'))).toEqual([]);
  });
});
