// The whole read surface through the gateway, against the fixture explorer: every route of the
// table (generated from spec/) is forwarded to the path its template and values give, without
// the client's key, and billed its cost; a bad path value is a 422 with its pointer and nothing
// forwarded; an undeclared query parameter is a 422; every legacy read action answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { costOf } from '../../src/routes/settings.js';
import { ROUTE_TABLE, type LegacyRouteSpec, type V2RouteSpec } from '../../src/routes/table.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { invalidSample, validSample } from '../support/samples.js';

const V2 = ROUTE_TABLE.filter((r): r is V2RouteSpec => r.kind === 'v2');
const LEGACY = ROUTE_TABLE.filter((r): r is LegacyRouteSpec => r.kind === 'legacy');

let explorer: FixtureExplorer;
let gw: TestGateway;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(makeConfig([explorer.url], { plans: { free: { rps: 100_000, credits: 1_000_000_000 } } }));
});
afterAll(async () => {
  await gw.close();
  await explorer.close();
});

/** The path under /{chain_id} with the given values in the template's slots. */
function pathOf(spec: V2RouteSpec, values: readonly string[]): string {
  let i = 0;
  return `/${spec.segments.map((s) => (typeof s === 'string' ? s : encodeURIComponent(values[i++] ?? ''))).join('/')}`;
}

/** The required query parameters, with values the document accepts, sorted as the gateway forwards them. */
function requiredQuery(params: V2RouteSpec['queryParams']): [string, string][] {
  return params
    .filter((p) => p.required)
    .map((p): [string, string] => [p.name, validSample(p.schema)])
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

const credits = (res: Response) => Number(res.headers.get('x-credits-remaining'));

describe('the v2 route table through the gateway', () => {
  it('has every GET operation of the PRO API document', () => {
    expect(V2).toHaveLength(153);
  });

  it.each(V2.map((spec) => [spec.name, spec] as const))('%s: forwarded as rebuilt, keyless, billed its cost', async (name, spec) => {
    const values = spec.pathParams.map((p) => validSample(p.schema));
    const query = requiredQuery(spec.queryParams);
    const qs = new URLSearchParams([...query, ['apikey', DEMO_KEY]]).toString();
    // A request refused by validation bills nothing and shows the balance.
    const before = credits(await gw.get('/1/api/v2/stats?not_a_parameter=1'));
    const hitsBefore = explorer.hits();
    const res = await gw.get(`/1${pathOf(spec, values)}?${qs}`, { key: null });
    const body = await res.text();
    expect(res.status, body.slice(0, 300)).toBe(200);
    expect(explorer.hits()).toBe(hitsBefore + 1);
    const sent = explorer.requests.at(-1)!;
    // The template's path (a trailing slash of the document dropped) with the canonical values.
    expect(sent.path).toBe(pathOf(spec, values).replace(/\/$/, ''));
    expect(sent.query).toEqual(Object.fromEntries(query));
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.url).not.toContain(DEMO_KEY);
    expect(before - credits(res)).toBe(costOf(gw.app.gateway.state().config.costs, name));
    if (spec.stream) {
      expect(res.headers.get('content-type')).toMatch(/csv/);
      expect(res.headers.get('x-cache')).toBeNull();
    } else {
      expect(res.headers.get('x-cache')).toBe('MISS');
      expect(() => JSON.parse(body) as unknown).not.toThrow();
    }
  });

  const pathParams = V2.flatMap((spec) =>
    spec.pathParams.flatMap((p, i) => {
      const bad = invalidSample(p.schema);
      return bad === undefined ? [] : [[`${spec.name} ${p.name}`, spec, i, bad] as const];
    }),
  );
  it.each(pathParams)('%s: a bad value is a 422 with its pointer, and nothing is forwarded', async (_what, spec, index, bad) => {
    const values = spec.pathParams.map((p, i) => (i === index ? bad : validSample(p.schema)));
    const qs = new URLSearchParams(requiredQuery(spec.queryParams)).toString();
    const hitsBefore = explorer.hits();
    const res = await gw.get(`/1${pathOf(spec, values)}${qs ? `?${qs}` : ''}`);
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: { source: { pointer: string }; title: string }[] };
    expect(body.errors).toContainEqual(
      expect.objectContaining({ title: 'Invalid value', source: { pointer: `/${spec.pathParams[index]!.name}` } }),
    );
    expect(explorer.hits()).toBe(hitsBefore);
  });

  it.each(V2.map((spec) => [spec.name, spec] as const))('%s: an undeclared query parameter is a 422', async (_name, spec) => {
    const values = spec.pathParams.map((p) => validSample(p.schema));
    const qs = new URLSearchParams([...requiredQuery(spec.queryParams), ['not_a_parameter', '1']]).toString();
    const hitsBefore = explorer.hits();
    const res = await gw.get(`/1${pathOf(spec, values)}?${qs}`);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      errors: [{ title: 'Invalid value', source: { pointer: '/not_a_parameter' }, detail: 'Unexpected field: not_a_parameter' }],
    });
    expect(explorer.hits()).toBe(hitsBefore);
  });
});

describe('the legacy actions through the gateway', () => {
  it.each(LEGACY.map((spec) => [spec.name, spec] as const))('%s: answers with the envelope, forwarded as rebuilt', async (_name, spec) => {
    const params = spec.params.filter((p) => p.required || spec.oneOfRequired?.names[0] === p.name);
    const query = params.map((p): [string, string] => [p.name, validSample(p.schema)]);
    // An Etherscan-style client's own chainid is dropped, module and action in any case.
    const qs = new URLSearchParams([['module', spec.module.toUpperCase()], ['action', spec.action], ...query, ['chainid', '1']]);
    const hitsBefore = explorer.hits();
    const res = await gw.get(`/1/api?${qs.toString()}`);
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(explorer.hits()).toBe(hitsBefore + 1);
    const sent = explorer.requests.at(-1)!;
    expect(sent.path).toBe('/api');
    expect(sent.query.module).toBe(spec.module);
    expect(sent.query.action).toBe(spec.action);
    expect(sent.query.chainid).toBeUndefined();
    // eth_get_balance and eth_block_number answer JSON-RPC, the others the envelope.
    expect('result' in body).toBe(true);
  });

  it.each(LEGACY.filter((s) => s.params.some((p) => p.required)).map((spec) => [spec.name, spec] as const))(
    '%s: a missing required parameter is HTTP 200 with status "0", nothing forwarded',
    async (_name, spec) => {
      const hitsBefore = explorer.hits();
      const res = await gw.get(`/1/api?module=${spec.module}&action=${spec.action}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ result: null, status: '0' });
      expect(explorer.hits()).toBe(hitsBefore);
    },
  );
});
