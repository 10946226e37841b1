// The `apikey` query parameter, taken out of the request target before anything else reads it:
// route resolution, its memo, cache keys and logs then never see a client's key, and a URL
// resolves the same for every client (contract section 5: the key is never forwarded, never
// part of a cache key, never logged). The name is matched in any ASCII letter case: Etherscan
// takes `apiKey`, and clients written for it send that spelling (etherscan-api 10 does), so a
// key under any spelling is a key, and is taken out like the usual one.

import { formDecode } from '../http/url-decode.js';

export interface TakenKeys {
  /** The request target without its `apikey` parameters (the other parameters as they were sent). */
  url: string;
  /** Every `apikey` value, decoded, in the order given. */
  apikeys: string[];
}

// `apikey` in any letter case, searched from a given position (lastIndex). No `u` flag: the
// case folding is then ASCII's (the Kelvin sign does not match `k`), as the name comparison is.
// Irregexp skips ahead Boyer-Moore style, so this costs what indexOf('apikey') did on short
// targets and less on legacy ones, where indexOf stops at every `a` (action, address, account).
const ANY_CASE = /apikey/gi;
const NAME = /^apikey$/i;

/** Whether `apikey` occurs, in any case, at or after `from`; its end in ANY_CASE.lastIndex if so. */
function findFrom(rawUrl: string, from: number): boolean {
  ANY_CASE.lastIndex = from;
  return ANY_CASE.test(rawUrl);
}

/**
 * undefined when the target carries no `apikey` parameter, however its name is spelt (`apiKey`,
 * `APIKEY`) or encoded (`%61pikey` decodes to `apikey`): the usual request costs a search for
 * `?` and one for the name, and the three single-character searches that tell a plain query.
 */
export function takeApiKeys(rawUrl: string): TakenKeys | undefined {
  const q = rawUrl.indexOf('?');
  if (q === -1) return undefined;
  const at = findFrom(rawUrl, q) ? ANY_CASE.lastIndex - 6 : -1;
  const plain = rawUrl.indexOf('%', q) === -1 && rawUrl.indexOf('+', q) === -1 && rawUrl.indexOf('#', q) === -1;
  if (at === -1 && plain) return undefined;
  // The usual form, `?apikey=KEY` or `&apikey=KEY` once (in any case) and nothing encoded: sliced
  // out without splitting the query (how Etherscan-style clients send every request, so it is
  // the hot path).
  if (plain && rawUrl.charCodeAt(at + 6) === 61 /* = */ && (at === q + 1 || rawUrl.charCodeAt(at - 1) === 38) /* & */) {
    const end = rawUrl.indexOf('&', at);
    // Another `apikey` after this pair (none came before it) sends the query the long way; the
    // key's own value is not searched: a key may well read `YourApiKeyToken`.
    if (end === -1 || !findFrom(rawUrl, end)) {
      const key = end === -1 ? rawUrl.slice(at + 7) : rawUrl.slice(at + 7, end);
      let url: string;
      if (at === q + 1) url = end === -1 ? rawUrl.slice(0, q) : rawUrl.slice(0, q + 1) + rawUrl.slice(end + 1);
      else url = end === -1 ? rawUrl.slice(0, at - 1) : rawUrl.slice(0, at - 1) + rawUrl.slice(end);
      return { url, apikeys: [key] };
    }
  }
  return takeSlowly(rawUrl, q);
}

/** Whether a raw (still encoded) parameter name is `apikey`, in any letter case once decoded. */
function isKeyName(name: string): boolean {
  if (name.length === 6) return NAME.test(name);
  // Longer names can only be `apikey` encoded (`%41PIKEY`); `+` decodes to a space, never part of it.
  if (!name.includes('%')) return false;
  const decoded = formDecode(name);
  return decoded !== undefined && decoded.length === 6 && NAME.test(decoded);
}

/** Every other form: the query split into its pairs, each name decoded. */
function takeSlowly(rawUrl: string, q: number): TakenKeys | undefined {
  const hash = rawUrl.indexOf('#', q);
  const qs = hash === -1 ? rawUrl.slice(q + 1) : rawUrl.slice(q + 1, hash);
  if (!findFrom(qs, 0) && !qs.includes('%')) return undefined;
  const kept: string[] = [];
  const apikeys: string[] = [];
  for (const pair of qs.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (isKeyName(name)) {
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
