// Every way a request to an explorer can fail, in one table (the model of @fastify/reply-from's
// error mapping): what the client gets (an error code of http/errors.ts, hence its status and
// message), the kind counted in egw_upstream_errors_total, and whether the request never reached
// the upstream, so that the chain's next upstream may be tried. Failures are told apart by
// undici's error classes (https://undici.nodejs.org/#/docs/api/Errors) and Node's system error
// codes (https://nodejs.org/api/errors.html#common-system-errors), never by message text.
import { errors } from 'undici';
import { GatewayError, type ErrorCode } from '../http/errors.js';

export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'status_5xx' | 'redirect' | 'invalid_body' | 'reset' | 'too_large' | 'error';

export interface FailureRule {
  /** What the row matches, for docs/operator-guide.md (Metrics) and the test that walks the table. */
  readonly what: string;
  readonly matches: (err: unknown) => boolean;
  readonly code: ErrorCode;
  readonly kind: UpstreamErrorKind;
  /** The request was never written: another upstream of the chain may be tried. */
  readonly beforeRequest: boolean;
}

/** The chain's deadline (`timeoutMs`) passed: the one timeout a client sees. */
export class DeadlinePassed extends Error {
  override readonly name = 'DeadlinePassed';
}

/** An upstream answered with a status not passed on (5xx, 3xx): neither its body nor its Location is. */
export class UpstreamStatus extends Error {
  override readonly name = 'UpstreamStatus';
  constructor(readonly status: number) {
    super(`upstream answered ${status}`);
  }
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
  },
  {
    what: "undici's own headers or body timeout",
    matches: isA(errors.HeadersTimeoutError, errors.BodyTimeoutError),
    code: 'UPSTREAM_TIMEOUT',
    kind: 'timeout',
    beforeRequest: false,
  },
  {
    what: 'connect timeout, refused, DNS failure, no route (ECONNREFUSED, ENOTFOUND, EAI_AGAIN, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL)',
    matches: (err) =>
      err instanceof errors.ConnectTimeoutError ||
      hasCode('ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL')(err),
    code: 'UPSTREAM_UNREACHABLE',
    kind: 'unreachable',
    beforeRequest: true,
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
  },
  {
    what: 'answer larger than the size limit',
    matches: isA(errors.ResponseExceededMaxSizeError),
    code: 'UPSTREAM_TOO_LARGE',
    kind: 'too_large',
    beforeRequest: false,
  },
  {
    what: 'upstream answered 5xx',
    matches: statusIn(500, 599),
    code: 'UPSTREAM_ERROR',
    kind: 'status_5xx',
    beforeRequest: false,
  },
  {
    what: 'upstream answered 3xx (an explorer redirects nothing the gateway asks for; its Location is never passed on)',
    matches: statusIn(300, 399),
    code: 'UPSTREAM_ERROR',
    kind: 'redirect',
    beforeRequest: false,
  },
  {
    what: 'a 2xx whose body is not the JSON it should be',
    matches: isA(UpstreamInvalidBody),
    code: 'UPSTREAM_ERROR',
    kind: 'invalid_body',
    beforeRequest: false,
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
  },
];

const OTHER: FailureRule = {
  what: 'anything else',
  matches: () => true,
  code: 'UPSTREAM_ERROR',
  kind: 'error',
  beforeRequest: false,
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

  constructor(
    readonly rule: FailureRule,
    options: { cause: unknown; upstream?: string | undefined; ms?: number | undefined },
  ) {
    super(rule.code, { cause: options.cause });
    this.upstream = options.upstream;
    this.ms = options.ms;
  }

  get kind(): UpstreamErrorKind {
    return this.rule.kind;
  }
}
