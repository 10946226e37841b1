// The gateway's own OpenAPI 3.1 document (GET /api/json/openapi): every route of the route table
// (table.ts, generated from the vendored documents in spec/), under its chain prefix, with what it
// costs and how long it is kept under the configuration given, the parameters it is validated
// against (the table's, or the zod schemas of the routes checked by hand: params.ts), the
// gateway's refusals (http/errors.ts) and the two ways of giving the API key. Pure: the caller
// passes the configuration's parts and the paths it serves beside the table.
import { z } from 'zod';
import { ERRORS, type ErrorCode } from '../http/errors.js';
import { RPC_METHODS, rpcRouteName } from '../rpc/methods.js';
import { legacyQuery, tokenBalancesQuery, transactionsQuery } from './params.js';
import { billedCost, costOf, ttlSecondsFor, type CostSettings, type TtlSettings } from './settings.js';
import type { ParamData, ParamSchema } from './spec-types.js';
import { ROUTE_TABLE, routeByName, type ModuleRouteSpec, type ServiceRouteSpec, type V2RouteSpec } from './table.js';

type Json = Record<string, unknown>;

/** A path served beside the route table, without a key (`/healthz`, `/api/json/config`, ...). */
export interface PlainPath {
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** Status -> description and JSON Schema of the body. */
  readonly answers: Readonly<Record<number, { readonly description: string; readonly schema: Json }>>;
}

export interface PublicDocSettings {
  /** `stats`: the chain has a stats service (`chains.<id>.stats`), so its `/{chain_id}/stats-service/...` routes are served. */
  readonly chains: readonly { readonly id: string; readonly name: string; readonly stats?: boolean }[];
  readonly costs: CostSettings;
  readonly cache: TtlSettings;
  /** `rpc.maxBatch`. */
  readonly maxBatch: number;
  readonly plain: readonly PlainPath[];
}

/** The routes checked by their own zod schemas rather than the table's parameters (resolve.ts). */
const ZOD_CHECKED: Readonly<Record<string, z.ZodType>> = {
  'token-balances': tokenBalancesQuery,
  transactions: transactionsQuery,
  'legacy.getToken': legacyQuery.getToken,
  'legacy.getTokenHolders': legacyQuery.getTokenHolders,
  'legacy.bridgedTokenList': legacyQuery.bridgedTokenList,
};

/** The paths of the Etherscan V2 form: the chain in `chainid` (resolve.ts). */
export const CHAINID_PATHS = ['/v2/api', '/api'] as const;
/** The JSON-RPC endpoint's paths under a chain (resolve.ts RPC_PATHS, without their trailing slash). */
export const JSON_RPC_PATHS = ['/json-rpc', '/api/eth-rpc'] as const;

const CHAIN = { $ref: '#/components/parameters/chain_id' };
/** `chain_id` of the stats service's routes: only the chains that have one. */
const STATS_CHAIN = { $ref: '#/components/parameters/stats_chain_id' };

/**
 * A route name as an operationId: `{param}` written `:param`, as Phoenix's router writes a path's
 * parameters, since braces are not among the characters a URL may carry unescaped (RFC 3986
 * section 2; Redocly's operation-operationId-url-safe). Route names are unique and none has a
 * segment that starts with `:`, so the ids are unique too (operations() checks).
 */
export const operationIdOf = (routeName: string): string => routeName.replace(/\{([^}]+)\}/g, ':$1');

/** A v2 template as a document path: without the trailing slash of `/api/v2/tokens/` (see v2Operation). */
export const v2DocumentPath = (template: string): string => `/{chain_id}${template.replace(/(.)\/+$/, '$1')}`;
const schemaRef = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const responseRef = (id: string) => ({ $ref: `#/components/responses/${id}` });
const headerRef = (id: string) => ({ $ref: `#/components/headers/${id}` });

/** A parameter schema of the vendored documents (OpenAPI 3.0's `nullable`, bounds as text) in JSON Schema 2020-12. */
export function jsonSchemaOf(p: ParamSchema): Json {
  const { nullable, minimum, maximum, anyOf, oneOf, items, enum: values, ...rest } = p;
  const out: Json = { ...rest };
  if (values !== undefined) out.enum = [...values];
  if (minimum !== undefined) out.minimum = Number(minimum);
  if (maximum !== undefined) out.maximum = Number(maximum);
  if (anyOf !== undefined) out.anyOf = anyOf.map(jsonSchemaOf);
  if (oneOf !== undefined) out.oneOf = oneOf.map(jsonSchemaOf);
  if (items !== undefined) out.items = jsonSchemaOf(items);
  if (nullable !== true) return out;
  if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  if (typeof out.type === 'string') return { ...out, type: [out.type, 'null'] };
  return { anyOf: [out, { type: 'null' }] };
}

