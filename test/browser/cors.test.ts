// A real browser (Debian's Chromium, driven by playwright-core) calling the gateway from a page
// of another origin, as a dapp does: `fetch` with `Authorization: Bearer` makes Chromium send a
// preflight first (Fetch standard, "CORS-preflight fetch"), then the request; the page reads the
// JSON, its credits and, once its plan's rate is spent, a 429 and its headers. A page of an
// origin the gateway does not list cannot read anything: its fetch fails. .ci/run installs
// Chromium when /usr/bin/chromium is missing, so this suite always runs.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../src/config/schema.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { parsePrometheus, valueOf } from '../support/prometheus.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const SLOW_KEY = 'browser-slow-key';
const BROWSER_TIMEOUT = 60_000;

const fixture = useFixtureExplorer();

const config = (origins?: string[]) =>
  makeConfig([fixture().url], {
    plans: { free: { rps: 1000, credits: 1_000_000 }, slow: { rps: 2, credits: 1_000_000 } },
    keys: [
      { name: 'demo', key: DEMO_KEY, plan: 'free' },
      { name: 'slow', key: SLOW_KEY, plan: 'slow' },
    ],
    server: { host: '127.0.0.1', port: 0, ...(origins ? { cors: { origins } } : {}) },
    // token-balances kept a minute, so that a page can read a cache hit's Age.
    cache: { ttlSeconds: { 'token-balances': 60, transactions: 0, legacy: 0 } },
  } satisfies Partial<ConfigInput>);

let browser: Browser;
let pageServer: Server;
/** The page's origin: `localhost`, where the gateway is `127.0.0.1`, so every call is cross-origin. */
let pageOrigin: string;

beforeAll(async () => {
  pageServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>dapp</title></head><body>dapp</body></html>');
  });
  await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
  pageOrigin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, BROWSER_TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (pageServer ? pageServer.close(() => r()) : r()));
});

