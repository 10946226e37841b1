// /admin/v1/keys: keys created, listed, shown, changed, topped up, rolled and revoked at run time,
// and a secret verified (keys:verify).
// Configured (YAML) keys are listed and shown, but read-only here: the file is their source. Each
// call parses with its schemas in the table (surface.ts) and answers with its status there.
import type { FastifyInstance } from 'fastify';
import { actor, type Send } from '../context.js';
import type { AdminService } from '../service.js';
import { ADMIN_ROUTES as R, at } from '../surface.js';
import { parseBody, parseQuery } from '../validate.js';

type WithId = { Params: { id: string } };

export function registerKeyRoutes(api: FastifyInstance, service: AdminService, send: Send): void {
  api.route({
    ...at('createKey'),
    handler: async (request, reply) => {
      const { view, secret } = await service.createKey(parseBody(R.createKey.body, request.body), actor(request));
      // The secret is in this answer only: it is stored as its digest.
      return send(reply, R.createKey.answer.status, { ...view, key: secret });
    },
  });
  api.route({
    ...at('listKeys'),
    handler: async (request, reply) =>
      send(reply, R.listKeys.answer.status, await service.listKeys(parseQuery(R.listKeys.query, request.query))),
  });
  api.route<WithId>({
    ...at('showKey'),
    handler: async (request, reply) => send(reply, R.showKey.answer.status, await service.showKey(request.params.id)),
  });
  api.route<WithId>({
    ...at('updateKey'),
    handler: async (request, reply) => {
      // The key first: an unknown or configured key is a 404 or 409 whatever the body holds.
      const id = service.checkWritable(request.params.id);
      return send(reply, R.updateKey.answer.status, await service.updateKey(id, parseBody(R.updateKey.body, request.body), actor(request)));
    },
  });
  api.route<WithId>({
    ...at('addCredits'),
    handler: async (request, reply) => {
      const id = service.checkKnown(request.params.id);
      return send(
        reply,
        R.addCredits.answer.status,
        await service.addCredits(id, parseBody(R.addCredits.body, request.body), actor(request)),
      );
    },
  });
  api.route<WithId>({
    ...at('rollKey'),
    handler: async (request, reply) => {
      const id = service.checkWritable(request.params.id);
      const { graceSeconds = 0 } = parseBody(R.rollKey.body, request.body);
      const { view, secret, previousValidUntil } = await service.rollKey(id, graceSeconds, actor(request));
      return send(reply, R.rollKey.answer.status, { ...view, key: secret, previousValidUntil });
    },
  });
  api.route({
    ...at('verifyKey'),
    handler: async (request, reply) =>
      send(reply, R.verifyKey.answer.status, await service.verifyKey(parseBody(R.verifyKey.body, request.body).key)),
  });
  api.route<WithId>({
    ...at('revokeKey'),
    handler: async (request, reply) => send(reply, R.revokeKey.answer.status, await service.revokeKey(request.params.id, actor(request))),
  });
}