function queryParam(p: ParamData): Json {
  return {
    name: p.name,
    in: 'query',
    required: p.required,
    schema: jsonSchemaOf(p.schema),
    // A list is written as a comma list (param-check.ts compileArray).
    ...(p.schema.type === 'array' ? { style: 'form', explode: false } : {}),
  };
}

/** The query parameters of a zod-checked route, as the table's ParamData. */
function zodParams(schema: z.ZodType): Json[] {
  const { properties = {}, required = [] } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(properties).map(([name, s]) => ({ name, in: 'query', required: required.includes(name), schema: s }));
}

function queryParams(name: string, params: readonly ParamData[]): Json[] {
  const checked = ZOD_CHECKED[name];
  return checked ? zodParams(checked) : params.map(queryParam);
}

// --- refusals ---

type Family = 'v2' | 'legacy' | 'rpc' | 'service';

/** What every keyed request may be refused with, in the pipeline's order (docs/clients.md, Order of checks). */
const KEYED: readonly ErrorCode[] = [
  'NO_KEY',
  'BAD_KEY',
  'CONFLICTING_KEYS',
  'PLACEHOLDER_KEY',
  'BAD_AUTH_SCHEME',
  'TOO_MANY_BAD_KEYS',
  'UNVERIFIED_KEY',
  'DISABLED_KEY',
  'EXPIRED_KEY',
  'CHAIN_NOT_ALLOWED',
  'UNKNOWN_CHAIN',
  'RATE_LIMITED',
  'OUT_OF_CREDITS',
  'QUOTA_UNAVAILABLE',
  'SHUTTING_DOWN',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_UNREACHABLE',
  'UPSTREAM_ERROR',
  'UPSTREAM_TOO_LARGE',
  'INTERNAL',
];
/** A request with a body (a POSTed form, JSON-RPC). */
const BODY: readonly ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'BODY_INCOMPLETE'];
/** The legacy form, before the action is known (resolve.ts resolveLegacy). */
const LEGACY_FORM: readonly ErrorCode[] = ['LEGACY_NO_MODULE_ACTION', 'LEGACY_UNKNOWN_MODULE', 'LEGACY_UNKNOWN_ACTION'];
/** The Etherscan V2 form, before the action is known. */
const CHAINID_FORM: readonly ErrorCode[] = ['CHAINID_REQUIRED', ...LEGACY_FORM];

// JSON-RPC's refusals are JSON-RPC error objects (id null before the body is read), keeping their status (request/send.ts).
const FAMILY_BODY: Readonly<Record<Family, string>> = { v2: 'Error', legacy: 'LegacyError', rpc: 'JsonRpcAnswer', service: 'Error' };
/** A route of a service the gateway was not given (contract section 9). */
const SERVICE_MISSING: readonly ErrorCode[] = [
  'STATS_NOT_CONFIGURED',
  'BENS_NOT_CONFIGURED',
  'METADATA_NOT_CONFIGURED',
  'MULTICHAIN_NOT_CONFIGURED',
  'UNKNOWN_CLUSTER',
];
const QUOTA_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-credits-remaining'];

/** Codes by status, as the error responses of a family: `<Family>Error<status>` components. */
function errorResponses(family: Family, codes: readonly ErrorCode[]): { refs: Json; components: Record<string, Json> } {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code]);
  const refs: Json = {};
  const components: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const id = `${family}Error${status}`;
    const headers = new Set<string>(['x-request-id']);
    for (const code of list) for (const h of Object.keys((ERRORS[code] as { headers?: Json }).headers ?? {})) headers.add(h);
    if (status === 429) headers.add('retry-after');
    if (status === 402 || status === 429) for (const h of QUOTA_HEADERS) headers.add(h);
    const body =
      family === 'rpc' && (status === 402 || status === 429 || status === 413)
        ? { anyOf: [schemaRef('JsonRpcAnswer'), { type: 'array', items: schemaRef('JsonRpcAnswer') }] }
        : schemaRef(FAMILY_BODY[family]);
    components[id] = {
      description: list.map((c) => `${c}: ${ERRORS[c].message}`).join('; '),
      headers: Object.fromEntries([...headers].map((h) => [h, headerRef(h)])),
      content: { 'application/json': { schema: body } },
      'x-error-codes': list,
    };
    refs[status] = responseRef(id);
  }
  return { refs, components };
}

