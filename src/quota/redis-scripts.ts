// The Lua scripts of the Redis quota store, each beside a typed encoder of its arguments and a
// typed decoder of its reply. A script's KEYS and ARGV are named once, in the order they are
// sent (a record literal's keys keep their order, names not being integers): the encoder fills
// that order from a record, and the Lua prologue binds each position to a local of the same
// name, so a script's body reads names, never positions, and an argument is added in one place.
// Its reply is named the same way, beside the Lua that computes each value.
//
// Each script's body is a file of its own, src/quota/lua/<name>.lua, read once at start (script
// below): what Redis runs is lua/lib.lua (the functions the scripts share: spend, addUsage,
// settle), then the prologue generated here, then the body, whose lines `--#reply <layout>` are
// replaced by the Lua that appends that reply layout's values (appendLua). The files parse as
// Lua as they are (a `--#` line is a comment); test/unit/lua-scripts.test.ts parses each script
// as sent.
//
// Each script is registered once (EVALSHA, ioredis's defineCommand) and runs atomically. Time
// comes from the decision, never from the Redis server's clock (redis.ts's head says why).
import { readFileSync } from 'node:fs';
import type { RedisClient } from '../redis/client.js';
import { LEASE_MIN_REQUESTS, LEASE_SHARE, type Grant } from './lease.js';
import type { QuotaOutcome } from './types.js';

/**
 * How the Lua prologue binds one of a script's positions to a local of the parameter's name:
 * 'tonumber' reads a number; 'as-is' keeps the string Redis received (a key, an id, or a number
 * handed on to a Redis command as it was sent).
 */
type Binding = 'tonumber' | 'as-is';
/**
 * A script's KEYS or ARGV, named in the order they are sent, with how the prologue binds each.
 * Each name becomes a Lua local of the script, so it must not be one the script's body declares.
 */
type Positions<T> = { readonly [P in keyof T]-?: Binding };
/** A script's reply (or a row of it), named in order, with the Lua expression that gives each value. */
type Returns<T> = { readonly [P in keyof T]-?: string };
/** What an encoder hands to ioredis for a script: its keys, then its arguments. */
type KeysAndArgs = (string | number)[];

/** Names in the order they are sent or returned. */
function order<T>(positions: Positions<T> | Returns<T>): (keyof T & string)[] {
  return Object.keys(positions) as (keyof T & string)[];
}

/** Each name's index in the order: for a decoder, so that it reads names, not numbers. */
function indexes<T>(returns: Returns<T>): { readonly [P in keyof T]: number } {
  return Object.fromEntries(order(returns).map((name, i) => [name, i])) as { [P in keyof T]: number };
}

/**
 * `local <name> = KEYS[i]` and `local <name> = tonumber(ARGV[i])` (or `ARGV[i]`), one a line,
 * then `local <NAME> = <value>` for each constant the script reads.
 */
function prologue<K, A>(keys: Positions<K>, argv: Positions<A>, constants: Readonly<Record<string, number>> = {}): string {
  const lines = order(keys).map((name, i) => `local ${name} = KEYS[${i + 1}]`);
  order(argv).forEach((name, i) =>
    lines.push(argv[name] === 'tonumber' ? `local ${name} = tonumber(ARGV[${i + 1}])` : `local ${name} = ARGV[${i + 1}]`),
  );
  for (const [name, value] of Object.entries(constants)) lines.push(`local ${name} = ${value}`);
  return lines.join('\n');
}

/** Lua that appends each value of `returns`, in order, to the reply table `out`. */
function appendLua(returns: Readonly<Record<string, string>>, indent: string): string {
  return Object.keys(returns)
    .map((name) => `${indent}out[#out + 1] = ${returns[name]}`)
    .join('\n');
}

/** The folder of the scripts' files. */
const LUA_DIR = new URL('./lua/', import.meta.url);
/** The functions every script is sent with, first. */
const LIB_LUA = readFileSync(new URL('lib.lua', LUA_DIR), 'utf8');
/** A line of a script's file that stands for the Lua appending a reply layout's values: `--#reply <layout>`. */
const REPLY_LINE = /^([ \t]*)--#reply (\w+)$/gm;

