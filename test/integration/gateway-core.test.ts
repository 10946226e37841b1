// The gateway and the fixture explorer on real loopback ports: statuses of the contract's table,
// what the upstream receives, failover, the deadline and the no-retry rule.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { hashKey } from '../../src/auth/digest.js';
import { ADDRESS, DEMO_KEY, refusedPort, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const TXS = `/1/api/v2/addresses/${ADDRESS}/transactions`;
const TOKEN = '0xb7d311e2eb55f2f68a9440da38e7989210b9a05e';

let explorer: FixtureExplorer;
let gw: TestGateway;

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  gw = await startGateway(
    makeConfig([explorer.url], {
      chains: {
        '1': { name: 'Ethereum', upstreams: [explorer.url], timeoutMs: 2_000 },
        '100': { name: 'Gnosis', upstreams: [explorer.url], upstreamApiKey: 'upstream-secret' },
      },
      keys: [
        { name: 'demo', key: DEMO_KEY, plan: 'free' },
        { name: 'hashed', sha256: hashKey('hashed-key'), plan: 'free' },
        { name: 'unverified', key: 'unverified-key', plan: 'free', status: 'unverified' },
        { name: 'disabled', key: 'disabled-key', plan: 'free', status: 'disabled' },
        { name: 'gnosis-only', key: 'gnosis-key', plan: 'free', chains: ['100'] },
      ],
    }),
  );
});
afterAll(async () => {
  await gw.close();
  await explorer.close();
});
afterEach(() => explorer.reset());

