// A key's terms as pure logic (src/keys/terms.ts): route patterns, networks, origins, limits.
import { describe, expect, it } from 'vitest';
import { addressAllowed, networkList, normaliseOrigin, parseNetwork, routeMatcher, withLimits } from '../../src/keys/terms.js';

describe('route patterns', () => {
  it('a family pattern covers its root and everything under it, by name or by the path a short name stands for', () => {
    const tokens = routeMatcher(['tokens/*']);
    expect(tokens('tokens')).toBe(true);
    expect(tokens('tokens/{address_hash_param}/holders')).toBe(true);
    expect(tokens('token-transfers')).toBe(false);
    // `token-balances` is the name of addresses/{address_hash_param}/token-balances (routes/table.ts).
    expect(routeMatcher(['addresses/*'])('token-balances')).toBe(true);
    expect(routeMatcher(['addresses/*'])('stats')).toBe(false);
  });

  it('legacy and JSON-RPC names, exact names, and * anywhere', () => {
    expect(routeMatcher(['legacy.account.*'])('legacy.account.balance')).toBe(true);
    expect(routeMatcher(['legacy.account.*'])('legacy.stats.ethsupply')).toBe(false);
    expect(routeMatcher(['rpc.eth_get*'])('rpc.eth_getLogs')).toBe(true);
    expect(routeMatcher(['rpc.eth_get*'])('rpc.eth_call')).toBe(false);
    expect(routeMatcher(['stats'])('stats')).toBe(true);
    expect(routeMatcher(['stats'])('stats/charts/market')).toBe(false);
    // A dot or a brace in a pattern is itself, not a regular expression.
    expect(routeMatcher(['legacy.account.balanc.'])('legacy.account.balance')).toBe(false);
    expect(routeMatcher(['no-such-route'])('stats')).toBe(false);
  });
});

describe('networks', () => {
  it('parses addresses and CIDR blocks, and refuses anything else', () => {
    expect(parseNetwork('203.0.113.0/24')).toEqual({ address: '203.0.113.0', prefix: 24, family: 'ipv4' });
    expect(parseNetwork('2001:db8::1')).toEqual({ address: '2001:db8::1', prefix: 128, family: 'ipv6' });
    for (const bad of ['10.0.0.0/33', '10.0.0/8', 'example.com', '10.0.0.0/8/1', '::/129', '10.0.0.0/-1', '10.0.0.0/']) {
      expect(parseNetwork(bad), bad).toBeUndefined();
    }
  });

  it('an IPv4-mapped IPv6 client address counts as its IPv4 address', () => {
    const list = networkList(['10.0.0.0/8', '2001:db8::/32']);
    expect(addressAllowed(list, '10.1.2.3')).toBe(true);
    expect(addressAllowed(list, '::ffff:10.1.2.3')).toBe(true);
    expect(addressAllowed(list, '11.0.0.1')).toBe(false);
    expect(addressAllowed(list, '2001:db8::5')).toBe(true);
    expect(addressAllowed(list, undefined)).toBe(false);
  });
});

describe('origins', () => {
  it('normalises as browsers send an Origin, and refuses what is not one', () => {
    expect(normaliseOrigin('https://App.Example.com:443')).toBe('https://app.example.com');
    expect(normaliseOrigin('http://localhost:3000')).toBe('http://localhost:3000');
    for (const bad of ['https://a.example/path', 'ftp://a.example', 'a.example', 'https://u:p@a.example', 'https://a.example?x=1']) {
      expect(normaliseOrigin(bad), bad).toBeUndefined();
    }
  });
});

describe('limits', () => {
  it('each field the key sets wins over its plan; null ones keep the plan', () => {
    const plan = { rps: 3, credits: 100, period: 'daily' as const };
    expect(withLimits(plan, null)).toBe(plan);
    expect(withLimits(plan, { rps: 9, credits: null, period: 'monthly', costs: null })).toEqual({
      rps: 9,
      credits: 100,
      period: 'monthly',
    });
    expect(withLimits(plan, { rps: null, credits: 0, period: null, costs: { stats: 1 } })).toEqual({ rps: 3, credits: 0, period: 'daily' });
  });
});
