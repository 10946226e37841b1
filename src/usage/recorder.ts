// Usage rows to bill from: per UTC day, key, chain and route, the requests, credits billed
// (refunds taken off), cache hits, refusals and 5xx errors. Counted in memory on the request path
// (a few map lookups and additions), and written to the store in batches, off the request path:
// once a second and when the gateway stops. A batch whose write failed is sent again, the same
// rows under the same id, before anything newer: the store adds a batch at most once
// (store/types.ts), so a write that timed out but ran anyway (a stalled Redis that resumes) is
// not counted twice, and nothing is lost while the store is away. Counts made meanwhile wait in
// memory (one row per day, key, chain and route, however long the wait). A crash loses at most
// the last second.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { UsageCounts, UsageRow } from '../store/types.js';
import { ThrottledWarning } from '../observability/throttled-log.js';
import { DAY_MS, utcDay } from '../store/day.js';

/** How often counts are written to the store. */
export const USAGE_FLUSH_MS = 1_000;

type Counts = UsageCounts;
const zero = (): Counts => ({ requests: 0, credits: 0, cacheHits: 0, refused: 0, errors: 0 });

export class UsageRecorder {
  /** day -> key id -> chain -> route -> counts: no string built per request. */
  private pending = new Map<string, Map<string, Map<string, Map<string, Counts>>>>();
  /** The day of the last instant seen, and when it ends: one Date per day, not one per request. */
  private day = '';
  private dayEnds = 0;
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  /** A batch whose write failed: sent again as it is before anything newer. */
  private unsent: { id: string; rows: UsageRow[] } | undefined;
  /** Batch ids: this process's random prefix and a counter. */
  private readonly batchPrefix = randomUUID();
  private batches = 0;
  private readonly warning: ThrottledWarning;

  constructor(
    private readonly write: (rows: UsageRow[], batchId: string) => Promise<void>,
    log: Pick<Logger, 'warn'>,
    now: () => number,
  ) {
    this.warning = new ThrottledWarning(log, 'usage rows could not be written; keeping them for the next try', now);
    this.timer = setInterval(() => void this.flush(), USAGE_FLUSH_MS);
    this.timer.unref();
  }

  /** One finished request of a key. */
  record(nowMs: number, keyId: string, chain: string, route: string, status: number, credits: number, cacheHit: boolean): void {
    if (nowMs >= this.dayEnds || nowMs < this.dayEnds - DAY_MS) {
      this.day = utcDay(nowMs);
      this.dayEnds = Date.parse(`${this.day}T00:00:00Z`) + DAY_MS;
    }
    const c = this.counts(this.day, keyId, chain, route);
    c.requests++;
    c.credits += credits;
    if (cacheHit) c.cacheHits++;
    if (status === 402 || status === 403 || status === 429) c.refused++;
    else if (status >= 500) c.errors++;
  }

  private counts(day: string, keyId: string, chain: string, route: string): Counts {
    let keys = this.pending.get(day);
    if (!keys) this.pending.set(day, (keys = new Map<string, Map<string, Map<string, Counts>>>()));
    let chains = keys.get(keyId);
    if (!chains) keys.set(keyId, (chains = new Map<string, Map<string, Counts>>()));
    let routes = chains.get(chain);
    if (!routes) chains.set(chain, (routes = new Map<string, Counts>()));
    let c = routes.get(route);
    if (!c) routes.set(route, (c = zero()));
    return c;
  }

  /** Rows counted and not written yet: the batch waiting to be sent again, and what was counted since. */
  get waitingRows(): number {
    let n = this.unsent?.rows.length ?? 0;
    for (const keys of this.pending.values()) for (const chains of keys.values()) for (const routes of chains.values()) n += routes.size;
    return n;
  }

  /** Writes what was counted since the last write; one write at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.writePending().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    if (this.unsent) {
      if (!(await this.send(this.unsent))) return;
      this.unsent = undefined;
    }
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const rows: UsageRow[] = [];
    for (const [day, keys] of batch)
      for (const [keyId, chains] of keys)
        for (const [chain, routes] of chains) for (const [route, c] of routes) rows.push({ day, keyId, chain, route, ...c });
    const next = { id: `${this.batchPrefix}-${++this.batches}`, rows };
    if (!(await this.send(next))) this.unsent = next;
  }

  private async send(batch: { id: string; rows: UsageRow[] }): Promise<boolean> {
    try {
      await this.write(batch.rows, batch.id);
      return true;
    } catch (err) {
      this.warning.warn(err, { rows: batch.rows.length });
      return false;
    }
  }

  /** Stops the timer and writes what is left (SIGTERM loses nothing). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    // A write that was running when close began may have left a new batch behind.
    await this.flush();
  }
}
