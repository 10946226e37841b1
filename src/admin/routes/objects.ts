// /admin/v1/plans and /admin/v1/accounts (issue 25, items 1 and 2): plans made and changed at
// run time beside the configuration's (read-only here), and accounts whose keys share a plan,
// its limits, credits and rate. Each call parses with its schemas in the table (surface.ts).
import type { FastifyInstance } from 'fastify';
import { actor, type Send } from '../context.js';
import type { AdminService } from '../service.js';
import { ADMIN_ROUTES as R, at } from '../surface.js';
import { parseBody, parseQuery } from '../validate.js';

type WithName = { Params: { name: string } };
type WithId = { Params: { id: string } };

export function registerObjectRoutes(api: FastifyInstance, service: AdminService, send: Send): void {
  api.route({ ...at('plans'), handler: (_request, reply) => send(reply, R.plans.answer.status, { items: service.plans() }) });
  api.route<WithName>({
    ...at('showPlan'),
    handler: (request, reply) => send(reply, R.showPlan.answer.status, service.showPlan(request.params.name)),
  });
  api.route({
    ...at('createPlan'),
    handler: async (request, reply) =>
      send(reply, R.createPlan.answer.status, await service.createPlan(parseBody(R.createPlan.body, request.body), actor(request))),
  });
  api.route<WithName>({
    ...at('updatePlan'),
    handler: async (request, reply) => {
      // The plan first: an unknown or configured plan is a 404 or 409 whatever the body holds.
      const name = service.checkPlanWritable(request.params.name);
      return send(
        reply,
        R.updatePlan.answer.status,
        await service.updatePlan(name, parseBody(R.updatePlan.body, request.body), actor(request)),
      );
    },
  });
  api.route<WithName>({
    ...at('deletePlan'),
    handler: async (request, reply) =>
      send(reply, R.deletePlan.answer.status, await service.deletePlan(request.params.name, actor(request))),
  });

  api.route({
    ...at('listAccounts'),
    handler: (request, reply) =>
      send(reply, R.listAccounts.answer.status, service.listAccounts(parseQuery(R.listAccounts.query, request.query))),
  });
  api.route<WithId>({
    ...at('showAccount'),
    handler: async (request, reply) => send(reply, R.showAccount.answer.status, await service.showAccount(request.params.id)),
  });
  api.route({
    ...at('createAccount'),
    handler: async (request, reply) =>
      send(
        reply,
        R.createAccount.answer.status,
        await service.createAccount(parseBody(R.createAccount.body, request.body), actor(request)),
      ),
  });
  api.route<WithId>({
    ...at('updateAccount'),
    handler: async (request, reply) =>
      send(
        reply,
        R.updateAccount.answer.status,
        await service.updateAccount(request.params.id, parseBody(R.updateAccount.body, request.body), actor(request)),
      ),
  });
  api.route<WithId>({
    ...at('deleteAccount'),
    handler: async (request, reply) =>
      send(reply, R.deleteAccount.answer.status, await service.deleteAccount(request.params.id, actor(request))),
  });
}
