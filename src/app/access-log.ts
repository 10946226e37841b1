// One JSON line per finished request (`log.requests`), like nginx's access log: method, path
// without its query (the query may carry `apikey`), status, chain, route, the key's name (never
// the key), cache outcome, upstream and timings. A key typed into the path itself is redacted
// (redactPath below).
//
// The line is written here, in pino's own layout (level, time, pid, hostname, the fields, msg:
// https://getpino.io/#/docs/api?id=logger), straight into the log's batch buffer
// (observability/log-output.ts): pino's general path (merging an object, serializers, hooks,
// then a string) cost a hit several microseconds a line (bench/results/2026-11-23-access-log.md).
// test/unit/access-log.test.ts holds it to the line pino writes for the same fields.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { MAX_JSON_BYTES_PER_UNIT, MAX_NUMBER_BYTES, type LogOutput } from '../observability/log-output.js';
import type { RequestContext } from '../request/context.js';
import type { AccessLog } from '../request/state.js';

/** The facts a line's middle was written from, and its bytes. */
interface Middle {
  status: number;
  keyName: string | undefined;
  cache: string | undefined;
  method: string;
  chainId: string | undefined;
  route: string | undefined;
  upstream: string | undefined;
  bytes: Uint8Array;
}
/** Request targets whose line middle is remembered, at most (then all are forgotten at once). */
const MIDDLES_MAX = 4_096;

/** The line's own names and punctuation, and its six numbers at their longest. */
const FIXED_BYTES = 256 + 6 * MAX_NUMBER_BYTES;

/** What stands in the logged path for a key taken out (pino's own word: https://getpino.io/#/docs/redaction). */
const REDACTED = '[Redacted]';

/** One character of a name as sent: itself (any case, under the `i` flag) or percent-encoded. */
const sent = (c: string) =>
  `(?:${c.replace(/[.]/, '\\.')}|%${c.toLowerCase().charCodeAt(0).toString(16)}|%${c.toUpperCase().charCodeAt(0).toString(16)})`;
const spelt = (word: string) => [...word].map(sent).join('');
/**
 * A key's name in a path, and what may stand between it and the key: `apikey` in any ASCII case,
 * the spelling the gateway takes from the query (auth/query-key.ts), and `api_key`, `api-key`,
 * `api.key`, each character as sent or percent-encoded (`%61pikey`), followed by `=`, `:` or `/`
 * (or their encodings). The gateway takes no key from the path (only from the query and the
 * `Authorization` header), so a key a client typed there (`/blocks/1;apikey=K`,
 * `/blocks/1&apikey=K`, `/apikey/K`) is known by its name alone: everything after the name is
 * taken out, whatever the key holds (a configured key may be any string, `/` and `;` included).
 */
const KEY_IN_PATH = new RegExp(
  `${spelt('api')}(?:${['-', '_', '.'].map(sent).join('|')})?${spelt('key')}(?:${['=', ':', '/'].map(sent).join('|')})(?=.)`,
  'is',
);
/**
 * Anything shaped like a gateway secret (keys/runtime.ts: `egw_` and 43 base-62 characters),
 * wherever it stands in the path, each character as sent or percent-encoded.
 */
const SECRET_IN_PATH = new RegExp(`${spelt('egw_')}(?:[A-Za-z0-9]|%(?:3[0-9]|[46][1-9a-f]|[57][0-9a]))+`, 'gi');
/** A cheap look first: a path with none of these has neither (every name above has `key` or `egw`, or `%`). */
const MAYBE_KEY = /key|egw|%/i;

/**
 * The path as the log shows it: everything after a key's name taken out (KEY_IN_PATH), and
 * every gateway secret (SECRET_IN_PATH) of at least 43 characters; anything else as sent.
 */
export function redactPath(path: string): string {
  if (!MAYBE_KEY.test(path)) return path;
  const named = KEY_IN_PATH.exec(path);
  let out = named === null ? path : path.slice(0, named.index + named[0].length) + REDACTED;
  out = out.replace(SECRET_IN_PATH, (m) => (m.length - countEncoded(m) * 2 >= 4 + 43 ? `egw_${REDACTED}` : m));
  return out;
}

/** Percent-encodings in `s` (each three characters for one). */
function countEncoded(s: string): number {
  let n = 0;
  for (let i = s.indexOf('%'); i !== -1; i = s.indexOf('%', i + 1)) n++;
  return n;
}

