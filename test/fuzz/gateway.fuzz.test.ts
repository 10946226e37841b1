// Property-based fuzzing of the whole gateway (fast-check, https://fast-check.dev/): requests a
// hostile client could send, over every route of the table (src/routes/table.ts), sent exactly as
// generated through node:http to a real gateway, in front of the fixture explorer with a
// recording tap between the two (what the explorer answered). Generated: valid requests and
// mutated ones (path segments, query strings, keys in the header and the query, headers, methods,
// bodies), legacy and Etherscan forms, random targets. The properties, each a named check below
// (docs/clients.md: "Routes", "What is forwarded", "Statuses", "Response headers"):
//   gatewayAnswers               an answer: no hang, no dropped connection;
//   noServerError                never a 5xx, but a 502 when the explorer answered 5xx or reset for it;
//   answerIsGatewaysOrExplorers  the gateway's JSON in the request's interface ({"message"} and
//                                JsonErrorResponse for v2, the envelope for legacy), or the explorer's answer;
//   carriesRequestId             an x-request-id on every answer of the API, the client's own if sane;
//   pathIsClean                  no `..`, encoded dot or separator, backslash, CR, LF or NUL in the path upstream;
//   apikeyIsUpstreams            `apikey` once upstream: the chain's upstreamApiKey;
//   noClientKeyUpstream          no client key in the upstream URL or headers;
//   headersAreGateways           upstream headers built from scratch (no Authorization, not the client's Host);
//   allowedByRouteTable          every upstream request is a route of the table: a v2 template with path values
//                                that pass their checks (src/routes/param-check.ts), or /api with a legacy
//                                action; only declared query parameters, checked, in canonical form;
//   knownGoodStillServed         right after each generated request, a known good one gets 200;
//   refusalsUnbilled             no 4xx is billed but an upstream's 404 (src/request/send.ts billable), read
//                                from the quota store's balances of the keys that can be billed.
//
// FUZZ_RUNS (generated requests in all, default below) and FUZZ_SEED (default below) set the run;
// on a failure fast-check prints the seed, the path and the shrunk counterexample. To replay one:
//   FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run test/fuzz -t '<the test name>'
// FUZZ_TRACE=<file> appends every generated request to the file, with its status.
// `npm run fuzz -- --runs 100000 [--seed N]` (scripts/fuzz.ts) runs this file for longer.
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { Agent, METHODS, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureExplorer, type FixtureExplorer, type RecordedRequest } from '../../fixture/explorer.js';
import { ERRORS } from '../../src/http/errors.js';
import { USER_AGENT } from '../../src/request/forward.js';
import { paramCheck } from '../../src/routes/param-check.js';
import type { ParamData, ParamSchema } from '../../src/routes/spec-types.js';
import { ROUTE_TABLE, type LegacyRouteSpec, type V2RouteSpec } from '../../src/routes/table.js';
import { ADDRESS, DEMO_KEY, makeConfig, startGateway, type TestGateway } from '../support/gateway.js';
import { invalidSample, validSample } from '../support/samples.js';

// ---- the run ----------------------------------------------------------------------------------

const DEFAULT_SEED = 20261123;
const DEFAULT_RUNS = 3_000;
const SEED = Number.parseInt(process.env.FUZZ_SEED ?? String(DEFAULT_SEED), 10);
const RUNS = Number.parseInt(process.env.FUZZ_RUNS ?? String(DEFAULT_RUNS), 10);
const REPLAY_PATH = process.env.FUZZ_PATH;
/** A file to append one line per generated request to: its status, how many upstream requests it made, itself. */
const TRACE = process.env.FUZZ_TRACE;
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
if (!Number.isSafeInteger(RUNS) || RUNS < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${process.env.FUZZ_RUNS}`);

/** Each family's share of FUZZ_RUNS. */
const SHARES = { v2: 0.6, legacy: 0.25, anywhere: 0.15 } as const;
const runsOf = (family: keyof typeof SHARES) => Math.max(1, Math.round(RUNS * SHARES[family]));
/** A whole answer within this, or the gateway hangs (the chain's deadline is 2 s: makeConfig). */
const ANSWER_TIMEOUT_MS = 5_000;
/** A test's time limit: generous per request, for slow CI machines and for shrinking. */
const timeoutFor = (runs: number) => 60_000 + runs * 50;

// ---- the setup: chains, keys, and who may be forwarded what ------------------------------------

const UPSTREAM_KEY = 'upstream-secret';
const LIMITED_KEY = 'fuzz-key-chain-100-only';
const DISABLED_KEY = 'fuzz-key-disabled';
const UNVERIFIED_KEY = 'fuzz-key-unverified';
const UNKNOWN_KEY = 'fuzz-key-nobody-has-this';
/** Every key a generated request may carry; none may ever reach the explorer, in any form. */
const CLIENT_KEYS = [DEMO_KEY, LIMITED_KEY, DISABLED_KEY, UNVERIFIED_KEY, UNKNOWN_KEY] as const;
/** Headers the gateway builds for the explorer (docs/clients.md, "What is forwarded"); undici adds host and connection. */
const UPSTREAM_HEADERS: ReadonlySet<string> = new Set(['host', 'connection', 'accept', 'user-agent', 'x-request-id', 'show-scam-tokens']);
/** src/app/request-id.ts: a client's own id is kept when it is 1-128 of these characters. */
const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Node's default limit for a request's head (https://nodejs.org/api/cli.html#--max-http-header-sizesize). */
const MAX_HEAD_BYTES = 16 * 1024;

const V2 = ROUTE_TABLE.filter((r): r is V2RouteSpec => r.kind === 'v2');
const LEGACY = ROUTE_TABLE.filter((r): r is LegacyRouteSpec => r.kind === 'legacy');
/** The routes served first keep checks of their own (docs/clients.md, "Parameters and validation"): drawn more often. */
const HAND_WRITTEN = new Set(['token-balances', 'transactions', 'legacy.getToken', 'legacy.getTokenHolders', 'legacy.bridgedTokenList']);
const KNOWN_GOOD_PATH = `/1/api/v2/addresses/${ADDRESS}/token-balances`;

// ---- generated requests ---------------------------------------------------------------------------

interface FuzzRequest {
  family: string;
  method: string;
  /** The request target, exactly as sent. */
  target: string;
  /** Header lines in order (repeats allowed); a Host line is put first unless `omitHost`. */
  headers: [string, string][];
  omitHost: boolean;
  body: string | undefined;
}

/** A template literal a reader can paste: long runs of one character as `${"x".repeat(n)}`. */
function show(s: string): string {
  const escape = (t: string) =>
    t.replace(/[\\`$]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  let out = '';
  let last = 0;
  for (const m of s.matchAll(/(.)\1{31,}/gsu)) {
    out += `${escape(s.slice(last, m.index))}\${${JSON.stringify(m[1])}.repeat(${[...m[0]].length})}`;
    last = m.index + m[0].length;
  }
  return `\`${out}${escape(s.slice(last))}\``;
}

function describeRequest(r: FuzzRequest): string {
  const headers = r.headers.map(([k, v]) => `[${show(k)}, ${show(v)}]`).join(', ');
  const body = r.body === undefined ? '' : `, body ${show(r.body)}`;
  return `${r.method} ${show(r.target)} headers [${headers}]${r.omitHost ? ' (no Host but these)' : ''}${body} (${r.family})`;
}

function fuzzRequest(r: Omit<FuzzRequest, 'omitHost'> & { omitHost?: boolean }): FuzzRequest {
  const made: FuzzRequest = { ...r, omitHost: r.omitHost ?? false };
  Object.defineProperty(made, fc.toStringMethod, { value: () => describeRequest(made), enumerable: false });
  return made;
}

/**
 * Requests Node's HTTP parser refuses before the gateway sees them (400 or 431, empty body,
 * connection closed): a method llhttp does not know, bytes outside visible ASCII in the target,
 * a target not in origin, absolute or asterisk form, no Host (Node's `requireHostHeader`), a
 * head over the limit, TRACE with a body, `Expect`, framing headers twice. See https://nodejs.org/api/http.html.
 */
