// What every backend of the webhook outbox (store/outbox.ts) shares: the checks of its inputs, the
// same in each backend, so that a value one of them would store wrongly (a fractional instant in
// a Redis score, a NUL that PostgreSQL's text cannot hold) is refused by all of them alike with a
// RangeError before anything is written; the listing's cursor; a delivery copied field by field.
import type { Delivery, DeliveryQuery, DeliveryStatus, NewDelivery, Settlement } from './outbox.js';

/** The most deliveries one listing page or one claim returns. */
export const OUTBOX_MAX_LIMIT = 1_000;

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/** A lone UTF-16 surrogate (in `u` mode, a well-formed pair is one code point, not a surrogate), or NUL. */
const UNSTORABLE = /[\p{Cs}\0]/u;

/** The page of a listing whose filters no delivery can match. */
export const EMPTY_PAGE = (): { deliveries: []; nextCursor: null } => ({ deliveries: [], nextCursor: null });

function checkText(name: string, value: unknown, nonEmpty = false): string {
  if (typeof value !== 'string') throw new RangeError(`delivery ${name} must be a string`);
  if (nonEmpty && value.length === 0) throw new RangeError(`delivery ${name} must not be empty`);
  if (UNSTORABLE.test(value)) throw new RangeError(`delivery ${name} holds NUL or a lone surrogate, which not every store can keep`);
  return value;
}

/** Milliseconds since the epoch, whole and at most 2^53 - 1 (what a double and a Redis score hold exactly). */
export function checkInstant(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer of ms: ${String(value)}`);
  }
  return value;
}

/** pruneDeliveries' bound: whole ms, of either sign (nothing is created before 0). */
export function checkPruneBefore(before: unknown): number {
  if (typeof before !== 'number' || !Number.isSafeInteger(before)) {
    throw new RangeError(`prune before must be an integer of ms: ${String(before)}`);
  }
  return before;
}

function checkCount(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}: ${String(value)}`);
  }
  return value;
}

export function checkStatus(value: unknown): DeliveryStatus {
  if (!DELIVERY_STATUSES.includes(value as DeliveryStatus)) throw new RangeError(`not a delivery status: ${String(value)}`);
  return value as DeliveryStatus;
}

/** Whether a string can be stored by every backend: not NUL, not a lone surrogate. */
const storable = (value: string): boolean => !UNSTORABLE.test(value);

/**
 * An id to look a delivery up by: RangeError when it is not a string; undefined when no delivery
 * can have it ('', or a string no store keeps), which the lookup answers as not found.
 */
export function lookupId(id: unknown): string | undefined {
  if (typeof id !== 'string') throw new RangeError('a delivery id must be a string');
  return id !== '' && storable(id) ? id : undefined;
}

/** A new delivery's fields, and only those, checked. */
export function checkNewDelivery(d: NewDelivery): NewDelivery {
  return {
    id: checkText('id', d.id, true),
    eventId: checkText('eventId', d.eventId),
    type: checkText('type', d.type),
    webhook: checkText('webhook', d.webhook),
    keyId: checkText('keyId', d.keyId),
    body: checkText('body', d.body),
    createdAt: checkInstant('delivery createdAt', d.createdAt),
  };
}

/** The deliveries of one enqueue, checked, each id once (the first one given). */
export function checkNewDeliveries(deliveries: readonly NewDelivery[]): NewDelivery[] {
  const seen = new Set<string>();
  const out: NewDelivery[] = [];
  for (const d of deliveries) {
    const checked = checkNewDelivery(d);
    if (seen.has(checked.id)) continue;
    seen.add(checked.id);
    out.push(checked);
  }
  return out;
}

/** A delivery as enqueue stores it. */
export function newDelivery(d: NewDelivery): Delivery {
  return {
    ...d,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: d.createdAt,
    lastAttemptAt: 0,
    lastStatus: 0,
    lastError: '',
    deliveredAt: 0,
  };
}

export interface ClaimArgs {
  now: number;
  /** now + leaseMs. */
  leaseEnd: number;
  limit: number;
}

export function checkClaim(now: number, leaseMs: number, limit: number): ClaimArgs {
  checkInstant('claim now', now);
  checkCount('claim leaseMs', leaseMs, 1, Number.MAX_SAFE_INTEGER);
  checkCount('claim limit', limit, 1, OUTBOX_MAX_LIMIT);
  return { now, leaseEnd: checkInstant('claim now + leaseMs', now + leaseMs), limit };
}

/** A settlement, checked, with `nextAttemptAt` resolved: `at` for a pending one given none; unused otherwise. */
export interface SettleArgs {
  /** Undefined for an id no delivery can have: nothing to settle. */
  id: string | undefined;
  attempts: number;
  status: DeliveryStatus;
  at: number;
  nextAttemptAt: number;
  lastStatus: number;
  lastError: string;
}

