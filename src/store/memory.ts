// The records in this process's memory: gone when it stops. For tests and trials (`storage.path:
// ':memory:'` is SQLite's own in-memory database; this one needs no native addon), and the
// simplest reading of the contract every backend runs (test/contracts/store.test.ts).
import { checkUsageDelta, compareUsageRows, copyKeyRecord, copyObject, copyUsageRow, COUNTERS, usageRowId } from './records.js';
import type {
  AuditEntry,
  AuditStore,
  KeyRecord,
  KeyStore,
  LedgerRow,
  LedgerStore,
  ObjectKind,
  StoredObject,
  Storage,
  UsageQuery,
  UsageRow,
  UsageStore,
} from './types.js';
import { objectNotice } from './types.js';
import type { OutboxStore } from './outbox.js';
import { MemoryOutbox } from './outbox-memory.js';

/** How long a usage batch's id is remembered, ms: as the other backends do. */
const BATCH_MEMORY_MS = 3_600_000;

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Adds a row's counts to the stored row of its identity. */
function add(rows: Map<string, UsageRow>, r: UsageRow): void {
  const id = usageRowId(r);
  const stored = rows.get(id);
  if (stored) for (const c of COUNTERS) stored[c] = (stored[c] ?? 0) + (r[c] ?? 0);
  else rows.set(id, r);
}
/** As the other backends refuse one: an instant that is not a non-negative integer of ms. */
function checkAudit(e: AuditEntry): RangeError | undefined {
  if (!Number.isSafeInteger(e.at) || e.at < 0) return new RangeError(`audit instant must be a non-negative integer: ${e.at}`);
  return undefined;
}
const copyAudit = (e: AuditEntry): AuditEntry =>
  structuredClone({ at: e.at, action: e.action, actor: e.actor ?? null, keyId: e.keyId, before: e.before, after: e.after });

export class MemoryStore implements Storage, KeyStore, AuditStore, UsageStore, LedgerStore {
  readonly kind = 'memory';
  readonly faults = undefined;
  readonly keys = this;
  readonly audit = this;
  readonly usage = this;
  readonly ledgers = this;
  /** The webhook outbox, in this process's memory (store/outbox-memory.ts). */
  readonly outbox: OutboxStore = new MemoryOutbox();
  private readonly records = new Map<string, KeyRecord>();
  private readonly entries: AuditEntry[] = [];
  private readonly rows = new Map<string, UsageRow>();
  private readonly hours = new Map<string, UsageRow>();
  private readonly batches = new Map<string, number>();
  private readonly ledgerRows = new Map<string, LedgerRow>();
  private readonly watchers: ((id: string) => void)[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  private nameTaken(name: string, except: string): boolean {
    for (const r of this.records.values()) if (r.name === name && r.id !== except) return true;
    return false;
  }

  /** After the write, never inside it: as the other backends' notices arrive. */
  private notify(id: string): void {
    queueMicrotask(() => {
      for (const w of this.watchers) w(id);
    });
  }

  listKeys(): Promise<KeyRecord[]> {
    return Promise.resolve([...this.records.values()].sort((a, b) => compare(a.id, b.id)).map(copyKeyRecord));
  }

  getKey(id: string): Promise<KeyRecord | undefined> {
    const r = this.records.get(id);
    return Promise.resolve(r && copyKeyRecord(r));
  }

  createKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    const refused = checkAudit(audit);
    if (refused) return Promise.reject(refused);
    if (this.records.has(record.id)) return Promise.reject(new Error(`key id ${record.id} exists`));
    if (this.nameTaken(record.name, record.id)) return Promise.resolve(false);
    this.records.set(record.id, copyKeyRecord(record));
    this.entries.push(copyAudit(audit));
    this.notify(record.id);
    return Promise.resolve(true);
  }

  updateKey(record: KeyRecord, audit: AuditEntry): Promise<boolean> {
    const refused = checkAudit(audit);
    if (refused) return Promise.reject(refused);
    if (!this.records.has(record.id)) return Promise.reject(new Error(`no run-time key ${record.id}`));
    if (this.nameTaken(record.name, record.id)) return Promise.resolve(false);
    this.records.set(record.id, copyKeyRecord(record));
    this.entries.push(copyAudit(audit));
    this.notify(record.id);
    return Promise.resolve(true);
  }

  deleteKey(id: string, audit: AuditEntry): Promise<boolean> {
    const refused = checkAudit(audit);
    if (refused) return Promise.reject(refused);
    if (!this.records.delete(id)) return Promise.resolve(false);
    this.entries.push(copyAudit(audit));
    this.notify(id);
    return Promise.resolve(true);
  }