function nodeMayRefuse(r: FuzzRequest): boolean {
  const head = r.method.length + r.target.length + r.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0) + 64;
  return (
    !METHODS.includes(r.method.toUpperCase()) ||
    /[^\x21-\x7e]/.test(r.target) ||
    !/^(\/|\*$|https?:\/\/)/.test(r.target) ||
    (r.omitHost && !r.headers.some(([k]) => k.toLowerCase() === 'host')) ||
    head > MAX_HEAD_BYTES - 1024 ||
    (r.method.toUpperCase() === 'TRACE' && r.body !== undefined) ||
    r.headers.some(([k]) => k.toLowerCase() === 'expect') ||
    r.headers.filter(([k]) => /^(transfer-encoding|content-length)$/i.test(k)).length > 1
  );
}

// Pieces of hostile text, as they appear in a request target (already percent-encoded or not).
const LONG = 'x'.repeat(5_000);
const HOSTILE_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e.',
  '%252e%252e',
  '..;',
  '%2F',
  '%2f',
  '%5C',
  '%5c',
  '%252F',
  '\\',
  '..\\..',
  '..%2F..%2Fapi',
  '%00',
  '%0d%0a',
  '%0D%0AX-Injected:%201',
  '%20',
  '+',
  '%2B',
  ';',
  ';x=1',
  '%3B',
  '%3F',
  '%23',
  '~',
  '*',
  '%',
  '%z',
  '%zz',
  '%e9',
  '%c3%28',
  '%ff%fe',
  '%ED%A0%80',
  '%C3%A9',
  '%E2%82%AC',
  '%F0%9F%98%80',
  '\u00e9',
  '\u00ff',
  LONG,
  '',
];
const HOSTILE_VALUES = [
  ...HOSTILE_SEGMENTS,
  '=',
  '==',
  '&',
  '?',
  '#',
  '/',
  "'",
  '"',
  '<script>',
  '${jndi:ldap://x}',
  '[]',
  '{}',
  '%7B%7D',
  '__proto__',
  'null',
  'true',
  'x'.repeat(3_000),
];
const RAW_CHARS = [...'abcxyz0129-._~!$&\'()*+,;=:@/?#[]%\\"<>^`{|}'];

/** Free text (decoded), well-formed Unicode: percent-encoded before it goes into a target. */
const textUnit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...'abcxyz0129'.split('')) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('\u00e9', '\u20ac', '\u{1f600}', '\u0000', '\r', '\n', '\t', ' ', '/', '\\', '%', '..', '?', '#'),
  },
);
const text = fc.string({ unit: textUnit, maxLength: 16 });
/** Raw target text: visible ASCII (what node:http lets through), structure characters included. */
const rawText = fc.string({ unit: fc.constantFrom(...RAW_CHARS), minLength: 1, maxLength: 12 });

/** Date-times next to valid ones: out of range fields, forms Elixir's DateTime.from_iso8601/1 refuses (param-check.ts). */
const DATE_TIME_MISSES = [
  '2024-13-01T00:00:00Z',
  '2024-02-30T00:00:00Z',
  '2023-02-29T00:00:00Z',
  '2024-05-01T24:00:00Z',
  '2024-05-01T12:60:00Z',
  '2024-05-01T12:00:60Z',
  '2024-13-45T99:99:99Z',
  '2024-05-01t12:00:00z',
  '2024-05-01T12:00:00',
  '2024-05-01 12:00:00Z',
  '2024-05-01T12:00:00-00:00',
  '2024-05-01T12:00:00+24:00',
  '2024-05-01T12:00:00,5Z',
  '2024-05-01T12:00:00.1234567890Z',
  '+2024-05-01T12:00:00Z',
  '2024-5-1T12:00:00Z',
  '2024-05-01T12:00:00+0530',
  '2024-05-01T12:00:00+05',
];
const INTEGER_MISSES = ['+7', '007', '-0', '-7', '0', '9'.repeat(40), `-${'9'.repeat(40)}`, '7.0', '1e3', '0x10', '9223372036854775808'];

/** Values next to a valid one (decoded), for every kind of schema: case, signs, padding, bounds, calendar. */
function nearMisses(schema: ParamSchema, valid: string): string[] {
  const out = new Set([
    ` ${valid}`,
    `${valid} `,
    `${valid}\u0000`,
    `${valid}\r\n`,
    `${valid},${valid}`,
    `${valid}/../x`,
    `${valid}\u00e9`,
    '',
    'null',
  ]);
  const visit = (s: ParamSchema, v: string) => {
    for (const e of s.enum ?? []) [e.toUpperCase(), `${e} `, `${e}s`].forEach((x) => out.add(x));
    if (s.format === 'date-time') DATE_TIME_MISSES.forEach((x) => out.add(x));
    if (s.type === 'integer') {
      INTEGER_MISSES.forEach((x) => out.add(x));
      if (s.minimum !== undefined) out.add(String(BigInt(s.minimum) - 1n));
      if (s.maximum !== undefined) out.add(String(BigInt(s.maximum) + 1n));
    }
    if (s.pattern?.includes('0x') === true && v.startsWith('0x')) {
      [v.toUpperCase().replace('0X', '0x'), v.replace('0x', '0X'), v.slice(0, -1), `${v}a`, `${v.slice(0, -1)}g`, '0x'].forEach((x) =>
        out.add(x),
      );
    }
    if (s.pattern?.startsWith('^\\d{4}-') === true)
      [...DATE_TIME_MISSES, ...DATE_TIME_MISSES.map((d) => d.slice(0, 10))].forEach((x) => out.add(x));
    if (s.type === 'boolean') ['TRUE', 'True', '1', 'yes'].forEach((x) => out.add(x));
    if (s.type === 'array') [`${v},`, `,${v}`, `${v},,${v}`, Array(30).fill(v.split(',')[0]).join(',')].forEach((x) => out.add(x));
    for (const b of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) visit(b, validSample(b));
    if (s.items) visit(s.items, validSample(s.items));
  };
  visit(schema, valid);
  return [...out];
}

const valueArbs = new WeakMap<ParamSchema, fc.Arbitrary<string>>();
const tameValueArbs = new WeakMap<ParamSchema, fc.Arbitrary<string>>();

/** A value a well-behaved client sends: the sample, now and then in another valid spelling (or not). */
function tameValueFor(schema: ParamSchema): fc.Arbitrary<string> {
  let arb = tameValueArbs.get(schema);
  if (!arb) {
    const valid = validSample(schema);
    arb = fc.oneof(
      { weight: 5, arbitrary: fc.constant(encodeURIComponent(valid)) },
      { weight: 1, arbitrary: fc.constantFrom(...nearMisses(schema, valid).map((v) => encodeURIComponent(v))) },
    );
    tameValueArbs.set(schema, arb);
  }
  return arb;
}

/** A value for a parameter, as it appears in a target: mostly valid, often not. */
function valueFor(schema: ParamSchema): fc.Arbitrary<string> {
  let arb = valueArbs.get(schema);
  if (!arb) {
    const valid = validSample(schema);
    const bad = invalidSample(schema) ?? 'zz';
    arb = fc.oneof(
      { weight: 14, arbitrary: fc.constant(encodeURIComponent(valid)) },
      { weight: 3, arbitrary: fc.constantFrom(...nearMisses(schema, valid).map((v) => encodeURIComponent(v))) },
      { weight: 2, arbitrary: fc.constant(encodeURIComponent(bad)) },
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
      { weight: 1, arbitrary: text.map((t) => encodeURIComponent(t)) },
      { weight: 1, arbitrary: rawText },
    );
    valueArbs.set(schema, arb);
  }
  return arb;
}

const pair = (name: string, value: string | undefined): string => (value === undefined ? name : `${name}=${value}`);

/** Query pairs no route declares, or declares differently: unknown, bracketed, empty, huge, undecodable. */
const strayPair = fc.oneof(
  fc.constantFrom(
    'not_a_parameter=1',
    '__proto__=x',
    '__proto__[a]=1',
    'constructor=x',
    'constructor[prototype][x]=1',
    'toString=1',
    'hasOwnProperty=1',
    '=1',
    '=',
    '&',
    '%=1',
    '%zz=1',
    'a%00=1',
    'a[b]=1',
    'a[]=1',
    'items_count[]=1',
    'items_count=1&items_count=2',
    'label[block_number]=1',
    'label[]=1',
    'label[a][b]=1',
    'label]=1',
    '[label]=1',
    'label%5Bx%5D=1',
    'label[..%2F..]=1',
    'type[]=ERC-20',
    `${'n'.repeat(300)}=1`,
    `q=${'v'.repeat(4_000)}`,
    'filter',
    'chainid=1',
    'chainid=2',
    'module=account',
    'action=balance',
    'tag=latest',
    'key=1',
    'x=1;y=2',
  ),
  fc.tuple(text, text).map(([n, v]) => pair(encodeURIComponent(n), encodeURIComponent(v))),
  fc.tuple(rawText, fc.option(rawText, { nil: undefined })).map(([n, v]) => pair(n, v)),
);

