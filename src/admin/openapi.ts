// The admin API's OpenAPI 3.1 document (GET /admin/v1/openapi.json), made from the call table
// (surface.ts): every call there is an operation here, with the JSON Schema zod makes of the very
// schemas the routes validate with (z.toJSONSchema, JSON Schema 2020-12, the dialect of OpenAPI
// 3.1), the answer's schema, and its refusals with their codes (errors.ts). Nothing is written
// twice: a call, a field or a code added there is in the document.
import { z } from 'zod';
import { ADMIN_ERRORS, type AdminErrorCode } from './errors.js';
import { auditEntryAnswer, errorAnswer, keyAnswer, usageItemAnswer } from './schemas.js';
import { ADMIN_PREFIX, ADMIN_ROUTES, type AdminCallSpec, type AdminOperation } from './surface.js';

type Json = Record<string, unknown>;

/** Refusals any call that needs the token may get. */
const EVERY_CALL: readonly AdminErrorCode[] = ['TOKEN_REQUIRED', 'INVALID_TOKEN', 'AUTH_LOCKED', 'STORE_UNAVAILABLE', 'INTERNAL'];
/** fastify's own refusals of a body (server.ts setErrorHandler): BAD_REQUEST, with fastify's status. */
const BODY_STATUSES = [400, 413, 415] as const;

const SCHEMAS = '#/components/schemas/';
const ref = (id: string) => ({ $ref: `${SCHEMAS}${id}` });

/** Schemas shared by several answers, under names of their own. */
const SHARED: readonly [z.ZodType, string][] = [
  [keyAnswer, 'Key'],
  [auditEntryAnswer, 'AuditEntry'],
  [usageItemAnswer, 'UsageRow'],
  [errorAnswer, 'Error'],
];

const pascal = (op: string) => op[0]!.toUpperCase() + op.slice(1);

/** `/keys/:id` as OpenAPI writes it, under the prefix: `/admin/v1/keys/{id}`. */
export const openApiPath = (path: string) => ADMIN_PREFIX + path.replace(/\/:(\w+)/g, '/{$1}');

/** The JSON Schema of `schema` without what a schema inside an OpenAPI document does not carry. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'throw' }) as Json;
  return rest;
}

/** Every schema of `registry` as components, each `$ref` pointing at the others. */
function components(registry: z.core.$ZodRegistry<{ id: string }>, io: 'input' | 'output'): Record<string, Json> {
  const { schemas } = z.toJSONSchema(registry, { io, unrepresentable: 'throw', uri: (id) => `${SCHEMAS}${id}` });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, s]) => {
      const { $schema: _s, $id: _i, ...rest } = s as Json;
      return [id, rest];
    }),
  );
}