/**
 * The text of the script `lua/<name>.lua` as Redis runs it: lib.lua, the prologue binding its
 * keys, arguments and `constants`, then the file, each `--#reply <layout>` line replaced by
 * appendLua of `layouts[layout]` at the line's indent. A layout named and not given, or given
 * and not used, is an error at start.
 */
function script<K, A>(
  name: string,
  keys: Positions<K>,
  argv: Positions<A>,
  options: { layouts?: Readonly<Record<string, Readonly<Record<string, string>>>>; constants?: Readonly<Record<string, number>> } = {},
): string {
  const layouts = options.layouts ?? {};
  const unused = new Set(Object.keys(layouts));
  const body = readFileSync(new URL(`${name}.lua`, LUA_DIR), 'utf8').replace(REPLY_LINE, (_line, indent: string, layout: string) => {
    const returns = layouts[layout];
    if (returns === undefined) throw new Error(`lua/${name}.lua: no reply layout ${layout}`);
    unused.delete(layout);
    return appendLua(returns, indent);
  });
  if (unused.size > 0) throw new Error(`lua/${name}.lua: reply layouts never used: ${[...unused].join(', ')}`);
  return `${LIB_LUA}\n${prologue(keys, argv, options.constants)}\n${body}`;
}

/** Keys, then arguments, each in the order `keys` and `argv` name them. */
function encode<K extends { [P in keyof K]: string }, A extends { [P in keyof A]: string | number }>(
  keyOrder: readonly (keyof K)[],
  keys: K,
  argOrder: readonly (keyof A)[],
  args: A,
): KeysAndArgs {
  const out: KeysAndArgs = [];
  for (const name of keyOrder) out.push(keys[name]);
  for (const name of argOrder) out.push(args[name]);
  return out;
}

/** Usage rows and their credits as a script reads them (lib.lua, addUsage): `<credits> <field>`, one a line. */
export function encodeUsage(rows: readonly (readonly [field: string, credits: number])[]): string {
  return rows.map(([field, credits]) => `${credits} ${field}`).join('\n');
}

/** The decision script's keys: all of one account, so they share its hash tag. */
export interface DecideKeys {
  /** The rate window (hash: s = start ms, c = count). */
  windowKey: string;
  /** Credits spent in the period. */
  creditsKey: string;
  /** Credits spent in the period's twin (period.ts, twinWindow): every debit of the allowance counts in both. */
  twinCreditsKey: string;
  /** Bought credits left. */
  topupKey: string;
  /** The period's reservations (hash: lease id -> "allowance:bought:deadline ms"). */
  reservationsKey: string;
  /** The same three for the settled lease's period. */
  backCreditsKey: string;
  backTwinCreditsKey: string;
  backReservationsKey: string;
  /** This call's record: what it billed, kept so that a call whose reply was lost can be voided (VOID_LUA). */
  callKey: string;
  /** The usage credits of the call's day, and of the settled lease's day (redis-keys.ts, usageCredits). */
  usageKey: string;
  backUsageKey: string;
  /** The same days' hourly usage credits (redis-keys.ts, usageHourCredits). */
  usageHourKey: string;
  backUsageHourKey: string;
}

