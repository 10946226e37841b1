// The pure parts of webhooks (issue 25, item 6), and the delivery loop over an in-process outbox
// and a receiver on loopback: signatures a Standard Webhooks library verifies, secrets, what a
// subscription covers, the back-off, and a delivery given up 24 hours after its event.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret, secretKey, signatureHeaders } from '../../src/auth/webhook-signature.js';
import { MemoryOutbox } from '../../src/store/outbox-memory.js';
import { DeliveryWorker, RETRY_DELAYS_MS, RETRY_FOR_MS, retryDelay } from '../../src/webhooks/delivery.js';
import { eventBody, keyEvent, subscribes } from '../../src/webhooks/events.js';
import { WebhookRegistry, type Webhook as Hook } from '../../src/webhooks/registry.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from '../support/wait.js';
import { configSchema } from '../../src/config/schema.js';
import { KeyRing } from '../../src/keys/ring.js';
import { MemoryQuotaStore } from '../../src/quota/memory.js';
import { Webhooks } from '../../src/webhooks/webhooks.js';

describe('signatures', () => {
  it('are what a Standard Webhooks library verifies, and only with the right secret and body', () => {
    const secret = newWebhookSecret();
    const key = secretKey(secret) as Buffer;
    const body = '{"type":"key.created","data":{}}';
    const headers = signatureHeaders(key, 'msg_1', Math.floor(Date.now() / 1000), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ type: 'key.created', data: {} });
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body.replace('created', 'revoked'), headers)).toThrow();
    // A timestamp an hour old is refused by the receiver's library: the timestamp is signed too.
    const old = signatureHeaders(key, 'msg_1', Math.floor(Date.now() / 1000) - 3600, body);
    expect(() => new Webhook(secret).verify(body, old)).toThrow();
  });

  it('take whsec_ secrets of 24 to 64 bytes only', () => {
    expect(secretKey(newWebhookSecret())).toBeInstanceOf(Buffer);
    expect(secretKey('plain-password')).toMatch(/whsec_/);
    expect(secretKey(`whsec_${Buffer.alloc(16).toString('base64')}`)).toMatch(/24 to 64 bytes/);
    expect(secretKey('whsec_not base64!')).toMatch(/base64/);
  });
});

describe('events', () => {
  it('are covered by their type, their family or *', () => {
    expect(subscribes(['credits.*'], 'credits.threshold')).toBe(true);
    expect(subscribes(['credits.*'], 'key.created')).toBe(false);
    expect(subscribes(['key.revoked'], 'key.created')).toBe(false);
    expect(subscribes(['*'], 'key.expiring')).toBe(true);
  });

  it('have the Standard Webhooks payload shape', () => {
    const e = keyEvent('key.created', { id: 'key_a', name: 'a', plan: 'free', account: null }, Date.UTC(2030, 0, 1), 'admin');
    expect(JSON.parse(eventBody(e))).toEqual({
      id: 'key.created:key_a',
      type: 'key.created',
      timestamp: '2030-01-01T00:00:00.000Z',
      data: { key: { id: 'key_a', name: 'a', plan: 'free', account: null }, actor: 'admin' },
    });
  });

  it('are retried with a growing back-off that repeats its last step', () => {
    expect(retryDelay(1)).toBe(5_000);
    expect(retryDelay(2)).toBe(30_000);
    expect(retryDelay(RETRY_DELAYS_MS.length + 5)).toBe(RETRY_DELAYS_MS.at(-1));
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++) expect(retryDelay(i + 1)).toBeGreaterThan(retryDelay(i));
  });
});

describe('the delivery loop', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  it('retries a receiver that keeps failing until 24 hours after the event, then gives up', async () => {
    const clock = { now: Date.now() };
    const outbox = new MemoryOutbox();
    const hook: Hook = {
      id: 'h',
      url: receiver.url,
      events: ['*'],
      secret: newWebhookSecret(),
      enabled: true,
      description: null,
      source: 'config',
      createdAt: null,
    };
    const registry = new WebhookRegistry(
      () => [hook],
      { listObjects: () => Promise.resolve([]), getObject: () => Promise.resolve(undefined) },
      () => clock.now,
    );
    const log = { warn: () => undefined, info: () => undefined };
    const worker = new DeliveryWorker(outbox, registry, () => clock.now, log, { allowPrivate: () => true });
    const createdAt = clock.now;
    await outbox.enqueue([{ id: 'e|h', eventId: 'e', type: 'key.created', webhook: 'h', keyId: 'k', body: '{}', createdAt }]);
    receiver.failNext(1_000, 500);
    let attempts = 0;
    for (;;) {
      attempts += await worker.round();
      const d = (await outbox.getDelivery('e|h'))!;
      if (d.status !== 'pending') break;
      expect(d.nextAttemptAt - clock.now).toBe(retryDelay(d.attempts));
      clock.now = d.nextAttemptAt;
    }
    const d = (await outbox.getDelivery('e|h'))!;
    expect(d).toMatchObject({ status: 'failed', lastStatus: 500 });
    expect(d.attempts).toBe(attempts);
    // Every attempt but the last was due within the 24 hours; the next would have been past them.
    expect(clock.now - createdAt).toBeLessThanOrEqual(RETRY_FOR_MS);
    expect(clock.now + retryDelay(d.attempts) - createdAt).toBeGreaterThan(RETRY_FOR_MS);
    expect(attempts).toBeGreaterThan(5);
    await worker.close();
  });
});

