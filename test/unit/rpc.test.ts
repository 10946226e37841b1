// JSON-RPC as the gateway reads it (src/rpc/): bodies, the 16 methods' parameters made canonical,
// freshness, answers re-addressed, and Etherscan's proxy actions translated. Pure logic.
import { describe, expect, it } from 'vitest';
import { cacheKey, canonicalJson } from '../../src/cache/policy.js';
import { checkCall, pinFinality, RPC_METHODS, type CheckedCall } from '../../src/rpc/methods.js';
import { answer, codeForStatus, parseBody, upstreamMember } from '../../src/rpc/protocol.js';
import { proxyCall } from '../../src/rpc/proxy.js';

const A = '0xD8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
const a = A.toLowerCase();
const H = `0x${'Ab'.repeat(32)}`;
const checked = (c: ReturnType<typeof checkCall>): CheckedCall => {
  if ('invalid' in c) throw new Error(c.invalid);
  return c;
};

describe('parseBody', () => {
  it('reads one call or a batch, keeping ids as their JSON text', () => {
    expect(parseBody('{"jsonrpc":"2.0","id":"x","method":"eth_blockNumber"}', 10)).toMatchObject({
      kind: 'single',
      calls: [{ idJson: '"x"', outcome: { method: 'eth_blockNumber', params: [], freshness: 'head' } }],
    });
    const batch = parseBody('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2.5,"method":"nope"},7]', 10);
    expect(batch).toMatchObject({
      kind: 'batch',
      calls: [{ idJson: '1' }, { idJson: '2.5', outcome: { code: -32601 } }, { idJson: 'null', outcome: { code: -32600 } }],
    });
  });

  it('refuses what is not JSON (-32700), an empty batch (-32600) and counts a batch over the limit', () => {
    expect(parseBody('{', 10)).toMatchObject({ kind: 'refused', error: { code: -32700 } });
    expect(parseBody('[]', 10)).toMatchObject({ kind: 'refused', error: { code: -32600 } });
    expect(parseBody(JSON.stringify(Array(11).fill({})), 10)).toEqual({ kind: 'too-many', count: 11 });
  });

  it('refuses an id that is an object, a wrong jsonrpc and params that are not a list', () => {
    expect(parseBody('{"jsonrpc":"2.0","id":{},"method":"eth_chainId"}', 1)).toMatchObject({ calls: [{ outcome: { code: -32600 } }] });
    expect(parseBody('{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}', 1)).toMatchObject({ calls: [{ outcome: { code: -32600 } }] });
    expect(parseBody('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":{}}', 1)).toMatchObject({
      calls: [{ outcome: { code: -32602 } }],
    });
  });
});