export interface DecideArgs {
  /** The decision's clock (ms). */
  nowMs: number;
  /** The plan's requests per window. */
  rps: number;
  /** The window's length (window.ts). */
  windowMs: number;
  /** How long the window's key outlives its last request (redis-keys.ts). */
  rateKeyTtlMs: number;
  /** The plan's credits per period. */
  planCredits: number;
  /** The ttl the credit key and the reservations get when they have none (redis-keys.ts). */
  creditKeyTtlMs: number;
  /** The same for the twin's counter, and for the settled lease's twin. */
  twinKeyTtlMs: number;
  backTwinKeyTtlMs: number;
  /** Lease slots wanted (0: no lease). */
  wantSlots: number;
  /** The lease given back to be settled: its window's start, its unused slots, its id ('' for none), and the allowance and bought credits it spent. */
  backWindowStartMs: number;
  backSlots: number;
  backId: string;
  backAllowance: number;
  backTopup: number;
  /** The new lease's id, and the deadline of its reservation. */
  leaseId: string;
  leaseDeadlineMs: number;
  /** How long the call's record is kept (redis-keys.ts). */
  callRecordMs: number;
  /** The ttl the usage credits get when they have none (the day's end plus the usage retention), for the call's day and the settled lease's. */
  usageTtlMs: number;
  backUsageTtlMs: number;
  /** The call's UTC hour and the settled lease's (`00`-`23`, redis-keys.ts usageHour), and the ttl their days' hourly usage credits get when they have none. */
  usageHour: string;
  backUsageHour: string;
  usageHourTtlMs: number;
  backUsageHourTtlMs: number;
  /** What the settled lease spent, by usage row (encodeUsage). */
  backUsage: string;
  /**
   * Requests decided again after a recall (redis.ts, `recallAndRedecide`): the window's slots they
   * took in the call that refused them are given back first, if it is still that window.
   */
  redoWindowStartMs: number;
  redoSlots: number;
  /** One cost per request, in arrival order: ARGV after the named arguments, each followed by its usage row's field. */
  costs: readonly number[];
  /** The usage row of each request (redis-keys.ts, usageCreditField; '' for none), in the same order. */
  fields: readonly string[];
}

const DECIDE_KEYS: Positions<DecideKeys> = {
  windowKey: 'as-is',
  creditsKey: 'as-is',
  twinCreditsKey: 'as-is',
  topupKey: 'as-is',
  reservationsKey: 'as-is',
  backCreditsKey: 'as-is',
  backTwinCreditsKey: 'as-is',
  backReservationsKey: 'as-is',
  callKey: 'as-is',
  usageKey: 'as-is',
  backUsageKey: 'as-is',
  usageHourKey: 'as-is',
  backUsageHourKey: 'as-is',
};

const DECIDE_ARGV: Positions<Omit<DecideArgs, 'costs' | 'fields'>> = {
  nowMs: 'tonumber',
  rps: 'tonumber',
  windowMs: 'tonumber',
  rateKeyTtlMs: 'as-is',
  planCredits: 'tonumber',
  creditKeyTtlMs: 'as-is',
  twinKeyTtlMs: 'as-is',
  backTwinKeyTtlMs: 'as-is',
  wantSlots: 'tonumber',
  backWindowStartMs: 'tonumber',
  backSlots: 'tonumber',
  backId: 'as-is',
  backAllowance: 'as-is',
  backTopup: 'as-is',
  leaseId: 'as-is',
  leaseDeadlineMs: 'tonumber',
  callRecordMs: 'as-is',
  usageTtlMs: 'as-is',
  backUsageTtlMs: 'as-is',
  usageHour: 'as-is',
  backUsageHour: 'as-is',
  usageHourTtlMs: 'as-is',
  backUsageHourTtlMs: 'as-is',
  backUsage: 'as-is',
  redoWindowStartMs: 'tonumber',
  redoSlots: 'tonumber',
};

/** What the script returns for one request: outcome 0 ok, 1 rate limited, 2 out of credits. */
interface DecideRow {
  outcome: number;
  /** Its position in the window. */
  position: number;
  /** Ms until the window ends. */
  resetMs: number;
  /** The balance after it. */
  balance: number;
  /** What it took from bought credits. */
  fromTopup: number;
}

/** A row per request, in the Lua of the request loop (`i` is the request, 1 to n). */
const DECIDE_ROW: Returns<DecideRow> = {
  outcome: 'outcome',
  position: 'base + i',
  resetMs: 'reset',
  balance: 'allowance + topup',
  fromTopup: 'fromTopup',
};

/** After the rows: the window's start, the lease's slots, allowance and bought credits, the window's count and the balance left besides every reservation. */
const DECIDE_GRANT: Returns<Grant> = {
  windowStartMs: 'start',
  slots: 'slots',
  allowance: 'leaseAllowance',
  topup: 'leaseTopup',
  count: 'base + n + slots',
  free: 'allowance + topup',
};

/** Last: the credits other processes' leases hold in the period (live reservations), which a recall could free. */
interface DecideTail {
  held: number;
}
const DECIDE_TAIL: Returns<DecideTail> = { held: 'reservedAllowance + reservedTopup' };

