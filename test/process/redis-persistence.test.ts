// A Redis that keeps nothing on disk forgets every run-time key and bought credit when it
// restarts: the gateway refuses to start on one unless `redis.volatile: true` (then it warns),
// check-config says so beforehand, a Redis that refuses CONFIG is not judged, and one found
// after the start is an error line. Each Redis here is a redis-server of this file's own.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildServer } from '../../src/app/server.js';
import { keepsNothing, readPersistence } from '../../src/redis/persistence.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { closedPort, DEMO_KEY, makeConfig, refusedPort, startGateway } from '../support/gateway.js';
import { startGatewayProcess } from '../support/process.js';
import { testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const fixture = useFixtureExplorer();

const NO_PERSISTENCE = ['--appendonly', 'no', '--save', ''];
const AOF = ['--appendonly', 'yes', '--save', ''];

/** Stops the redis-servers a test started, after it. */
const servers: (() => void)[] = [];
afterEach(() => {
  for (const stop of servers.splice(0)) stop();
});

/** A redis-server of this test's own, with the persistence `args` say. */
async function ownRedis(args: string[]): Promise<{ url: string; client: Redis }> {
  const port = await closedPort();
  const dir = mkdtempSync(`${tmpdir()}/egw-persist-`);
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...args], { stdio: 'ignore' });
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: (n) => (n > 50 ? null : 100) });
  client.on('error', () => undefined); // refused until the server is up
  await until(async () => (await client.ping().catch(() => '')) === 'PONG', 'redis-server to start');
  servers.push(() => {
    client.disconnect();
    server.kill();
  });
  return { url: `redis://127.0.0.1:${port}`, client };
}

/** A configuration file as an operator writes it: `redis` exactly as given (no `volatile` unless it says). */
function configFile(redis: Record<string, unknown>, server: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'egw-persist-config-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify({ ...operatorConfig(redis), server: { host: '127.0.0.1', port: 0, ...server } }));
  return file;
}

function operatorConfig(redis: Record<string, unknown>): Record<string, unknown> {
  return {
    chains: { '1': { name: 'Ethereum', upstreams: [fixture().url] } },
    plans: { free: { rps: 100, credits: 1_000_000 } },
    keys: [{ name: 'demo', key: DEMO_KEY, plan: 'free' }],
    log: { level: 'info', requests: false },
    // startGatewayProcess adds volatile: true to a redis section without the key; undefined writes none.
    redis: { keyPrefix: testPrefix('persist'), volatile: undefined, ...redis },
  };
}

function checkConfig(file: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'check-config', file], { cwd: ROOT }, (err, out, errOut) =>
      resolve({ code: err ? Number(err.code) : 0, out, err: errOut }),
    );
  });
}

