// server.workers > 1 with log.requests: every worker writes its access lines to the one stdout
// the primary was given. A pipe keeps a write whole only up to PIPE_BUF bytes (pipe(7)); when
// the reader is slow and the pipe is full, larger writes of two processes interleave. Every
// line must still arrive whole: the test stops reading until the pipe is full, sends traffic
// to both workers, then reads everything and parses every line.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer } from '../../fixture/explorer.js';
import { logWriteSizes, PIPE_BUF } from '../../src/app/resources.js';
import { ADDRESS } from '../support/gateway.js';
import { startGatewayProcess } from '../support/process.js';
import { connect, deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const redis = connect();
const prefix = testPrefix('worker-log');
let explorer: FixtureExplorer;

beforeAll(async () => {
  explorer = await startFixtureExplorer();
});
afterAll(async () => {
  await explorer.close();
  await deletePrefix(redis, prefix);
  await redis.quit();
});

/** One request on a connection of its own, so the primary hands each to a worker in turn. */
const get = (port: number, path: string) =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, agent: false, headers: { authorization: 'Bearer log-key', connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });

describe('access lines of several workers on one stdout', () => {
  it('arrive whole, even when the reader fell behind and the pipe was full', async () => {
    const gw = await startGatewayProcess({
      server: { workers: 2 },
      redis: { url: REDIS_URL, keyPrefix: prefix },
      chains: { '1': { name: 'Ethereum', upstreams: [explorer.url] } },
      plans: { plenty: { rps: 1_000_000, credits: 1_000_000_000 } },
      keys: [{ name: 'log', key: 'log-key', plan: 'plenty' }],
      log: { level: 'info', requests: true },
      cache: { ttlSeconds: { 'token-balances': 60 } },
    });
    try {
      const path = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
      // Stop reading: the pipe (64 KiB) and this side's buffer fill up, and the workers' writes wait.
      gw.child.stdout!.pause();
      const total = 3_000;
      let sent = 0;
      const client = async () => {
        while (sent < total) {
          sent++;
          expect(await get(gw.port, path)).toBe(200);
        }
      };
      await Promise.all(Array.from({ length: 16 }, client));
      gw.child.stdout!.resume();
      const requestLines = () =>
        gw
          .output()
          .split('\n')
          .filter((l) => l.includes('"route":"token-balances"'));
      await until(() => requestLines().length >= total, `${total} access lines`, 30_000);
      const broken = gw
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{') || l.includes('"msg"'))
        .filter((l) => {
          try {
            JSON.parse(l);
            return false;
          } catch {
            return true;
          }
        });
      expect(broken.slice(0, 3)).toEqual([]);
      expect(requestLines().length).toBe(total);
    } finally {
      await gw.stop();
    }
  }, 90_000);

  it('are written at most PIPE_BUF bytes at once in a worker, in batches of 32 KiB alone', () => {
    // LogOutput hands over `batch` bytes; sonic-boom merges batches up to `maxWrite` per write(2).
    const shared = logWriteSizes(true);
    expect(Math.max(shared.batch, shared.maxWrite)).toBeLessThanOrEqual(PIPE_BUF);
    expect(shared.minLength).toBeLessThan(shared.maxWrite); // sonic-boom refuses otherwise
    const alone = logWriteSizes(false);
    expect(alone.batch).toBe(32 * 1024);
    expect(alone.minLength).toBeLessThan(alone.maxWrite);
  });
});
