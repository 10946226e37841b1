// What the admin API does, apart from HTTP: each operation checks its input against the current
// configuration, writes, and records the write in the audit trail. A key's write and its audit
// entry are one transaction of the store (store/types.ts, KeyStore); a top-up goes to the quota
// store, so its entry follows it (tried again, and logged whole if the audit store still refuses).
// The routes (routes/*.ts) parse HTTP into these calls; the command line calls the routes.
import type { ApiKey, KeyRing } from '../keys/ring.js';
import { accountObject, planObject, type Account, type RuntimePlan } from '../keys/objects.js';
import { newAccountId, newKeyId, newSecret, shownPrefix } from '../keys/runtime.js';
import { periodWindow } from '../quota/period.js';
import { remaining, TopUpBelowZero } from '../quota/types.js';
import { addUsageCredits } from '../quota/usage-credits.js';
import { utcDay } from '../store/day.js';
import type { PlanConfig } from '../config/schema.js';
import { normaliseOrigin, patternMatches, routePattern, withLimits } from '../keys/terms.js';
import { copyTerms, NO_TERMS } from '../store/records.js';
import type { AuditEntry, KeyLimits, KeyRecord, KeyTerms, StoredObject, UsageRow } from '../store/types.js';
import type { AdminDeps } from './context.js';
import type { EventKey } from '../webhooks/events.js';
import { AdminError } from './errors.js';
import { matchesSearch, page, type Searchable } from './listing.js';
import { keyAnswer } from './schemas.js';
import type {
  AuditInput,
  CreateAccountInput,
  CreateKeyInput,
  CreatePlanInput,
  CreditsInput,
  ListAccountsInput,
  UpdateAccountInput,
  UpdatePlanInput,
  ListKeysInput,
  TermsInput,
  UpdateKeyInput,
  UsageInput,
  VerifyCode,
} from './schemas.js';
import { parseDay, parseInstant } from './validate.js';

/** How often an audit entry that follows a top-up is tried. */
const AUDIT_ATTEMPTS = 3;

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export type KeyView = Record<string, unknown>;

/** What GET /keys filters on. */
type ListedFields = Searchable & { readonly plan?: unknown; readonly status?: unknown };

/** What the admin API shows of a key: never its secret or digest. */
export function keyView(key: ApiKey | undefined, record: KeyRecord | undefined, ring: KeyRing): KeyView {
  if (record) {
    const plan = ring.dealOf(record)?.plan;
    const terms = copyTerms(record);
    return {
      id: record.id,
      name: record.name,
      plan: record.plan,
      owner: record.owner,
      chains: record.chains,
      status: record.status,
      expiresAt: iso(record.expiresAt),
      createdAt: iso(record.createdAt),
      prefix: shownPrefix(record.prefix),
      source: 'runtime',
      limits: terms.limits,
      effective: plan === undefined ? null : { rps: plan.rps, credits: plan.credits, period: plan.period },
      routes: terms.routes,
      ips: terms.ips,
      origins: terms.origins,
      meta: terms.meta,
      account: terms.account,
    };
  }
  if (!key) throw new Error('a key view needs a key or a record');
  return {
    id: key.id,
    name: key.name,
    plan: key.planName,
    owner: null,
    chains: key.chains ? [...key.chains] : null,
    status: key.status,
    expiresAt: null,
    createdAt: null,
    prefix: null,
    source: 'config',
    ...NO_TERMS,
    effective: { rps: key.plan.rps, credits: key.plan.credits, period: key.plan.period },
  };
}

export interface UsageItem {
  day: string;
  /** Hourly rows only (`granularity=hour`): `YYYY-MM-DDTHH:00:00Z`. */
  hour?: string;
  key: string;
  name: string | null;
  /** The account the key belonged to when the row was counted; '' for none. */
  account: string;
  chain: string;
  route: string;
  requests: number;
  credits: number;
  cacheHits: number;
  refused: number;
  rateLimited: number;
  outOfCredits: number;
  forbidden: number;
  clientErrors: number;
  errors: number;
}

export class AdminService {
  constructor(private readonly deps: AdminDeps) {}

  private get ring() {
    return this.deps.states().keys;
  }

  private get config() {
    return this.deps.states().config;
  }