export function checkSettle(id: string, attempts: number, outcome: Settlement): SettleArgs {
  const status = checkStatus(outcome.status);
  const at = checkInstant('settlement at', outcome.at);
  return {
    id: lookupId(id),
    attempts: checkCount('settle attempts', attempts, 0, Number.MAX_SAFE_INTEGER),
    status,
    at,
    nextAttemptAt: outcome.nextAttemptAt === undefined ? at : checkInstant('settlement nextAttemptAt', outcome.nextAttemptAt),
    lastStatus: checkCount('settlement lastStatus', outcome.lastStatus, 0, 999),
    lastError: checkText('lastError', outcome.lastError),
  };
}

/** Where a page starts: after the delivery of this createdAt and id, in the listing's order. */
export interface CursorPosition {
  createdAt: number;
  id: string;
}

export interface ListArgs {
  /** A filter no delivery can match (a string no store keeps): the page is empty. */
  none: boolean;
  webhook: string | undefined;
  status: DeliveryStatus | undefined;
  keyId: string | undefined;
  type: string | undefined;
  after: CursorPosition | undefined;
  limit: number;
}

function optionalFilter(name: string, value: unknown): string | undefined {
  if (value !== undefined && typeof value !== 'string') throw new RangeError(`listing filter ${name} must be a string`);
  return value;
}

export function checkQuery(query: DeliveryQuery): ListArgs {
  const filters = [query.webhook, query.keyId, query.type];
  return {
    none: filters.some((f) => typeof f === 'string' && !storable(f)),
    webhook: optionalFilter('webhook', query.webhook),
    status: query.status === undefined ? undefined : checkStatus(query.status),
    keyId: optionalFilter('keyId', query.keyId),
    type: optionalFilter('type', query.type),
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: checkCount('listing limit', query.limit, 1, OUTBOX_MAX_LIMIT),
  };
}

/** Opaque to callers: base64url of `[createdAt, id]` of the last delivery of the page. */
export function encodeCursor(d: Pick<Delivery, 'createdAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([d.createdAt, d.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: unknown): CursorPosition {
  const refuse = () => new RangeError(`not a delivery listing cursor: ${String(cursor)}`);
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuse();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(value) || value.length !== 2) throw refuse();
  const [createdAt, id] = value as unknown[];
  if (
    typeof createdAt !== 'number' ||
    !Number.isSafeInteger(createdAt) ||
    createdAt < 0 ||
    typeof id !== 'string' ||
    id === '' ||
    !storable(id)
  ) {
    throw refuse();
  }
  return { createdAt, id };
}

/**
 * Strings compared by code point, as SQLite's BINARY collation and PostgreSQL's "C" compare
 * their UTF-8 bytes and Redis its members' bytes (UTF-8's byte order is its code points' order:
 * https://www.rfc-editor.org/rfc/rfc3629#section-1); JavaScript's `<` compares UTF-16 units,
 * which order the code points past U+FFFF before U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** The listing's order: newest first, createdAt then id, both descending. */
export const newestFirst = (a: CursorPosition, b: CursorPosition): number => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id);

/** Whether `d` comes after the cursor's position in the listing's order. */
export const afterCursor = (d: CursorPosition, after: CursorPosition | undefined): boolean =>
  after === undefined || newestFirst(after, d) < 0;

export function copyDelivery(d: Delivery): Delivery {
  return {
    id: d.id,
    eventId: d.eventId,
    type: d.type,
    webhook: d.webhook,
    keyId: d.keyId,
    body: d.body,
    createdAt: d.createdAt,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt,
    lastAttemptAt: d.lastAttemptAt,
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    deliveredAt: d.deliveredAt,
  };
}

/** Whether a delivery matches a listing's filters (not its cursor). */
export function matches(d: Delivery, q: ListArgs): boolean {
  return (
    (q.webhook === undefined || d.webhook === q.webhook) &&
    (q.status === undefined || d.status === q.status) &&
    (q.keyId === undefined || d.keyId === q.keyId) &&
    (q.type === undefined || d.type === q.type)
  );
}

/**
 * A delivery as the SQL stores keep it (outbox-sqlite.ts, outbox-postgres.ts): times as numbers,
 * or as strings where the driver gives bigint columns so (pg: int8 may exceed 2^53).
 */
export interface DeliverySqlRow {
  id: string;
  event_id: string;
  type: string;
  webhook: string;
  key_id: string;
  body: string;
  created_at: number | string;
  status: string;
  attempts: number;
  next_attempt_at: number | string;
  last_attempt_at: number | string;
  last_status: number;
  last_error: string;
  delivered_at: number | string;
}

export function deliveryFromSqlRow(r: DeliverySqlRow): Delivery {
  return {
    id: r.id,
    eventId: r.event_id,
    type: r.type,
    webhook: r.webhook,
    keyId: r.key_id,
    body: r.body,
    createdAt: Number(r.created_at),
    status: r.status as DeliveryStatus,
    attempts: r.attempts,
    nextAttemptAt: Number(r.next_attempt_at),
    lastAttemptAt: Number(r.last_attempt_at),
    lastStatus: r.last_status,
    lastError: r.last_error,
    deliveredAt: Number(r.delivered_at),
  };
}
