// Every key the gateway accepts, in this process's memory: the configuration's (YAML) keys and
// the keys created at run time (keys/runtime.ts keeps this copy in step with the store). A key
// is found by the sha256 digest of what the client sent, so no store round trip is ever made on
// the request path, for a known key or for a flood of unknown ones.
//
// Keys that were found are remembered next to their digest, in clear, in this process's memory
// (see find): sha256 costs about a microsecond, a map lookup tens of nanoseconds. Only keys that
// matched get in, at most as many as there are keys, and the memo is emptied whenever a run-time
// key changes; a key is never written to a log, a store or a file.
import { createHash } from 'node:crypto';
import type { BlockList } from 'node:net';
import { configuredDigest, hashKey } from '../auth/digest.js';
import type { Config, PlanConfig } from '../config/schema.js';
import type { KeyLimits, KeyRecord } from '../store/types.js';
import type { Account } from './objects.js';
import { networkList, routeMatcher, withLimits } from './terms.js';

export interface ApiKey {
  /** A run-time key's id, or `cfg_` and a hash of a configured key's name. */
  readonly id: string;
  /** Label for logs and metrics. */
  readonly name: string;
  /** The identity quota counters are kept under: a configured key's digest, a run-time key's id, its account's id. */
  readonly account: string;
  /**
   * The account (`acc_...`) the key belongs to, as its usage rows record it (store/types.ts
   * UsageRow.account); '' for none. Not the quota identity (`account`), which is also a key's own.
   */
  readonly usageAccount: string;
  readonly planName: string;
  readonly plan: PlanConfig;
  /** The plan's rps as the x-ratelimit-limit header value. */
  readonly rpsHeader: string;
  readonly status: 'active' | 'unverified' | 'disabled';
  /** undefined = every chain. */
  readonly chains: ReadonlySet<string> | undefined;
  /** Unix ms from which the key is refused (403); undefined: never. */
  readonly expiresAt: number | undefined;
  readonly owner: string | undefined;
  readonly source: 'config' | 'runtime';
  /** Credits per route name of the key's own deal, over the configuration's; undefined: none (terms.ts). */
  readonly costs: Readonly<Record<string, number>> | undefined;
  /** Whether the key may call a route; undefined: every route (terms.ts). */
  readonly routes: ((route: string) => boolean) | undefined;
  /** The client networks the key may be used from; undefined: any. */
  readonly ips: BlockList | undefined;
  /** The browser origins the key may be used from; undefined: any. */
  readonly origins: ReadonlySet<string> | undefined;
}

/** The id a configured key is known by in the admin API and usage rows: stable across reloads. */
export function configKeyId(name: string): string {
  return `cfg_${createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 16)}`;
}

/** Plans and accounts made at run time (keys/objects.ts), as the ring reads them. */
export interface RingObjects {
  readonly plans: ReadonlyMap<string, PlanConfig>;
  readonly accounts: ReadonlyMap<string, Account>;
}

const NO_OBJECTS: RingObjects = { plans: new Map(), accounts: new Map() };

export class KeyRing {
  private readonly plans: Config['plans'];
  private readonly objects: RingObjects;
  /** Current digests of every usable key. */
  private readonly byDigest = new Map<string, ApiKey>();
  /** Secrets a roll replaced, accepted until their grace ends. */
  private readonly previous = new Map<string, { key: ApiKey; until: number }>();
  private readonly byId = new Map<string, ApiKey>();
  /** Run-time records, including those whose plan this configuration lacks (unusable until it has it). */
  private readonly records = new Map<string, KeyRecord>();
  private readonly byClear = new Map<string, ApiKey>();
  /**
   * Digests of run-time keys whose plan or account this ring does not know: refused with 503
   * KEY_PLAN_MISSING, never as an unknown key (which counts toward security.badKeys' block).
   */
  private readonly planless = new Set<string>();

  constructor(config: Pick<Config, 'keys' | 'plans'>, runtime: Iterable<KeyRecord> = [], objects: RingObjects = NO_OBJECTS) {
    this.plans = config.plans;
    this.objects = objects;
    for (const k of config.keys) {
      const plan = config.plans[k.plan];
      if (!plan) throw new Error(`key ${k.name}: unknown plan ${k.plan}`);
      const digest = configuredDigest(k);
      const key: ApiKey = {
        id: configKeyId(k.name),
        name: k.name,
        account: digest,
        usageAccount: '',
        planName: k.plan,
        plan,
        rpsHeader: String(plan.rps),
        status: k.status,
        chains: k.chains ? new Set(k.chains) : undefined,
        expiresAt: undefined,
        owner: undefined,
        source: 'config',
        costs: undefined,
        routes: undefined,
        ips: undefined,
        origins: undefined,
      };
      this.byDigest.set(digest, key);
      this.byId.set(key.id, key);
    }
    for (const record of runtime) this.put(record);
  }