  private view(key: ApiKey | undefined, record: KeyRecord | undefined): KeyView {
    return keyView(key, record, this.ring);
  }

  // --- checks ---

  /** Route names must name routes of the table, patterns match at least one: a typo never silently allows or prices nothing. */
  private checkRoutes(patterns: readonly string[] | null | undefined, field: string): void {
    const names = this.deps.routeNames;
    for (const p of patterns ?? []) {
      const re = routePattern(p);
      if (!names.some((n) => patternMatches(re, n))) {
        throw new AdminError('UNKNOWN_ROUTE', `${field}: "${p}" matches no route name (route names as /api/json/config lists them)`);
      }
    }
  }

  /** The terms of a create or change, checked and normalised; absent fields stay absent. */
  private checkTerms(input: TermsInput, before: KeyTerms): Partial<KeyTerms> {
    const out: Partial<KeyTerms> = {};
    if (input.limits !== undefined) {
      if (input.limits === null) out.limits = null;
      else {
        const costs = input.limits.costs;
        for (const route of Object.keys(costs ?? {})) {
          if (!this.deps.routeNames.includes(route)) throw new AdminError('UNKNOWN_ROUTE', `limits.costs: no route named "${route}"`);
        }
        // A field absent keeps what the key had; null returns it to the plan's.
        const prev = before.limits;
        const merged: KeyLimits = {
          rps: input.limits.rps === undefined ? (prev?.rps ?? null) : input.limits.rps,
          credits: input.limits.credits === undefined ? (prev?.credits ?? null) : input.limits.credits,
          period: input.limits.period === undefined ? (prev?.period ?? null) : input.limits.period,
          costs: costs === undefined ? (prev?.costs ?? null) : costs,
        };
        out.limits = Object.values(merged).every((v) => v === null) ? null : merged;
      }
    }
    if (input.routes !== undefined) {
      this.checkRoutes(input.routes, 'routes');
      out.routes = input.routes;
    }
    if (input.ips !== undefined) out.ips = input.ips;
    if (input.origins !== undefined) out.origins = input.origins === null ? null : input.origins.map((o) => normaliseOrigin(o)!);
    if (input.meta !== undefined) out.meta = input.meta;
    if (input.account !== undefined) {
      if (input.account !== null) this.checkAccount(input.account);
      out.account = input.account;
    }
    return out;
  }

  private checkPlan(plan: string): void {
    if (this.ring.planNamed(plan) !== undefined) return;
    const plans = [...Object.keys(this.config.plans), ...this.deps.runtime.plans.keys()];
    throw new AdminError('UNKNOWN_PLAN', `unknown plan "${plan}"; plans: ${plans.join(', ')}`, { plans });
  }

  private checkAccount(id: string): Account {
    const account = this.deps.runtime.accounts.get(id);
    if (!account) throw new AdminError('NO_SUCH_ACCOUNT', `no account with id ${id}`);
    return account;
  }

  private checkChains(ids: string[] | null | undefined): void {
    const chains = this.config.chains;
    for (const id of ids ?? []) {
      if (!Object.hasOwn(chains, id))
        throw new AdminError('UNKNOWN_CHAIN', `unknown chain "${id}"; chains: ${Object.keys(chains).join(', ')}`);
    }
  }

  private checkExpiry(value: string | null | undefined): number | null | undefined {
    if (value === undefined || value === null) return value;
    const ms = parseInstant(value, 'expiresAt');
    if (ms <= this.deps.now()) throw new AdminError('EXPIRY_NOT_IN_FUTURE', `expiresAt: ${value} is not in the future`);
    return ms;
  }

  private checkName(name: string, except?: string): void {
    if (this.ring.nameTaken(name, except)) throw new AdminError('NAME_TAKEN', `the name "${name}" is used by another key`);
  }

  /** A run-time key's record, or 404 / 409 (a configured key). */
  private runtimeRecord(id: string): KeyRecord {
    const record = this.ring.record(id);
    if (record) return record;
    if (this.ring.get(id)?.source === 'config') {
      throw new AdminError('CONFIGURED_KEY', `key ${id} comes from the configuration file: change it there (it is read-only here)`);
    }
    throw new AdminError('NO_SUCH_KEY', `no key with id ${id}`);
  }

