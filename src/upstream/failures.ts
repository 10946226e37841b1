// Every way a request to an explorer can fail, in one table (the model of @fastify/reply-from's
// error mapping): what the client gets (an error code of http/errors.ts, hence its status and
// message), the kind counted in egw_upstream_errors_total, and whether the request never reached
// the upstream, so that the chain's next upstream may be tried. Failures are told apart by
// undici's error classes (https://undici.nodejs.org/#/docs/api/Errors) and Node's system error
// codes (https://nodejs.org/api/errors.html#common-system-errors), never by message text.
import { errors } from 'undici';
import { GatewayError, type ErrorCode } from '../http/errors.js';

export type UpstreamErrorKind =
  'timeout' | 'unreachable' | 'status_5xx' | 'throttled' | 'busy' | 'redirect' | 'invalid_body' | 'reset' | 'too_large' | 'error';

export interface FailureRule {
  /** What the row matches, for docs/operator-guide.md (Metrics) and the test that walks the table. */
  readonly what: string;
  readonly matches: (err: unknown) => boolean;
  readonly code: ErrorCode;
  readonly kind: UpstreamErrorKind;
  /** The request was never written: another upstream of the chain may be tried, even for a write. */
  readonly beforeRequest: boolean;
  /** A read that failed so is tried again on the chain's next upstream (issue 37: a timeout, a 5xx, a 429, a bad answer). */
  readonly retryRead: boolean;
  /** How the attempt counts in upstream/health.ts (egw_upstream_attempts_total's outcome), or undefined when it says nothing of the upstream. */
  readonly outcome: 'timeout' | '5xx' | '429' | 'refused' | 'invalid' | 'reset' | undefined;
}

/** The chain's deadline (`timeoutMs`) passed: the one timeout a client sees. */
export class DeadlinePassed extends Error {
  override readonly name = 'DeadlinePassed';
}

/** One attempt's share of the deadline (failover.attemptTimeoutMs) passed: the next upstream is tried. */
export class AttemptTimedOut extends Error {
  override readonly name = 'AttemptTimedOut';
}

/** Every upstream of the chain is out of the rotation and a trial is already in flight: nothing was sent. */
export class NoUpstreamAvailable extends Error {
  override readonly name = 'NoUpstreamAvailable';
  constructor(readonly retryAfterSeconds: number) {
    super('every upstream is ejected, cooling or refusing connections');
  }
}

/** An upstream answered with a status not passed on (5xx, 3xx, 429): neither its body nor its Location is. */
export class UpstreamStatus extends Error {
  override readonly name = 'UpstreamStatus';
  constructor(
    readonly status: number,
    /** A 429's Retry-After, in ms, when it had a usable one (RFC 9110 section 10.2.3). */
    readonly retryAfterMs?: number,
  ) {
    super(`upstream answered ${status}`);
  }
}

/** Retry-After as ms: delay-seconds or an HTTP-date (RFC 9110 section 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const text = v.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** A 2xx answer that is not the JSON every buffered route of Blockscout answers with. */
export class UpstreamInvalidBody extends Error {
  override readonly name = 'UpstreamInvalidBody';
}

const statusIn = (from: number, to: number) => (err: unknown) => err instanceof UpstreamStatus && err.status >= from && err.status <= to;

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};
const hasCode =
  (...codes: string[]) =>
  (err: unknown): boolean =>
    codes.includes(codeOf(err) ?? '');
const isA =
  (...classes: (abstract new (...args: never[]) => Error)[]) =>
  (err: unknown): boolean =>
    classes.some((c) => err instanceof c);

