// Usage rows to bill from: per UTC hour, key, account, chain and route, the requests, credits
// billed (refunds taken off), cache hits, refusals and 5xx errors. Counted in memory on the request
// path (a few map lookups and additions), and written to the store in batches, off the request path:
// once a second and when the gateway stops. A batch whose write failed is sent again, the same
// rows under the same id, before anything newer: the store adds a batch at most once
// (store/types.ts), so a write that timed out but ran anyway (a stalled Redis that resumes) is
// not counted twice, and nothing is lost while the store is away. Counts made meanwhile wait in
// memory (one row per hour, key, account, chain and route, however long the wait). A crash loses
// at most the last second. Each row of a batch names its hour: the store adds it to its daily row
// and to its hourly row in the same write (store/types.ts, UsageStore.addUsage), so a day's hourly
// rows always sum to its daily row. The account is the key's (KeyRecord.account, keys/ring.ts:
// ApiKey.usageAccount) when the request was counted: a key moved to another account counts under
// the new one from then on, and its earlier rows stay the old one's.
//
// Joined to the in-process quota store (quota/memory.ts: without Redis, where the ledgers live in
// the same store as the usage rows), the credits are counted when they are billed: the quota
// store adds a decision's credits to its usage row (`bill`) in the same synchronous step as it
// takes them from the ledger, and takes a refund off both alike; requests, cache hits, refusals
// and errors are still counted when the request ends. The quota store then writes the changed
// ledgers and the usage batches in one transaction (`takeBatches`, `settle`), once a second and
// at close, and this recorder writes nothing itself: after a crash, usage credits equal what the
// ledgers were charged, both as of the last write. A joined write that failed and certainly
// wrote nothing gives its new counts back to the next batch; one whose outcome is unknown (a
// commit whose answer was lost) keeps its batch, sent again under its id before anything newer.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { outcomeUnknown, type UsageBatch, type UsageCounts, type UsageRow } from '../store/types.js';
import { ThrottledWarning } from '../observability/throttled-log.js';
import { HOUR_MS, utcHour } from '../store/day.js';
import { zeroCounts } from '../store/records.js';

/** How often counts are written to the store. */
export const USAGE_FLUSH_MS = 1_000;

type Counts = UsageCounts;
/** hour -> key id -> account -> chain -> route -> counts. */
type Pending = Map<string, Map<string, Map<string, Map<string, Map<string, Counts>>>>>;
/** A batch of this recorder's: its rows are its own, with every counter. */
type Batch = UsageBatch & { rows: (UsageRow & Counts)[] };
const zero = (): Counts => zeroCounts();

export class UsageRecorder {
  /** hour -> key id -> account -> chain -> route -> counts: no string built per request. */
  private pending: Pending = new Map();
  /** The hour of the last instant seen, and when it ends: one Date per hour, not one per request. */
  private hour = '';
  private hourEnds = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /**
   * Batches whose write failed, oldest first: sent again as they are before anything newer. At
   * most one when not joined; joined, one more for each write whose outcome was unknown.
   */
  private unsent: Batch[] = [];
  /** Joined to the quota store: its flush writes the usage rows with the ledgers. */
  private joined: (() => Promise<void>) | undefined;
  /** Credits are counted by the quota store in Redis as it bills them (quota/usage-credits.ts), not here. */
  private creditsElsewhere = false;
  /** The batch made from pending counts by the last `takeBatches`, until `settle`. */
  private taken: Batch | undefined;
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