// --- operations ---

interface Built {
  paths: Record<string, Json>;
  responses: Record<string, Json>;
}

const SUCCESS_HEADERS = ['x-request-id', ...QUOTA_HEADERS];

function ok(description: string, content: Json, cached: boolean): Json {
  const headers = [...SUCCESS_HEADERS, ...(cached ? ['x-cache', 'age'] : [])];
  return { description, headers: Object.fromEntries(headers.map((h) => [h, headerRef(h)])), content };
}

const ANY_JSON = { 'application/json': { schema: {} } };
const LEGACY_ANSWER =
  'The explorer\'s answer (`{"message", "result", "status"}`; `status: "0"` with HTTP 200 for a bad parameter), or for the proxy module a JSON-RPC answer';

/** The successful answers, shared by the operations. */
const ANSWERS: Readonly<Record<string, Json>> = {
  Answer: ok("The explorer's answer, passed on as it is", ANY_JSON, false),
  CachedAnswer: ok("The explorer's answer, passed on as it is (or from the cache)", ANY_JSON, true),
  // Blockscout's CsvExportController answers `application/csv` (put_resp_content_type, Plug adds
  // the charset) and its own document declares that type (spec/pro-api-0.5.0.json,
  // fixture/routes.ts CSV_CONTENT_TYPE); the gateway passes the type on as it comes.
  CsvAnswer: ok('The CSV export, streamed through', { 'application/csv': { schema: { type: 'string' } } }, false),
  LegacyCachedAnswer: ok(LEGACY_ANSWER, ANY_JSON, true),
  JsonRpcAnswers: ok(
    'One answer, or one per call of the batch, ids and order kept',
    { 'application/json': { schema: { anyOf: [schemaRef('JsonRpcAnswer'), { type: 'array', items: schemaRef('JsonRpcAnswer') }] } } },
    true,
  ),
};

function v2Operation(spec: V2RouteSpec, s: PublicDocSettings, errors: Json): Json {
  const ttl = ttlSecondsFor(s.cache, spec.name);
  const family = spec.template.split('/')[3] ?? 'v2';
  // Blockscout's documents spell two paths with a trailing slash (`/api/v2/tokens/`,
  // `/api/v2/smart-contracts/`); Phoenix drops empty segments, and so does the gateway's matcher
  // (match.ts matchV2), so the path is served with and without it, and documented without.
  const slash = spec.template.endsWith('/') ? " Served with a trailing slash too, as Blockscout's document spells it." : '';
  return {
    operationId: operationIdOf(spec.name),
    summary: spec.name,
    description: `Forwarded to the explorer's \`${spec.template}\` (PRO API operation \`${spec.operationId}\`). ${
      spec.stream ? 'Streamed through, never cached.' : ttl > 0 ? `Cached ${ttl} s.` : 'Not cached.'
    } A query parameter not listed is refused (422, \`Unexpected field\`).${slash}`,
    tags: [`v2: ${family}`],
    parameters: [
      CHAIN,
      ...spec.pathParams.map((p) => ({ ...queryParam(p), in: 'path', required: true })),
      ...queryParams(spec.name, spec.queryParams),
    ],
    responses: {
      200: responseRef(spec.stream ? 'CsvAnswer' : ttl > 0 ? 'CachedAnswer' : 'Answer'),
      ...errors,
      422: responseRef('ValidationFailed'),
    },
    'x-route-name': spec.name,
    'x-credits': costOf(s.costs, spec.name),
    'x-cache-ttl-seconds': spec.stream ? 0 : ttl,
  };
}

const SERVICE_DESCRIPTION: Readonly<Record<ServiceRouteSpec['service'], string>> = {
  explorer: "Forwarded to the chain's explorer",
  stats: "Forwarded to the chain's stats service (`chains.<chain_id>.stats`)",
  bens: 'Forwarded to the name service (`services.bens`)',
  metadata: 'Forwarded to the metadata service (`services.metadata`)',
  multichain:
    "Forwarded to the multichain aggregator (`services.multichain`); without one, answered by the gateway for the clusters of `clusters`, from each chain's explorer (`missing_chains` names those that did not answer in time)",
};

