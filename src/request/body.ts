// Request bodies, read whole with a bound: the JSON-RPC endpoint's JSON, and the forms the legacy
// API takes by POST (a read posted as a form is the same read as its GET; contract verification
// posts source code). The body arrives as the raw stream (app/server.ts registers a content-type
// parser that hands it on untouched); nothing is read before the route asks for it, and a read may
// stop at a prefix and go on later (a form whose key is not known yet: request/form.ts).
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';

export type BodyResult =
  /** `complete: false`: reading stopped at `stopAt` (the stream is paused there); readBody(..., { start }) goes on. */
  { ok: true; body: Buffer; complete: boolean } | { ok: false; reason: 'too-large' | 'aborted' };

export interface ReadOptions {
  /** Pause once more than this many bytes are read, and answer what was read (`complete: false`). */
  stopAt?: number;
  /** What an earlier read that stopped at `stopAt` gave: the body goes on from there. */
  start?: Buffer;
}

/**
 * The request body, at most `limit` bytes: a Content-Length over it is refused before anything is
 * read, and a chunked body is cut off once it passes it. A request without a body reads as empty.
 */
export function readBody(request: FastifyRequest, limit: number, options: ReadOptions = {}): Promise<BodyResult> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false, reason: 'too-large' });
  const stream = request.body as Readable | undefined;
  if (stream === undefined || stream === null || typeof stream.on !== 'function')
    return Promise.resolve({ ok: true, body: Buffer.alloc(0), complete: true });
  const { stopAt = Infinity, start } = options;
  // Going on from a pause: a client gone meanwhile told no listener; its stream is destroyed.
  if (start !== undefined && stream.destroyed) return Promise.resolve({ ok: false, reason: 'aborted' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = start === undefined ? [] : [start];
    let size = start?.length ?? 0;
    const whole = (): Buffer => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    const done = (result: BodyResult) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('aborted', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop reading; the rest is discarded by Node once the answer is written.
        stream.pause();
        done({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
      if (size > stopAt) {
        // Paused, what follows stays in the socket (TCP flow control) until the caller goes on.
        stream.pause();
        done({ ok: true, body: whole(), complete: false });
      }
    };
    const onEnd = () => done({ ok: true, body: whole(), complete: true });
    const onError = () => done({ ok: false, reason: 'aborted' });
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('aborted', onError);
    // A stream an earlier read paused flows again (a 'data' listener alone does not resume it).
    if (start !== undefined) stream.resume();
  });
}

/** A form's fields: urlencoded pairs, or multipart parts (files kept as they are, for forwarding). */
export interface Form {
  /** Text fields, in order (the last of a repeated name wins when read as parameters, as in Plug). */
  fields: [string, string][];
  /** The multipart body as parsed, files included; undefined for a urlencoded or empty body. */
  multipart: FormData | undefined;
}

const URLENCODED = /^application\/x-www-form-urlencoded\b/i;
const MULTIPART = /^multipart\/form-data\b/i;

/**
 * A posted form. Multipart bodies are parsed by the Fetch API's Request.formData() (undici,
 * Node's own), which follows the HTML standard's multipart/form-data parsing; urlencoded ones by
 * URLSearchParams. Any other type carries no fields (undefined when it is not a form at all).
 */
export async function parseForm(contentType: string | undefined, body: Buffer): Promise<Form | undefined> {
  if (body.length === 0) return { fields: [], multipart: undefined };
  if (contentType === undefined || URLENCODED.test(contentType)) {
    return { fields: [...new URLSearchParams(body.toString('utf8'))], multipart: undefined };
  }
  if (!MULTIPART.test(contentType)) return undefined;
  let data: FormData;
  try {
    data = await new Request('http://gateway.invalid/', { method: 'POST', headers: { 'content-type': contentType }, body }).formData();
  } catch {
    return undefined;
  }
  const fields: [string, string][] = [];
  data.forEach((value, name) => {
    if (typeof value === 'string') fields.push([name, value]);
  });
  return { fields, multipart: data };
}
