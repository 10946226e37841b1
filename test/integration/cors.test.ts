// CORS on the public listener (src/http/cors.ts, `server.cors`), through a real gateway and the
// fixture explorer: preflights answered by the gateway alone, the CORS headers on every kind of
// answer, a list of origins, none, a reload, and the admin and operations listeners without any.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../src/config/schema.js';
import { ADMIN_TOKEN } from '../support/admin.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';
import { SAMPLE_ADDRESS } from '../support/samples.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const CSV = `/1/api/v2/addresses/${SAMPLE_ADDRESS}/transactions/csv`;
const APP = 'https://app.example';
const EVIL = 'https://evil.example';
const EXPOSE =
  'x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-credits-remaining, x-request-id, x-cache, age, retry-after, www-authenticate';

const fixture = useFixtureExplorer();
afterEach(() => fixture().reset());

/** The keys every gateway of this file knows: plenty, none left, one request per second (two of them), disabled. */
const KEYS = {
  plans: {
    free: { rps: 1000, credits: 1_000_000 },
    broke: { rps: 1000, credits: 0 },
    slow: { rps: 1, credits: 1_000_000 },
  },
  keys: [
    { name: 'demo', key: DEMO_KEY, plan: 'free' },
    { name: 'broke', key: 'broke-key', plan: 'broke' },
    { name: 'slow', key: 'slow-key', plan: 'slow' },
    { name: 'slow2', key: 'slow-key-2', plan: 'slow' },
    { name: 'disabled', key: 'disabled-key', plan: 'free', status: 'disabled' },
  ],
} satisfies Partial<ConfigInput>;

const config = (cors?: { origins: string[]; maxAgeSeconds?: number }, extra: Partial<ConfigInput> = {}) =>
  makeConfig([fixture().url], {
    ...KEYS,
    server: { host: '127.0.0.1', port: 0, ...(cors ? { cors } : {}) },
    cache: { ttlSeconds: { 'token-balances': 60, transactions: 0, legacy: 0 } },
    ...extra,
  });

/** A browser's preflight for a GET with Authorization. */
const preflight = (gw: TestGateway, path: string, origin = APP, headers: Record<string, string> = {}) =>
  fetch(gw.url + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization', ...headers },
  });

const acao = (res: Response) => res.headers.get('access-control-allow-origin');

/** The answer carries what `["*"]` sends on every answer. */
function expectAnyOrigin(res: Response, what: string): void {
  expect(acao(res), what).toBe('*');
  expect(res.headers.get('access-control-expose-headers'), what).toBe(EXPOSE);
  expect(res.headers.get('access-control-allow-credentials'), what).toBeNull();
  expect(res.headers.get('vary') ?? '', what).not.toMatch(/origin/i);
}

