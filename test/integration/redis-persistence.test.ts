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
import { testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const fixture = useFixtureExplorer();
const recording = () => {
  const warnings: string[] = [];
  const log = { warn: (...args: unknown[]) => void warnings.push(String(args[1])) } as unknown as Pick<Logger, 'warn'>;
  return { warnings, log };
};

/** A redis-server of this test's own, with the persistence `args` say. */
async function ownRedis(args: string[]): Promise<{ url: string; client: Redis; stop(): void }> {
  const port = await closedPort();
  const dir = mkdtempSync(`${tmpdir()}/egw-persist-`);
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...args], { stdio: 'ignore' });
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: (n) => (n > 50 ? null : 100) });
  client.on('error', () => undefined); // refused until the server is up
  await until(async () => (await client.ping().catch(() => '')) === 'PONG', 'redis-server to start');
  return {
    url: `redis://127.0.0.1:${port}`,
    client,
    stop() {
      client.disconnect();
      server.kill();
    },
  };
}

describe('Redis persistence', () => {
  it('a Redis without AOF or snapshots is named in a warning when the gateway connects', async () => {
    const volatile = await ownRedis(['--appendonly', 'no', '--save', '']);
    try {
      const probe = recording();
      await warnIfVolatile(volatile.client, probe.log);
      expect(probe.warnings).toHaveLength(1);
      const lines: string[] = [];
      const gw = await startGateway(
        makeConfig([fixture().url], {
          redis: { url: volatile.url, keyPrefix: testPrefix('persist') },
          log: { level: 'warn', requests: false },
        }),
        { logStream: { write: (l: string) => void lines.push(l) } },
      );
      try {
        await until(() => lines.some((l) => l.includes('Redis keeps nothing on disk')), 'the warning');
      } finally {
        await gw.close();
      }
    } finally {
      volatile.stop();
    }
  });

  it('a Redis with appendonly yes gets no warning', async () => {
    const durable = await ownRedis(['--appendonly', 'yes', '--save', '']);
    try {
      const probe = recording();
      await warnIfVolatile(durable.client, probe.log);
      expect(probe.warnings).toEqual([]);
      await durable.client.config('SET', 'appendonly', 'no');
      await warnIfVolatile(durable.client, probe.log);
      expect(probe.warnings).toHaveLength(1);
    } finally {
      durable.stop();
    }
  });
});
