// The two OpenAPI documents, fetched from a running gateway: the admin API's
// (GET /admin/v1/openapi.json on the admin listener) and the gateway's own (GET /api/json/openapi
// on the public one). Each is a valid OpenAPI 3.1 document (@readme/openapi-parser: the
// specification's JSON Schema and the rules it leaves out, such as unique operationIds and
// declared path parameters), names every route its listener serves and nothing else, and
// describes what real calls send and get (checked with ajv against the documented schemas).
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { startFixtureService, type FixtureService } from '../../fixture/services.js';
import { ADMIN_ERRORS } from '../../src/admin/errors.js';
import { buildAdminServer } from '../../src/admin/server.js';
import type { AdminDeps } from '../../src/admin/context.js';
import { ADMIN_ROUTES, type AdminCallSpec } from '../../src/admin/surface.js';
import { z } from 'zod';
import { CHAINID_PATHS, v2DocumentPath } from '../../src/routes/openapi.js';
import { ROUTE_NAMES, ROUTE_TABLE } from '../../src/routes/table.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { ADDRESS, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';

type Json = Record<string, unknown>;
interface Operation extends Json {
  operationId: string;
  responses: Record<string, Json>;
  parameters?: Json[];
  requestBody?: { content: Record<string, { schema: Json }> };
}
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>>; components: Json } & Json;

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

/** The legacy actions an operation of `/{chain_id}/api` carries (`x-legacy-actions`), each as an operation would say it. */
type LegacyAction = { module: string; action: string; 'x-route-name': string; 'x-credits': number } & Json;
const legacyActionsOf = (op: Json): LegacyAction[] => (op['x-legacy-actions'] as LegacyAction[] | undefined) ?? [];

/** Every operation of a document: method, path, operation. */
function operationsOf(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

/** `METHOD path` of every route fastify serves, from printRoutes' tree. */
function servedRoutes(app: FastifyInstance): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const path = (stack[depth - 1] ?? '') + m[2]!;
    stack.length = depth;
    stack[depth] = path;
    for (const method of m[3]?.split(', ') ?? []) out.push(`${method} ${path}`);
  }
  return out.sort();
}

type ApiDocument = Parameters<typeof validate>[0];

/** The document with every `$ref` replaced by what it points at. */
async function dereferenced(doc: Doc): Promise<Doc> {
  return (await dereference(structuredClone(doc) as unknown as ApiDocument)) as unknown as Doc;
}

async function validOpenApi31(doc: Doc): Promise<void> {
  expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  const result = await validate(structuredClone(doc) as unknown as ApiDocument);
  expect(result.valid ? '' : compileErrors(result)).toBe('');
  expect(result.warnings).toEqual([]);
}

/** ajv for the documents' schemas (JSON Schema 2020-12, OpenAPI 3.1's dialect); `x-` keywords are annotations. */
function schemaChecker() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const compiled = new Map<Json, ValidateFunction>();
  return (schema: Json, value: unknown): string => {
    let check = compiled.get(schema);
    if (!check) compiled.set(schema, (check = ajv.compile(schema)));
    return check(value) ? '' : ajv.errorsText(check.errors);
  };
}

let explorer: FixtureExplorer;
let stats: FixtureService;
let gw: TestGateway;
const admin = adminClient(() => gw.app.gateway.adminUrl()!);
const adminBase = () => gw.app.gateway.adminUrl()!;
const COSTS = { default: 7, routes: { 'search/quick': 99, 'rpc.eth_blockNumber': 3, 'legacy.account.balance': 11 } };

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  stats = await startFixtureService({ kind: 'stats', head: () => explorer.head() });
  gw = await startGateway(
    makeConfig([explorer.url], {
      chains: {
        '1': { name: 'Ethereum', upstreams: [explorer.url] },
        // Only Gnosis has a stats service here.
        '100': { name: 'Gnosis', upstreams: [explorer.url], stats: { upstreams: [stats.url] } },
      },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
      costs: COSTS,
      cache: { ttlSeconds: { tokens: 123, 'token-balances': 0, transactions: 0, legacy: 0 } },
      // The webhook made below is on loopback (issue 42, item 8).
      security: { allowPrivateWebhooks: true },
    }),
  );
});
afterAll(async () => {
  await gw?.close();
  await stats?.close();
  await explorer?.close();
});

