// The one writer of the pipeline's answers. Every answer of the pipeline goes out here, through
// Node's writeHead with all its header fields in one flat list (fastify's reply.header() and
// send() cost more than the rest of a cache hit), after fastify's reply is hijacked. One rule
// gives the quota headers (contract section 6) of every answer from the key step on; every answer
// also carries the request's CORS lines (ctx.cors, from http/cors.ts).
import type { FastifyReply } from 'fastify';
import { withConfirmations } from '../cache/confirmations.js';
import { ageSeconds, entryBody, type CacheEntry, type CacheOutcome } from '../cache/policy.js';
import {
  ERRORS,
  jsonErrorResponse,
  legacyErrorBody,
  messageBody,
  type ErrorCode,
  type ErrorSpec,
  type ValidationIssue,
} from '../http/errors.js';
import { decimal, H_CREDITS, H_LIMIT, H_REMAINING, H_REQUEST_ID, H_RESET, PER_ANSWER_HEADERS } from '../http/headers.js';
import { JSON_TYPE } from '../http/respond.js';
import { answer, codeForStatus, errorMember } from '../rpc/protocol.js';
import { chargedFor } from '../billing/rule.js';
import type { RequestContext } from './context.js';

/**
 * The four quota header values, written at lines[at], lines[at + 2], lines[at + 4] and
 * lines[at + 6] (the values of name/value pairs): the plan's rps, what is left of the window,
 * milliseconds until it ends, and the balance after this answer is billed (an answer that is
 * not billable already shows the refund). All -1 when the quota store failed (redis.onError: open),
 * also when the request was decided in process meanwhile (quota/outage.ts).
 */
function writeQuotaValues(lines: string[], at: number, ctx: RequestContext, status: number): void {
  const d = ctx.decision;
  if (d === undefined || ctx.key === undefined || d.local !== undefined) {
    lines[at] = lines[at + 2] = lines[at + 4] = lines[at + 6] = '-1';
    return;
  }
  lines[at] = ctx.key.rpsHeader;
  lines[at + 2] = decimal(d.rateRemaining);
  lines[at + 4] = decimal(d.rateResetMs);
  lines[at + 6] = decimal(Math.max(d.credits, 0) + d.billed - chargedFor(d.billed, status, ctx.answeredBy));
}

/** The four quota headers as a map, for answers not written here (a stream: request/stream.ts). */
export function quotaHeaders(ctx: RequestContext, status: number): Record<string, string> {
  const lines = [H_LIMIT, '', H_REMAINING, '', H_RESET, '', H_CREDITS, ''];
  writeQuotaValues(lines, 1, ctx, status);
  return { [H_LIMIT]: lines[1]!, [H_REMAINING]: lines[3]!, [H_RESET]: lines[5]!, [H_CREDITS]: lines[7]! };
}

function write(ctx: RequestContext, reply: FastifyReply, status: number, lines: string[], body: string | Buffer): void {
  if (reply.raw.destroyed) {
    // The client went away while its answer was being made (nginx's 499): nothing can reach it,
    // so nothing is written and nothing is billed (billable).
    ctx.status = 499;
    reply.hijack();
    return;
  }
  ctx.status = status;
  // writeHead first: if it throws, nothing was sent and the error handler can still answer.
  reply.raw.writeHead(status, lines);
  reply.hijack();
  // Node drops the body of an answer to HEAD by itself, keeping its Content-Length.
  reply.raw.end(body);
}

/** A JSON answer of the gateway's own: its request id, `extra` headers, and the quota headers after the key step. */
export function sendJson(
  ctx: RequestContext,
  reply: FastifyReply,
  status: number,
  body: string,
  extra?: Readonly<Record<string, string>>,
): void {
  const lines = ['content-type', JSON_TYPE, 'content-length', decimal(Buffer.byteLength(body)), H_REQUEST_ID, ctx.id];
  if (extra) for (const name in extra) lines.push(name, extra[name]!);
  if (ctx.key !== undefined) {
    lines.push(H_LIMIT, '', H_REMAINING, '', H_RESET, '', H_CREDITS, '');
    writeQuotaValues(lines, lines.length - 7, ctx, status);
  }
  const cors = ctx.cors;
  if (cors !== undefined) for (let i = 0; i < cors.length; i++) lines.push(cors[i]!);
  write(ctx, reply, status, lines, body);
}

/**
 * A CORS preflight's answer (Fetch standard, "CORS-preflight request"): 204, the lines of
 * http/cors.ts's preflightFor() and the request id, no body and so no Content-Length (RFC 9110
 * section 8.6). Never billed: no key is read.
 */
export function sendPreflight(ctx: RequestContext, reply: FastifyReply, preflight: readonly string[]): void {
  write(ctx, reply, 204, [...preflight, H_REQUEST_ID, ctx.id], '');
}

/**
/**
 * No answer at all: a JSON-RPC notification's (request/rpc.ts). 204 with the request id and the
 * quota headers, no body and so no Content-Length (RFC 9110 section 8.6).
 */
