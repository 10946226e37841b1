// Issue 42, item 7: a path value spelled as a dot-segment (`%2e%2e`, `%2E.`, `.`...) is refused by
// the gateway with the route's own 422 for bad input, and reaches no service and costs nothing.
// Forwarded, `/services/bens/api/v1/domains/%2e%2e/events` was `/api/v1/domains/../events` at the
// service, which resolved it to `/api/v1/events` (RFC 3986 section 5.2.4). The requests are sent
// with their target as written: fetch would resolve the dot-segments itself before sending.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useFixtureExplorer } from '../support/explorer.js';
import { useFixtureService } from '../support/services.js';
import { DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { DOT_SEGMENT_DETAIL } from '../../src/http/url-decode.js';
import { VITALIK_ADDRESS } from '../../fixture/services-data.js';

const explorer = useFixtureExplorer();
const stats = useFixtureService('stats', { head: () => explorer().head() });
const bens = useFixtureService('bens');

const SPELLINGS = ['%2e%2e', '%2E%2E', '%2e%2E', '.%2e', '%2E.', '..', '%2e', '.'];
/** Each with a dot-segment in the place of a value the service would otherwise take as it comes. */
const TARGETS: ((dots: string) => string)[] = [
  (d) => `/services/bens/api/v1/domains/${d}/events`,
  (d) => `/services/bens/api/v1/domains/${d}`,
  (d) => `/services/bens/api/v1/1/domains/${d}/events`,
  (d) => `/services/bens/api/v1/addresses/${d}`,
  (d) => `/services/bens/api/v1/1/addresses/${d}`,
  (d) => `/1/stats-service/api/v1/lines/${d}`,
  (d) => `/1/api/v2/blocks/${d}`,
];

function raw(gw: TestGateway, target: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: target, headers: { authorization: `Bearer ${DEMO_KEY}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('dot-segments in a path value', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(
      makeConfig([explorer().url], {
        chains: { '1': { name: 'Ethereum', upstreams: [explorer().url], timeoutMs: 2_000, stats: { upstreams: [stats().url] } } },
        services: { bens: { upstreams: [bens().url] } },
      }),
    );
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('are refused with 422, in the route family body, never forwarded and never billed', async () => {
    // What the key has before: one valid call, forwarded and billed (20).
    const first = await raw(gw, `/services/bens/api/v1/addresses/${VITALIK_ADDRESS}`);
    expect(first.status).toBe(200);
    const credits = Number(first.headers['x-credits-remaining']);
    const hits = { bens: bens().hits(), stats: stats().hits(), explorer: explorer().hits() };
    let asked = 0;
    for (const spelling of SPELLINGS) {
      for (const target of TARGETS) {
        const path = target(spelling);
        const res = await raw(gw, path);
        asked++;
        expect(res.status, `${path}: ${res.body}`).toBe(422);
        // Not billed: the credits left are those before, on every answer.
        expect(res.headers['x-credits-remaining'], path).toBe(String(credits));
        const body = JSON.parse(res.body) as Record<string, unknown>;
        if (path.startsWith('/1/api/v2/')) {
          // The explorer's v2 routes: the spec's JsonErrorResponse, as for any bad value.
          expect(body, path).toMatchObject({ errors: [{ title: 'Invalid value', source: { pointer: expect.any(String) as string } }] });
        } else {
          // A Rust service's: google.rpc.Status, code 3 (INVALID_ARGUMENT), as service-check.ts answers bad input.
          expect(body, path).toEqual({ code: 3, message: expect.stringContaining(DOT_SEGMENT_DETAIL) as string, details: [] });
        }
      }
    }
    expect(asked).toBe(SPELLINGS.length * TARGETS.length);
    // Nothing reached a service or the explorer.
    expect({ bens: bens().hits(), stats: stats().hits(), explorer: explorer().hits() }).toEqual(hits);
    expect(bens().requests.filter((r) => r.path.includes('..') || r.path === '/api/v1/events')).toEqual([]);
    // And the next valid call is billed from where the key was.
    const after = await raw(gw, '/services/bens/api/v1/domains/vitalik.eth');
    expect(after.status).toBe(200);
    expect(Number(after.headers['x-credits-remaining'])).toBe(credits - 20);
  });
});
