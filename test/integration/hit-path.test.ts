// What the hot path is bent around: with in-process stores, a cache hit is answered before the
// handler returns, without a promise (request/pipeline.ts). The gateway's own handler is mounted
// in a second, plain fastify app so that a test can see, for each request, whether its answer
// was already written when the handler returned.
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { makeHandler } from '../../src/request/pipeline.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway } from '../support/gateway.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();

/** The gateway's state behind a probe app whose route records whether the answer was written when the handler returned. */
async function probe(redis: boolean) {
  const prefix = testPrefix('hit-path');
  const gw = await startGateway(
    makeConfig([fixture().url], {
      cache: { ttlSeconds: { 'token-balances': 60 } },
      ...(redis ? { redis: { url: REDIS_URL, keyPrefix: prefix } } : {}),
    }),
  );
  const handler = makeHandler(() => gw.app.gateway.state());
  const answeredAtReturn: boolean[] = [];
  const app = Fastify();
  app.decorateRequest('ctx', null);
  app.get('*', (request, reply) => {
    const r = handler(request, reply);
    answeredAtReturn.push(reply.raw.writableEnded);
    return r;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const get = () => fetch(url + BALANCES, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
  const close = async () => {
    await app.close();
    await gw.close();
    // After the gateway closed: its last usage batch and lease settlement are written by then.
    if (redis) {
      const client = connect();
      await deletePrefix(client, prefix);
      client.disconnect();
    }
  };
  return { get, answeredAtReturn, close };
}

describe('the hit path', () => {
  it('answers a cache hit with in-process stores before the handler returns: no promise', async () => {
    const p = await probe(false);
    try {
      const miss = await p.get();
      const hit = await p.get();
      expect([miss.headers.get('x-cache'), hit.headers.get('x-cache')]).toEqual(['MISS', 'HIT']);
      expect(p.answeredAtReturn).toEqual([false, true]);
    } finally {
      await p.close();
    }
  });

  it('answers later when the quota store is remote', async () => {
    const p = await probe(true);
    try {
      await p.get();
      const hit = await p.get();
      expect(hit.headers.get('x-cache')).toBe('HIT');
      expect(p.answeredAtReturn).toEqual([false, false]);
    } finally {
      await p.close();
    }
  });
});
