// `explorer-gateway keys|plans|accounts|webhooks|usage ...`: the admin API from a shell. The
// commands call a running gateway's admin API (never its store directly, so that every write is
// checked, audited and seen by every process), print its JSON (or CSV), and exit non-zero with
// the API's message when it refuses.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { ADMIN_ROUTES, adminPath, type AdminOperation } from './surface.js';

export const ADMIN_USAGE = `Admin commands (a running gateway's admin API; token from EGW_ADMIN_TOKEN):
  explorer-gateway keys create --name NAME --plan PLAN|--account ID [--owner OWNER] [--chains 1,100] [--expires 2027-01-01] [TERMS]
  explorer-gateway keys list [--name TEXT] [--prefix egw_AbC] [--owner OWNER] [--meta FIELD:VALUE] [--plan PLAN] [--status active|disabled|unverified|revoked] [--limit N] [--cursor CURSOR]
                                             (a page of at most --limit keys, 100 by default; --cursor: nextCursor of the page before)
  explorer-gateway keys show ID
  explorer-gateway keys update ID [--plan PLAN] [--status active|disabled] [--name NAME] [--owner OWNER] [--chains 1,100] [--expires DATE|never] [TERMS]
  explorer-gateway keys credits ID AMOUNT|--set N [--reason TEXT]   (a negative AMOUNT takes credits away; it and --set need --reason)
  explorer-gateway keys roll ID [--grace SECONDS]
  explorer-gateway keys revoke ID
  explorer-gateway keys verify [KEY]            (KEY read from stdin if not given, as hash-key does)
  explorer-gateway plans list
  explorer-gateway plans show NAME
  explorer-gateway plans create --name NAME --rps N --credits N [--period daily|monthly]
  explorer-gateway plans update NAME [--rps N] [--credits N] [--period daily|monthly]
  explorer-gateway plans delete NAME
  explorer-gateway accounts list [--name TEXT] [--plan PLAN] [--meta FIELD:VALUE] [--limit N] [--cursor C]
  explorer-gateway accounts show ID
  explorer-gateway accounts create --name NAME --plan PLAN [--rps N] [--credits N] [--period P] [--cost ROUTE=N] [--meta JSON]
  explorer-gateway accounts update ID [--name NAME] [--plan PLAN] [--rps N|plan] [--credits N|plan] [--period P|plan] [--cost ROUTE=N|plan] [--limits plan] [--meta JSON|none]
  explorer-gateway webhooks list
  explorer-gateway webhooks show ID
  explorer-gateway webhooks create --url URL --events 'credits.*,key.created' [--secret whsec_...] [--description TEXT] [--enabled true|false]
  explorer-gateway webhooks update ID [--url URL] [--events LIST] [--secret whsec_...] [--description TEXT] [--enabled true|false]
  explorer-gateway webhooks delete ID
  explorer-gateway webhooks deliveries [--webhook ID] [--status pending|delivered|failed] [--key ID] [--type TYPE] [--limit N] [--cursor C]
  explorer-gateway webhooks delivery ID
  explorer-gateway webhooks redeliver ID
  explorer-gateway usage [--from DATE] [--to DATE] [--key ID] [--owner OWNER] [--account ID] [--chain ID] [--route NAME] [--granularity day|hour] [--format json|csv]
Where the admin API is: --admin-url URL, else EGW_ADMIN_URL, else the admin address of --config FILE.
TERMS, a deal and restrictions of the key's own ("plan" returns a limit to the plan's, "any" lifts a restriction):
  --rps N|plan  --credits N|plan  --period daily|monthly|plan  --cost ROUTE=N (repeatable)|plan  --limits plan (the whole deal)
  --routes 'tokens/*,legacy.account.*'|any  --ips 203.0.113.0/24,...|any  --origins https://app.example|any  --meta JSON|none
  --account ID|none (the account whose plan, limits, credits and rate the key shares)
`;

