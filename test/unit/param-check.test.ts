import { describe, expect, it } from 'vitest';
import { canonicalInteger, checkLegacy, checkV2, compileParamCheck } from '../../src/routes/param-check.js';
import { matchLegacy, matchV2 } from '../../src/routes/match.js';
import type { ParamSchema } from '../../src/routes/spec-types.js';
import { ROUTE_TABLE, routeByName, type LegacyRouteSpec, type V2RouteSpec } from '../../src/routes/table.js';

const A = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
const a = A.toLowerCase();
const H = `0x${'aB'.repeat(32)}`;
const h = H.toLowerCase();
const ADDRESS_DETAIL = 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{40})$/';
const HASH_DETAIL = 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{64})$/';
const NULL_EMPTY = 'Schema(title: "NullString", type: :string), Schema(title: "EmptyString", type: :string)';

const v2Route = (name: string): V2RouteSpec => {
  const r = routeByName(name);
  if (r?.kind !== 'v2') throw new Error(`no v2 route ${name}`);
  return r;
};
const legacyRoute = (name: string): LegacyRouteSpec => {
  const r = routeByName(name);
  if (r?.kind !== 'legacy') throw new Error(`no legacy route ${name}`);
  return r;
};
/** checkV2 on a path after /api/v2/ and a query, as the pipeline will call it. */
const v2 = (path: string, query: Record<string, string> = {}) => {
  const m = matchV2(path);
  if (!m) throw new Error(`no route for ${path}`);
  return checkV2(m.spec, m.params, new Map(Object.entries(query)));
};
const issues = (path: string, query: Record<string, string> = {}) => {
  const r = v2(path, query);
  if (r.ok) throw new Error(`expected issues for ${path}`);
  return r.issues;
};
const detailOf = (path: string, name: string, value: string) => issues(path, { [name]: value }).find((i) => i.name === name)?.detail;
const passes = (path: string, name: string, value: string) => {
  const r = v2(path, { [name]: value });
  return r.ok ? r.query.find(([n]) => n === name)?.[1] : r.issues;
};
const legacy = (name: string, query: Record<string, string>) => checkLegacy(legacyRoute(name), new Map(Object.entries(query)));