function serviceOperation(spec: ServiceRouteSpec, s: PublicDocSettings, errors: Json): Json {
  const ttl = ttlSecondsFor(s.cache, spec.name);
  const upstream = `/${spec.segments.map((x) => (typeof x === 'string' ? x : `{${x.param}}`)).join('/')}`;
  const rust = spec.service !== 'explorer';
  const operation: Record<string, unknown> = {
    operationId: operationIdOf(spec.name),
    summary: spec.name,
    description: `${SERVICE_DESCRIPTION[spec.service]}: \`${upstream}\` (PRO API operation \`${spec.operationId}\`). ${
      spec.method === 'POST' ? 'Sent once with its JSON body, never cached.' : ttl > 0 ? `Cached ${ttl} s.` : 'Not cached.'
    } ${rust ? 'A query parameter not listed is dropped; a bad value is refused (422, google.rpc.Status).' : 'A query parameter not listed is refused (422, `Unexpected field`).'}`,
    tags: [`services: ${spec.service}`],
    parameters: [
      ...(spec.documentPath.startsWith('/{chain_id}/') ? [spec.service === 'stats' ? STATS_CHAIN : CHAIN] : []),
      ...spec.pathParams.map((p) => ({ ...queryParam(p), in: 'path', required: true })),
      ...queryParams(spec.name, spec.queryParams),
    ],
    responses: {
      200: responseRef(spec.method === 'POST' || ttl === 0 ? 'Answer' : 'CachedAnswer'),
      ...errors,
      422: responseRef(rust ? 'ServiceValidationFailed' : 'ValidationFailed'),
    },
    'x-route-name': spec.name,
    'x-credits': costOf(s.costs, spec.name),
    'x-cache-ttl-seconds': spec.method === 'POST' ? 0 : ttl,
  };
  if (spec.method === 'POST') operation.requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } };
  return operation;
}

function moduleDescription(spec: ModuleRouteSpec, s: PublicDocSettings): string {
  switch (spec.kind) {
    case 'legacy': {
      const ttl = ttlSecondsFor(s.cache, spec.name);
      return `Forwarded to the explorer's \`/api?module=${spec.module}&action=${spec.action}\`. ${ttl > 0 ? `Cached ${ttl} s.` : 'Not cached.'} Parameters not listed are dropped; a bad one is answered with HTTP 200 and \`status: "0"\`.`;
    }
    case 'proxy':
      return spec.method === undefined
        ? "Etherscan's proxy action, which the explorer's JSON-RPC cannot answer: Etherscan's `NOTOK` answer, unbilled."
        : `Etherscan's proxy action, made the JSON-RPC call \`${spec.method}\` (its parameters as Etherscan names them: \`tag\`, \`txhash\`, \`address\`, \`position\`, \`hex\`, \`to\`, \`data\`, ...) and answered in Etherscan's shape; cached with the JSON-RPC form.`;
    case 'verify':
      return spec.write
        ? 'Contract verification: forwarded once to the explorer as a POST with the fields given (a multipart body stays multipart), never cached.'
        : 'A verification status: forwarded, never cached.';
  }
}

function jsonRpcOperation(operationId: string, s: PublicDocSettings, errors: Json): Json {
  const perMethod = Object.fromEntries(RPC_METHODS.map((m) => [rpcRouteName(m), costOf(s.costs, rpcRouteName(m))]));
  return {
    operationId,
    summary: 'JSON-RPC 2.0: one call or a batch',
    description: `Forwarded to the explorer's \`/api/eth-rpc\`. One HTTP request, a batch of at most ${s.maxBatch} calls too, counts once against the rate limit; each call costs its method's credits (\`x-credits-per-method\`), and a batch that cannot be paid whole is refused whole. A call's errors are EIP-1474's, with HTTP 200; a notification (no \`id\`) is carried out and not answered (204 when nothing is left to answer). Refusals of the request keep their HTTP status with a JSON-RPC error, id null: 401 and 403 -32002, 404 -32001, 402 and 429 -32005.`,
    tags: ['json-rpc'],
    parameters: [CHAIN],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            anyOf: [schemaRef('JsonRpcCall'), { type: 'array', items: schemaRef('JsonRpcCall'), minItems: 1, maxItems: s.maxBatch }],
          },
        },
      },
    },
    responses: {
      200: responseRef('JsonRpcAnswers'),
      204: {
        description: 'Only notifications: nothing to answer (JSON-RPC 2.0 section 4.1)',
        headers: { 'x-request-id': headerRef('x-request-id') },
      },
      ...errors,
    },
    'x-credits-per-method': perMethod,
  };
}

// --- the legacy API: one path, the action in `module` and `action` ---
//
// OpenAPI keys operations by path and method, and a path may not hold a query (OpenAPI 3.1.1,
// section 4.8.8 Paths Object: "Path templating ... does not include the query string"), so the
// legacy actions, all served at `/{chain_id}/api`, are one GET and one POST there: `module` and
// `action` are enums of every action, the actions' own query parameters are listed once each (a
// name several actions share takes the union of their schemas), and `x-legacy-actions` holds each
// action as an operation would: its route name, credits, cache lifetime, description and its own
// parameters, which of them are required.

