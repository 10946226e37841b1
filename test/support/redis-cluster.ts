// A real Redis Cluster on loopback for the tests that need one: three redis-server masters in
// cluster mode, slots split between them, joined with CLUSTER MEET (no redis-cli needed).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { closedPort } from './gateway.js';

export interface TestCluster {
  urls: string[];
  stop(): Promise<void>;
}

const SLOTS = 16384;

/**
 * REDIS_CLUSTER_URLS (comma-separated seed nodes of a running cluster) if set; otherwise a
 * cluster of our own, which needs redis-server on PATH.
 */
export async function startCluster(nodes = 3): Promise<TestCluster> {
  const given = process.env.REDIS_CLUSTER_URLS;
  if (given) return { urls: given.split(',').map((u) => u.trim()), stop: () => Promise.resolve() };
  const dir = mkdtempSync(join(tmpdir(), 'egw-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  for (let i = 0; i < nodes; i++) {
    const port = await closedPort();
    ports.push(port);
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
    ];
    children.push(spawn('redis-server', [...args, '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' }));
  }
  const stop = async () => {
    for (const c of children) c.kill();
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve())));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const clients = await Promise.all(ports.map((port) => connectWhenUp(port)));
    const per = Math.ceil(SLOTS / nodes);
    await Promise.all(
      clients.map((c, i) => {
        const slots = Array.from({ length: Math.min(per, SLOTS - i * per) }, (_, j) => i * per + j);
        return c.call('CLUSTER', 'ADDSLOTS', ...slots.map(String));
      }),
    );
    for (const port of ports.slice(1)) await clients[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(port));
    for (let i = 0; i < 100; i++) {
      const infos = await Promise.all(clients.map((c) => c.call('CLUSTER', 'INFO') as Promise<string>));
      if (infos.every((info) => info.includes('cluster_state:ok'))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const c of clients) c.disconnect();
    return { urls: ports.map((p) => `redis://127.0.0.1:${p}`), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function connectWhenUp(port: number): Promise<Redis> {
  for (let i = 0; i < 50; i++) {
    const c = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      return c;
    } catch {
      c.disconnect();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`redis-server on port ${port} did not start (is redis-server on PATH?)`);
}
