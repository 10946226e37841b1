// The key as the request target's first two segments, `/key/<KEY>/<the target>`, for clients whose
// only setting is a base URL and that replace its query: hardhat-verify 2's Blockscout mode sends
// its own `apikey=api_key` and sets `url.search` on its GETs (isVerified, getVerificationStatus;
// @nomicfoundation/hardhat-verify src/internal/etherscan.ts), so a key in apiURL's query reaches
// only its POST, while apiURL's path reaches every request. Taken out before anything else reads
// the target (request/pipeline.ts makeHandler): route resolution, logs, cache keys and what is
// forwarded see `<the target>` alone, as with the query's `apikey` (auth/query-key.ts).

/** The target's leading `/key/` (lower case), the one spelling taken. */
const PREFIX = '/key/';

export interface PathKey {
  /** The request target without `/key/<KEY>`: `/` and what followed the key. */
  url: string;
  /** The key's segment, percent-decoded (its raw text when it does not decode). */
  key: string;
}

/** undefined unless the target starts with `/key/`: the usual request pays one startsWith. */
export function takePathKey(rawUrl: string): PathKey | undefined {
  if (!rawUrl.startsWith(PREFIX)) return undefined;
  let end = PREFIX.length;
  for (; end < rawUrl.length; end++) {
    const c = rawUrl.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
  }
  const raw = rawUrl.slice(PREFIX.length, end);
  const rest = rawUrl.slice(end);
  return { url: rest.startsWith('/') ? rest : `/${rest}`, key: decoded(raw) };
}

function decoded(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