/** The client's key, in the query (0 to 3 `apikey`-like pairs) and/or the Authorization header. */
interface KeyPlacement {
  authorization: string | undefined;
  query: string[];
}
const someKey = fc.constantFrom(...CLIENT_KEYS);
const authorizationArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 10, arbitrary: fc.constant(`Bearer ${DEMO_KEY}`) },
  { weight: 4, arbitrary: fc.constant(undefined) },
  {
    weight: 4,
    arbitrary: fc.oneof(
      someKey.map((k) => `Bearer ${k}`),
      fc.constantFrom(
        `bearer ${DEMO_KEY}`,
        `BEARER    ${DEMO_KEY}   `,
        `Bearer\t${DEMO_KEY}`,
        `Bearer ${DEMO_KEY} extra`,
        `Bearer ${DEMO_KEY},Bearer ${DEMO_KEY}`,
        `Basic ${Buffer.from(`${DEMO_KEY}:`).toString('base64')}`,
        `Token ${DEMO_KEY}`,
        `Digest username="${DEMO_KEY}"`,
        `Negotiate ${DEMO_KEY}`,
        DEMO_KEY,
        'Bearer',
        'Bearer ',
        '',
        `Bearer ${'A'.repeat(5_000)}`,
        `Bearer ${DEMO_KEY}\u00e9`,
        `Bearer "${DEMO_KEY}"`,
      ),
    ),
  },
);
const apikeyPair = fc.oneof(
  { weight: 6, arbitrary: someKey.map((k) => `apikey=${k}`) },
  {
    weight: 4,
    arbitrary: fc.oneof(
      someKey.map((k) => `%61pikey=${k}`),
      someKey.map((k) => `apik%65y=${encodeURIComponent(k)}`),
      someKey.map((k) => `APIKEY=${k}`),
      someKey.map((k) => `ApiKey=${k}`),
      someKey.map((k) => `api_key=${k}`),
      someKey.map((k) => `apikey[]=${k}`),
      someKey.map((k) => `apikey=${k}%00`),
      someKey.map((k) => `apikey=${k}+`),
      someKey.map((k) => `apikey=%20${k}`),
      someKey.map((k) => `apikey=${k}%zz`),
      fc.constantFrom('apikey', 'apikey=', 'apikey=%', 'apikey=%zz', `apikey=${UPSTREAM_KEY}`),
    ),
  },
);
const keyPlacement: fc.Arbitrary<KeyPlacement> = fc.oneof(
  // The usual: the demo key once, in one place or both.
  { weight: 8, arbitrary: fc.constant<KeyPlacement>({ authorization: `Bearer ${DEMO_KEY}`, query: [] }) },
  { weight: 3, arbitrary: fc.constant<KeyPlacement>({ authorization: undefined, query: [`apikey=${DEMO_KEY}`] }) },
  { weight: 1, arbitrary: fc.constant<KeyPlacement>({ authorization: `Bearer ${DEMO_KEY}`, query: [`apikey=${DEMO_KEY}`] }) },
  { weight: 5, arbitrary: fc.record({ authorization: authorizationArb, query: fc.array(apikeyPair, { maxLength: 3 }) }) },
);

/**
 * Header lines besides Authorization and Host. A client key appears only where keys go, or in
 * headers that are never forwarded (cookie, x-api-key, proxy-authorization): show-scam-tokens and
 * a sane x-request-id are forwarded as the client sent them (docs/clients.md, "What is forwarded").
 */
const extraHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  fc
    .constantFrom('true', 'false', 'TRUE', '', '1', 'true, true', 'true,false', 'x'.repeat(2_000), '\u00e9', 'true\tfalse')
    .map((v): [string, string] => ['show-scam-tokens', v]),
  fc
    .constantFrom(
      'fuzz-id-1',
      'a'.repeat(128),
      'a'.repeat(129),
      'has space',
      '../../etc/passwd',
      'id;drop',
      '\u00e9',
      '',
      'x'.repeat(8_000),
      'a:b.c_d-e',
    )
    .map((v): [string, string] => ['x-request-id', v]),
  fc.constantFrom<[string, string]>(
    ['content-type', 'application/json'],
    ['content-type', 'text/plain; charset=utf-8'],
    ['content-type', 'application/x-www-form-urlencoded'],
    ['content-type', 'multipart/form-data; boundary=x'],
    ['content-type', ';;;'],
    ['content-type', ''],
    ['content-type', 'application/json; charset=\u00e9'],
    ['cookie', `apikey=${DEMO_KEY}`],
    ['x-api-key', DEMO_KEY],
    ['proxy-authorization', `Bearer ${DEMO_KEY}`],
    ['x-forwarded-for', '127.0.0.1, 10.0.0.1'],
    ['x-forwarded-host', 'evil.example'],
    ['forwarded', 'for=1.2.3.4;host=evil.example'],
    ['accept', 'text/csv'],
    ['accept', ''],
    ['accept-encoding', 'gzip, br'],
    ['range', 'bytes=0-1'],
    ['if-none-match', '*'],
    ['if-modified-since', 'Mon, 01 Jan 2024 00:00:00 GMT'],
    ['cache-control', 'no-cache'],
    ['connection', 'close'],
    ['connection', 'keep-alive, x-request-id'],
    ['te', 'trailers'],
    ['upgrade', 'websocket'],
    ['transfer-encoding', 'chunked'],
    ['x-http-method-override', 'DELETE'],
    ['expect', '100-continue'],
  ),
  fc.tuple(fc.constantFrom('x-fuzz', 'user-agent', 'referer', 'origin'), fc.string({ unit: 'grapheme-ascii', maxLength: 40 })),
);
/** 0: Host as Node sets it; 1: none; 2: an odd one; 3: two. */
const hostChoice = fc.constantFrom<[number, [string, string][]]>(
  [0, []],
  [0, []],
  [0, []],
  [0, []],
  [0, []],
  [0, []],
  [1, []],
  [2, [['host', 'evil.example']]],
  [2, [['host', '']]],
  [3, [['host', 'evil.example']]],
);

const methodArb = fc.oneof(
  { weight: 20, arbitrary: fc.constant('GET') },
  { weight: 3, arbitrary: fc.constant('HEAD') },
  { weight: 5, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('PROPFIND', 'MKCOL', 'SEARCH', 'PURGE', 'REPORT', 'LOCK', 'TRACE', 'CONNECT', 'get', 'FOOBAR', 'GETS'),
  },
);
const bodyArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom('{"a":1}', `apikey=${DEMO_KEY}`, '', 'x'.repeat(1_023), 'x'.repeat(1_025), 'x'.repeat(4_000), '{'),
      fc.string({ unit: 'grapheme-ascii', maxLength: 200 }),
    ),
  },
);

/** Half the requests are hostile; the others are what a well-behaved client sends, so that many reach the explorer. */
const hostile = fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });

/** Everything of a request but its path and query. */
interface Envelope {
  method: string;
  key: KeyPlacement;
  headers: [string, string][];
  host: [number, [string, string][]];
  body: string | undefined;
  fragment: string;
  keyAt: number;
}
const envelopeArb: fc.Arbitrary<Envelope> = fc.record({
  method: methodArb,
  key: keyPlacement,
  headers: fc.array(extraHeader, { maxLength: 3 }),
  host: hostChoice,
  body: bodyArb,
  fragment: fc.oneof(
    { weight: 15, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom('#', '#x', `#apikey=${DEMO_KEY}`) },
  ),
  keyAt: fc.nat(),
});

/** A well-behaved client's envelope: GET or HEAD, its key as Bearer or `apikey`, harmless headers, no body. */
function tame(e: Envelope): Envelope {
  const key: KeyPlacement =
    e.keyAt % 3 === 0 ? { authorization: undefined, query: [`apikey=${DEMO_KEY}`] } : { authorization: `Bearer ${DEMO_KEY}`, query: [] };
  return {
    ...e,
    method: e.method === 'HEAD' ? 'HEAD' : 'GET',
    key,
    headers: e.headers.filter(([k]) => k === 'show-scam-tokens' || k === 'x-request-id'),
    host: [0, []],
    body: undefined,
    fragment: '',
  };
}