describe('answers from the upstream', () => {
  it('forwards a v2 request and passes the 200 answer on', async () => {
    const res = await gw.get(BALANCES);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = (await res.json()) as unknown[];
    expect(Array.isArray(body)).toBe(true);
    const direct = (await (await fetch(`${explorer.url}/api/v2/addresses/${ADDRESS}/token-balances`)).json()) as unknown[];
    expect(body).toEqual(direct);
  });

  it('sends the upstream the rebuilt path, no key and no Authorization', async () => {
    await gw.get(`${TXS}?apikey=${DEMO_KEY}&filter=to&items_count=5`, {
      key: null,
      headers: { cookie: 'a=b', 'show-scam-tokens': 'true' },
    });
    const seen = explorer.requests.at(-1)!;
    expect(seen.path).toBe(`/api/v2/addresses/${ADDRESS.toLowerCase()}/transactions`);
    expect(seen.query).toEqual({ filter: 'to', items_count: '5' });
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers['show-scam-tokens']).toBe('true');
    expect(JSON.stringify(seen)).not.toContain(DEMO_KEY);
  });

  it('sends a transaction hash in the query lower-cased, as every forwarded hash', async () => {
    const hash = `0x${'AB'.repeat(32)}`;
    expect((await gw.get(`${TXS}?hash=${hash}`)).status).toBe(200);
    expect(explorer.requests.at(-1)!.query).toEqual({ hash: hash.toLowerCase() });
  });

  it("adds the chain's upstreamApiKey as apikey, replacing the client's", async () => {
    const res = await gw.get(`/100/api/v2/addresses/${ADDRESS}/token-balances?apikey=${DEMO_KEY}`, { key: null });
    expect(res.status).toBe(200);
    expect(explorer.requests.at(-1)!.query).toEqual({ apikey: 'upstream-secret' });
  });

  it('follows next_page_params to the next page', async () => {
    // An address with more than one page in the fixture's deterministic data.
    let path = '';
    for (let i = 1; i < 50 && !path; i++) {
      const candidate = `0x${i.toString(16).padStart(40, 'a')}`;
      const page = (await (await fetch(`${explorer.url}/api/v2/addresses/${candidate}/transactions?items_count=3`)).json()) as {
        next_page_params: unknown;
      };
      if (page.next_page_params) path = `/1/api/v2/addresses/${candidate}/transactions`;
    }
    expect(path).not.toBe('');
    const first = (await (await gw.get(`${path}?items_count=3`)).json()) as {
      items: { hash: string }[];
      next_page_params: Record<string, string | number> | null;
    };
    expect(first.items).toHaveLength(3);
    expect(first.next_page_params).not.toBeNull();
    const qs = new URLSearchParams(Object.entries(first.next_page_params!).map(([k, v]) => [k, String(v)] as [string, string]));
    const second = (await (await gw.get(`${path}?${qs.toString()}`)).json()) as { items: { hash: string }[] };
    expect(second.items.length).toBeGreaterThan(0);
    expect(second.items.map((t) => t.hash)).not.toContain(first.items[0]!.hash);
  });

  it('forwards the legacy interface with the canonical action and drops foreign parameters', async () => {
    const res = await gw.get(`/1/api?module=TOKEN&action=gettoken&contractaddress=${TOKEN}&chainid=1`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ message: 'OK', status: '1', result: { contractAddress: TOKEN } });
    expect(explorer.requests.at(-1)!.query).toEqual({ module: 'token', action: 'getToken', contractaddress: TOKEN });
  });

  it('forwards chainid of bridgedTokenList as chain_ids', async () => {
    const res = await gw.get('/1/api?module=token&action=bridgedTokenList&chainid=1');
    expect(res.status).toBe(200);
    expect(explorer.requests.at(-1)!.query).toEqual({ module: 'token', action: 'bridgedTokenList', chain_ids: '1' });
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await gw.get(BALANCES, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(explorer.requests.at(-1)!.method).toBe('GET');
  });

  it('strips upstream rate-limit, credit and hop-by-hop headers and keeps the others', async () => {
    explorer.set({ extraHeaders: { 'x-credits-remaining': '7', 'proxy-authenticate': 'Basic', 'x-explorer': 'yes' } });
    const res = await gw.get(BALANCES);
    expect(res.headers.get('x-explorer')).toBe('yes');
    expect(res.headers.get('proxy-authenticate')).toBeNull();
    // The fixture sends its own x-ratelimit-* (limit 600) and here x-credits-remaining: 7; an
    // upstream copy left in would come back joined to the gateway's with ", ".
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    for (const name of ['x-ratelimit-remaining', 'x-ratelimit-reset', 'x-credits-remaining'])
      expect(res.headers.get(name), name).toMatch(/^\d+$/);
    expect(res.headers.get('x-credits-remaining')).not.toBe('7');
  });
});