const guid = { name: 'guid', in: 'query', required: true, schema: { type: 'string' } };

/** An action's own query parameters (module and action aside). */
function actionParams(spec: ModuleRouteSpec): Json[] {
  if (spec.kind === 'legacy') return queryParams(spec.name, spec.params);
  return spec.kind === 'verify' && !spec.write ? [guid] : [];
}

/** What a comma list (`style: form, explode: false`) looks like as the one string it is sent as. */
function asSent(p: Json): Json {
  if (p.style !== 'form' || p.explode !== false) return p.schema as Json;
  const { items, maxItems } = p.schema as { items?: { pattern?: string }; maxItems?: number };
  const one = items?.pattern?.replace(/^\^/, '').replace(/\$$/, '');
  if (one === undefined) return { type: 'string', description: 'a comma list' };
  const more = maxItems === undefined ? '*' : `{0,${maxItems - 1}}`;
  return { type: 'string', pattern: `^${one}(?:,${one})${more}$`, description: 'a comma list' };
}

const MODULE_ROUTES = (): ModuleRouteSpec[] => ROUTE_TABLE.filter((r): r is ModuleRouteSpec => 'module' in r);

/** `module` and `action`: every module and every action name the table has. */
function moduleActionParams(required: boolean): Json[] {
  const routes = MODULE_ROUTES();
  const modules = [...new Set(routes.map((r) => r.module))].sort();
  const actions = [...new Set(routes.map((r) => r.action))].sort();
  return [
    {
      name: 'module',
      in: 'query',
      required,
      description: 'The module, as Blockscout spells it (matched in any letter case)',
      schema: { type: 'string', enum: modules },
      example: LEGACY_EXAMPLE.module,
    },
    {
      name: 'action',
      in: 'query',
      required,
      description:
        "The module's action, as Blockscout spells it (matched in any letter case); `x-legacy-actions` lists which module has which",
      schema: { type: 'string', enum: actions },
      example: LEGACY_EXAMPLE.action,
    },
  ];
}

/** Every action's own query parameters, one per name: the schemas its actions give it, never required (that depends on the action). */
function unionParams(except: readonly string[] = []): Json[] {
  const byName = new Map<string, { forms: Map<string, Json>; sent: Map<string, Json>; users: string[] }>();
  for (const spec of MODULE_ROUTES()) {
    for (const p of actionParams(spec)) {
      const name = p.name as string;
      if (except.includes(name)) continue;
      const entry = byName.get(name) ?? { forms: new Map<string, Json>(), sent: new Map<string, Json>(), users: [] };
      const { schema, style, explode } = p;
      entry.forms.set(JSON.stringify({ schema, style, explode }), { schema, ...(style === undefined ? {} : { style, explode }) });
      const sent = asSent(p);
      entry.sent.set(JSON.stringify(sent), sent);
      entry.users.push(`\`${spec.module}.${spec.action}\`${p.required === true ? ' (required)' : ''}`);
      byName.set(name, entry);
    }
  }
  return [...byName].map(([name, { forms, sent, users }]) => {
    const list = [...sent.values()];
    // One form for every action that takes it (a comma list keeps its array schema), or what each sends.
    const form = forms.size === 1 ? [...forms.values()][0]! : { schema: list.length === 1 ? list[0] : { anyOf: list } };
    return { name, in: 'query', required: false, description: `Taken by ${users.join(', ')}`, ...form };
  });
}

/** Each action as an operation would say it (`x-legacy-actions`). */
function legacyActions(s: PublicDocSettings): Json[] {
  return MODULE_ROUTES().map((spec) => ({
    module: spec.module,
    action: spec.action,
    description: moduleDescription(spec, s),
    parameters: actionParams(spec).map(({ in: _in, ...p }) => p),
    'x-route-name': spec.name,
    'x-credits': billedCost(s.costs, spec.name),
    // A proxy action is kept as its JSON-RPC call is (by the block it asks about): no one figure.
    ...(spec.kind === 'proxy' ? {} : { 'x-cache-ttl-seconds': ttlSecondsFor(s.cache, spec.name) }),
  }));
}

