// CORS on the public listener, so that a dapp on another origin can call the gateway with a key,
// as it can call a Blockscout instance (Blockscout answers its API with CORSPlug,
// https://github.com/mschae/cors_plug, lib/cors_plug.ex, which adds its headers to every answer).
// The rules are the Fetch standard's CORS protocol (https://fetch.spec.whatwg.org/#http-cors-protocol).
// Pure: from `server.cors` to constant header lines, worked out once per configuration, so that
// an answer adds CORS by reading a field, never by building strings (a cache hit costs ~15 us
// of CPU; ../shared/reference/performance.md).
import { H_CACHE, H_CREDITS, H_LIMIT, H_REMAINING, H_REQUEST_ID, H_RESET, H_SCAM } from './headers.js';

export interface CorsConfig {
  /** `["*"]`, a list of serialized origins (`https://app.example`), or `[]` for no CORS. */
  readonly origins: readonly string[];
  readonly maxAgeSeconds: number;
}

/** What a preflight may ask for: the routes' methods (POST for JSON-RPC, contract section 9). */
export const CORS_ALLOW_METHODS = 'GET, HEAD, POST, OPTIONS';
/**
 * The request headers the gateway reads from a client, and nothing else: a preflight asking for
 * another is not echoed, so the browser refuses that request. `authorization` is listed by name
 * because the Fetch standard never lets a wildcard cover it; `content-type` for JSON bodies
 * (JSON-RPC) and forms; `show-scam-tokens` changes token answers (pipeline.ts); `x-request-id`
 * is kept as the request's id when a page sets its own (app/request-id.ts, issue 41).
 */
export const CORS_ALLOW_HEADERS = `authorization, content-type, ${H_SCAM}, ${H_REQUEST_ID}`;
/**
 * What browser code may read beyond the CORS-safelisted response headers (Fetch standard,
 * "CORS-safelisted response-header name"): its quota, the request id, the cache outcome and the
 * age of a cached answer, how long to wait after a 429 or 503, and why a key was refused
 * (`WWW-Authenticate` on a 401).
 */
export const CORS_EXPOSE_HEADERS = [
  H_LIMIT,
  H_REMAINING,
  H_RESET,
  H_CREDITS,
  H_REQUEST_ID,
  H_CACHE,
  'age',
  'retry-after',
  'www-authenticate',
].join(', ');

const ALLOW_ORIGIN = 'access-control-allow-origin';
const EXPOSE = 'access-control-expose-headers';
/**
 * An answer that depends on Origin says so, for HTTP caches, also when it carries no CORS
 * header (Fetch standard, "CORS protocol and HTTP caches"); one for any origin (`*`) does not.
 */
const VARY_ORIGIN = ['vary', 'origin'] as const;

/**
 * The CORS header lines of one configuration, as flat name/value pairs for writeHead. Every
 * array returned is built here once and shared: callers copy, never change them.
 */
export interface CorsPolicy {
  /**
   * The lines every answer (not a preflight) to a request with this `Origin` carries; undefined
   * for none. Access-Control-Allow-Credentials is never sent: keys travel in a header or the
   * query, never in cookies, so a credentialed request has nothing to gain.
   */
  linesFor(origin: string | undefined): readonly string[] | undefined;
  /**
   * The whole header of a preflight's 204 from this `Origin`: the Allow-* lines when the origin
   * is allowed, else none (`Vary: Origin` only, for a list), and the browser refuses the request.
   */
  preflightFor(origin: string | undefined): readonly string[];
}

const NONE: readonly string[] = Object.freeze([]);

export function corsPolicy(config: CorsConfig): CorsPolicy {
  const preflightOf = (origin: string): readonly string[] =>
    Object.freeze([
      ALLOW_ORIGIN,
      origin,
      'access-control-allow-methods',
      CORS_ALLOW_METHODS,
      'access-control-allow-headers',
      CORS_ALLOW_HEADERS,
      'access-control-max-age',
      String(config.maxAgeSeconds),
    ]);
  if (config.origins.length === 0) return { linesFor: () => undefined, preflightFor: () => NONE };
  if (config.origins.includes('*')) {
    // One answer for every origin, sent on every answer, Origin or not, as CORSPlug does.
    const lines = Object.freeze([ALLOW_ORIGIN, '*', EXPOSE, CORS_EXPOSE_HEADERS]);
    const preflight = preflightOf('*');
    return { linesFor: () => lines, preflightFor: () => preflight };
  }
  const answers = new Map<string, readonly string[]>();
  const preflights = new Map<string, readonly string[]>();
  for (const origin of config.origins) {
    answers.set(origin, Object.freeze([ALLOW_ORIGIN, origin, EXPOSE, CORS_EXPOSE_HEADERS, ...VARY_ORIGIN]));
    preflights.set(origin, Object.freeze([...preflightOf(origin), ...VARY_ORIGIN]));
  }
  // Origins are compared exactly as browsers serialize them (config/schema.ts insists on that
  // form); anything else, a missing Origin included, gets Vary only.
  const other: readonly string[] = Object.freeze([...VARY_ORIGIN]);
  return {
    linesFor: (origin) => (origin === undefined ? other : (answers.get(origin) ?? other)),
    preflightFor: (origin) => (origin === undefined ? other : (preflights.get(origin) ?? other)),
  };
}

/**
 * `lines` added to a header map (a streamed answer's, request/stream.ts): a Vary the upstream
 * sent keeps its values, and `origin` joins them.
 */
export function addCorsHeaders(headers: Record<string, string | string[]>, lines: readonly string[]): void {
  for (let i = 0; i < lines.length; i += 2) {
    const name = lines[i]!;
    const value = lines[i + 1]!;
    const had = headers[name];
    if (name === 'vary' && had !== undefined) headers[name] = `${Array.isArray(had) ? had.join(', ') : had}, ${value}`;
    else headers[name] = value;
  }
}
