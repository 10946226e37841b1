// The webhook outbox (store/outbox.ts) in the SQLite store's file (store/sqlite.ts): one table,
// `webhook_deliveries`, made by the file's migration to schema version 9
// (src/store/sql/sqlite/009-webhook-deliveries.sql).
// It runs on the store's own connection, through its `read` and `write`: a fault of the file or
// the disk is counted and told as any other call's, a file deleted while open is written back at
// its path with this table in it (VACUUM INTO copies every table), and nothing is acknowledged
// that a restart would not find.
//
// A claim is one IMMEDIATE transaction: it takes the file's write lock before it reads which
// deliveries are due (https://www.sqlite.org/lang_transaction.html), so a second connection to
// the file (another process on it) waits for it and then finds them claimed; better-sqlite3 runs
// the function given to `db.transaction` inside BEGIN and COMMIT, and rolls back when it throws
// (https://github.com/WiseLibs/better-sqlite3/blob/master/docs/api.md#transactionfunction---function).
import type Database from 'better-sqlite3';
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
  EMPTY_PAGE,
  encodeCursor,
  lookupId,
  type ClaimArgs,
  type SettleArgs,
} from './outbox-common.js';

interface ListParams {
  webhook: string | null;
  status: string | null;
  key: string | null;
  type: string | null;
  at: number | null;
  id: string | null;
  limit: number;
}

function prepare(db: Database.Database) {
  const stmt = {
    insert: db.prepare<NewDelivery>(
      `INSERT INTO webhook_deliveries (id, event_id, type, webhook, key_id, body, created_at, status, attempts, next_attempt_at,
         last_attempt_at, last_status, last_error, delivered_at)
       VALUES (@id, @eventId, @type, @webhook, @keyId, @body, @createdAt, 'pending', 0, @createdAt, 0, 0, '', 0)
       ON CONFLICT (id) DO NOTHING`,
    ),
    due: db.prepare<[number, number], DeliverySqlRow>(
      `SELECT * FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`,
    ),
    lease: db.prepare<[number, string]>('UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = ? WHERE id = ?'),
    settle: db.prepare<SettleArgs>(
      `UPDATE webhook_deliveries SET status = @status,
         next_attempt_at = CASE WHEN @status = 'pending' THEN @nextAttemptAt ELSE next_attempt_at END,
         delivered_at = CASE WHEN @status = 'delivered' THEN @at ELSE delivered_at END,
         last_attempt_at = @at, last_status = @lastStatus, last_error = @lastError
       WHERE id = @id AND status = 'pending' AND attempts = @attempts`,
    ),
    get: db.prepare<[string], DeliverySqlRow>('SELECT * FROM webhook_deliveries WHERE id = ?'),
    // Row values compare as tuples (https://www.sqlite.org/rowvalue.html): the rows after the cursor's.
    list: db.prepare<ListParams, DeliverySqlRow>(
      `SELECT * FROM webhook_deliveries
       WHERE (@webhook IS NULL OR webhook = @webhook)
         AND (@status IS NULL OR status = @status)
         AND (@key IS NULL OR key_id = @key)
         AND (@type IS NULL OR type = @type)
         AND (@at IS NULL OR (created_at, id) < (@at, @id))
       ORDER BY created_at DESC, id DESC
       LIMIT @limit`,
    ),
    redeliver: db.prepare<[number, string]>("UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ? WHERE id = ?"),
    prune: db.prepare<[number]>('DELETE FROM webhook_deliveries WHERE created_at < ?'),
  };
  return {
    stmt,
    enqueue: db.transaction((deliveries: readonly NewDelivery[]) =>
      deliveries.filter((d) => stmt.insert.run(d).changes > 0).map((d) => d.id),
    ),
    claim: db.transaction((args: ClaimArgs): Delivery[] => {
      const due = stmt.due.all(args.now, args.limit);
      for (const r of due) stmt.lease.run(args.leaseEnd, r.id);
      return due.map((r) => ({ ...deliveryFromSqlRow(r), attempts: r.attempts + 1, nextAttemptAt: args.leaseEnd }));
    }),
  };
}