function assemble(family: string, path: string, query: string[], e: Envelope): FuzzRequest {
  const pairs = [...query];
  for (const [i, p] of e.key.query.entries()) pairs.splice((e.keyAt + i) % (pairs.length + 1), 0, p);
  const target = `${path}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}${e.fragment}`;
  const headers: [string, string][] = [];
  if (e.key.authorization !== undefined) headers.push(['authorization', e.key.authorization]);
  headers.push(...e.headers);
  const [hostKind, hostLines] = e.host;
  if (hostKind === 3) headers.push(['host', '127.0.0.1'], ...hostLines);
  else headers.push(...hostLines);
  return fuzzRequest({ family, method: e.method, target, headers, omitHost: hostKind !== 0, body: e.body });
}

// v2: every route of the table, its path mutated, its query valid or not.
type PathMutation = { kind: 'insert'; at: number; segment: string } | { kind: 'drop'; at: number } | { kind: 'encode-literal'; at: number };
const pathMutation: fc.Arbitrary<PathMutation> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), segment: fc.oneof(fc.constantFrom(...HOSTILE_SEGMENTS), rawText) }),
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('encode-literal' as const), at: fc.nat() }),
);
/** `/1` mostly; other chains, odd spellings of one, none. */
const chainSegment = fc.oneof(
  { weight: 12, arbitrary: fc.constant('1') },
  { weight: 2, arbitrary: fc.constantFrom('100', '2', '01', '%31', '', 'api', 'v2', '1.0', '-1', '..', '%2e%2e', '%201', '1%00') },
);

function applyMutation(segments: string[], m: PathMutation): string[] {
  const out = [...segments];
  if (m.kind === 'insert') out.splice(m.at % (out.length + 1), 0, m.segment);
  else if (out.length > 0) {
    const at = m.at % out.length;
    if (m.kind === 'drop') out.splice(at, 1);
    else out[at] = (out[at] ?? '').replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
  }
  return out;
}

const optionalOf = (spec: V2RouteSpec): ParamData[] => spec.queryParams.filter((p) => !p.required);

/** Every route of a list, those with hand-written checks one time in ten. */
const routeOf = <T extends { name: string }>(routes: readonly T[]) =>
  fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom(...routes) },
    { weight: 1, arbitrary: fc.constantFrom(...routes.filter((r) => HAND_WRITTEN.has(r.name))) },
  );

const v2Request: fc.Arbitrary<FuzzRequest> = fc.tuple(routeOf(V2), hostile).chain(([spec, isHostile]) => {
  const value = isHostile ? valueFor : tameValueFor;
  return fc
    .record({
      hostile: fc.constant(isHostile),
      chain: chainSegment,
      values: fc.tuple(...spec.pathParams.map((p) => value(p.schema))),
      mutations: fc.oneof(
        { weight: 3, arbitrary: fc.constant<PathMutation[]>([]) },
        { weight: 2, arbitrary: fc.array(pathMutation, { maxLength: 3 }) },
      ),
      trailingSlash: fc.boolean(),
      doubleSlash: fc.nat(),
      required: fc.tuple(
        ...spec.queryParams.filter((p) => p.required).map((p) => fc.option(value(p.schema), { freq: 12, nil: undefined })),
      ),
      optional: fc.subarray(optionalOf(spec), { maxLength: Math.min(4, optionalOf(spec).length) }),
      stray: fc.oneof({ weight: 3, arbitrary: fc.constant<string[]>([]) }, { weight: 2, arbitrary: fc.array(strayPair, { maxLength: 3 }) }),
      envelope: envelopeArb,
    })
    .chain((g) =>
      // Values of the optional parameters chosen, drawn together so that shrinking works on them.
      fc.tuple(...g.optional.map((p) => value(p.schema))).map((optionalValues) => {
        let i = 0;
        const templated = spec.segments.map((s) => (typeof s === 'string' ? s : (g.values[i++] ?? '')));
        let segments = g.hostile ? g.mutations.reduce(applyMutation, templated) : templated;
        if (g.hostile && g.doubleSlash % 7 === 0) segments = [...segments.slice(0, 2), '', ...segments.slice(2)];
        const path = `/${g.hostile ? g.chain : '1'}/${segments.join('/')}${g.trailingSlash ? '/' : ''}`;
        const query: string[] = [];
        spec.queryParams
          .filter((p) => p.required)
          .forEach((p, j) => {
            const v = g.required[j] ?? (g.hostile ? undefined : encodeURIComponent(validSample(p.schema)));
            if (v !== undefined) query.push(pair(p.name, v));
          });
        g.optional.forEach((p, j) => query.push(pair(p.name, optionalValues[j])));
        // A search paging object, in Plug's bracket form.
        for (const p of g.optional.filter((o) => o.schema.type === 'object')) query.push(`${p.name}%5Bblock_number%5D=1`);
        if (g.hostile) query.push(...g.stray);
        return assemble(`v2 ${spec.name}`, path, query, g.hostile ? g.envelope : tame(g.envelope));
      }),
    );
});

// Legacy and Etherscan forms: /{chain}/api?module=&action=, /api and /v2/api with chainid.
const legacyForm = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/1/api', '/1/api/', '/100/api') },
  { weight: 6, arbitrary: fc.constantFrom('/api', '/api/', '/v2/api', '/v2/api/') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '/2/api',
      '/1/api/v1',
      '/1//api',
      '//api',
      '/1/API',
      '/1/api/v2',
      '/v2/api/v2',
      '/v2//api',
      '/%31/api',
      '/1/%61pi',
    ),
  },
);
const spelling = (word: string) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(word) },
    { weight: 2, arbitrary: fc.constantFrom(word.toUpperCase(), word.toLowerCase(), word[0]!.toUpperCase() + word.slice(1)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        `${word}%00`,
        `${word}%20`,
        `%${word.charCodeAt(0).toString(16)}${word.slice(1)}`,
        `${word}&${word}`,
        `../${word}`,
        'proxy',
        'eth_call',
      ),
    },
  );
const chainidPairs = fc.oneof(
  { weight: 8, arbitrary: fc.constant(['chainid=1']) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      [],
      ['chainid=100'],
      ['chainid=2'],
      ['chainid='],
      ['chainid'],
      ['chainid=01'],
      ['chainid=%31'],
      ['chainid=1%00'],
      ['chainid=-1'],
      ['chainid=1e0'],
      [`chainid=${'9'.repeat(400)}`],
      ['chainid=2', 'chainid=1'],
      ['chainid=1', 'chainid=2'],
      ['chainid=1,100'],
      ['chainid[]=1'],
      ['chainid=api'],
    ),
  },
);

const legacyRequest: fc.Arbitrary<FuzzRequest> = fc.tuple(routeOf(LEGACY), hostile).chain(([spec, isHostile]) => {
  const value = isHostile ? valueFor : tameValueFor;
  return fc
    .record({
      hostile: fc.constant(isHostile),
      form: legacyForm,
      module: fc.option(spelling(spec.module), { freq: 20, nil: undefined }),
      action: fc.option(spelling(spec.action), { freq: 20, nil: undefined }),
      chainid: chainidPairs,
      params: fc.tuple(
        ...spec.params.map((p) =>
          fc.option(value(p.schema), { freq: p.required || spec.oneOfRequired?.names[0] === p.name ? 12 : 2, nil: undefined }),
        ),
      ),
      stray: fc.oneof({ weight: 3, arbitrary: fc.constant<string[]>([]) }, { weight: 2, arbitrary: fc.array(strayPair, { maxLength: 3 }) }),
      order: fc.nat(),
      envelope: envelopeArb,
    })
    .map((g) => {
      const query: string[] = [];
      if (g.module !== undefined) query.push(pair('module', g.module));
      if (g.action !== undefined) query.push(pair('action', g.action));
      spec.params.forEach((p, i) => {
        const v = g.params[i];
        if (v !== undefined) query.push(pair(p.name, v));
      });
      // The Etherscan forms need chainid; clients of the chain-path form send one now and then too.
      const form = g.hostile ? g.form : (['/1/api', '/1/api/', '/api', '/v2/api'][g.order % 4] ?? '/1/api');
      const etherscan = !/^\/[^/]*\d[^/]*\//.test(form) || form.startsWith('/v2/');
      if (etherscan || g.order % 3 === 0) query.splice(g.order % (query.length + 1), 0, ...(g.hostile ? g.chainid : ['chainid=1']));
      query.push(...g.stray);
      return assemble(`legacy ${spec.name}`, form, query, g.hostile ? g.envelope : tame(g.envelope));
    });
});

