// Header names the gateway owns (contract section 6) and the ones it never passes on.

export const H_LIMIT = 'x-ratelimit-limit';
export const H_REMAINING = 'x-ratelimit-remaining';
export const H_RESET = 'x-ratelimit-reset';
export const H_CREDITS = 'x-credits-remaining';
export const H_REQUEST_ID = 'x-request-id';
export const H_CACHE = 'x-cache';
export const H_SCAM = 'show-scam-tokens';

/**
 * The headers every answer from the cache gets per request, in this order: an entry's header
 * lines end with these names and empty values, which the answer fills in (gateway.ts).
 */
export const PER_ANSWER_HEADERS = [H_REQUEST_ID, H_CACHE, 'age', H_LIMIT, H_REMAINING, H_RESET, H_CREDITS] as const;

/** "0" to "999", and the same padded to three digits, built once. */
const DIGITS = Array.from({ length: 1000 }, (_, i) => String(i));
const DIGITS3 = DIGITS.map((d) => d.padStart(3, '0'));

/**
 * String(n), for header values that change with every request (the quota headers, request
 * ids). String(n) itself files each result in V8's number-to-string cache, a table in the old
 * generation: with values that never repeat, every answer's strings outlived the young
 * generation, the heap grew ~50 B per request until a mark-compact and scavenges took twice as
 * long (bench/results/2026-11-22-hit-path.md). Built from three-digit groups instead, the
 * string is new and dies young; n.toFixed(0) would also do, at three times the cost.
 */
export function decimal(n: number): string {
  if (n < 1000 && n >= 0 && Number.isInteger(n)) return DIGITS[n]!;
  if (!Number.isSafeInteger(n) || n < 0) return String(n);
  const high = Math.floor(n / 1000);
  return decimal(high) + DIGITS3[n - high * 1000]!;
}

/** RFC 9110 section 7.6.1 hop-by-hop fields, plus the de-facto ones proxies drop. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Whether an upstream response header may reach the client. Hop-by-hop fields (and those the
 * upstream's Connection header names) are dropped; the upstream's own rate-limit and credit
 * headers are replaced by the gateway's; length, date, age, x-cache and the request id are the gateway's to set.
 */
export function isPassableResponseHeader(name: string, connectionTokens: ReadonlySet<string>): boolean {
  if (HOP_BY_HOP.has(name) || connectionTokens.has(name)) return false;
  if (name.startsWith('x-ratelimit-') || name.startsWith('x-credits-')) return false;
  // CORS is the gateway's (http/cors.ts, `server.cors`): Blockscout's own `*` beside the
  // gateway's would be two values, which the browser refuses, or would undo `origins: []`.
  if (name.startsWith('access-control-')) return false;
  // x-request-id is the gateway's (Blockscout echoes the one it was sent, which a cached answer
  // would hand to every later client); so are x-cache and age (a CDN in front of an explorer
  // may send its own).
  if (name === H_REQUEST_ID || name === H_CACHE || name === 'age') return false;
  return name !== 'content-length' && name !== 'date' && name !== 'set-cookie' && name !== 'server';
}

export const NO_TOKENS: ReadonlySet<string> = new Set();

/** The headers of an upstream answer that may reach the client (isPassableResponseHeader). */
export function passableHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const tokens = connectionTokens(raw.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined && isPassableResponseHeader(name, tokens)) out[name] = value;
  }
  return out;
}

export function connectionTokens(value: string | string[] | undefined): ReadonlySet<string> {
  // Keep-alive connections name only themselves: no set to build for the usual answer.
  if (value === undefined || value === 'keep-alive' || value === 'close') return NO_TOKENS;
  const out = new Set<string>();
  for (const part of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const t = part.trim().toLowerCase();
    if (t) out.add(t);
  }
  return out;
}