/** First match wins. */
export const FAILURES: readonly FailureRule[] = [
  {
    what: "the chain's deadline (timeoutMs) passed",
    matches: isA(DeadlinePassed),
    code: 'UPSTREAM_TIMEOUT',
    kind: 'timeout',
    beforeRequest: false,
    retryRead: false,
    outcome: 'timeout',
  },
  {
    what: "one attempt's share of the deadline (failover.attemptTimeoutMs) passed",
    matches: isA(AttemptTimedOut),
    code: 'UPSTREAM_TIMEOUT',
    kind: 'timeout',
    beforeRequest: false,
    retryRead: true,
    outcome: 'timeout',
  },
  {
    what: 'every upstream is out of the rotation (ejected, cooling after a 429, refusing connections) and one trial is in flight',
    matches: isA(NoUpstreamAvailable),
    code: 'UPSTREAM_BUSY',
    kind: 'busy',
    beforeRequest: true,
    retryRead: false,
    outcome: undefined,
  },
  {
    what: "undici's own headers or body timeout",
    matches: isA(errors.HeadersTimeoutError, errors.BodyTimeoutError),
    code: 'UPSTREAM_TIMEOUT',
    kind: 'timeout',
    beforeRequest: false,
    retryRead: true,
    outcome: 'timeout',
  },
  {
    what: 'connect timeout, refused, DNS failure, no route (ECONNREFUSED, ENOTFOUND, EAI_AGAIN, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL)',
    matches: (err) =>
      err instanceof errors.ConnectTimeoutError ||
      hasCode('ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL')(err),
    code: 'UPSTREAM_UNREACHABLE',
    kind: 'unreachable',
    beforeRequest: true,
    retryRead: true,
    outcome: 'refused',
  },
  {
    what: 'TLS handshake or certificate failure',
    matches: (err) => {
      const code = codeOf(err) ?? '';
      return (
        code.startsWith('ERR_TLS_') ||
        code.startsWith('CERT_') ||
        /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_)/.test(code)
      );
    },
    code: 'UPSTREAM_UNREACHABLE',
    kind: 'unreachable',
    beforeRequest: true,
    retryRead: true,
    outcome: 'refused',
  },
  {
    what: 'answer larger than the size limit',
    matches: isA(errors.ResponseExceededMaxSizeError),
    code: 'UPSTREAM_TOO_LARGE',
    kind: 'too_large',
    beforeRequest: false,
    retryRead: false,
    outcome: undefined,
  },
  {
    what: 'upstream answered 429 (its own rate limit: never passed on, the upstream cools for its Retry-After)',
    matches: statusIn(429, 429),
    code: 'UPSTREAM_BUSY',
    kind: 'throttled',
    beforeRequest: false,
    retryRead: true,
    outcome: '429',
  },
  {
    what: 'upstream answered 5xx',
    matches: statusIn(500, 599),
    code: 'UPSTREAM_ERROR',
    kind: 'status_5xx',
    beforeRequest: false,
    retryRead: true,
    outcome: '5xx',
  },
  {
    what: 'upstream answered 3xx (an explorer redirects nothing the gateway asks for; its Location is never passed on)',
    matches: statusIn(300, 399),
    code: 'UPSTREAM_ERROR',
    kind: 'redirect',
    beforeRequest: false,
    retryRead: true,
    outcome: 'invalid',
  },
  {
    what: 'a 2xx whose body is not the JSON it should be',
    matches: isA(UpstreamInvalidBody),
    code: 'UPSTREAM_ERROR',
    kind: 'invalid_body',
    beforeRequest: false,
    retryRead: true,
    outcome: 'invalid',
  },
  {
    what: 'connection reset or closed after the request was written, or a malformed answer',
    matches: (err) =>
      err instanceof errors.SocketError ||
      err instanceof errors.HTTPParserError ||
      err instanceof errors.ResponseContentLengthMismatchError ||
      hasCode('ECONNRESET', 'EPIPE', 'ECONNABORTED')(err),
    code: 'UPSTREAM_ERROR',
    kind: 'reset',
    beforeRequest: false,
    retryRead: true,
    outcome: 'reset',
  },
];

const OTHER: FailureRule = {
  what: 'anything else',
  matches: () => true,
  code: 'UPSTREAM_ERROR',
  kind: 'error',
  beforeRequest: false,
  retryRead: false,
  outcome: undefined,
};

/**
 * The rule of the first error in `err`'s cause chain that one matches: @fastify/reply-from
 * (request/stream.ts) wraps undici's errors in its own, keeping them as `cause`.
 */
export function classify(err: unknown): FailureRule {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    for (const rule of FAILURES) if (rule.matches(e)) return rule;
  }
  return OTHER;
}

/** What the client and the metrics see of a failed upstream request; `cause` keeps the original. */
export class UpstreamFailure extends GatewayError {
  /** The name (host) of the upstream that failed last, when one was tried. */
  readonly upstream: string | undefined;
  /** How long the request took until it failed, ms. */
  readonly ms: number | undefined;
  /** For a 503 UPSTREAM_BUSY: when to come back, seconds (the Retry-After the client gets). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly rule: FailureRule,
    options: { cause: unknown; upstream?: string | undefined; ms?: number | undefined; retryAfterSeconds?: number | undefined },
  ) {
    super(rule.code, { cause: options.cause });
    this.upstream = options.upstream;
    this.ms = options.ms;
    this.retryAfterSeconds = rule.code === 'UPSTREAM_BUSY' ? Math.max(1, Math.ceil(options.retryAfterSeconds ?? 1)) : undefined;
  }

  /** Headers the client's answer carries: Retry-After on a 503 busy (RFC 9110 section 10.2.3). */
  get headers(): Record<string, string> | undefined {
    return this.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(this.retryAfterSeconds) };
  }

  get kind(): UpstreamErrorKind {
    return this.rule.kind;
  }
}
