// Contract verification writes (`module=contract&action=verifysourcecode|verify|...`), after the
// credit step: the form goes to the chain's explorer as one POST to `/api?module=contract&
// action=A`, as a urlencoded body or, when the client sent multipart, as multipart again (files
// kept); never cached, never coalesced, never sent to a second upstream once one may have
// received it (upstream/client.ts fails over only when no connection was made). The explorer's
// answer (a GUID to poll with checkverifystatus, or its own refusal) is passed on; a failed
// upstream is the usual 502 or 504 in the legacy envelope, refunded by finish().
import type { FastifyReply } from 'fastify';
import { parseQuery } from '../routes/resolve.js';
import type { Form } from './body.js';
import { isOwnField } from './form.js';
import type { RequestContext } from './context.js';
import { postOnce } from './forward.js';
import type { Chain, GatewayState } from './state.js';

/** A write sent by GET (the RPC document lists them so): its query is its form, less what is the gateway's. */
export function formOfQuery(url: string): Form {
  const q = url.indexOf('?');
  const fields: [string, string][] = [];
  for (const [name, value] of parseQuery(q === -1 ? '' : url.slice(q + 1)).params) {
    if (!isOwnField(name)) fields.push([name, value]);
  }
  return { fields, multipart: undefined };
}

async function encode(form: Form): Promise<{ body: Buffer; contentType: string }> {
  if (form.multipart !== undefined) {
    // The Fetch API's body extraction writes the multipart body and its boundary.
    const encoded = new Response(form.multipart);
    return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
  }
  return { body: Buffer.from(new URLSearchParams(form.fields).toString(), 'utf8'), contentType: 'application/x-www-form-urlencoded' };
}

export async function verifyRequest(
  state: GatewayState,
  ctx: RequestContext,
  reply: FastifyReply,
  chain: Chain,
  upstreamPath: string,
  form: Form,
): Promise<void> {
  const { body, contentType } = await encode(form);
  return postOnce(state, ctx, reply, chain, upstreamPath, body, contentType);
}