type Prepared = ReturnType<typeof prepare>;

/** What the store (store/sqlite.ts) lends the outbox: its reads and writes on its current connection. */
export interface SqliteRunner {
  read<T>(op: string, run: (db: Database.Database) => T): Promise<T>;
  write<T>(op: string, run: (db: Database.Database) => T): Promise<T>;
}

/** A synchronous check as a promise: its RangeError rejects it, never throws at the caller. */
function checked<T>(check: () => T): Promise<T> {
  try {
    return Promise.resolve(check());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

export class SqliteOutbox implements OutboxStore {
  /** Statements per connection: the store opens a new one after a fault or a restore. */
  private readonly prepared = new WeakMap<Database.Database, Prepared>();

  constructor(private readonly runner: SqliteRunner) {}

  private on(db: Database.Database): Prepared {
    let p = this.prepared.get(db);
    if (!p) {
      p = prepare(db);
      this.prepared.set(db, p);
    }
    return p;
  }

  async enqueue(deliveries: readonly NewDelivery[]): Promise<string[]> {
    const fresh = await checked(() => checkNewDeliveries(deliveries));
    if (fresh.length === 0) return [];
    return this.runner.write('enqueue', (db) => this.on(db).enqueue(fresh));
  }

  async claim(now: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    const args = await checked(() => checkClaim(now, leaseMs, limit));
    // Looked first with a read: the delivery loop asks every second, and a write with nothing to
    // claim would tell the store's fault tracking (sqlite.ts) that writes work when a full disk
    // refuses every real one.
    const due = await this.runner.read('claim', (db) => this.on(db).stmt.due.all(args.now, 1).length > 0);
    if (!due) return [];
    return this.runner.write('claim', (db) => this.on(db).claim.immediate(args));
  }

  async settle(id: string, attempts: number, outcome: Settlement): Promise<boolean> {
    const args = await checked(() => checkSettle(id, attempts, outcome));
    if (args.id === undefined) return false;
    return this.runner.write('settle', (db) => this.on(db).stmt.settle.run(args).changes > 0);
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const key = await checked(() => lookupId(id));
    if (key === undefined) return undefined;
    return this.runner.read('getDelivery', (db) => {
      const row = this.on(db).stmt.get.get(key);
      return row && deliveryFromSqlRow(row);
    });
  }

  async listDeliveries(query: DeliveryQuery): Promise<DeliveryPage> {
    const q = await checked(() => checkQuery(query));
    if (q.none) return EMPTY_PAGE();
    const rows = await this.runner.read('listDeliveries', (db) =>
      this.on(db).stmt.list.all({
        webhook: q.webhook ?? null,
        status: q.status ?? null,
        key: q.keyId ?? null,
        type: q.type ?? null,
        at: q.after?.createdAt ?? null,
        id: q.after?.id ?? null,
        // One more than the page: whether there is a next one.
        limit: q.limit + 1,
      }),
    );
    const page = rows.slice(0, q.limit).map(deliveryFromSqlRow);
    const last = page[page.length - 1];
    return { deliveries: page, nextCursor: rows.length > q.limit && last ? encodeCursor(last) : null };
  }

  async redeliver(id: string, now: number): Promise<boolean> {
    const key = await checked(() => (checkInstant('redeliver now', now), lookupId(id)));
    if (key === undefined) return false;
    return this.runner.write('redeliver', (db) => this.on(db).stmt.redeliver.run(now, key).changes > 0);
  }

  async pruneDeliveries(before: number): Promise<void> {
    await checked(() => checkPruneBefore(before));
    await this.runner.write('pruneDeliveries', (db) => {
      this.on(db).stmt.prune.run(before);
    });
  }
}
