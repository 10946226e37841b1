// The fixture explorer answers the whole read surface of the two vendored documents (spec/README.md):
// every GET under /{chain_id}/api/v2/ of the PRO API, and every read action of the RPC API. The
// operations are enumerated from the documents themselves, and every body is checked with ajv
// against the operation's own 200 schema, so a fixture answer that a real instance could not send
// fails here.
import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { toJsonSchema } from '../support/json-schema.js';

// ---- documents -> ajv (OpenAPI `nullable` becomes anyOf [schema, null], as fixture-explorer.test.ts does)
type Schema = Record<string, unknown>;
interface Operation {
  parameters?: Schema[];
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; parameters?: Record<string, Schema> };
}
const pro = JSON.parse(readFileSync(new URL('../../spec/pro-api-0.5.0.json', import.meta.url), 'utf8')) as Doc;
const rpc = parseYaml(readFileSync(new URL('../../spec/blockscout-rpc-api-1.0.0.yaml', import.meta.url), 'utf8')) as Doc;
const resolve = (doc: Doc, s: Schema): Schema => {
  let out = s;
  while (typeof out.$ref === 'string') out = doc.components.schemas[out.$ref.replace('#/components/schemas/', '')] ?? {};
  return out;
};
const param = (doc: Doc, p: Schema): Schema =>
  typeof p.$ref === 'string' ? (doc.components.parameters?.[p.$ref.replace('#/components/parameters/', '')] ?? {}) : p;

interface V2Op {
  path: string; // the document's key
  template: string; // what the instance serves: the key without /{chain_id}
  op: Operation;
  pathParams: { name: string; schema: Schema }[];
  queryParams: string[];
  csv: boolean;
  key: string;
}
const v2Ops: V2Op[] = Object.entries(pro.paths)
  .filter(([path, item]) => path.startsWith('/{chain_id}/api/v2/') && item.get !== undefined)
  .map(([path, item], i) => {
    const op = item.get as Operation;
    const params = (op.parameters ?? []).map((p) => param(pro, p));
    const pathParams = params
      .filter((p) => p.in === 'path' && p.name !== 'chain_id')
      .map((p) => ({ name: String(p.name), schema: p.schema as Schema }));
    const queryParams = params.filter((p) => p.in === 'query').map((p) => String(p.name));
    return { path, template: path.replace('/{chain_id}', ''), op, pathParams, queryParams, csv: path.endsWith('/csv'), key: `r${i}` };
  });
const rpcActions = Object.entries(rpc.paths)
  .filter(([key, item]) => key.startsWith('/?') && item.get !== undefined)
  .map(([key, item]) => {
    const q = new URLSearchParams(key.slice(2));
    return { key, module: q.get('module') ?? '', action: q.get('action') ?? '', op: item.get as Operation };
  });
// Contract verification is not served (the gateway forwards reads only).
const VERIFICATION = [
  'verify',
  'verifysourcecode',
  'verify_via_sourcify',
  'verify_vyper_contract',
  'verifyproxycontract',
  'checkverifystatus',
  'checkproxyverification',
];
const readActions = rpcActions.filter((a) => !VERIFICATION.includes(a.action.toLowerCase()));

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const PRO_ROOT = 'https://fixture.test/pro-api-0.5.0.json';
const RPC_ROOT = 'https://fixture.test/blockscout-rpc-api-1.0.0.json';
const json200 = (op: Operation): Schema | undefined => op.responses['200']?.content?.['application/json']?.schema;
ajv.addSchema(
  toJsonSchema({
    $id: PRO_ROOT,
    components: { schemas: pro.components.schemas },
    responses: Object.fromEntries(v2Ops.filter((o) => json200(o.op)).map((o) => [o.key, json200(o.op)])),
  }) as object,
);
ajv.addSchema(
  toJsonSchema({
    $id: RPC_ROOT,
    components: { schemas: rpc.components.schemas },
    responses: Object.fromEntries(rpcActions.map((a, i) => [`a${i}`, json200(a.op)])),
  }) as object,
);
const compiled = new Map<string, ValidateFunction>();
const validator = (ref: string): ValidateFunction => {
  let v = compiled.get(ref);
  if (v === undefined) {
    v = ajv.compile({ $ref: ref });
    compiled.set(ref, v);
  }
  return v;
};
const expectValid = (ref: string, body: unknown, what: string): void => {
  const validate = validator(ref);
  expect(validate(body), `${what}: ${ajv.errorsText(validate.errors)}`).toBe(true);
};