describe('Redis persistence', () => {
  it('is read from CONFIG GET: appendonly no and no save schedule keeps nothing', async () => {
    const volatile = await ownRedis(NO_PERSISTENCE);
    const durable = await ownRedis(AOF);
    const [none] = await readPersistence(volatile.client);
    expect(none).toMatchObject({ appendonly: 'no', save: '' });
    expect(keepsNothing(none!)).toBe(true);
    const [aof] = await readPersistence(durable.client);
    expect(aof).toMatchObject({ appendonly: 'yes' });
    expect(keepsNothing(aof!)).toBe(false);
    await durable.client.config('SET', 'appendonly', 'no');
    expect(keepsNothing((await readPersistence(durable.client))[0]!)).toBe(true);
  });

  it('a start on a Redis that keeps nothing is refused: the CLI exits 1 and names the fix', async () => {
    const volatile = await ownRedis(NO_PERSISTENCE);
    const started = startGatewayProcess(operatorConfig({ url: volatile.url }), 30_000);
    const err = await started.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^gateway exited with 1:/);
    expect(err?.message).toContain(`Redis keeps nothing on disk (appendonly no, save "") at 127.0.0.1:${new URL(volatile.url).port}`);
    expect(err?.message).toContain('every run-time key');
    expect(err?.message).toContain('run Redis with appendonly yes, or set redis.volatile: true');
    expect(err?.message).toMatch(/"msg":"could not start"/);
  }, 40_000);

  it('with redis.volatile: true the same Redis is accepted, with a warning; a reload turning it off says the next start would be refused', async () => {
    const volatile = await ownRedis(NO_PERSISTENCE);
    const gw = await startGatewayProcess(operatorConfig({ url: volatile.url, volatile: true }), 30_000);
    try {
      // Log lines reach stdout within a second (app/resources.ts, LOG_FLUSH_MS).
      await until(
        () => /"level":40,[^\n]*Redis keeps nothing on disk[^\n]*accepted by redis.volatile: true/.test(gw.output()),
        'the warning',
      );
      expect((await fetch(`${gw.url}/1/api/v2/stats`, { headers: { authorization: `Bearer ${DEMO_KEY}` } })).status).toBe(200);
      gw.writeConfig(operatorConfig({ url: volatile.url }));
      gw.child.kill('SIGHUP');
      await until(() => gw.output().includes('the next start will be refused'), 'the reload to say the next start is refused');
      expect(gw.output()).toMatch(/"notApplied":\["redis"\]/);
      expect(gw.child.exitCode).toBe(null);
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  }, 40_000);

  it('a Redis with appendonly yes starts without a word about persistence; switched to appendonly no, the next start is refused', async () => {
    const durable = await ownRedis(AOF);
    const config = operatorConfig({ url: durable.url });
    const gw = await startGatewayProcess(config, 30_000);
    try {
      await until(() => gw.output().includes('"msg":"listening"'), 'the listening line');
      expect(gw.output()).not.toContain('keeps nothing');
      expect(gw.output()).not.toContain('could not check');
    } finally {
      expect(await gw.stop()).toBe(0);
    }
    await durable.client.config('SET', 'appendonly', 'no');
    const err = await startGatewayProcess(config, 30_000).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^gateway exited with 1:[\s\S]*Redis keeps nothing on disk/);
  }, 60_000);

  it('a cluster primary (server.workers: 2) refuses the start too, before it forks', async () => {
    const volatile = await ownRedis(NO_PERSISTENCE);
    const err = await startGatewayProcess({ ...operatorConfig({ url: volatile.url }), server: { workers: 2 } }, 30_000).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^gateway exited with 1:/);
    expect(err?.message).toContain('Redis keeps nothing on disk');
    expect(err?.message).not.toContain('primary started its workers');
  }, 40_000);

  it('check-config says whether the start would be refused', async () => {
    const volatile = await ownRedis(NO_PERSISTENCE);
    const durable = await ownRedis(AOF);
    const [refused, accepted, kept, unreachable] = await Promise.all([
      checkConfig(configFile({ url: volatile.url })),
      checkConfig(configFile({ url: volatile.url, volatile: true })),
      checkConfig(configFile({ url: durable.url })),
      checkConfig(configFile({ url: `redis://127.0.0.1:${await refusedPort()}` })),
    ]);
    const port = (url: string) => new URL(url).port;

    expect(refused.code).toBe(1);
    expect(refused.out).toContain(
      `redis persistence: Redis keeps nothing on disk (appendonly no, save "") at 127.0.0.1:${port(volatile.url)}: the start will be refused`,
    );
    expect(refused.err).toContain('the start will be refused: Redis keeps nothing on disk');
    expect(refused.err).toContain('run Redis with appendonly yes, or set redis.volatile: true');

    expect(accepted).toMatchObject({ code: 0, err: '' });
    expect(accepted.out).toContain('redis persistence: not checked (redis.volatile: true)');

    expect(kept).toMatchObject({ code: 0, err: '' });
    expect(kept.out).toContain(`redis persistence: kept on disk (127.0.0.1:${port(durable.url)} appendonly yes, save "")`);

    expect(unreachable).toMatchObject({ code: 0, err: '' });
    expect(unreachable.out).toContain('redis persistence: could not check: Redis did not answer within 2 s');
    expect(unreachable.out).toContain('the start is refused if it keeps nothing on disk');
  }, 40_000);

  it('a Redis that refuses CONFIG (as managed services do) is not judged: the start goes on with a warning', async () => {
    const managed = await ownRedis([...NO_PERSISTENCE, '--rename-command', 'CONFIG', '']);
    const lines: string[] = [];
    const gw = await startGateway(
      makeConfig([fixture().url], {
        redis: { url: managed.url, keyPrefix: testPrefix('persist'), volatile: undefined },
        log: { level: 'warn', requests: false },
      }),
      { logStream: { write: (l: string) => void lines.push(l) } },
    );
    try {
      expect(lines.join('')).toContain('could not check whether Redis keeps anything on disk');
      expect(lines.join('')).not.toContain('Redis keeps nothing on disk');
    } finally {
      await gw.close();
    }
    const checked = await checkConfig(configFile({ url: managed.url }));
    expect(checked.code).toBe(0);
    expect(checked.out).toMatch(/redis persistence: could not check \(127\.0\.0\.1:\d+ not checked: ERR unknown command 'config'/i);
  }, 40_000);

  it('a Redis found keeping nothing after the start (a reconnect) is an error line, not an exit', async () => {
    const durable = await ownRedis(AOF);
    const lines: string[] = [];
    const app = buildServer(
      makeConfig([fixture().url], {
        redis: { url: durable.url, keyPrefix: testPrefix('persist'), volatile: undefined },
        log: { level: 'warn', requests: false },
      }),
      { logStream: { write: (l: string) => void lines.push(l) } },
    );
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      expect(lines).toEqual([]);
      await durable.client.config('SET', 'appendonly', 'no');
      await durable.client.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await until(() => lines.some((l) => l.includes('a start would be refused now')), 'the error after the reconnect');
      expect(lines.find((l) => l.includes('a start would be refused now'))).toMatch(/"level":50/);
    } finally {
      await app.close();
    }
  });

  it('the in-process start rejects with the same message', async () => {
    const volatile = await ownRedis(NO_PERSISTENCE);
    const app = buildServer(
      makeConfig([fixture().url], { redis: { url: volatile.url, keyPrefix: testPrefix('persist'), volatile: undefined } }),
    );
    try {
      await expect(app.listen({ host: '127.0.0.1', port: 0 })).rejects.toThrow(
        /^Redis keeps nothing on disk .* Not starting: run Redis with appendonly yes/,
      );
    } finally {
      await app.close();
    }
  });
});