const DECIDE_KEY_ORDER = order(DECIDE_KEYS);
const DECIDE_ARG_ORDER = order(DECIDE_ARGV);
const ROW = indexes(DECIDE_ROW);
const ROW_LENGTH = order(DECIDE_ROW).length;
const GRANT = indexes(DECIDE_GRANT);
const GRANT_LENGTH = order(DECIDE_GRANT).length;
const TAIL = indexes(DECIDE_TAIL);

// Decides a batch of requests of one account, in arrival order, exactly as if each had been sent
// alone: request i is the (base + i)-th of its window, and takes credits only if the balance
// left by the requests before it covers its cost, from the period's allowance first, then from
// bought credits. window.ts and memory.ts are the same logic for one store.
//
// Before deciding, it settles the lease this process gives back (redis.ts's head explains
// leases) and lets reservations past their deadline lapse; after deciding, it may grant a new
// lease. The balance it decides from leaves out every live reservation.
//
// A call voided before it ran (its reply timed out while Redis stalled, and VOID_LUA reached
// Redis first) does nothing and returns nothing; one that bills leaves a record of what it
// billed, for VOID_LUA to give back.
const DECIDE_LUA = script('decide', DECIDE_KEYS, DECIDE_ARGV, {
  layouts: { row: DECIDE_ROW, grant: DECIDE_GRANT, tail: DECIDE_TAIL },
  constants: { NAMED_ARGS: DECIDE_ARG_ORDER.length, LEASE_SHARE, LEASE_MIN_REQUESTS },
});

const OUTCOMES: readonly QuotaOutcome[] = ['ok', 'rate_limited', 'out_of_credits'];

/** The decision script's answer for one request. */
export interface DecidedRequest {
  outcome: QuotaOutcome;
  position: number;
  resetMs: number;
  balance: number;
  fromTopup: number;
}

export interface DecideReply {
  /** One per cost sent, in the same order. */
  perRequest: DecidedRequest[];
  /** The lease granted (no slots: none). */
  lease: Grant;
  /** Credits other leases hold in the period: a refusal with some held may be recalled. */
  held: number;
}

/** The decision script's keys and arguments, in the order it reads them. */
export function encodeDecide(keys: DecideKeys, args: DecideArgs): KeysAndArgs {
  const out = encode<DecideKeys, Omit<DecideArgs, 'costs' | 'fields'>>(DECIDE_KEY_ORDER, keys, DECIDE_ARG_ORDER, args);
  args.costs.forEach((cost, i) => out.push(cost, args.fields[i] ?? ''));
  return out;
}

/** The decision script's flat reply, for `n` requests. */
export function decodeDecide(reply: readonly number[], n: number): DecideReply {
  const perRequest: DecidedRequest[] = [];
  for (let i = 0; i < n; i++) {
    const at = i * ROW_LENGTH;
    perRequest.push({
      outcome: OUTCOMES[reply[at + ROW.outcome] ?? 0] ?? 'ok',
      position: reply[at + ROW.position] ?? 0,
      resetMs: reply[at + ROW.resetMs] ?? 0,
      balance: reply[at + ROW.balance] ?? 0,
      fromTopup: reply[at + ROW.fromTopup] ?? 0,
    });
  }
  const at = n * ROW_LENGTH;
  const lease: Grant = {
    windowStartMs: reply[at + GRANT.windowStartMs] ?? 0,
    slots: reply[at + GRANT.slots] ?? 0,
    allowance: reply[at + GRANT.allowance] ?? 0,
    topup: reply[at + GRANT.topup] ?? 0,
    count: reply[at + GRANT.count] ?? 0,
    free: reply[at + GRANT.free] ?? 0,
  };
  return { perRequest, lease, held: reply[at + GRANT_LENGTH + TAIL.held] ?? 0 };
}

/** Settles a lease outside a decision. */
export interface SettleKeys {
  /** Credits spent in the lease's period, and in its twin. */
  creditsKey: string;
  twinCreditsKey: string;
  /** Bought credits. */
  topupKey: string;
  /** The period's reservations. */
  reservationsKey: string;
  /** The usage credits of the lease's day, and their hours'. */
  usageKey: string;
  usageHourKey: string;
}

