// The one table from an upstream failure to what the client gets: matched by undici's error
// classes and Node's system error codes.
import { describe, expect, it } from 'vitest';
import { errors } from 'undici';
import { ERRORS } from '../../src/http/errors.js';
import { answerProblem } from '../../src/request/forward.js';
import { basicAuthorization, displayUpstream, upstreamNames } from '../../src/upstream/client.js';
import {
  AttemptTimedOut,
  classify,
  DeadlinePassed,
  FAILURES,
  NoUpstreamAvailable,
  retryAfterMs,
  UpstreamFailure,
  UpstreamInvalidBody,
  UpstreamStatus,
} from '../../src/upstream/failures.js';

const systemError = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

describe('upstream failures', () => {
  it.each([
    ['the deadline', new DeadlinePassed('deadline'), 'UPSTREAM_TIMEOUT', 'timeout', false],
    ["undici's headers timeout", new errors.HeadersTimeoutError(), 'UPSTREAM_TIMEOUT', 'timeout', false],
    ["undici's body timeout", new errors.BodyTimeoutError(), 'UPSTREAM_TIMEOUT', 'timeout', false],
    ['a connect timeout', new errors.ConnectTimeoutError(), 'UPSTREAM_UNREACHABLE', 'unreachable', true],
    ['a refused connection', systemError('ECONNREFUSED'), 'UPSTREAM_UNREACHABLE', 'unreachable', true],
    ['an unknown host', systemError('ENOTFOUND'), 'UPSTREAM_UNREACHABLE', 'unreachable', true],
    ['a bad certificate', systemError('CERT_HAS_EXPIRED'), 'UPSTREAM_UNREACHABLE', 'unreachable', true],
    ['a self-signed certificate', systemError('DEPTH_ZERO_SELF_SIGNED_CERT'), 'UPSTREAM_UNREACHABLE', 'unreachable', true],
    ['an answer over the size limit', new errors.ResponseExceededMaxSizeError(), 'UPSTREAM_TOO_LARGE', 'too_large', false],
    ['a 5xx answer', new UpstreamStatus(503), 'UPSTREAM_ERROR', 'status_5xx', false],
    ['a 429 answer (never passed on)', new UpstreamStatus(429, 1000), 'UPSTREAM_BUSY', 'throttled', false],
    ["an attempt's share of the deadline", new AttemptTimedOut('share'), 'UPSTREAM_TIMEOUT', 'timeout', false],
    ['every upstream out of the rotation', new NoUpstreamAvailable(3), 'UPSTREAM_BUSY', 'busy', true],
    ['a 3xx answer', new UpstreamStatus(302), 'UPSTREAM_ERROR', 'redirect', false],
    ['a 2xx that is not JSON', new UpstreamInvalidBody('html'), 'UPSTREAM_ERROR', 'invalid_body', false],
    ['a reset socket', new errors.SocketError('other side closed'), 'UPSTREAM_ERROR', 'reset', false],
    ['ECONNRESET', systemError('ECONNRESET'), 'UPSTREAM_ERROR', 'reset', false],
    ['anything else', new Error('surprise'), 'UPSTREAM_ERROR', 'error', false],
  ] as const)('%s -> %s (%s), tried elsewhere: %s', (_what, err, code, kind, beforeRequest) => {
    expect(classify(err)).toMatchObject({ code, kind, beforeRequest });
  });

  it('every row answers with an error of the registry, and only connect failures are tried elsewhere', () => {
    for (const rule of FAILURES) {
      expect(ERRORS[rule.code].status).toBeGreaterThanOrEqual(500);
      expect(rule.beforeRequest).toBe(rule.kind === 'unreachable' || rule.kind === 'busy');
    }
  });

  it('a read is tried again after a timeout of its share, a failed connection, a 5xx, a 429, a bad answer or a reset; not after the deadline or a too large answer (issue 37)', () => {
    const again = (err: unknown) => classify(err).retryRead;
    expect(again(new AttemptTimedOut('share'))).toBe(true);
    expect(again(new errors.HeadersTimeoutError())).toBe(true);
    expect(again(systemError('ECONNREFUSED'))).toBe(true);
    expect(again(new UpstreamStatus(502))).toBe(true);
    expect(again(new UpstreamStatus(429))).toBe(true);
    expect(again(new UpstreamInvalidBody('html'))).toBe(true);
    expect(again(new errors.SocketError('closed'))).toBe(true);
    expect(again(new DeadlinePassed('deadline'))).toBe(false);
    expect(again(new errors.ResponseExceededMaxSizeError())).toBe(false);
    expect(again(new Error('surprise'))).toBe(false);
  });

  it("a 429's Retry-After is read as seconds or as an HTTP date; a busy failure tells the client when to come back", () => {
    expect(retryAfterMs('3', 0)).toBe(3000);
    expect(retryAfterMs(['7'], 0)).toBe(7000);
    expect(retryAfterMs(new Date(60_000).toUTCString(), 0)).toBe(60_000);
    expect(retryAfterMs('soon', 0)).toBeUndefined();
    expect(retryAfterMs(undefined, 0)).toBeUndefined();
    const busy = new UpstreamFailure(classify(new UpstreamStatus(429)), { cause: null, retryAfterSeconds: 2.2 });
    expect(busy.headers).toEqual({ 'retry-after': '3' });
    expect(ERRORS[busy.code]).toMatchObject({ status: 503, message: 'Explorer busy, try again' });
    expect(new UpstreamFailure(classify(new UpstreamStatus(502)), { cause: null }).headers).toBeUndefined();
  });
});

