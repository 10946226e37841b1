// A key typed into the path never reaches the log (issue 23): after `;`, `&` or `/`, under any
// spelling and case of `apikey` the gateway takes (auth/query-key.ts) and the usual others, percent-
// encoded or not, and anything shaped like a gateway secret wherever it stands; on every line
// the gateway writes for the request, not only its access line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../src/keys/runtime.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';

const fixture = useFixtureExplorer();
/** A key as the gateway makes them: `egw_` and 43 base-62 characters. */
const SECRET = newSecret().secret;
const SCANNER = /egw_[A-Za-z0-9]{43}/;

interface Line {
  msg: string;
  path?: string;
}

let gw: TestGateway;
const raw: string[] = [];
beforeAll(async () => {
  gw = await startGateway(makeConfig([fixture().url], { log: { level: 'info', requests: true } }), {
    logStream: { write: (l: string) => void raw.push(l) },
  });
});
afterAll(() => gw.close());

/** Every line written while `targets` were sent, once the access lines are out. */
async function logged(targets: string[]): Promise<{ all: string; paths: string[] }> {
  const from = raw.length;
  for (const t of targets) await gw.raw(t);
  // Access lines are written at the end of the event-loop turn (app/access-log.ts).
  await new Promise((r) => setTimeout(r, 50));
  gw.app.gateway.flushLogs();
  const lines = raw.slice(from);
  const requests = lines.map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request');
  expect(requests).toHaveLength(targets.length);
  return { all: lines.join(''), paths: requests.map((l) => l.path!) };
}

describe('a key typed into the path', () => {
  it('is never logged after ;apikey= or &apikey=, in any case or spelling, encoded or not', async () => {
    const cases = [
      `/1/api/v2/blocks/1&apikey=${DEMO_KEY}`,
      `/1/api/v2/blocks/1;apikey=${DEMO_KEY}`,
      `/1/api/v2/blocks/1;ApiKey=${DEMO_KEY}/transactions`,
      `/1/api/v2/blocks/1;APIKEY=${DEMO_KEY}`,
      `/1/api/v2/blocks/1&api_key=${DEMO_KEY}`,
      `/1/api/v2/blocks/1;Api-Key=${DEMO_KEY}`,
      `/1/api/v2/blocks/%61pikey=${DEMO_KEY}`,
      `/1/api/v2/blocks/1%3Bapikey%3D${DEMO_KEY}`,
      `/1/api/v2/blocks/1;apikey:${DEMO_KEY}`,
      `/1/api/v2/apikey/${DEMO_KEY}`,
      `/1/api/eth-rpc;apikey=${DEMO_KEY}`,
      `/1;apikey=${DEMO_KEY}/api/v2/blocks/1`,
      `/1/api;apikey=${DEMO_KEY}?module=account&action=balance&address=0x0`,
    ];
    const { all, paths } = await logged(cases);
    expect(all).not.toContain(DEMO_KEY);
    // What is left says where the key was: the path up to it, the name as sent, then [Redacted].
    expect(paths[0]).toBe('/1/api/v2/blocks/1&apikey=[Redacted]');
    expect(paths[1]).toBe('/1/api/v2/blocks/1;apikey=[Redacted]');
    expect(paths[2]).toBe('/1/api/v2/blocks/1;ApiKey=[Redacted]');
    expect(paths[7]).toBe('/1/api/v2/blocks/1%3Bapikey%3D[Redacted]');
  });

  it('a gateway secret is never logged wherever it stands, bare or percent-encoded', async () => {
    const encoded = [...SECRET].map((c, i) => (i % 3 === 0 ? `%${c.charCodeAt(0).toString(16).toUpperCase()}` : c)).join('');
    const cases = [
      `/1/api/v2/blocks/${SECRET}`,
      `/1/api/v2/addresses/${SECRET}/transactions`,
      `/${SECRET}`,
      `/1/api/v2/blocks/x${SECRET}y`,
      `/1/api/v2/blocks/${encoded}`,
      `/1/api/v2/blocks/1;token=${SECRET}`,
    ];
    const { all, paths } = await logged(cases);
    expect(all).not.toMatch(SCANNER);
    expect(all).not.toContain(SECRET.slice(4, 30));
    expect(paths[1]).toBe('/1/api/v2/addresses/egw_[Redacted]/transactions');
    expect(paths[4]).toBe('/1/api/v2/blocks/egw_[Redacted]');
  });

  it('the /key/KEY/ prefix, which is a key (auth/path-key.ts), is taken out before any line: the path is logged without it (issue 41)', async () => {
    const cases = [`/key/${DEMO_KEY}/1/api/v2/blocks/1`, `/key/${DEMO_KEY}/1/api?module=contract&action=checkverifystatus&guid=0`];
    const { all, paths } = await logged(cases);
    expect(all).not.toContain(DEMO_KEY);
    expect(paths).toEqual(['/1/api/v2/blocks/1', '/1/api']);
  });

  it('a path with no key in it is logged as it was sent', async () => {
    const cases = [
      '/1/api/v2/blocks/1',
      '/1/api/v2/addresses/0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045/token-balances',
      '/1/api/v2/keys%20x',
    ];
    const { paths } = await logged(cases);
    expect(paths).toEqual(cases);
  });
});