// Anywhere: random targets, the operations endpoints, other forms of request target.
const anywhereTarget = fc.oneof(
  fc.array(fc.oneof(rawText, fc.constantFrom(...HOSTILE_SEGMENTS)), { minLength: 0, maxLength: 6 }).map((s) => `/${s.join('/')}`),
  fc
    .tuple(fc.constantFrom('/1/api/v2/', '/1/api/v2', '/1/', '/100/api/v2/', '/v2/', '/api/v2/'), fc.array(rawText, { maxLength: 4 }))
    .map(([p, s]) => `${p}${s.join('/')}`),
  fc.constantFrom(
    '/',
    '//',
    '///1/api/v2/stats',
    '/1/api/v2/../v2/stats',
    '/1/api/v2/stats/..',
    '/1/api/v2/stats/.',
    '/1/api/v2/./stats',
    '/1/api/v2/%2e%2e/v2/stats',
    '/1/api/v2/stats%2F..%2F..%2Fadmin',
    '/1/api/v2/stats%00',
    '/1/api/v2/stats%0d%0aX-Injected:%201',
    '/1/api/v2/stats;x=1',
    '/1/api/v2/stats\\..\\..',
    '/1/API/V2/STATS',
    '/1/api/v2/Stats',
    '/healthz',
    '/healthz/',
    '/%68ealthz',
    '/readyz',
    '/metrics',
    '/api/json/config',
    '/api/json/config/',
    '/api/json/config?x=1',
    '/admin/v1/keys',
    '*',
    'http://127.0.0.1/1/api/v2/stats',
    'http://evil.example/1/api/v2/stats',
    'api/v2/stats',
    '/1/api/v2/\u00e9',
    `/1/api/v2/${LONG}${LONG}${LONG}`,
  ),
);
const anywhereRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    target: anywhereTarget,
    query: fc.oneof({ weight: 2, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.array(strayPair, { maxLength: 3 }) }),
    envelope: envelopeArb,
  })
  .map((g) => {
    const q = g.target.indexOf('?');
    const path = q === -1 ? g.target : g.target.slice(0, q);
    const query = [...(q === -1 ? [] : [g.target.slice(q + 1)]), ...g.query];
    return assemble('anywhere', path, query, g.envelope);
  });

// ---- the tap: what the explorer answered ---------------------------------------------------------

interface TapRecord {
  url: string;
  /** The explorer's status; 'reset' when its connection failed; 'unsendable' when node:http would not send what the gateway sent. */
  status: number | 'reset' | 'unsendable';
  bodyHash: string | undefined;
}
interface Tap {
  readonly url: string;
  readonly records: TapRecord[];
  close(): Promise<void>;
}

const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * The explorer's own refusal of a request it was forwarded, made by the tap for one GET in eight
 * (chosen by the URL, so the same request is refused alike every time): a 400 or a 422 with a JSON
 * message, as Blockscout refuses a value it cannot use. The gateway must pass it on unbilled
 * (refusalsUnbilled). Never for the known good request, nor a JSON-RPC call (its non-200 is a 502).
 */
function tapRefusal(method: string | undefined, url: string): number | undefined {
  const knownGood = url.toLowerCase().startsWith(`/api/v2/addresses/${ADDRESS.toLowerCase()}/token-balances`);
  if (method !== 'GET' || knownGood || url.startsWith('/api/eth-rpc')) return undefined;
  const pick = digest(Buffer.from(url))[0];
  return pick === '0' ? 400 : pick === '1' ? 422 : undefined;
}

/** A recording HTTP proxy between the gateway and the explorer: passes everything on as it came, but the refusals of tapRefusal. */
async function startTap(explorer: FixtureExplorer): Promise<Tap> {
  const agent = new Agent({ keepAlive: true });
  const records: TapRecord[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    req.resume();
    const url = req.url ?? '/';
    const headers: string[] = [];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      if (!/^(connection|keep-alive)$/i.test(name)) headers.push(name, req.rawHeaders[i + 1]!);
    }
    const reset = (status: 'reset' | 'unsendable' = 'reset') => {
      records.push({ url, status, bodyHash: undefined });
      req.socket.resetAndDestroy();
    };
    const refusal = tapRefusal(req.method, url);
    if (refusal !== undefined) {
      const body = Buffer.from(JSON.stringify({ message: `Refused by the explorer (fuzz tap, ${refusal})` }));
      records.push({ url, status: refusal, bodyHash: digest(body) });
      res.writeHead(refusal, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) });
      res.end(body);
      return;
    }
    try {
      const upstream = httpRequest(
        { host: '127.0.0.1', port: explorer.port, method: req.method, path: url, headers, setHost: false, agent },
        (answer: IncomingMessage) => {
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('error', () => reset());
          answer.on('end', () => {
            const body = Buffer.concat(chunks);
            const status = answer.statusCode ?? 0;
            records.push({ url, status, bodyHash: digest(body) });
            const out: IncomingHttpHeaders = { ...answer.headers };
            delete out.connection;
            delete out['keep-alive'];
            delete out['transfer-encoding'];
            if (req.method !== 'HEAD') out['content-length'] = String(body.length);
            res.writeHead(status, out);
            res.end(body);
          });
        },
      );
      upstream.on('error', () => reset());
      upstream.end();
    } catch {
      reset('unsendable');
    }
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    records,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

// ---- the client ------------------------------------------------------------------------------------

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}
type Outcome = { kind: 'answer'; answer: Answer } | { kind: 'error'; code: string; message: string; reusedSocket: boolean };