describe('refusals', () => {
  const v2 = async (res: Response) => ({ status: res.status, body: await res.json() });

  it('401 without a key, with WWW-Authenticate: Bearer', async () => {
    const res = await gw.get(BALANCES, { key: null });
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await v2(res)).toEqual({ status: 401, body: { message: 'API key required' } });
  });

  it('401 for an unknown key and for Bearer and apikey that differ', async () => {
    expect((await gw.get(BALANCES, { key: 'wrong' })).status).toBe(401);
    expect((await gw.get(`${BALANCES}?apikey=other`)).status).toBe(401);
    expect(explorer.hits()).toBe(0);
  });

  it('401 for an Authorization header of another scheme', async () => {
    const res = await gw.get(BALANCES, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: 'Authorization must be a Bearer token: Authorization: Bearer <API key>' });
  });

  it('accepts a key configured by its sha256 digest, from apikey', async () => {
    expect((await gw.get(`${BALANCES}?apikey=hashed-key`, { key: null })).status).toBe(200);
  });

  it('403 for an unverified, a disabled or a chain-restricted key', async () => {
    expect(await v2(await gw.get(BALANCES, { key: 'unverified-key' }))).toEqual({ status: 403, body: { message: 'Unverified email' } });
    expect((await gw.get(BALANCES, { key: 'disabled-key' })).status).toBe(403);
    expect((await gw.get(BALANCES, { key: 'gnosis-key' })).status).toBe(403);
    expect((await gw.get(BALANCES.replace('/1/', '/100/'), { key: 'gnosis-key' })).status).toBe(200);
  });

  it('404 Network not supported for an unknown chain, before the key', async () => {
    expect(await v2(await gw.get(BALANCES.replace('/1/', '/999/'), { key: null }))).toEqual({
      status: 404,
      body: { message: 'Network not supported' },
    });
  });

  it('404 for an unknown route under a known chain', async () => {
    expect((await gw.get('/1/api/v2/no-such-route')).status).toBe(404);
    // Sent as written: a dot segment is a path trick, never resolved into another route.
    expect((await gw.raw(`/1/api/v2/addresses/${ADDRESS}/%2e%2e/%2e%2e/stats`)).status).toBe(404);
    expect((await gw.raw(`/1/api/v2/addresses/${ADDRESS}/../../stats`)).status).toBe(404);
    expect(explorer.hits()).toBe(0);
  });

  it('405 with Allow for other methods', async () => {
    const res = await gw.get(BALANCES, { method: 'POST', body: '{not json' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('422 JsonErrorResponse for a bad path or query, and nothing reaches the upstream', async () => {
    const res = await gw.get(`/1/api/v2/addresses/0x12/transactions?sort=fee&order=up&foo=1`);
    expect(await v2(res)).toEqual({
      status: 422,
      body: {
        errors: [
          {
            title: 'Invalid value',
            source: { pointer: '/address_hash_param' },
            detail: 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{40})$/',
          },
          { title: 'Invalid value', source: { pointer: '/order' }, detail: 'Invalid value for enum' },
          { title: 'Invalid value', source: { pointer: '/foo' }, detail: 'Unexpected field: foo' },
        ],
      },
    });
    expect(explorer.hits()).toBe(0);
  });

  it("answers paths the router cannot decode with the contract's bodies", async () => {
    const bad = await gw.get('/1/api/v2/addresses/%zz/token-balances');
    expect(bad.status).toBe(422);
    expect(bad.headers.get('x-request-id')).toBeTruthy();
    expect(((await bad.json()) as { errors: { source: { pointer: string } }[] }).errors[0]!.source.pointer).toBe('/address_hash_param');
    expect(await v2(await gw.get('/%E0%A4%A/api/v2/x'))).toEqual({ status: 404, body: { message: 'Network not supported' } });
  });

  it('405 for methods the router does not know and for bodies with a malformed Content-Type', async () => {
    const propfind = await gw.get(BALANCES, { method: 'PROPFIND' });
    expect([propfind.status, propfind.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const post = await gw.get(BALANCES, { method: 'POST', body: 'x', headers: { 'content-type': ';;;' } });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('never lets an encoded ../ reach an upstream', async () => {
    for (const trick of ['%2e%2e%2f%2e%2e%2fadmin', '..%2F..%2Fadmin', '%252e%252e', '0x' + '0'.repeat(40) + '%2F..']) {
      const res = await gw.get(`/1/api/v2/addresses/${trick}/token-balances`);
      expect(res.status, trick).toBe(422);
    }
    expect(explorer.hits()).toBe(0);
  });

  it('legacy: parameter errors are HTTP 200 with status "0"; module/action errors 400; auth keeps its status', async () => {
    const missing = await gw.get('/1/api?module=token&action=getToken');
    expect(await v2(missing)).toEqual({
      status: 200,
      body: { message: 'Query parameter contract address is required', result: null, status: '0' },
    });
    const bad = await gw.get('/1/api?module=token&action=getToken&contractaddress=badhash');
    expect(await v2(bad)).toEqual({ status: 200, body: { message: 'Invalid contract address hash', result: null, status: '0' } });
    expect(await v2(await gw.get('/1/api?module=token&action=nope'))).toEqual({
      status: 400,
      body: { message: 'Unknown action', result: null, status: '0' },
    });
    expect(await v2(await gw.get('/1/api?module=nosuchmodule&action=getLogs'))).toEqual({
      status: 400,
      body: { message: 'Unknown module', result: null, status: '0' },
    });
    expect((await gw.get('/1/api')).status).toBe(400);
    expect(await v2(await gw.get(`/1/api?module=token&action=getToken&contractaddress=${TOKEN}`, { key: null }))).toEqual({
      status: 401,
      body: { message: 'API key required', result: null, status: '0' },
    });
    expect(explorer.hits()).toBe(0);
  });
});

describe('upstream failures', () => {
  it("upstream 5xx becomes 502 without the upstream's body", async () => {
    explorer.set({ failStatus: 500 });
    const res = await gw.get(BALANCES);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ message: 'Upstream error' });
  });

  it('upstream 4xx is passed on unchanged', async () => {
    explorer.set({ failStatus: 404 });
    const res = await gw.get(BALANCES);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'fixture failure' });
  });

  it('legacy answers keep the envelope on upstream failure', async () => {
    explorer.set({ failStatus: 503 });
    const res = await gw.get(`/1/api?module=token&action=getToken&contractaddress=${TOKEN}`);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ message: 'Upstream error', result: null, status: '0' });
  });
});