export function sendNoContent(ctx: RequestContext, reply: FastifyReply): void {
  const lines = [H_REQUEST_ID, ctx.id];
  if (ctx.key !== undefined) {
    lines.push(H_LIMIT, '', H_REMAINING, '', H_RESET, '', H_CREDITS, '');
    writeQuotaValues(lines, lines.length - 7, ctx, 204);
  }
  const cors = ctx.cors;
  if (cors !== undefined) for (let i = 0; i < cors.length; i++) lines.push(cors[i]!);
  write(ctx, reply, 204, lines, '');
}

/**
 * A refusal's body in the shape of the request's interface: the legacy envelope, a JSON-RPC error
 * object with id null on a JSON-RPC path (its code by status: rpc/protocol.ts codeForStatus), else
 * `{"message"}`. `message`, when given, says more precisely what the registry's message says in general.
 */
export function refusalBody(
  shape: { readonly legacy: boolean; readonly rpc?: boolean | undefined },
  code: ErrorCode,
  message?: string,
): string {
  const spec: ErrorSpec = ERRORS[code];
  const text = message ?? spec.message;
  if (shape.rpc === true) return answer('null', errorMember({ code: codeForStatus(spec.status), message: text }));
  return shape.legacy ? legacyErrorBody(text) : messageBody(text);
}

/** A refusal or failure from the registry, in the body shape of the request's interface (refusalBody), with the registry's status. */
export function sendError(
  ctx: RequestContext,
  reply: FastifyReply,
  code: ErrorCode,
  extra?: Readonly<Record<string, string>>,
  message?: string,
): void {
  const spec: ErrorSpec = ERRORS[code];
  const body = refusalBody(ctx, code, message);
  sendJson(ctx, reply, spec.status, body, extra && spec.headers ? { ...spec.headers, ...extra } : (extra ?? spec.headers));
}

/** A v2 validation failure: 422 with the spec's JsonErrorResponse. */
export function sendInvalid(ctx: RequestContext, reply: FastifyReply, issues: readonly ValidationIssue[]): void {
  sendJson(ctx, reply, 422, jsonErrorResponse(issues));
}

/** A legacy parameter error: HTTP 200 with the envelope's status "0" (Blockscout's RPC API). */
export function sendLegacyInvalid(ctx: RequestContext, reply: FastifyReply, message: string): void {
  sendJson(ctx, reply, 200, legacyErrorBody(message));
}

/**
 * A cached (or just fetched) answer. The entry keeps its header lines, worked out once when it
 * was stored, ending with the per-answer headers (PER_ANSWER_HEADERS), whose values are filled
 * in here: writeHead reads the list at once, so one list per entry serves every answer.
 * `head`: the chain's head, which the `confirmations` of a final entry are written from.
 */
export function sendEntry(
  ctx: RequestContext,
  reply: FastifyReply,
  entry: CacheEntry,
  outcome: CacheOutcome,
  nowMs: number,
  head?: number,
): void {
  ctx.cache = outcome;
  // An entry is an upstream's answer, whatever its status (a 404 of the explorer's is billed).
  ctx.answeredBy = 'upstream';
  const lines = ctx.cors === undefined ? entry.headerLines : withCors(entry, ctx.cors);
  // The values of PER_ANSWER_HEADERS: request id, cache, age, then the four quota headers.
  const at = lines.length - 2 * PER_ANSWER_HEADERS.length + 1;
  lines[at] = ctx.id;
  lines[at + 2] = outcome;
  lines[at + 4] = decimal(ageSeconds(entry, nowMs));
  writeQuotaValues(lines, at + 6, ctx, entry.status);
  let body = entryBody(entry);
  if (entry.confirmations !== undefined) {
    // A MISS is the explorer's own answer of this moment: passed on as it is.
    if (head !== undefined && outcome !== 'MISS') body = withConfirmations(body, entry.confirmations, head);
    // Content-Length's value comes just before the per-answer headers in the entry's own lines,
    // and CORS lines are inserted after it (withCors): the same place in both lists.
    lines[entry.headerLines.length - 2 * PER_ANSWER_HEADERS.length - 1] = decimal(body.length);
  }
  write(ctx, reply, entry.status, lines, body);
}

/**
 * The entry's header lines with `cors` inserted before the per-answer headers, which stay last
 * (sendEntry fills them in). Kept on the entry for the CORS lines it was made for, compared by
 * identity: http/cors.ts gives one array per configuration and origin, so a hit in the steady
 * state allocates nothing. The shared headerLines are never changed.
 */
function withCors(entry: CacheEntry, cors: readonly string[]): string[] {
  if (entry.corsFor === cors && entry.corsLines !== undefined) return entry.corsLines;
  const own = entry.headerLines;
  const split = own.length - 2 * PER_ANSWER_HEADERS.length;
  const lines = own.slice(0, split).concat(cors, own.slice(split));
  entry.corsFor = cors;
  entry.corsLines = lines;
  return lines;
}
