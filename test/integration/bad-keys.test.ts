// Key guessing costs the guesser (security.badKeys, auth/bad-keys.ts): wrong keys from one client
// address, counted per address over a sliding window, block that address (429, Retry-After) for
// blockSeconds, whatever key it sends next; other addresses are not touched. Clients are bound to
// other loopback addresses (Linux routes all of 127.0.0.0/8 to lo) to be other addresses; time is
// the gateway's injected clock, moved by the test.
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const LEGACY = `/1/api?module=account&action=balance&address=${ADDRESS}`;
const START = Date.UTC(2026, 0, 5, 12, 0, 0);

let explorer: FixtureExplorer;
const agents = new Map<string, Agent>();
const gateways: TestGateway[] = [];

/** A client whose connections come from `localAddress` (undici's Client option, not one of `connect`'s: that one is dropped). */
function from(localAddress: string): Agent {
  let agent = agents.get(localAddress);
  if (agent === undefined) {
    agent = new Agent({ localAddress });
    agents.set(localAddress, agent);
  }
  return agent;
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: unknown;
}

async function get(gw: TestGateway, path: string, key: string, localAddress: string, forwardedFor?: string): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
  const res = await request(gw.url + path, { dispatcher: from(localAddress), headers });
  const text = await res.body.text();
  const retryAfter = res.headers['retry-after'];
  return { status: res.statusCode, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined, body: JSON.parse(text) as unknown };
}

/** A gateway on a clock the test moves; its log lines go to `lines`. */
async function gatewayAt(extra: Partial<ConfigInput> = {}, lines: string[] = []): Promise<{ gw: TestGateway; clock: { t: number } }> {
  const clock = { t: START };
  const gw = await startGateway(makeConfig([explorer.url], extra), { now: () => clock.t, logStream: { write: (l) => void lines.push(l) } });
  gateways.push(gw);
  return { gw, clock };
}

beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  explorer.reset();
});
afterAll(async () => {
  await Promise.all([...agents.values()].map((a) => a.close()));
  await explorer.close();
});