export interface SettleArgs {
  /** The lease's id. */
  id: string;
  /** The allowance and bought credits it spent. */
  allowance: number;
  topup: number;
  /** The credit key's ttl: what is left of the lease's period, plus the grace, as a decision sets it; the same for the twin. */
  creditKeyTtlMs: number;
  twinKeyTtlMs: number;
  /** What the lease spent, by usage row (encodeUsage), and the ttl the day's usage credits get when they have none. */
  usage: string;
  usageTtlMs: number;
  /** The lease's UTC hour (`00`-`23`), and the ttl its day's hourly usage credits get when they have none. */
  usageHour: string;
  usageHourTtlMs: number;
}

const SETTLE_KEYS: Positions<SettleKeys> = {
  creditsKey: 'as-is',
  twinCreditsKey: 'as-is',
  topupKey: 'as-is',
  reservationsKey: 'as-is',
  usageKey: 'as-is',
  usageHourKey: 'as-is',
};
const SETTLE_ARGV: Positions<SettleArgs> = {
  id: 'as-is',
  allowance: 'as-is',
  topup: 'as-is',
  creditKeyTtlMs: 'as-is',
  twinKeyTtlMs: 'as-is',
  usage: 'as-is',
  usageTtlMs: 'as-is',
  usageHour: 'as-is',
  usageHourTtlMs: 'as-is',
};
const SETTLE_KEY_ORDER = order(SETTLE_KEYS);
const SETTLE_ARG_ORDER = order(SETTLE_ARGV);

// Bills only if the reservation is still there (then removes it): once.
const SETTLE_LUA = script('settle', SETTLE_KEYS, SETTLE_ARGV);

export function encodeSettle(keys: SettleKeys, args: SettleArgs): KeysAndArgs {
  return encode(SETTLE_KEY_ORDER, keys, SETTLE_ARG_ORDER, args);
}

/** Gives credits back. */
export interface RefundKeys {
  /** Credits spent in the period, and in its twin. */
  creditsKey: string;
  twinCreditsKey: string;
  /** Bought credits. */
  topupKey: string;
  /** The refund's marker: present once it was applied. */
  markerKey: string;
  /** The usage credits of the refunded decision's day, and their hours'. */
  usageKey: string;
  usageHourKey: string;
}

export interface RefundArgs {
  /** Back to the allowance. */
  toAllowance: number;
  /** Back to bought credits. */
  toTopup: number;
  /** How long the marker is kept (redis-keys.ts). */
  markerMs: number;
  /** The refunded decision's usage row ('' for none): what is given back is taken off it. */
  usageField: string;
  /** The same row in the hourly usage credits: `<HH>|<usageField>` ('' for none). */
  usageHourField: string;
}

const REFUND_KEYS: Positions<RefundKeys> = {
  creditsKey: 'as-is',
  twinCreditsKey: 'as-is',
  topupKey: 'as-is',
  markerKey: 'as-is',
  usageKey: 'as-is',
  usageHourKey: 'as-is',
};
const REFUND_ARGV: Positions<RefundArgs> = {
  toAllowance: 'as-is',
  toTopup: 'as-is',
  markerMs: 'as-is',
  usageField: 'as-is',
  usageHourField: 'as-is',
};
const REFUND_KEY_ORDER = order(REFUND_KEYS);
const REFUND_ARG_ORDER = order(REFUND_ARGV);

// A period whose counter is gone has no allowance to give back to. Once per refund: a refund
// sent again (its first reply lost) finds its marker and gives nothing more. What it gives back
// is taken off the decision's usage row, so usage credits stay what was billed.
const REFUND_LUA = script('refund', REFUND_KEYS, REFUND_ARGV);

export function encodeRefund(keys: RefundKeys, args: RefundArgs): KeysAndArgs {
  return encode(REFUND_KEY_ORDER, keys, REFUND_ARG_ORDER, args);
}

/** Bills what a process served while Redis was away (quota/outage.ts). */
export interface ChargeKeys {
  /** Credits spent in the period, and in its twin. */
  creditsKey: string;
  twinCreditsKey: string;
  /** Bought credits. */
  topupKey: string;
  /** The charge's marker: present once it was billed. */
  markerKey: string;
  /** The usage credits of the day the credits were served, and their hours'. */
  usageKey: string;
  usageHourKey: string;
}