  /** Adds or replaces a run-time key. */
  put(record: KeyRecord): void {
    this.remove(record.id);
    this.records.set(record.id, record);
    const deal = this.dealOf(record);
    // A plan or account this process does not know: the key is refused until one brings it back.
    if (!deal) {
      this.planless.add(record.digest);
      return;
    }
    const { plan, planName, account, limits } = deal;
    const key: ApiKey = {
      id: record.id,
      name: record.name,
      account: account ? account.id : record.id,
      usageAccount: account ? account.id : '',
      planName,
      plan,
      rpsHeader: String(plan.rps),
      status: record.status,
      chains: record.chains ? new Set(record.chains) : undefined,
      expiresAt: record.expiresAt ?? undefined,
      owner: record.owner ?? undefined,
      source: 'runtime',
      costs: limits?.costs ?? undefined,
      routes: record.routes === null ? undefined : routeMatcher(record.routes),
      ips: record.ips === null ? undefined : networkList(record.ips),
      origins: record.origins === null ? undefined : new Set(record.origins),
    };
    this.byDigest.set(record.digest, key);
    if (record.previous) this.previous.set(record.previous.digest, { key, until: record.previous.until });
    this.byId.set(key.id, key);
  }

  /**
   * What a run-time key decides with. A key of an account takes the account's plan and limits,
   * and shares its counters (its credits and its rate): the account's id is the quota identity of
   * all its keys. Undefined when its account or plan is not known (the key is then refused).
   */
  dealOf(record: KeyRecord): { plan: PlanConfig; planName: string; account: Account | undefined; limits: KeyLimits | null } | undefined {
    const account = record.account === null ? undefined : this.objects.accounts.get(record.account);
    if (record.account !== null && !account) return undefined;
    const planName = account ? account.plan : record.plan;
    const limits = account ? account.limits : record.limits;
    const planned = this.planNamed(planName);
    return planned && { plan: withLimits(planned, limits), planName, account, limits };
  }

  /** A plan of the configuration, or one made at run time (a configured name always wins). */
  planNamed(name: string): PlanConfig | undefined {
    return Object.hasOwn(this.plans, name) ? this.plans[name] : this.objects.plans.get(name);
  }

  account(id: string): Account | undefined {
    return this.objects.accounts.get(id);
  }

  /** Forgets a run-time key (configured keys change by reload only). */
  remove(id: string): void {
    const old = this.records.get(id);
    if (!old) return;
    this.records.delete(id);
    this.byDigest.delete(old.digest);
    this.planless.delete(old.digest);
    if (old.previous) this.previous.delete(old.previous.digest);
    this.byId.delete(id);
    this.byClear.clear();
  }

  /** The key the client's secret names, or undefined: unknown, revoked, or rolled away and past its grace. */
  find(secret: string, nowMs: number): ApiKey | undefined {
    const known = this.byClear.get(secret);
    if (known) return known;
    const digest = hashKey(secret);
    const found = this.byDigest.get(digest);
    if (found) {
      if (this.byClear.size < this.byDigest.size * 2) this.byClear.set(secret, found);
      return found;
    }
    // A rolled-away secret is never memoised: its grace ends on the clock.
    const rolled = this.previous.get(digest);
    return rolled && nowMs < rolled.until ? rolled.key : undefined;
  }

  /**
   * Whether a secret find() did not accept is a run-time key whose plan (or account) this
   * gateway lacks: the operator's mistake, not the client's (a reload or restart that dropped the
   * plan), answered 503 and never counted as a wrong key.
   */
  lacksPlan(secret: string): boolean {
    return this.planless.size > 0 && this.planless.has(hashKey(secret));
  }

  get(id: string): ApiKey | undefined {
    return this.byId.get(id);
  }

  record(id: string): KeyRecord | undefined {
    return this.records.get(id);
  }

  /** Every key: configured ones first, then run-time ones (including those without a usable plan). */
  all(): { key: ApiKey | undefined; record: KeyRecord | undefined }[] {
    const out: { key: ApiKey | undefined; record: KeyRecord | undefined }[] = [];
    for (const key of this.byId.values()) if (key.source === 'config') out.push({ key, record: undefined });
    for (const record of this.records.values()) out.push({ key: this.byId.get(record.id), record });
    return out;
  }

  /** Whether a name is taken by a configured key, or by a run-time key other than `exceptId`. */
  nameTaken(name: string, exceptId?: string): boolean {
    for (const key of this.byId.values()) if (key.source === 'config' && key.name === name) return true;
    for (const r of this.records.values()) if (r.name === name && r.id !== exceptId) return true;
    return false;
  }

  get size(): number {
    return this.byDigest.size;
  }
}
