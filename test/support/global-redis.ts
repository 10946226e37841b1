// vitest globalSetup: the suites need a real Redis. REDIS_URL if set; else 127.0.0.1:6379 if it
// answers; else a redis-server from PATH on a free port, for this run only.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { closedPort } from './gateway.js';

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

let server: ChildProcess | undefined;

export async function setup(): Promise<void> {
  const given = process.env.REDIS_URL;
  if (given) {
    if (!(await answers(given))) throw new Error(`REDIS_URL=${given} does not answer PING`);
    return;
  }
  if (await answers('redis://127.0.0.1:6379')) {
    process.env.REDIS_URL = 'redis://127.0.0.1:6379';
    return;
  }
  const port = await closedPort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const failed = new Promise<never>((_, reject) =>
    server!.once('error', (err) =>
      reject(new Error(`npm test needs a Redis: set REDIS_URL, run one on 127.0.0.1:6379, or put redis-server on PATH (${err.message})`)),
    ),
  );
  const url = `redis://127.0.0.1:${port}`;
  const up = (async () => {
    for (let i = 0; i < 50; i++) {
      if (await answers(url)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`redis-server on port ${port} did not answer`);
  })();
  await Promise.race([up, failed]);
  process.env.REDIS_URL = url;
}

export function teardown(): void {
  server?.kill();
}