/** A refusal of the command line itself (exit 2) or of the API (exit 1). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

const OPTIONS = {
  'admin-url': { type: 'string' },
  config: { type: 'string', short: 'c' },
  name: { type: 'string' },
  plan: { type: 'string' },
  owner: { type: 'string' },
  chains: { type: 'string' },
  expires: { type: 'string' },
  status: { type: 'string' },
  grace: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  key: { type: 'string' },
  chain: { type: 'string' },
  route: { type: 'string' },
  format: { type: 'string' },
  granularity: { type: 'string' },
  rps: { type: 'string' },
  credits: { type: 'string' },
  period: { type: 'string' },
  cost: { type: 'string', multiple: true },
  limits: { type: 'string' },
  routes: { type: 'string' },
  ips: { type: 'string' },
  origins: { type: 'string' },
  meta: { type: 'string' },
  set: { type: 'string' },
  reason: { type: 'string' },
  account: { type: 'string' },
  prefix: { type: 'string' },
  cursor: { type: 'string' },
  limit: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  secret: { type: 'string' },
  description: { type: 'string' },
  enabled: { type: 'string' },
  webhook: { type: 'string' },
  type: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function adminBase(values: Values, env: NodeJS.ProcessEnv): { url: string; token: string } {
  let url = values['admin-url'] ?? env.EGW_ADMIN_URL;
  let token = env.EGW_ADMIN_TOKEN;
  if ((url === undefined || token === undefined) && values.config !== undefined) {
    const { admin } = loadConfig(values.config, env);
    const host = admin.host === '0.0.0.0' ? '127.0.0.1' : admin.host.includes(':') ? `[${admin.host}]` : admin.host;
    url ??= `http://${host}:${admin.port}/admin/v1`;
    token ??= admin.token;
  }
  if (url === undefined) throw new CliError('where is the admin API? pass --admin-url URL, set EGW_ADMIN_URL, or pass --config FILE', 2);
  if (token === undefined || token === '') throw new CliError('no admin token: set EGW_ADMIN_TOKEN', 2);
  return { url: url.replace(/\/+$/, ''), token };
}

const need = (value: string | undefined, what: string): string => {
  if (value === undefined || value === '') throw new CliError(`missing ${what}\n\n${ADMIN_USAGE}`, 2);
  return value;
};
const list = (s: string | undefined) =>
  s === undefined
    ? undefined
    : s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
const integer = (s: string, what: string) => {
  if (!/^-?\d+$/.test(s)) throw new CliError(`${what}: expected an integer, got ${s}`, 2);
  return Number(s);
};

/** The HTTP call a command makes: an admin operation (surface.ts) with its id, query and body. */
interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
}

function call(op: AdminOperation, id?: string, query?: URLSearchParams, body?: Record<string, unknown>): Call {
  return { method: ADMIN_ROUTES[op].method, path: adminPath(op, id, query), ...(body ? { body } : {}) };
}

/** The options named, as query parameters, those given only. */
function queryOf(
  v: Values,
  names: readonly (
    | 'from'
    | 'to'
    | 'key'
    | 'owner'
    | 'account'
    | 'chain'
    | 'route'
    | 'granularity'
    | 'format'
    | 'plan'
    | 'status'
    | 'name'
    | 'prefix'
    | 'meta'
    | 'cursor'
    | 'limit'
    | 'webhook'
    | 'type'
  )[],
) {
  const q = new URLSearchParams();
  for (const name of names) {
    const value = v[name];
    if (value !== undefined) q.set(name, value);
  }
  return q;
}

/** A limit of the deal: a number, or `plan` (null: the plan's). */
const limit = (s: string, flag: string): number | null => (s === 'plan' ? null : integer(s, flag));

/** The deal and restrictions the flags give (TERMS in ADMIN_USAGE), as the API's body fields. */
function termsOf(v: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (v.limits !== undefined) {
    if (v.limits !== 'plan') throw new CliError('--limits takes only plan (the whole deal back to the plan)', 2);
    body.limits = null;
  }
  const limits: Record<string, unknown> = {};
  if (v.rps !== undefined) limits.rps = limit(v.rps, '--rps');
  if (v.credits !== undefined) limits.credits = limit(v.credits, '--credits');
  if (v.period !== undefined) limits.period = v.period === 'plan' ? null : v.period;
  if (v.cost !== undefined) {
    if (v.cost.includes('plan')) limits.costs = null;
    else {
      limits.costs = Object.fromEntries(
        v.cost.map((c) => {
          const at = c.lastIndexOf('=');
          if (at <= 0) throw new CliError(`--cost ${c}: expected ROUTE=CREDITS`, 2);
          return [c.slice(0, at), integer(c.slice(at + 1), `--cost ${c}`)];
        }),
      );
    }
  }
  if (Object.keys(limits).length > 0) {
    if (body.limits === null) throw new CliError('--limits plan clears the whole deal: give no other limit with it', 2);
    body.limits = limits;
  }
  if (v.routes !== undefined) body.routes = v.routes === 'any' ? null : list(v.routes);
  if (v.ips !== undefined) body.ips = v.ips === 'any' ? null : list(v.ips);
  if (v.origins !== undefined) body.origins = v.origins === 'any' ? null : list(v.origins);
  if (v.account !== undefined) body.account = v.account === 'none' ? null : v.account;
  if (v.meta !== undefined) {
    try {
      body.meta = v.meta === 'none' ? null : (JSON.parse(v.meta) as unknown);
    } catch {
      throw new CliError('--meta: expected a JSON object, or none', 2);
    }
  }
  return body;
}