export function accessLog(log: Pick<Logger, 'isLevelEnabled'>, out: LogOutput): AccessLog {
  const host = hostname();
  // The line's start changes once a millisecond, not once a line: encoded once per millisecond.
  let startAt = -1;
  let start: Uint8Array = new Uint8Array(0);
  // The lines of an event-loop turn are written at its end (setImmediate), after the turn's
  // answers: a median 0.87 of an unlogged hit instead of 0.78 (bench/results/2026-11-23-access-log.md).
  // A line's `time` is when it is written, in the same turn; its `ms` ends at finish().
  const held: (RequestContext | string)[] = [];
  const middles = new Map<string, Middle>();
  let scheduled = false;
  const release = (): void => {
    scheduled = false;
    for (let i = 0; i < held.length; i += 3) write(held[i] as RequestContext, held[i + 1] as string, held[i + 2] as string);
    held.length = 0;
  };
  out.holdsLines(release);
  return (ctx, method, url) => {
    if (!log.isLevelEnabled('info')) return;
    ctx.finishedAt = performance.now();
    if (out.eager) return write(ctx, method, url);
    held.push(ctx, method, url);
    if (!scheduled) {
      scheduled = true;
      setImmediate(release);
    }
  };

  function write(ctx: RequestContext, method: string, url: string): void {
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const { chainId, route, key, cache, upstream, upstreamMs } = ctx;
    const keyName = key?.name;
    const units =
      host.length +
      ctx.id.length +
      method.length +
      // A key's name taken out of the path can make it longer by REDACTED, at most.
      path.length +
      REDACTED.length +
      (chainId?.length ?? 0) +
      (route?.length ?? 0) +
      (keyName?.length ?? 0) +
      (cache?.length ?? 0) +
      (upstream?.length ?? 0);
    out.begin(FIXED_BYTES + MAX_JSON_BYTES_PER_UNIT * units);
    const now = Date.now();
    if (now !== startAt) {
      start = Buffer.from(`{"level":30,"time":${now},"pid":${process.pid},"hostname":${JSON.stringify(host)},"reqId":`, 'utf8');
      startAt = now;
    }
    out.bytes(start);
    out.str(ctx.id);
    // From method to upstream, a line repeats the last one for the same path whenever the facts
    // are the same (every hit of one key on one URL): those bytes are copied, not encoded again.
    // The path is remembered without its query, and as a string of its own: a slice of the
    // target would keep the whole target, `apikey` and all, alive in the map. A path with a key
    // in it is never remembered, so a remembered one is logged as it is, unsearched.
    const middle = middles.get(path);
    if (
      middle !== undefined &&
      middle.status === ctx.status &&
      middle.keyName === keyName &&
      middle.cache === cache &&
      middle.method === method &&
      middle.chainId === chainId &&
      middle.route === route &&
      middle.upstream === upstream
    ) {
      out.bytes(middle.bytes);
    } else {
      const from = out.position;
      const logged = redactPath(path);
      writeMiddle(ctx, method, logged, keyName);
      if (logged === path) {
        if (middles.size >= MIDDLES_MAX) middles.clear();
        const own = q === -1 ? url : Buffer.from(path, 'utf8').toString('utf8');
        middles.set(own, { status: ctx.status, keyName, cache, method, chainId, route, upstream, bytes: out.copy(from) });
      }
    }
    if (upstreamMs !== undefined) {
      out.ascii(',"upstreamMs":');
      out.milli(upstreamMs);
    }
    out.ascii(',"ms":');
    out.milli(Math.round((ctx.finishedAt - ctx.startedAt) * 1000) / 1000);
    out.ascii(',"msg":"request"}\n');
    out.end();
  }

  function writeMiddle(ctx: RequestContext, method: string, path: string, keyName: string | undefined): void {
    const { chainId, route, cache, upstream } = ctx;
    out.ascii(',"method":');
    out.str(method);
    out.ascii(',"path":');
    out.str(path);
    out.ascii(',"status":');
    out.int(ctx.status);
    // Absent facts are left out, as JSON.stringify (and so pino) leaves out undefined.
    if (chainId !== undefined) {
      out.ascii(',"chain":');
      out.str(chainId);
    }
    if (route !== undefined) {
      out.ascii(',"route":');
      out.str(route);
    }
    if (keyName !== undefined) {
      out.ascii(',"key":');
      out.str(keyName);
    }
    if (cache !== undefined) {
      out.ascii(',"cache":');
      out.str(cache);
    }
    if (upstream !== undefined) {
      out.ascii(',"upstream":');
      out.str(upstream);
    }
  }
}