/** The actions as a Markdown table, for readers of the rendered document. */
function actionTable(actions: readonly Json[]): string {
  const rows = actions.map((a) => {
    const params = (a.parameters as { name: string; required?: boolean }[]).map((p) => (p.required === true ? `**${p.name}**` : p.name));
    const ttl = a['x-cache-ttl-seconds'] as number | undefined;
    const cache = ttl === undefined ? 'as its JSON-RPC call' : ttl === 0 ? 'no' : `${ttl} s`;
    return `| ${String(a.module)} | ${String(a.action)} | ${String(a['x-credits'])} | ${cache} | ${params.join(', ')} |`;
  });
  return ['| module | action | credits | cached | parameters (required in bold) |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

/**
 * One action that makes a whole call, as the examples of `module`, `action` and the form: with two
 * enums alone, a tool that builds requests from the document (Portman, Postman) pairs a module with
 * another's action. The address is one of spec/blockscout-rpc-api-1.0.0.yaml's examples.
 */
const LEGACY_EXAMPLE = { module: 'account', action: 'balance', address: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045' } as const;

const FORM_BODY = (params: readonly Json[]): Json => {
  const schema = {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name as string, p.schema])),
    additionalProperties: true,
  };
  const media = { schema, example: LEGACY_EXAMPLE };
  return { required: false, content: { 'application/x-www-form-urlencoded': media, 'multipart/form-data': media } };
};

function legacyOperations(s: PublicDocSettings, errors: Json, bodyErrors: Json): Json {
  const actions = legacyActions(s);
  const own = unionParams();
  const common = {
    tags: ['legacy'],
    'x-legacy-actions': actions,
  };
  return {
    get: {
      ...common,
      operationId: 'legacy',
      summary: 'The Etherscan-style API: one action, named by `module` and `action`',
      description: `Every legacy action of the explorer, and Etherscan's proxy actions and contract verification, named by \`module\` and \`action\` (\`/{chain_id}/api?module=account&action=balance&address=...\`; \`/{chain_id}/api/v1\` and a trailing slash are served too). Each action is its own route: its credits, cache lifetime, description and parameters are in \`x-legacy-actions\`, and in this table. A parameter an action does not take is dropped; a bad one is answered with HTTP 200 and \`status: "0"\`, as Blockscout does.\n\n${actionTable(actions)}`,
      parameters: [CHAIN, ...moduleActionParams(true), ...own],
      responses: { 200: responseRef('LegacyCachedAnswer'), ...errors },
    },
    post: {
      ...common,
      operationId: 'legacyForm',
      summary: 'The Etherscan-style API, the parameters in a form',
      description:
        "The actions of `GET /{chain_id}/api` (`x-legacy-actions`), their parameters in the query or in a form body (the body's over the query's), `module` and `action` included: how contract verification is sent (`module=contract`, `action=verifysourcecode` and the other writes), forwarded once as a POST with the fields given (a multipart body stays multipart).",
      parameters: [CHAIN, ...moduleActionParams(false), ...own],
      requestBody: FORM_BODY([...moduleActionParams(false), ...own]),
      responses: { 200: responseRef('LegacyCachedAnswer'), ...bodyErrors },
    },
  };
}

function chainIdForm(method: 'get' | 'post', path: string, chainIds: readonly string[], errors: Json): Json {
  // `chainid` is the chain here: bridgedTokenList's own `chainid` cannot be given in this form.
  const own = unionParams(['chainid']);
  const head = [
    { name: 'chainid', in: 'query', required: true, schema: { type: 'string', ...(chainIds.length > 0 ? { enum: [...chainIds] } : {}) } },
    ...moduleActionParams(method === 'get'),
  ];
  return {
    operationId: `${path === '/api' ? 'api' : 'v2api'}.${method}`,
    summary: 'The legacy API with the chain in `chainid` (Etherscan V2)',
    description:
      'Every action of `/{chain_id}/api` (its `x-legacy-actions`), the chain given as `chainid` (not forwarded): validated, billed and cached as that action.',
    tags: ['legacy'],
    parameters: [...head, ...own],
    ...(method === 'post' ? { requestBody: FORM_BODY([...moduleActionParams(false), ...own]) } : {}),
    responses: {
      200: responseRef('LegacyCachedAnswer'),
      ...errors,
    },
  };
}

function plainOperation(p: PlainPath): Json {
  return {
    operationId: p.operationId,
    summary: p.summary,
    ...(p.description === undefined ? {} : { description: p.description }),
    tags: ['gateway'],
    security: [],
    responses: Object.fromEntries(
      Object.entries(p.answers).map(([status, a]) => [
        status,
        { description: a.description, content: { 'application/json': { schema: a.schema } } },
      ]),
    ),
  };
}