/** A plan's fields from the flags: integers and a period, never `plan`. */
function planFields(v: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (v.rps !== undefined) body.rps = integer(v.rps, '--rps');
  if (v.credits !== undefined) body.credits = integer(v.credits, '--credits');
  if (v.period !== undefined) body.period = v.period;
  return body;
}

function plansCall(sub: string | undefined, name: string | undefined, v: Values): Call {
  switch (sub) {
    case 'list':
      return call('plans');
    case 'show':
      return call('showPlan', need(name, 'NAME'));
    case 'create':
      return call('createPlan', undefined, undefined, { name: need(v.name, '--name'), ...planFields(v) });
    case 'update': {
      const body = planFields(v);
      if (Object.keys(body).length === 0) throw new CliError(`plans update needs at least one change\n\n${ADMIN_USAGE}`, 2);
      return call('updatePlan', need(name, 'NAME'), undefined, body);
    }
    case 'delete':
      return call('deletePlan', need(name, 'NAME'));
    default:
      throw new CliError(`unknown plans command: ${sub ?? '(none)'}\n\n${ADMIN_USAGE}`, 2);
  }
}

function accountsCall(sub: string | undefined, id: string | undefined, v: Values): Call {
  // An account's deal and meta: the TERMS flags a key takes, but for its restrictions and account.
  const terms = () => {
    const { limits, meta } = termsOf(v);
    return { ...(limits !== undefined ? { limits } : {}), ...(meta !== undefined ? { meta } : {}) };
  };
  switch (sub) {
    case 'list':
      return call('listAccounts', undefined, queryOf(v, ['name', 'plan', 'meta', 'limit', 'cursor']));
    case 'show':
      return call('showAccount', need(id, 'ID'));
    case 'create':
      return call('createAccount', undefined, undefined, { name: need(v.name, '--name'), plan: need(v.plan, '--plan'), ...terms() });
    case 'update': {
      const body: Record<string, unknown> = { ...terms() };
      if (v.name !== undefined) body.name = v.name;
      if (v.plan !== undefined) body.plan = v.plan;
      if (Object.keys(body).length === 0) throw new CliError(`accounts update needs at least one change\n\n${ADMIN_USAGE}`, 2);
      return call('updateAccount', need(id, 'ID'), undefined, body);
    }
    case 'delete':
      return call('deleteAccount', need(id, 'ID'));
    default:
      throw new CliError(`unknown accounts command: ${sub ?? '(none)'}\n\n${ADMIN_USAGE}`, 2);
  }
}

/** A webhook's fields from the flags. */
function webhookFields(v: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (v.url !== undefined) body.url = v.url;
  if (v.events !== undefined) body.events = list(v.events);
  if (v.secret !== undefined) body.secret = v.secret;
  if (v.description !== undefined) body.description = v.description === 'none' ? null : v.description;
  if (v.enabled !== undefined) {
    if (v.enabled !== 'true' && v.enabled !== 'false') throw new CliError(`--enabled: expected true or false\n\n${ADMIN_USAGE}`, 2);
    body.enabled = v.enabled === 'true';
  }
  return body;
}

function webhooksCall(sub: string | undefined, id: string | undefined, v: Values): Call {
  switch (sub) {
    case 'list':
      return call('webhooks');
    case 'show':
      return call('showWebhook', need(id, 'ID'));
    case 'create':
      return call('createWebhook', undefined, undefined, {
        ...webhookFields(v),
        url: need(v.url, '--url'),
        events: list(need(v.events, '--events')),
      });
    case 'update': {
      const body = webhookFields(v);
      if (Object.keys(body).length === 0) throw new CliError(`webhooks update needs at least one change\n\n${ADMIN_USAGE}`, 2);
      return call('updateWebhook', need(id, 'ID'), undefined, body);
    }
    case 'delete':
      return call('deleteWebhook', need(id, 'ID'));
    case 'deliveries':
      return call('deliveries', undefined, queryOf(v, ['webhook', 'status', 'key', 'type', 'limit', 'cursor']));
    case 'delivery':
      return call('showDelivery', need(id, 'ID'));
    case 'redeliver':
      return call('redeliver', need(id, 'ID'));
    default:
      throw new CliError(`unknown webhooks command: ${sub ?? '(none)'}\n\n${ADMIN_USAGE}`, 2);
  }
}