describe('checkCall', () => {
  it('knows the 16 methods of the RPC document', () => {
    expect(RPC_METHODS).toHaveLength(16);
  });

  it('writes parameters in one canonical spelling, the omitted block tag included', () => {
    expect(checkCall('eth_getTransactionCount', [A])).toEqual({
      method: 'eth_getTransactionCount',
      params: [a, 'latest'],
      freshness: 'head',
    });
    expect(checkCall('eth_getCode', [a, '0x00ff'])).toEqual({ method: 'eth_getCode', params: [a, '0xff'], freshness: 'block' });
    expect(checkCall('eth_getStorageAt', [A, '0x0', { blockHash: H }])).toEqual({
      method: 'eth_getStorageAt',
      params: [a, '0x0', { blockHash: H.toLowerCase() }],
      freshness: 'pinned',
    });
    expect(checkCall('eth_call', [{ to: A, data: '0xAB', from: A }])).toEqual({
      method: 'eth_call',
      params: [{ data: '0xab', from: a, to: a }, 'latest'],
      freshness: 'head',
    });
  });

  it("writes eth_getBalance's block number in decimal, as Blockscout reads it", () => {
    expect(checked(checkCall('eth_getBalance', [A, '0x10'])).params).toEqual([a, '16']);
    expect(checkCall('eth_getBalance', [A, { blockHash: H }])).toMatchObject({ invalid: expect.stringContaining('block') as unknown });
  });

  it('tells how long an answer holds: never for writes and estimates, pinned by block hash', () => {
    expect(checked(checkCall('eth_sendRawTransaction', ['0x02f8'])).freshness).toBe('never');
    expect(checked(checkCall('eth_estimateGas', [{ to: A }, '0x1'])).freshness).toBe('never');
    expect(checked(checkCall('eth_getBlockByHash', [H, true])).freshness).toBe('pinned');
    expect(checked(checkCall('eth_getBlockByNumber', ['0x1', false])).freshness).toBe('block');
    expect(checked(checkCall('eth_getBlockByNumber', ['pending'])).freshness).toBe('head');
    expect(checked(checkCall('eth_chainId', [])).freshness).toBe('static');
    expect(checked(checkCall('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2', address: A }])).freshness).toBe('block');
    expect(checked(checkCall('eth_getLogs', [{ fromBlock: '0x1', address: A }])).freshness).toBe('head');
    expect(checked(checkCall('eth_getLogs', [{ blockHash: H, topics: [null, [H]] }])).freshness).toBe('pinned');
  });

  it('refuses bad shapes with a message naming the parameter', () => {
    expect(checkCall('eth_blockNumber', [1])).toEqual({ invalid: 'expected 0 parameters, got 1' });
    expect(checkCall('eth_getTransactionByHash', ['0x12'])).toMatchObject({
      invalid: expect.stringMatching(/^transaction hash/) as unknown,
    });
    expect(checkCall('eth_getLogs', [{ blockHash: H, fromBlock: '0x1' }])).toMatchObject({
      invalid: expect.stringContaining('blockHash') as unknown,
    });
    expect(checkCall('eth_getLogs', [{ foo: 1 }])).toEqual({ invalid: 'filter.foo: unknown field' });
    expect(checkCall('eth_sendRawTransaction', ['0xabc'])).toMatchObject({ invalid: expect.stringContaining('hex data') as unknown });
    expect(checkCall('eth_call', ['0x12'])).toEqual({ invalid: 'transaction: expected an object' });
  });

  it('writes objects with their keys sorted at every depth, and flat lists as they are', () => {
    expect(canonicalJson(['0xab', 'latest', false, null])).toBe('["0xab","latest",false,null]');
    expect(canonicalJson([{ to: '0x1', data: '0x2', nested: { z: 1, a: [{ y: 2, b: 3 }] } }, 'latest'])).toBe(
      '[{"data":"0x2","nested":{"a":[{"b":3,"y":2}],"z":1},"to":"0x1"},"latest"]',
    );
  });

  it('keys two spellings of one call the same, and other chains apart', () => {
    const one = checked(checkCall('eth_call', [{ to: A, data: '0xab' }, 'latest']));
    const two = checked(checkCall('eth_call', [{ data: '0xAB', to: a }]));
    expect(cacheKey('1', one)).toBe(cacheKey('1', two));
    expect(cacheKey('1', one)).not.toBe(cacheKey('100', one));
    expect(cacheKey('1', one)).toBe(`1 rpc eth_call [{"data":"0xab","to":"${a}"},"latest"]`);
  });
});

