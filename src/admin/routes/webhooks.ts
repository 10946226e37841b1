// /admin/v1/webhooks and its deliveries (issue 25, item 6). Each call parses with its schemas in
// the table (surface.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actor, type Send } from '../context.js';
import { ADMIN_ROUTES as R, at } from '../surface.js';
import { parseBody, parseQuery } from '../validate.js';
import type { WebhookAdmin } from '../webhooks.js';

type WithId = { Params: { id: string } };

/** What a receiver answered is shown to write tokens only (admin/webhooks.ts). */
const answers = (request: FastifyRequest): boolean => request.adminToken?.scope === 'write';

export function registerWebhookRoutes(api: FastifyInstance, hooks: WebhookAdmin, send: Send): void {
  api.route({ ...at('webhooks'), handler: async (_request, reply) => send(reply, R.webhooks.answer.status, await hooks.list()) });
  api.route({
    ...at('createWebhook'),
    handler: async (request, reply) =>
      send(reply, R.createWebhook.answer.status, await hooks.create(parseBody(R.createWebhook.body, request.body), actor(request))),
  });
  api.route({
    ...at('deliveries'),
    handler: async (request, reply) =>
      send(reply, R.deliveries.answer.status, await hooks.deliveries(parseQuery(R.deliveries.query, request.query), answers(request))),
  });
  api.route<WithId>({
    ...at('showDelivery'),
    handler: async (request, reply) => send(reply, R.showDelivery.answer.status, await hooks.delivery(request.params.id, answers(request))),
  });
  api.route<WithId>({
    ...at('redeliver'),
    handler: async (request, reply) => send(reply, R.redeliver.answer.status, await hooks.redeliver(request.params.id, actor(request))),
  });
  api.route<WithId>({
    ...at('showWebhook'),
    handler: async (request, reply) => send(reply, R.showWebhook.answer.status, await hooks.show(request.params.id)),
  });
  api.route<WithId>({
    ...at('updateWebhook'),
    handler: async (request, reply) => {
      // The webhook first: an unknown or configured one is a 404 or 409 whatever the body holds.
      await hooks.writable(request.params.id);
      return send(
        reply,
        R.updateWebhook.answer.status,
        await hooks.update(request.params.id, parseBody(R.updateWebhook.body, request.body), actor(request)),
      );
    },
  });
  api.route<WithId>({
    ...at('deleteWebhook'),
    handler: async (request, reply) => send(reply, R.deleteWebhook.answer.status, await hooks.delete(request.params.id, actor(request))),
  });
}