export interface ChargeArgs {
  /** The plan's credits per period. */
  planCredits: number;
  /** The ttl the credit counters get when they have none (redis-keys.ts). */
  creditKeyTtlMs: number;
  twinKeyTtlMs: number;
  /** How long the marker is kept. */
  markerMs: number;
  /** What was served, by usage row (encodeUsage). */
  usage: string;
  usageTtlMs: number;
  /** The UTC hour the credits were served in (`00`-`23`) and the ttl of its day's hourly usage credits. */
  usageHour: string;
  usageHourTtlMs: number;
}

const CHARGE_KEYS: Positions<ChargeKeys> = {
  creditsKey: 'as-is',
  twinCreditsKey: 'as-is',
  topupKey: 'as-is',
  markerKey: 'as-is',
  usageKey: 'as-is',
  usageHourKey: 'as-is',
};
const CHARGE_ARGV: Positions<ChargeArgs> = {
  planCredits: 'tonumber',
  creditKeyTtlMs: 'as-is',
  twinKeyTtlMs: 'as-is',
  markerMs: 'as-is',
  usage: 'as-is',
  usageTtlMs: 'as-is',
  usageHour: 'as-is',
  usageHourTtlMs: 'as-is',
};
const CHARGE_KEY_ORDER = order(CHARGE_KEYS);
const CHARGE_ARG_ORDER = order(CHARGE_ARGV);

/** The charge script's reply: where the credits were taken from, and what the account did not have. */
export interface ChargeReply {
  /** 0 when the marker said the charge was billed before (then the rest are 0). */
  applied: number;
  fromAllowance: number;
  fromTopup: number;
  /** Served beyond the allowance and bought credits: counted as spent (the balance reads 0). */
  overdraft: number;
}
const CHARGE_REPLY: Returns<ChargeReply> = {
  applied: '1',
  fromAllowance: 'fromAllowance',
  fromTopup: 'fromTopup',
  overdraft: 'amount - fromAllowance - fromTopup',
};
const CHARGE = indexes(CHARGE_REPLY);

// Once per charge: a charge sent again (its first reply lost) finds its marker and bills nothing
// more. The period's allowance is spent first, then bought credits; what neither covers still
// counts as spent, so the usage credits are what was served and the balance reads 0.
const CHARGE_LUA = script('charge', CHARGE_KEYS, CHARGE_ARGV, { layouts: { reply: CHARGE_REPLY } });

export function encodeCharge(keys: ChargeKeys, args: ChargeArgs): KeysAndArgs {
  return encode(CHARGE_KEY_ORDER, keys, CHARGE_ARG_ORDER, args);
}

export function decodeCharge(reply: readonly number[]): ChargeReply {
  return {
    applied: reply[CHARGE.applied] ?? 0,
    fromAllowance: reply[CHARGE.fromAllowance] ?? 0,
    fromTopup: reply[CHARGE.fromTopup] ?? 0,
    overdraft: reply[CHARGE.overdraft] ?? 0,
  };
}

/** Voids a decision call whose reply was lost. */
export interface VoidKeys {
  /** The call's record (DecideKeys.callKey). */
  callKey: string;
  /** Credits spent in the call's period and in its twin, bought credits, and the period's reservations. */
  creditsKey: string;
  twinCreditsKey: string;
  topupKey: string;
  reservationsKey: string;
  /** The usage credits of the call's day, and their hours'. */
  usageKey: string;
  usageHourKey: string;
}

export interface VoidArgs {
  /** The lease the call may have granted ('' for none): its reservation is dropped. */
  leaseId: string;
  /** The call's UTC hour (`00`-`23`): its usage rows are taken off that hour's credits too. */
  usageHour: string;
  /** How long the record of the void is kept. */
  callRecordMs: number;
}

