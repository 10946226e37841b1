// CORS of the public listener (src/http/cors.ts): the lines of each configuration, worked out
// once and shared; the configuration's checks; a cache entry's CORS variant (request/send.ts).
import type { FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { toEntry } from '../../src/cache/policy.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { addCorsHeaders, corsPolicy, CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS } from '../../src/http/cors.js';
import { isPassableResponseHeader, NO_TOKENS, PER_ANSWER_HEADERS } from '../../src/http/headers.js';
import { sendEntry, sendJson } from '../../src/request/send.js';
import { RequestContext } from '../../src/request/context.js';

const EXPOSE =
  'x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-credits-remaining, x-request-id, x-cache, age, retry-after, www-authenticate';

describe('corsPolicy', () => {
  it('with ["*"]: ACAO * and the exposed headers on every answer, Origin or not, one shared array, no Vary', () => {
    const p = corsPolicy({ origins: ['*'], maxAgeSeconds: 600 });
    const lines = p.linesFor('https://a.example');
    expect(lines).toEqual(['access-control-allow-origin', '*', 'access-control-expose-headers', EXPOSE]);
    expect(p.linesFor(undefined)).toBe(lines);
    expect(p.linesFor('https://b.example')).toBe(lines);
    expect(Object.isFrozen(lines)).toBe(true);
    expect(p.preflightFor('https://a.example')).toEqual([
      'access-control-allow-origin',
      '*',
      'access-control-allow-methods',
      'GET, HEAD, POST, OPTIONS',
      'access-control-allow-headers',
      'authorization, content-type, show-scam-tokens, x-request-id',
      'access-control-max-age',
      '600',
    ]);
  });

  it('never sends Access-Control-Allow-Credentials', () => {
    for (const origins of [['*'], ['https://a.example']]) {
      const p = corsPolicy({ origins, maxAgeSeconds: 5 });
      const all = [...(p.linesFor('https://a.example') ?? []), ...p.preflightFor('https://a.example')];
      expect(all).not.toContain('access-control-allow-credentials');
    }
  });

  it('with a list: the allowed origin echoed with Vary; any other origin, or none, gets Vary alone', () => {
    const p = corsPolicy({ origins: ['https://a.example', 'http://localhost:3000'], maxAgeSeconds: 60 });
    const a = p.linesFor('https://a.example');
    expect(a).toEqual(['access-control-allow-origin', 'https://a.example', 'access-control-expose-headers', EXPOSE, 'vary', 'origin']);
    expect(p.linesFor('https://a.example')).toBe(a);
    expect(p.linesFor('http://localhost:3000')![1]).toBe('http://localhost:3000');
    for (const other of ['https://evil.example', 'https://A.example', 'https://a.example.evil', 'null', undefined]) {
      expect(p.linesFor(other)).toEqual(['vary', 'origin']);
      expect(p.preflightFor(other)).toEqual(['vary', 'origin']);
    }
    expect(p.linesFor('https://evil.example')).toBe(p.linesFor(undefined));
    expect(p.preflightFor('https://a.example')).toEqual([
      'access-control-allow-origin',
      'https://a.example',
      'access-control-allow-methods',
      'GET, HEAD, POST, OPTIONS',
      'access-control-allow-headers',
      CORS_ALLOW_HEADERS,
      'access-control-max-age',
      '60',
      'vary',
      'origin',
    ]);
  });

  it('with []: nothing on answers, a bare preflight', () => {
    const p = corsPolicy({ origins: [], maxAgeSeconds: 600 });
    expect(p.linesFor('https://a.example')).toBeUndefined();
    expect(p.linesFor(undefined)).toBeUndefined();
    expect(p.preflightFor('https://a.example')).toEqual([]);
  });

  it('exposes what browser code needs to read its quota', () => {
    expect(CORS_EXPOSE_HEADERS).toBe(EXPOSE);
  });
});

describe('addCorsHeaders', () => {
  it("adds the lines to a header map, joining origin to the upstream's Vary", () => {
    const p = corsPolicy({ origins: ['https://a.example'], maxAgeSeconds: 600 });
    const headers: Record<string, string | string[]> = { 'content-type': 'text/csv', vary: 'accept-encoding' };
    addCorsHeaders(headers, p.linesFor('https://a.example')!);
    expect(headers).toEqual({
      'content-type': 'text/csv',
      vary: 'accept-encoding, origin',
      'access-control-allow-origin': 'https://a.example',
      'access-control-expose-headers': EXPOSE,
    });
  });
});

describe("the upstream's CORS headers", () => {
  it('never pass: the gateway answers CORS itself', () => {
    for (const name of ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers']) {
      expect(isPassableResponseHeader(name, NO_TOKENS)).toBe(false);
    }
    const e = toEntry(
      {
        status: 200,
        headers: { 'access-control-allow-origin': '*', 'content-type': 'application/json' },
        body: Buffer.from('{}'),
        upstream: 'u',
        ms: 1,
      },
      0,
      15,
      60,
    );
    expect(e.headerLines).not.toContain('access-control-allow-origin');
  });
});

describe('server.cors in the configuration', () => {
  const MINIMAL = `
chains:
  "1": { name: Ethereum, upstreams: [http://127.0.0.1:1] }
plans:
  free: { rps: 5, credits: 100 }
`;
  const problems = (server: string): string[] => {
    try {
      parseConfig(`${MINIMAL}server: ${server}\n`, 'test.yaml', {});
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    throw new Error('expected the configuration to be rejected');
  };

  it('defaults to any origin, 600 s', () => {
    expect(parseConfig(MINIMAL, 't', {}).server.cors).toEqual({ origins: ['*'], maxAgeSeconds: 600 });
    expect(parseConfig(`${MINIMAL}server: { port: 1 }\n`, 't', {}).server.cors).toEqual({ origins: ['*'], maxAgeSeconds: 600 });
  });

  it('takes a list of origins, or none', () => {
    const c = parseConfig(
      `${MINIMAL}server: { cors: { origins: [https://app.example, "http://localhost:3000", "http://[::1]:8080"], maxAgeSeconds: 0 } }\n`,
      't',
      {},
    );
    expect(c.server.cors).toEqual({ origins: ['https://app.example', 'http://localhost:3000', 'http://[::1]:8080'], maxAgeSeconds: 0 });
    expect(parseConfig(`${MINIMAL}server: { cors: { origins: [] } }\n`, 't', {}).server.cors.origins).toEqual([]);
  });

  it('refuses an origin a browser would never send, naming the key and the spelling that would match', () => {
    expect(problems('{ cors: { origins: [https://app.example/] } }')).toEqual([
      'test.yaml:6: server.cors.origins[0]: expected * or an origin scheme://host[:port], without a path, as browsers send it (https://app.example); did you mean https://app.example?',
    ]);
    expect(problems('{ cors: { origins: [https://a.example, "https://App.Example:443"] } }')[0]).toMatch(
      /server\.cors\.origins\[1\]: expected \* or an origin .*; did you mean https:\/\/app\.example\?$/,
    );
    for (const bad of ['app.example', 'https://a.example/path', 'https://a.example?x=1', '""', 'null']) {
      expect(problems(`{ cors: { origins: [${bad}] } }`)[0], bad).toMatch(
        /server\.cors\.origins\[0\]: expected \* or an origin scheme:\/\/host\[:port\]/,
      );
    }
    expect(problems('{ cors: { origins: "*" } }')[0]).toMatch(/server\.cors\.origins: expected a list of origins/);
    expect(problems('{ cors: { origins: ["*", https://a.example] } }')[0]).toMatch(/server\.cors\.origins: expected \* alone/);
    expect(problems('{ cors: { maxAgeSeconds: -1 } }')[0]).toMatch(/server\.cors\.maxAgeSeconds: expected a non-negative integer/);
    expect(problems('{ cors: { maxAgeSeconds: 86401 } }')[0]).toMatch(/server\.cors\.maxAgeSeconds: expected at most 86400/);
    expect(problems('{ cors: { origin: ["*"] } }')[0]).toMatch(/server\.cors/);
  });
});

/** A reply that records what writeHead was given, as request/send.ts writes it. */
function fakeReply(): { reply: FastifyReply; heads: unknown[][] } {
  const heads: unknown[][] = [];
  const raw = { writeHead: (_status: number, lines: unknown[]) => heads.push(lines), end: () => undefined };
  return { reply: { raw, hijack: () => undefined } as unknown as FastifyReply, heads };
}

describe('answers with CORS (request/send.ts)', () => {
  const policy = corsPolicy({ origins: ['*'], maxAgeSeconds: 600 });

  it("a cache entry's answers carry the lines before the per-answer headers; its shared lines stay as they were", () => {
    const entry = toEntry(
      { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), upstream: 'u', ms: 1 },
      0,
      15,
      60,
    );
    const shared = [...entry.headerLines];
    const { reply, heads } = fakeReply();
    for (let i = 0; i < 3; i++) {
      const ctx = new RequestContext(`id-${i}`, 0);
      ctx.cors = policy.linesFor('https://a.example');
      sendEntry(ctx, reply, entry, 'HIT', 0);
    }
    const lines = heads[0] as string[];
    expect(lines.slice(0, 8)).toEqual(['content-type', 'application/json', 'content-length', '2', ...policy.linesFor(undefined)!]);
    expect(lines.slice(8).filter((_, i) => i % 2 === 0)).toEqual([...PER_ANSWER_HEADERS]);
    expect(lines[9]).toBe('id-2');
    // One variant, made once, for every answer with the same CORS lines.
    expect(heads[1]).toBe(lines);
    expect(heads[2]).toBe(lines);
    expect(entry.headerLines.length).toBe(shared.length);
    // A request without CORS gets the entry's own lines.
    const ctx = new RequestContext('plain', 0);
    sendEntry(ctx, reply, entry, 'HIT', 0);
    expect(heads[3]).toBe(entry.headerLines);
    // Another configuration's lines make a new variant.
    const other = corsPolicy({ origins: ['https://a.example'], maxAgeSeconds: 1 }).linesFor('https://a.example');
    const ctx2 = new RequestContext('listed', 0);
    ctx2.cors = other;
    sendEntry(ctx2, reply, entry, 'MISS', 0);
    expect(heads[4]).not.toBe(lines);
    expect(heads[4]).toContain('https://a.example');
  });

  it("the gateway's own answers carry them too", () => {
    const { reply, heads } = fakeReply();
    const ctx = new RequestContext('x', 0);
    ctx.cors = policy.linesFor(undefined);
    sendJson(ctx, reply, 404, '{"message":"Route not found"}');
    expect(heads[0]).toEqual(expect.arrayContaining(['access-control-allow-origin', '*', 'access-control-expose-headers', EXPOSE]));
  });
});
