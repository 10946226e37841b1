// The real program in a child process: its access log, reload without restart (SIGHUP, under
// load), an invalid reload, and SIGTERM while requests are in flight.
import { describe, expect, it } from 'vitest';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY } from '../support/gateway.js';
import { startGatewayProcess } from '../support/process.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();

const baseConfig = (rps: number, extra: Record<string, unknown> = {}) => ({
  chains: { '1': { name: 'Ethereum', upstreams: [fixture().url] } },
  plans: { free: { rps, credits: 1_000_000 } },
  keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
  log: { level: 'info', requests: true },
  health: { probeIntervalMs: 60_000 },
  ...extra,
});

const get = (url: string, path: string, init: RequestInit = {}) =>
  fetch(url + path, { ...init, headers: { authorization: `Bearer ${DEMO_KEY}`, ...(init.headers as Record<string, string>) } });

describe('the running program', () => {
  it('writes one JSON line per request and never a key', async () => {
    const gw = await startGatewayProcess(baseConfig(1000));
    await get(gw.url, BALANCES, { headers: { 'x-request-id': 'req-abc-1' } });
    await fetch(`${gw.url}${BALANCES}?apikey=${DEMO_KEY}`);
    await fetch(`${gw.url}${BALANCES}?apikey=not-a-real-key-123`);
    await fetch(gw.url + BALANCES, { headers: { authorization: 'Bearer wrong-bearer-456' } });
    expect(await gw.stop()).toBe(0);
    const lines = gw
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"request"') && l.includes('/api/v2/'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatchObject({ reqId: 'req-abc-1', chain: '1', route: 'token-balances', status: 200, cache: 'MISS', key: 'demo' });
    expect(typeof lines[0]!.upstreamMs).toBe('number');
    expect(lines[1]).toMatchObject({ status: 200, cache: 'HIT', key: 'demo' });
    // A hit is written straight to the socket; its line still carries its time.
    expect(lines[1]!.ms).toBeGreaterThan(0);
    expect(gw.output()).toContain(`"url":"${gw.url}","msg":"listening"`);
    expect(lines.slice(2).map((l) => l.status)).toEqual([401, 401]);
    for (const secret of [DEMO_KEY, 'not-a-real-key-123', 'wrong-bearer-456', 'apikey=', 'Bearer ']) {
      expect(gw.output()).not.toContain(secret);
    }
  });

  it('reloads on SIGHUP under load: a plan change takes effect, no request fails, balances survive', async () => {
    const gw = await startGatewayProcess(baseConfig(5000));
    const limits = new Set<string>();
    const failures: string[] = [];
    let lastCredits = Infinity;
    let creditsWentUp = false;
    let running = true;
    const worker = async () => {
      while (running) {
        const res = await get(gw.url, BALANCES);
        await res.arrayBuffer();
        if (res.status !== 200) failures.push(String(res.status));
        limits.add(res.headers.get('x-ratelimit-limit') ?? '?');
        const credits = Number(res.headers.get('x-credits-remaining'));
        if (credits > lastCredits + 20 * 8) creditsWentUp = true; // more than in-flight reordering could explain
        lastCredits = Math.min(lastCredits, credits);
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await new Promise((r) => setTimeout(r, 300));
    gw.writeConfig(baseConfig(7000));
    gw.child.kill('SIGHUP');
    await new Promise((r) => setTimeout(r, 500));
    running = false;
    await Promise.all(workers);
    expect(failures).toEqual([]);
    expect([...limits].sort()).toEqual(['5000', '7000']);
    expect(creditsWentUp).toBe(false);
    const after = await get(gw.url, BALANCES);
    expect(after.headers.get('x-ratelimit-limit')).toBe('7000');
    expect(await gw.stop()).toBe(0);
    expect(gw.output()).toContain('configuration reloaded');
  });

  it('rejects an invalid file on reload, logs why, and keeps the running configuration', async () => {
    const gw = await startGatewayProcess(baseConfig(50));
    gw.writeConfig({ ...baseConfig(50), plans: { free: { rps: 0, credits: 1 } } });
    gw.child.kill('SIGHUP');
    await new Promise((r) => setTimeout(r, 300));
    const res = await get(gw.url, BALANCES);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('50');
    expect(await gw.stop()).toBe(0);
    expect(gw.output()).toContain('configuration rejected');
    expect(gw.output()).toContain('plans.free.rps: expected a positive integer');
  });

  it('reloads when the file changes, if server.watchConfig is set', async () => {
    const gw = await startGatewayProcess(baseConfig(60, { server: { watchConfig: true } }));
    gw.writeConfig(baseConfig(61, { server: { watchConfig: true } }));
    let limit: string | null = null;
    for (let i = 0; i < 40 && limit !== '61'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      limit = (await get(gw.url, BALANCES)).headers.get('x-ratelimit-limit');
    }
    expect(limit).toBe('61');
    expect(await gw.stop()).toBe(0);
  });

  it('on SIGTERM finishes the requests in flight, refuses new ones, and exits 0', async () => {
    const gw = await startGatewayProcess(baseConfig(1000, { cache: { ttlSeconds: { 'token-balances': 0 } } }));
    fixture().set({ delayMs: 800 });
    try {
      const inflight = Array.from({ length: 5 }, () => get(gw.url, BALANCES).then(async (r) => [r.status, (await r.text()).length] as const));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      const exit = gw.stop('SIGTERM');
      const answers = await Promise.all(inflight);
      expect(answers.map(([status]) => status)).toEqual([200, 200, 200, 200, 200]);
      expect(answers.every(([, length]) => length > 2)).toBe(true);
      expect(await exit).toBe(0);
      expect(Date.now() - started).toBeLessThan(3_000); // not the 10 s shutdown timeout
      await expect(fetch(gw.url + BALANCES)).rejects.toThrow();
    } finally {
      fixture().reset();
    }
  });

  it('on SIGTERM does not wait past server.shutdownTimeoutMs for a request that never ends', async () => {
    const gw = await startGatewayProcess(
      baseConfig(1000, { server: { shutdownTimeoutMs: 300 }, cache: { ttlSeconds: { 'token-balances': 0 } } }),
    );
    fixture().set({ hang: true });
    try {
      const stuck = get(gw.url, BALANCES).then(
        (r) => r.status,
        () => 'cut',
      );
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      expect(await gw.stop('SIGTERM')).toBe(1);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await stuck).toBe('cut');
    } finally {
      fixture().reset();
    }
  });
});
