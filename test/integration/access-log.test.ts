// The access log, in process: one line per finished request, whichever way it ended; the facts
// of a shared upstream fetch reach every request that waited on it; lines can be turned on and
// off by a reload.
import { afterEach, describe, expect, it } from 'vitest';
import { useFixtureExplorer } from '../support/explorer.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { until } from '../support/wait.js';

const BALANCES = `/1/api/v2/addresses/${ADDRESS}/token-balances`;
const fixture = useFixtureExplorer();

interface Line {
  msg: string;
  reqId: string;
  status: number;
  cache?: string;
  upstream?: string;
  upstreamMs?: number;
  path: string;
  key?: string;
}

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
  fixture().reset();
});

async function logging(requests: boolean, clock?: { now: number }) {
  const lines: Line[] = [];
  const config = (on: boolean) =>
    makeConfig([fixture().url], { log: { level: 'info', requests: on }, cache: { ttlSeconds: { 'token-balances': 15 } } });
  gw = await startGateway(config(requests), {
    logStream: { write: (l: string) => void lines.push(JSON.parse(l) as Line) },
    ...(clock ? { now: () => clock.now } : {}),
  });
  const requestLines = () => lines.filter((l) => l.msg === 'request');
  return { gw, lines, requestLines, config };
}

describe('access log', () => {
  it('every request that waited on one upstream fetch is told which upstream answered, and how fast', async () => {
    const { gw, requestLines } = await logging(true);
    const counters = gw.app.gateway.state().cache.counters;
    const release = fixture().hold();
    const pending = Array.from({ length: 5 }, () => gw.get(BALANCES));
    await until(() => counters.coalesced === 4, 'four requests to wait on the first');
    release();
    await Promise.all(pending);
    const lines = requestLines();
    expect(lines).toHaveLength(5);
    for (const line of lines) {
      expect(line).toMatchObject({ status: 200, cache: 'MISS', upstream: new URL(fixture().url).host });
      expect(line.upstreamMs).toBe(lines[0]!.upstreamMs);
    }
    expect(new Set(lines.map((l) => l.reqId)).size).toBe(5);
  });

  it('a background refresh writes nothing into the request that started it, which was answered STALE', async () => {
    const clock = { now: Date.now() };
    const { gw, requestLines } = await logging(true, clock);
    await gw.get(BALANCES);
    clock.now += 20_000;
    const stale = await gw.get(BALANCES);
    expect(stale.headers.get('x-cache')).toBe('STALE');
    await gw.app.gateway.state().cache.idle();
    const line = requestLines().at(-1)!;
    expect(line).toMatchObject({ status: 200, cache: 'STALE' });
    expect(line.upstream).toBeUndefined();
    expect(fixture().hits()).toBe(2);
  });

  it('lines name the key, never carry it, and a reload turns them on and off without a restart', async () => {
    const { gw, requestLines, lines, config } = await logging(false);
    await gw.get(BALANCES);
    expect(requestLines()).toHaveLength(0);
    expect(gw.app.gateway.reload(config(true))).toEqual([]);
    await gw.get(`${BALANCES}?apikey=${DEMO_KEY}`, { key: null });
    await gw.get(`${BALANCES}?apikey=not-a-key-at-all`, { key: null });
    expect(requestLines().map((l) => [l.status, l.key, l.path])).toEqual([
      [200, 'demo', BALANCES],
      [401, undefined, BALANCES],
    ]);
    expect(JSON.stringify(lines)).not.toContain(DEMO_KEY);
    expect(JSON.stringify(lines)).not.toContain('not-a-key-at-all');
    gw.app.gateway.reload(config(false));
    await gw.get(BALANCES);
    expect(requestLines()).toHaveLength(2);
  });
});
