// Webhook receivers that are not to be trusted (issue 42, items 1 and 8), against a real gateway and
// real receivers on loopback:
// - one that answers 500 and then never stops sending its body, and one that trickles it: before,
//   the whole body was read (`res.text()`), and the endless one took the process down (and again
//   after each restart, the outbox claiming the delivery again). Now at most 8 KiB is read and the
//   connection closed, the whole attempt ends within its 10 s, the delivery is a failed attempt
//   retried on the usual back-off, the gateway keeps answering, and what the receiver said is
//   shown to write admin tokens only;
// - destinations on the gateway's own network: refused through the admin API in every spelling
//   unless `security.allowPrivateWebhooks`, and at delivery on the address a name resolves to
//   (`localhost`), so a webhook made while they were allowed, or a name that comes to resolve to
//   such an address, is not sent to; a URL's password is shown masked, and still sent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ATTEMPT_TIMEOUT_MS, ERROR_CHARS, RETRY_DELAYS_MS } from '../../src/webhooks/delivery.js';
import { adminClient, ADMIN_TOKEN } from '../support/admin.js';
import { makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const READ_TOKEN = 'test-read-token-0123456789';

interface Delivery {
  id: string;
  webhook: string;
  status: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
}

interface Answered {
  path: string;
  /** Bytes the receiver got to write before the gateway closed the connection. */
  written: number;
  at: number;
  closedAt?: number;
}

/** A receiver that answers 500 and then sends `x` without end, as fast as it can (`/endless`) or one byte every 50 ms (`/trickle`). */
async function startHostileReceiver(): Promise<{ url: string; answered: Answered[]; close(): Promise<void> }> {
  const answered: Answered[] = [];
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const server: Server = createServer((req, res) => {
    req.resume();
    const a: Answered = { path: req.url ?? '', written: 0, at: Date.now() };
    answered.push(a);
    res.on('close', () => (a.closedAt = Date.now()));
    res.writeHead(500, { 'content-type': 'text/plain' });
    if (req.url === '/endless') {
      const pump = () => {
        while (!res.destroyed) {
          a.written += chunk.length;
          if (!res.write(chunk)) break;
        }
      };
      res.on('drain', pump);
      pump();
    } else {
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write('x');
        a.written++;
      }, 50);
      res.on('close', () => clearInterval(timer));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let explorer: FixtureExplorer;
beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer?.close();
});

describe('a receiver that answers 500 with a body that does not end', () => {
  let gw: TestGateway;
  let hostile: Awaited<ReturnType<typeof startHostileReceiver>>;
  const clock = { now: Date.now() };
  const admin = adminClient(() => gw.app.gateway.adminUrl()!);
  const reader = adminClient(() => gw.app.gateway.adminUrl()!, READ_TOKEN);
  const delivery = async (webhook: string) =>
    (await admin.get<{ items: Delivery[] }>(`/webhooks/deliveries?webhook=${webhook}`)).body.items[0];

  beforeAll(async () => {
    hostile = await startHostileReceiver();
    gw = await startGateway(
      makeConfig([explorer.url], {
        plans: { free: { rps: 1000, credits: 100, period: 'daily' }, small: { rps: 1000, credits: 100, period: 'daily' } },
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0, tokens: [{ name: 'dashboard', token: READ_TOKEN, scope: 'read' }] },
        webhooks: [
          { name: 'endless', url: `${hostile.url}/endless`, events: ['key.created'], secret: SECRET },
          { name: 'trickle', url: `${hostile.url}/trickle`, events: ['key.created'], secret: SECRET },
        ],
        // The receivers are on loopback.
        security: { allowPrivateWebhooks: true },
      }),
      { now: () => clock.now },
    );
    const made = await admin.post('/keys', { name: 'told', plan: 'small' });
    expect(made.status).toBe(201);
  });
  afterAll(async () => {
    await gw?.close();
    await hostile?.close();
  });

  it('reads a bounded prefix, closes the connection, keeps 200 characters, and tries again on the back-off', async () => {
    const rss = process.memoryUsage().rss;
    const first = await until(async () => {
      const d = await delivery('endless');
      return d?.attempts === 1 && d.lastAttemptAt !== null && d;
    }, 'the first attempt to the endless receiver settled');
    expect(first).toMatchObject({ status: 'pending', lastStatus: 500, lastError: `HTTP 500: ${'x'.repeat(ERROR_CHARS)}` });
    expect(Date.parse(first.nextAttemptAt!) - Date.parse(first.lastAttemptAt!)).toBe(RETRY_DELAYS_MS[0]);
    // The gateway closed the connection while the receiver was still sending: what it could write
    // is what the sockets' buffers took, not the body (which has no end).
    const answer = await until(() => {
      const a = hostile.answered.find((x) => x.path === '/endless');
      return a?.closedAt !== undefined && a;
    }, 'the connection to the endless receiver closed');
    expect(answer.closedAt! - answer.at).toBeLessThan(ATTEMPT_TIMEOUT_MS);
    expect(answer.written).toBeLessThan(32 * 1024 * 1024);
    // Memory: no growth near the size of a body read whole (V8 gave up past 512 MiB of one string).
    expect(process.memoryUsage().rss - rss).toBeLessThan(128 * 1024 * 1024);
    // The gateway is up and answering.
    expect((await gw.get('/healthz', { key: null })).status).toBe(200);

    // What the receiver said is shown to write tokens only.
    const read = (await reader.get<{ items: Delivery[] }>('/webhooks/deliveries?webhook=endless')).body.items[0]!;
    expect(read.lastError).toBe("HTTP 500 (the receiver's answer is shown to write admin tokens only)");
    const one = await reader.get<Delivery>(`/webhooks/deliveries/${encodeURIComponent(first.id)}`);
    expect(one.body.lastError).toBe(read.lastError);
    expect(JSON.stringify(one.body)).not.toContain('xxxx');

    // The back-off passed: tried again, and failed again the same way, with the next delay.
    clock.now += RETRY_DELAYS_MS[0]!;
    const second = await until(async () => {
      const d = await delivery('endless');
      return d?.attempts === 2 && d;
    }, 'the second attempt to the endless receiver settled');
    expect(second).toMatchObject({ status: 'pending', lastStatus: 500, lastError: first.lastError });
    expect(Date.parse(second.nextAttemptAt!) - Date.parse(second.lastAttemptAt!)).toBe(RETRY_DELAYS_MS[1]);
    expect(hostile.answered.filter((a) => a.path === '/endless')).toHaveLength(2);
  }, 30_000);

  it('ends an attempt whose body trickles within the attempt time, as a failed attempt', async () => {
    const d = await until(
      async () => {
        const x = await delivery('trickle');
        return x !== undefined && x.attempts >= 1 && x.lastAttemptAt !== null && x;
      },
      'the attempt to the trickling receiver settled',
      ATTEMPT_TIMEOUT_MS + 10_000,
    );
    expect(d).toMatchObject({
      status: 'pending',
      lastStatus: 500,
      lastError: `HTTP 500, then no whole answer within ${ATTEMPT_TIMEOUT_MS} ms`,
    });
    const answer = await until(() => {
      const a = hostile.answered.find((x) => x.path === '/trickle');
      return a?.closedAt !== undefined && a;
    }, 'the connection to the trickling receiver closed');
    // Closed by the gateway at the attempt's bound, while the receiver was still sending.
    expect(answer.closedAt! - answer.at).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 500);
    expect(answer.closedAt! - answer.at).toBeLessThan(ATTEMPT_TIMEOUT_MS + 5_000);
    expect((await gw.get('/healthz', { key: null })).status).toBe(200);
  }, 30_000);
});

