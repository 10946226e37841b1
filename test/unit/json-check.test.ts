// isJson (http/json-check.ts) gives JSON.parse's verdict on a body's bytes, whatever they are.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJson } from '../../src/http/json-check.js';

const parses = (b: Buffer): boolean => {
  try {
    JSON.parse(b.toString('utf8'));
    return true;
  } catch {
    return false;
  }
};
const same = (b: Buffer): void => {
  expect(isJson(b), JSON.stringify(b.toString('utf8'))).toBe(parses(b));
};

describe('isJson', () => {
  it('takes every JSON text, however it is spaced', () => {
    fc.assert(
      fc.property(fc.json(), fc.constantFrom('', ' ', '\n', '\t\r\n '), (text, pad) => {
        const b = Buffer.from(pad + text + pad, 'utf8');
        expect(isJson(b)).toBe(true);
        expect(isJson(Buffer.from(JSON.stringify(JSON.parse(text), null, 2)))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees with JSON.parse on damaged JSON: a byte cut, changed or added', () => {
    fc.assert(
      fc.property(
        fc.json(),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.constantFrom('cut', 'change', 'add', 'truncate'),
        (text, at, byte, how) => {
          const b = Buffer.from(text, 'utf8');
          const k = b.length === 0 ? 0 : at % b.length;
          const damaged =
            how === 'cut'
              ? Buffer.concat([b.subarray(0, k), b.subarray(k + 1)])
              : how === 'change'
                ? Buffer.concat([b.subarray(0, k), Buffer.from([byte]), b.subarray(k + 1)])
                : how === 'add'
                  ? Buffer.concat([b.subarray(0, k), Buffer.from([byte]), b.subarray(k)])
                  : b.subarray(0, k);
          same(damaged);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('agrees with JSON.parse on any bytes and any text', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => same(Buffer.from(bytes))),
      { numRuns: 5000 },
    );
    const alphabet = fc.constantFrom(...'{}[]",:-+.0123456789eEtruefalsn \\/ubx\n\u0001é'.split(''));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 30 }), (chars) => same(Buffer.from(chars.join(''), 'utf8'))),
      { numRuns: 20_000 },
    );
  });

  it.each([
    ['', false],
    ['   ', false],
    ['{}', true],
    ['[]', true],
    ['[1,]', false],
    ['{"a":1,}', false],
    ['{"a" 1}', false],
    ['{1:2}', false],
    ['01', false],
    ['-0.5e+10', true],
    ['1.', false],
    ['"\\u00e9\\n"', true],
    ['"\\x"', false],
    ['"a\tb"', false],
    ['\ufeff{}', false],
    ['<html><body>502 Bad Gateway</body></html>', false],
    ['{"items":[{"a":1}],"next_page_params":null}', true],
    ['{"items":[{"a":1}],"next_page_params":nul', false],
    ['['.repeat(80) + ']'.repeat(80), true],
  ])('%j: %s', (text, valid) => {
    expect(isJson(Buffer.from(text, 'utf8'))).toBe(valid);
    expect(parses(Buffer.from(text, 'utf8'))).toBe(valid);
  });

  it('takes nesting deeper than its first stack', () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    expect(isJson(Buffer.from(deep))).toBe(true);
    expect(isJson(Buffer.from(deep.slice(0, -1)))).toBe(false);
  });
});