const VOID_KEYS: Positions<VoidKeys> = {
  callKey: 'as-is',
  creditsKey: 'as-is',
  twinCreditsKey: 'as-is',
  topupKey: 'as-is',
  reservationsKey: 'as-is',
  usageKey: 'as-is',
  usageHourKey: 'as-is',
};
const VOID_ARGV: Positions<VoidArgs> = { leaseId: 'as-is', usageHour: 'as-is', callRecordMs: 'as-is' };
const VOID_KEY_ORDER = order(VOID_KEYS);
const VOID_ARG_ORDER = order(VOID_ARGV);

// A decision call whose reply never came (a stalled Redis, a command timeout) was answered by the
// gateway as if the store had failed: nothing billed (redis.onError). If the call ran, what it
// billed is given back and the lease it granted dropped; if it has not run yet, the void is
// recorded first and the call, arriving later, does nothing. Once: the record says `void`.
// Returns 1 if it gave something back.
const VOID_LUA = script('void', VOID_KEYS, VOID_ARGV);

export function encodeVoid(keys: VoidKeys, args: VoidArgs): KeysAndArgs {
  return encode(VOID_KEY_ORDER, keys, VOID_ARG_ORDER, args);
}

/**
 * Changes an account's bought credits (redis.ts, adjustTopUp and setTopUp). The reservations of
 * every period a live lease of the account may be kept under: the plan's period (daily or
 * monthly) at the correction's instant, and a lease's lifetime before and after it (a lease
 * granted before a midnight UTC is kept under the day it was granted in; a deciding host's clock
 * a little ahead). The same key may be named twice: it is read once.
 */
export interface AdjustTopUpKeys {
  /** Bought credits. */
  topupKey: string;
  dayBeforeKey: string;
  dayKey: string;
  dayAfterKey: string;
  monthBeforeKey: string;
  monthKey: string;
  monthAfterKey: string;
}

export interface AdjustTopUpArgs {
  /** 'add': `amount` is added (may be negative); 'set': the bought credits no lease holds become `amount`. */
  mode: 'add' | 'set';
  amount: number;
  /** The correction's clock (ms): reservations whose deadline it has passed lapse, as in a decision. */
  nowMs: number;
}

/** The reply: whether the change was made (1) or refused below zero (0), bought credits before and after, and what live leases hold of them. */
export interface AdjustTopUpReply {
  applied: number;
  before: number;
  after: number;
  held: number;
}

const ADJUST_TOPUP_KEYS: Positions<AdjustTopUpKeys> = {
  topupKey: 'as-is',
  dayBeforeKey: 'as-is',
  dayKey: 'as-is',
  dayAfterKey: 'as-is',
  monthBeforeKey: 'as-is',
  monthKey: 'as-is',
  monthAfterKey: 'as-is',
};
const ADJUST_TOPUP_ARGV: Positions<AdjustTopUpArgs> = { mode: 'as-is', amount: 'tonumber', nowMs: 'tonumber' };
const ADJUST_TOPUP_RETURNS: Returns<AdjustTopUpReply> = {
  applied: 'applied',
  before: 'topupBefore',
  after: 'topupAfter',
  held: 'heldTopup',
};
const ADJUST_TOPUP_KEY_ORDER = order(ADJUST_TOPUP_KEYS);
const ADJUST_TOPUP_ARG_ORDER = order(ADJUST_TOPUP_ARGV);
const ADJUST_TOPUP = indexes(ADJUST_TOPUP_RETURNS);

// The bought credits live leases hold (reservations: DECIDE_LUA grants them, SETTLE_LUA bills what
// was spent of them with a DECRBY of the top-up key) are not available to take away: a lease may
// have spent them already, and its settlement must find them. So a change that would leave fewer
// bought credits than the leases hold is refused, and a set sets what they do not hold (what
// they hold is billed or released when they are settled). Reservations past their deadline lapse
// first, as DECIDE_LUA lets them (a settlement then bills nothing). Integers are formatted with
// %d: Lua would write a large one as 1e+15, which INCRBY refuses.
const ADJUST_TOPUP_LUA = script('adjust-topup', ADJUST_TOPUP_KEYS, ADJUST_TOPUP_ARGV, { layouts: { reply: ADJUST_TOPUP_RETURNS } });

export function encodeAdjustTopUp(keys: AdjustTopUpKeys, args: AdjustTopUpArgs): KeysAndArgs {
  return encode(ADJUST_TOPUP_KEY_ORDER, keys, ADJUST_TOPUP_ARG_ORDER, args);
}

