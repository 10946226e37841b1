// A Redis that keeps nothing on disk forgets every balance when it restarts: the gateway says so
// at start (and after each reconnect), and stays quiet about one that persists.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { warnIfVolatile } from '../../src/app/resources.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { closedPort, makeConfig, startGateway } from '../support/gateway.js';
import { REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const fixture = useFixtureExplorer();
const recording = () => {
  const warnings: string[] = [];
  const log = { warn: (...args: unknown[]) => void warnings.push(String(args[1])) } as unknown as Pick<Logger, 'warn'>;
  return { warnings, log };
};

describe('Redis persistence', () => {
  it('a Redis without AOF or snapshots is named in a warning when the gateway connects', async () => {
    // The test Redis runs with --save '' --appendonly no (.ci/run, test/support/global-redis.ts).
    const redis = new Redis(REDIS_URL);
    const probe = recording();
    try {
      const [, appendonly] = (await redis.config('GET', 'appendonly')) as [string, string];
      const [, save] = (await redis.config('GET', 'save')) as [string, string];
      await warnIfVolatile(redis, probe.log);
      expect(probe.warnings.length).toBe(appendonly === 'no' && save === '' ? 1 : 0);
    } finally {
      redis.disconnect();
    }
    const lines: string[] = [];
    const gw = await startGateway(
      makeConfig([fixture().url], { redis: { url: REDIS_URL, keyPrefix: testPrefix('persist') }, log: { level: 'warn', requests: false } }),
      {
        logStream: { write: (l: string) => void lines.push(l) },
      },
    );
    try {
      if (probe.warnings.length === 1) await until(() => lines.some((l) => l.includes('Redis keeps nothing on disk')), 'the warning');
    } finally {
      await gw.close();
    }
  });

  it('a Redis with appendonly yes gets no warning', async () => {
    const port = await closedPort();
    const dir = mkdtempSync(`${tmpdir()}/egw-aof-`);
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--save', '', '--dir', dir],
      { stdio: 'ignore' },
    );
    const redis = new Redis({ port, host: '127.0.0.1', retryStrategy: (n) => (n > 50 ? null : 100) });
    redis.on('error', () => undefined); // refused until the server is up
    try {
      await until(async () => (await redis.ping().catch(() => '')) === 'PONG', 'redis-server to start');
      const probe = recording();
      await warnIfVolatile(redis, probe.log);
      expect(probe.warnings).toEqual([]);
      await redis.config('SET', 'appendonly', 'no');
      await warnIfVolatile(redis, probe.log);
      expect(probe.warnings).toHaveLength(1);
    } finally {
      redis.disconnect();
      server.kill();
    }
  });
});
