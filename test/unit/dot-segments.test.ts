// Issue 42, item 7: a path value that decodes to `.` or `..` is a dot-segment at the server it is
// forwarded to (RFC 3986 section 5.2.4), so `/services/bens/api/v1/domains/%2e%2e/events` would
// reach the service as `/api/v1/events`. Every route of the table whose path takes a value from the
// client (the explorer's v2 and its own services, the stats service, BENS, metadata, multichain) is
// asked with each spelling of one, in every path parameter: each is refused, none gives a path.
import { describe, expect, it } from 'vitest';
import { DOT_SEGMENT_DETAIL, isDotSegment } from '../../src/http/url-decode.js';
import { resolve } from '../../src/routes/resolve.js';
import { ROUTE_TABLE } from '../../src/routes/table.js';

const chains = new Set(['1']);
const SPELLINGS = ['%2e%2e', '%2E%2E', '%2e%2E', '.%2e', '%2E.', '..', '%2e', '%2E', '.'];

/** Every route with a path parameter, as a gateway path with `value` in each parameter. */
const paths = ROUTE_TABLE.flatMap((spec) => {
  if (spec.kind === 'v2')
    return spec.pathParams.length > 0 ? [{ name: spec.name, path: (v: string) => `/1${fill(spec.template, v)}` }] : [];
  if (spec.kind !== 'service' || spec.pathParams.length === 0) return [];
  const chainScoped = spec.documentPath.startsWith('/{chain_id}/');
  const rest = chainScoped ? spec.documentPath.slice('/{chain_id}'.length) : spec.documentPath;
  // Only a path with a parameter of its own (the gateway's chain segment is matched, not forwarded).
  return /\{[^}]+\}/.test(rest) ? [{ name: spec.name, path: (v: string) => `${chainScoped ? '/1' : ''}${fill(rest, v)}` }] : [];
});
function fill(template: string, value: string): string {
  return template.replace(/\{[^}]+\}/g, value);
}

describe('dot-segments in path values', () => {
  it('are `.` and `..` only, once decoded', () => {
    for (const s of ['.', '..']) expect(isDotSegment(s)).toBe(true);
    for (const s of ['...', '.a', 'a.', '', '%2e', '..%2f', '. ', 'vitalik.eth']) expect(isDotSegment(s)).toBe(false);
  });

  it('are looked for on every route family that forwards a value of the path', () => {
    const kinds = new Set(
      ROUTE_TABLE.filter((s) => paths.some((p) => p.name === s.name)).map((s) => (s.kind === 'service' ? s.service : s.kind)),
    );
    // The explorer's own services (`api/v1/search`, `api/legacy/...`) and metadata take no path value.
    expect([...kinds].sort()).toEqual(['bens', 'multichain', 'stats', 'v2']);
    expect(paths.length).toBeGreaterThan(100);
  });

  it.each(SPELLINGS)('%s is refused in every path parameter, before anything is forwarded', (spelling) => {
    for (const { name, path } of paths) {
      const url = path(spelling);
      const r = resolve(url, chains);
      expect(r.kind, url).toBe('route');
      if (r.kind !== 'route') continue;
      const v = r.validation;
      expect(v.ok, `${name}: ${url}`).toBe(false);
    }
    // A value the route's own check would let through is refused as a dot-segment (an address
    // route's pattern refuses it first).
    const events = resolve(`/services/bens/api/v1/domains/${spelling}/events`, chains);
    expect(events.kind === 'route' && events.validation).toEqual({ ok: false, serviceMessage: `invalid name: ${DOT_SEGMENT_DETAIL}` });
    const lines = resolve(`/1/stats-service/api/v1/lines/${spelling}`, chains);
    expect(lines.kind === 'route' && lines.validation).toEqual({ ok: false, serviceMessage: `invalid name: ${DOT_SEGMENT_DETAIL}` });
  });

  it('leaves values with dots that are not dot-segments alone', () => {
    const r = resolve('/services/bens/api/v1/domains/vitalik.eth/events', chains);
    expect(r.kind === 'route' && r.validation).toEqual({ ok: true, upstreamPath: '/api/v1/domains/vitalik.eth/events' });
    const three = resolve('/services/bens/api/v1/domains/.../events', chains);
    expect(three.kind === 'route' && three.validation).toEqual({ ok: true, upstreamPath: '/api/v1/domains/.../events' });
  });
});