describe('wrong keys from one address (security.badKeys, default 20 in 60 s, then 300 s)', () => {
  it('blocks the address after 20 wrong keys: 429 with Retry-After 300, for a valid key too; another address is served', async () => {
    const { gw } = await gatewayAt();
    for (let i = 0; i < 20; i++) {
      const wrong = await get(gw, BALANCES, `wrong-key-${i}`, '127.0.0.2');
      expect(wrong.status, `wrong key ${i + 1}`).toBe(401);
    }
    const blocked = await get(gw, BALANCES, 'wrong-key-20', '127.0.0.2');
    expect(blocked.status).toBe(429);
    expect(blocked.retryAfter).toBe('300');
    expect(blocked.body).toEqual({ message: 'Too many invalid API keys from this address' });

    const upstreamBefore = explorer.requests.length;
    const valid = await get(gw, BALANCES, DEMO_KEY, '127.0.0.2');
    expect(valid.status).toBe(429);
    expect(valid.retryAfter).toBe('300');
    // The legacy API answers in its envelope, as its other refusals do.
    const legacy = await get(gw, LEGACY, DEMO_KEY, '127.0.0.2');
    expect(legacy.status).toBe(429);
    expect(legacy.body).toEqual({ message: 'Too many invalid API keys from this address', result: null, status: '0' });
    // JSON-RPC too: its key step is the same.
    const rpc = await request(`${gw.url}/1/json-rpc`, {
      dispatcher: from('127.0.0.2'),
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
    await rpc.body.dump();
    expect(rpc.statusCode).toBe(429);
    expect(explorer.requests.length).toBe(upstreamBefore);

    const other = await get(gw, BALANCES, DEMO_KEY, '127.0.0.1');
    expect(other.status).toBe(200);
  });

  it('lifts the block blockSeconds later, by the clock: Retry-After counts down', async () => {
    const { gw, clock } = await gatewayAt();
    for (let i = 0; i < 20; i++) expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.3')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.3')).retryAfter).toBe('300');
    clock.t += 120_000;
    expect(await get(gw, BALANCES, DEMO_KEY, '127.0.0.3')).toMatchObject({ status: 429, retryAfter: '180' });
    clock.t += 179_500;
    expect(await get(gw, BALANCES, DEMO_KEY, '127.0.0.3')).toMatchObject({ status: 429, retryAfter: '1' });
    clock.t += 500; // 300 s after the 20th wrong key
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.3')).status).toBe(200);
    // A fresh count after the block: one more wrong key is a 401, not a new block.
    expect((await get(gw, BALANCES, 'wrong-again', '127.0.0.3')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.3')).status).toBe(200);
  });

  it('logs each block once, with the address and the settings', async () => {
    const lines: string[] = [];
    const { gw } = await gatewayAt({ log: { level: 'warn', requests: false } }, lines);
    for (let i = 0; i < 20; i++) await get(gw, BALANCES, `wrong-${i}`, '127.0.0.11');
    for (let i = 0; i < 5; i++) expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.11')).status).toBe(429);
    const blocks = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => /address blocked/.test(String(l.msg)));
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({ level: 40, address: '127.0.0.11', failures: 20, windowSeconds: 60, blockSeconds: 300 });
    expect(lines.join('\n')).not.toContain('wrong-');
  });

  it('does not block wrong keys spread over more than the window', async () => {
    const { gw, clock } = await gatewayAt();
    // 40 wrong keys, one every 3.2 s: never 20 within 60 s (the 20 latest always span 60.8 s).
    for (let i = 0; i < 40; i++) {
      expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.4')).status, `wrong key ${i + 1}`).toBe(401);
      clock.t += 3_200;
    }
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.4')).status).toBe(200);
    // 19, a pause past the window, 19 more: still no block.
    for (let i = 0; i < 19; i++) expect((await get(gw, BALANCES, `w-${i}`, '127.0.0.5')).status).toBe(401);
    clock.t += 60_000;
    for (let i = 0; i < 19; i++) expect((await get(gw, BALANCES, `v-${i}`, '127.0.0.5')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.5')).status).toBe(200);
  });

  it('does not count other refusals (no key, a known key refused) as wrong keys', async () => {
    const { gw } = await gatewayAt({
      keys: [
        { name: 'demo', key: DEMO_KEY, plan: 'free' },
        { name: 'off', key: 'disabled-key', plan: 'free', status: 'disabled' },
      ],
    });
    for (let i = 0; i < 25; i++) {
      expect((await get(gw, BALANCES, 'disabled-key', '127.0.0.6')).status).toBe(403);
      const none = await request(gw.url + BALANCES, { dispatcher: from('127.0.0.6') });
      await none.body.dump();
      expect(none.statusCode).toBe(401);
    }
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.6')).status).toBe(200);
  });

  it("does not count a client's placeholder key (hardhat-verify's api_key, YourApiKeyToken) as a wrong key (issue 41)", async () => {
    const { gw } = await gatewayAt();
    for (let i = 0; i < 25; i++) {
      const placeholder = await get(gw, LEGACY, i % 2 === 0 ? 'api_key' : 'YourApiKeyToken', '127.0.0.9');
      expect(placeholder.status).toBe(401);
      expect(placeholder.body).toMatchObject({
        message: 'Invalid API key: api_key and YourApiKeyToken are placeholders that clients send, not keys',
      });
      // Beside the real key (the Bearer here), the placeholder in the query is no conflict.
      const res = await request(`${gw.url}${LEGACY}&apikey=api_key`, {
        dispatcher: from('127.0.0.9'),
        headers: { authorization: `Bearer ${DEMO_KEY}` },
      });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
    }
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.9')).status).toBe(200);
    // A wrong key that is no placeholder still counts: 20 of them block.
    for (let i = 0; i < 20; i++) expect((await get(gw, BALANCES, `api_key-${i}`, '127.0.0.9')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.9')).status).toBe(429);
  });
});

describe('security.badKeys settings', () => {
  it('failures, windowSeconds and blockSeconds are the configured ones', async () => {
    const { gw, clock } = await gatewayAt({ security: { badKeys: { failures: 3, windowSeconds: 10, blockSeconds: 60 } } });
    for (let i = 0; i < 3; i++) expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.7')).status).toBe(401);
    expect(await get(gw, BALANCES, DEMO_KEY, '127.0.0.7')).toMatchObject({ status: 429, retryAfter: '60' });
    clock.t += 60_000;
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.7')).status).toBe(200);
  });

  it('failures: 0 turns it off', async () => {
    const { gw } = await gatewayAt({ security: { badKeys: { failures: 0 } } });
    for (let i = 0; i < 30; i++) expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.8')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.8')).status).toBe(200);
  });

  it('keeps counters for at most maxAddresses addresses, however many send wrong keys', async () => {
    const { gw } = await gatewayAt({ security: { badKeys: { failures: 2, maxAddresses: 8 } } });
    // 40 addresses, one wrong key each: at most 8 counters kept.
    for (let i = 0; i < 40; i++) expect((await get(gw, BALANCES, 'wrong', `127.0.1.${i + 1}`)).status).toBe(401);
    expect(gw.app.gateway.state().badKeys.counted).toBeLessThanOrEqual(8);
    // 20 of them blocked (a second wrong key each): at most 8 blocks kept, the most recent.
    for (let i = 0; i < 20; i++) {
      const address = `127.0.2.${i + 1}`;
      expect((await get(gw, BALANCES, 'wrong', address)).status).toBe(401);
      expect((await get(gw, BALANCES, 'wrong', address)).status).toBe(401);
    }
    expect(gw.app.gateway.state().badKeys.blocked).toBeLessThanOrEqual(8);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.2.20')).status).toBe(429);
  });

  it('a reload applies new settings and keeps the blocks already made', async () => {
    const { gw } = await gatewayAt({ security: { badKeys: { failures: 2 } } });
    for (let i = 0; i < 2; i++) expect((await get(gw, BALANCES, 'wrong', '127.0.0.9')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.9')).status).toBe(429);
    gw.app.gateway.reload(makeConfig([explorer.url], { security: { badKeys: { failures: 5 } } }));
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.9')).status).toBe(429);
    for (let i = 0; i < 4; i++) expect((await get(gw, BALANCES, 'wrong', '127.0.0.10')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.10')).status).toBe(200);
    gw.app.gateway.reload(makeConfig([explorer.url], { security: { badKeys: { failures: 0 } } }));
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.9')).status).toBe(200);
  });
});

describe('server.trustProxy: which address counts', () => {
  const settings = { failures: 3, windowSeconds: 60, blockSeconds: 60 };

  it("by default, the connection's own: X-Forwarded-For changes nothing", async () => {
    const { gw } = await gatewayAt({ security: { badKeys: settings } });
    for (let i = 0; i < 3; i++) expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.11', `198.51.100.${i}`)).status).toBe(401);
    // A client cannot dodge the block by naming another address.
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.11', '198.51.100.99')).status).toBe(429);
  });

  it('behind trusted proxies, the address they forward: one client is blocked, another behind the same proxy is served', async () => {
    const { gw } = await gatewayAt({ server: { trustProxy: ['127.0.0.12'] }, security: { badKeys: settings } });
    for (let i = 0; i < 3; i++) expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.12', '203.0.113.7')).status).toBe(401);
    expect(await get(gw, BALANCES, DEMO_KEY, '127.0.0.12', '203.0.113.7')).toMatchObject({ status: 429, retryAfter: '60' });
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.12', '203.0.113.8')).status).toBe(200);
    // From an address that is not a trusted proxy, X-Forwarded-For is not believed.
    for (let i = 0; i < 3; i++) expect((await get(gw, BALANCES, `wrong-${i}`, '127.0.0.13', '203.0.113.9')).status).toBe(401);
    expect((await get(gw, BALANCES, DEMO_KEY, '127.0.0.13', '203.0.113.10')).status).toBe(429);
  });
});