let gw: TestGateway;
let explorer: FixtureExplorer;
let tap: Tap;
let port: number;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One request through node:http with the target, method, header lines and body exactly as given. */
function exchange(r: FuzzRequest, fresh: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const lines: string[] = r.omitHost ? [] : ['host', `127.0.0.1:${port}`];
    for (const [k, v] of r.headers) lines.push(k, v);
    // With header lines in an array, node:http frames a body only when told how: Content-Length
    // unless the request says Transfer-Encoding (then node:http chunks it).
    if (r.body !== undefined && !r.headers.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k))) {
      lines.push('content-length', String(Buffer.byteLength(r.body)));
    }
    // A CONNECT's answer comes with the connection handed over ('connect'): never a pooled one.
    const connect = r.method.toUpperCase() === 'CONNECT';
    let req: ReturnType<typeof httpRequest>;
    try {
      req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: r.method,
          path: r.target,
          headers: lines,
          setHost: false,
          agent: fresh || connect ? false : agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err: NodeJS.ErrnoException) =>
            resolve({ kind: 'error', code: err.code ?? 'ERROR', message: err.message, reusedSocket: req.reusedSocket }),
          );
          res.on('end', () =>
            resolve({ kind: 'answer', answer: { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) } }),
          );
        },
      );
    } catch (err) {
      // node:http refused to send it: a generator bug, not the gateway's.
      throw new Error(`the test cannot send ${describeRequest(r)}: ${(err as Error).message}`, { cause: err });
    }
    req.setTimeout(ANSWER_TIMEOUT_MS, () =>
      req.destroy(Object.assign(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`), { code: 'HANG' })),
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ kind: 'error', code: err.code ?? 'ERROR', message: err.message, reusedSocket: req.reusedSocket }),
    );
    req.on('connect', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      const chunks = [head];
      const done = () => {
        socket.destroy();
        resolve({ kind: 'answer', answer: { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) } });
      };
      socket.setTimeout(ANSWER_TIMEOUT_MS, () => {
        socket.destroy();
        resolve({
          kind: 'error',
          code: 'HANG',
          message: `no end of the CONNECT answer within ${ANSWER_TIMEOUT_MS} ms`,
          reusedSocket: false,
        });
      });
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', done);
      socket.on('error', done);
    });
    req.end(r.body);
  });
}

// ---- the properties, each a named check ---------------------------------------------------------------

class Violation extends Error {
  constructor(check: string, detail: string) {
    super(`${check}: ${detail}`);
    this.name = 'Violation';
  }
}
function violation(check: string, detail: string): never {
  throw new Violation(check, detail);
}

/**
 * A refusal by Node's parser (a request it could not make of the bytes, so without a request id
 * or an interface): no body, fastify's clientError body
 * (`{"error":"Bad Request","message":"Client Error","statusCode":400}`, defaultClientErrorHandler
 * in https://github.com/fastify/fastify/blob/main/fastify.js), or the gateway's own
 * `{"message"}` for that status (a clientErrorHandler, https://nodejs.org/api/http.html#event-clienterror).
 */
function isNodeRefusal(r: FuzzRequest, a: Answer): boolean {
  if (!nodeMayRefuse(r) || ![400, 408, 431].includes(a.status) || a.headers['x-request-id'] !== undefined) return false;
  if (a.body.length === 0) return true;
  try {
    const body = JSON.parse(a.body.toString('utf8')) as unknown;
    if (!isRecord(body)) return false;
    if (keysAre(body, ['error', 'message', 'statusCode'])) return body.statusCode === a.status;
    return keysAre(body, ['message']) && typeof body.message === 'string' && MESSAGES.get(body.message) === a.status;
  } catch {
    return false;
  }
}

/**
 * The gateway answers: no hang, no dropped connection. A keep-alive connection the server closed
 * just as it was reused is retried once on a new one, as Node's documentation advises
 * (https://nodejs.org/api/http.html#requestreusedsocket); Node may drop a request it refuses.
 */
async function gatewayAnswers(r: FuzzRequest): Promise<Answer | undefined> {
  let outcome = await exchange(r, false);
  if (outcome.kind === 'error' && outcome.reusedSocket && outcome.code === 'ECONNRESET') outcome = await exchange(r, true);
  if (outcome.kind === 'answer') return outcome.answer;
  if (outcome.code !== 'HANG' && nodeMayRefuse(r)) return undefined;
  return violation('gatewayAnswers', `${outcome.code}: ${outcome.message}`);
}

/** Never 5xx, but a 502 when the explorer answered 5xx or reset for this request. */
function noServerError(r: FuzzRequest, a: Answer, window: readonly TapRecord[]): void {
  if (a.status < 500) return;
  const explorerFailed = window.some((t) => t.status === 'reset' || (typeof t.status === 'number' && t.status >= 500));
  if (a.status === 502 && explorerFailed) return;
  if (a.status === 503 && opsPath(r) === '/readyz') return; // not ready yet: docs/operator-guide.md, "Operating it"
  violation('noServerError', `${a.status} ${a.body.toString('utf8').slice(0, 300)}; the explorer answered ${JSON.stringify(window)}`);
}

const MESSAGES: ReadonlyMap<string, number> = new Map(Object.values(ERRORS).map((e) => [e.message, e.status]));
/** The status of a gateway message: the registry's, or the conflict's, which names the two places it found (src/auth/credentials.ts). */
const messageStatus = (m: string): number | undefined => MESSAGES.get(m) ?? (m.startsWith('Conflicting API keys in ') ? 401 : undefined);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const keysAre = (v: Record<string, unknown>, keys: string[]) => Object.keys(v).sort().join() === [...keys].sort().join();

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
/** The decoded path of a GET or HEAD to an endpoint fastify routes itself (src/app/ops.ts, discovery.ts), or undefined. */
function opsPath(r: FuzzRequest): string | undefined {
  const method = r.method.toUpperCase(); // node:http sends methods in upper case
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const path = safeDecode(r.target.split(/[?#]/, 1)[0] ?? '');
  return ['/healthz', '/readyz', '/metrics', '/api/json/config'].includes(path) ? path : undefined;
}

/**
 * Whether the gateway answers the target in the legacy interface: `/api` and `/v2/api` (the
 * Etherscan forms) and `/{chain}/api`, a trailing slash allowed (src/routes/resolve.ts). Its
 * refusals are in the envelope, v2's are `{"message"}` (docs/clients.md, "Statuses").
 */
function isLegacyTarget(r: FuzzRequest): boolean {
  const path = r.target.split('?', 1)[0] ?? '';
  return /^\/(v2\/)?api\/?$/.test(path) || /^\/[^/]*\/api\/?$/.test(path);
}

/** The body is the gateway's JSON (its message, JsonErrorResponse, the legacy envelope) or the explorer's answer. */
function answerIsGatewaysOrExplorers(r: FuzzRequest, a: Answer, explorerBodies: ReadonlySet<string>): void {
  if (isNodeRefusal(r, a) || explorerBodies.has(digest(a.body))) return;
  if (r.method.toUpperCase() === 'HEAD') {
    if (a.body.length > 0) violation('answerIsGatewaysOrExplorers', `a HEAD answer with a body of ${a.body.length} bytes`);
    return;
  }
  const text = a.body.toString('utf8');
  const fail = (why: string) => violation('answerIsGatewaysOrExplorers', `${why}: ${a.status} ${text.slice(0, 300)}`);
  const ops = opsPath(r);
  if (ops === '/metrics' && a.status === 200 && /^text\/plain/.test(a.headers['content-type'] ?? '')) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return fail('not JSON, and not what the explorer answered');
  }
  if (!isRecord(body)) return fail('not an object');
  if (ops === '/healthz' && a.status === 200 && body.status === 'ok') return;
  if (ops === '/readyz' && ((a.status === 200 && body.status === 'ready') || (a.status === 503 && body.status === 'not ready'))) return;
  if (ops === '/api/json/config' && a.status === 200 && keysAre(body, ['chains', 'costs'])) return;
  const legacy = isLegacyTarget(r);
  if (keysAre(body, ['message']) && typeof body.message === 'string') {
    if (legacy) return fail('a refusal of a legacy request not in the envelope');
    const status = messageStatus(body.message) ?? (body.message === 'Bad request' ? 400 : undefined); // src/app/server.ts frameworkErrors
    if (status === a.status) return;
    return fail('a message that is not the gateway’s for this status');
  }
  if (keysAre(body, ['message', 'result', 'status']) && typeof body.message === 'string' && body.result === null && body.status === '0') {
    if (!legacy) return fail('the legacy envelope for a request that is not legacy');
    const status = messageStatus(body.message);
    if (status === a.status || a.status === 200) return; // a refusal, or a legacy parameter error (HTTP 200)
    return fail('a legacy envelope with a status of another refusal');
  }
  if (keysAre(body, ['errors']) && Array.isArray(body.errors) && body.errors.length > 0 && a.status === 422 && !legacy) {
    const ok = body.errors.every(
      (e: unknown) =>
        isRecord(e) &&
        e.title === 'Invalid value' &&
        typeof e.detail === 'string' &&
        isRecord(e.source) &&
        typeof e.source.pointer === 'string' &&
        e.source.pointer.startsWith('/'),
    );
    if (ok) return;
  }
  return fail('neither the gateway’s JSON nor the explorer’s answer');
}

/** Every answer of the API carries an x-request-id: the client's own if it is a sane token (docs/clients.md, "Response headers"). */
function carriesRequestId(r: FuzzRequest, a: Answer): void {
  if (isNodeRefusal(r, a) || opsPath(r) !== undefined) return;
  const id = a.headers['x-request-id'];
  if (typeof id !== 'string' || !CLIENT_ID.test(id)) violation('carriesRequestId', `x-request-id ${JSON.stringify(id)} on a ${a.status}`);
  const given = r.headers.filter(([k]) => k.toLowerCase() === 'x-request-id').map(([, v]) => v);
  if (given.length === 1 && CLIENT_ID.test(given[0]!) && id !== given[0]) {
    violation('carriesRequestId', `the client's x-request-id ${given[0]} came back as ${id}`);
  }
}

/** No `..`, encoded dot or separator, backslash, CR, LF or NUL in the path the explorer is asked for. */
function pathIsClean(e: RecordedRequest): void {
  const path = e.url.split('?', 1)[0] ?? '';
  if (/\.\.|%2e|%2f|%5c|\\|%0[0ad]|[\r\n\0]/i.test(path)) violation('pathIsClean', `the explorer was asked for ${e.url}`);
  if (/[\r\n\0]/.test(e.url)) violation('pathIsClean', `a control character in ${JSON.stringify(e.url)}`);
}

/** Query pairs of a forwarded URL, decoded as Plug decodes them; undefined for an undecodable one. */
function forwardedPairs(url: string): [string, string][] | string {
  const q = url.indexOf('?');
  if (q === -1) return [];
  const out: [string, string][] = [];
  for (const part of url.slice(q + 1).split('&')) {
    const eq = part.indexOf('=');
    try {
      const name = decodeURIComponent((eq === -1 ? part : part.slice(0, eq)).replaceAll('+', ' '));
      const value = decodeURIComponent((eq === -1 ? '' : part.slice(eq + 1)).replaceAll('+', ' '));
      out.push([name, value]);
    } catch {
      return `an undecodable pair ${part}`;
    }
  }
  return out;
}

/** `apikey` once, the chain's upstreamApiKey. */
function apikeyIsUpstreams(e: RecordedRequest): void {
  const pairs = forwardedPairs(e.url);
  if (typeof pairs === 'string') return violation('apikeyIsUpstreams', `${pairs} in ${e.url}`);
  const keys = pairs.filter(([n]) => n.toLowerCase().replace(/[^a-z]/g, '') === 'apikey');
  if (keys.length !== 1 || keys[0]![0] !== 'apikey' || keys[0]![1] !== UPSTREAM_KEY) {
    violation('apikeyIsUpstreams', `the explorer got ${JSON.stringify(keys)} in ${e.url}`);
  }
}

/** No client key in the URL (raw or decoded) or in any header. */
function noClientKeyUpstream(e: RecordedRequest): void {
  const places = [e.url, safeDecode(e.url), ...Object.values(e.headers).flat()];
  for (const key of CLIENT_KEYS) {
    const at = places.find((p) => p?.includes(key));
    if (at !== undefined) violation('noClientKeyUpstream', `the client key ${key} reached the explorer in ${at.slice(0, 300)}`);
  }
}

/** Headers built from scratch: no Authorization, nothing of the client's but show-scam-tokens. */
function headersAreGateways(e: RecordedRequest): void {
  const extra = Object.keys(e.headers).filter((h) => !UPSTREAM_HEADERS.has(h));
  if (extra.length > 0 || e.headers.authorization !== undefined) {
    violation('headersAreGateways', `the explorer got the headers ${extra.join(', ')} (${e.url})`);
  }
  const { accept, host, 'user-agent': agent, 'x-request-id': id } = e.headers;
  if (typeof id !== 'string' || !CLIENT_ID.test(id)) violation('headersAreGateways', `x-request-id ${JSON.stringify(id)} sent upstream`);
  if (agent !== USER_AGENT) violation('headersAreGateways', `user-agent ${String(agent)} sent upstream`);
  // docs/clients.md, "What is forwarded": `show-scam-tokens: true` only, any other value is no header at all.
  const scam = e.headers['show-scam-tokens'];
  if (scam !== undefined && scam !== 'true') violation('headersAreGateways', `show-scam-tokens ${JSON.stringify(scam)} sent upstream`);
  // The upstream's own host, never the client's Host (it could pick another virtual host behind the explorer's proxy).
  if (host !== new URL(tap.url).host) violation('headersAreGateways', `host ${String(host)} sent upstream`);
  if (accept !== 'application/json' && accept !== 'text/csv, application/json')
    violation('headersAreGateways', `accept ${String(accept)} sent upstream`);
}

/**
 * Where a route's own checks are documented to accept more than its document's schema
 * (docs/clients.md, "Parameters and validation": getTokenHolders' page and offset are non-negative
 * integers, the document says from 1).
 */
const NON_NEGATIVE = /^(0|[1-9][0-9]*)$/;
const DOCUMENTED_RELAXATIONS: Readonly<Record<string, Readonly<Record<string, (v: string) => boolean>>>> = {
  'legacy.getTokenHolders': { page: (v) => NON_NEGATIVE.test(v), offset: (v) => NON_NEGATIVE.test(v) },
};

/** Why a forwarded value is not one the parameter's check accepts, in canonical form; undefined when it is. */
function valueProblem(schema: ParamSchema, value: string): string | undefined {
  const r = paramCheck(schema)(value);
  if (!r.ok) return `does not pass its check (${r.detail})`;
  if (r.value !== value || !looksCanonical(schema, value)) return `is not in canonical form (docs/clients.md, "Parameters and validation")`;
  return undefined;
}

/**
 * docs/clients.md, "Parameters and validation": what is forwarded is canonical, "integers without leading
 * zeros, hashes in lower case". Checked here without the gateway's own code.
 */
function looksCanonical(schema: ParamSchema, value: string): boolean {
  const branches = [schema, ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  if (/^[+-]?[0-9]+$/.test(value) && branches.some((b) => b.type === 'integer')) return /^(0|-?[1-9][0-9]*)$/.test(value);
  if (/^0x[0-9a-f]{40}([0-9a-f]{24})?$/i.test(value) && branches.some((b) => b.pattern?.includes('{40}') || b.pattern?.includes('{64}'))) {
    return value === value.toLowerCase();
  }
  return true;
}

/** The v2 route whose template the forwarded path fills with values that pass their checks, canonical. */
function v2RoutesFor(path: string): V2RouteSpec[] {
  const segments = path.split('/').slice(1);
  return V2.filter((spec) => {
    if (spec.segments.length !== segments.length) return false;
    let i = 0;
    return spec.segments.every((s, at) => {
      const raw = segments[at] ?? '';
      if (typeof s === 'string') return s === raw;
      const p = spec.pathParams[i++];
      const value = safeDecode(raw);
      return p !== undefined && encodeURIComponent(value) === raw && valueProblem(p.schema, value) === undefined;
    });
  });
}

/** Why the query does not fit the v2 route, or undefined when it does. */
function v2QueryProblem(spec: V2RouteSpec, pairs: readonly [string, string][]): string | undefined {
  const byName = new Map(spec.queryParams.map((p) => [p.name, p]));
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    const bracket = name.indexOf('[');
    const base = bracket > 0 ? name.slice(0, bracket) : name;
    const p = byName.get(base);
    if (!p) return `${name} is not declared`;
    if (p.schema.type === 'object') continue; // the search route's paging objects: any value (param-check.ts)
    if (name === `${base}[]` && p.schema.type === 'array') {
      const problem = valueProblem(p.schema.items ?? {}, value);
      if (problem !== undefined) return `${name}=${value} ${problem}`;
      continue;
    }
    if (bracket > 0) return `${name} is not declared`;
    if (seen.has(name)) return `${name} twice`;
    seen.add(name);
    const problem = valueProblem(p.schema, value);
    if (problem !== undefined) return `${name}=${value} ${problem}`;
  }
  const missing = spec.queryParams.find((p) => p.required && !seen.has(p.name));
  return missing ? `required ${missing.name} missing` : undefined;
}

/** Why the query does not fit a legacy action, or undefined when it does. */
function legacyQueryProblem(pairs: readonly [string, string][]): string | undefined {
  const module = pairs.find(([n]) => n === 'module')?.[1];
  const action = pairs.find(([n]) => n === 'action')?.[1];
  const spec = LEGACY.find((s) => s.module === module && s.action === action);
  if (!spec) return `no legacy action module=${module} action=${action}`;
  const byName = new Map(spec.params.map((p) => [p.forwardAs ?? p.name, p]));
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    if (seen.has(name)) return `${name} twice`;
    seen.add(name);
    if (name === 'module' || name === 'action') continue;
    const p = byName.get(name);
    if (!p) return `${name} is not declared by ${spec.name}`;
    const relaxed = DOCUMENTED_RELAXATIONS[spec.name]?.[p.name];
    // A lenient list loses the items its controller skips, and may be left with none
    // (getcontractcreation/2 answers an empty list then; docs/clients.md, "Parameters and validation").
    const emptyList = p.lenient === true && p.schema.type === 'array' && value === '';
    let problem: string | undefined;
    if (relaxed) problem = relaxed(value) ? undefined : 'does not pass its documented check';
    else if (!emptyList) problem = valueProblem(p.schema, value);
    if (problem !== undefined) return `${name}=${value} ${problem} (${spec.name})`;
  }
  const missing = spec.params.find((p) => p.required && !seen.has(p.forwardAs ?? p.name));
  return missing ? `required ${missing.name} missing for ${spec.name}` : undefined;
}

