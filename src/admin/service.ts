// What the admin API does, apart from HTTP: each operation checks its input against the current
// configuration, writes, and records the write in the audit trail. A key's write and its audit
// entry are one transaction of the store (store/types.ts, KeyStore); a top-up goes to the quota
// store, so its entry follows it (tried again, and logged whole if the audit store still refuses).
// The routes (routes/*.ts) parse HTTP into these calls; the command line calls the routes.
import type { ApiKey } from '../keys/ring.js';
import { newKeyId, newSecret, shownPrefix } from '../keys/runtime.js';
import { periodWindow } from '../quota/period.js';
import { remaining, TopUpBelowZero } from '../quota/types.js';
import { addUsageCredits } from '../quota/usage-credits.js';
import { utcDay } from '../store/day.js';
import type { Config } from '../config/schema.js';
import { normaliseOrigin, patternMatches, routePattern, withLimits } from '../keys/terms.js';
import { copyTerms, NO_TERMS } from '../store/records.js';
import type { AuditEntry, KeyLimits, KeyRecord, KeyTerms, UsageRow } from '../store/types.js';
import type { AdminDeps } from './context.js';
import { AdminError } from './errors.js';
import type {
  AuditInput,
  CreateKeyInput,
  CreditsInput,
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

/** What the admin API shows of a key: never its secret or digest. */
export function keyView(key: ApiKey | undefined, record: KeyRecord | undefined, plans: Config['plans']): KeyView {
  if (record) {
    const plan = plans[record.plan];
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
      effective: plan === undefined ? null : { ...withLimits(plan, record.limits) },
      routes: terms.routes,
      ips: terms.ips,
      origins: terms.origins,
      meta: terms.meta,
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
  key: string;
  name: string | null;
  chain: string;
  route: string;
  requests: number;
  credits: number;
  cacheHits: number;
  refused: number;
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
    return keyView(key, record, this.config.plans);
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
    return out;
  }

  private checkPlan(plan: string): void {
    const plans = Object.keys(this.config.plans);
    if (!plans.includes(plan)) throw new AdminError('UNKNOWN_PLAN', `unknown plan "${plan}"; plans: ${plans.join(', ')}`, { plans });
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
    this.checkPlan(input.plan);
    this.checkChains(input.chains);
    const expires = this.checkExpiry(input.expiresAt);
    const terms = this.checkTerms(input, NO_TERMS);
    this.checkName(input.name);
    const { secret, digest, prefix } = newSecret();
    const record: KeyRecord = {
      id: newKeyId(),
      name: input.name,
      owner: input.owner ?? null,
      plan: input.plan,
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
    if (await this.deps.store.keys.deleteKey(before.id, e)) this.logged(e);
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

  listKeys(q: ListKeysInput): KeyView[] {
    return this.ring
      .all()
      .map(({ key, record }) => this.view(key, record))
      .filter(
        (v) =>
          (q.owner === undefined || v.owner === q.owner) &&
          (q.plan === undefined || v.plan === q.plan) &&
          (q.status === undefined || v.status === q.status),
      );
  }

  async showKey(id: string): Promise<KeyView> {
    const key = this.ring.get(id);
    const record = this.ring.record(id);
    if (!key && !record) throw new AdminError('NO_SUCH_KEY', `no key with id ${id}`);
    // The key's own limits over its plan's (keys/ring.ts): what the request path decides with.
    const planned = this.config.plans[record?.plan ?? key!.planName];
    const plan = planned && withLimits(planned, record?.limits ?? null);
    const view = this.view(key, record);
    if (!plan) return { ...view, credits: null };
    const now = this.deps.now();
    const b = await this.deps.quota.balance(key?.account ?? id, plan.period, now);
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
    if (!key) return { valid: false, code: 'NOT_FOUND', key: null };
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
    const entries = await this.deps.store.audit.listAudit({ from, to, keyId: q.key });
    return entries.map((e) => ({ ...e, at: iso(e.at) }));
  }

  /** Rows of one UTC day, key, chain and route; what is counted in memory is written first. */
  async usage(q: UsageInput): Promise<{ from: string; to: string; items: UsageItem[] }> {
    const today = utcDay(this.deps.now());
    const from = q.from === undefined ? today : parseDay(q.from, 'from');
    const to = q.to === undefined ? today : parseDay(q.to, 'to');
    if (from > to) throw new AdminError('INVALID_RANGE', `from (${from}) is after to (${to})`);
    const keys = this.ring;
    let keyIds: Set<string> | undefined;
    if (q.key !== undefined) keyIds = new Set([q.key]);
    if (q.owner !== undefined) {
      const owned = keys.all().filter(({ key, record }) => (record?.owner ?? key?.owner) === q.owner);
      const ids = owned.map(({ key, record }) => record?.id ?? key!.id);
      keyIds = new Set(keyIds ? ids.filter((id) => keyIds!.has(id)) : ids);
    }
    await this.deps.flushUsage();
    const query = { from, to, keyIds, chain: q.chain, route: q.route };
    const stored = await this.deps.store.usage.listUsage(query);
    // With Redis, credits are counted as they are billed, apart from the rows (quota/usage-credits.ts).
    const { quota } = this.deps;
    let rows = stored;
    if (quota.usageCredits !== undefined) {
      // A run-time key's account is its id (keys/ring.ts), deleted or not; a configured key's, its digest.
      const accounts = keyIds && [...keyIds].map((id) => keys.get(id)?.account ?? (id.startsWith('key_') ? id : undefined));
      const known = accounts?.every((a): a is string => a !== undefined) ? accounts : undefined;
      rows = addUsageCredits(stored, await quota.usageCredits(query, known));
    }
    const nameOf = (row: UsageRow) => keys.get(row.keyId)?.name ?? keys.record(row.keyId)?.name ?? null;
    const items = rows.map((r) => ({
      day: r.day,
      key: r.keyId,
      name: nameOf(r),
      chain: r.chain,
      route: r.route,
      requests: r.requests,
      credits: r.credits,
      cacheHits: r.cacheHits,
      refused: r.refused,
      errors: r.errors,
    }));
    return { from, to, items };
  }

  plans(): Record<string, unknown>[] {
    return Object.entries(this.config.plans).map(([name, p]) => ({ name, rps: p.rps, credits: p.credits, period: p.period }));
  }
}
