// Every refusal the gateway makes, defined once: code -> status and message (contract section 6),
// and the one place that renders bodies in the two shapes the contract fixes.

/** RFC 6750 section 3: a Bearer challenge, with `invalid_token` once a credential was given. */
const CHALLENGE = { 'www-authenticate': 'Bearer' };
const INVALID_TOKEN = { 'www-authenticate': 'Bearer error="invalid_token"' };

export interface ErrorSpec {
  readonly status: number;
  readonly message: string;
  /** Headers every answer with this code carries. */
  readonly headers?: Readonly<Record<string, string>>;
}

export const ERRORS = {
  NO_KEY: { status: 401, message: 'API key required', headers: CHALLENGE },
  BAD_KEY: { status: 401, message: 'Invalid API key', headers: INVALID_TOKEN },
  // The answer names the two places the keys came from (auth/credentials.ts, conflictMessage).
  CONFLICTING_KEYS: {
    status: 401,
    message: 'Conflicting API keys in the Authorization header and the apikey query parameter',
    headers: INVALID_TOKEN,
  },
  // A client's stand-in for a key it does not have (auth/credentials.ts, PLACEHOLDER_KEYS), alone.
  PLACEHOLDER_KEY: {
    status: 401,
    message: 'Invalid API key: api_key and YourApiKeyToken are placeholders that clients send, not keys',
    headers: INVALID_TOKEN,
  },
  BAD_AUTH_SCHEME: {
    status: 401,
    message: 'Authorization must be a Bearer token: Authorization: Bearer <API key>',
    headers: INVALID_TOKEN,
  },
  UNVERIFIED_KEY: { status: 403, message: 'Unverified email' },
  DISABLED_KEY: { status: 403, message: 'API key disabled' },
  EXPIRED_KEY: { status: 403, message: 'API key expired' },
  CHAIN_NOT_ALLOWED: { status: 403, message: 'API key not allowed on this chain' },
  // A key's own restrictions (admin API: `routes`, `ips`, `origins`); each message names its rule.
  ROUTE_NOT_ALLOWED: { status: 403, message: 'API key not allowed on this route (key restriction: routes)' },
  ADDRESS_NOT_ALLOWED: { status: 403, message: 'API key not allowed from this address (key restriction: ips)' },
  ORIGIN_NOT_ALLOWED: { status: 403, message: 'API key not allowed from this origin (key restriction: origins)' },
  UNKNOWN_CHAIN: { status: 404, message: 'Network not supported' },
  UNKNOWN_ROUTE: { status: 404, message: 'Route not found' },
  // A route of a service this gateway was not given (contract section 9): the message names the setting.
  STATS_NOT_CONFIGURED: { status: 404, message: 'Stats service not configured for this chain (chains.<chain_id>.stats.upstreams)' },
  BENS_NOT_CONFIGURED: { status: 404, message: 'Name service not configured (services.bens.upstreams)' },
  METADATA_NOT_CONFIGURED: { status: 404, message: 'Metadata service not configured (services.metadata.upstreams)' },
  MULTICHAIN_NOT_CONFIGURED: {
    status: 404,
    message: 'Search across chains not configured (services.multichain.upstreams, or clusters)',
  },
  UNKNOWN_CLUSTER: { status: 404, message: 'Cluster not found (clusters)' },
  // RFC 9110 section 15.5.6: a 405 lists the methods the resource supports.
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed', headers: { allow: 'GET, HEAD' } },
  // Written on the socket when Node cannot make a request of what arrived (http/connections.ts).
  BAD_REQUEST: { status: 400, message: 'Bad request', headers: { connection: 'close' } },
  REQUEST_TIMEOUT: { status: 408, message: 'Request timeout', headers: { connection: 'close' } },
  HEADERS_TOO_LARGE: { status: 431, message: 'Request headers too large', headers: { connection: 'close' } },
  // A POSTed form (legacy API, contract verification) or JSON-RPC body over its limit.
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'Expected a form body (application/x-www-form-urlencoded or multipart/form-data)',
  },
  BODY_INCOMPLETE: { status: 400, message: 'Request body not received whole' },
  LEGACY_NO_MODULE_ACTION: { status: 400, message: "Params 'module' and 'action' are required parameters" },
  LEGACY_UNKNOWN_MODULE: { status: 400, message: 'Unknown module' },
  LEGACY_UNKNOWN_ACTION: { status: 400, message: 'Unknown action' },
  CHAINID_REQUIRED: { status: 400, message: 'Query parameter chainid is required (the chain to ask, as in /v2/api?chainid=1)' },
  RATE_LIMITED: { status: 429, message: 'Too many requests' },
  // security.badKeys: the client's address sent too many unknown keys (auth/bad-keys.ts), refused
  // whatever key it sends until the block ends; RFC 6585 section 4 (https://www.rfc-editor.org/rfc/rfc6585#section-4)
  // lets a 429 say why and when to come back (Retry-After, added by the pipeline).
  TOO_MANY_BAD_KEYS: { status: 429, message: 'Too many invalid API keys from this address' },
  OUT_OF_CREDITS: { status: 402, message: 'Out of credits' },
  QUOTA_UNAVAILABLE: { status: 503, message: 'Quota store unavailable' },
  // A run-time key whose plan (or account) the gateway's configuration lacks (keys/ring.ts
  // lacksPlan): the operator's mistake, so a 503 to come back later, never a 401 that would count
  // toward the client address's block (security.badKeys).
  KEY_PLAN_MISSING: { status: 503, message: "API key's plan is not available on this gateway; the operator must restore it" },
  // A request on a kept-alive connection while the gateway drains (SIGTERM): come back elsewhere.
  SHUTTING_DOWN: { status: 503, message: 'Shutting down', headers: { connection: 'close' } },
  UPSTREAM_TIMEOUT: { status: 504, message: 'Upstream timed out' },
  UPSTREAM_UNREACHABLE: { status: 502, message: 'Upstream unreachable' },
  UPSTREAM_ERROR: { status: 502, message: 'Upstream error' },
  UPSTREAM_TOO_LARGE: { status: 502, message: 'Upstream answer too large' },
  // Every explorer of the chain throttles (its own 429, never passed on) or is out of the rotation:
  // not the client's limit, so not a 429 (contract section 10); Retry-After says when to come back.
  UPSTREAM_BUSY: { status: 503, message: 'Explorer busy, try again' },
  INTERNAL: { status: 500, message: 'Internal error' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export class GatewayError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    options?: { cause?: unknown },
  ) {
    super(ERRORS[code].message, options);
    this.name = 'GatewayError';
    this.status = ERRORS[code].status;
  }
}

/** One entry of the spec's JsonErrorResponse. */
export interface ValidationIssue {
  /** Parameter name, without the leading slash. */
  name: string;
  detail: string;
}

/** `{"errors":[{"title":"Invalid value","source":{"pointer":"/NAME"},"detail":"..."}]}` */
export function jsonErrorResponse(issues: readonly ValidationIssue[]): string {
  return JSON.stringify({
    errors: issues.map((i) => ({ title: 'Invalid value', source: { pointer: `/${i.name}` }, detail: i.detail })),
  });
}

/** v2 error body: `{"message":"..."}`. */
export function messageBody(message: string): string {
  return JSON.stringify({ message });
}

/** Legacy envelope for failures: Blockscout's RPC error view (status "0", result null). */
export function legacyErrorBody(message: string): string {
  return JSON.stringify({ message, result: null, status: '0' });
}