/** A v2 template with checked path values, or /api with a legacy action; only declared, checked query parameters. */
function allowedByRouteTable(e: RecordedRequest): void {
  const path = e.url.split('?', 1)[0] ?? '';
  const all = forwardedPairs(e.url);
  if (typeof all === 'string') return violation('allowedByRouteTable', `${all} in ${e.url}`);
  const pairs = all.filter(([n]) => n !== 'apikey'); // apikeyIsUpstreams checks it
  if (path === '/api') {
    const problem = legacyQueryProblem(pairs);
    if (problem !== undefined) violation('allowedByRouteTable', `${problem}: ${e.url}`);
    return;
  }
  const candidates = v2RoutesFor(path);
  if (candidates.length === 0) violation('allowedByRouteTable', `no route of the table has the path ${path}`);
  const problems = candidates.map((spec) => v2QueryProblem(spec, pairs));
  if (!problems.includes(undefined)) violation('allowedByRouteTable', `${problems.join('; ')}: ${e.url}`);
}

/** Every check of what reached the explorer, on each request it received since the last call. */
function explorerReceivedOnlyAllowed(window: readonly TapRecord[]): void {
  // What the tap could not even send (a target with bytes node:http refuses) never reached the explorer's log.
  const unsendable = window.find((t) => t.status === 'unsendable');
  if (unsendable) violation('pathIsClean', `the gateway sent upstream ${JSON.stringify(unsendable.url)}`);
  for (const e of explorer.requests.splice(0)) {
    pathIsClean(e);
    apikeyIsUpstreams(e);
    noClientKeyUpstream(e);
    headersAreGateways(e);
    allowedByRouteTable(e);
  }
}