describe('failover and deadlines', () => {
  it('tries the next upstream when a connection cannot be made', async () => {
    const dead = `http://127.0.0.1:${await refusedPort()}`;
    const g = await startGateway(makeConfig([dead, explorer.url]));
    try {
      expect((await g.get(BALANCES)).status).toBe(200);
      expect(explorer.hits()).toBe(1);
    } finally {
      await g.close();
    }
  });

  it('502 when no upstream can be reached', async () => {
    const g = await startGateway(makeConfig([`http://127.0.0.1:${await refusedPort()}`, `http://127.0.0.1:${await refusedPort()}`]));
    try {
      const res = await g.get(BALANCES);
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ message: 'Upstream unreachable' });
    } finally {
      await g.close();
    }
  });

  it('504 past timeoutMs when every upstream is too slow; a slow first one costs its attempt share only (issue 37)', async () => {
    const second = await startFixtureExplorer();
    const g = await startGateway(
      makeConfig([explorer.url, second.url], {
        chains: { '1': { name: 'E', upstreams: [explorer.url, second.url], timeoutMs: 300, failover: { hedgeAfterMs: 0 } } },
      }),
    );
    try {
      // The first would answer 200 after 2 s: its 150 ms share passes and the second answers.
      explorer.set({ delayMs: 2_000 });
      const res = await g.get(BALANCES);
      expect(res.status).toBe(200);
      expect(explorer.hits()).toBe(1);
      expect(second.hits()).toBe(1);
      // Both too slow: a 504 can only come from the 300 ms deadline.
      second.set({ delayMs: 2_000 });
      const slow = await g.get(`/1/api/v2/addresses/0x${'12'.repeat(20)}/token-balances`);
      expect(slow.status).toBe(504);
      expect(await slow.json()).toEqual({ message: 'Upstream timed out' });
    } finally {
      await g.close();
      await second.close();
    }
  });

  it('504 when an upstream accepts and never answers', async () => {
    const g = await startGateway(makeConfig([explorer.url], { chains: { '1': { name: 'E', upstreams: [explorer.url], timeoutMs: 200 } } }));
    try {
      explorer.set({ hang: true });
      expect((await g.get(BALANCES)).status).toBe(504);
    } finally {
      await g.close();
    }
  });

  it('a read whose connection was reset after it was sent is tried on the next upstream (issue 37); 502 when every one resets', async () => {
    const second = await startFixtureExplorer();
    const g = await startGateway(makeConfig([explorer.url, second.url]));
    try {
      explorer.set({ destroySocket: true });
      expect((await g.get(BALANCES)).status).toBe(200);
      expect(second.hits()).toBe(1);
      second.set({ destroySocket: true });
      const res = await g.get(`/1/api/v2/addresses/0x${'34'.repeat(20)}/token-balances`);
      expect(res.status).toBe(502);
    } finally {
      await g.close();
      await second.close();
    }
  });
});