/** An object schema's properties as OpenAPI parameters in `where`. */
function parameters(schema: z.ZodObject | undefined, where: 'path' | 'query'): Json[] {
  if (schema === undefined) return [];
  const { properties = {}, required = [] } = jsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(properties).map(([name, s]) => {
    const { description, ...rest } = s;
    return {
      name,
      in: where,
      required: where === 'path' || required.includes(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}

/** The statuses and codes a call may be refused with. */
function refusals(spec: AdminCallSpec): Map<number, AdminErrorCode[]> {
  const codes = [
    ...(spec.open ? ['INTERNAL' as const] : EVERY_CALL),
    ...(spec.scope === 'write' ? ['READ_ONLY_TOKEN' as const] : []),
    ...spec.refusals,
  ];
  const byStatus = new Map<number, AdminErrorCode[]>();
  const add = (status: number, code: AdminErrorCode) => byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  for (const code of codes) add(ADMIN_ERRORS[code].status, code);
  if (spec.method !== 'GET') for (const status of BODY_STATUSES) add(status, 'BAD_REQUEST');
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

const HEADERS: Readonly<Record<number, readonly string[]>> = { 401: ['WWW-Authenticate'], 429: ['Retry-After'], 503: ['Retry-After'] };

function operation(op: AdminOperation, spec: AdminCallSpec, answerId: string, bodyId: string | undefined): Json {
  const pathNames = [...spec.path.matchAll(/\/:(\w+)/g)].map((m) => m[1]!);
  const pathParams = parameters(spec.params, 'path');
  const declared = pathParams.map((p) => String(p.name));
  if (pathNames.join() !== declared.join()) {
    throw new Error(`admin call ${op}: path ${spec.path} has parameters [${pathNames.join()}], its schema [${declared.join()}]`);
  }
  const responses: Json = {
    [spec.answer.status]: {
      description: spec.answer.description,
      content: {
        'application/json': { schema: ref(answerId) },
        ...(spec.answer.csv ? { 'text/csv': { schema: { type: 'string', description: 'with `format=csv`' } } } : {}),
      },
    },
  };
  for (const [status, codes] of refusals(spec)) {
    responses[status] = {
      description: codes.map((c) => `${c}: ${ADMIN_ERRORS[c].what}`).join('; '),
      ...(HEADERS[status] ? { headers: Object.fromEntries(HEADERS[status].map((h) => [h, { $ref: `#/components/headers/${h}` }])) } : {}),
      content: { 'application/json': { schema: ref('Error') } },
      'x-error-codes': codes,
    };
  }
  return {
    operationId: op,
    summary: spec.summary,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    tags: [spec.tag],
    ...(spec.open ? { security: [] } : {}),
    ...(pathParams.length + (spec.query ? 1 : 0) > 0 ? { parameters: [...pathParams, ...parameters(spec.query, 'query')] } : {}),
    ...(spec.body && bodyId !== undefined
      ? { requestBody: { required: !spec.body.safeParse({}).success, content: { 'application/json': { schema: ref(bodyId) } } } }
      : {}),
    responses,
  };
}

/** The document, from ADMIN_ROUTES. */
export function adminOpenApi(): Json {
  const answers = z.registry<{ id: string }>();
  const bodies = z.registry<{ id: string }>();
  for (const [schema, id] of SHARED) answers.add(schema, { id });
  const ids = new Map<AdminOperation, { answer: string; body?: string }>();
  for (const [op, spec] of Object.entries(ADMIN_ROUTES) as [AdminOperation, AdminCallSpec][]) {
    const schema = spec.answer.schema;
    if (!answers.has(schema)) answers.add(schema, { id: `${pascal(op)}Answer` });
    const body = spec.body === undefined ? undefined : `${pascal(op)}Body`;
    if (spec.body !== undefined) bodies.add(spec.body, { id: body! });
    ids.set(op, { answer: answers.get(schema)!.id, ...(body === undefined ? {} : { body }) });
  }
  const schemas = { ...components(answers, 'output') };
  for (const [id, s] of Object.entries(components(bodies, 'input'))) {
    if (id in schemas) throw new Error(`admin OpenAPI: two schemas named ${id}`);
    schemas[id] = s;
  }

  const paths: Record<string, Json> = {};
  for (const [op, spec] of Object.entries(ADMIN_ROUTES) as [AdminOperation, AdminCallSpec][]) {
    const path = openApiPath(spec.path);
    const item = (paths[path] ??= {});
    const method = spec.method.toLowerCase();
    if (method in item) throw new Error(`admin OpenAPI: ${spec.method} ${path} twice`);
    item[method] = operation(op, spec, ids.get(op)!.answer, ids.get(op)!.body);
  }

  return {
    openapi: '3.1.1',
    info: {
      title: 'explorer-gateway admin API',
      version: ADMIN_PREFIX.split('/').pop()!,
      description: [
        'Keys, bought credits, usage and the audit trail of an explorer-gateway, on its admin listener (127.0.0.1:9091 by default).',
        'Every call but this document needs `Authorization: Bearer <token>`, one of `admin.token` and `admin.tokens`; an address that sends ten wrong or missing tokens within a minute is refused (429, AUTH_LOCKED) for five minutes, while a right token is always served. A token of scope `read` may make the GET calls and keys:verify; any other call answers 403 (READ_ONLY_TOKEN).',
        'Bodies are JSON; an empty body sent as `application/json` is no body. A refusal is `{"message": ...}` (with `errors` or `plans` for some codes); its code is named in each response (`x-error-codes`), not in the body. Every GET also answers HEAD.',
        "Every write is one audit entry and one log line, both naming the token's name as its actor.",
      ].join('\n\n'),
    },
    tags: [
      { name: 'keys', description: 'Run-time keys; configured keys are listed, shown and topped up, but read-only' },
      { name: 'plans', description: "The configuration's plans (read-only here) and plans made at run time" },
      { name: 'accounts', description: 'Customers whose keys share a plan, its limits, credits and rate' },
      { name: 'webhooks', description: 'Receivers of events (credits, keys), and the deliveries to them' },
      { name: 'records', description: 'What the gateway has on record: usage, audit' },
      { name: 'document', description: 'This document' },
    ],
    // Relative to where the document is served (OpenAPI 3.1.1 section 4.8.5): the admin
    // listener's origin; the paths carry the `/admin/v1` prefix.
    servers: [{ url: '/', description: 'This admin listener' }],
    security: [{ adminToken: [] }],
    paths,
    components: {
      securitySchemes: {
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: '`admin.token`, or a token of `admin.tokens`, compared in constant time.',
        },
      },
      headers: {
        'WWW-Authenticate': { description: '`Bearer`', schema: { type: 'string' } },
        'Retry-After': { description: 'seconds to wait before trying again', schema: { type: 'integer' } },
      },
      schemas,
    },
  };
}
