// A chain's head as the gateway knows it: the highest block number seen in the answers it
// forwards and in its own light polls (finality/poll.ts), when it was last confirmed, and the
// finality line that follows from it. Pure: the caller passes the time.

/** A head not confirmed for this long is stale: answers are cached as if it were unknown. */
export function staleAfterMs(pollSeconds: number): number {
  // Three missed polls, and never less than 30 s: a chain whose blocks come every 12 s and whose
  // traffic pauses does not lose its line between two polls.
  return Math.max(3 * pollSeconds, 30) * 1000;
}

/** Larger numbers are not block heights (a field misread, or garbage): ignored. */
const MAX_BLOCK = 2 ** 48;

export class ChainHead {
  /** The highest block seen; undefined until a first one. */
  private highest: number | undefined;
  /** When a block at least as high as `highest` was last seen (unix ms); 0: never. */
  private confirmedAt = 0;
  /** When the last poll was started (unix ms); 0: never. */
  lastPollAt = 0;
  /** A poll is on its way. */
  polling = false;

  constructor(
    readonly chainId: string,
    /** Blocks behind the head after which data is final (finality/depth.ts). */
    public depth: number,
    /** `chains.<id>.head.pollSeconds`: 0, never polled. */
    public pollSeconds: number,
  ) {}

  /** A block number from an answer or a poll. A lower one (an upstream behind the others) is ignored. */
  observe(block: number, nowMs: number): void {
    if (!Number.isSafeInteger(block) || block < 0 || block > MAX_BLOCK) return;
    if (this.highest !== undefined && block < this.highest) return;
    this.highest = block;
    this.confirmedAt = nowMs;
  }

  /** The head, if it is known and not stale. */
  current(nowMs: number): number | undefined {
    if (this.highest === undefined || nowMs - this.confirmedAt > staleAfterMs(this.pollSeconds)) return undefined;
    return this.highest;
  }

  /** The highest block that is final now (at most `head - depth`), if the head is known and not stale. */
  finalLine(nowMs: number): number | undefined {
    const head = this.current(nowMs);
    return head === undefined ? undefined : head - this.depth;
  }

  /** What /readyz and the metrics show: the last head seen, however old. */
  get number(): number | undefined {
    return this.highest;
  }

  /** Seconds since the head was last confirmed; undefined before the first. */
  ageSeconds(nowMs: number): number | undefined {
    return this.highest === undefined ? undefined : Math.max(0, (nowMs - this.confirmedAt) / 1000);
  }

  /** Whether a poll should go now: polls are on, none is on its way, and nothing confirmed the head for a poll interval. */
  pollDue(nowMs: number): boolean {
    if (this.pollSeconds <= 0 || this.polling) return false;
    const interval = this.pollSeconds * 1000;
    return nowMs - this.confirmedAt >= interval && nowMs - this.lastPollAt >= interval;
  }
}