function operations(s: PublicDocSettings): Built {
  const paths: Record<string, Json> = {};
  const responses: Record<string, Json> = {};
  const family = (f: Family, codes: readonly ErrorCode[]) => {
    const built = errorResponses(f, codes);
    Object.assign(responses, built.components);
    return built.refs;
  };
  const v2 = family('v2', KEYED);
  const legacy = family('legacy', [...LEGACY_FORM, ...KEYED]);
  const legacyBody = family('legacy', [...LEGACY_FORM, ...KEYED, ...BODY]);
  const chainIdErrors = family('legacy', [...CHAINID_FORM, ...KEYED, ...BODY]);
  const rpc = family('rpc', [...KEYED, 'PAYLOAD_TOO_LARGE', 'BODY_INCOMPLETE']);
  const service = family('service', [...SERVICE_MISSING, ...KEYED]);
  const servicePost = family('service', [...SERVICE_MISSING, ...KEYED, 'PAYLOAD_TOO_LARGE', 'BODY_INCOMPLETE']);
  const add = (path: string, item: Json) => {
    if (path in paths) throw new Error(`public OpenAPI: ${path} twice`);
    paths[path] = item;
  };

  for (const name of Object.keys(ZOD_CHECKED)) if (!routeByName(name)) throw new Error(`public OpenAPI: no route ${name}`);
  for (const p of s.plain) add(p.path, { get: plainOperation(p) });
  for (const spec of ROUTE_TABLE) {
    if (spec.kind === 'v2') add(v2DocumentPath(spec.template), { get: v2Operation(spec, s, v2) });
    else if (spec.kind === 'service') {
      const path = spec.documentPath.startsWith('/{chain_id}/') ? spec.documentPath : `/services/${spec.name}`;
      add(path, { [spec.method.toLowerCase()]: serviceOperation(spec, s, spec.method === 'POST' ? servicePost : service) });
    }
  }
  add('/{chain_id}/api', legacyOperations(s, legacy, legacyBody));
  for (const path of JSON_RPC_PATHS) {
    add(`/{chain_id}${path}`, { post: jsonRpcOperation(path === '/json-rpc' ? 'jsonRpc' : 'ethRpc', s, rpc) });
  }
  const chainIds = s.chains.map((c) => c.id);
  for (const path of CHAINID_PATHS) {
    add(path, { get: chainIdForm('get', path, chainIds, chainIdErrors), post: chainIdForm('post', path, chainIds, chainIdErrors) });
  }
  const ids = Object.values(paths).flatMap((item) => Object.values(item).map((op) => (op as { operationId: string }).operationId));
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (twice.length > 0) throw new Error(`public OpenAPI: operationIds twice: ${twice.join(', ')}`);
  return { paths, responses };
}

const HEADERS: Readonly<Record<string, { description: string; type: 'string' | 'integer' }>> = {
  'x-request-id': { description: "the request's id: the client's own (1-128 of `A-Z a-z 0-9 . _ : -`) or the gateway's", type: 'string' },
  'x-ratelimit-limit': { description: "the plan's requests per second (-1: the quota store failed open)", type: 'integer' },
  'x-ratelimit-remaining': { description: 'requests left in this second', type: 'integer' },
  'x-ratelimit-reset': { description: 'milliseconds until the window resets', type: 'integer' },
  'x-credits-remaining': { description: "the key's credits after this request is billed", type: 'integer' },
  'x-cache': { description: '`HIT`, `MISS` or `STALE`', type: 'string' },
  age: { description: 'whole seconds the answer was kept', type: 'integer' },
  'retry-after': { description: 'seconds to wait', type: 'integer' },
  'www-authenticate': { description: '`Bearer`, with `error="invalid_token"` once a key was given', type: 'string' },
  allow: { description: 'the methods the path serves', type: 'string' },
  connection: { description: '`close`', type: 'string' },
};

const SCHEMAS: Readonly<Record<string, Json>> = {
  RpcStatus: {
    type: 'object',
    properties: { code: { type: 'integer' }, message: { type: 'string' }, details: { type: 'array', items: {} } },
    required: ['code', 'message'],
  },
  Error: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  LegacyError: {
    type: 'object',
    properties: { message: { type: 'string' }, result: { type: 'null' }, status: { const: '0' } },
    required: ['message', 'result', 'status'],
  },
  JsonErrorResponse: {
    type: 'object',
    properties: {
      errors: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            title: { type: 'string' },
            source: { type: 'object', properties: { pointer: { type: 'string' } }, required: ['pointer'] },
            detail: { type: 'string' },
          },
          required: ['title', 'source', 'detail'],
        },
      },
    },
    required: ['errors'],
  },
  JsonRpcAnswer: {
    type: 'object',
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'number', 'null'] },
      result: {},
      error: {
        type: 'object',
        properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
        required: ['code', 'message'],
      },
    },
    required: ['jsonrpc', 'id'],
  },
};

