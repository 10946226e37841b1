// /admin/v1/keys: keys created, listed, shown, changed, topped up, rolled and revoked at run time.
// Configured (YAML) keys are listed and shown, but read-only here: the file is their source.
import type { FastifyInstance } from 'fastify';
import type { Send } from '../context.js';
import { createKeyBody, creditsBody, listKeysQuery, rollBody, updateKeyBody } from '../schemas.js';
import type { AdminService } from '../service.js';
import { at } from '../surface.js';
import { parseBody, parseQuery } from '../validate.js';

type WithId = { Params: { id: string } };

export function registerKeyRoutes(api: FastifyInstance, service: AdminService, send: Send): void {
  api.route({
    ...at('createKey'),
    handler: async (request, reply) => {
      const { view, secret } = await service.createKey(parseBody(createKeyBody, request.body));
      // The secret is in this answer only: it is stored as its digest.
      return send(reply, 201, { ...view, key: secret });
    },
  });
  api.route({
    ...at('listKeys'),
    handler: (request, reply) => send(reply, 200, { items: service.listKeys(parseQuery(listKeysQuery, request.query)) }),
  });
  api.route<WithId>({
    ...at('showKey'),
    handler: async (request, reply) => send(reply, 200, await service.showKey(request.params.id)),
  });
  api.route<WithId>({
    ...at('updateKey'),
    handler: async (request, reply) => {
      // The key first: an unknown or configured key is a 404 or 409 whatever the body holds.
      const id = service.checkWritable(request.params.id);
      return send(reply, 200, await service.updateKey(id, parseBody(updateKeyBody, request.body)));
    },
  });
  api.route<WithId>({
    ...at('addCredits'),
    handler: async (request, reply) => {
      const id = service.checkKnown(request.params.id);
      return send(reply, 200, await service.addCredits(id, parseBody(creditsBody, request.body).amount));
    },
  });
  api.route<WithId>({
    ...at('rollKey'),
    handler: async (request, reply) => {
      const id = service.checkWritable(request.params.id);
      const { graceSeconds = 0 } = parseBody(rollBody, request.body);
      const { view, secret, previousValidUntil } = await service.rollKey(id, graceSeconds);
      return send(reply, 200, { ...view, key: secret, previousValidUntil });
    },
  });
  api.route<WithId>({
    ...at('revokeKey'),
    handler: async (request, reply) => send(reply, 200, await service.revokeKey(request.params.id)),
  });
}