// ---- sample values, from each parameter's schema
const ADDRESS = '0x3887e82dbdbe8ec6db44e6298a2d48af572a3b78';
const OTHER_ADDRESS = '0xD34a99Bc0f67aE1bbd63C660e6d0b0dd03E263B7';
const HASH = '0x5dc155c382d95353c5876e735d675d284e3b29b1379e5859dc35cfd4a1dd5188';
function sampleValue(doc: Doc, name: string, schema: Schema): string {
  const s = resolve(doc, schema);
  if (Array.isArray(s.anyOf)) return sampleValue(doc, name, s.anyOf[0] as Schema);
  if (Array.isArray(s.enum)) return String(s.enum[0]);
  if (s.type === 'array') return [ADDRESS, OTHER_ADDRESS].join(',');
  if (s.type === 'integer') return /block|height|number/i.test(name) ? '21000000' : '7';
  if (s.format === 'uuid') return '3f1c7a52-5d0e-4b8e-9a51-2f7c0e1d9b44';
  switch (s.pattern) {
    case '^0x([A-Fa-f0-9]{40})$':
    case '^0x[a-fA-F0-9]{40}$':
      return name === 'contractaddress' ? OTHER_ADDRESS : ADDRESS;
    case '^0x([A-Fa-f0-9]{64})$':
    case '^0x[a-fA-F0-9]{64}$':
      return HASH;
    case '^0x([A-Fa-f0-9]*)$':
      return `0x${'ab'.repeat(48)}`;
    case '^-?([1-9][0-9]*|0)$':
    case '^([1-9][0-9]*|0)$':
      return '42';
    default:
      break;
  }
  if (s.type === 'boolean') return 'true';
  if (name === 'contractaddress') return OTHER_ADDRESS; // a token the fixture's catalogue knows (IMD)
  if (/block/i.test(name)) return '21000000';
  if (name === 'date') return '2026-08-01';
  if (/^topic\d$/.test(name)) return HASH;
  return 'fixture';
}
const fill = (o: V2Op, bad?: { name: string; value: string }): string =>
  o.template.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (bad?.name === name) return bad.value;
    const p = o.pathParams.find((x) => x.name === name);
    return encodeURIComponent(p ? sampleValue(pro, name, p.schema) : 'x');
  });

