// The webhook outbox (store/outbox.ts) in the PostgreSQL store's schema (store/postgres.ts): one
// table, `webhook_deliveries`, made by the schema's migration to version 8
// (src/store/sql/postgres/008-webhook-deliveries.sql). Every call goes through the store's `query`, which awaits the lazy
// migration first, in the schema the store was given (`storage.schema`).
//
// Every write is one statement, so one transaction. A claim locks the due rows it takes with
// FOR UPDATE SKIP LOCKED: a row another claim (of any host) has locked is passed over rather
// than waited for, and one whose claim committed meanwhile is no longer due when read again, so
// two claims never take the same delivery
// (https://www.postgresql.org/docs/current/sql-select.html#SQL-FOR-UPDATE-SHARE).
import type pg from 'pg';
import type { Delivery, DeliveryPage, DeliveryQuery, NewDelivery, OutboxStore, Settlement } from './outbox.js';
import {
  checkClaim,
  checkInstant,
  checkNewDeliveries,
  checkPruneBefore,
  checkQuery,
  checkSettle,
  deliveryFromSqlRow,
  type DeliverySqlRow,
  compareCodePoints,
  EMPTY_PAGE,
  encodeCursor,
  lookupId,
} from './outbox-common.js';

const COLUMNS =
  'id, event_id, type, webhook, key_id, body, created_at, status, attempts, next_attempt_at, last_attempt_at, last_status, last_error, delivered_at';

/** One statement in the store's schema, once it is migrated (PostgresStore's `query`). */
export type PostgresQuery = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

export class PostgresOutbox implements OutboxStore {
  /** `s`: the store's schema, quoted. */
  constructor(
    private readonly s: string,
    private readonly query: PostgresQuery,
  ) {}

  /** One statement (arrays unnested into rows: https://www.postgresql.org/docs/current/functions-array.html). */
  async enqueue(deliveries: readonly NewDelivery[]): Promise<string[]> {
    const fresh = checkNewDeliveries(deliveries);
    if (fresh.length === 0) return [];
    const { rows } = await this.query<{ id: string }>(
      `INSERT INTO ${this.s}.webhook_deliveries (id, event_id, type, webhook, key_id, body, created_at, status, attempts,
         next_attempt_at, last_attempt_at, last_status, last_error, delivered_at)
       SELECT id, event_id, type, webhook, key_id, body, created_at, 'pending', 0, created_at, 0, 0, '', 0
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])
         AS n(id, event_id, type, webhook, key_id, body, created_at)
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [
        fresh.map((d) => d.id),
        fresh.map((d) => d.eventId),
        fresh.map((d) => d.type),
        fresh.map((d) => d.webhook),
        fresh.map((d) => d.keyId),
        fresh.map((d) => d.body),
        fresh.map((d) => d.createdAt),
      ],
    );
    const stored = new Set(rows.map((r) => r.id));
    // In the order given: RETURNING's order is the insertion's, which SQL does not promise.
    return fresh.filter((d) => stored.has(d.id)).map((d) => d.id);
  }

  async claim(now: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    const args = checkClaim(now, leaseMs, limit);
    const { rows } = await this.query<DeliverySqlRow & { was: string }>(
      `WITH due AS (
         SELECT id, next_attempt_at AS was FROM ${this.s}.webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= $1
         ORDER BY next_attempt_at, id
         LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       UPDATE ${this.s}.webhook_deliveries AS d SET attempts = d.attempts + 1, next_attempt_at = $2
       FROM due WHERE d.id = due.id
       RETURNING ${COLUMNS.split(', ')
         .map((c) => `d.${c}`)
         .join(', ')}, due.was`,
      [args.now, args.leaseEnd, args.limit],
    );
    // Oldest nextAttemptAt first, as they were taken.
    rows.sort((a, b) => Number(a.was) - Number(b.was) || compareCodePoints(a.id, b.id));
    return rows.map(deliveryFromSqlRow);
  }

  async settle(id: string, attempts: number, outcome: Settlement): Promise<boolean> {
    const a = checkSettle(id, attempts, outcome);
    if (a.id === undefined) return false;
    const { rowCount } = await this.query(
      `UPDATE ${this.s}.webhook_deliveries SET status = $3,
         next_attempt_at = CASE WHEN $3 = 'pending' THEN $5::bigint ELSE next_attempt_at END,
         delivered_at = CASE WHEN $3 = 'delivered' THEN $4::bigint ELSE delivered_at END,
         last_attempt_at = $4, last_status = $6, last_error = $7
       WHERE id = $1 AND status = 'pending' AND attempts = $2`,
      [a.id, a.attempts, a.status, a.at, a.nextAttemptAt, a.lastStatus, a.lastError],
    );
    return (rowCount ?? 0) > 0;
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const key = lookupId(id);
    if (key === undefined) return undefined;
    const { rows } = await this.query<DeliverySqlRow>(`SELECT ${COLUMNS} FROM ${this.s}.webhook_deliveries WHERE id = $1`, [key]);
    return rows[0] && deliveryFromSqlRow(rows[0]);
  }

  async listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    const q = checkQuery(query);
    if (q.none) return EMPTY_PAGE();
    const { rows } = await this.query<DeliverySqlRow>(
      `SELECT ${COLUMNS} FROM ${this.s}.webhook_deliveries
       WHERE ($1::text IS NULL OR webhook = $1)
         AND ($2::text IS NULL OR status = $2)
         AND ($3::text IS NULL OR key_id = $3)
         AND ($4::text IS NULL OR type = $4)
         AND ($5::bigint IS NULL OR (created_at, id) < ($5::bigint, $6::text))
       ORDER BY created_at DESC, id DESC
       LIMIT $7`,
      // One more than the page: whether there is a next one.
      [q.webhook ?? null, q.status ?? null, q.keyId ?? null, q.type ?? null, q.after?.createdAt ?? null, q.after?.id ?? null, q.limit + 1],
    );
    const page = rows.slice(0, q.limit).map(deliveryFromSqlRow);
    const last = page[page.length - 1];
    return { deliveries: page, nextCursor: rows.length > q.limit && last ? encodeCursor(last) : null };
  }

  async redeliver(id: string, now: number): Promise<boolean> {
    checkInstant('redeliver now', now);
    const key = lookupId(id);
    if (key === undefined) return false;
    const { rowCount } = await this.query(
      `UPDATE ${this.s}.webhook_deliveries SET status = 'pending', next_attempt_at = $2 WHERE id = $1`,
      [key, now],
    );
    return (rowCount ?? 0) > 0;
  }

  async pruneDeliveries(before: number): Promise<void> {
    await this.query(`DELETE FROM ${this.s}.webhook_deliveries WHERE created_at < $1`, [checkPruneBefore(before)]);
  }
}
