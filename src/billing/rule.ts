// Which answers cost credits: the one billing rule of every route family (docs/clients.md, "What
// is billed"). settle.ts applies it; the quota headers (request/send.ts) show its result.

/**
 * Who wrote an answer: the gateway itself (a refusal, a validation error, an answer it made, such
 * as a search across chains), or an upstream whose answer is passed on (from the cache or as it
 * arrives).
 */
export type AnswerSource = 'gateway' | 'upstream';

/**
 * Whether an answer is paid for. A 2xx is what was asked for; an upstream's 404 is the explorer's
 * answer after it looked (no such block, transaction, address), work done as for a 2xx.
 * Everything else costs nothing: a refusal of the gateway's own (any 4xx, its validation 422, a
 * 404 of its own), an upstream's other 4xx (400 and 422 are a client error the explorer refused
 * before doing the work, which the gateway could often have caught itself), every 5xx (contract
 * section 6), and a client that went away before its answer (499, nginx's code).
 */
export function billable(status: number, source: AnswerSource): boolean {
  if (status >= 200 && status < 300) return true;
  return status === 404 && source === 'upstream';
}

/** The credits an answer costs, of those its decision billed: all of them or none (billable). settle.ts gives the rest back. */
export function chargedFor(billed: number, status: number, source: AnswerSource): number {
  return billable(status, source) ? billed : 0;
}