  /** The id of a run-time key that may be changed, or 404 / 409: checked before the body is. */
  checkWritable(id: string): string {
    return this.runtimeRecord(id).id;
  }

  /** The id of a key this process knows, run-time or configured, or 404. */
  checkKnown(id: string): string {
    if (!this.ring.get(id)) throw new AdminError('NO_SUCH_KEY', `no key with id ${id}`);
    return id;
  }

  // --- writes ---

  private entry(action: AuditEntry['action'], by: string, keyId: string, before: KeyView | null, after: KeyView | null): AuditEntry {
    return { at: this.deps.now(), action, actor: by, keyId, before, after };
  }

  /** A key given an expiry within 7 days is told of at once, not at the next minute's scan (webhooks/expiry.ts). */
  private expiryTold(id: string): void {
    const key = this.ring.get(id);
    if (key) this.deps.webhooks.expiry.check(key);
  }

  /** A key as webhook events show it (webhooks/events.ts). */
  private eventKey(record: KeyRecord): EventKey {
    const deal = this.ring.dealOf(record);
    return { id: record.id, name: record.name, plan: deal?.planName ?? record.plan, account: record.account };
  }

  private logged(e: AuditEntry): void {
    this.deps.log.info({ admin: e.action, actor: e.actor, keyId: e.keyId, before: e.before, after: e.after }, 'admin write');
  }

  /** The record and its audit entry, in one transaction; then this process's ring at once. */
  private async save(record: KeyRecord, create: boolean, e: AuditEntry): Promise<void> {
    const keys = this.deps.store.keys;
    const saved = create ? await keys.createKey(record, e) : await keys.updateKey(record, e);
    if (!saved) throw new AdminError('NAME_TAKEN', `the name "${record.name}" is used by another key`);
    this.deps.runtime.set(record);
    this.logged(e);
  }

  async createKey(input: CreateKeyInput, by: string): Promise<{ view: KeyView; secret: string }> {
    // A key of an account keeps a plan of its own too, the account's unless given: its plan if it leaves.
    const plan = input.plan ?? this.checkAccount(input.account!).plan;
    this.checkPlan(plan);
    this.checkChains(input.chains);
    const expires = this.checkExpiry(input.expiresAt);
    const terms = this.checkTerms(input, NO_TERMS);
    this.checkName(input.name);
    const { secret, digest, prefix } = newSecret();
    const record: KeyRecord = {
      id: newKeyId(),
      name: input.name,
      owner: input.owner ?? null,
      plan,
      chains: input.chains ?? null,
      status: 'active',
      expiresAt: expires ?? null,
      createdAt: this.deps.now(),
      prefix,
      digest,
      previous: null,
      ...NO_TERMS,
      ...terms,
    };
    const view = this.view(undefined, record);
    await this.save(record, true, this.entry('create', by, record.id, null, view));
    await this.deps.webhooks.keyChanged('key.created', this.eventKey(record), by);
    this.expiryTold(record.id);
    return { view, secret };
  }

  async updateKey(id: string, input: UpdateKeyInput, by: string): Promise<KeyView> {
    const before = this.runtimeRecord(id);
    if (input.plan !== undefined) this.checkPlan(input.plan);
    this.checkChains(input.chains);
    const expires = this.checkExpiry(input.expiresAt);
    const terms = this.checkTerms(input, before);
    if (input.name !== undefined) this.checkName(input.name, before.id);
    const after: KeyRecord = {
      ...before,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.plan !== undefined ? { plan: input.plan } : {}),
      ...(input.owner !== undefined ? { owner: input.owner } : {}),
      ...(input.chains !== undefined ? { chains: input.chains } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      ...(expires !== undefined ? { expiresAt: expires } : {}),
      ...terms,
    };
    const view = this.view(undefined, after);
    await this.save(after, false, this.entry('update', by, after.id, this.view(undefined, before), view));
    if (expires !== undefined) this.expiryTold(after.id);
    return view;
  }