describe('with the default, any origin', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(config());
  });
  afterAll(() => gw.close());

  it('answers a preflight 204 with the Allow-* headers, on any path, without a key', async () => {
    for (const path of [
      BALANCES,
      `${BALANCES}?apikey=${DEMO_KEY}`,
      CSV,
      '/1/api?module=account&action=balance',
      '/api/json/config',
      '/healthz',
      '/nowhere',
    ]) {
      const res = await preflight(gw, path);
      expect(res.status, path).toBe(204);
      expect(acao(res)).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, OPTIONS');
      expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, show-scam-tokens, x-request-id');
      expect(res.headers.get('access-control-max-age')).toBe('600');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('x-request-id')).toMatch(/.+/);
      expect(res.headers.get('x-credits-remaining')).toBeNull();
      expect(res.headers.get('content-length')).toBeNull();
      expect(await res.text()).toBe('');
    }
  });

  it("allows a page's own x-request-id, which the gateway keeps as the request's id (issue 41)", async () => {
    const res = await preflight(gw, BALANCES, APP, { 'access-control-request-headers': 'authorization, x-request-id' });
    expect(res.status).toBe(204);
    const allowed = res.headers.get('access-control-allow-headers')!.split(', ');
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'x-request-id']));
    const own = await gw.get(BALANCES, { headers: { origin: APP, 'x-request-id': 'page-chosen-id.1' } });
    expect(own.headers.get('x-request-id')).toBe('page-chosen-id.1');
    expect(own.headers.get('access-control-expose-headers')!.split(', ')).toContain('x-request-id');
  });

  it('exposes Age, WWW-Authenticate and Retry-After where answers carry them (issue 41)', async () => {
    const fresh = `/1/api/v2/addresses/0x${'cd'.repeat(20)}/token-balances`;
    await (await gw.get(fresh, { headers: { origin: APP } })).arrayBuffer();
    const hit = await gw.get(fresh, { headers: { origin: APP } });
    expect([hit.headers.get('x-cache'), hit.headers.get('age')]).toEqual(['HIT', expect.stringMatching(/^\d+$/)]);
    const noKey = await gw.get(BALANCES, { key: null, headers: { origin: APP } });
    expect([noKey.status, noKey.headers.get('www-authenticate')]).toEqual([401, 'Bearer']);
    for (const res of [hit, noKey]) {
      expect(res.headers.get('access-control-expose-headers')!.split(', ')).toEqual(
        expect.arrayContaining(['age', 'www-authenticate', 'retry-after', 'x-request-id']),
      );
    }
  });

  it('never echoes request headers beyond the ones routes read', async () => {
    const res = await preflight(gw, BALANCES, APP, { 'access-control-request-headers': 'authorization, x-secret-thing' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, show-scam-tokens, x-request-id');
  });

  it('bills, rate-limits and forwards nothing for a preflight, and counts it as a 204, not a 405', async () => {
    const before = await gw.get(BALANCES, { key: 'slow-key-2' });
    expect(before.status).toBe(200);
    const hits = fixture().hits();
    // The one request of this second is spent; preflights, even naming the key, still pass.
    for (let i = 0; i < 5; i++) {
      expect((await preflight(gw, `${BALANCES}?apikey=slow-key-2`)).status).toBe(204);
    }
    expect(fixture().hits()).toBe(hits);
    expect(fixture().requests.filter((r) => r.method === 'OPTIONS')).toEqual([]);
    // The next second's request shows the balance less one request's cost: preflights took nothing.
    await new Promise((r) => setTimeout(r, 1_050));
    const after = await gw.get(BALANCES, { key: 'slow-key-2' });
    expect(after.status).toBe(200);
    expect(Number(before.headers.get('x-credits-remaining')) - Number(after.headers.get('x-credits-remaining'))).toBe(20);
    const samples = parsePrometheus(await (await gw.ops('/metrics')).text());
    expect(valueOf(samples, 'egw_requests_total', { status: '204' })).toBeGreaterThanOrEqual(5);
    expect(valueOf(samples, 'egw_requests_total', { status: '405' })).toBe(0);
  });

  it('keeps the 405 of a plain OPTIONS, with CORS like every answer', async () => {
    const plain = await fetch(gw.url + BALANCES, { method: 'OPTIONS' });
    expect(plain.status).toBe(405);
    expect(plain.headers.get('allow')).toBe('GET, HEAD');
    expectAnyOrigin(plain, 'plain OPTIONS');
    // Origin without Access-Control-Request-Method is no preflight either.
    expect((await fetch(gw.url + BALANCES, { method: 'OPTIONS', headers: { origin: APP } })).status).toBe(405);
  });

  it('sends ACAO * and the exposed headers on every answer, with an Origin or without', async () => {
    const fresh = `/1/api/v2/addresses/0x${'ab'.repeat(20)}/token-balances`;
    const first = await gw.get(fresh, { headers: { origin: APP } });
    expect(first.headers.get('x-cache')).toBe('MISS');
    const hit = await gw.get(fresh, { headers: { origin: APP } });
    expect([hit.status, hit.headers.get('x-cache')]).toEqual([200, 'HIT']);
    expectAnyOrigin(first, '200 MISS');
    expectAnyOrigin(hit, '200 HIT');
    // The same entry, again, without an Origin: the same headers (CORSPlug sends them on every answer).
    const hitNoOrigin = await gw.get(fresh);
    expect(hitNoOrigin.headers.get('x-cache')).toBe('HIT');
    expectAnyOrigin(hitNoOrigin, 'HIT without Origin');
    const cases: [string, number, Promise<Response>][] = [
      ['401', 401, gw.get(BALANCES, { key: null, headers: { origin: APP } })],
      ['402', 402, gw.get(BALANCES, { key: 'broke-key', headers: { origin: APP } })],
      ['403', 403, gw.get(BALANCES, { key: 'disabled-key', headers: { origin: APP } })],
      ['404 chain', 404, gw.get(`/99/api/v2/addresses/${ADDRESS}/token-balances`, { headers: { origin: APP } })],
      ['404 route', 404, gw.get('/1/api/v2/nowhere', { headers: { origin: APP } })],
      ['405', 405, gw.get(BALANCES, { method: 'DELETE', headers: { origin: APP } })],
      ['422', 422, gw.get(`/1/api/v2/addresses/0xnope/token-balances`, { headers: { origin: APP } })],
      ['HEAD', 200, gw.get(BALANCES, { method: 'HEAD', headers: { origin: APP } })],
      ['legacy', 200, gw.get(`/1/api?module=account&action=balance&address=${ADDRESS}`, { headers: { origin: APP } })],
      ['discovery', 200, fetch(`${gw.url}/api/json/config`, { headers: { origin: APP } })],
      ['healthz', 200, fetch(`${gw.url}/healthz`, { headers: { origin: APP } })],
      ['readyz', 200, fetch(`${gw.url}/readyz`, { headers: { origin: APP } })],
    ];
    for (const [what, status, pending] of cases) {
      const res = await pending;
      expect(res.status, what).toBe(status);
      expectAnyOrigin(res, what);
      await res.arrayBuffer();
    }
  });

  it('on 429 with Retry-After, which browser code may read', async () => {
    expect((await gw.get(BALANCES, { key: 'slow-key', headers: { origin: APP } })).status).toBe(200);
    const res = await gw.get(BALANCES, { key: 'slow-key', headers: { origin: APP } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expectAnyOrigin(res, '429');
  });

  it('on upstream failures (502) and on streamed CSV answers', async () => {
    const csv = await gw.get(CSV, { headers: { origin: APP } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/csv/);
    expectAnyOrigin(csv, 'CSV');
    await csv.text();
    fixture().set({ failStatus: 503 });
    const failed = await gw.get(`/1/api/v2/addresses/${ADDRESS}/transactions`, { headers: { origin: APP } });
    expect(failed.status).toBe(502);
    expectAnyOrigin(failed, '502');
    const csvFailed = await gw.get(CSV, { headers: { origin: APP } });
    expect(csvFailed.status).toBe(502);
    expectAnyOrigin(csvFailed, 'CSV 502');
  });
});

describe('with a list of origins', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(config({ origins: [APP, 'http://localhost:3000'], maxAgeSeconds: 120 }));
  });
  afterAll(() => gw.close());

  it('echoes an allowed origin with Vary: Origin, on answers and preflights', async () => {
    const pre = await preflight(gw, BALANCES);
    expect(pre.status).toBe(204);
    expect(acao(pre)).toBe(APP);
    expect(pre.headers.get('vary')).toBe('origin');
    expect(pre.headers.get('access-control-max-age')).toBe('120');
    for (let i = 0; i < 2; i++) {
      const res = await gw.get(BALANCES, { headers: { origin: APP } });
      expect(res.status).toBe(200);
      expect(acao(res)).toBe(APP);
      expect(res.headers.get('access-control-expose-headers')).toBe(EXPOSE);
      expect(res.headers.get('vary')).toMatch(/origin/);
    }
    const local = await gw.get(BALANCES, { headers: { origin: 'http://localhost:3000' } });
    expect([local.headers.get('x-cache'), acao(local)]).toEqual(['HIT', 'http://localhost:3000']);
  });

  it('gives any other origin no ACAO (Vary still), and its preflight no Allow-* headers', async () => {
    const pre = await preflight(gw, BALANCES, EVIL);
    expect(pre.status).toBe(204);
    expect(acao(pre)).toBeNull();
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
    expect(pre.headers.get('access-control-allow-headers')).toBeNull();
    expect(pre.headers.get('vary')).toBe('origin');
    for (const origin of [EVIL, undefined]) {
      const res = await gw.get(BALANCES, { headers: origin ? { origin } : {} });
      expect(res.status).toBe(200);
      expect(acao(res)).toBeNull();
      expect(res.headers.get('access-control-expose-headers')).toBeNull();
      expect(res.headers.get('vary')).toMatch(/origin/);
    }
    const refused = await gw.get(BALANCES, { key: null, headers: { origin: EVIL } });
    expect([refused.status, acao(refused)]).toEqual([401, null]);
  });
});