describe('detail texts (OpenApiSpex 3.22.3, as Blockscout answers them in a 422)', () => {
  it('pattern: the pattern as the document writes it', () => {
    expect(issues('addresses/0x123/token-balances')).toEqual([{ name: 'address_hash_param', detail: ADDRESS_DETAIL }]);
    expect(detailOf(`addresses/${A}/transactions`, 'hash', '0x12')).toBe(HASH_DETAIL);
    expect(detailOf(`addresses/${A}/transactions`, 'fee', '01')).toBe('Invalid format. Expected ~r/^-?([1-9][0-9]*|0)$/');
    expect(detailOf('validators/stability', 'state_filter', 'active,gone')).toBe(
      'Invalid format. Expected ~r/^(active|probation|inactive)(,(active|probation|inactive))*$/',
    );
  });

  it('integer, and its inclusive bounds', () => {
    for (const bad of ['x', '1.5', '', ' 1', '1e3', '0x10', '١']) {
      expect([bad, detailOf('blocks', 'items_count', bad)]).toEqual([bad, 'Invalid integer. Got: string']);
    }
    expect(detailOf('blocks', 'items_count', '0')).toBe('0 is smaller than inclusive minimum 1');
    expect(detailOf('blocks', 'items_count', '-007')).toBe('-7 is smaller than inclusive minimum 1');
    expect(detailOf('proxy/account-abstraction/bundlers', 'page_size', '051')).toBe('51 is larger than inclusive maximum 50');
    expect(passes('proxy/account-abstraction/bundlers', 'page_size', '+050')).toBe('50');
  });

  it('integer bounds beyond 2^53, exactly', () => {
    expect(passes('beacon/deposits', 'index', '9223372036854775807')).toBe('9223372036854775807');
    expect(detailOf('beacon/deposits', 'index', '9223372036854775808')).toBe(
      '9223372036854775808 is larger than inclusive maximum 9223372036854775807',
    );
    expect(detailOf('beacon/deposits', 'index', '-1')).toBe('-1 is smaller than inclusive minimum 0');
  });

  it('boolean: true or false, nothing else', () => {
    expect(passes(`addresses/${A}/internal-transactions`, 'include_zero_value', 'false')).toBe('false');
    for (const bad of ['TRUE', '1', 'yes', '']) {
      expect(detailOf(`addresses/${A}/internal-transactions`, 'include_zero_value', bad)).toBe('Invalid boolean. Got: string');
    }
  });

  it('enum', () => {
    expect(detailOf(`addresses/${A}/transactions`, 'sort', 'age')).toBe('Invalid value for enum');
    expect(detailOf(`addresses/${A}/transactions`, 'order', 'ASC')).toBe('Invalid value for enum');
    expect(issues('arbitrum/messages/claim')).toEqual([{ name: 'direction', detail: 'Invalid value for enum' }]);
    expect(passes('stats/hot-smart-contracts', 'scale', '7d')).toBe('7d');
  });

  it('date-time: RFC 3339 as Elixir reads it, and a real instant', () => {
    const at = (v: string) => passes(`addresses/${A}/transactions`, 'inserted_at', v);
    for (const good of [
      '2024-02-29T23:59:59Z',
      '2024-01-02T03:04:05.123456+02:00',
      '2024-01-02T03:04:05.1234567890Z',
      '2000-12-31T00:00:00-05:30',
      '2024-01-02 03:04:05Z',
      '2024-01-02T03:04:05,5Z',
      '2024-01-02T03:04:05+0200',
      '2024-01-02T03:04:05+02',
    ]) {
      expect([good, at(good)]).toEqual([good, good]);
    }
    for (const bad of [
      '2023-02-29T00:00:00Z',
      '2024-02-30T00:00:00Z',
      '2024-04-31T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '0000-00-00T00:00:00Z',
      '2024-01-01T25:00:00Z',
      '2024-01-01T23:60:00Z',
      '2024-01-01T23:59:60Z',
      '2024-01-01T00:00:00',
      '2024-01-01t00:00:00z',
      '2024-01-01T00:00:00-00:00',
      '2024-01-01T00:00:00+24:00',
      '2024-01-01T00:00:00.Z',
      '2024-01-01',
      'yesterday',
      '',
    ]) {
      expect([bad, at(bad)]).toEqual([bad, [{ name: 'inserted_at', detail: 'Invalid format. Expected :"date-time"' }]]);
    }
  });

  it('anyOf: the first branch that passes gives the value; else every branch, listed last first', () => {
    const path = `addresses/${A}/transactions`;
    expect(passes(path, 'block_number', '007')).toBe('7');
    expect(passes(path, 'block_number', '')).toBe('');
    expect(passes(path, 'block_number', 'null')).toBe('null');
    expect(detailOf(path, 'block_number', 'x')).toBe(`Failed to cast value using any of: ${NULL_EMPTY}, Schema(type: :integer)`);
    expect(detailOf(path, 'value', '01')).toBe(
      `Failed to cast value using any of: ${NULL_EMPTY}, Schema(title: "IntegerString", type: :string)`,
    );
    // The text of Blockscout's own test (block_controller_test.exs, "get 422 on invalid block").
    expect(issues('blocks/0x123')).toEqual([
      {
        name: 'block_hash_or_number_param',
        detail: 'Failed to cast value using any of: Schema(title: "FullHash", type: :string), Schema(type: :integer)',
      },
    ]);
    expect(v2(`blocks/${H}`)).toEqual({ ok: true, path: `/api/v2/blocks/${h}`, query: [] });
    expect(v2('blocks/00019')).toEqual({ ok: true, path: '/api/v2/blocks/19', query: [] });
    expect(detailOf('csv-exports/00000000-0000-0000-0000-000000000000', 'x', '1')).toBe('Unexpected field: x');
    expect(detailOf(`addresses/${A}/token-transfers/csv`, 'filter_value', 'sideways')).toBe(
      'Failed to cast value using any of: Schema(title: "NullString", type: :string), Schema(type: :string)',
    );
  });

  it('oneOf: exactly one branch must pass', () => {
    const check = compileParamCheck({
      title: 'IntegerStringOrEmptyOrNullLiteral',
      oneOf: [
        { type: 'string', pattern: '^([1-9][0-9]*|0)$' },
        { type: 'string', enum: ['', 'null'] },
      ],
    });
    expect(check('42')).toEqual({ ok: true, value: '42' });
    expect(check('')).toEqual({ ok: true, value: '' });
    expect(check('null')).toEqual({ ok: true, value: 'null' });
    expect(check('042')).toEqual({ ok: false, detail: 'Failed to cast value to one of: no schemas validate' });
    const overlapping = compileParamCheck({ oneOf: [{ type: 'integer' }, { type: 'string' }] });
    expect(overlapping('1')).toEqual({ ok: false, detail: 'Failed to cast value to one of: more than one schemas validate' });
    expect(detailOf('advanced-filters', 'token_transfer_index', 'x')).toBe('Failed to cast value to one of: no schemas validate');
  });

  it('arrays of integers: a comma-separated list, each item checked, forwarded as Plug reads a list', () => {
    expect(v2('arbitrum/batches', { batch_numbers: '3,001,2' })).toEqual({
      ok: true,
      path: '/api/v2/arbitrum/batches',
      query: [
        ['batch_numbers[]', '3'],
        ['batch_numbers[]', '1'],
        ['batch_numbers[]', '2'],
      ],
    });
    expect(detailOf('arbitrum/batches', 'batch_numbers', '1,x')).toBe('Invalid integer. Got: string');
    expect(detailOf('arbitrum/batches', 'batch_numbers', '1,-1')).toBe('-1 is smaller than inclusive minimum 0');
    expect(detailOf('arbitrum/batches', 'batch_numbers', '')).toBe('Invalid integer. Got: string');
  });

  it('object parameters take any string, and the bracketed keys Plug makes an object of', () => {
    expect(v2('search', { q: 'usdt', label: 'anything at all', 'token[holders_count]': '12', 'token[name]': 'Tether' })).toEqual({
      ok: true,
      path: '/api/v2/search',
      query: [
        ['label', 'anything at all'],
        ['q', 'usdt'],
        ['token[holders_count]', '12'],
        ['token[name]', 'Tether'],
      ],
    });
    expect(issues('search', { 'q[x]': '1', 'nope[a]': '2' })).toEqual([
      { name: 'q[x]', detail: 'Unexpected field: q[x]' },
      { name: 'nope[a]', detail: 'Unexpected field: nope[a]' },
    ]);
  });

  it('nullable lets no text through that the base type refuses: a query string has no null', () => {
    expect(detailOf('internal-transactions', 'limit', 'null')).toBe('Invalid integer. Got: string');
    expect(detailOf('internal-transactions', 'limit', '')).toBe('Invalid integer. Got: string');
    expect(passes('search', 'q', '')).toBe('');
    expect(passes(`addresses/${A}/token-transfers/csv`, 'from_period', 'null')).toBe('null');
    expect(passes(`addresses/${A}/token-transfers/csv`, 'filter_value', 'null')).toBe('null');
  });

  it('uuid: any case, the format wins over the pattern as in OpenApiSpex', () => {
    expect(v2('csv-exports/123E4567-e89b-12d3-A456-426614174000')).toEqual({
      ok: true,
      path: '/api/v2/csv-exports/123E4567-e89b-12d3-A456-426614174000',
      query: [],
    });
    expect(issues('csv-exports/123e4567')).toEqual([{ name: 'uuid_param', detail: 'Invalid format. Expected :uuid' }]);
  });
});