describe('answers', () => {
  it("re-addresses an explorer's member to the client's id", () => {
    const m = upstreamMember(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x10"}'))!;
    expect(m).toEqual({ member: '"result":"0x10"', storable: true });
    expect(JSON.parse(answer('"q"', m.member))).toEqual({ jsonrpc: '2.0', id: 'q', result: '0x10' });
  });

  it("never keeps null or an error, and turns Blockscout's string errors into EIP-1474 objects", () => {
    expect(upstreamMember(Buffer.from('{"id":1,"result":null}'))).toEqual({ member: '"result":null', storable: false });
    expect(upstreamMember(Buffer.from('{"id":1,"error":"Action not found."}'))).toEqual({
      member: '"error":{"code":-32000,"message":"Action not found."}',
      storable: false,
    });
    expect(upstreamMember(Buffer.from('{"id":1,"error":{"code":3,"message":"execution reverted","data":"0x08"}}'))!.member).toBe(
      '"error":{"code":3,"message":"execution reverted","data":"0x08"}',
    );
    expect(upstreamMember(Buffer.from('[1]'))).toBeUndefined();
    expect(upstreamMember(Buffer.from('{"id":1}'))).toBeUndefined();
  });
});

describe("Etherscan's proxy actions", () => {
  it('become the JSON-RPC call of the same meaning (one cache entry for both forms)', () => {
    const q = (o: Record<string, string>) => new Map(Object.entries(o));
    expect(proxyCall('eth_getBlockByNumber', q({ tag: '0x10', boolean: 'true' }))).toEqual(
      checkCall('eth_getBlockByNumber', ['0x10', true]),
    );
    expect(proxyCall('eth_getTransactionCount', q({ address: A, tag: 'latest' }))).toEqual(checkCall('eth_getTransactionCount', [A]));
    // ethers' EtherscanProvider posts its own field names (gasLimit).
    expect(proxyCall('eth_estimateGas', q({ to: A, gasLimit: '0x5208', value: '0x1' }))).toEqual(
      checkCall('eth_estimateGas', [{ to: A, gas: '0x5208', value: '0x1' }]),
    );
    expect(proxyCall('eth_getTransactionByHash', q({}))).toMatchObject({ invalid: expect.any(String) as unknown });
  });

  it('read a storage position in decimal as ethers writes it, 0x-prefixed as hex, other unprefixed hex as hex (issue 41)', () => {
    const q = (position: string) => new Map(Object.entries({ address: A, position, tag: 'latest' }));
    const slot = (hex: string) => checkCall('eth_getStorageAt', [A, hex, 'latest']);
    const eip1967 = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbcn;
    expect(proxyCall('eth_getStorageAt', q('10'))).toEqual(slot('0xa'));
    expect(proxyCall('eth_getStorageAt', q('0'))).toEqual(slot('0x0'));
    expect(proxyCall('eth_getStorageAt', q(eip1967.toString()))).toEqual(slot(`0x${eip1967.toString(16)}`));
    expect(proxyCall('eth_getStorageAt', q('0x10'))).toEqual(slot('0x10'));
    expect(proxyCall('eth_getStorageAt', q('ff'))).toEqual(slot('0xff'));
    const max = ((1n << 256n) - 1n).toString();
    expect(proxyCall('eth_getStorageAt', q(max))).toEqual(slot(`0x${'f'.repeat(64)}`));
    expect(proxyCall('eth_getStorageAt', q((1n << 256n).toString()))).toEqual({
      invalid: 'position: expected a storage slot: 0x and up to 64 hex digits, or a decimal integer below 2^256',
    });
    expect(proxyCall('eth_getStorageAt', q('1'.repeat(79)))).toMatchObject({ invalid: expect.stringContaining('position:') as unknown });
    expect(proxyCall('eth_getStorageAt', q('-1'))).toMatchObject({ invalid: expect.stringContaining('position:') as unknown });
  });
});

describe('JSON-RPC 2.0 by the letter (issue 41)', () => {
  it("keeps a numeric id's text when JSON.parse cannot hold it, alone and in a batch", () => {
    expect(parseBody('{"jsonrpc":"2.0","id":9007199254740993,"method":"eth_chainId"}', 1)).toMatchObject({
      calls: [{ idJson: '9007199254740993' }],
    });
    expect(
      parseBody(
        '[{"jsonrpc":"2.0","id":"big","method":"eth_chainId"},{"jsonrpc":"2.0","id":-1e400,"method":"x"},{"jsonrpc":"2.0","id":0.1000,"method":"eth_chainId"}]',
        5,
      ),
    ).toMatchObject({
      calls: [{ idJson: '"big"' }, { idJson: 'null', outcome: { code: -32600 } }, { idJson: '0.1000' }],
    });
    // Safe integers are read once, by JSON.parse: their text is theirs.
    expect(parseBody('{"jsonrpc":"2.0","id":42,"method":"eth_chainId"}', 1)).toMatchObject({ calls: [{ idJson: '42' }] });
  });

  it('tells a notification (a request without id) from a request with id null and from no request at all', () => {
    const calls = (text: string) => (parseBody(text, 5) as { calls: { notification: boolean; idJson: string }[] }).calls;
    expect(calls('{"jsonrpc":"2.0","method":"eth_chainId"}')).toMatchObject([{ notification: true }]);
    expect(calls('{"jsonrpc":"2.0","method":"eth_nope","params":[1]}')).toMatchObject([{ notification: true, outcome: { code: -32601 } }]);
    expect(calls('{"jsonrpc":"2.0","id":null,"method":"eth_chainId"}')).toMatchObject([{ notification: false, idJson: 'null' }]);
    expect(calls('[{"foo":"boo"},{"jsonrpc":"2.0","method":1}]')).toMatchObject([
      { notification: false, outcome: { code: -32600 } },
      { notification: false, outcome: { code: -32600 } },
    ]);
  });

  it('gives each refused status its code', () => {
    expect([401, 403, 404, 402, 429, 405, 413, 500, 503].map(codeForStatus)).toEqual([
      -32002, -32002, -32001, -32005, -32005, -32600, -32600, -32603, -32603,
    ]);
  });

  it("reads eth_getLogs' integer bounds as hex, and names a bad block parameter and what it takes", () => {
    expect(checked(checkCall('eth_getLogs', [{ address: A, fromBlock: 16, toBlock: 'latest' }])).params).toEqual([
      { address: a, fromBlock: '0x10', toBlock: 'latest' },
    ]);
    expect(checkCall('eth_getLogs', [{ address: A, fromBlock: 1.5 }])).toEqual({
      invalid:
        'filter.fromBlock: expected a block tag (latest, pending, safe, finalized, earliest) or a hex block number (0x...), got the number 1.5',
    });
    expect(checkCall('eth_getBalance', [A, 'newest'])).toEqual({
      invalid: 'block: expected a block tag (latest, pending, safe, finalized, earliest) or a hex block number (0x...), got "newest"',
    });
    expect(checkCall('eth_getBlockByNumber', [[1], false])).toMatchObject({ invalid: expect.stringContaining('got a list') as unknown });
  });

  it('writes finalized and safe as the final line, in the spelling each method is sent in, and knows when it cannot', () => {
    const pin = (method: Parameters<typeof checkCall>[0], params: unknown[], line: number | undefined) =>
      pinFinality(checked(checkCall(method, params)), line);
    expect(pin('eth_getBlockByNumber', ['finalized', false], 100)).toMatchObject({ params: ['0x64', false], freshness: 'block' });
    expect(pin('eth_getBalance', [A, 'safe'], 100)).toMatchObject({ params: [a, '100'], freshness: 'block' });
    expect(pin('eth_estimateGas', [{ to: A }, 'finalized'], 100)).toMatchObject({ params: [{ to: a }, '0x64'], freshness: 'never' });
    expect(pin('eth_getLogs', [{ address: A, fromBlock: 'finalized', toBlock: 'latest' }], 100)).toMatchObject({
      params: [{ fromBlock: '0x64', toBlock: 'latest' }],
      freshness: 'head',
    });
    expect(pin('eth_getLogs', [{ address: A, fromBlock: '0x1', toBlock: 'safe' }], 100)).toMatchObject({ freshness: 'block' });
    // Below genesis (a head within the depth): block 0.
    expect(pin('eth_getCode', [A, 'finalized'], -5)).toMatchObject({ params: [a, '0x0'] });
    expect(pin('eth_getCode', [A, 'finalized'], undefined)).toBeUndefined();
    const latest = checked(checkCall('eth_getCode', [A, 'latest']));
    expect(pinFinality(latest, undefined)).toBe(latest);
  });
});
