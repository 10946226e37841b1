// An explorer's answer is checked before anyone is given it or it is kept (request/forward.ts):
// a 3xx, a 2xx that is not JSON, an answer above chains.*.maxResponseBytes are 502s, refunded,
// never cached, counted by kind, and warned about at most once per interval. Credentials in an
// upstream URL are sent as Basic auth and appear nowhere else.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { ADDRESS, refusedPort, DEMO_KEY, makeConfig, startGateway } from '../support/gateway.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';
import { SAMPLE_ADDRESS } from '../support/samples.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const CSV = `/1/api/v2/addresses/${SAMPLE_ADDRESS}/transactions/csv?from_period=2024-01-01&to_period=2024-02-01`;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
/** A real HTTP server on loopback whose every answer the test chooses. */
async function startBrokenExplorer(): Promise<{ url: string; hits: () => number; answer(h: Handler): void; close(): Promise<void> }> {
  let handler: Handler = (_req, res) => res.end();
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => hits,
    answer: (h) => (handler = h),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

let broken: Awaited<ReturnType<typeof startBrokenExplorer>>;
beforeAll(async () => {
  broken = await startBrokenExplorer();
});
afterAll(() => broken.close());

describe('answers an explorer should not have given', () => {
  const start = (extra: { maxResponseBytes?: number } = {}) =>
    startGateway(
      makeConfig([broken.url], {
        chains: { '1': { name: 'Ethereum', upstreams: [broken.url], timeoutMs: 2_000, ...extra } },
        cache: { ttlSeconds: { 'token-balances': 60 } },
      }),
    );
  const credits = async (gw: Awaited<ReturnType<typeof start>>) => {
    broken.answer((_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found"}'));
    const res = await gw.get(`/1/api/v2/blocks/1`);
    expect(res.status).toBe(404); // Blockscout's own 4xx passes as it is
    return Number(res.headers.get('x-credits-remaining'));
  };

  it.each([
    [
      'a 302 to an internal address',
      'redirect',
      (_req: IncomingMessage, res: ServerResponse) => res.writeHead(302, { location: 'http://10.0.0.7/internal' }).end(),
    ],
    [
      'a 200 whose JSON is cut short',
      'invalid_body',
      (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[{"token":'),
    ],
    [
      'a 200 HTML page from a proxy',
      'invalid_body',
      (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>'),
    ],
    ['a 200 without a content type', 'invalid_body', (_req: IncomingMessage, res: ServerResponse) => res.end('[]')],
  ])('%s is a 502: not passed on, not cached, refunded, counted as %s', async (_what, kind, answer) => {
    const gw = await start();
    try {
      const before = await credits(gw);
      broken.answer(answer);
      const hitsBefore = broken.hits();
      for (let i = 0; i < 2; i++) {
        const res = await gw.get(BALANCES);
        expect(res.status).toBe(502);
        expect(res.headers.get('location')).toBeNull();
        expect(await res.json()).toEqual({ message: 'Upstream error' });
      }
      // Not cached: the second request went to the explorer again.
      expect(broken.hits() - hitsBefore).toBe(2);
      // Refunded: the balance is what it was before the two 502s (the 404 probe costs its own).
      expect(await credits(gw)).toBe(before - 20);
      const m = parsePrometheus(await (await gw.ops('/metrics')).text());
      expect(valueOf(m, 'egw_upstream_errors_total', { chain: '1', kind })).toBe(2);
      expect(valueOf(m, 'egw_requests_total', { chain: '1', route: 'token-balances', status: '502' })).toBe(2);
    } finally {
      await gw.close();
    }
  });

  it('a good JSON answer after a bad one is served and cached', async () => {
    const gw = await start();
    try {
      broken.answer((_req, res) => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('[{"value":"1"}]'));
      const first = await gw.get(BALANCES);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual([{ value: '1' }]);
      const hits = broken.hits();
      expect((await gw.get(BALANCES)).headers.get('x-cache')).toBe('HIT');
      expect(broken.hits()).toBe(hits);
    } finally {
      await gw.close();
    }
  });

  it('an answer above maxResponseBytes is a 502 (too_large), and one below it passes', async () => {
    const gw = await start({ maxResponseBytes: 10_000 });
    try {
      const json = (n: number) => JSON.stringify([{ value: 'x'.repeat(n) }]);
      broken.answer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(json(20_000)));
      const big = await gw.get(BALANCES);
      expect(big.status).toBe(502);
      expect(await big.json()).toEqual({ message: 'Upstream answer too large' });
      broken.answer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(json(5_000)));
      expect((await gw.get(BALANCES)).status).toBe(200);
      const m = parsePrometheus(await (await gw.ops('/metrics')).text());
      expect(valueOf(m, 'egw_upstream_errors_total', { chain: '1', kind: 'too_large' })).toBe(1);
    } finally {
      await gw.close();
    }
  });

  it('a streamed export that redirects is a 502 without the Location', async () => {
    const gw = await start();
    try {
      broken.answer((_req, res) => res.writeHead(301, { location: 'http://10.0.0.7/export.csv' }).end());
      const res = await gw.get(CSV);
      expect(res.status).toBe(502);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toEqual({ message: 'Upstream error' });
    } finally {
      await gw.close();
    }
  });
});

describe('upstream failure warnings', () => {
  it('a dead explorer under load writes one line per interval, and every failure is counted', async () => {
    const lines: string[] = [];
    const dead = `http://127.0.0.1:${await refusedPort()}`;
    const gw = await startGateway(makeConfig([dead], { log: { level: 'warn', requests: false } }), {
      logStream: { write: (l: string) => void lines.push(l) },
    });
    try {
      // Distinct requests: identical ones would share one upstream request.
      const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => gw.get(`/1/api/v2/blocks/${i + 1}`).then((r) => r.status)));
      // The first refusal takes the only upstream out of the rotation: one request at a time is
      // then sent to it as a trial (502 when refused again), the others get 503 busy (issue 37).
      expect(statuses.filter((s) => s === 502).length).toBeGreaterThanOrEqual(1);
      expect(statuses.every((s) => s === 502 || s === 503)).toBe(true);
      const m = parsePrometheus(await (await gw.ops('/metrics')).text());
      const unreachable = valueOf(m, 'egw_upstream_errors_total', { chain: '1', kind: 'unreachable' });
      expect(unreachable).toBe(statuses.filter((s) => s === 502).length);
      expect(unreachable + valueOf(m, 'egw_upstream_errors_total', { chain: '1', kind: 'busy' })).toBe(40);
      gw.app.gateway.flushLogs();
      const warnings = lines.map((l) => JSON.parse(l) as { msg: string; kind?: string }).filter((l) => l.msg === 'upstream failure');
      // One line per interval for each kind: the refusals, and the requests turned away meanwhile.
      expect(warnings.filter((w) => w.kind === 'unreachable')).toHaveLength(1);
      expect(warnings.filter((w) => w.kind !== 'unreachable').map((w) => w.kind)).toEqual(statuses.includes(503) ? ['busy'] : []);
    } finally {
      await gw.close();
    }
  });
});

describe('credentials in an upstream URL', () => {
  const PASSWORD = 'pa:ss@w0rd/secret';
  let explorer: FixtureExplorer;
  beforeAll(async () => {
    explorer = await startFixtureExplorer();
  });
  afterAll(() => explorer.close());

  it('are sent as Basic auth, buffered and streamed, and appear in no log, metric, health answer or error body', async () => {
    const withCredentials = (base: string) => {
      const url = new URL(base);
      url.username = 'reader';
      url.password = PASSWORD;
      return url.toString();
    };
    const lines: string[] = [];
    const gw = await startGateway(
      makeConfig([withCredentials(explorer.url)], {
        chains: { '1': { name: 'Ethereum', upstreams: [withCredentials(explorer.url)], upstreamApiKey: 'upstream-key-secret' } },
        log: { level: 'info', requests: true },
      }),
      { logStream: { write: (l: string) => void lines.push(l) } },
    );
    try {
      const expected = `Basic ${Buffer.from(`reader:${PASSWORD}`).toString('base64')}`;
      expect((await gw.get(BALANCES)).status).toBe(200);
      expect((await gw.get(CSV)).status).toBe(200);
      const seen = explorer.requests.slice(-2);
      expect(seen.map((r) => r.headers.authorization)).toEqual([expected, expected]);
      expect(seen.map((r) => r.query.apikey)).toEqual(['upstream-key-secret', 'upstream-key-secret']);

      explorer.set({ failStatus: 503 });
      const failed = await gw.get(`/1/api/v2/blocks/1`);
      expect(failed.status).toBe(502);
      const errorBody = await failed.text();
      explorer.reset();

      const shown = [
        errorBody,
        await (await gw.ops('/metrics')).text(),
        await (await gw.ops('/readyz')).text(),
        await (await gw.get('/readyz', { key: null })).text(),
        await (await gw.get('/api/json/config', { key: null })).text(),
      ];
      gw.app.gateway.flushLogs();
      shown.push(...lines);
      const everything = shown.join('\n');
      expect(lines.some((l) => l.includes('"msg":"upstream failure"'))).toBe(true);
      // The upstream is named by its host in the detailed readiness answer.
      expect(JSON.parse(shown[2]!)).toMatchObject({ chains: { '1': { upstreams: { [new URL(explorer.url).host]: { state: 'up' } } } } });
      for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), 'reader:', 'upstream-key-secret', DEMO_KEY]) {
        expect(everything).not.toContain(secret);
      }
    } finally {
      await gw.close();
    }
  });
});
