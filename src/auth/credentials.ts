// The client's key, from `Authorization: Bearer`, the target's `/key/<KEY>/` prefix
// (auth/path-key.ts), `?apikey=` (auth/query-key.ts takes it out of the URL) or a POSTed form's
// `apikey` (request/form.ts): which one, and whether they agree.
// Finding the key it names is keys/ring.ts's.

/** Where a request gave a key: the Authorization header, the path's `/key/<KEY>/`, the query's `apikey`, a POSTed form's `apikey` field. */
export type KeyPlace = 'authorization' | 'path' | 'query' | 'form';

export type KeySource =
  | { kind: 'none' }
  | { kind: 'conflict'; places: readonly [KeyPlace, KeyPlace] }
  | { kind: 'bad-scheme' }
  /** `placeholder`: the only key given is a value clients send when they have none (PLACEHOLDER_KEYS). */
  | { kind: 'key'; key: string; placeholder?: true };

/**
 * Values clients send in `apikey` when they were given no key, which no one chose as a key:
 * hardhat-verify 2's Blockscout mode sends `api_key` (its Blockscout class builds its Etherscan
 * client with `new Etherscan("api_key", apiUrl, browserUrl, undefined)`,
 * @nomicfoundation/hardhat-verify src/internal/blockscout.ts), and `YourApiKeyToken` is
 * Etherscan's documented example (docs.etherscan.io) that scripts copy. Beside a real key one is
 * ignored; alone it is looked up like any key, and when no key of the gateway has that value it is
 * refused without counting as a guessed key (`security.badKeys`).
 */
export const PLACEHOLDER_KEYS: ReadonlySet<string> = new Set(['api_key', 'YourApiKeyToken']);

const PLACE_NAMES: Readonly<Record<KeyPlace, string>> = {
  authorization: 'the Authorization header',
  path: 'the /key/ path prefix',
  query: 'the apikey query parameter',
  form: 'the apikey form field',
};
const TWO_PLACES: Readonly<Record<KeyPlace, string>> = {
  authorization: 'two Authorization headers',
  path: 'two /key/ path prefixes',
  query: 'two apikey query parameters',
  form: 'two apikey form fields',
};

/** The 401's message for two different keys: it names the two places they were found in. */
export function conflictMessage([first, second]: readonly [KeyPlace, KeyPlace]): string {
  const where = first === second ? TWO_PLACES[first] : `${PLACE_NAMES[first]} and ${PLACE_NAMES[second]}`;
  return `Conflicting API keys in ${where}`;
}

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
 * The client's key, from the Authorization header (RFC 6750 section 2.1), the target's
 * `/key/<KEY>/` prefix (`pathKey`), the `apikey` query parameter (`queryKeys`: every value the
 * query gave) and a POSTed form's `apikey` fields (`formKeys`). The same key in several places is that key; two different keys are a conflict,
 * named by the places they came from: guessing which one the client meant could bill the wrong
 * account. A placeholder (PLACEHOLDER_KEYS) beside a real key is no conflict: the real key is
 * the client's. An Authorization header of another scheme (Basic, ...) is refused rather than
 * ignored, for the same reason.
 */
export function extractKey(
  authorization: string | undefined,
  queryKeys: readonly string[],
  formKeys: readonly string[] = NO_KEYS,
  pathKey?: string,
): KeySource {
  let key: string | undefined;
  let keyPlace: KeyPlace = 'authorization';
  let placeholder: string | undefined;
  if (authorization !== undefined && authorization !== '') {
    const token = bearerToken(authorization);
    if (token === undefined) return { kind: 'bad-scheme' };
    if (PLACEHOLDER_KEYS.has(token)) placeholder = token;
    else key = token;
  }
  if (pathKey !== undefined && pathKey !== '' && pathKey !== key) {
    if (PLACEHOLDER_KEYS.has(pathKey)) placeholder ??= pathKey;
    else if (key !== undefined) return { kind: 'conflict', places: ['authorization', 'path'] };
    else {
      key = pathKey;
      keyPlace = 'path';
    }
  }
  for (let i = 0; i < queryKeys.length + formKeys.length; i++) {
    const k = i < queryKeys.length ? queryKeys[i]! : formKeys[i - queryKeys.length]!;
    if (k === '' || k === key) continue;
    const place: KeyPlace = i < queryKeys.length ? 'query' : 'form';
    if (PLACEHOLDER_KEYS.has(k)) placeholder ??= k;
    else if (key !== undefined) return { kind: 'conflict', places: [keyPlace, place] };
    else {
      key = k;
      keyPlace = place;
    }
  }
  if (key !== undefined) return { kind: 'key', key };
  return placeholder === undefined ? { kind: 'none' } : { kind: 'key', key: placeholder, placeholder: true };
}

const NO_KEYS: readonly string[] = [];
