// How long a miss's answer is kept: its route's TTL, or cache.finalTtlSeconds when the answer is
// about data below its chain's finality line (finality/classify.ts), with its `confirmations`
// marked so that every answer from the entry shows them as of the head (cache/confirmations.ts).
// Every judged answer also tells the chain's head what it shows.
import { findConfirmations } from '../cache/confirmations.js';
import type { LifetimeOf } from '../cache/policy.js';
import { judge, mayJudge, type Asked } from './classify.js';
import type { ChainHead } from './head.js';

/** The lifetime rule for one request; undefined when its answers are never judged (the route's TTL, nothing parsed). */
export function lifetimeOf(head: ChainHead, finalTtlSeconds: number, asked: Asked): LifetimeOf | undefined {
  if (!mayJudge(asked)) return undefined;
  return (answer, nowMs) => {
    const verdict = judge(asked, answer.body);
    if (verdict.head !== undefined) head.observe(verdict.head, nowMs);
    if (finalTtlSeconds <= 0 || verdict.block === undefined || verdict.confirmations === undefined) return undefined;
    // Unknown or stale head: as today. Within the depth: moving (a reorg may still change it).
    const line = head.finalLine(nowMs);
    if (line === undefined || verdict.block > line) return undefined;
    if (verdict.confirmations.length === 0) return { ttlSeconds: finalTtlSeconds, confirmations: undefined };
    const confirmations = findConfirmations(answer.body, verdict.confirmations);
    return confirmations === undefined ? undefined : { ttlSeconds: finalTtlSeconds, confirmations };
  };
}