  async rollKey(
    id: string,
    graceSeconds: number,
    by: string,
  ): Promise<{ view: KeyView; secret: string; previousValidUntil: string | null }> {
    const before = this.runtimeRecord(id);
    const { secret, digest, prefix } = newSecret();
    const until = this.deps.now() + graceSeconds * 1000;
    const after: KeyRecord = { ...before, digest, prefix, previous: graceSeconds > 0 ? { digest: before.digest, until } : null };
    const previousValidUntil = graceSeconds > 0 ? iso(until) : null;
    await this.save(after, false, this.entry('roll', by, after.id, { prefix: shownPrefix(before.prefix) }, { prefix, previousValidUntil }));
    return { view: this.view(undefined, after), secret, previousValidUntil };
  }

  async revokeKey(id: string, by: string): Promise<{ id: string; revoked: true }> {
    const before = this.runtimeRecord(id);
    const e = this.entry('revoke', by, before.id, this.view(undefined, before), null);
    // False: another process revoked it first, with its own entry.
    if (await this.deps.store.keys.deleteKey(before.id, e)) {
      this.logged(e);
      await this.deps.webhooks.keyChanged('key.revoked', this.eventKey(before), by);
    }
    this.deps.runtime.drop(before.id);
    return { id: before.id, revoked: true };
  }

  async addCredits(
    id: string,
    input: CreditsInput,
    by: string,
  ): Promise<{ id: string; added: number; topup: number; remaining: number; reason: string | null }> {
    const key = this.ring.get(id);
    if (!key) throw new AdminError('NO_SUCH_KEY', `no key with id ${id}`);
    const { quota } = this.deps;
    const before = await quota.balance(key.account, key.plan.period, this.deps.now());
    let change: { before: number; after: number };
    try {
      change = input.set !== undefined ? await quota.setTopUp(key.account, input.set) : await quota.adjustTopUp(key.account, input.amount!);
    } catch (err) {
      if (!(err instanceof TopUpBelowZero)) throw err;
      throw new AdminError(
        'CREDITS_BELOW_ZERO',
        `only ${err.available} bought credits are left to take away; the balance never goes below zero`,
        { available: err.available },
      );
    }
    const topup = change.after;
    const added = change.after - change.before;
    const reason = input.reason ?? null;
    const after = { ...before, topup };
    const e = this.entry(
      'credits',
      by,
      id,
      { remaining: remaining(key.plan.credits, before), topup: change.before },
      { remaining: remaining(key.plan.credits, after), topup, added, ...(input.set !== undefined ? { set: input.set } : {}), reason },
    );
    await this.appendAfterTopUp(e);
    return { id, added, topup, remaining: remaining(key.plan.credits, after), reason };
  }

