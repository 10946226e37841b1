// The one billing rule of every route family (src/request/send.ts billable, docs/clients.md
// "What is billed"), as a table; and the metadata service's `addresses`, checked before it is
// forwarded so that a bad address is a free refusal rather than the service's billed 400.
import { describe, expect, it } from 'vitest';
import { billable, chargedFor, type AnswerSource } from '../../src/billing/rule.js';
import { resolve, type Route } from '../../src/routes/resolve.js';

const A = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

describe('billable: which answers cost credits', () => {
  const table: [status: number, source: AnswerSource, billed: boolean][] = [
    [200, 'upstream', true],
    [200, 'gateway', true], // a search across chains the gateway merged, a proxy action's answer
    [204, 'upstream', true],
    [404, 'upstream', true], // the explorer looked and found nothing
    [404, 'gateway', false], // the gateway's own "no such route"
    [400, 'upstream', false],
    [422, 'upstream', false],
    [422, 'gateway', false], // validation, a bad chain_id or page_token of a cluster search
    [400, 'gateway', false],
    [401, 'upstream', false],
    [403, 'upstream', false],
    [410, 'upstream', false],
    [413, 'gateway', false],
    [402, 'gateway', false],
    [429, 'gateway', false],
    [499, 'gateway', false], // the client went away
    [500, 'upstream', false],
    [502, 'gateway', false],
    [503, 'gateway', false],
    [504, 'gateway', false],
    [301, 'upstream', false],
  ];
  it.each(table)('%i from the %s: billed %s', (status, source, expected) => {
    expect(billable(status, source)).toBe(expected);
    expect(chargedFor(20, status, source)).toBe(expected ? 20 : 0);
  });
  it('charges all of a decision or none of it', () => {
    expect(chargedFor(0, 200, 'upstream')).toBe(0);
    expect(chargedFor(7, 404, 'upstream')).toBe(7);
    expect(chargedFor(7, 422, 'upstream')).toBe(0);
  });
});

describe("the metadata service's addresses", () => {
  const route = (url: string): Route => {
    const r = resolve(url, new Set(['1']));
    if (r.kind !== 'route') throw new Error(`expected a route, got ${r.code}`);
    return r;
  };
  it('refuses a list with a bad address, unbilled, in the services’ own error shape', () => {
    for (const bad of ['not-an-address', `${A},nope`, `${A},0x12`, '0xZZ']) {
      for (const path of ['/services/metadata/api/v1/metadata', '/services/metadata/api/v1/reputation']) {
        expect(route(`${path}?addresses=${encodeURIComponent(bad)}`).validation).toEqual({
          ok: false,
          serviceMessage: `invalid addresses: expected comma-separated addresses (0x and 40 hex digits), got ${JSON.stringify(bad)}`,
        });
      }
    }
  });
  it('forwards a good list as given, spaces and empty items as the service reads them', () => {
    expect(route(`/services/metadata/api/v1/metadata?addresses=${A},${A.toLowerCase()}&chainId=1`).validation).toEqual({
      ok: true,
      upstreamPath: `/api/v1/metadata?addresses=${encodeURIComponent(`${A},${A.toLowerCase()}`)}&chainId=1`,
    });
    expect(route(`/services/metadata/api/v1/reputation?addresses=${A},%20,`).validation).toMatchObject({ ok: true });
    expect(route('/services/metadata/api/v1/reputation?addresses=').validation).toMatchObject({ ok: true });
  });
});