async function openPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${pageOrigin}/`);
  return page;
}

interface Seen {
  ok: true;
  status: number;
  headers: Record<string, string | null>;
  body: unknown;
}
interface Failed {
  ok: false;
  name: string;
  message: string;
}

/**
 * What the page's script sees of `fetch(url, { headers: { Authorization, ...own } })`: status,
 * readable headers and JSON, or the error. `key` null sends no Authorization.
 */
function callFromPage(page: Page, url: string, key: string | null, own: Record<string, string> = {}): Promise<Seen | Failed> {
  return page.evaluate(
    async ({ url, key, own }) => {
      try {
        const res = await fetch(url, { headers: { ...(key === null ? {} : { Authorization: `Bearer ${key}` }), ...own } });
        const headers: Record<string, string | null> = {};
        for (const name of [
          'x-credits-remaining',
          'x-ratelimit-limit',
          'x-ratelimit-remaining',
          'x-ratelimit-reset',
          'x-request-id',
          'x-cache',
          'retry-after',
          'age',
          'www-authenticate',
        ]) {
          headers[name] = res.headers.get(name);
        }
        return { ok: true as const, status: res.status, headers, body: await res.json() };
      } catch (err) {
        return { ok: false as const, name: (err as Error).name, message: (err as Error).message };
      }
    },
    { url, key, own },
  );
}

const preflights = async (gw: TestGateway) =>
  valueOf(parsePrometheus(await (await gw.ops('/metrics')).text()), 'egw_requests_total', { status: '204' });

describe('a page on another origin', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(config());
  });
  afterAll(() => gw.close());

  it(
    'calls the gateway with its key after a preflight, and reads the JSON and its credits',
    async () => {
      const page = await openPage();
      try {
        expect(await page.evaluate('location.origin')).toBe(pageOrigin);
        expect(new URL(gw.url).origin).not.toBe(pageOrigin);
        const before = await preflights(gw);
        const seen = await callFromPage(page, gw.url + BALANCES, DEMO_KEY);
        expect(seen.ok).toBe(true);
        const { status, headers, body } = seen as Seen;
        expect(status).toBe(200);
        expect(Array.isArray(body)).toBe(true);
        expect(headers['x-credits-remaining']).toBe(String(1_000_000 - 20));
        expect(headers['x-ratelimit-limit']).toBe('1000');
        expect(headers['x-request-id']).toMatch(/.+/);
        // Chromium asked first: the gateway answered one preflight (a 204), and the fixture
        // explorer saw only the GET.
        expect(await preflights(gw)).toBe(before + 1);
        expect(fixture().requests.map((r) => r.method)).toEqual(['GET']);
      } finally {
        await page.close();
      }
    },
    BROWSER_TIMEOUT,
  );

  it(
    "sends its own x-request-id, and reads it back, a cached answer's Age and a 401's WWW-Authenticate (issue 41)",
    async () => {
      const page = await openPage();
      try {
        const url = `${gw.url}/1/api/v2/addresses/0x${'ef'.repeat(20)}/token-balances`;
        const first = await callFromPage(page, url, DEMO_KEY, { 'x-request-id': 'dapp-trace-41' });
        // Before the fix the preflight did not allow x-request-id: Chromium refused the request.
        expect(first).toMatchObject({ ok: true, status: 200 });
        expect((first as Seen).headers['x-request-id']).toBe('dapp-trace-41');
        expect((first as Seen).headers['x-cache']).toBe('MISS');
        const hit = (await callFromPage(page, url, DEMO_KEY)) as Seen;
        expect([hit.status, hit.headers['x-cache']]).toEqual([200, 'HIT']);
        expect(hit.headers.age).toMatch(/^\d+$/);
        const refused = (await callFromPage(page, url, null)) as Seen;
        expect(refused.status).toBe(401);
        expect(refused.headers['www-authenticate']).toBe('Bearer');
      } finally {
        await page.close();
      }
    },
    BROWSER_TIMEOUT,
  );

  it(
    'reads a 429 and its Retry-After once its plan rate is spent',
    async () => {
      const page = await openPage();
      try {
        const answers: (Seen | Failed)[] = [];
        for (let i = 0; i < 4; i++) answers.push(await callFromPage(page, `${gw.url}${BALANCES}?items_count=${i + 1}`, SLOW_KEY));
        expect(answers.every((a) => a.ok)).toBe(true);
        const limited = (answers as Seen[]).find((a) => a.status === 429);
        expect(limited, JSON.stringify(answers.map((a) => (a as Seen).status))).toBeDefined();
        expect(limited!.body).toEqual({ message: 'Too many requests' });
        expect(limited!.headers['retry-after']).toBe('1');
        expect(limited!.headers['x-ratelimit-limit']).toBe('2');
        expect(limited!.headers['x-ratelimit-remaining']).toBe('0');
        expect(Number(limited!.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
        expect(limited!.headers['x-credits-remaining']).toMatch(/^\d+$/);
      } finally {
        await page.close();
      }
    },
    BROWSER_TIMEOUT,
  );
});

describe('a page on an origin the gateway does not list', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(config(['https://app.example']));
  });
  afterAll(() => gw.close());

  it(
    'cannot read anything: its fetch fails, and the request is never sent or billed',
    async () => {
      const page = await openPage();
      try {
        const hits = fixture().hits();
        const seen = await callFromPage(page, gw.url + BALANCES, DEMO_KEY);
        expect(seen).toMatchObject({ ok: false, name: 'TypeError' });
        // The preflight got no Allow-* headers, so Chromium never sent the GET.
        expect(fixture().hits()).toBe(hits);
        const check = await gw.get(BALANCES);
        expect(check.headers.get('x-credits-remaining')).toBe(String(1_000_000 - 20));
      } finally {
        await page.close();
      }
    },
    BROWSER_TIMEOUT,
  );
});
