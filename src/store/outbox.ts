// The webhook outbox: every delivery of an event to one webhook, kept in the records store so that
// it survives a crash and is delivered by whichever gateway process claims it first (the
// transactional outbox, https://microservices.io/patterns/data/transactional-outbox.html). A
// delivery's id is its event's id and its webhook's, and the event's id says what happened
// (`credits.threshold:<account>:<period>:80`): two processes that both see a threshold crossed
// store one delivery, which is what makes an event once per period. A claim leases a delivery
// (its `nextAttemptAt` moves to the lease's end), so a process that dies while sending leaves it
// to be claimed again when the lease ends: at least once.

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A delivery to store: the event, already serialised (the bytes that are signed and sent), and its webhook. */
export interface NewDelivery {
  /** `<eventId>|<webhookId>`. */
  id: string;
  eventId: string;
  /** The event type (`credits.threshold`, `key.created`, ...). */
  type: string;
  webhook: string;
  /** The key the event is about, '' for none: for listing. */
  keyId: string;
  /** The JSON body sent. */
  body: string;
  /** ms since the epoch. */
  createdAt: number;
}

export interface Delivery extends NewDelivery {
  status: DeliveryStatus;
  /** Attempts begun: a claim adds one. */
  attempts: number;
  /** When a pending delivery may next be claimed (a claimed one: when its lease ends). */
  nextAttemptAt: number;
  /** When the last attempt ended, 0 before any. */
  lastAttemptAt: number;
  /** The receiver's HTTP status of the last attempt, 0 when there was none (refused, timed out). */
  lastStatus: number;
  /** Why the last attempt failed, '' when it did not. */
  lastError: string;
  /** When it was delivered, 0 until then. */
  deliveredAt: number;
}

/** The outcome of an attempt (OutboxStore.settle). */
export interface Settlement {
  status: DeliveryStatus;
  /** When the attempt ended. */
  at: number;
  /** For `pending`: when to try again. */
  nextAttemptAt?: number | undefined;
  lastStatus: number;
  lastError: string;
}

export interface DeliveryQuery {
  webhook?: string | undefined;
  status?: DeliveryStatus | undefined;
  keyId?: string | undefined;
  type?: string | undefined;
  /** From an earlier page's `nextCursor`. */
  cursor?: string | undefined;
  /** 1..1000. */
  limit: number;
}

export interface DeliveryPage {
  /** Newest first (createdAt, then id, both descending). */
  deliveries: Delivery[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * Every backend checks its inputs the same way (outbox-common.ts) and rejects with a RangeError,
 * writing nothing, a value it could not store faithfully: an instant that is not a whole,
 * non-negative number of ms below 2^53, a `limit` outside 1..1000, a `leaseMs` below 1, an
 * unknown status, an empty id, a string holding NUL or a lone surrogate, a malformed cursor.
 * An id or a listing filter no delivery can have ('' or such a string) is looked up all the
 * same: not found (getDelivery, settle, redeliver), or an empty page (listDeliveries).
 * Strings (ids included) are ordered by code point, as SQLite, PostgreSQL ("C") and Redis order
 * their UTF-8 bytes.
 */
export interface OutboxStore {
  /**
   * Stores each delivery whose id is new (status `pending`, attempts 0, `nextAttemptAt` =
   * `createdAt`, the rest 0 or ''), atomically per delivery, and leaves one whose id is stored as
   * it is, whatever its status. Resolves with the ids newly stored, in the order given (an id
   * given twice in one call counts once, as its first). An id pruned is new again.
   */
  enqueue(deliveries: readonly NewDelivery[]): Promise<string[]>;
  /**
   * Claims up to `limit` pending deliveries with `nextAttemptAt <= now`, oldest `nextAttemptAt`
   * first (then by id): for each, `attempts` grows by one and `nextAttemptAt` becomes
   * `now + leaseMs`, in one atomic step, so that no other claim (of any process) gets it before
   * the lease ends. Resolves with the claimed deliveries as they are after the claim, in that
   * order. While other processes claim at the same moment it may claim fewer than `limit`, or
   * none, although more are due (it never waits for the deliveries they are taking): a worker
   * asks again on its next round.
   */
  claim(now: number, leaseMs: number, limit: number): Promise<Delivery[]>;
  /**
   * Records the outcome of the attempt that `attempts` numbers, only if the delivery is still
   * pending with that many attempts (a late settlement of an attempt whose lease ended and that
   * was claimed again changes nothing). Resolves whether it was recorded. Recorded: `status`,
   * `lastAttemptAt` = `at`, `lastStatus`, `lastError`; for `pending`, `nextAttemptAt` (`at`
   * when not given: due at once); for `delivered`, `deliveredAt` = `at`. A delivered or failed
   * one keeps its `nextAttemptAt` as it was, and is never claimed again unless redelivered.
   */
  settle(id: string, attempts: number, outcome: Settlement): Promise<boolean>;
  getDelivery(id: string): Promise<Delivery | undefined>;
  /**
   * A page of the deliveries matching every filter given, newest first. A cursor is given back
   * with the same filters; the next page starts after the delivery it was made from, so that
   * deliveries enqueued or pruned meanwhile never shift a page.
   */
  listDeliveries(query: DeliveryQuery): Promise<DeliveryPage>;
  /**
   * Makes a delivery pending again, due at `now`, with its attempts kept (an operator's "send
   * again" of a failed or delivered one); its last attempt's fields and `deliveredAt` are kept
   * too. Resolves false when there is no such delivery.
   */
  redeliver(id: string, now: number): Promise<boolean>;
  /** Forgets deliveries created before `before` (ms), whatever their status. */
  pruneDeliveries(before: number): Promise<void>;
}
