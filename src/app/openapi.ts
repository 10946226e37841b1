// GET /api/json/openapi, without a key, beside /api/json/config (discovery.ts): the gateway's own
// OpenAPI 3.1 document (routes/openapi.ts), for this configuration's chains, costs and cache
// lifetimes; worked out once per configuration. A client needs it before it has a key, and it
// says nothing /api/json/config does not (no upstream, no key). It starts with /api, which no
// chain id can be (routes/resolve.ts RESERVED_CHAIN_IDS), and fastify's router serves it before
// the pipeline's catch-all, as it does /api/json/config and /healthz.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { GatewayState } from '../request/state.js';
import { publicOpenApi, type PlainPath } from '../routes/openapi.js';
import { DISCOVERY_PATH, serveStateJson } from './discovery.js';

export const OPENAPI_PATH = '/api/json/openapi';

const schema = (s: z.ZodType) => {
  const { $schema: _s, ...rest } = z.toJSONSchema(s, { io: 'output' });
  return rest;
};

/** The paths the public listener serves beside the route table, all without a key. */
export const PLAIN_PATHS: readonly PlainPath[] = [
  {
    path: '/healthz',
    operationId: 'healthz',
    summary: 'The process answers',
    answers: { 200: { description: 'Alive', schema: schema(z.strictObject({ status: z.literal('ok') })) } },
  },
  {
    path: '/readyz',
    operationId: 'readyz',
    summary: 'The gateway can serve',
    description: 'Bare here; the checks are on the operations listener (`metrics.port`).',
    answers: {
      200: { description: 'Ready', schema: schema(z.strictObject({ status: z.literal('ready') })) },
      503: { description: 'Not ready', schema: schema(z.strictObject({ status: z.literal('not ready') })) },
    },
  },
  {
    path: DISCOVERY_PATH,
    operationId: 'config',
    summary: 'The chains served and what every route costs',
    answers: {
      200: {
        description: 'Chains (never an upstream URL or key) and costs',
        schema: schema(
          z.strictObject({
            chains: z.array(z.strictObject({ id: z.string(), name: z.string() })),
            costs: z.strictObject({ default: z.number().int(), routes: z.record(z.string(), z.number().int()) }),
          }),
        ),
      },
    },
  },
  {
    path: OPENAPI_PATH,
    operationId: 'openapi',
    summary: 'This document',
    answers: {
      200: {
        description: 'The OpenAPI 3.1 document of this gateway, for its configuration',
        schema: schema(z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) })),
      },
    },
  },
];

export function openApiBody(state: GatewayState): string {
  const { config } = state;
  return JSON.stringify(
    publicOpenApi({
      chains: [...state.chains.values()].map((c) => ({ id: c.id, name: c.name, stats: state.services.has(`stats:${c.id}`) })),
      costs: config.costs,
      cache: config.cache,
      maxBatch: config.rpc.maxBatch,
      plain: PLAIN_PATHS,
    }),
  );
}

export function registerOpenApi(app: FastifyInstance, current: () => GatewayState): void {
  serveStateJson(app, OPENAPI_PATH, current, openApiBody);
}