export function decodeAdjustTopUp(reply: readonly number[]): AdjustTopUpReply {
  return {
    applied: reply[ADJUST_TOPUP.applied] ?? 0,
    before: reply[ADJUST_TOPUP.before] ?? 0,
    after: reply[ADJUST_TOPUP.after] ?? 0,
    held: reply[ADJUST_TOPUP.held] ?? 0,
  };
}

/** Each script's text as Redis runs it, by its file's name (test/unit/lua-scripts.test.ts parses them). */
export const QUOTA_LUA: Readonly<Record<string, string>> = {
  decide: DECIDE_LUA,
  settle: SETTLE_LUA,
  refund: REFUND_LUA,
  charge: CHARGE_LUA,
  void: VOID_LUA,
  'adjust-topup': ADJUST_TOPUP_LUA,
};

type Command = (...keysAndArgs: KeysAndArgs) => Promise<unknown>;

/** Registers a script on the client as a command (EVALSHA, EVAL when Redis does not know it yet). */
function define<K>(client: RedisClient, name: string, keys: Positions<K>, lua: string): Command {
  client.defineCommand(name, { numberOfKeys: order(keys).length, lua });
  const command = (client as unknown as Record<string, Command>)[name];
  if (command === undefined) throw new Error(`ioredis did not define ${name}`);
  return command.bind(client);
}

/** The six scripts on one client, typed. */
export class QuotaScripts {
  private readonly decideCommand: Command;
  private readonly adjustTopUpCommand: Command;
  private readonly settleCommand: Command;
  private readonly refundCommand: Command;
  private readonly voidCommand: Command;
  private readonly chargeCommand: Command;

  constructor(client: RedisClient) {
    this.voidCommand = define(client, 'egwQuotaVoid', VOID_KEYS, VOID_LUA);
    this.decideCommand = define(client, 'egwQuotaDecide', DECIDE_KEYS, DECIDE_LUA);
    this.refundCommand = define(client, 'egwQuotaRefund', REFUND_KEYS, REFUND_LUA);
    this.settleCommand = define(client, 'egwQuotaSettle', SETTLE_KEYS, SETTLE_LUA);
    this.adjustTopUpCommand = define(client, 'egwQuotaAdjustTopUp', ADJUST_TOPUP_KEYS, ADJUST_TOPUP_LUA);
    this.chargeCommand = define(client, 'egwQuotaCharge', CHARGE_KEYS, CHARGE_LUA);
  }

  /** Bills what a process served while Redis was away, once per charge id. */
  charge(keys: ChargeKeys, args: ChargeArgs): Promise<ChargeReply> {
    return this.chargeCommand(...encodeCharge(keys, args)).then((reply) => decodeCharge(reply as number[]));
  }

  /** Adds to or sets an account's bought credits, never below what live leases hold of them. */
  adjustTopUp(keys: AdjustTopUpKeys, args: AdjustTopUpArgs): Promise<AdjustTopUpReply> {
    return this.adjustTopUpCommand(...encodeAdjustTopUp(keys, args)).then((reply) => decodeAdjustTopUp(reply as number[]));
  }

  /** Decides `args.costs.length` requests, settling the lease given back and granting a new one. */
  decide(keys: DecideKeys, args: DecideArgs): Promise<DecideReply> {
    const n = args.costs.length;
    return this.decideCommand(...encodeDecide(keys, args)).then((reply) => decodeDecide(reply as number[], n));
  }

  /** Gives back what a decision call billed, if it ran, and makes it a no-op if it has not. */
  void(keys: VoidKeys, args: VoidArgs): Promise<unknown> {
    return this.voidCommand(...encodeVoid(keys, args));
  }

  /** Settles a lease: bills what it spent if Redis still holds its reservation. */
  settle(keys: SettleKeys, args: SettleArgs): Promise<unknown> {
    return this.settleCommand(...encodeSettle(keys, args));
  }

  refund(keys: RefundKeys, args: RefundArgs): Promise<unknown> {
    return this.refundCommand(...encodeRefund(keys, args));
  }
}
