// The real program in a child process: its access log, reload without restart (SIGHUP, under
// load), an invalid reload, and SIGTERM while requests are in flight.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, closedPort, DEMO_KEY } from '../support/gateway.js';
import { startGatewayProcess } from '../support/process.js';
import { REDIS_URL, testPrefix } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/wait.js';

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
    let answered = 0;
    const worker = async () => {
      while (running) {
        const res = await get(gw.url, BALANCES);
        await res.arrayBuffer();
        answered++;
        if (res.status !== 200) failures.push(String(res.status));
        limits.add(res.headers.get('x-ratelimit-limit') ?? '?');
        const credits = Number(res.headers.get('x-credits-remaining'));
        if (credits > lastCredits + 20 * 8) creditsWentUp = true; // more than in-flight reordering could explain
        lastCredits = Math.min(lastCredits, credits);
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await until(() => answered >= 100, 'load before the reload');
    gw.writeConfig(baseConfig(7000));
    gw.child.kill('SIGHUP');
    await until(() => limits.has('7000'), 'the new plan to show');
    const after7000 = answered;
    await until(() => answered >= after7000 + 100, 'load after the reload');
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
    await until(() => gw.output().includes('configuration rejected'), 'the rejection to be logged');
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
    await until(async () => (await get(gw.url, BALANCES)).headers.get('x-ratelimit-limit') === '61', 'the changed file to take effect');
    expect(await gw.stop()).toBe(0);
  });

  it('on SIGTERM finishes the requests in flight, refuses new ones, and exits 0', async () => {
    const gw = await startGatewayProcess(baseConfig(1000, { cache: { ttlSeconds: { 'token-balances': 0 } } }));
    const hitsBefore = fixture().hits();
    const release = fixture().hold();
    try {
      // Five addresses, so that no request is coalesced with another and each reaches the explorer.
      const paths = Array.from({ length: 5 }, (_, i) => `/1/api/v2/addresses/0x${String(i).repeat(40)}/token-balances`);
      const inflight = paths.map((path) =>
        get(gw.url, path).then(async (r) => [r.status, Array.isArray(JSON.parse(await r.text()))] as const),
      );
      await until(() => fixture().hits() === hitsBefore + 5, 'the requests to reach the explorer');
      const exit = gw.stop('SIGTERM');
      await until(() => gw.output().includes('shutting down'), 'the shutdown to begin');
      release();
      const answers = await Promise.all(inflight);
      expect(answers.map(([status]) => status)).toEqual([200, 200, 200, 200, 200]);
      expect(answers.every(([, whole]) => whole)).toBe(true); // whole bodies, not cut
      // 0, not the 1 of a shutdown cut short by shutdownTimeoutMs.
      expect(await exit).toBe(0);
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
    const hitsBefore = fixture().hits();
    try {
      const stuck = get(gw.url, BALANCES).then(
        (r) => r.status,
        () => 'cut',
      );
      await until(() => fixture().hits() === hitsBefore + 1, 'the request to reach the explorer');
      // 1: the request was cut at shutdownTimeoutMs (the explorer never answers).
      expect(await gw.stop('SIGTERM')).toBe(1);
      expect(await stuck).toBe('cut');
    } finally {
      fixture().reset();
    }
  });
});

describe('signals while the program starts', () => {
  it('a SIGHUP does not end it, and a SIGTERM stops it once it has started (exit 0)', async () => {
    // A Redis that accepts and never answers holds the start for a while (it waits for Redis).
    const target = new URL(REDIS_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    proxy.hang();
    const dir = mkdtempSync(join(tmpdir(), 'egw-signals-'));
    const file = join(dir, 'gateway.yaml');
    const port = await closedPort();
    writeFileSync(
      file,
      stringify({
        ...baseConfig(100),
        server: { host: '127.0.0.1', port },
        // In front of the suites' Redis, which keeps nothing on disk: a throwaway.
        redis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: testPrefix('signals'), volatile: true },
      }),
    );
    const root = new URL('../..', import.meta.url).pathname;
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/cli.ts'), '--config', file], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await until(() => output.includes('"msg":"starting"'), 'the program to start');
      child.kill('SIGHUP');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('"msg":"listening"');
      expect(output).toContain('"signal":"SIGTERM"');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await proxy.close();
    }
  });
});
