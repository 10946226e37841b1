// The access line is built by hand (app/access-log.ts); it must be the line pino would write for
// the same fields: same keys in the same order, same values, escaped the same way.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { accessLog } from '../../src/app/access-log.js';
import { LogOutput } from '../../src/observability/log-output.js';
import type { ApiKey } from '../../src/keys/ring.js';
import { RequestContext } from '../../src/request/context.js';

function pinoText(fields: Record<string, unknown>): string {
  let out = '';
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => void ((out += chunk.toString()), done()) });
  pino({ level: 'info' }, sink).info(fields, 'request');
  // pino writes synchronously to a plain stream's write().
  return out;
}

/** The line pino writes for a request's fields (the path without its query). */
function pinoLine(ctx: RequestContext, method: string, url: string, ms: unknown): string {
  const q = url.indexOf('?');
  return pinoText({
    reqId: ctx.id,
    method,
    path: q === -1 ? url : url.slice(0, q),
    status: ctx.status,
    chain: ctx.chainId,
    route: ctx.route,
    key: ctx.key?.name,
    cache: ctx.cache,
    upstream: ctx.upstream,
    upstreamMs: ctx.upstreamMs,
    ms,
  });
}

const built = (ctx: RequestContext, method: string, url: string, level = 'info') => {
  const lines: string[] = [];
  const out = new LogOutput({ write: (chunk) => void lines.push(chunk.toString('utf8')) }, 4096, true);
  accessLog({ isLevelEnabled: (l: string) => (level === 'info' ? true : l !== 'info') }, out)(ctx, method, url);
  return lines;
};