describe('odd methods and shutdown', () => {
  it.each([
    ['an authority', 'example.org:443', '{"message":"Method not allowed"}'],
    ['a v2 path', '/1/api/v2/stats', '{"message":"Method not allowed"}'],
    ['a legacy path', '/1/api?module=account&action=balance', '{"message":"Method not allowed","result":null,"status":"0"}'],
    ['a JSON-RPC path', '/1/json-rpc', '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Method not allowed"}}'],
  ])('CONNECT to %s gets a 405 like any other method the gateway does not serve', async (what, target, body) => {
    const { connect } = await import('node:net');
    const g = await startGateway(makeConfig([explorer.url]));
    try {
      const port = Number(new URL(g.url).port);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: example.org:443\r\nx-request-id: connect-1\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 405 /);
      expect(answer.toLowerCase()).toContain(what === 'a JSON-RPC path' ? 'allow: post' : 'allow: get, head');
      expect(answer.toLowerCase()).toContain('x-request-id: connect-1');
      expect(answer.endsWith(`\r\n\r\n${body}`)).toBe(true);
    } finally {
      await g.close();
    }
  });

  it('a request on a kept-alive connection while the gateway drains gets its own 503 body', async () => {
    const { Agent, request } = await import('undici');
    const g = await startGateway(makeConfig([explorer.url]));
    // One connection, two requests pipelined on it: the second arrives while the first holds the close.
    const agent = new Agent({ connections: 1, pipelining: 2 });
    const auth = { authorization: `Bearer ${DEMO_KEY}` };
    try {
      const release = explorer.hold();
      const hitsBefore = explorer.hits();
      const first = request(`${g.url}/1/api/v2/addresses/0x${'77'.repeat(20)}/token-balances`, { dispatcher: agent, headers: auth });
      await until(() => explorer.hits() === hitsBefore + 1, 'the first request to reach the explorer');
      const closed = g.close();
      const second = request(`${g.url}${BALANCES}`, { dispatcher: agent, headers: auth });
      release();
      expect((await first).statusCode).toBe(200);
      const during = await second;
      expect(during.statusCode).toBe(503);
      expect(await during.body.json()).toEqual({ message: 'Shutting down' });
      expect(during.headers.connection).toBe('close');
      await closed;
    } finally {
      await agent.close();
    }
  });
});

describe('contract sections 4 and 5, end to end', () => {
  it('forwards under an upstream base URL that has a path: {upstream}/api/v2/... and {upstream}/api', async () => {
    const prefixed = await startGateway(makeConfig([`${explorer.url}/eth`]));
    try {
      const before = explorer.requests.length;
      await prefixed.get(BALANCES);
      await prefixed.get(`/1/api?module=token&action=getToken&contractaddress=${TOKEN}`);
      expect(explorer.requests.slice(before).map((r) => r.path)).toEqual([
        `/eth/api/v2/addresses/${ADDRESS.toLowerCase()}/token-balances`,
        '/eth/api',
      ]);
    } finally {
      await prefixed.close();
    }
  });

  it('checks the route before the key: a keyless request to an unknown route or module gets what a keyed one gets', async () => {
    for (const path of ['/1/api/v2/no-such-route', '/1/api?module=nosuch&action=nothing', '/1/api?action=balance']) {
      const keyless = await gw.get(path, { key: null });
      const keyed = await gw.get(path);
      expect(keyless.status, path).not.toBe(401);
      expect(keyless.status, path).toBe(keyed.status);
      expect(await keyless.text(), path).toBe(await keyed.text());
    }
  });

  it('has no admin API without admin.token, and never on the public port', async () => {
    expect(gw.app.gateway.adminUrl()).toBeUndefined();
    const res = await gw.get('/admin/v1/keys', { key: null });
    expect(res.status).toBe(404);
  });
});