let explorer: FixtureExplorer;
interface Got {
  status: number;
  headers: Headers;
  text: string;
}
async function get(path: string, init: RequestInit = {}): Promise<Got> {
  const res = await fetch(`${explorer.url}${path}`, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}
const parse = (got: Got): unknown => JSON.parse(got.text) as unknown;

beforeAll(async () => {
  explorer = await startFixtureExplorer({ port: 0 });
});
afterAll(async () => {
  await explorer.close();
});
beforeEach(() => {
  explorer.reset();
});

describe('the PRO API read surface', () => {
  it('enumerates all 153 GET operations of the document', () => {
    expect(v2Ops).toHaveLength(153);
    expect(v2Ops.filter((o) => o.csv)).toHaveLength(8);
  });

  it('answers every GET operation 200 with a body its 200 schema accepts, the same twice', async () => {
    const problems: string[] = [];
    for (const o of v2Ops) {
      const url = fill(o);
      const first = await get(url);
      if (first.status !== 200) problems.push(`${url}: ${first.status} ${first.text.slice(0, 200)}`);
      else if (o.csv) {
        if (!/^application\/csv/.test(first.headers.get('content-type') ?? '')) problems.push(`${url}: not CSV`);
      } else {
        const validate = validator(`${PRO_ROOT}#/responses/${o.key}`);
        if (first.headers.get('content-type') !== 'application/json; charset=utf-8') problems.push(`${url}: not JSON`);
        if (!validate(parse(first))) problems.push(`${url}: ${ajv.errorsText(validate.errors)}`);
      }
      if ((await get(url)).text !== first.text) problems.push(`${url}: another body the second time`);
    }
    expect(problems).toEqual([]);
  });

  it('answers HEAD like GET without a body', async () => {
    for (const o of v2Ops.filter((_, i) => i % 10 === 0)) {
      const url = fill(o);
      const head = await get(url, { method: 'HEAD' });
      expect([head.status, head.text], url).toEqual([200, '']);
    }
  });

  it('gives the path values back where the answer names them', async () => {
    const block = parse(await get('/api/v2/blocks/21000000')) as { height: number };
    expect(block.height).toBe(21000000);
    const tx = parse(await get(`/api/v2/transactions/${HASH}`)) as { hash: string };
    expect(tx.hash).toBe(HASH);
    const logs = parse(await get(`/api/v2/transactions/${HASH}/logs`)) as { items: { transaction_hash: string }[] };
    expect(logs.items.length).toBeGreaterThan(0);
    expect(logs.items.every((l) => l.transaction_hash === HASH)).toBe(true);
    const token = parse(await get(`/api/v2/tokens/${OTHER_ADDRESS}`)) as { address_hash: string };
    expect(token.address_hash).toBe(OTHER_ADDRESS);
    // Another block is another body; the letter case of a hash is not.
    expect((await get('/api/v2/blocks/21000001')).text).not.toBe((await get('/api/v2/blocks/21000000')).text);
    const lower = await get(`/api/v2/addresses/${OTHER_ADDRESS.toLowerCase()}/counters`);
    expect((await get(`/api/v2/addresses/${OTHER_ADDRESS}/counters`)).text).toBe(lower.text);
  });

  it('pages paged lists with next_page_params until null', async () => {
    const paged = v2Ops.filter((o) => {
      const s = json200(o.op);
      const props = s && (resolve(pro, s).properties as Record<string, unknown> | undefined);
      // The hand-written address transactions page 50 at a time (fixture-explorer.test.ts walks them),
      // and so do the blocks and a block's transactions, made from the chain (fixture-head.test.ts).
      return (
        props !== undefined &&
        'items' in props &&
        'next_page_params' in props &&
        ![
          '/api/v2/addresses/{address_hash_param}/transactions',
          '/api/v2/blocks',
          '/api/v2/blocks/{block_hash_or_number_param}/transactions',
          // The search reads q (fixture/explorer-extra.ts): one page of what matches it.
          '/api/v2/search',
        ].includes(o.template)
      );
    });
    expect(paged.length).toBeGreaterThan(60);
    let multi = 0;
    for (const o of paged) {
      let query: Record<string, string> = {};
      for (let pages = 1; ; pages++) {
        const url = `${fill(o)}?${new URLSearchParams(query).toString()}`;
        const got = await get(url);
        expect(got.status, url).toBe(200);
        const body = parse(got) as { items: unknown[]; next_page_params: Record<string, unknown> | null };
        expectValid(`${PRO_ROOT}#/responses/${o.key}`, body, `GET ${url}`);
        expect(body.items.length, url).toBeGreaterThanOrEqual(2);
        expect(body.items.length, url).toBeLessThanOrEqual(5);
        if (body.next_page_params === null) break;
        // A client sends them back as they are: only parameters the operation declares (the gateway checks).
        for (const key of Object.keys(body.next_page_params)) expect(o.queryParams, `${url}: ${key}`).toContain(key);
        if (pages === 1) multi++;
        expect(pages, url).toBeLessThan(3);
        query = Object.fromEntries(Object.entries(body.next_page_params).map(([k, v]) => [k, String(v)]));
      }
    }
    expect(multi).toBeGreaterThan(10);
  });

  it('streams CSV exports with a header line, larger for a longer window', async () => {
    const csv = v2Ops.filter((o) => o.csv);
    for (const o of csv) {
      const url = fill(o);
      const small = await get(url);
      expect(small.headers.get('content-type')).toBe('application/csv; charset=utf-8');
      expect(small.headers.get('content-length')).toBeNull(); // chunked, as Blockscout's send_chunked
      const lines = small.text.split('\r\n');
      expect(lines[0], url).toMatch(/^[A-Za-z]+(,[A-Za-z]+)+$/);
      expect(lines.length, url).toBeGreaterThan(3);
      const cells = (lines[0] ?? '').split(',').length;
      expect(lines.filter(Boolean).every((l) => l.split(',').length === cells)).toBe(true);
      expect((await get(url)).text).toBe(small.text);
    }
    const head = await get(`/api/v2/tokens/${OTHER_ADDRESS}/holders/csv`, { method: 'HEAD' });
    expect([head.status, head.text, head.headers.get('content-disposition')]).toEqual([200, '', 'attachment;']);
    const year = await get(`/api/v2/addresses/${ADDRESS}/transactions/csv?from_period=2025-08-01&to_period=2026-08-01`);
    expect(year.text.length).toBeGreaterThan(200_000);
    expect(year.text.length).toBeLessThan(2_000_000);
    const filters = await get('/api/v2/advanced-filters/csv?age_from=2026-07-01T00:00:00Z&age_to=2026-08-01T00:00:00Z');
    expect(filters.text.split('\r\n').length).toBeGreaterThan(100);
  });

  it('answers 422 JsonErrorResponse for a bad value of each kind of path parameter', async () => {
    const bad: Record<string, string> = {};
    const badValue = (s: Schema): string => {
      const r = resolve(pro, s);
      if (Array.isArray(r.anyOf)) return '0x123123';
      if (Array.isArray(r.enum)) return 'sideways';
      if (r.type === 'integer') return 'abc';
      if (r.format === 'uuid') return 'not-a-uuid';
      return r.pattern === '^0x([A-Fa-f0-9]*)$' ? 'zz' : '0x123';
    };
    const kinds = new Map<string, { o: V2Op; name: string; value: string }>();
    for (const o of v2Ops) {
      for (const p of o.pathParams) {
        const kind = JSON.stringify(resolve(pro, p.schema));
        if (!kinds.has(kind)) kinds.set(kind, { o, name: p.name, value: badValue(p.schema) });
      }
    }
    expect(kinds.size).toBeGreaterThanOrEqual(8);
    for (const { o, name, value } of kinds.values()) {
      const url = fill(o, { name, value });
      const got = await get(url);
      expect(got.status, url).toBe(422);
      const body = parse(got) as { errors: { source: { pointer: string }; title: string }[] };
      expectValid(`${PRO_ROOT}#/components/schemas/JsonErrorResponse`, body, `GET ${url}`);
      expect(body.errors.length, url).toBeGreaterThan(0);
      expect(
        body.errors.every((e) => e.source.pointer === `/${name}` && e.title === 'Invalid value'),
        url,
      ).toBe(true);
      bad[name] = got.text;
    }
    // The instance's own texts (block_controller_test.exs and transaction_controller_test.exs in Blockscout).
    const err = (pointer: string, detail: string) => ({ detail, source: { pointer }, title: 'Invalid value' });
    expect(parse(await get('/api/v2/blocks/123qwe'))).toEqual({
      errors: [
        err(
          '/block_hash_or_number_param',
          'Failed to cast value using any of: Schema(title: "FullHash", type: :string), Schema(type: :integer)',
        ),
        err('/block_hash_or_number_param', 'Invalid integer. Got: string'),
        err('/block_hash_or_number_param', 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{64})$/'),
      ],
    });
    expect(parse(await get('/api/v2/transactions/0x123/logs'))).toEqual({
      errors: [err('/transaction_hash_param', 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{64})$/')],
    });
    expect(parse(await get('/api/v2/zksync/batches/-1'))).toEqual({
      errors: [err('/batch_number_param', '-1 is smaller than inclusive minimum 0')],
    });
    expect(parse(await get('/api/v2/arbitrum/messages/sideways'))).toEqual({ errors: [err('/direction', 'Invalid value for enum')] });
    expect(parse(await get('/api/v2/csv-exports/nope'))).toEqual({ errors: [err('/uuid_param', 'Invalid format. Expected :uuid')] });
  });

  it('applies the behaviour switches to the new routes too', async () => {
    explorer.set({ failStatus: 503, extraHeaders: { 'x-credits-remaining': '7' } });
    for (const path of [
      '/api/v2/blocks/21000000',
      `/api/v2/tokens/${OTHER_ADDRESS}/holders/csv`,
      `/api?module=account&action=balance&address=${ADDRESS}`,
    ]) {
      const got = await get(path);
      expect([got.status, got.text, got.headers.get('x-credits-remaining')], path).toEqual([503, '{"message":"fixture failure"}', '7']);
    }
    explorer.reset();
    const csv = await get(`/api/v2/tokens/${OTHER_ADDRESS}/holders/csv`);
    expect([csv.status, csv.headers.get('cache-control'), csv.headers.get('x-ratelimit-limit')]).toEqual([
      200,
      'max-age=0, private, must-revalidate',
      '600',
    ]);
  });

  it('keeps literal routes ahead of path values and 400 for unknown paths', async () => {
    expect((await get('/api/v2/transactions/stats')).status).toBe(200);
    expect((await get('/api/v2/smart-contracts/counters')).status).toBe(200);
    expect((await get('/api/v2/smart-contracts')).status).toBe(200); // the document's key ends in "/"
    for (const path of ['/api/v2/nothing-here', `/api/v2/blocks/1/nothing-here`, `/api/v2/addresses/${ADDRESS}/logs/extra/segments`]) {
      expect([(await get(path)).status, parse(await get(path))], path).toEqual([400, { message: 'Unknown API v2 action' }]);
    }
  });
});

describe('the RPC API read actions', () => {
  const query = (a: (typeof rpcActions)[number], withOptional = false): URLSearchParams => {
    const q = new URLSearchParams({ module: a.module, action: a.action });
    for (const raw of a.op.parameters ?? []) {
      const p = param(rpc, raw);
      const name = String(p.name);
      if (name === 'module' || name === 'action' || (!p.required && !withOptional && name !== 'date')) continue;
      q.set(name, sampleValue(rpc, name, (p.schema ?? {}) as Schema));
    }
    return q;
  };

  it('enumerates the read actions of the document', () => {
    expect(rpcActions).toHaveLength(42);
    expect(readActions).toHaveLength(rpcActions.length - VERIFICATION.length);
  });

  it('answers every read action with an envelope its 200 schema accepts, with module and action in any case', async () => {
    for (const a of readActions) {
      const i = rpcActions.indexOf(a);
      for (const q of [query(a), query(a, true)]) {
        const got = await get(`/api?${q.toString()}`);
        expect(got.status, q.toString()).toBe(200);
        const body = parse(got) as { status?: string; message?: string; result?: unknown; jsonrpc?: string };
        expectValid(`${RPC_ROOT}#/responses/a${i}`, body, q.toString());
        if (body.jsonrpc !== undefined) {
          // eth_get_balance and eth_block_number answer in JSON-RPC form, as their schemas say.
          expect(body.result).toMatch(/^0x[0-9a-f]+$/);
          continue;
        }
        expect([body.status, body.message], q.toString()).toEqual(['1', 'OK']);
        expect(body.result, q.toString()).not.toBeUndefined();
        expect(body.result, q.toString()).not.toBeNull();
        // The ResponseOK branch with its result, not merely "one of OK or NOTOK".
        const branches = (json200(a.op)?.oneOf ?? []) as Schema[];
        if (branches[0]) expect(ajv.validate(toJsonSchema({ ...branches[0], components: rpc.components }) as object, body)).toBe(true);
      }
      const shouting = new URLSearchParams({
        ...Object.fromEntries(query(a)),
        module: a.module.toUpperCase(),
        action: a.action.toUpperCase(),
      });
      const loud = await get(`/api?${shouting.toString()}`);
      expect([loud.status, loud.text], shouting.toString()).toEqual([200, (await get(`/api?${query(a).toString()}`)).text]);
    }
  });

  it('answers status "0" with a null result when a required parameter is missing', async () => {
    let checked = 0;
    for (const a of readActions) {
      const required = (a.op.parameters ?? [])
        .map((p) => param(rpc, p))
        .filter((p) => p.required && p.name !== 'module' && p.name !== 'action');
      if (required.length === 0 || a.module === 'token' || a.action === 'eth_get_balance') continue;
      const got = await get(`/api?module=${a.module}&action=${a.action}`);
      expect(got.status, a.key).toBe(200);
      const body = parse(got) as { status: string; result: unknown; message: string };
      expect([body.status, body.result], a.key).toEqual(['0', null]);
      expect(body.message, a.key).toMatch(/required|missing/i);
      expectValid(`${RPC_ROOT}#/components/schemas/ResponseNOTOK`, body, a.key);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
    expect(parse(await get('/api?module=account&action=balance'))).toEqual({
      message: "Query parameter 'address' is required",
      result: null,
      status: '0',
    });
    expect(parse(await get('/api?module=logs&action=getLogs&toBlock=latest'))).toMatchObject({
      message: 'Required query parameters missing: fromBlock',
      status: '0',
    });
  });

  it('ties results to the request and keeps unknown and write actions out', async () => {
    const multi = parse(await get(`/api?module=account&action=balancemulti&address=${ADDRESS},${OTHER_ADDRESS}`)) as {
      result: { account: string }[];
    };
    expect(multi.result.map((r) => r.account)).toEqual([ADDRESS, OTHER_ADDRESS]);
    const tx = parse(await get(`/api?module=transaction&action=gettxinfo&txhash=${HASH}`)) as { result: { hash: string } };
    expect(tx.result.hash).toBe(HASH);
    expect(parse(await get('/api?module=account&action=balance&address=0x12'))).toEqual({
      message: 'Invalid address format',
      result: null,
      status: '0',
    });
    for (const action of [...VERIFICATION, 'nosuchaction']) {
      const got = await get(`/api?module=contract&action=${action}`);
      expect([got.status, parse(got)], action).toEqual([400, { message: 'Unknown action', result: null, status: '0' }]);
    }
    expect(parse(await get('/api?module=nosuchmodule&action=balance'))).toEqual({ message: 'Unknown module', result: null, status: '0' });
  });
});
