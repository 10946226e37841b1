// Webhook deliveries when things fail (issue 25, item 6): a gateway killed (SIGKILL) while a
// receiver holds its delivery leaves it to the next gateway on the same store once the lease ends,
// and the receiver gets it again under the same webhook-id; a gateway stopped (SIGTERM) right after
// a threshold is crossed leaves its event in the outbox; the records' PostgreSQL cut while
// thresholds are crossed (the counters are in Redis, so requests are served) keeps the events in
// memory and stores and delivers each once PostgreSQL is back; a receiver that holds every request
// does not stop requests from being answered.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { LEASE_MS } from '../../src/webhooks/delivery.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { closedPort, makeConfig, startGateway } from '../support/gateway.js';
import { POSTGRES_URL, testSchemas } from '../support/postgres.js';
import { startGatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const STATS = '/1/api/v2/stats';
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const KEY = 'faults-key-0123456789abcdef';

let explorer: FixtureExplorer;
let receiver: WebhookReceiver;
const redis = connect();
const prefixes: string[] = [];
const schemas = testSchemas('webhook_faults');
beforeAll(async () => {
  explorer = await startFixtureExplorer();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await explorer.close();
  for (const p of prefixes) await deletePrefix(redis, p);
  redis.disconnect();
  await schemas.dropAll();
});

interface Delivery {
  status: string;
  attempts: number;
  type: string;
  eventId: string;
}

describe('a gateway killed (SIGKILL) while its receiver holds a delivery', () => {
  it('leaves it to the next gateway on the store once the lease ends: sent again under the same webhook-id', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'egw-wh-kill-')), 'gateway.db');
    const adminPort = await closedPort();
    const config = {
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
      plans: { small: { rps: 1000, credits: 100 } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: adminPort },
      log: { level: 'warn', requests: false },
      storage: { path: file },
      webhooks: [{ name: 'crm', url: receiver.url, events: ['key.*'], secret: SECRET }],
      security: { allowPrivateWebhooks: true },
    };
    const first = await startGatewayProcess(config);
    receiver.hang();
    const before = receiver.received.length;
    const admin = adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`);
    const key = (await admin.post<{ id: string }>('/keys', { name: 'crashed', plan: 'small' })).body;
    await until(() => receiver.received.length > before, 'the delivery in flight');
    expect(await first.stop('SIGKILL')).toBe(null);
    receiver.release();

    // The next gateway on the same file, with a clock the test moves: nothing is due until the lease ends.
    const clock = { now: Date.now() };
    const second = await startGateway(makeConfig([explorer.url], { ...config, keys: [], admin: { ...config.admin, port: 0 } } as never), {
      now: () => clock.now,
    });
    try {
      const api = adminClient(() => second.app.gateway.adminUrl()!);
      const listed = async () => (await api.get<{ items: Delivery[] }>(`/webhooks/deliveries?key=${key.id}`)).body.items;
      expect(await listed()).toMatchObject([{ type: 'key.created', status: 'pending', attempts: 1 }]);
      clock.now += LEASE_MS + 1_000;
      const [done] = await until(async () => {
        const l = await listed();
        return l[0]?.status === 'delivered' && l;
      }, 'the delivery sent again after the lease');
      expect(done!.attempts).toBe(2);
      const got = receiver.received.slice(before);
      expect(got.map((r) => r.status)).toEqual([0, 200]);
      expect(got[1]!.headers['webhook-id']).toBe(got[0]!.headers['webhook-id']);
      expect(got[1]!.headers['webhook-id']).toBe(done!.eventId);
      const event = new Webhook(SECRET).verify(got[1]!.body, got[1]!.headers as Record<string, string>) as { type: string };
      expect(event.type).toBe('key.created');
    } finally {
      await second.close();
    }
  }, 60_000);
});

// The whole path through a real signal; whether the stop's own last check or the second's timer
// found the threshold depends on how long the drain took, so test/unit/webhooks.test.ts
// ("stopping") holds the last check itself.
describe('a gateway stopped (SIGTERM) right after a threshold is crossed', () => {
  it('tells it: the event is in the outbox for the next gateway', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'egw-wh-term-')), 'gateway.db');
    const config = {
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
      plans: { small: { rps: 1000, credits: 100 } },
      keys: [{ name: 'yaml-key', key: KEY, plan: 'small' }],
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: await closedPort() },
      log: { level: 'warn', requests: false },
      storage: { path: file },
      // A receiver that is down: what is stored stays pending, to be read below.
      webhooks: [{ name: 'crm', url: 'http://127.0.0.1:9/hooks', events: ['credits.*'], secret: SECRET }],
      security: { allowPrivateWebhooks: true },
    };
    const first = await startGatewayProcess(config);
    for (let i = 0; i < 4; i++) {
      const res = await fetch(first.url + STATS, { headers: { authorization: `Bearer ${KEY}` } });
      expect(res.status).toBe(200);
    }
    expect(await first.stop('SIGTERM')).toBe(0);
    const second = await startGateway(makeConfig([explorer.url], { ...config, admin: { ...config.admin, port: 0 } } as never));
    try {
      const api = adminClient(() => second.app.gateway.adminUrl()!);
      const listed = (
        await api.get<{ items: (Delivery & { event: { data: { threshold: number } } })[] }>('/webhooks/deliveries?webhook=crm')
      ).body.items;
      expect(listed.map((d) => [d.type, d.event.data.threshold])).toEqual([['credits.threshold', 80]]);
    } finally {
      await second.close();
    }
  }, 60_000);
});

describe('the records store (PostgreSQL) cut while thresholds are crossed', () => {
  it('serves the requests, keeps the events, and stores and delivers each once it is back', async () => {
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(POSTGRES_URL).port || 5432));
    const url = new URL(POSTGRES_URL);
    url.port = String(proxy.port);
    const prefix = testPrefix('webhook-faults-pg');
    prefixes.push(prefix);
    const clock = { now: Date.now() };
    const gw = await startGateway(
      makeConfig([explorer.url], {
        plans: { small: { rps: 1000, credits: 100, period: 'daily' } },
        keys: [{ name: 'yaml-key', key: KEY, plan: 'small' }],
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
        redis: { url: REDIS_URL, keyPrefix: prefix },
        storage: { url: url.toString(), schema: schemas.fresh() },
        webhooks: [{ name: 'billing', url: receiver.url, events: ['credits.*'], secret: SECRET }],
        security: { allowPrivateWebhooks: true },
      }),
      { now: () => clock.now },
    );
    try {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      // The schema is made, then PostgreSQL goes away.
      expect((await admin.get('/webhooks/deliveries')).status).toBe(200);
      const before = receiver.received.length;
      await proxy.cut();
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await gw.get(STATS, { key: KEY })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 402, 402]);
      // Nothing can be stored meanwhile: nothing is sent.
      expect(receiver.received.length).toBe(before);
      await proxy.restore();
      const list = await until(
        async () => {
          const res = await admin.get<{ items: Delivery[] }>('/webhooks/deliveries?webhook=billing');
          return (
            res.status === 200 && res.body.items.length === 3 && res.body.items.every((d) => d.status === 'delivered') && res.body.items
          );
        },
        'the three events stored and delivered after PostgreSQL is back',
        30_000,
      );
      expect(list.map((d) => d.type).sort()).toEqual(['credits.exhausted', 'credits.threshold', 'credits.threshold']);
      expect(list.map((d) => d.attempts)).toEqual([1, 1, 1]);
      const got = receiver.received.slice(before);
      expect(got.length).toBe(3);
      expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(3);
    } finally {
      await gw.close();
      await proxy.restore().catch(() => undefined);
    }
  }, 60_000);
});

describe('a receiver that holds every request', () => {
  it('does not keep requests from being answered, and its deliveries stay pending', async () => {
    const clock = { now: Date.now() };
    const gw = await startGateway(
      makeConfig([explorer.url], {
        plans: { small: { rps: 10_000, credits: 100, period: 'daily' } },
        keys: [{ name: 'yaml-key', key: KEY, plan: 'small' }],
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
        webhooks: [{ name: 'stuck', url: receiver.url, events: ['*'], secret: SECRET }],
        security: { allowPrivateWebhooks: true },
      }),
      { now: () => clock.now },
    );
    receiver.hang();
    try {
      const admin = adminClient(() => gw.app.gateway.adminUrl()!);
      const before = receiver.received.length;
      for (let i = 0; i < 5; i++) expect((await gw.get(STATS, { key: KEY })).status).toBe(200);
      await until(() => receiver.received.length >= before + 2, 'both thresholds sent to the receiver that holds them');
      // While the receiver holds both, every request is still answered.
      const statuses = await Promise.all(Array.from({ length: 50 }, () => gw.get(STATS, { key: KEY }).then((r) => r.status)));
      expect(statuses.every((s) => s === 402)).toBe(true);
      const pending = (await admin.get<{ items: Delivery[] }>('/webhooks/deliveries?webhook=stuck&type=credits.threshold')).body.items;
      expect(pending.map((d) => d.status)).toEqual(['pending', 'pending']);
    } finally {
      receiver.release();
      await gw.close();
    }
  }, 60_000);
});