describe('with origins: []', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(config({ origins: [] }));
  });
  afterAll(() => gw.close());

  it('sends no CORS header; a preflight gets a bare 204 and is still no request', async () => {
    const hits = fixture().hits();
    const pre = await preflight(gw, BALANCES);
    expect(pre.status).toBe(204);
    for (const [name] of pre.headers) expect(name).not.toMatch(/^access-control-/);
    expect(pre.headers.get('vary')).toBeNull();
    expect(fixture().hits()).toBe(hits);
    for (const res of [await gw.get(BALANCES, { headers: { origin: APP } }), await gw.get(BALANCES, { headers: { origin: APP } })]) {
      expect(res.status).toBe(200);
      for (const [name] of res.headers) expect(name).not.toMatch(/^access-control-/);
      expect(res.headers.get('vary') ?? '').not.toMatch(/origin/);
    }
    expect((await fetch(gw.url + BALANCES, { method: 'OPTIONS' })).status).toBe(405);
  });
});

describe('a reload', () => {
  it('applies a new server.cors to the next requests, and reports nothing left unapplied', async () => {
    const gw = await startGateway(config());
    try {
      expect(acao(await gw.get(BALANCES, { headers: { origin: APP } }))).toBe('*');
      expect(gw.app.gateway.reload(config({ origins: [APP] }))).toEqual([]);
      // The cached entry, answered under the new configuration.
      const listed = await gw.get(BALANCES, { headers: { origin: APP } });
      expect([listed.headers.get('x-cache'), acao(listed), listed.headers.get('vary')]).toEqual(['HIT', APP, 'origin']);
      expect(acao(await gw.get(BALANCES, { headers: { origin: EVIL } }))).toBeNull();
      expect(acao(await preflight(gw, BALANCES, EVIL))).toBeNull();
      expect(gw.app.gateway.reload(config({ origins: [] }))).toEqual([]);
      expect(acao(await gw.get(BALANCES, { headers: { origin: APP } }))).toBeNull();
      expect(gw.app.gateway.reload(config())).toEqual([]);
      expect(acao(await preflight(gw, BALANCES, EVIL))).toBe('*');
    } finally {
      await gw.close();
    }
  });
});

