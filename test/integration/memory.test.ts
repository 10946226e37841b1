// Big answers do not stay in memory: after many answers of several megabytes (passed on, too big
// to keep: the in-process tier keeps no entry above a sixteenth of cache.maxBytes), the memory
// the process holds returns to what it held before, measured after a full collection. Buffer
// memory (arrayBuffers) is where an answer lives; the JavaScript heap is measured with it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADDRESS, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;
// One body, made once: the explorer's own memory is part of the baseline.
const BODY = Buffer.from(JSON.stringify([{ value: 'x'.repeat(6 * MB) }]));
const SMALL = Buffer.from(JSON.stringify([{ value: 'x'.repeat(MB) }]));
const server = createServer((req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.includes('token-balances') ? SMALL : BODY),
);
let gw: TestGateway;

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw = await startGateway(
    makeConfig([url], {
      chains: { '1': { name: 'Ethereum', upstreams: [url], timeoutMs: 10_000, maxResponseBytes: 16 * MB } },
      cache: { maxBytes: 32 * MB, ttlSeconds: { 'token-balances': 60, 'blocks/{block_hash_or_number_param}': 60 } },
    }),
  );
});
afterAll(async () => {
  await gw.close();
  await new Promise((r) => server.close(r));
});

const held = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { buffers: m.arrayBuffers, heap: m.heapUsed, rss: m.rss };
};
/** Distinct requests, `parallel` at a time, each answer read whole by the client. */
async function bigAnswers(count: number, parallel: number, from: number): Promise<void> {
  for (let i = 0; i < count; i += parallel) {
    await Promise.all(
      Array.from({ length: parallel }, async (_, j) => {
        const res = await gw.get(`/1/api/v2/blocks/${from + i + j}`);
        expect(res.status).toBe(200);
        expect((await res.arrayBuffer()).byteLength).toBe(BODY.length);
      }),
    );
  }
}

it('returns to its baseline after 40 answers of 6 MB', async () => {
  await bigAnswers(4, 2, 1); // warm: pools, parsers, code
  expect(gw.app.gateway.state().cache.bytes).toBe(0); // none kept: each is above the 2 MiB entry bound
  const before = held();
  await bigAnswers(40, 4, 100);
  // 40 answers of 6 MB went through (240 MB); less than one answer's worth may remain once the
  // last writes have let go of their buffers (waited for, not slept on).
  const after = await until(() => {
    const now = held();
    return now.buffers - before.buffers < 6 * MB && now.heap - before.heap < 6 * MB ? now : undefined;
  }, 'memory to return to its baseline');
  expect(after.buffers - before.buffers).toBeLessThan(6 * MB);
  expect(gw.app.gateway.state().cache.bytes).toBe(0);
}, 60_000);

it('keeps an answer below the entry bound: the bound is not a cache turned off', async () => {
  const path = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
  expect((await gw.get(path)).status).toBe(200);
  expect(gw.app.gateway.state().cache.bytes).toBeGreaterThan(MB);
  expect((await gw.get(path)).headers.get('x-cache')).toBe('HIT');
});
