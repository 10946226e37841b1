// GET /api/json/config, without a key (the PRO API serves the same path): what this gateway
// offers, for clients and dashboards. The chains it serves (id and name, never an upstream URL
// or key) and what every route costs; worked out once per configuration.
import type { FastifyInstance } from 'fastify';
import { corsOnReply, JSON_TYPE } from '../http/respond.js';
import type { GatewayState } from '../request/state.js';
import { billedCost } from '../routes/settings.js';
import { ROUTE_NAMES } from '../routes/table.js';

export const DISCOVERY_PATH = '/api/json/config';

export function discoveryBody(state: GatewayState): string {
  const { config } = state;
  const routes: Record<string, number> = {};
  for (const name of ROUTE_NAMES) routes[name] = billedCost(config.costs, name);
  return JSON.stringify({
    chains: [...state.chains.values()].map((c) => ({ id: c.id, name: c.name })),
    costs: { default: config.costs.default, routes },
  });
}

export function registerDiscovery(app: FastifyInstance, current: () => GatewayState): void {
  serveStateJson(app, DISCOVERY_PATH, current, discoveryBody);
}

/**
 * Serves at `path`, without a key and with the CORS lines of the current configuration, a JSON
 * document made from the configuration: once per configuration (a reload makes it again).
 */
export function serveStateJson(
  app: FastifyInstance,
  path: string,
  current: () => GatewayState,
  body: (state: GatewayState) => string,
): void {
  let cached: { state: GatewayState; body: string } | undefined;
  app.get(path, (request, reply) => {
    const state = current();
    if (cached?.state !== state) cached = { state, body: body(state) };
    corsOnReply(reply, state.cors.linesFor(request.headers.origin));
    return reply.header('content-type', JSON_TYPE).send(cached.body);
  });
}