describe('the access line', () => {
  it.each([
    ['a cache hit', { cache: 'HIT' }, '/1/api/v2/addresses/0xab/token-balances?apikey=secret-key'],
    ['a miss with its upstream', { cache: 'MISS', upstream: 'eth.blockscout.com', upstreamMs: 12.345 }, '/1/api/v2/blocks/1'],
    ['a refusal before any route', { chainId: undefined, route: undefined, key: undefined }, '/x/"quoted"\\path/é\u2028?q'],
    ['control characters and a long path', { cache: 'STALE', upstreamMs: 0.05 }, `/1/api/v2/blocks/${'9'.repeat(3000)}\u0001\t😀`],
  ])('%s is what pino writes for the same fields', (_what, over, url) => {
    const ctx = Object.assign(new RequestContext('3f9c2a7d41b0e8c5-1', performance.now()), {
      chainId: '1',
      route: 'token-balances',
      key: { name: 'acme "corp"' } as ApiKey,
      status: 200,
      ...over,
    });
    const [line] = built(ctx, 'GET', url);
    expect(line?.endsWith('}\n')).toBe(true);
    const mine = JSON.parse(line!) as Record<string, unknown>;
    const text = pinoLine(ctx, 'GET', url, mine.ms);
    // Byte for byte, but for the time each was written at.
    const at = /^\{"level":30,"time":\d+,/;
    expect(line!.replace(at, '')).toBe(text.replace(at, ''));
    const theirs = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(mine)).toEqual(Object.keys(theirs));
    expect({ ...mine, time: 0 }).toEqual({ ...theirs, time: 0 });
    expect(typeof mine.time).toBe('number');
    expect(JSON.stringify(mine)).not.toContain('secret-key');
  });

  it("repeats a target's line middle only for the same facts: each line is still what pino writes", () => {
    const lines: string[] = [];
    const out = new LogOutput({ write: (chunk) => void lines.push(chunk.toString('utf8')) }, 4096, true);
    const log = accessLog({ isLevelEnabled: () => true }, out);
    const target = '/1/api/v2/addresses/0xab/token-balances';
    const acme = { name: 'acme' } as ApiKey;
    // Each line differs from the one before it in one fact at most, so that a middle reused
    // for a fact it was not written for shows.
    const base = { status: 200, cache: 'HIT' as const, key: acme, chainId: '1', route: 'token-balances' as const };
    const cases: [string, Partial<RequestContext>, string][] = [
      ['GET', base, target],
      ['GET', base, target],
      ['GET', { ...base, status: 206 }, target],
      ['GET', base, target],
      ['GET', { ...base, cache: 'STALE' }, target],
      ['GET', { ...base, cache: 'STALE', key: { name: 'other' } as ApiKey }, target],
      ['HEAD', { ...base, cache: 'STALE', key: { name: 'other' } as ApiKey }, target],
      ['HEAD', { ...base, cache: 'STALE', key: { name: 'other' } as ApiKey, chainId: '10' }, target],
      ['HEAD', { ...base, cache: 'STALE', key: { name: 'other' } as ApiKey, chainId: '10', route: 'transactions' }, target],
      [
        'HEAD',
        {
          ...base,
          cache: 'STALE',
          key: { name: 'other' } as ApiKey,
          chainId: '10',
          route: 'transactions',
          upstream: 'eth.blockscout.com',
          upstreamMs: 3.5,
        },
        target,
      ],
      ['GET', base, `${target}?apikey=secret-key`],
      ['GET', base, target],
    ];
    for (const [method, over, url] of cases) {
      const ctx = Object.assign(new RequestContext('id-1', performance.now()), over);
      log(ctx, method, url);
      const mine = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
      const theirs = JSON.parse(pinoLine(ctx, method, url, mine.ms)) as Record<string, unknown>;
      expect(Object.keys(mine)).toEqual(Object.keys(theirs));
      expect({ ...mine, time: 0, pid: 0, hostname: '' }).toEqual({ ...theirs, time: 0, pid: 0, hostname: '' });
    }
    expect(lines.join('')).not.toContain('secret-key');
  });

  it("holds a turn's lines until the turn ends, and drain() (shutdown, a pino line) writes them first", async () => {
    const chunks: string[] = [];
    const out = new LogOutput({ write: (c) => void chunks.push(c.toString('utf8')) }, 4096);
    const line = accessLog({ isLevelEnabled: () => true }, out);
    const ctx = (id: string) => Object.assign(new RequestContext(id, performance.now()), { status: 200 });
    line(ctx('a'), 'GET', '/1/api/v2/blocks/1');
    line(ctx('b'), 'GET', '/1/api/v2/blocks/2');
    expect(chunks).toEqual([]);
    // A pino line comes after the access lines held before it.
    out.write('{"msg":"from pino"}\n');
    const text = () => chunks.join('');
    expect(
      text()
        .split('\n')
        .map((l) => (l === '' ? '' : ((JSON.parse(l) as { reqId?: string; msg: string }).reqId ?? 'pino'))),
    ).toEqual(['a', 'b', 'pino', '']);
    // At the turn's end, the turn's lines go to the batch (handed over by the next drain or a full batch).
    line(ctx('c'), 'GET', '/1/api/v2/blocks/3');
    await new Promise((r) => setImmediate(r));
    expect(text()).not.toContain('"reqId":"c"');
    out.drain();
    expect(text()).toContain('"reqId":"c"');
    // Each line once.
    out.drain();
    expect(text().match(/"msg":"request"/g)).toHaveLength(3);
  });

  it('measures a request up to finish(), not up to when its line is written', async () => {
    const chunks: string[] = [];
    const out = new LogOutput({ write: (c) => void chunks.push(c.toString('utf8')) }, 4096);
    const started = performance.now();
    accessLog({ isLevelEnabled: () => true }, out)(Object.assign(new RequestContext('m', started), { status: 200 }), 'GET', '/');
    const finishedBy = performance.now() - started;
    await new Promise((r) => setTimeout(r, 30));
    out.drain();
    const { ms } = JSON.parse(chunks.join('')) as { ms: number };
    expect(ms).toBeLessThanOrEqual(Math.ceil(finishedBy * 1000) / 1000);
  });

  it('is not written when the level is above info (a reload can raise it)', () => {
    expect(built(new RequestContext('id', 0), 'GET', '/', 'warn')).toEqual([]);
  });
});