function callFor(command: string, positionals: string[], v: Values): Call {
  const [sub, id, amount] = positionals;
  if (command === 'plans') return plansCall(sub, id, v);
  if (command === 'webhooks') return webhooksCall(sub, id, v);
  if (command === 'accounts') return accountsCall(sub, id, v);
  if (command === 'usage')
    return call('usage', undefined, queryOf(v, ['from', 'to', 'key', 'owner', 'account', 'chain', 'route', 'granularity', 'format']));
  switch (sub) {
    case 'create': {
      // With --account, the plan is the account's unless given.
      const body: Record<string, unknown> = { name: need(v.name, '--name') };
      if (v.account === undefined || v.plan !== undefined) body.plan = need(v.plan, '--plan');
      if (v.owner !== undefined) body.owner = v.owner;
      if (v.chains !== undefined) body.chains = list(v.chains);
      if (v.expires !== undefined) body.expiresAt = v.expires;
      return call('createKey', undefined, undefined, { ...body, ...termsOf(v) });
    }
    case 'list':
      // --meta here is a search, FIELD:VALUE, as the API takes it (on create and update: the JSON to keep).
      return call('listKeys', undefined, queryOf(v, ['name', 'prefix', 'owner', 'meta', 'plan', 'status', 'limit', 'cursor']));
    case 'show':
      return call('showKey', need(id, 'ID'));
    case 'update': {
      const body: Record<string, unknown> = {};
      if (v.plan !== undefined) body.plan = v.plan;
      if (v.status !== undefined) body.status = v.status;
      if (v.name !== undefined) body.name = v.name;
      if (v.owner !== undefined) body.owner = v.owner;
      if (v.chains !== undefined) body.chains = list(v.chains);
      if (v.expires !== undefined) body.expiresAt = v.expires === 'never' ? null : v.expires;
      Object.assign(body, termsOf(v));
      if (Object.keys(body).length === 0) throw new CliError(`keys update needs at least one change\n\n${ADMIN_USAGE}`, 2);
      return call('updateKey', need(id, 'ID'), undefined, body);
    }
    case 'credits': {
      const body: Record<string, unknown> =
        v.set !== undefined ? { set: integer(v.set, '--set') } : { amount: integer(need(amount, 'AMOUNT or --set N'), 'AMOUNT') };
      if (v.reason !== undefined) body.reason = v.reason;
      return call('addCredits', need(id, 'ID'), undefined, body);
    }
    case 'roll':
      return call('rollKey', need(id, 'ID'), undefined, v.grace === undefined ? {} : { graceSeconds: integer(v.grace, '--grace') });
    case 'revoke':
      return call('revokeKey', need(id, 'ID'));
    case 'verify':
      return call('verifyKey', undefined, undefined, { key: need(id, 'KEY') });
    default:
      throw new CliError(`unknown keys command: ${sub ?? '(none)'}\n\n${ADMIN_USAGE}`, 2);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs `keys ...` or `usage ...`; resolves with what to print. */
export type AdminCommand = 'keys' | 'usage' | 'plans' | 'accounts' | 'webhooks';

export async function runAdminCommand(command: AdminCommand, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  let parsed;
  // `keys credits ID -500`: a negative amount is a positional, not an option.
  if (command === 'keys' && argv[0] === 'credits' && !argv.includes('--')) {
    const negative = (a: string) => /^-\d+$/.test(a);
    argv = [...argv.filter((a) => !negative(a)), '--', ...argv.filter(negative)];
  }
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n\n${ADMIN_USAGE}`, 2);
  }
  // `keys verify` without KEY (or with -): the secret from standard input, out of the process list and shell history.
  if (command === 'keys' && parsed.positionals[0] === 'verify' && (parsed.positionals[1] ?? '-') === '-') {
    parsed.positionals[1] = (await readStdin()).trim();
  }
  const call = callFor(command, parsed.positionals, parsed.values);
  const { url, token } = adminBase(parsed.values, env);
  let res: Response;
  try {
    res = await fetch(url + call.path, {
      method: call.method,
      headers: { authorization: `Bearer ${token}`, ...(call.body ? { 'content-type': 'application/json' } : {}) },
      ...(call.body ? { body: JSON.stringify(call.body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new CliError(`cannot reach the admin API at ${url}: ${(err as Error).message}`, 1);
  }
  const text = await res.text();
  if (!res.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // not JSON: the text as it came
    }
    throw new CliError(`${res.status}: ${message}`, 1);
  }
  if (res.headers.get('content-type')?.startsWith('text/csv')) return text;
  return `${JSON.stringify(JSON.parse(text), null, 2)}\n`;
}