describe('canonical values', () => {
  it('integers lose sign and leading zeros, exactly at any size', () => {
    expect(canonicalInteger('007')).toBe('7');
    expect(canonicalInteger('+007')).toBe('7');
    expect(canonicalInteger('-000')).toBe('0');
    expect(canonicalInteger('-0012')).toBe('-12');
    const big = '123456789012345678901234567890123456789012345678901234567890';
    expect(passes(`addresses/${A}/transactions`, 'block_number', `000${big}`)).toBe(big);
    expect(passes(`addresses/${A}/transactions`, 'index', `-000${big}`)).toBe(`-${big}`);
  });

  it('addresses and 32-byte hashes are lower-cased; other hex data is not', () => {
    expect(v2(`addresses/${A}/token-balances`)).toEqual({ ok: true, path: `/api/v2/addresses/${a}/token-balances`, query: [] });
    expect(passes(`addresses/${A}/transactions`, 'hash', H)).toBe(h);
    expect(v2(`transactions/${H}/logs`)).toMatchObject({ ok: true, path: `/api/v2/transactions/${h}/logs` });
    expect(v2('validators/zilliqa/0xABcd')).toEqual({ ok: true, path: '/api/v2/validators/zilliqa/0xABcd', query: [] });
    expect(passes(`addresses/${A}/logs`, 'topic', '0xABcd')).toBe('0xABcd');
  });

  it('the upstream path comes from the template and the canonical values only', () => {
    expect(v2(`//addresses//%30x${A.slice(2)}/transactions/`, { sort: 'fee', order: 'asc', items_count: '010' })).toEqual({
      ok: true,
      path: `/api/v2/addresses/${a}/transactions`,
      query: [
        ['items_count', '10'],
        ['order', 'asc'],
        ['sort', 'fee'],
      ],
    });
    expect(v2('tokens/')).toEqual({ ok: true, path: '/api/v2/tokens', query: [] });
    expect(v2('blocks/19/countdown')).toEqual({ ok: true, path: '/api/v2/blocks/19/countdown', query: [] });
  });

  it('encodes each path value as one segment: a decoded slash cannot become a path', () => {
    const spec: V2RouteSpec = {
      ...v2Route('addresses/{address_hash_param}'),
      pathParams: [{ name: 'address_hash_param', required: true, schema: { type: 'string' } }],
    };
    expect(checkV2(spec, ['..%2F..%2Fadmin%20x'], new Map())).toEqual({
      ok: true,
      path: '/api/v2/addresses/..%2F..%2Fadmin%20x',
      query: [],
    });
    expect(checkV2(spec, ['%E0%A4%A'], new Map())).toEqual({
      ok: false,
      issues: [{ name: 'address_hash_param', detail: 'Invalid percent-encoding' }],
    });
  });
});

