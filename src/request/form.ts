// The legacy API by POST: Blockscout reads `conn.params`, the query and a form body merged, the
// body's fields winning (Plug.Parsers), so a read posted as a form is the same read as its GET
// (resolved, validated, billed and cached as it), and contract verification posts its source code
// this way (Foundry's and Hardhat's Blockscout verifiers, ethers' EtherscanProvider for eth_call).
// The key may come in the form too (`apikey`, in any case); like the query's, it is taken out
// before anything else reads the fields.
import type { FastifyRequest } from 'fastify';
import type { ErrorCode } from '../http/errors.js';
import type { TakenKeys } from '../auth/query-key.js';
import type { Resolved } from '../routes/resolver.js';
import { encodeQuery, parseQuery } from '../routes/resolve.js';
import { parseForm, readBody, type Form } from './body.js';
import type { GatewayState } from './state.js';

export interface Posted {
  resolved: Resolved;
  /** Every key the query gave. */
  apikeys: readonly string[];
  /** Every key the form gave (its `apikey` fields, any case). */
  formKeys: readonly string[];
  /** The form without the key or the chain (what a write forwards). */
  form: Form;
}

const isKeyField = (name: string): boolean => name.toLowerCase() === 'apikey';
const NO_KEYS: readonly string[] = [];

/** Fields that are the gateway's, never an explorer's: the key (any case) and the Etherscan-style chain. */
export const isOwnField = (name: string): boolean => isKeyField(name) || name === 'chainid';

/** A form not read whole: no usable key before `rpc.maxKeylessBodyBytes`; the keys its prefix gave. */
export interface Keyless {
  keyless: true;
  formKeys: readonly string[];
}

/**
 * The posted form, read up to `rpc.maxVerifyBytes` only once `usable` says the request has a key
 * worth it (one of the gateway's, active, unexpired: pipeline.ts) given the form keys found so
 * far; until then at most `rpc.maxKeylessBodyBytes` are read, and a form with no such key in that
 * prefix is answered Keyless, the rest unread.
 */
export async function postedForm(
  state: GatewayState,
  request: FastifyRequest,
  taken: TakenKeys | undefined,
  usable: (formKeys: readonly string[]) => boolean,
): Promise<Posted | ErrorCode | Keyless> {
  const { maxVerifyBytes, maxKeylessBodyBytes } = state.config.rpc;
  const contentType = request.headers['content-type'];
  let read = await readBody(request, maxVerifyBytes, usable(NO_KEYS) ? {} : { stopAt: maxKeylessBodyBytes });
  // Stopped at the prefix with more to come (`complete` on the request: the parser has seen its
  // end, all of it is here already).
  if (read.ok && !read.complete && !request.raw.complete) {
    const formKeys = keysInPrefix(contentType, read.body);
    if (!usable(formKeys)) return { keyless: true, formKeys };
  }
  if (read.ok && !read.complete) read = await readBody(request, maxVerifyBytes, { start: read.body });
  if (!read.ok) return read.reason === 'too-large' ? 'PAYLOAD_TOO_LARGE' : 'BODY_INCOMPLETE';
  const parsed = await parseForm(contentType, read.body);
  if (parsed === undefined) return 'UNSUPPORTED_MEDIA_TYPE';

  const formKeys: string[] = [];
  const fields: [string, string][] = [];
  let chainId: string | undefined;
  for (const [name, value] of parsed.fields) {
    if (isKeyField(name)) formKeys.push(value);
    else if (name === 'chainid') chainId = value;
    else fields.push([name, value]);
  }
  const url = taken?.url ?? request.url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  // The query's own chainid stays where it is; the form's counts only when the query has none.
  const extra: [string, string][] = chainId !== undefined && !/(?:^|&)chainid=/.test(query) ? [['chainid', chainId], ...fields] : fields;
  const target = `${path}?${[query, encodeQuery(extra)].filter((s) => s !== '').join('&')}`;
  let multipart = parsed.multipart;
  if (multipart !== undefined) {
    multipart = new FormData();
    parsed.multipart!.forEach((value, name) => {
      if (!isOwnField(name)) multipart!.append(name, value);
    });
  }
  // What a write forwards is conn.params too: the query's fields that the body does not give,
  // then the body's. hardhat-upgrades' proxy verification sends every field in the query and an
  // empty body (issue 41); the explorer's own POST target carries only module and action.
  const fromQuery = queryFieldsNotIn(query, parsed);
  for (const [name, value] of fromQuery) multipart?.append(name, value);
  return {
    resolved: state.resolver.resolveOnce(target),
    apikeys: taken?.apikeys ?? [],
    formKeys,
    form: { fields: fromQuery.length === 0 ? fields : [...fromQuery, ...fields], multipart },
  };
}

