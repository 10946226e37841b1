// Webhooks (issue 25, item 6), end to end through the real gateway, its admin API and a receiver on
// loopback, on the embedded store (SQLite), Redis and PostgreSQL: a receiver that fails three times
// then answers gets each credit event exactly once, signed as Standard Webhooks specifies (checked
// with the `standardwebhooks` package a receiver would use), after the back-off the gateway's clock
// is moved through; a threshold crossed by many requests is one event; key events; configured
// webhooks are read-only; deliveries are listed and sent again.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { closedPort, DEMO_KEY } from '../support/gateway.js';
import { POSTGRES_URL, testSchemas } from '../support/postgres.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { storeWorlds } from '../support/store-worlds.js';
import { until } from '../support/wait.js';
import { startWebhookReceiver, type Received, type WebhookReceiver } from '../support/webhook-receiver.js';

const STATS = '/1/api/v2/stats';
const CONFIG_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

const worlds = storeWorlds('webhooks');

interface Delivery {
  id: string;
  eventId: string;
  type: string;
  webhook: string;
  keyId: string | null;
  status: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  event: { type: string; data: Record<string, unknown> };
}

let receiver: WebhookReceiver;
let configReceiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  configReceiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await configReceiver.close();
});

/** The event a received request carries, after checking its signature as a receiver does. */
function verified(r: Received, secret: string): { id: string; type: string; data: Record<string, unknown> } {
  const headers = {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(r.body, headers) as { id: string; type: string; data: Record<string, unknown> };
}

describe.each(['sqlite', 'redis', 'postgres'] as const)('webhooks (%s store)', (kind) => {
  const w = worlds.world(kind, {
    plans: { free: { rps: 1000, credits: 1_000_000, period: 'daily' }, small: { rps: 1000, credits: 100, period: 'daily' } },
    keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
    webhooks: [{ name: 'ops', url: 'http://127.0.0.1:9/never', events: ['key.revoked'], secret: CONFIG_SECRET }],
    // The receivers are on loopback (issue 42, item 8).
    security: { allowPrivateWebhooks: true },
  });
  const { admin, clock } = w;
  let serial = 0;
  const deliveries = async (query: string) => (await admin.get<{ items: Delivery[] }>(`/webhooks/deliveries?${query}`)).body.items;
  const newKey = async (plan = 'small', body: Record<string, unknown> = {}) => {
    const res = await admin.post<{ id: string; key: string }>('/keys', { name: `wh-${kind}-${serial++}`, plan, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const use = (secret: string) => w.gw().get(STATS, { key: null, headers: { authorization: `Bearer ${secret}` } });

  it('tells a receiver that fails 3 times then answers each credit event once, signed, after the back-off', async () => {
    const hook = await admin.post<{ id: string; secret: string }>('/webhooks', { url: receiver.url, events: ['credits.*'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    expect(hook.body.secret).toMatch(/^whsec_/);
    const key = await newKey();
    receiver.failNext(3);
    const before = receiver.received.length;

    // 100 credits at 20 a request: 80 % spent after the 4th; one event however many requests see it.
    const remaining: string[] = [];
    for (let i = 0; i < 4; i++) remaining.push((await use(key.key)).headers.get('x-credits-remaining')!);
    expect(remaining).toEqual(['80', '60', '40', '20']);
    await until(() => receiver.received.length >= before + 1, 'the first attempt');
    const ofKey = `key=${key.id}&webhook=${hook.body.id}`;
    // Each retry is due after the back-off (5 s, 30 s, 2 min): the gateway's clock is moved through it.
    for (const [attempt, wait] of [
      [2, 5_000],
      [3, 30_000],
      [4, 120_000],
    ] as const) {
      const [d] = await until(
        async () => {
          const list = await deliveries(ofKey);
          return list[0]?.attempts === attempt - 1 && list[0].status === 'pending' && list;
        },
        `attempt ${attempt - 1} recorded`,
      );
      expect(d!.lastStatus, `attempt ${attempt - 1}: ${d!.lastError ?? ''}`).toBe(503);
      clock.now += wait;
      await until(() => receiver.received.length >= before + attempt, `attempt ${attempt}`);
    }
    const [done] = await until(async () => {
      const list = await deliveries(ofKey);
      return list[0]?.status === 'delivered' && list;
    }, 'the delivery recorded as delivered');
    expect(done).toMatchObject({ type: 'credits.threshold', attempts: 4, lastStatus: 200, lastError: null, keyId: key.id });

    const attempts = receiver.received.slice(before);
    expect(attempts.map((r) => r.status)).toEqual([503, 503, 503, 200]);
    // The same message each time (a receiver deduplicates by webhook-id), each signed anew.
    expect(new Set(attempts.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of attempts) {
      const event = verified(r, hook.body.secret);
      expect(event.type).toBe('credits.threshold');
      expect(event.data).toMatchObject({ threshold: 80, credits: 100, spent: 80, remaining: 20, key: { id: key.id, plan: 'small' } });
    }
    // A wrong secret does not verify.
    expect(() => verified(attempts[3]!, `whsec_${Buffer.alloc(32, 1).toString('base64')}`)).toThrow();

    // The 5th request spends the rest (100 %), the 6th and 7th are refused (exhausted: told once).
    expect((await use(key.key)).status).toBe(200);
    expect((await use(key.key)).status).toBe(402);
    expect((await use(key.key)).status).toBe(402);
    const told = await until(async () => {
      const list = await deliveries(ofKey);
      return list.length === 3 && list.every((d) => d.status === 'delivered') && list;
    }, 'the 100 % threshold and the exhaustion delivered');
    expect(told.map((d) => [d.type, d.event.data.threshold ?? null]).sort()).toEqual([
      ['credits.exhausted', null],
      ['credits.threshold', 100],
      ['credits.threshold', 80],
    ]);
    // Once per event at the receiver: no event id answered 200 twice.
    const answered = receiver.received
      .slice(before)
      .filter((r) => r.status === 200)
      .map((r) => verified(r, hook.body.secret).id);
    expect(answered.length).toBe(3);
    expect(new Set(answered).size).toBe(3);
    await admin.delete(`/webhooks/${hook.body.id}`);
  });

  it('tells key.created, key.expiring and key.revoked, and lists and sends again a delivery', async () => {
    const hook = await admin.post<{ id: string; secret: string }>('/webhooks', { url: receiver.url, events: ['key.*'] });
    expect(hook.status).toBe(201);
    const expiresAt = new Date(clock.now + 3 * 86_400_000).toISOString();
    const key = await newKey('small', { expiresAt });
    expect((await admin.delete(`/keys/${key.id}`)).status).toBe(200);
    const list = await until(async () => {
      const l = await deliveries(`key=${key.id}&webhook=${hook.body.id}&status=delivered`);
      return l.length === 3 && l;
    }, 'the three key events delivered').catch(async (err: unknown) => {
      // Say what the attempts met (their lastError) rather than only that the wait ran out.
      const all = await deliveries(`key=${key.id}&webhook=${hook.body.id}`);
      throw new Error(`${(err as Error).message}: ${JSON.stringify(all.map((d) => [d.type, d.status, d.lastStatus, d.lastError]))}`);
    });
    expect(list.map((d) => d.type).sort()).toEqual(['key.created', 'key.expiring', 'key.revoked']);
    const expiring = list.find((d) => d.type === 'key.expiring')!;
    expect(expiring.event.data).toMatchObject({ notice: '7d', key: { id: key.id } });
    const created = list.find((d) => d.type === 'key.created')!;
    expect(created.event.data).toMatchObject({ actor: 'admin', key: { id: key.id, plan: 'small' } });

    // Sent again on demand, with the same webhook-id.
    const before = receiver.received.length;
    const again = await admin.post<Delivery>(`/webhooks/deliveries/${encodeURIComponent(created.id)}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('pending');
    await until(() => receiver.received.length > before, 'the delivery sent again');
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(created.eventId);
    expect(verified(receiver.received.at(-1)!, hook.body.secret).type).toBe('key.created');

    // The configured webhook subscribed to key.revoked too; its receiver is down: pending, retried.
    const ops = await until(async () => {
      const l = await deliveries(`key=${key.id}&webhook=ops`);
      return l.length === 1 && l[0]!.attempts >= 1 && l;
    }, 'the configured webhook tried');
    expect(ops[0]).toMatchObject({ type: 'key.revoked', status: 'pending', lastStatus: null });
    expect(ops[0]!.lastError).toBeTruthy();
    await admin.delete(`/webhooks/${hook.body.id}`);
  });

  it('lists configured webhooks read-only, refuses bad input with 4xx, and never shows a secret after creation', async () => {
    const list = await admin.get<{ items: Record<string, unknown>[] }>('/webhooks');
    expect(list.status).toBe(200);
    const ops = list.body.items.find((h) => h.id === 'ops');
    expect(ops).toMatchObject({ source: 'config', events: ['key.revoked'], enabled: true });
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    expect((await admin.patch('/webhooks/ops', { enabled: false })).status).toBe(409);
    expect((await admin.delete('/webhooks/ops')).status).toBe(409);
    expect((await admin.get('/webhooks/wh_nonesuch')).status).toBe(404);
    expect((await admin.post('/webhooks', { url: 'ftp://x', events: ['key.*'] })).status).toBe(422);
    expect((await admin.post('/webhooks', { url: receiver.url, events: ['credits.everything'] })).status).toBe(422);
    expect((await admin.post('/webhooks', { url: receiver.url, events: ['*'], secret: 'whsec_short' })).status).toBe(422);
    expect((await admin.get('/webhooks/deliveries?limit=0')).status).toBe(400);
    expect((await admin.get('/webhooks/deliveries/nonesuch')).status).toBe(404);

    const made = await admin.post<{ id: string; secret: string }>('/webhooks', { url: receiver.url, events: ['*'], secret: CONFIG_SECRET });
    expect(made.body.secret).toBe(CONFIG_SECRET);
    const shown = await admin.get<Record<string, unknown>>(`/webhooks/${made.body.id}`);
    expect(shown.body).not.toHaveProperty('secret');
    const paused = await admin.patch<Record<string, unknown>>(`/webhooks/${made.body.id}`, { enabled: false, description: 'billing' });
    expect(paused.body).toMatchObject({ enabled: false, description: 'billing', source: 'runtime' });
    const audit = await admin.get<{ items: { keyId: string; action: string; after: unknown }[] }>(
      `/audit?key=${encodeURIComponent(`webhook:${made.body.id}`)}`,
    );
    expect(audit.body.items.map((e) => e.action)).toEqual(['create', 'update']);
    expect(JSON.stringify(audit.body)).not.toContain('whsec_');
    expect((await admin.delete(`/webhooks/${made.body.id}`)).status).toBe(200);
    expect((await admin.get(`/webhooks/${made.body.id}`)).status).toBe(404);
  });
});

// Two real gateway processes sharing the records and the counters (Redis; then PostgreSQL for the
// records beside Redis for the counters): both see an account's thresholds crossed by its two
// keys, one used on each process, and the receiver is told each event once.
describe.each(['redis', 'postgres'] as const)('two gateway processes (%s records store)', (kind) => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  let adminPort = 0;
  const prefix = testPrefix(`webhooks-multi-${kind}`);
  const schemas = testSchemas(`webhooks_multi_${kind}`);
  const redis = connect();
  beforeAll(async () => {
    const schema = schemas.fresh();
    const config = (port: number) => ({
      chains: { '1': { name: 'Ethereum', upstreams: [worlds.explorer().url] } },
      plans: { small: { rps: 1000, credits: 1_000 } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port },
      log: { level: 'warn', requests: false },
      redis: { url: REDIS_URL, keyPrefix: prefix, volatile: true },
      // The receiver is on loopback (issue 42, item 8).
      security: { allowPrivateWebhooks: true },
      ...(kind === 'postgres' ? { storage: { url: POSTGRES_URL, schema } } : {}),
    });
    adminPort = await closedPort();
    a = await startGatewayProcess(config(adminPort));
    b = await startGatewayProcess(config(await closedPort()));
  }, 30_000);
  afterAll(async () => {
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await schemas.dropAll();
  });

  it('an account spent from both processes: each threshold and the exhaustion told once', async () => {
    const admin = adminClient(() => `http://127.0.0.1:${adminPort}/admin/v1`);
    const hook = (await admin.post<{ id: string; secret: string }>('/webhooks', { url: receiver.url, events: ['credits.*'] })).body;
    const acct = (await admin.post<{ id: string }>('/accounts', { name: 'shared', plan: 'small' })).body;
    const one = (await admin.post<{ id: string; key: string }>('/keys', { name: 'one', account: acct.id })).body;
    const two = (await admin.post<{ id: string; key: string }>('/keys', { name: 'two', account: acct.id })).body;
    const get = (g: GatewayProcess, secret: string) => fetch(g.url + STATS, { headers: { authorization: `Bearer ${secret}` } });
    await until(async () => (await get(b, two.key)).status === 200, 'B to know the account and its keys');
    const before = receiver.received.length;
    // 1,000 credits at 20 a request, the two keys at once on the two processes, until refused.
    const statuses: number[] = [];
    await Promise.all(
      [
        [a, one.key],
        [b, two.key],
      ].map(async ([g, key]) => {
        for (let i = 0; i < 40; i++) statuses.push((await get(g as GatewayProcess, key as string)).status);
      }),
    );
    expect(statuses.filter((s) => s === 200).length).toBe(49);
    const ok = () => receiver.received.slice(before).filter((r) => r.status === 200);
    await until(() => ok().length >= 3, 'three events delivered', 20_000);
    // One attempt each: neither process sent what the other had claimed.
    const list = await until(async () => {
      const l = (await admin.get<{ items: Delivery[] }>(`/webhooks/deliveries?webhook=${hook.id}`)).body.items;
      return l.length === 3 && l.every((d) => d.status === 'delivered') && l;
    }, 'three deliveries recorded');
    expect(list.map((d) => d.attempts)).toEqual([1, 1, 1]);
    const events = ok().map((r) => verified(r, hook.secret));
    expect(events.map((e) => `${e.type}:${typeof e.data.threshold === 'number' ? e.data.threshold : ''}`).sort()).toEqual([
      'credits.exhausted:',
      'credits.threshold:100',
      'credits.threshold:80',
    ]);
    expect(events.every((e) => (e.data.key as { account: string }).account === acct.id)).toBe(true);
  }, 60_000);
});