function jsonRpcCall(costs: CostSettings): Json {
  return {
    type: 'object',
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'number', 'null'] },
      method: {
        oneOf: RPC_METHODS.map((m) => ({
          const: m,
          description: `\`${rpcRouteName(m)}\`: ${costOf(costs, rpcRouteName(m))} credits`,
        })),
      },
      params: { type: 'array' },
    },
    required: ['jsonrpc', 'method'],
  };
}

/** The chains with a stats service (`chains.<id>.stats`): the others answer its routes 404 (STATS_NOT_CONFIGURED). */
function statsChainId(s: PublicDocSettings): Json {
  const chains = s.chains.filter((c) => c.stats === true);
  return {
    name: 'chain_id',
    in: 'path',
    required: true,
    description:
      chains.length > 0
        ? `The chains with a stats service: ${chains.map((c) => `\`${c.id}\`: ${c.name}`).join(', ')}`
        : 'No chain of this gateway has a stats service: every chain answers 404 (STATS_NOT_CONFIGURED)',
    // With none, no value is served: an empty enum (JSON Schema 2020-12 section 6.1.2 allows it).
    schema: { type: 'string', enum: chains.map((c) => c.id) },
  };
}

/** The document for this configuration. */
export function publicOpenApi(s: PublicDocSettings): Json {
  const { paths, responses } = operations(s);
  return {
    openapi: '3.1.1',
    info: {
      title: 'explorer-gateway',
      version: '1',
      description: [
        'Blockscout explorers behind one gateway: every route is under its chain, `/{chain_id}/...` (the chains this gateway serves are the values of `chain_id`).',
        'Every route needs an API key, as `Authorization: Bearer <key>` or as the query parameter `apikey` (its name in any letter case); the paths tagged `gateway` need none.',
        'Each operation says what one call costs in credits under this configuration (`x-credits`; for JSON-RPC `x-credits-per-method`), its route name as `costs.routes`, usage rows and metrics name it (`x-route-name`), and how long its answers are kept (`x-cache-ttl-seconds`). `GET /api/json/config` lists the same costs.',
        'Every GET also answers HEAD, without a body. A CORS preflight is answered on any path.',
      ].join('\n\n'),
    },
    tags: [
      { name: 'gateway', description: "The gateway's own paths, without a key" },
      { name: 'json-rpc', description: 'Ethereum JSON-RPC, the methods the explorer serves' },
      { name: 'legacy', description: 'The Etherscan-style API, the chain in the path or in `chainid`' },
    ],
    // Relative to where the document is served (OpenAPI 3.1.1 section 4.8.5): the gateway's own
    // origin, whatever host or port clients reach it by; the gateway is not told its public URL.
    servers: [{ url: '/', description: 'This gateway' }],
    security: [{ bearer: [] }, { apikey: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a Bearer token' },
        apikey: {
          type: 'apiKey',
          in: 'query',
          name: 'apikey',
          description: 'The API key as a query parameter (`apiKey`, `APIKEY`: any letter case)',
        },
      },
      parameters: {
        chain_id: {
          name: 'chain_id',
          in: 'path',
          required: true,
          description: s.chains.map((c) => `\`${c.id}\`: ${c.name}`).join(', '),
          schema: { type: 'string', ...(s.chains.length > 0 ? { enum: s.chains.map((c) => c.id) } : {}) },
        },
        stats_chain_id: statsChainId(s),
      },
      headers: Object.fromEntries(Object.entries(HEADERS).map(([h, { description, type }]) => [h, { description, schema: { type } }])),
      responses: {
        ...ANSWERS,
        ...responses,
        ServiceValidationFailed: {
          description: "A parameter or the body is not what the service's route takes: google.rpc.Status, code 3 (INVALID_ARGUMENT)",
          headers: { 'x-request-id': headerRef('x-request-id') },
          content: { 'application/json': { schema: schemaRef('RpcStatus') } },
        },
        ValidationFailed: {
          description: 'A path or query parameter is not what the route declares: one entry per bad parameter',
          headers: { 'x-request-id': headerRef('x-request-id') },
          content: { 'application/json': { schema: schemaRef('JsonErrorResponse') } },
        },
      },
      schemas: { ...SCHEMAS, JsonRpcCall: jsonRpcCall(s.costs) },
    },
  };
}