describe('GET /admin/v1/openapi.json', () => {
  let doc: Doc;
  let deref: Doc;
  const check = schemaChecker();

  beforeAll(async () => {
    const res = await fetch(`${adminBase()}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await res.json()) as Doc;
    deref = await dereferenced(doc);
  });

  it('is served without the admin token (and with any), while every other call still needs it', async () => {
    expect((await fetch(`${adminBase()}/openapi.json`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(200);
    const keys = await fetch(`${adminBase()}/keys`);
    expect(keys.status).toBe(401);
  });

  it('is a valid OpenAPI 3.1 document, its server the listener it is served from', async () => {
    await validOpenApi31(doc);
    expect(doc.servers).toEqual([{ url: '/', description: 'This admin listener' }]);
  });

  it('names every route the admin listener serves, and only those', async () => {
    // The listener's routes as fastify registers them (a GET's HEAD included): a server built
    // by the same function, its routes seen as they are added.
    const app = buildAdminServer([{ name: 'admin', token: ADMIN_TOKEN, scope: 'write' }], {} as AdminDeps);
    const served: string[] = [];
    app.addHook('onRoute', (r) => {
      // find-my-way's `::` is a literal colon (`/keys:verify`).
      for (const m of [r.method].flat()) served.push(`${m} ${r.url.replaceAll('::', ':')}`);
    });
    await app.ready();
    await app.close();
    const documented = operationsOf(doc).map(({ method, path }) => `${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
    const gets = new Set(documented.filter((r) => r.startsWith('GET ')).map((r) => r.slice(4)));
    // fastify answers HEAD for every GET (the document says so once, in its description).
    expect(served.filter((r) => r.startsWith('HEAD ')).every((r) => gets.has(r.slice(5)))).toBe(true);
    expect(served.filter((r) => !r.startsWith('HEAD ')).sort()).toEqual(documented.sort());
    expect(documented.length).toBeGreaterThanOrEqual(11);
  });

  it("is made of the zod schemas the routes validate with, and of the answers' schemas", () => {
    const ops = new Map(operationsOf(deref).map((o) => [o.op.operationId, o.op]));
    const bare = (schema: z.ZodType, io: 'input' | 'output') => {
      const { $schema: _, ...rest } = z.toJSONSchema(schema, { io }) as Json;
      return rest;
    };
    for (const [name, spec] of Object.entries(ADMIN_ROUTES) as [string, AdminCallSpec][]) {
      const op = ops.get(name)!;
      if (spec.body) expect(op.requestBody!.content['application/json']!.schema, name).toEqual(bare(spec.body, 'input'));
      else expect(op.requestBody, name).toBeUndefined();
      const query = (op.parameters ?? []).filter((p) => p.in === 'query');
      expect(query.map((p) => p.name).sort(), name).toEqual(Object.keys(spec.query?.shape ?? {}).sort());
      for (const p of query) {
        const documented = { ...(p.schema as Json), ...(p.description === undefined ? {} : { description: p.description }) };
        expect(documented, `${name} ${String(p.name)}`).toEqual((bare(spec.query!, 'input').properties as Json)[p.name as string]);
      }
      const answer = op.responses[String(spec.answer.status)] as { content: Record<string, { schema: Json }> };
      expect(answer.content['application/json']!.schema, name).toEqual(bare(spec.answer.schema, 'output'));
    }
  });

  it('states the admin bearer token, and the refusals of every call with their codes', () => {
    const components = doc.components as { securitySchemes: Record<string, Json> };
    expect(Object.keys(components.securitySchemes)).toEqual(['adminToken']);
    expect(components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ adminToken: [] }]);
    const named = new Set<string>();
    for (const { op } of operationsOf(doc)) {
      const open = Array.isArray(op.security) && op.security.length === 0;
      expect(op.operationId === 'openapi', op.operationId).toBe(open);
      if (!open) expect(Object.keys(op.responses), op.operationId).toEqual(expect.arrayContaining(['401', '429', '500', '503']));
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[45]/.test(status)) continue;
        const codes = response['x-error-codes'] as (keyof typeof ADMIN_ERRORS)[];
        expect(codes.length, `${op.operationId} ${status}`).toBeGreaterThan(0);
        for (const code of codes) {
          named.add(code);
          if (code !== 'BAD_REQUEST') expect(ADMIN_ERRORS[code].status, `${op.operationId} ${code}`).toBe(Number(status));
          expect(response.description).toContain(code);
        }
      }
    }
    // Every code but the router's own 404 is some call's.
    expect([...named].sort()).toEqual(
      Object.keys(ADMIN_ERRORS)
        .filter((c) => c !== 'NO_SUCH_ROUTE')
        .sort(),
    );
  });

  it('describes what real calls send and get', async () => {
    const ops = new Map(operationsOf(deref).map((o) => [o.op.operationId, o]));
    const called = new Set<string>();
    /** The call by its documented method and path; body and answer checked against the document. */
    const call = async (operationId: string, id: string | undefined, body?: unknown, query = '', documentedBody = true) => {
      const { method, path, op } = ops.get(operationId)!;
      called.add(operationId);
      if (body !== undefined) {
        const problems = check(op.requestBody!.content['application/json']!.schema, body);
        if (documentedBody) expect(problems, `${operationId} body`).toBe('');
        else expect(problems, `${operationId}: the document refuses this body too`).not.toBe('');
      }
      const answer = await admin.call(
        method,
        path.replace('/admin/v1', '').replace(/\{(id|name)\}/, encodeURIComponent(id ?? '')) + query,
        body,
      );
      const documented = op.responses[String(answer.status)] as { content: Record<string, { schema: Json }> } | undefined;
      expect(documented, `${operationId}: status ${answer.status} is documented`).toBeDefined();
      expect(check(documented!.content['application/json']!.schema, answer.body), `${operationId} ${answer.status}`).toBe('');
      return answer;
    };

    const created = await call('createKey', undefined, {
      name: 'openapi-doc',
      plan: 'free',
      owner: 'acme',
      chains: ['1'],
      expiresAt: '2099-01-01',
    });
    expect(created.status).toBe(201);
    const { id, key } = created.body as { id: string; key: string };
    // The key works, so there is a usage row to show.
    expect((await gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`, { key })).status).toBe(200);
    expect((await call('listKeys', undefined, undefined, '?owner=acme&status=active')).status).toBe(200);
    expect((await call('showKey', id)).status).toBe(200);
    expect((await call('showKey', 'key_nope')).status).toBe(404);
    expect((await call('updateKey', id, { name: 'openapi-doc-2', status: 'disabled' })).status).toBe(200);
    expect((await call('updateKey', id, { plan: 'no-such-plan' })).body).toMatchObject({ plans: ['free'] });
    expect((await call('updateKey', id, { colour: 'blue' }, '', false)).status).toBe(422);
    expect((await call('addCredits', id, { amount: 0.5 }, '', false)).body).toMatchObject({ errors: [{ field: 'amount' }] });
    expect((await call('addCredits', id, { amount: 1_000 })).status).toBe(200);
    expect((await call('rollKey', id, { graceSeconds: 60 })).status).toBe(200);
    expect((await call('listAudit', undefined, undefined, `?key=${id}`)).status).toBe(200);
    const usage = await call('usage', undefined, undefined, `?key=${id}`);
    expect((usage.body as { items: unknown[] }).items.length).toBeGreaterThan(0);
    expect((await call('usage', undefined, undefined, '?from=2026-13-01')).status).toBe(400);
    // Hourly rows: their `hour` and `account` as the document says, and the parameter documented.
    const hourly = await call('usage', undefined, undefined, `?key=${id}&granularity=hour`);
    const first = (hourly.body as { items: { hour: string; account: string }[] }).items[0]!;
    expect(first.hour).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/);
    expect(first.account).toBe('');
    expect((await call('usage', undefined, undefined, '?granularity=minute')).status).toBe(400);
    expect(ops.get('usage')!.op.parameters?.map((p) => (p as { name: string }).name)).toContain('granularity');
    expect((await call('plans', undefined)).status).toBe(200);
    expect((await call('createPlan', undefined, { name: 'openapi-team', rps: 5, credits: 500 })).status).toBe(201);
    expect((await call('createPlan', undefined, { name: 'free', rps: 5, credits: 500 })).status).toBe(409);
    expect((await call('showPlan', 'openapi-team')).status).toBe(200);
    expect((await call('updatePlan', 'openapi-team', { period: 'monthly' })).status).toBe(200);
    expect((await call('updatePlan', 'free', { rps: 1 })).status).toBe(409);
    const account = await call('createAccount', undefined, { name: 'openapi-acme', plan: 'openapi-team', meta: { crm: 'x' } });
    expect(account.status).toBe(201);
    const accountId = (account.body as { id: string }).id;
    expect((await call('listAccounts', undefined, undefined, '?plan=openapi-team')).status).toBe(200);
    expect((await call('updateAccount', accountId, { limits: { rps: 2 } })).status).toBe(200);
    const member = await call('createKey', undefined, { name: 'openapi-member', account: accountId });
    expect(member.status).toBe(201);
    expect((await call('showAccount', accountId)).status).toBe(200);
    expect((await call('deleteAccount', accountId)).body).toMatchObject({ keys: [(member.body as { id: string }).id] });
    expect((await call('deletePlan', 'openapi-team')).status).toBe(409);
    expect((await call('revokeKey', (member.body as { id: string }).id)).status).toBe(200);
    expect((await call('deleteAccount', accountId)).status).toBe(200);
    expect((await call('deletePlan', 'openapi-team')).status).toBe(200);
    expect((await call('verifyKey', undefined, { key })).body).toMatchObject({ valid: false, code: 'DISABLED', key: { id } });
    expect((await call('verifyKey', undefined, { key: 'egw_nope' })).body).toEqual({ valid: false, code: 'NOT_FOUND', key: null });
    expect((await call('verifyKey', undefined, {}, '', false)).status).toBe(422);
    expect((await call('revokeKey', id)).status).toBe(200);
    const hook = await call('createWebhook', undefined, { url: 'http://127.0.0.1:9/hooks', events: ['key.*'], description: 'doc' });
    expect(hook.status).toBe(201);
    const hookId = (hook.body as { id: string }).id;
    expect((await call('webhooks', undefined)).status).toBe(200);
    expect((await call('showWebhook', hookId)).status).toBe(200);
    expect((await call('showWebhook', 'wh_nope')).status).toBe(404);
    expect((await call('updateWebhook', hookId, { description: null })).status).toBe(200);
    expect((await call('updateWebhook', hookId, { events: ['nope'] }, '', false)).status).toBe(422);
    // A key.created event for it, stored before the call answers.
    expect((await call('createKey', undefined, { name: 'openapi-told', plan: 'free' })).status).toBe(201);
    const listed = await call('deliveries', undefined, undefined, `?webhook=${hookId}&type=key.created`);
    const delivery = (listed.body as { items: { id: string }[] }).items[0]!;
    expect((await call('deliveries', undefined, undefined, '?limit=0')).status).toBe(400);
    expect((await call('showDelivery', delivery.id)).status).toBe(200);
    expect((await call('showDelivery', 'nope')).status).toBe(404);
    expect((await call('redeliver', delivery.id)).status).toBe(200);
    expect((await call('deleteWebhook', hookId)).status).toBe(200);
    expect((await call('deleteWebhook', hookId)).status).toBe(404);
    expect((await call('openapi', undefined)).status).toBe(200);
    // A call added to the API gets a real call here too.
    expect([...called].sort()).toEqual([...ops.keys()].sort());
  });
});

describe('GET /api/json/openapi', () => {
  let doc: Doc;
  let deref: Doc;
  const check = schemaChecker();

  beforeAll(async () => {
    const res = await gw.get('/api/json/openapi', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await res.json()) as Doc;
    deref = await dereferenced(doc);
  });

  it('is served without an API key, with CORS, and HEAD too', async () => {
    const res = await gw.get('/api/json/openapi', { key: null, headers: { origin: 'https://app.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect((await gw.get('/api/json/openapi', { key: null, method: 'HEAD' })).status).toBe(200);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    await validOpenApi31(doc);
  });

  it('has every route of the route table, and no route the table does not have', () => {
    const named: string[] = [];
    for (const { op } of operationsOf(doc)) {
      if (typeof op['x-route-name'] === 'string') named.push(op['x-route-name']);
      named.push(...Object.keys((op['x-credits-per-method'] as Json | undefined) ?? {}));
      named.push(...legacyActionsOf(op).map((a) => a['x-route-name']));
    }
    expect([...new Set(named)].sort()).toEqual([...ROUTE_NAMES].sort());
    const legacy = doc.paths['/{chain_id}/api']!;
    for (const spec of ROUTE_TABLE) {
      if (spec.kind === 'v2') expect(doc.paths[v2DocumentPath(spec.template)]?.get?.['x-route-name'], spec.name).toBe(spec.name);
      if ('module' in spec) {
        // Every action is in the one GET and the one POST of /{chain_id}/api, and in their enums.
        for (const op of [legacy.get!, legacy.post!]) {
          const entry = legacyActionsOf(op).find((a) => a.module === spec.module && a.action === spec.action);
          expect(entry?.['x-route-name'], spec.name).toBe(spec.name);
          const enums = Object.fromEntries(
            (op.parameters ?? []).filter((p) => p.name === 'module' || p.name === 'action').map((p) => [p.name, (p.schema as Json).enum]),
          ) as Record<string, string[]>;
          expect(enums.module, spec.name).toContain(spec.module);
          expect(enums.action, spec.name).toContain(spec.action);
        }
      }
    }
    for (const path of ['/{chain_id}/json-rpc', '/{chain_id}/api/eth-rpc']) expect(doc.paths[path]?.post, path).toBeDefined();
    // The examples of `module` and `action` are one action, so a request built from them is a call.
    const example = Object.fromEntries((legacy.get!.parameters ?? []).map((p) => [p.name, p.example])) as Record<string, string>;
    expect(legacyActionsOf(legacy.get!).some((a) => a.module === example.module && a.action === example.action)).toBe(true);
  });

  it('keeps to what OpenAPI and its tools take: no query or trailing slash in a path, URL-safe unique operationIds, servers', () => {
    for (const path of Object.keys(doc.paths)) {
      expect(path, path).not.toContain('?');
      expect(path === '/' || !path.endsWith('/'), path).toBe(true);
    }
    const ids = operationsOf(doc).map(({ op }) => op.operationId);
    // RFC 3986's unreserved and reserved characters, as Redocly's operation-operationId-url-safe reads them.
    for (const id of ids) expect(id, id).toMatch(/^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.servers).toEqual([{ url: '/', description: 'This gateway' }]);
    // `/api/v2/tokens/` as Blockscout spells it is documented without its slash and served with and without.
    expect(doc.paths['/{chain_id}/api/v2/tokens']?.get?.['x-route-name']).toBe('tokens');
  });

  it("names the public listener's own paths as fastify serves them, and the paths its catch-all serves", () => {
    const served = servedRoutes(gw.app).filter((r) => r.startsWith('GET '));
    expect(served).toContain('GET *');
    const own = served.filter((r) => r !== 'GET *').map((r) => r.slice(4));
    const plain = operationsOf(doc)
      .filter(({ op }) => Array.isArray(op.security) && op.security.length === 0)
      .map(({ path }) => path);
    expect(plain.sort()).toEqual(own.sort());
    expect(plain).toContain('/api/json/openapi');
    // Everything else is the pipeline's: under a chain, with the chain in `chainid`, or a shared service's.
    const rest = Object.keys(doc.paths).filter((p) => !plain.includes(p) && !p.startsWith('/{chain_id}/') && !p.startsWith('/services/'));
    expect(rest.sort()).toEqual([...CHAINID_PATHS].sort());
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/services/'))).toHaveLength(30);
  });

  it('gives each route its credits and cache lifetime under this configuration, as /api/json/config does', async () => {
    const config = (await (await gw.get('/api/json/config', { key: null })).json()) as { costs: { routes: Record<string, number> } };
    const costs: Record<string, number> = {};
    const ttl: Record<string, unknown> = {};
    for (const { op } of operationsOf(doc)) {
      for (const route of [op, ...legacyActionsOf(op)]) {
        if (typeof route['x-route-name'] !== 'string') continue;
        costs[route['x-route-name']] = route['x-credits'] as number;
        ttl[route['x-route-name']] = route['x-cache-ttl-seconds'];
      }
      Object.assign(costs, op['x-credits-per-method']);
    }
    expect(costs).toEqual(config.costs.routes);
    expect(costs).toMatchObject({
      'search/quick': 99,
      'legacy.account.balance': 11,
      'rpc.eth_blockNumber': 3,
      tokens: 30,
      blocks: 7,
      // A proxy action costs its method's credits; the one the explorer cannot answer is refused unbilled.
      'legacy.proxy.eth_blockNumber': 3,
      'legacy.proxy.eth_getUncleByBlockNumberAndIndex': 0,
    });
    expect(ttl).toMatchObject({ tokens: 123, 'token-balances': 0, 'blocks/{block_hash_or_number_param}': 30, 'legacy.account.balance': 0 });
  });

  it('states the chain prefix and the two ways of giving the key', () => {
    const components = doc.components as { parameters: Record<string, Json>; securitySchemes: Record<string, Json> };
    expect(components.parameters.chain_id).toMatchObject({ in: 'path', required: true, schema: { type: 'string', enum: ['1', '100'] } });
    // The stats service's routes: only the chains that have one.
    expect(components.parameters.stats_chain_id).toMatchObject({ in: 'path', required: true, schema: { type: 'string', enum: ['100'] } });
    const statsOps = operationsOf(doc).filter(({ path }) => path.startsWith('/{chain_id}/stats-service/'));
    expect(statsOps.length).toBeGreaterThan(0);
    for (const { path, op } of statsOps) expect(op.parameters?.[0], path).toEqual({ $ref: '#/components/parameters/stats_chain_id' });
    const others = operationsOf(doc).filter(
      ({ path }) => path.startsWith('/{chain_id}/') && !path.startsWith('/{chain_id}/stats-service/'),
    );
    for (const { path, op } of others) expect(op.parameters?.[0], path).toEqual({ $ref: '#/components/parameters/chain_id' });
    expect(Object.keys(components.securitySchemes)).toEqual(['bearer', 'apikey']);
    expect(components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(components.securitySchemes.apikey).toMatchObject({ type: 'apiKey', in: 'query', name: 'apikey' });
    expect(doc.security).toEqual([{ bearer: [] }, { apikey: [] }]);
  });

  it('describes what real calls get, and bills what it says', async () => {
    const op = (path: string, method = 'get') => deref.paths[path]![method]!;
    const remaining = (res: Response) => Number(res.headers.get('x-credits-remaining'));
    const answer = (o: Operation, status: number) => o.responses[String(status)] as { content: Record<string, { schema: Json }> };
    const v2 = op('/{chain_id}/api/v2/addresses/{address_hash_param}/token-balances');
    const first = await gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`);
    const second = await gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`);
    expect(second.status).toBe(200);
    expect(remaining(first) - remaining(second)).toBe(v2['x-credits']);
    const headers = Object.keys(
      (op('/{chain_id}/api/v2/addresses/{address_hash_param}/token-balances').responses['200']!.headers as Json) ?? {},
    );
    for (const h of headers) expect(second.headers.get(h), h).not.toBeNull();

    // A bad parameter: the documented 422 and its body.
    const bad = await gw.get('/1/api/v2/addresses/0xnope/token-balances');
    expect(bad.status).toBe(422);
    expect(check(answer(v2, 422).content['application/json']!.schema, await bad.json())).toBe('');
    // No key: the documented 401, its code named.
    const anonymous = await gw.get(`/1/api/v2/addresses/${ADDRESS}/token-balances`, { key: null });
    expect(anonymous.status).toBe(401);
    expect(check(answer(v2, 401).content['application/json']!.schema, await anonymous.json())).toBe('');
    expect(v2.responses['401']!['x-error-codes']).toContain('NO_KEY');

    // The legacy form, billed as its action says; a legacy refusal in the envelope.
    const legacy = op('/{chain_id}/api');
    const action = (module: string, name: string) => legacyActionsOf(legacy).find((a) => a.module === module && a.action === name)!;
    const before = await gw.get(`/1/api?module=account&action=balance&address=${ADDRESS}`);
    const after = await gw.get(`/1/api?module=account&action=balance&address=${ADDRESS}`);
    expect(after.status).toBe(200);
    expect(remaining(before) - remaining(after)).toBe(action('account', 'balance')['x-credits']);
    const proxy = action('proxy', 'eth_blockNumber');
    const p1 = await gw.get('/1/api?module=proxy&action=eth_blockNumber');
    const p2 = await gw.get('/1/api?module=proxy&action=eth_blockNumber');
    expect(p2.status).toBe(200);
    expect(remaining(p1) - remaining(p2)).toBe(proxy['x-credits']);
    expect(proxy['x-credits']).toBe(3);
    // An unknown action: the documented 400 of the form, its code named.
    const unknown = await gw.get('/1/api?module=account&action=nope');
    expect(unknown.status).toBe(400);
    expect(check(answer(legacy, 400).content['application/json']!.schema, await unknown.json())).toBe('');
    expect(legacy.responses['400']!['x-error-codes']).toContain('LEGACY_UNKNOWN_ACTION');
    const refused = await gw.get(`/1/api?module=account&action=balance&address=${ADDRESS}`, { key: 'no-such-key' });
    expect(refused.status).toBe(401);
    expect(check(answer(legacy, 401).content['application/json']!.schema, await refused.json())).toBe('');

    // JSON-RPC: a documented request, a documented answer, the method's credits.
    const rpc = op('/{chain_id}/json-rpc', 'post');
    const body = [
      { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] },
    ];
    expect(check(rpc.requestBody!.content['application/json']!.schema, body)).toBe('');
    const base = await gw.get('/1/json-rpc', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const again = await gw.get('/1/json-rpc', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(again.status).toBe(200);
    expect(check(answer(rpc, 200).content['application/json']!.schema, await again.json())).toBe('');
    const perMethod = rpc['x-credits-per-method'] as Record<string, number>;
    expect(remaining(base) - remaining(again)).toBe(perMethod['rpc.eth_blockNumber']! + perMethod['rpc.eth_chainId']!);
    expect(check(rpc.requestBody!.content['application/json']!.schema, [{ jsonrpc: '2.0', id: 1, method: 'eth_mine' }])).not.toBe('');

    // A CSV export: the media type the explorer answers is the one documented.
    const csvOp = op('/{chain_id}/api/v2/addresses/{address_hash_param}/transactions/csv');
    const csv = await gw.get(`/1/api/v2/addresses/${ADDRESS}/transactions/csv?from_period=2024-01-01&to_period=2024-01-02`);
    expect(csv.status).toBe(200);
    await csv.arrayBuffer();
    expect(Object.keys(answer(csvOp, 200).content)).toEqual([csv.headers.get('content-type')!.split(';')[0]]);

    // The gateway's own paths answer as documented.
    for (const path of ['/healthz', '/readyz', '/api/json/config']) {
      const res = await gw.get(path, { key: null });
      expect(check(answer(op(path), res.status).content['application/json']!.schema, await res.json()), path).toBe('');
    }
  });
});