/**
 * The query's fields a posted body does not name, less the gateway's own and `module` and
 * `action` (the upstream target carries them, spelled as the document spells them). Plug.Parsers
 * merges the two so (https://github.com/elixir-plug/plug, lib/plug/parsers.ex, merge_params/2:
 * the query's params, then the body's over them), and Blockscout's RPC controllers read the
 * result, conn.params. A field repeated in the query counts once, its last value (Plug's decoding).
 */
function queryFieldsNotIn(query: string, body: Form): [string, string][] {
  if (query === '') return [];
  const inBody = new Set<string>(body.fields.map(([name]) => name));
  body.multipart?.forEach((_value, name) => inBody.add(name));
  const out: [string, string][] = [];
  for (const [name, value] of parseQuery(query.split('#', 1)[0]!).params) {
    if (isOwnField(name) || name === 'module' || name === 'action' || inBody.has(name)) continue;
    out.push([name, value]);
  }
  return out;
}

const URLENCODED = /^application\/x-www-form-urlencoded\b/i;
const BOUNDARY = /^multipart\/form-data\b.*?;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i;
const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * The `apikey` fields (any case) of the first bytes of a form, `prefix`, not the whole body:
 * urlencoded, the fields before the last `&` (the one after may be cut); multipart, the text
 * parts whole in it before the first file part (RFC 7578: parts open with `--boundary`, then
 * headers, a blank line, the content up to CRLF `--boundary`). A gate only: a request it lets
 * through is read whole and parsed by parseForm, whose keys are the ones checked.
 */
export function keysInPrefix(contentType: string | undefined, prefix: Buffer): string[] {
  const keys: string[] = [];
  if (contentType === undefined || URLENCODED.test(contentType)) {
    const end = prefix.lastIndexOf(0x26); // '&'
    if (end === -1) return keys;
    for (const [name, value] of new URLSearchParams(prefix.subarray(0, end).toString('utf8'))) if (isKeyField(name)) keys.push(value);
    return keys;
  }
  const m = BOUNDARY.exec(contentType);
  if (!m) return keys;
  const delimiter = Buffer.from(`--${m[1] ?? m[2]!}`);
  const next = Buffer.concat([Buffer.from('\r\n'), delimiter]);
  let at = prefix.indexOf(delimiter);
  while (at !== -1) {
    const headersStart = at + delimiter.length + 2; // past the delimiter's CRLF
    const headersEnd = prefix.indexOf(CRLF2, headersStart);
    if (headersEnd === -1) break;
    const headers = prefix.subarray(headersStart, headersEnd).toString('latin1');
    const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? '';
    if (/;\s*filename\*?=/i.test(disposition)) break; // a file: what follows may be megabytes
    const contentEnd = prefix.indexOf(next, headersEnd + 4);
    if (contentEnd === -1) break; // cut off in this part
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1] ?? /;\s*name=([^\s;]+)/i.exec(disposition)?.[1];
    if (name !== undefined && isKeyField(name)) keys.push(prefix.subarray(headersEnd + 4, contentEnd).toString('utf8'));
    at = contentEnd + 2;
  }
  return keys;
}