describe('checkV2', () => {
  it('refuses an invalid value of every kind of path parameter the document uses', () => {
    const expected: Record<string, string> = {
      AddressHash: ADDRESS_DETAIL,
      FullHash: HASH_DETAIL,
      HexData: 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]*)$/',
      IntegerString: 'Invalid format. Expected ~r/^-?([1-9][0-9]*|0)$/',
      IntegerStringNullable: 'Invalid format. Expected ~r/^-?([1-9][0-9]*|0)$/',
      CeloElectionRewardType: 'Invalid value for enum',
      integer: 'Invalid integer. Got: string',
      enum: 'Invalid value for enum',
      uuid: 'Invalid format. Expected :uuid',
      anyOf: 'Failed to cast value using any of: Schema(title: "FullHash", type: :string), Schema(type: :integer)',
    };
    const kindOf = (s: ParamSchema) => s.title ?? (s.anyOf ? 'anyOf' : (s.format ?? (s.enum ? 'enum' : (s.type ?? '?'))));
    const seen = new Set<string>();
    for (const spec of ROUTE_TABLE) {
      if (spec.kind !== 'v2') continue;
      const required = new Map(spec.queryParams.filter((q) => q.required).map((q) => [q.name, sample(q.schema)[0]]));
      spec.pathParams.forEach((p, i) => {
        const kind = kindOf(p.schema);
        seen.add(kind);
        const values = spec.pathParams.map((q, j) => (j === i ? 'zz' : sample(q.schema)[0]));
        const got = checkV2(spec, values, required);
        expect([spec.name, got]).toEqual([spec.name, { ok: false, issues: [{ name: p.name, detail: expected[kind] }] }]);
        // Not percent-decodable is refused too.
        const undecodable = spec.pathParams.map((q, j) => (j === i ? '%zz' : sample(q.schema)[0]));
        expect(checkV2(spec, undecodable, required)).toMatchObject({ ok: false, issues: [{ name: p.name }] });
      });
    }
    expect([...seen].sort()).toEqual(Object.keys(expected).sort());
  });

  it('accepts every route with every declared parameter set to a valid value', () => {
    for (const spec of ROUTE_TABLE) {
      if (spec.kind !== 'v2') continue;
      const path = spec.pathParams.map((p) => sample(p.schema));
      const query = spec.queryParams.map((p) => [p.name, ...sample(p.schema)] as const);
      const got = checkV2(
        spec,
        path.map(([raw]) => raw),
        new Map(query.map(([n, raw]) => [n, raw])),
      );
      let i = 0;
      const expectedPath = `/${spec.segments.map((s) => (typeof s === 'string' ? s : encodeURIComponent(path[i++]?.[1] ?? ''))).join('/')}`;
      const expectedQuery = query
        .flatMap(([n, , canonical]): [string, string][] =>
          spec.queryParams.find((p) => p.name === n)?.schema.type === 'array'
            ? canonical.split(',').map((c): [string, string] => [`${n}[]`, c])
            : [[n, canonical]],
        )
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
      expect([spec.name, got]).toEqual([spec.name, { ok: true, path: expectedPath, query: expectedQuery }]);
    }
  });

  it('reports one issue per bad parameter: path, declared query in document order, then undeclared', () => {
    expect(issues('addresses/0x12/transactions', { zeta: '1', sort: 'age', filter: 'sideways', items_count: '0', alpha: '' })).toEqual([
      { name: 'address_hash_param', detail: ADDRESS_DETAIL },
      { name: 'filter', detail: 'Invalid value for enum' },
      { name: 'sort', detail: 'Invalid value for enum' },
      { name: 'items_count', detail: '0 is smaller than inclusive minimum 1' },
      { name: 'zeta', detail: 'Unexpected field: zeta' },
      { name: 'alpha', detail: 'Unexpected field: alpha' },
    ]);
  });

  it('refuses undeclared fields, the name cut to 40 characters in the text only', () => {
    expect(issues(`addresses/${A}/token-balances`, { page: '2' })).toEqual([{ name: 'page', detail: 'Unexpected field: page' }]);
    const long = `a_very_long_parameter_name_${'x'.repeat(30)}`;
    expect(issues(`addresses/${A}/token-balances`, { [long]: '1' })).toEqual([
      { name: long, detail: `Unexpected field: ${long.slice(0, 40)}` },
    ]);
    expect(issues('stats', { chainid: '1' })).toEqual([{ name: 'chainid', detail: 'Unexpected field: chainid' }]);
  });

  it('reports a required query parameter that is missing', () => {
    expect(issues('stats/hot-smart-contracts')).toEqual([{ name: 'scale', detail: 'Missing field: scale' }]);
    expect(issues(`tokens/${A}/transfers/csv`, { from_period: '2024-01-01' })).toEqual([
      { name: 'to_period', detail: 'Missing field: to_period' },
    ]);
    expect(v2(`tokens/${A}/transfers/csv`, { from_period: '2024-01-01', to_period: '2024-01-31T10%3A00' })).toMatchObject({ ok: true });
  });
});