/** The credits spent by the keys a generated request can be billed to, as the quota store keeps them. */
async function spentNow(): Promise<number> {
  const state = gw.app.gateway.state();
  const now = state.now();
  let total = 0;
  for (const secret of [DEMO_KEY, LIMITED_KEY]) {
    const key = state.keys.find(secret, now);
    if (key !== undefined) total += (await state.quota.store.balance(key.account, key.plan.period, now)).spent;
  }
  return total;
}

/**
 * No 4xx costs credits but an upstream's 404 (docs/clients.md, "What is billed"): the explorer's
 * answer is one whose body it sent, that carries x-cache (only an entry of the explorer's does),
 * or, for HEAD, one the explorer answered 404 to just now.
 */
function refusalsUnbilled(r: FuzzRequest, a: Answer, window: readonly TapRecord[], spent: number): void {
  if (spent === 0 || a.status < 400 || a.status >= 500) return;
  const explorers = explorerBodies.has(digest(a.body)) || a.headers['x-cache'] !== undefined || window.some((t) => t.status === 404);
  if (a.status === 404 && explorers) return;
  summary.billedRefusals++;
  violation('refusalsUnbilled', `${describeRequest(r)}: ${a.status} billed ${spent} credits: ${a.body.toString('utf8').slice(0, 200)}`);
}

/** A token-balances call with the demo key, in the header and in the query by turns. */
const KNOWN_GOOD = [
  fuzzRequest({
    family: 'known good',
    method: 'GET',
    target: KNOWN_GOOD_PATH,
    headers: [['authorization', `Bearer ${DEMO_KEY}`]],
    body: undefined,
  }),
  fuzzRequest({ family: 'known good', method: 'GET', target: `${KNOWN_GOOD_PATH}?apikey=${DEMO_KEY}`, headers: [], body: undefined }),
] as const;
let knownGoodTurn = 0;

/** Right after any request, a known good one is served. */
async function knownGoodStillServed(): Promise<void> {
  const good = KNOWN_GOOD[knownGoodTurn++ % 2]!;
  const outcome = await exchange(good, false);
  const retried = outcome.kind === 'error' && outcome.reusedSocket && outcome.code === 'ECONNRESET' ? await exchange(good, true) : outcome;
  if (retried.kind === 'error') violation('knownGoodStillServed', `${describeRequest(good)}: ${retried.code}: ${retried.message}`);
  if (retried.answer.status !== 200) {
    violation(
      'knownGoodStillServed',
      `${describeRequest(good)}: ${retried.answer.status} ${retried.answer.body.toString('utf8').slice(0, 300)}`,
    );
  }
}

const explorerBodies = new Set<string>();
/** What the run did, printed at the end: the statuses seen and how many requests reached the explorer. */
const summary = { statuses: new Map<string, number>(), forwarded: 0, billedRefusals: 0 };

/** What the tap saw since the last call; every body the explorer answered is remembered (a cache may serve it later). */
function drainTap(): TapRecord[] {
  const window = tap.records.splice(0);
  for (const t of window) if (t.bodyHash !== undefined) explorerBodies.add(t.bodyHash);
  return window;
}

/** One generated request and every property about it. */
async function exercise(r: FuzzRequest): Promise<void> {
  drainTap(); // a stale entry's refresh in the background belongs to no request
  // The in-process store bills and refunds before the answer's bytes can reach this client.
  const spentBefore = await spentNow();
  const answer = await gatewayAnswers(r);
  const spent = (await spentNow()) - spentBefore;
  const window = drainTap();
  const status = answer === undefined ? 'dropped by Node' : String(answer.status);
  summary.statuses.set(status, (summary.statuses.get(status) ?? 0) + 1);
  summary.forwarded += window.length;
  if (TRACE !== undefined) appendFileSync(TRACE, `${status} ${window.length} ${describeRequest(r)}\n`);
  explorerReceivedOnlyAllowed(window);
  if (answer !== undefined) {
    noServerError(r, answer, window);
    answerIsGatewaysOrExplorers(r, answer, explorerBodies);
    carriesRequestId(r, answer);
    refusalsUnbilled(r, answer, window, spent);
  }
  await knownGoodStillServed();
  explorerReceivedOnlyAllowed(drainTap());
}

// ---- the tests --------------------------------------------------------------------------------------

beforeAll(async () => {
  explorer = await startFixtureExplorer();
  tap = await startTap(explorer);
  gw = await startGateway(
    makeConfig([tap.url], {
      chains: {
        '1': { name: 'Ethereum', upstreams: [tap.url], upstreamApiKey: UPSTREAM_KEY, timeoutMs: 2_000 },
        '100': { name: 'Gnosis', upstreams: [tap.url], upstreamApiKey: UPSTREAM_KEY, timeoutMs: 2_000 },
      },
      plans: { free: { rps: 1_000_000, credits: 1_000_000_000 } },
      keys: [
        { name: 'demo', key: DEMO_KEY, plan: 'free' },
        { name: 'gnosis-only', key: LIMITED_KEY, plan: 'free', chains: ['100'] },
        { name: 'disabled', key: DISABLED_KEY, plan: 'free', status: 'disabled' },
        { name: 'unverified', key: UNVERIFIED_KEY, plan: 'free', status: 'unverified' },
      ],
    }),
  );
  port = Number(new URL(gw.url).port);
  console.log(`fuzz: seed ${SEED}, ${RUNS} generated requests (FUZZ_SEED, FUZZ_RUNS)`);
});
afterAll(async () => {
  const statuses = [...summary.statuses].sort(([a], [b]) => (a < b ? -1 : 1)).map(([s, n]) => `${s}: ${n}`);
  console.log(
    `fuzz: seed ${SEED}; statuses ${statuses.join(', ')}; ${summary.forwarded} forwarded to the explorer; ${summary.billedRefusals} refusals billed`,
  );
  agent.destroy();
  await gw?.close();
  await tap?.close();
  await explorer?.close();
});

async function fuzz(arb: fc.Arbitrary<FuzzRequest>, numRuns: number): Promise<void> {
  await fc.assert(fc.asyncProperty(arb, exercise), {
    seed: SEED,
    numRuns,
    ...(REPLAY_PATH === undefined ? {} : { path: REPLAY_PATH, endOnFailure: true }),
  });
}

describe(`the gateway under generated requests (seed ${SEED})`, () => {
  it('sanity: the known good request is served and checked', async () => {
    const before = await spentNow();
    await exercise(KNOWN_GOOD[0]);
    expect(explorerBodies.size).toBeGreaterThan(0);
    // refusalsUnbilled reads real balances: the two known good requests were billed.
    expect((await spentNow()) - before).toBeGreaterThan(0);
  });

  it('v2 routes of the table, valid and mutated', { timeout: timeoutFor(runsOf('v2')) }, async () => {
    await fuzz(v2Request, runsOf('v2'));
  });

  it('legacy actions and the Etherscan forms', { timeout: timeoutFor(runsOf('legacy')) }, async () => {
    await fuzz(legacyRequest, runsOf('legacy'));
  });

  it('random targets, methods and headers anywhere', { timeout: timeoutFor(runsOf('anywhere')) }, async () => {
    await fuzz(anywhereRequest, runsOf('anywhere'));
  });
});
