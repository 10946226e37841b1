// Request ids (x-request-id): a client's own when it is a sane token, else a random prefix per
// process and a counter, unique across processes and restarts like a UUID but without drawing
// randomness per request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { decimal } from '../http/headers.js';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const PREFIX = `${randomUUID().replaceAll('-', '').slice(0, 16)}-`;
let counter = 0;

export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given) ? given : PREFIX + decimal(++counter);
}