  /**
   * Hands the writes to the quota store (quota/memory.ts, `joinUsage`): from now on credits are
   * counted by `bill`, not by `record`, and `flush` is the quota store's.
   */
  joinLedgers(flush: () => Promise<void>): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.joined = flush;
  }

  /**
   * The quota store counts the credits where it bills them (Redis: quota/usage-credits.ts): rows
   * written from now on carry requests, cache hits, refusals and errors, and no credits.
   */
  countCreditsElsewhere(): void {
    this.creditsElsewhere = true;
  }

  /** The UTC hour of an instant (`YYYY-MM-DDTHH:00:00Z`, store/day.ts). */
  private hourOf(nowMs: number): string {
    if (nowMs >= this.hourEnds || nowMs < this.hourEnds - HOUR_MS) {
      this.hour = utcHour(nowMs);
      this.hourEnds = Date.parse(this.hour) + HOUR_MS;
    }
    return this.hour;
  }

  /** Credits billed (a refund: negative) to a request of the key, at its decision's instant, under the key's account ('' for none). */
  bill(nowMs: number, keyId: string, account: string, chain: string, route: string, credits: number): void {
    this.counts(this.hourOf(nowMs), keyId, account, chain, route).credits += credits;
  }

  /**
   * One finished request of a key; `credits` counts only when neither joined (then `bill` did) nor
   * counted elsewhere. By status: 429 (the key's rate: an address blocked for wrong keys is
   * refused before any key is named, request/pipeline.ts), 402 and 403 are refusals by cause;
   * any other 4xx (400, 413, 422, the explorer's 404, a JSON-RPC call's 400) is a client error;
   * 5xx an error. A legacy error is HTTP 200 (status "0" in its body): not counted as either. (An
   * unknown route's 404 and a 405 are answered before the key step: never recorded.)
   */
  record(
    nowMs: number,
    keyId: string,
    account: string,
    chain: string,
    route: string,
    status: number,
    credits: number,
    cacheHit: boolean,
  ): void {
    const c = this.counts(this.hourOf(nowMs), keyId, account, chain, route);
    c.requests++;
    if (this.joined === undefined && !this.creditsElsewhere) c.credits += credits;
    if (cacheHit) c.cacheHits++;
    if (status >= 500) c.errors++;
    else if (status === 429) {
      c.refused++;
      c.rateLimited++;
    } else if (status === 402) {
      c.refused++;
      c.outOfCredits++;
    } else if (status === 403) {
      c.refused++;
      c.forbidden++;
    } else if (status >= 400) c.clientErrors++;
  }

  private counts(hour: string, keyId: string, account: string, chain: string, route: string): Counts {
    let keys = this.pending.get(hour);
    if (!keys) this.pending.set(hour, (keys = new Map<string, Map<string, Map<string, Map<string, Counts>>>>()));
    let accounts = keys.get(keyId);
    if (!accounts) keys.set(keyId, (accounts = new Map<string, Map<string, Map<string, Counts>>>()));
    let chains = accounts.get(account);
    if (!chains) accounts.set(account, (chains = new Map<string, Map<string, Counts>>()));
    let routes = chains.get(chain);
    if (!routes) chains.set(chain, (routes = new Map<string, Counts>()));
    let c = routes.get(route);
    if (!c) routes.set(route, (c = zero()));
    return c;
  }

  /** Rows counted and not written yet: the batch waiting to be sent again, and what was counted since. */
  get waitingRows(): number {
    let n = 0;
    for (const b of this.unsent) n += b.rows.length;
    if (this.taken) n += this.taken.rows.length;
    for (const keys of this.pending.values())
      for (const accounts of keys.values()) for (const chains of accounts.values()) for (const routes of chains.values()) n += routes.size;
    return n;
  }

  /** Whether anything counted is not written yet. */
  get waiting(): boolean {
    return this.unsent.length > 0 || this.pending.size > 0;
  }

  /** Writes what was counted since the last write; one write at a time. Joined: the quota store's write of both. */
  flush(): Promise<void> {
    const joined = this.joined;
    if (joined) return joined().catch(() => undefined);
    this.flushing ??= this.writePending().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** The pending counts as a new batch (undefined when there are none); pending starts empty. */
  private drain(): Batch | undefined {
    if (this.pending.size === 0) return undefined;
    const batch = this.pending;
    this.pending = new Map();
    const rows: (UsageRow & Counts)[] = [];
    for (const [hour, keys] of batch) {
      const day = hour.slice(0, 10);
      for (const [keyId, accounts] of keys)
        for (const [account, chains] of accounts)
          for (const [chain, routes] of chains)
            for (const [route, c] of routes) rows.push({ day, hour, keyId, account, chain, route, ...c });
    }
    return { id: `${this.batchPrefix}-${++this.batches}`, rows };
  }

  private async writePending(): Promise<void> {
    const held = this.unsent[0];
    if (held) {
      if (!(await this.send(held))) return;
      this.unsent.shift();
    }
    const next = this.drain();
    if (next && !(await this.send(next))) this.unsent.push(next);
  }

  /**
   * Joined: the batches for the quota store's write, taken in the same synchronous step as its
   * ledger rows: those waiting to be sent again, then what was counted since. One write at a
   * time (the quota store's); `settle` tells how it went.
   */
  takeBatches(): UsageBatch[] {
    this.taken = this.drain();
    return this.taken ? [...this.unsent, this.taken] : [...this.unsent];
  }

  /**
   * Joined: how the write of the last `takeBatches` went. Written: nothing waits. Failed and
   * certainly nothing written: the new batch's counts go back to pending (no id spent, so a long
   * outage keeps one row per hour, key, account, chain and route). Failed with its outcome unknown: the new
   * batch waits to be sent again under its id, as the older ones do.
   */
  settle(err?: unknown): void {
    const taken = this.taken;
    this.taken = undefined;
    if (err === undefined) {
      this.unsent = [];
      return;
    }
    const rows = (taken?.rows.length ?? 0) + this.unsent.reduce((n, b) => n + b.rows.length, 0);
    this.warning.warn(err, { rows });
    if (!taken) return;
    if (outcomeUnknown(err)) {
      this.unsent.push(taken);
      return;
    }
    for (const r of taken.rows) {
      const c = this.counts(r.hour ?? `${r.day}T00:00:00Z`, r.keyId, r.account, r.chain, r.route);
      c.requests += r.requests;
      c.credits += r.credits;
      c.cacheHits += r.cacheHits;
      c.refused += r.refused;
      c.rateLimited += r.rateLimited;
      c.outOfCredits += r.outOfCredits;
      c.forbidden += r.forbidden;
      c.clientErrors += r.clientErrors;
      c.errors += r.errors;
    }
  }

  private async send(batch: Batch): Promise<boolean> {
    try {
      await this.write(batch.rows, batch.id);
      return true;
    } catch (err) {
      this.warning.warn(err, { rows: batch.rows.length });
      return false;
    }
  }

  /** Stops the timer and writes what is left (SIGTERM loses nothing); joined, the quota store's close writes it. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.joined) return;
    await this.flush();
    // A write that was running when close began may have left a new batch behind.
    await this.flush();
  }
}