  watchKeys(changed: (id: string) => void): void {
    this.watchers.push(changed);
  }

  private readonly objects = new Map<string, StoredObject>();

  listObjects(kind: ObjectKind): Promise<StoredObject[]> {
    const all = [...this.objects.values()].filter((o) => o.kind === kind).map(copyObject);
    return Promise.resolve(all.sort((a, b) => compare(a.id, b.id)));
  }

  getObject(kind: ObjectKind, id: string): Promise<StoredObject | undefined> {
    const o = this.objects.get(objectNotice(kind, id));
    return Promise.resolve(o && copyObject(o));
  }

  putObject(object: StoredObject, mode: 'create' | 'replace', audit: AuditEntry): Promise<boolean> {
    const refused = checkAudit(audit);
    if (refused) return Promise.reject(refused);
    const at = objectNotice(object.kind, object.id);
    if (this.objects.has(at) !== (mode === 'replace')) return Promise.resolve(false);
    this.objects.set(at, copyObject(object));
    this.entries.push(copyAudit(audit));
    this.notify(at);
    return Promise.resolve(true);
  }

  deleteObject(kind: ObjectKind, id: string, audit: AuditEntry): Promise<boolean> {
    const refused = checkAudit(audit);
    if (refused) return Promise.reject(refused);
    const at = objectNotice(kind, id);
    if (!this.objects.delete(at)) return Promise.resolve(false);
    this.entries.push(copyAudit(audit));
    this.notify(at);
    return Promise.resolve(true);
  }

  appendAudit(entry: AuditEntry): Promise<void> {
    const refused = checkAudit(entry);
    if (refused) return Promise.reject(refused);
    this.entries.push(copyAudit(entry));
    return Promise.resolve();
  }

  listAudit(query: { from: number; to: number; keyId?: string | undefined }): Promise<AuditEntry[]> {
    const found = this.entries.filter(
      (e) => e.at >= query.from && e.at <= query.to && (query.keyId === undefined || e.keyId === query.keyId),
    );
    // Stable: entries of one instant stay in the order they were appended.
    return Promise.resolve(found.sort((a, b) => a.at - b.at).map(copyAudit));
  }

  addUsage(rows: readonly UsageRow[], batchId: string): Promise<void> {
    try {
      for (const r of rows) checkUsageDelta(r);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const at = this.now();
    for (const [id, seen] of this.batches) if (seen < at - BATCH_MEMORY_MS) this.batches.delete(id);
    if (rows.length === 0 || this.batches.has(batchId)) return Promise.resolve();
    this.batches.set(batchId, at);
    for (const r of rows) {
      // Its daily row, and its hourly row: both from the same counts, in the same step.
      const { hour, ...daily } = copyUsageRow(r);
      add(this.rows, daily);
      if (hour !== undefined) add(this.hours, { ...daily, hour });
    }
    return Promise.resolve();
  }

  listUsage(query: UsageQuery): Promise<UsageRow[]> {
    const found = [...(query.granularity === 'hour' ? this.hours : this.rows).values()]
      .filter(
        (r) =>
          r.day >= query.from &&
          r.day <= query.to &&
          (query.keyIds === undefined || query.keyIds.has(r.keyId)) &&
          (query.accounts === undefined || query.accounts.has(r.account)) &&
          (query.chain === undefined || r.chain === query.chain) &&
          (query.route === undefined || r.route === query.route),
      )
      .map((r) => ({ ...r }));
    return Promise.resolve(found.sort(compareUsageRows));
  }

  pruneUsage(beforeDay: string): Promise<void> {
    for (const [id, r] of this.rows) if (r.day < beforeDay) this.rows.delete(id);
    return this.pruneHourlyUsage(beforeDay);
  }

  pruneHourlyUsage(beforeDay: string): Promise<void> {
    for (const [id, r] of this.hours) if (r.day < beforeDay) this.hours.delete(id);
    return Promise.resolve();
  }

  loadLedgers(): Promise<LedgerRow[]> {
    return Promise.resolve([...this.ledgerRows.values()].sort((a, b) => compare(a.account, b.account)).map((l) => ({ ...l })));
  }

  saveLedgers(rows: readonly LedgerRow[]): Promise<void> {
    for (const r of rows) {
      this.ledgerRows.set(r.account, {
        account: r.account,
        day: r.day,
        daySpent: r.daySpent,
        month: r.month,
        monthSpent: r.monthSpent,
        topup: r.topup,
      });
    }
    return Promise.resolve();
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.watchers.length = 0;
    return Promise.resolve();
  }
}