describe("webhook destinations on the gateway's own network", () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  const admin = adminClient(() => gw.app.gateway.adminUrl()!);
  const config = (allowPrivateWebhooks: boolean) =>
    makeConfig([explorer.url], {
      plans: { free: { rps: 1000, credits: 100, period: 'daily' }, small: { rps: 1000, credits: 100, period: 'daily' } },
      admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 },
      security: { allowPrivateWebhooks },
    });
  const deliveries = async (webhook: string) =>
    (await admin.get<{ items: Delivery[] }>(`/webhooks/deliveries?webhook=${webhook}`)).body.items;
  let serial = 0;
  const newKey = async () => expect((await admin.post('/keys', { name: `dest-${serial++}`, plan: 'small' })).status).toBe(201);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    gw = await startGateway(config(true));
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('sends to a name that resolves to loopback while allowed, and refuses it at delivery once not', async () => {
    const port = new URL(receiver.url).port;
    const hook = await admin.post<{ id: string }>('/webhooks', {
      url: `http://user:p%40ss@localhost:${port}/hooks`,
      events: ['key.created'],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const id = hook.body.id;
    const before = receiver.received.length;
    await newKey();
    await until(async () => (await deliveries(id))[0]?.status === 'delivered', 'the delivery to localhost while allowed');
    // The URL's credentials are sent as Basic auth, decoded.
    const basic = `Basic ${Buffer.from('user:p@ss').toString('base64')}`;
    expect(receiver.received[before]!.headers.authorization).toBe(basic);
    // Shown masked; sent back masked (a client that PATCHes what it read), the password stays.
    const shown = await admin.get<{ url: string }>(`/webhooks/${id}`);
    expect(shown.body.url).toBe(`http://user:***@localhost:${port}/hooks`);
    expect((await admin.patch(`/webhooks/${id}`, { url: shown.body.url })).status).toBe(200);
    const again = receiver.received.length;
    await newKey();
    await until(() => receiver.received.length > again, 'the delivery after the masked URL was sent back');
    expect(receiver.received[again]!.headers.authorization).toBe(basic);

    // Not allowed any more (a reload): the next event's delivery is refused on what localhost resolves to.
    expect(gw.app.gateway.reload(config(false))).toEqual([]);
    const sent = receiver.received.length;
    await newKey();
    const refused = await until(async () => {
      const d = (await deliveries(id)).find((x) => x.status !== 'delivered');
      return d?.lastAttemptAt !== null && d;
    }, 'the refused delivery');
    expect(refused).toMatchObject({ status: 'pending', attempts: 1, lastStatus: null });
    expect(refused.lastError).toMatch(
      /^localhost resolves to (127\.0\.0\.1|::1), a loopback address: refused \(security\.allowPrivateWebhooks is false\)$/,
    );
    expect(receiver.received.length).toBe(sent);
  });

  it('refuses every spelling of loopback, private, link-local, unspecified and CGNAT on create and update (422), naming the setting', async () => {
    const urls = [
      'http://127.0.0.1/h',
      'http://2130706433/h',
      'http://0x7f.1/h',
      'http://127.1/h',
      'http://0177.0.0.1/h',
      'http://[::ffff:127.0.0.1]/h',
      'http://[::1]/h',
      'http://localhost:8080/h',
      'http://10.0.0.5/h',
      'http://172.20.1.1/h',
      'http://192.168.0.10/h',
      'http://[fd00::1]/h',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/h',
      'http://0.0.0.0/h',
      'http://[::]/h',
      'http://100.64.1.1/h',
    ];
    const listed = (await admin.get<{ items: unknown[] }>('/webhooks')).body.items.length;
    for (const url of urls) {
      const res = await admin.post<{ message: string; errors: { field: string; message: string }[] }>('/webhooks', {
        url,
        events: ['key.*'],
      });
      expect(res.status, url).toBe(422);
      expect(res.body.message, url).toMatch(/^invalid request: url: .* unless security\.allowPrivateWebhooks is true$/);
      expect(res.body.errors, url).toEqual([
        { field: 'url', message: expect.stringMatching(/loopback|private|link-local|unspecified|NAT/) as string },
      ]);
    }
    expect((await admin.get<{ items: unknown[] }>('/webhooks')).body.items).toHaveLength(listed);

    // A public receiver is taken; changed to the metadata address, refused; its description, taken.
    const made = await admin.post<{ id: string }>('/webhooks', { url: 'https://hooks.example.com/egw', events: ['credits.*'] });
    expect(made.status).toBe(201);
    const moved = await admin.patch<{ message: string }>(`/webhooks/${made.body.id}`, { url: 'http://169.254.169.254/' });
    expect(moved.status).toBe(422);
    expect(moved.body.message).toContain('169.254.169.254 is a link-local address');
    expect((await admin.patch(`/webhooks/${made.body.id}`, { description: 'crm' })).status).toBe(200);
  });

  it('shows a URL password masked: in the answers, the list, one webhook and the audit', async () => {
    const made = await admin.post<{ id: string; url: string }>('/webhooks', {
      url: 'https://crm:hunter2-secret@hooks.example.com/egw',
      events: ['credits.*'],
    });
    expect(made.status).toBe(201);
    expect(made.body.url).toBe('https://crm:***@hooks.example.com/egw');
    const list = await admin.get('/webhooks');
    const show = await admin.get<{ url: string }>(`/webhooks/${made.body.id}`);
    expect(show.body.url).toBe('https://crm:***@hooks.example.com/egw');
    // Sent back as shown (a client that PATCHes what it read): the password stays the one given.
    const back = await admin.patch<{ url: string }>(`/webhooks/${made.body.id}`, { url: show.body.url, description: 'same' });
    expect(back.status).toBe(200);
    const audit = await admin.get(`/audit?key=${encodeURIComponent(`webhook:${made.body.id}`)}`);
    expect(audit.status).toBe(200);
    for (const body of [list.body, show.body, back.body, audit.body]) expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(JSON.stringify(audit.body)).toContain('crm:***@hooks.example.com');
  });
});
