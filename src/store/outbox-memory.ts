// The webhook outbox (store/outbox.ts) in this process's memory, for MemoryStore (store/memory.ts):
// one map by id. Every method runs whole before it resolves, so each is atomic; the simplest
// reading of the contract the other backends run (test/contracts/outbox.test.ts).
import type { Delivery, DeliveryPage, DeliveryQuery, NewDelivery, OutboxStore, Settlement } from './outbox.js';
import {
  afterCursor,
  checkClaim,
  checkInstant,
  checkNewDeliveries,
  checkPruneBefore,
  checkQuery,
  checkSettle,
  compareCodePoints,
  copyDelivery,
  EMPTY_PAGE,
  encodeCursor,
  lookupId,
  matches,
  newDelivery,
  newestFirst,
} from './outbox-common.js';

/** A rejected promise of a RangeError a check threw, as the other backends reject. */
function attempt<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

export class MemoryOutbox implements OutboxStore {
  private readonly deliveries = new Map<string, Delivery>();

  enqueue(deliveries: readonly NewDelivery[]): Promise<string[]> {
    return attempt(() => {
      const stored: string[] = [];
      for (const d of checkNewDeliveries(deliveries)) {
        if (this.deliveries.has(d.id)) continue;
        this.deliveries.set(d.id, newDelivery(d));
        stored.push(d.id);
      }
      return stored;
    });
  }

  claim(now: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    return attempt(() => {
      const args = checkClaim(now, leaseMs, limit);
      const due = [...this.deliveries.values()]
        .filter((d) => d.status === 'pending' && d.nextAttemptAt <= args.now)
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || compareCodePoints(a.id, b.id))
        .slice(0, args.limit);
      for (const d of due) {
        d.attempts += 1;
        d.nextAttemptAt = args.leaseEnd;
      }
      return due.map(copyDelivery);
    });
  }

  settle(id: string, attempts: number, outcome: Settlement): Promise<boolean> {
    return attempt(() => {
      const s = checkSettle(id, attempts, outcome);
      const d = s.id === undefined ? undefined : this.deliveries.get(s.id);
      if (!d || d.status !== 'pending' || d.attempts !== s.attempts) return false;
      d.status = s.status;
      if (s.status === 'pending') d.nextAttemptAt = s.nextAttemptAt;
      if (s.status === 'delivered') d.deliveredAt = s.at;
      d.lastAttemptAt = s.at;
      d.lastStatus = s.lastStatus;
      d.lastError = s.lastError;
      return true;
    });
  }

  getDelivery(id: string): Promise<Delivery | undefined> {
    return attempt(() => {
      const key = lookupId(id);
      const d = key === undefined ? undefined : this.deliveries.get(key);
      return d && copyDelivery(d);
    });
  }

  listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    return attempt(() => {
      const q = checkQuery(query);
      if (q.none) return EMPTY_PAGE();
      const found = [...this.deliveries.values()].filter((d) => matches(d, q) && afterCursor(d, q.after)).sort(newestFirst);
      const page = found.slice(0, q.limit);
      const last = page[page.length - 1];
      return { deliveries: page.map(copyDelivery), nextCursor: found.length > q.limit && last ? encodeCursor(last) : null };
    });
  }

  redeliver(id: string, now: number): Promise<boolean> {
    return attempt(() => {
      checkInstant('redeliver now', now);
      const key = lookupId(id);
      const d = key === undefined ? undefined : this.deliveries.get(key);
      if (!d) return false;
      d.status = 'pending';
      d.nextAttemptAt = now;
      return true;
    });
  }

  pruneDeliveries(before: number): Promise<void> {
    return attempt(() => {
      checkPruneBefore(before);
      for (const [id, d] of this.deliveries) if (d.createdAt < before) this.deliveries.delete(id);
    });
  }
}
