// What the answers fastify writes itself share with the pipeline's (request/send.ts): the JSON
// content type, and the CORS lines of http/cors.ts on a fastify reply (any object with header()).

export const JSON_TYPE = 'application/json; charset=utf-8';

/** CORS lines (http/cors.ts) on an answer fastify writes itself: discovery, the public /healthz and /readyz. */
export function corsOnReply(reply: { header(name: string, value: string): unknown }, cors: readonly string[] | undefined): void {
  if (cors !== undefined) for (let i = 0; i < cors.length; i += 2) reply.header(cors[i]!, cors[i + 1]!);
}