describe('what an answer must be before it is passed on (request/forward.ts)', () => {
  const answer = (status: number, type: string | undefined, body: string) => ({
    status,
    headers: type === undefined ? {} : { 'content-type': type },
    body: Buffer.from(body),
  });
  it.each([
    ['JSON', answer(200, 'application/json; charset=utf-8', '{"items":[]}'), undefined],
    ['a +json type', answer(200, 'application/problem+json', '{}'), undefined],
    ['a 404 in any form', answer(404, 'text/html', '<h1>nope</h1>'), undefined],
    ['a 422', answer(422, 'application/json', '{"errors":[]}'), undefined],
    ['a 204', answer(204, undefined, ''), undefined],
    ['cut-short JSON', answer(200, 'application/json', '{"items":['), 'invalid_body'],
    ['HTML with 200', answer(200, 'text/html', '<html></html>'), 'invalid_body'],
    ['no type', answer(200, undefined, '{}'), 'invalid_body'],
    ['a type that only mentions json', answer(200, 'text/plain; note=json', '{}'), 'invalid_body'],
    ['a redirect', answer(302, 'text/html', ''), 'redirect'],
    ['a 304', answer(304, undefined, ''), 'redirect'],
    ['a 500', answer(500, 'application/json', '{}'), 'status_5xx'],
    ["an explorer's own 429", answer(429, 'application/json', '{"message":"Too many requests"}'), 'throttled'],
  ] as const)('%s -> %s', (_what, a, kind) => {
    const problem = answerProblem(a);
    expect(problem === undefined ? undefined : classify(problem).kind).toBe(kind);
  });
});

describe('upstream names and credentials (upstream/client.ts)', () => {
  it('names an upstream by host and port only, and tells two on one host apart', () => {
    expect(upstreamNames(['https://u:p@eth.example.org/blockscout', 'http://eth.example.org:8080', 'https://eth.example.org/b'])).toEqual([
      'eth.example.org',
      'eth.example.org:8080',
      'eth.example.org#3',
    ]);
  });

  it('turns user:password@ into Basic credentials (RFC 7617), percent-decoded', () => {
    expect(basicAuthorization(new URL('https://explorer.example.org/'))).toBeUndefined();
    expect(basicAuthorization(new URL('https://Aladdin:open%20sesame@explorer.example.org/'))).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
    expect(basicAuthorization(new URL('https://token@explorer.example.org/'))).toBe(`Basic ${Buffer.from('token:').toString('base64')}`);
  });

  it('shows an upstream to the operator without its credentials', () => {
    expect(displayUpstream('https://reader:s3cret@explorer.example.org/eth/')).toBe('https://explorer.example.org/eth/ (Basic auth)');
    expect(displayUpstream('https://explorer.example.org')).toBe('https://explorer.example.org');
  });
});