  /**
   * The credits are added already: the entry is tried again, and if the audit store still
   * refuses, the whole entry goes to the error log, so that the top-up is on record somewhere.
   */
  private async appendAfterTopUp(e: AuditEntry): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.deps.store.audit.appendAudit(e);
        this.logged(e);
        return;
      } catch (err) {
        if (attempt >= AUDIT_ATTEMPTS) {
          this.deps.log.error({ err: (err as Error).message, auditEntry: e }, 'audit entry of a top-up not stored; the credits were added');
          return;
        }
      }
    }
  }

  // --- reads ---

  /**
   * A page of keys (GET /keys): those every filter takes, sorted by id and cut at the cursor
   * (listing.ts), each with its balance as GET /keys/{id} shows it. The filters look at the keys
   * this process holds (keys/ring.ts); views and balances are made for the page only, the
   * balances read at once.
   */
  async listKeys(q: ListKeysInput): Promise<{ items: KeyView[]; nextCursor: string | null }> {
    const listed = (v: ListedFields) =>
      matchesSearch(v, q) && (q.plan === undefined || v.plan === q.plan) && (q.status === undefined || v.status === q.status);
    if (q.status === 'revoked') {
      const { items, nextCursor } = page((await this.revokedKeys()).filter(listed), q);
      return { items: items.map((v) => ({ ...v, credits: null })), nextCursor };
    }
    // What keyView shows of these fields, without making every key's view.
    const found = this.ring.all().map(({ key, record }) => ({
      key,
      record,
      id: record?.id ?? key!.id,
      name: record?.name ?? key!.name,
      owner: record?.owner ?? null,
      prefix: record ? shownPrefix(record.prefix) : null,
      meta: record?.meta ?? null,
      plan: record?.plan ?? key!.planName,
      status: record?.status ?? key!.status,
    }));
    const { items, nextCursor } = page(found.filter(listed), q);
    return { items: await Promise.all(items.map(({ key, record }) => this.withCredits(key, record))), nextCursor };
  }

  /**
   * Revoked keys, each as it was when revoked: the key store forgets a revoked key
   * (KeyStore.deleteKey) but keeps its audit entry, whose `before` is the key's view. The cost:
   * every call reads the whole audit trail (every admin write there is, in one pass), which is
   * fine for an operator's question now and then, never on the request path.
   */
  private async revokedKeys(): Promise<KeyView[]> {
    const entries = await this.deps.store.audit.listAudit({ from: 0, to: Number.MAX_SAFE_INTEGER });
    const revoked = new Map<string, Record<string, unknown>>();
    // Oldest first: an id's last revocation is the one kept.
    for (const e of entries) if (e.action === 'revoke' && e.before !== null) revoked.set(e.keyId, e.before);
    const fields = Object.keys(keyAnswer.shape);
    return [...revoked]
      .filter(([id]) => !this.ring.get(id) && !this.ring.record(id))
      .map(([id, before]) => ({
        // The fields a key view has now; one a gateway before did not write yet is null.
        ...Object.fromEntries(fields.map((f) => [f, before[f] ?? null])),
        id,
        source: 'runtime',
        status: 'revoked',
      }));
  }

  async showKey(id: string): Promise<KeyView> {
    const key = this.ring.get(id);
    const record = this.ring.record(id);
    if (!key && !record) throw new AdminError('NO_SUCH_KEY', `no key with id ${id}`);
    return this.withCredits(key, record);
  }

  /** A key's view with this period's balance, null when its plan is not configured (GET /keys/{id}, and each key of GET /keys). */
  private async withCredits(key: ApiKey | undefined, record: KeyRecord | undefined): Promise<KeyView> {
    // Its account's or its own plan, the limits over it (keys/ring.ts): what the request path decides with.
    const plan = record ? this.ring.dealOf(record)?.plan : key?.plan;
    const view = this.view(key, record);
    if (!plan) return { ...view, credits: null };
    const now = this.deps.now();
    const b = await this.deps.quota.balance(key?.account ?? record!.account ?? record!.id, plan.period, now);
    const credits = {
      remaining: remaining(plan.credits, b),
      spent: b.spent,
      topup: b.topup,
      resetsAt: iso(periodWindow(plan.period, now).endMs),
    };
    return { ...view, credits };
  }

  /**
   * What the gateway would do with `secret` now (POST /keys:verify): the same key ring and checks
   * as the key step of request/pipeline.ts, in its order, and the balance, without billing,
   * counting or blocking anything.
   */
  async verifyKey(secret: string): Promise<{ valid: boolean; code: VerifyCode; key: KeyView | null }> {
    const now = this.deps.now();
    const key = this.ring.find(secret, now);
    // A run-time key whose plan (or account) the configuration lacks: 503 KEY_PLAN_MISSING at the gateway.
    if (!key) return { valid: false, code: this.ring.lacksPlan(secret) ? 'PLAN_MISSING' : 'NOT_FOUND', key: null };
    const view = await this.showKey(key.id);
    const code: VerifyCode =
      key.status === 'unverified'
        ? 'UNVERIFIED'
        : key.status === 'disabled'
          ? 'DISABLED'
          : key.expiresAt !== undefined && now >= key.expiresAt
            ? 'EXPIRED'
            : ((view.credits as { remaining: number } | null)?.remaining ?? 1) <= 0
              ? 'USAGE_EXCEEDED'
              : 'VALID';
    return { valid: code === 'VALID', code, key: view };
  }

  async listAudit(q: AuditInput): Promise<Record<string, unknown>[]> {
    const from = q.from === undefined ? 0 : parseInstant(q.from, 'from');
    // A date alone means the whole of that day.
    const to = q.to === undefined ? this.deps.now() : parseInstant(q.to, 'to') + (/^\d{4}-\d{2}-\d{2}$/.test(q.to) ? 86_399_999 : 0);
    let entries = await this.deps.store.audit.listAudit({ from, to, keyId: q.key });
    if (q.account !== undefined) {
      // The account's own entries and those of its keys now (a key that left it is no longer its).
      const ids = new Set([q.account, ...this.keysOf(q.account)]);
      entries = entries.filter((e) => ids.has(e.keyId));
    }
    return entries.map((e) => ({ ...e, at: iso(e.at) }));
  }

  /**
   * Rows of one UTC day (or hour), key, account, chain and route; what is counted in memory is
   * written first. `account` selects the rows recorded under that account (UsageRow.account),
   * whichever account their key is in now.
   */
  async usage(q: UsageInput): Promise<{ from: string; to: string; items: UsageItem[] }> {
    const today = utcDay(this.deps.now());
    const from = q.from === undefined ? today : parseDay(q.from, 'from');
    const to = q.to === undefined ? today : parseDay(q.to, 'to');
    if (from > to) throw new AdminError('INVALID_RANGE', `from (${from}) is after to (${to})`);
    const keys = this.ring;
    let keyIds: Set<string> | undefined;
    if (q.key !== undefined) keyIds = new Set([q.key]);
    const accounts = q.account === undefined ? undefined : new Set([q.account]);
    if (q.owner !== undefined) {
      const owned = keys.all().filter(({ key, record }) => (record?.owner ?? key?.owner) === q.owner);
      const ids = owned.map(({ key, record }) => record?.id ?? key!.id);
      keyIds = new Set(keyIds ? ids.filter((id) => keyIds!.has(id)) : ids);
    }
    await this.deps.flushUsage();
    const granularity = q.granularity ?? 'day';
    const query = { from, to, granularity, keyIds, accounts, chain: q.chain, route: q.route };
    const stored = await this.deps.store.usage.listUsage(query);
    // With Redis, credits are counted as they are billed, apart from the rows (quota/usage-credits.ts).
    const { credits } = this.deps;
    let rows = stored;
    if (credits !== undefined) {
      // The counters (ledgers) a key bills (keys/ring.ts): a run-time key's own are its id, deleted
      // or not, and a key of an account (keys/objects.ts) bills the account's; a configured key's
      // are its digest. So the rows recorded under an account were billed to the account's: that
      // one is read for `account`. For keys, their own and their account's now, and the accounts
      // their stored rows were recorded under (a key that has left an account). Each read once.
      const ledgersOf = (id: string): (string | undefined)[] => {
        const record = keys.record(id);
        if (record) return record.account === null ? [record.id] : [record.id, record.account];
        return [id.startsWith('key_') ? id : keys.get(id)?.account];
      };
      const ledgers =
        q.account !== undefined
          ? [q.account]
          : keyIds && [...[...keyIds].flatMap(ledgersOf), ...stored.flatMap((r) => (r.account === '' ? [] : [r.account]))];
      const known = ledgers?.every((a): a is string => a !== undefined) ? [...new Set(ledgers)] : undefined;
      rows = addUsageCredits(stored, await credits.usageCredits(query, known));
    }
    const nameOf = (row: UsageRow) => keys.get(row.keyId)?.name ?? keys.record(row.keyId)?.name ?? null;
    const items = rows.map((r) => ({
      day: r.day,
      ...(granularity === 'hour' ? { hour: r.hour ?? `${r.day}T00:00:00Z` } : {}),
      key: r.keyId,
      name: nameOf(r),
      account: r.account,
      chain: r.chain,
      route: r.route,
      requests: r.requests,
      credits: r.credits,
      cacheHits: r.cacheHits,
      refused: r.refused,
      // A row only the Redis quota store has (credits, quota/usage-credits.ts) counts no cause.
      rateLimited: r.rateLimited ?? 0,
      outOfCredits: r.outOfCredits ?? 0,
      forbidden: r.forbidden ?? 0,
      clientErrors: r.clientErrors ?? 0,
      errors: r.errors,
    }));
    return { from, to, items };
  }

  /** The ids of an account's keys now. */
  private keysOf(account: string): string[] {
    return [...this.deps.runtime.records.values()].filter((r) => r.account === account).map((r) => r.id);
  }

  // --- plans (issue 25, item 1) ---

  plans(): Record<string, unknown>[] {
    const configured = Object.entries(this.config.plans).map(([name, p]) => planView(name, p, 'config'));
    const made = [...this.deps.runtime.plans.values()].filter((p) => !Object.hasOwn(this.config.plans, p.name));
    return [...configured, ...made.map((p) => planView(p.name, p, 'runtime'))];
  }

  showPlan(name: string): Record<string, unknown> {
    if (Object.hasOwn(this.config.plans, name)) return planView(name, this.config.plans[name]!, 'config');
    const plan = this.deps.runtime.plans.get(name);
    if (!plan) throw new AdminError('NO_SUCH_PLAN', `no plan named ${name}`);
    return planView(name, plan, 'runtime');
  }

  /** A run-time plan, or 404 / 409 (a configured one). */
  private runtimePlan(name: string): RuntimePlan {
    if (Object.hasOwn(this.config.plans, name)) {
      throw new AdminError('CONFIGURED_PLAN', `plan ${name} comes from the configuration file: change it there (it is read-only here)`);
    }
    const plan = this.deps.runtime.plans.get(name);
    if (!plan) throw new AdminError('NO_SUCH_PLAN', `no plan named ${name}`);
    return plan;
  }

  checkPlanWritable(name: string): string {
    return this.runtimePlan(name).name;
  }

  private async saveObject(object: StoredObject, mode: 'create' | 'replace', e: AuditEntry, taken: () => Error): Promise<void> {
    if (!(await this.deps.store.keys.putObject(object, mode, e))) throw taken();
    this.deps.runtime.setObject(object.kind, object.id, object);
    this.logged(e);
  }

  async createPlan(input: CreatePlanInput, by: string): Promise<Record<string, unknown>> {
    if (Object.hasOwn(this.config.plans, input.name)) {
      throw new AdminError('PLAN_EXISTS', `a plan named ${input.name} is in the configuration file`);
    }
    const now = this.deps.now();
    const plan: RuntimePlan = {
      name: input.name,
      rps: input.rps,
      credits: input.credits,
      period: input.period,
      createdAt: now,
      updatedAt: now,
    };
    const view = planView(plan.name, plan, 'runtime');
    await this.saveObject(
      planObject(plan),
      'create',
      this.entry('create', by, `plan:${plan.name}`, null, view),
      () => new AdminError('PLAN_EXISTS', `a plan named ${input.name} exists`),
    );
    return view;
  }

  /** Every key and account on it follows at once; what they spent is kept (their counters are theirs, not the plan's). */
  async updatePlan(name: string, input: UpdatePlanInput, by: string): Promise<Record<string, unknown>> {
    const before = this.runtimePlan(name);
    const after: RuntimePlan = {
      ...before,
      rps: input.rps ?? before.rps,
      credits: input.credits ?? before.credits,
      period: input.period ?? before.period,
      updatedAt: this.deps.now(),
    };
    const view = planView(name, after, 'runtime');
    await this.saveObject(
      planObject(after),
      'replace',
      this.entry('update', by, `plan:${name}`, planView(name, before, 'runtime'), view),
      () => new AdminError('NO_SUCH_PLAN', `no plan named ${name}`),
    );
    return view;
  }

  /** Refused while a key or an account is on it: their requests would be refused from then on. */
  async deletePlan(name: string, by: string): Promise<{ name: string; deleted: true }> {
    const before = this.runtimePlan(name);
    const keys = [...this.deps.runtime.records.values()].filter((r) => r.plan === name).map((r) => r.id);
    const accounts = [...this.deps.runtime.accounts.values()].filter((a) => a.plan === name).map((a) => a.id);
    if (keys.length + accounts.length > 0) {
      throw new AdminError(
        'PLAN_IN_USE',
        `plan ${name} is the plan of ${[...keys, ...accounts].slice(0, 10).join(', ')}: move them first`,
        {
          keys,
          accounts,
        },
      );
    }
    const e = this.entry('delete', by, `plan:${name}`, planView(name, before, 'runtime'), null);
    if (await this.deps.store.keys.deleteObject('plan', name, e)) this.logged(e);
    this.deps.runtime.setObject('plan', name, undefined);
    return { name, deleted: true };
  }

  // --- accounts (issue 25, item 2) ---

  private accountView(a: Account): Record<string, unknown> {
    const planned = this.ring.planNamed(a.plan);
    const plan = planned && withLimits(planned, a.limits);
    return {
      id: a.id,
      name: a.name,
      plan: a.plan,
      limits: a.limits,
      effective: plan ? { rps: plan.rps, credits: plan.credits, period: plan.period } : null,
      meta: a.meta,
      createdAt: iso(a.createdAt),
      keys: [...this.deps.runtime.records.values()]
        .filter((r) => r.account === a.id)
        .map((r) => r.id)
        .sort(),
    };
  }

  private accountNamed(name: string, except?: string): boolean {
    for (const a of this.deps.runtime.accounts.values()) if (a.name === name && a.id !== except) return true;
    return false;
  }

  /** A page of accounts in id order, the search's only (listing.ts). */
  listAccounts(q: ListAccountsInput): { items: Record<string, unknown>[]; nextCursor: string | null } {
    const found = [...this.deps.runtime.accounts.values()].filter(
      (a) => (q.plan === undefined || a.plan === q.plan) && matchesSearch(a, q),
    );
    const { items, nextCursor } = page(found, q);
    return { items: items.map((a) => this.accountView(a)), nextCursor };
  }

  async showAccount(id: string): Promise<Record<string, unknown>> {
    const a = this.checkAccount(id);
    const view = this.accountView(a);
    const planned = this.ring.planNamed(a.plan);
    if (!planned) return { ...view, credits: null };
    const plan = withLimits(planned, a.limits);
    const now = this.deps.now();
    const b = await this.deps.quota.balance(a.id, plan.period, now);
    return {
      ...view,
      credits: {
        remaining: remaining(plan.credits, b),
        spent: b.spent,
        topup: b.topup,
        resetsAt: iso(periodWindow(plan.period, now).endMs),
      },
    };
  }

  async createAccount(input: CreateAccountInput, by: string): Promise<Record<string, unknown>> {
    this.checkPlan(input.plan);
    if (this.accountNamed(input.name)) throw new AdminError('NAME_TAKEN', `the name "${input.name}" is used by another account`);
    const terms = this.checkTerms({ limits: input.limits, meta: input.meta }, NO_TERMS);
    const account: Account = {
      id: newAccountId(),
      name: input.name,
      plan: input.plan,
      limits: terms.limits ?? null,
      meta: terms.meta ?? null,
      createdAt: this.deps.now(),
    };
    const view = this.accountView(account);
    await this.saveObject(
      accountObject(account),
      'create',
      this.entry('create', by, account.id, null, view),
      () => new Error(`account id ${account.id} exists`),
    );
    return view;
  }

  async updateAccount(id: string, input: UpdateAccountInput, by: string): Promise<Record<string, unknown>> {
    const before = this.checkAccount(id);
    if (input.plan !== undefined) this.checkPlan(input.plan);
    if (input.name !== undefined && this.accountNamed(input.name, id)) {
      throw new AdminError('NAME_TAKEN', `the name "${input.name}" is used by another account`);
    }
    const terms = this.checkTerms({ limits: input.limits, meta: input.meta }, { ...NO_TERMS, limits: before.limits, meta: before.meta });
    const after: Account = {
      ...before,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.plan !== undefined ? { plan: input.plan } : {}),
      ...(terms.limits !== undefined ? { limits: terms.limits } : {}),
      ...(terms.meta !== undefined ? { meta: terms.meta } : {}),
    };
    const view = this.accountView(after);
    await this.saveObject(
      accountObject(after),
      'replace',
      this.entry('update', by, id, this.accountView(before), view),
      () => new AdminError('NO_SUCH_ACCOUNT', `no account with id ${id}`),
    );
    return view;
  }

  /** Refused while keys belong to it: they would be refused from then on. */
  async deleteAccount(id: string, by: string): Promise<{ id: string; deleted: true }> {
    const before = this.checkAccount(id);
    const view = this.accountView(before);
    const keys = view.keys as string[];
    if (keys.length > 0) {
      throw new AdminError('ACCOUNT_IN_USE', `account ${id} has keys (${keys.slice(0, 10).join(', ')}): move or revoke them first`, {
        keys,
      });
    }
    const e = this.entry('delete', by, id, view, null);
    if (await this.deps.store.keys.deleteObject('account', id, e)) this.logged(e);
    this.deps.runtime.setObject('account', id, undefined);
    return { id, deleted: true };
  }
}

function planView(name: string, p: PlanConfig, source: 'config' | 'runtime'): Record<string, unknown> {
  return { name, rps: p.rps, credits: p.credits, period: p.period, source };
}
