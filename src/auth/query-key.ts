// The `apikey` query parameter, taken out of the request target before anything else reads it:
// route resolution, its memo, cache keys and logs then never see a client's key, and a URL
// resolves the same for every client (contract section 5: the key is never forwarded, never
// part of a cache key, never logged).

import { formDecode } from '../http/url-decode.js';

export interface TakenKeys {
  /** The request target without its `apikey` parameters (the other parameters as they were sent). */
  url: string;
  /** Every `apikey` value, decoded, in the order given. */
  apikeys: string[];
}

/**
 * undefined when the target carries no `apikey` parameter, however its name is encoded
 * (`%61pikey` decodes to `apikey`): the usual request costs two substring searches.
 */
export function takeApiKeys(rawUrl: string): TakenKeys | undefined {
  const q = rawUrl.indexOf('?');
  if (q === -1) return undefined;
  const at = rawUrl.indexOf('apikey', q);
  const plain = rawUrl.indexOf('%', q) === -1 && rawUrl.indexOf('+', q) === -1 && rawUrl.indexOf('#', q) === -1;
  if (at === -1 && plain) return undefined;
  // The usual form, `?apikey=KEY` or `&apikey=KEY` once and nothing encoded: sliced out without
  // splitting the query (how Etherscan-style clients send every request, so it is the hot path).
  if (plain && rawUrl.charCodeAt(at + 6) === 61 /* = */ && (at === q + 1 || rawUrl.charCodeAt(at - 1) === 38) /* & */) {
    if (rawUrl.indexOf('apikey', at + 7) === -1) {
      const end = rawUrl.indexOf('&', at);
      const key = end === -1 ? rawUrl.slice(at + 7) : rawUrl.slice(at + 7, end);
      let url: string;
      if (at === q + 1) url = end === -1 ? rawUrl.slice(0, q) : rawUrl.slice(0, q + 1) + rawUrl.slice(end + 1);
      else url = end === -1 ? rawUrl.slice(0, at - 1) : rawUrl.slice(0, at - 1) + rawUrl.slice(end);
      return { url, apikeys: [key] };
    }
  }
  return takeSlowly(rawUrl, q);
}

/** Every other form: the query split into its pairs, each name decoded. */
function takeSlowly(rawUrl: string, q: number): TakenKeys | undefined {
  const hash = rawUrl.indexOf('#', q);
  const qs = hash === -1 ? rawUrl.slice(q + 1) : rawUrl.slice(q + 1, hash);
  if (!qs.includes('apikey') && !qs.includes('%')) return undefined;
  const kept: string[] = [];
  const apikeys: string[] = [];
  for (const pair of qs.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (name === 'apikey' || (name.includes('%') && formDecode(name) === 'apikey')) {
      // An undecodable value is still a key the client meant to send: keep its raw text.
      const raw = eq === -1 ? '' : pair.slice(eq + 1);
      apikeys.push(formDecode(raw) ?? raw);
    } else {
      kept.push(pair);
    }
  }
  if (apikeys.length === 0) return undefined;
  const path = rawUrl.slice(0, q);
  return { url: kept.length > 0 ? `${path}?${kept.join('&')}` : path, apikeys };
}
