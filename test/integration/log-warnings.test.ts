// Warnings and errors are written at once, not with the next batch of request lines
// (app/resources.ts, observability/log-output.ts): through the gateway's real destination
// (sonic-boom, to a file here), with the batch interval an hour long, so a line that reaches the
// file before close() did not wait for it. Request lines stay batched, in their order.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/app/server.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, refusedPort } from '../support/gateway.js';
import { until } from '../support/wait.js';

const BALANCES = `/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();
const dir = mkdtempSync(join(tmpdir(), 'egw-log-warnings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Line {
  msg: string;
  level: number;
  chain?: string;
  status?: number;
}

describe('a warning', () => {
  it('is written at once, after the request lines before it; the request lines after it wait for their batch', async () => {
    const file = join(dir, 'gateway.log');
    const config = makeConfig([fixture().url], {
      chains: {
        '1': { name: 'Ethereum', upstreams: [fixture().url], timeoutMs: 2_000 },
        '2': { name: 'Dead', upstreams: [`http://127.0.0.1:${await refusedPort()}`], timeoutMs: 2_000 },
      },
      health: { probeIntervalMs: 3_600_000 },
      log: { level: 'info', requests: true },
      metrics: { port: undefined, host: '127.0.0.1' },
    });
    const app = buildServer(config, { logFile: file, logFlushMs: 3_600_000 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
    const lines = (): Line[] =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Line);
    try {
      expect((await get(`/1${BALANCES}`)).status).toBe(200);
      // The explorer of chain 2 refuses the connection: an upstream failure, logged as a warning
      // during the request, before its request line.
      expect((await get(`/2${BALANCES}`)).status).toBeGreaterThanOrEqual(500);
      const written = await until(() => {
        const now = lines();
        return now.some((l) => l.msg === 'upstream failure') && now;
      }, 'the warning in the log file');
      const requests = written.filter((l) => l.msg === 'request');
      const warning = written.findIndex((l) => l.msg === 'upstream failure');
      expect(written[warning]).toMatchObject({ level: 40 });
      // The request of chain 1, batched before the warning, is written ahead of it; the request
      // line of chain 2 came after the warning and waits for its batch.
      expect(requests.map((l) => l.chain)).toEqual(['1']);
      expect(written.findIndex((l) => l.msg === 'request')).toBeLessThan(warning);
      app.gateway.flushLogs();
      const all = lines();
      expect(all.filter((l) => l.msg === 'request').map((l) => [l.chain, l.status! >= 500])).toEqual([
        ['1', false],
        ['2', true],
      ]);
      expect(all.findIndex((l) => l.msg === 'request' && l.chain === '2')).toBeGreaterThan(
        all.findIndex((l) => l.msg === 'upstream failure'),
      );
    } finally {
      await app.close();
    }
  });
});