describe('checkLegacy', () => {
  it("answers the first problem in Blockscout's words", () => {
    expect(legacy('legacy.getToken', {})).toEqual({ ok: false, message: 'Query parameter contract address is required' });
    expect(legacy('legacy.getToken', { contractaddress: 'badhash' })).toEqual({ ok: false, message: 'Invalid contract address hash' });
    expect(legacy('legacy.getTokenHolders', { contractaddress: 'badhash', page: 'x' })).toEqual({
      ok: false,
      message: 'Invalid contract address hash',
    });
    expect(legacy('legacy.account.txlist', {})).toEqual({ ok: false, message: "Query parameter 'address' is required" });
    expect(legacy('legacy.account.txlist', { address: '0x1' })).toEqual({ ok: false, message: 'Invalid address format' });
    expect(legacy('legacy.account.balance', { address: '0x1' })).toEqual({ ok: false, message: 'Invalid address hash' });
    expect(legacy('legacy.account.eth_get_balance', { address: A, block: 'x' })).toEqual({ ok: false, message: 'Invalid block' });
    expect(legacy('legacy.stats.tokensupply', { contractaddress: '' })).toEqual({ ok: false, message: 'Invalid contract address format' });
    expect(legacy('legacy.transaction.gettxinfo', {})).toEqual({ ok: false, message: 'Query parameter txhash is required' });
    expect(legacy('legacy.transaction.getstatus', { txhash: A })).toEqual({ ok: false, message: 'Invalid txhash format' });
    expect(legacy('legacy.block.getblockreward', { blockno: 'latest' })).toEqual({ ok: false, message: 'Invalid block number' });
    expect(legacy('legacy.block.getblocknobytime', { timestamp: '1700000000', closest: 'middle' })).toEqual({
      ok: false,
      message: 'Invalid `closest` param',
    });
    expect(legacy('legacy.contract.getabi', {})).toEqual({ ok: false, message: 'Query parameter address is required' });
    expect(legacy('legacy.contract.getcontractcreation', {})).toEqual({
      ok: false,
      message: 'Query parameter contractaddresses is required',
    });
  });

  it('names every missing parameter at once where the controller does', () => {
    expect(legacy('legacy.account.tokenbalance', {})).toEqual({
      ok: false,
      message: 'Required query parameters missing: address, contractaddress',
    });
    expect(legacy('legacy.account.tokenbalance', { address: A, contractaddress: '0x1' })).toEqual({
      ok: false,
      message: 'Invalid contractaddress format',
    });
    expect(legacy('legacy.logs.getLogs', {})).toEqual({
      ok: false,
      message: 'Required query parameters missing: fromBlock, toBlock, address and/or topic{x}',
    });
    expect(legacy('legacy.logs.getLogs', { fromBlock: '1', toBlock: 'latest' })).toEqual({
      ok: false,
      message: 'Required query parameters missing: address and/or topic{x}',
    });
    expect(legacy('legacy.logs.getLogs', { fromBlock: '1', toBlock: '2', topic0: '0x01', topic0_1_opr: 'xor' })).toEqual({
      ok: false,
      message: 'Invalid topic0_1_opr format',
    });
  });

  it('takes a token transfer query by address or by contract address', () => {
    expect(legacy('legacy.account.tokentx', {})).toEqual({ ok: false, message: 'Query parameter address or contractaddress is required' });
    expect(legacy('legacy.account.tokennfttx', { contractaddress: A })).toEqual({ ok: true, query: [['contractaddress', a]] });
    expect(legacy('legacy.account.token1155tx', { address: 'x', contractaddress: A })).toEqual({
      ok: false,
      message: 'Invalid address format',
    });
    expect(legacy('legacy.account.token404tx', { contractaddress: 'x' })).toEqual({
      ok: false,
      message: 'Invalid contract address format',
    });
  });

  it('words a problem itself where Blockscout has no text and does not ignore the value', () => {
    expect(legacy('legacy.bridgedTokenList', { chainid: 'x' })).toEqual({
      ok: false,
      message: 'Invalid chainid: Invalid integer. Got: string',
    });
    expect(legacy('legacy.account.balancemulti', { address: `${A},0x1` })).toEqual({ ok: false, message: 'Invalid address hash' });
  });

  // address_controller.ex put_block/3, put_order_by_direction/2, put_boolean/4, put_filter_by/2,
  // helper.ex put_page_option/2 and put_offset_option/2: a value they cannot read is no option.
  it('drops a value the controller ignores: the explorer gets the request without it', () => {
    const txlist = (q: Record<string, string>) => legacy('legacy.account.txlist', { address: A, ...q });
    const bare = { ok: true, query: [['address', a]] };
    for (const endblock of ['latest', '-1', '2147483648', '1.5', '', '0x10']) expect(txlist({ endblock })).toEqual(bare);
    for (const startblock of ['earliest', 'x']) expect(txlist({ startblock })).toEqual(bare);
    for (const page of ['0', '-2', 'x']) expect(txlist({ page })).toEqual(bare);
    for (const offset of ['0', '10001', '20000', 'x']) expect(txlist({ offset })).toEqual(bare);
    for (const sort of ['up', 'ASC', '']) expect(txlist({ sort })).toEqual(bare);
    expect(txlist({ filterby: 'both' })).toEqual(bare);
    // What it can read goes on, canonical.
    expect(txlist({ startblock: '+007', endblock: '2147483647', page: '02', offset: '100', sort: 'asc' })).toEqual({
      ok: true,
      query: [
        ['address', a],
        ['endblock', '2147483647'],
        ['offset', '100'],
        ['page', '2'],
        ['sort', 'asc'],
        ['startblock', '7'],
      ],
    });
    expect(legacy('legacy.account.tokentx', { address: A, endblock: 'latest', startblock: '0', sort: 'desc' })).toEqual({
      ok: true,
      query: [
        ['address', a],
        ['sort', 'desc'],
        ['startblock', '0'],
      ],
    });
    expect(legacy('legacy.account.getminedblocks', { address: A, page: '0', offset: '3' })).toEqual({
      ok: true,
      query: [
        ['address', a],
        ['offset', '3'],
      ],
    });
    expect(legacy('legacy.contract.listcontracts', { page: 'x', verified_at_start_timestamp: 'yesterday' })).toEqual({
      ok: true,
      query: [],
    });
    expect(legacy('legacy.contract.listcontracts', { verified_at_end_timestamp: '253402300800' })).toEqual({ ok: true, query: [] });
    expect(legacy('legacy.contract.listcontracts', { verified_at_end_timestamp: '0253402300799' })).toEqual({
      ok: true,
      query: [['verified_at_end_timestamp', '253402300799']],
    });
  });

  it('reads include_zero_value in any case, and forwards filterby as the filter_by put_filter_by/2 reads', () => {
    const internal = (q: Record<string, string>) => legacy('legacy.account.txlistinternal', { address: A, ...q });
    expect(internal({ include_zero_value: 'TRUE' })).toEqual({
      ok: true,
      query: [
        ['address', a],
        ['include_zero_value', 'true'],
      ],
    });
    expect(internal({ include_zero_value: 'yes' })).toEqual({ ok: true, query: [['address', a]] });
    expect(legacy('legacy.account.txlist', { address: A, filterby: 'to' })).toEqual({
      ok: true,
      query: [
        ['address', a],
        ['filter_by', 'to'],
      ],
    });
  });

  it('drops txhash when an address is given: txlistinternal/2 then never reads it', () => {
    expect(legacy('legacy.account.txlistinternal', { address: A, txhash: 'bad' })).toEqual({ ok: true, query: [['address', a]] });
    expect(legacy('legacy.account.txlistinternal', { txhash: 'bad' })).toEqual({ ok: false, message: 'Invalid txhash format' });
    expect(legacy('legacy.account.txlistinternal', { txhash: H })).toEqual({ ok: true, query: [['txhash', h]] });
  });

  it("refuses a page past the results window, before anything else, in optional_params/1's words", () => {
    const past = { ok: false, message: 'Result window is too large, PageNo x Offset size must be less than or equal to 10000' };
    expect(legacy('legacy.account.txlist', { address: A, page: '2', offset: '5001' })).toEqual(past);
    expect(legacy('legacy.account.txlist', { page: '10001', offset: '1' })).toEqual(past); // before the missing address
    expect(legacy('legacy.account.tokentx', { page: '101', offset: '100' })).toEqual(past);
    expect(legacy('legacy.account.listaccounts', { page: '99999999999999999999', offset: '1' })).toEqual(past);
    expect(legacy('legacy.account.txlist', { address: A, page: '2', offset: '5000' })).toMatchObject({ ok: true });
    // Only both readable: an ignored page or offset is the default, inside the window.
    expect(legacy('legacy.account.txlist', { address: A, page: '3', offset: '10001' })).toEqual({
      ok: true,
      query: [
        ['address', a],
        ['page', '3'],
      ],
    });
    // getminedblocks/2 pages without optional_params/1: no window.
    expect(legacy('legacy.account.getminedblocks', { address: A, page: '3', offset: '10000' })).toMatchObject({ ok: true });
  });

  it('reads address lists as to_address_hashes/1 and getcontractcreation/2 do: the first 20 or 10 items', () => {
    const many = Array.from({ length: 21 }, () => A).join(',');
    expect(legacy('legacy.account.balancemulti', { address: `${many},junk` })).toEqual({
      ok: true,
      query: [['address', Array.from({ length: 20 }, () => a).join(',')]],
    });
    expect(legacy('legacy.account.balance', { address: `${A},${A}` })).toEqual({ ok: true, query: [['address', `${a},${a}`]] });
    expect(legacy('legacy.account.balance', { address: `${A},` })).toEqual({ ok: false, message: 'Invalid address hash' });
    const creation = (contractaddresses: string) => legacy('legacy.contract.getcontractcreation', { contractaddresses });
    // Trimmed, empty items left out, items that are no address left out of the answer.
    expect(creation(` ${A} ,, 0x1,\t${A}`)).toEqual({ ok: true, query: [['contractaddresses', `${a},${a}`]] });
    expect(creation('0x1,nope')).toEqual({ ok: true, query: [['contractaddresses', '']] });
    // The first 10 items, good or not, are all that is read.
    expect(creation([...Array.from({ length: 10 }, () => '0x1'), A].join(','))).toEqual({ ok: true, query: [['contractaddresses', '']] });
  });

  it('keeps only the declared parameters, canonical and sorted; the instance ignores the rest', () => {
    expect(
      legacy('legacy.getTokenHolders', { contractaddress: A, chainid: '1', apikey: 'k', page: '002', offset: '10', sort: 'asc' }),
    ).toEqual({
      ok: true,
      query: [
        ['contractaddress', a],
        ['offset', '10'],
        ['page', '2'],
      ],
    });
    expect(legacy('legacy.account.balance', { address: A, tag: 'latest' })).toEqual({ ok: true, query: [['address', a]] });
    expect(legacy('legacy.account.balancemulti', { address: `${A},${A.toUpperCase().replace('0X', '0x')}` })).toEqual({
      ok: true,
      query: [['address', `${a},${a}`]],
    });
    expect(legacy('legacy.account.eth_get_balance', { address: A, block: '0019' })).toEqual({
      ok: true,
      query: [
        ['address', a],
        ['block', '19'],
      ],
    });
  });

  it('forwards the chainid of bridgedTokenList as the chain_ids instances read, and needs none', () => {
    expect(legacy('legacy.bridgedTokenList', { chainid: '01' })).toEqual({ ok: true, query: [['chain_ids', '1']] });
    expect(legacy('legacy.bridgedTokenList', {})).toEqual({ ok: true, query: [] });
  });

  it('accepts every action with every parameter set to a valid value', () => {
    for (const spec of ROUTE_TABLE) {
      if (spec.kind !== 'legacy') continue;
      const given = spec.params.map((p) => [p.name, ...sample(p.schema), p.forwardAs ?? p.name] as const);
      const got = checkLegacy(spec, new Map(given.map(([n, raw]) => [n, raw])));
      // A parameter its controller does not read beside another (txhash beside address) is not forwarded.
      const read = given.filter(([n]) => spec.params.find((p) => p.name === n)?.ignoredWith === undefined);
      const expectedQuery = read.map(([, , canonical, as]): [string, string] => [as, canonical]).sort(([x], [y]) => (x < y ? -1 : 1));
      expect([spec.name, got]).toEqual([spec.name, { ok: true, query: expectedQuery }]);
    }
    expect(matchLegacy('TOKEN', 'gettoken')).toBe(legacyRoute('legacy.getToken'));
  });

  it("names only the action's own parameters in its rules", () => {
    for (const spec of ROUTE_TABLE) {
      if (spec.kind !== 'legacy') continue;
      const names = new Set(spec.params.map((p) => p.name));
      for (const p of spec.params) {
        if (p.ignoredWith !== undefined) expect([spec.name, names.has(p.ignoredWith)]).toEqual([spec.name, true]);
        if (p.resultsWindow !== undefined) expect([spec.name, names.has(p.resultsWindow.page)]).toEqual([spec.name, true]);
      }
    }
  });
});