describe('the admin and operations listeners', () => {
  it('never answer CORS, to answers or preflights', async () => {
    const gw = await startGateway(config(undefined, { admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port: 0 } }));
    try {
      const keys = `${gw.app.gateway.adminUrl()!}/keys`;
      const answers = [
        await fetch(keys, { headers: { origin: APP, authorization: `Bearer ${ADMIN_TOKEN}` } }),
        await fetch(keys, { headers: { origin: APP } }),
        await fetch(keys, {
          method: 'OPTIONS',
          headers: { origin: APP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
        }),
        await gw.ops('/metrics', { headers: { origin: APP } }),
        await gw.ops('/healthz', { headers: { origin: APP } }),
        await gw.ops('/readyz', { headers: { origin: APP } }),
        await gw.ops('/metrics', {
          method: 'OPTIONS',
          headers: { origin: APP, 'access-control-request-method': 'GET' },
        }),
      ];
      expect(answers[0]!.status).toBe(200);
      expect(answers[3]!.status).toBe(200);
      for (const res of answers) {
        for (const [name] of res.headers) expect(name, res.url).not.toMatch(/^access-control-/);
        await res.arrayBuffer();
      }
      // The public listener's /healthz, for contrast.
      expect(acao(await fetch(`${gw.url}/healthz`, { headers: { origin: APP } }))).toBe('*');
    } finally {
      await gw.close();
    }
  });
});
