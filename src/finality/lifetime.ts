// How long a miss's answer is kept: its route's TTL, or cache.finalTtlSeconds when the answer is
// about data below its chain's finality line (finality/classify.ts). Its `confirmations`, final
// or not, are marked so that every answer from the entry (a stale one too) shows them as of the
// head (cache/confirmations.ts); an answer that is the tip itself is never served stale while a
// refresh runs. Every judged answer also tells the chain's head what it shows.
import { findConfirmations } from '../cache/confirmations.js';
import type { LifetimeOf } from '../cache/policy.js';
import { judge, mayJudge, type Asked } from './classify.js';
import type { ChainHead } from './head.js';

/**
 * The lifetime rule for one request; undefined when its answers are never judged (the route's TTL,
 * nothing parsed). With cache.finalTtlSeconds 0 the answers still tell the head what they show,
 * and every entry is as it was before finality-aware caching.
 */
export function lifetimeOf(head: ChainHead, finalTtlSeconds: number, asked: Asked): LifetimeOf | undefined {
  if (!mayJudge(asked)) return undefined;
  return (answer, nowMs) => {
    const verdict = judge(asked, answer.body);
    if (verdict.head !== undefined) head.observe(verdict.head, nowMs);
    if (finalTtlSeconds <= 0) return undefined;
    const marks =
      verdict.confirmations === undefined || verdict.confirmations.length === 0
        ? undefined
        : findConfirmations(answer.body, verdict.confirmations);
    // Unknown or stale head: as today. Within the depth: moving (a reorg may still change it).
    const line = head.finalLine(nowMs);
    const final =
      verdict.block !== undefined &&
      line !== undefined &&
      verdict.block <= line &&
      // A confirmations field that could not be placed would age for a day: not final then.
      (verdict.confirmations?.length === 0 || marks !== undefined);
    if (!final && marks === undefined && !verdict.tip) return undefined;
    return { final, ttlSeconds: finalTtlSeconds, confirmations: marks, tip: verdict.tip };
  };
}