/**
 * A valid raw value for a schema and the canonical value it should give. Patterns are listed:
 * a document with a new one fails here until it has a sample.
 */
function sample(s: ParamSchema): [raw: string, canonical: string] {
  const first = s.anyOf?.[0] ?? s.oneOf?.[0];
  if (first) return sample(first);
  if (s.enum?.[0] !== undefined) return [s.enum[0], s.enum[0]];
  if (s.format === 'date-time') return ['2024-02-29T23:59:59.5+01:00', '2024-02-29T23:59:59.5+01:00'];
  if (s.format === 'uuid') return ['123E4567-E89B-12D3-A456-426614174000', '123E4567-E89B-12D3-A456-426614174000'];
  switch (s.type) {
    case 'integer': {
      const v = s.minimum ?? '-5';
      return [v.startsWith('-') ? `-0${v.slice(1)}` : `0${v}`, v];
    }
    case 'boolean':
      return ['false', 'false'];
    case 'array': {
      const [raw, canonical] = sample(s.items ?? {});
      return [`${raw},${raw}`, `${canonical},${canonical}`];
    }
    case 'object':
      return ['{"a":1}', '{"a":1}'];
    case 'string':
      if (s.pattern !== undefined) {
        const known = PATTERN_SAMPLES[s.pattern];
        if (!known) throw new Error(`no sample for pattern ${s.pattern}`);
        return known;
      }
      return s.maxLength === 0 ? ['', ''] : ['some text', 'some text'];
    default:
      return ['anything', 'anything'];
  }
}

const PATTERN_SAMPLES: Record<string, [string, string]> = {
  '^0x([A-Fa-f0-9]{40})$': [A, a],
  '^0x[a-fA-F0-9]{40}$': [A, a],
  '^0x([A-Fa-f0-9]{64})$': [H, h],
  '^0x[a-fA-F0-9]{64}$': [H, h],
  '^0x([A-Fa-f0-9]*)$': ['0xABcd', '0xABcd'],
  '^-?([1-9][0-9]*|0)$': ['-12', '-12'],
  '^([1-9][0-9]*|0)$': ['42', '42'],
  '^([1-9][0-9]*|0)(\\.[0-9]+)?$': ['1.50', '1.50'],
  '^null$': ['null', 'null'],
  '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$': [
    '[ERC-20,ERC-721]',
    '[ERC-20,ERC-721]',
  ],
  '^(active|probation|inactive)(,(active|probation|inactive))*$': ['active,inactive', 'active,inactive'],
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$':
    ['2024-01-31T10:00Z', '2024-01-31T10:00Z'],
};