describe('a receiver that holds every request', () => {
  it("does not hold up another webhook's deliveries, and does not hold up a stop", async () => {
    const [stuck, healthy] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    stuck.hang();
    const hook = (id: string, url: string): Hook => ({
      id,
      url,
      events: ['*'],
      secret: newWebhookSecret(),
      enabled: true,
      description: null,
      source: 'config',
      createdAt: null,
    });
    const hooks = [hook('stuck', stuck.url), hook('healthy', healthy.url)];
    const registry = new WebhookRegistry(
      () => hooks,
      { listObjects: () => Promise.resolve([]), getObject: () => Promise.resolve(undefined) },
      Date.now,
    );
    const outbox = new MemoryOutbox();
    const worker = new DeliveryWorker(
      outbox,
      registry,
      Date.now,
      { warn: () => undefined, info: () => undefined },
      { allowPrivate: () => true },
    );
    const at = Date.now() - 1_000;
    // Twenty for the stuck receiver first (older: claimed first), then one for the healthy one.
    await outbox.enqueue(
      Array.from({ length: 20 }, (_, i) => ({
        id: `e${i}|stuck`,
        eventId: `e${i}`,
        type: 'key.created',
        webhook: 'stuck',
        keyId: 'k',
        body: '{}',
        createdAt: at,
      })),
    );
    await outbox.enqueue([
      { id: 'h|healthy', eventId: 'h', type: 'key.created', webhook: 'healthy', keyId: 'k', body: '{}', createdAt: at + 1 },
    ]);
    const first = worker.round();
    await until(() => stuck.received.length === 20, 'the stuck receiver to hold twenty attempts');
    void worker.round();
    // Well within the 10 seconds the stuck receiver's attempts wait for their answer.
    await until(async () => (await outbox.getDelivery('h|healthy'))?.status === 'delivered', 'the healthy delivery', 5_000);
    await worker.close();
    await first;
    // The stop aborted the stuck ones (it did not wait out their 10 seconds): failed attempts, to be tried again.
    expect(await outbox.getDelivery('e0|stuck')).toMatchObject({ status: 'pending', attempts: 1, lastError: 'the gateway is stopping' });
    await Promise.all([stuck.close(), healthy.close()]);
  });
});

describe('stopping', () => {
  it('checks the counters marked since the last check and stores their events before it ends', async () => {
    const secret = newWebhookSecret();
    const config = configSchema.parse({
      chains: { '1': { name: 'Ethereum', upstreams: ['http://127.0.0.1:9'] } },
      plans: { small: { rps: 100, credits: 100 } },
      keys: [{ name: 'k', key: 'unit-key-0123456789', plan: 'small' }],
      webhooks: [{ name: 'crm', url: 'http://127.0.0.1:9/hooks', events: ['credits.*'], secret }],
      security: { allowPrivateWebhooks: true },
    });
    const now = Date.now();
    const key = new KeyRing(config).find('unit-key-0123456789', now)!;
    const quota = new MemoryQuotaStore();
    const outbox = new MemoryOutbox();
    const log = { warn: () => undefined, info: () => undefined };
    const webhooks = new Webhooks(config.webhooks, {
      keys: { listObjects: () => Promise.resolve([]), getObject: () => Promise.resolve(undefined) },
      outbox,
      quota,
      now: () => now,
      log,
    });
    // 80 of 100 credits, then a stop within the second before the next check.
    for (let i = 0; i < 4; i++) {
      const d = quota.decide({ account: key.account, rps: 100, credits: 100, period: 'daily', cost: 20, nowMs: now });
      webhooks.credits.decided(key, d, 200, now);
    }
    await webhooks.close();
    const { deliveries } = await outbox.listDeliveries({ limit: 10 });
    expect(deliveries.map((d) => [d.type, d.webhook, (JSON.parse(d.body) as { data: { threshold: number } }).data.threshold])).toEqual([
      ['credits.threshold', 'crm', 80],
    ]);
  });
});
