// The client's key, from `Authorization: Bearer` or `?apikey=` (auth/query-key.ts takes it out
// of the URL): which one, and whether the two agree. Finding the key it names is keys/ring.ts's.

export type KeySource = { kind: 'none' } | { kind: 'conflict' } | { kind: 'bad-scheme' } | { kind: 'key'; key: string };

/** The credential of `Bearer <token>` (scheme case-insensitive, RFC 9110 11.1), or undefined. */
function bearerToken(header: string): string | undefined {
  // The usual spelling first: no lower-cased copy of the scheme per request.
  if (
    !header.startsWith('Bearer ') &&
    (header.length < 8 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== 'bearer')
  ) {
    return /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1]; // unusual spacing: the careful path
  }
  const token = header.slice(7).trim();
  return token === '' || /\s/.test(token) ? undefined : token;
}

/**
 * The client's key, from the Authorization header (RFC 6750 section 2.1) and/or the `apikey`
 * query parameter (`apikeys`: every value the query gave). Both given and different is a
 * conflict: guessing which one the client meant could bill the wrong account. An Authorization
 * header of another scheme (Basic, ...) is refused rather than ignored, for the same reason.
 */
export function extractKey(authorization: string | undefined, apikeys: readonly string[]): KeySource {
  let key: string | undefined;
  if (authorization !== undefined && authorization !== '') {
    const token = bearerToken(authorization);
    if (token === undefined) return { kind: 'bad-scheme' };
    key = token;
  }
  for (const k of apikeys) {
    if (k === '') continue;
    if (key !== undefined && key !== k) return { kind: 'conflict' };
    key = k;
  }
  return key === undefined ? { kind: 'none' } : { kind: 'key', key };
}
