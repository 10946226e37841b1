import { describe, expect, it } from 'vitest';
import { matchLegacy, matchV2 } from '../../src/routes/match.js';
import { ROUTE_TABLE, type V2RouteSpec } from '../../src/routes/table.js';

const v2 = ROUTE_TABLE.filter((r): r is V2RouteSpec => r.kind === 'v2');
const nameOf = (path: string) => matchV2(path)?.spec.name;

describe('matchV2', () => {
  it('matches every template with itself, giving back the values in template order', () => {
    for (const spec of v2) {
      let i = 0;
      const values: string[] = [];
      const path = spec.segments
        .slice(2)
        .map((s) => {
          if (typeof s === 'string') return s;
          const value = `v${i++}-${s.param}`;
          values.push(value);
          return value;
        })
        .join('/');
      const m = matchV2(path);
      expect([path, m?.spec.name, m?.params]).toEqual([path, spec.name, values]);
      expect(m?.spec).toBe(spec);
    }
  });

  it('prefers a literal segment to a parameter', () => {
    expect(nameOf('transactions/stats')).toBe('transactions/stats');
    expect(nameOf('transactions/watchlist')).toBe('transactions/watchlist');
    expect(nameOf('blocks/arbitrum-batch/5')).toBe('blocks/arbitrum-batch/{batch_number_param}');
    expect(nameOf('arbitrum/batches/count')).toBe('arbitrum/batches/count');
    expect(nameOf('smart-contracts/counters')).toBe('smart-contracts/counters');
    expect(matchV2('transactions/0xab')).toMatchObject({ spec: { name: 'transactions/{transaction_hash_param}' }, params: ['0xab'] });
  });

  it('falls back to the parameter when the literal branch holds no route for the rest of the path', () => {
    expect(matchV2('arbitrum/messages/claim')).toMatchObject({ spec: { name: 'arbitrum/messages/{direction}' }, params: ['claim'] });
    expect(matchV2('arbitrum/messages/to-rollup/count')).toMatchObject({
      spec: { name: 'arbitrum/messages/{direction}/count' },
      params: ['to-rollup'],
    });
    // Where the literal branch does hold a route, it wins, whatever the parameter branch holds.
    expect(matchV2('arbitrum/messages/claim/count')).toMatchObject({
      spec: { name: 'arbitrum/messages/claim/{message_id}' },
      params: ['count'],
    });
    expect(matchV2('arbitrum/messages/claim/7')).toMatchObject({ spec: { name: 'arbitrum/messages/claim/{message_id}' }, params: ['7'] });
    expect(matchV2('arbitrum/messages/withdrawals')).toMatchObject({
      spec: { name: 'arbitrum/messages/{direction}' },
      params: ['withdrawals'],
    });
    // The literal `stats` leads nowhere under transactions/stats/...: the hash branch is tried.
    expect(matchV2('transactions/stats/logs')).toMatchObject({
      spec: { name: 'transactions/{transaction_hash_param}/logs' },
      params: ['stats'],
    });
  });

  it('keeps parameter names on the route: one position, two names', () => {
    const countdown = matchV2('blocks/19/countdown');
    expect(countdown?.spec.name).toBe('blocks/{block_number_param}/countdown');
    expect(countdown?.spec.pathParams.map((p) => p.name)).toEqual(['block_number_param']);
    const block = matchV2('blocks/19/transactions');
    expect(block?.spec.name).toBe('blocks/{block_hash_or_number_param}/transactions');
    expect(block?.spec.pathParams.map((p) => p.name)).toEqual(['block_hash_or_number_param']);
  });

  it('drops empty segments, as Phoenix does: a trailing slash or a double one still matches', () => {
    expect(nameOf('tokens')).toBe('tokens');
    expect(nameOf('tokens/')).toBe('tokens');
    expect(nameOf('/tokens')).toBe('tokens');
    expect(matchV2('//blocks//19///')).toMatchObject({ spec: { name: 'blocks/{block_hash_or_number_param}' }, params: ['19'] });
    expect(nameOf('addresses/0xab/token-balances/')).toBe('token-balances');
  });

  it('gives the values back as sent, still percent-encoded', () => {
    expect(matchV2('addresses/0x%41b%2F/transactions')?.params).toEqual(['0x%41b%2F']);
    expect(matchV2('tokens/0xa/instances/%31%32/holders')?.params).toEqual(['0xa', '%31%32']);
  });

  it('finds nothing for unknown paths', () => {
    for (const path of [
      '',
      '/',
      'nope',
      'Blocks',
      'bl%6fcks',
      'blocks/19/nope',
      'addresses/0xab/token-balances/more',
      'arbitrum/messages',
      'api/v2/blocks',
      'main-page',
      'tokens/0xab/instances/1/holders/csv',
    ]) {
      expect([path, matchV2(path)]).toEqual([path, undefined]);
    }
  });
});

describe('matchLegacy', () => {
  it('finds an action by module and action, ignoring case', () => {
    expect(matchLegacy('token', 'getToken')).toMatchObject({ name: 'legacy.getToken' });
    expect(matchLegacy('TOKEN', 'GETTOKENHOLDERS')).toMatchObject({ name: 'legacy.getTokenHolders' });
    expect(matchLegacy('Logs', 'getlogs')).toMatchObject({ name: 'legacy.logs.getLogs', module: 'logs', action: 'getLogs' });
    expect(matchLegacy('account', 'txlist')).toMatchObject({ name: 'legacy.account.txlist', kind: 'legacy' });
  });

  it('tells an unknown module from an unknown action', () => {
    expect(matchLegacy('nosuchmodule', 'getToken')).toEqual({ error: 'unknown-module' });
    expect(matchLegacy('token', 'noSuchAction')).toEqual({ error: 'unknown-action' });
    expect(matchLegacy('', '')).toEqual({ error: 'unknown-module' });
  });

  it('serves the contract verification flow and the proxy module as routes of their own kinds', () => {
    expect(matchLegacy('contract', 'verifysourcecode')).toMatchObject({
      kind: 'verify',
      write: true,
      name: 'legacy.contract.verifysourcecode',
    });
    expect(matchLegacy('CONTRACT', 'CheckVerifyStatus')).toMatchObject({ kind: 'verify', write: false });
    expect(matchLegacy('proxy', 'eth_call')).toMatchObject({ kind: 'proxy', method: 'eth_call', name: 'legacy.proxy.eth_call' });
    expect(matchLegacy('proxy', 'eth_nope')).toEqual({ error: 'unknown-action' });
    expect(matchLegacy('contract', 'getabi')).toMatchObject({ name: 'legacy.contract.getabi' });
  });
});
