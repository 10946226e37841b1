// /admin/v1/keys: keys created, listed, shown, changed, topped up, rolled and revoked at run time.
// Configured (YAML) keys are listed and shown, but read-only here: the file is their source.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { remaining } from '../quota/types.js';
import { periodWindow } from '../quota/period.js';
import type { ApiKey } from '../keys/ring.js';
import { newKeyId, newSecret } from '../keys/runtime.js';
import type { AuditEntry, KeyRecord } from '../store/types.js';
import { AdminError, type AdminDeps, type Send } from './context.js';
import { parseBody, parseInstant, parseQuery } from './validate.js';

const name = z.string().trim().min(1, { error: 'expected a non-empty name' }).max(128, { error: 'expected at most 128 characters' });
const owner = z.string().trim().min(1).max(128).nullable();
const chains = z
  .array(z.string().min(1), { error: 'expected a list of chain ids' })
  .min(1, { error: 'expected at least one chain id' })
  .nullable();
/** An ISO 8601 date (`2027-01-01`, the start of that UTC day) or date-time, or null: never. */
const expiresAt = z.string().nullable();

const createBody = z.strictObject({
  name,
  plan: z.string().min(1),
  owner: owner.optional(),
  chains: chains.optional(),
  expiresAt: expiresAt.optional(),
});
const patchBody = z
  .strictObject({
    name: name.optional(),
    plan: z.string().min(1).optional(),
    owner: owner.optional(),
    chains: chains.optional(),
    expiresAt: expiresAt.optional(),
    status: z.enum(['active', 'disabled'], { error: 'expected active or disabled' }).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { error: 'expected at least one of name, plan, owner, chains, expiresAt, status' });
const creditsBody = z.strictObject({
  amount: z
    .number({ error: 'expected a positive integer' })
    .int({ error: 'expected a positive integer' })
    .positive({ error: 'expected a positive integer' })
    .max(1e15, { error: 'expected at most 10^15' }),
});
/** A grace of at most 30 days: a leaked secret must not keep working for long. */
const rollBody = z.strictObject({
  graceSeconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .optional(),
});
const listQuery = z.strictObject({
  owner: z.string().optional(),
  plan: z.string().optional(),
  status: z.enum(['active', 'disabled', 'unverified']).optional(),
});

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** What the admin API shows of a key: never its secret or digest. */
export function keyView(key: ApiKey | undefined, record: KeyRecord | undefined): Record<string, unknown> {
  if (record) {
    return {
      id: record.id,
      name: record.name,
      plan: record.plan,
      owner: record.owner,
      chains: record.chains,
      status: record.status,
      expiresAt: iso(record.expiresAt),
      createdAt: iso(record.createdAt),
      prefix: record.prefix,
      source: 'runtime',
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
  };
}

export function registerKeyRoutes(api: FastifyInstance, deps: AdminDeps, send: Send): void {
  const ring = () => deps.states().keys;
  const config = () => deps.states().config;

  const checkPlan = (plan: string) => {
    const plans = Object.keys(config().plans);
    if (!plans.includes(plan)) throw new AdminError(422, `unknown plan "${plan}"; plans: ${plans.join(', ')}`, { plans });
  };
  const checkChains = (ids: string[] | null | undefined) => {
    for (const id of ids ?? []) {
      if (!Object.hasOwn(config().chains, id))
        throw new AdminError(422, `unknown chain "${id}"; chains: ${Object.keys(config().chains).join(', ')}`);
    }
  };
  const checkExpiry = (value: string | null | undefined): number | null | undefined => {
    if (value === undefined || value === null) return value;
    const ms = parseInstant(value, 'expiresAt');
    if (ms <= deps.now()) throw new AdminError(422, `expiresAt: ${value} is not in the future`);
    return ms;
  };
  /** A run-time key's record, or 404 / 409 (a configured key). */
  const runtimeRecord = (id: string): KeyRecord => {
    const record = ring().record(id);
    if (record) return record;
    if (ring().get(id)?.source === 'config') {
      throw new AdminError(409, `key ${id} comes from the configuration file: change it there (it is read-only here)`);
    }
    throw new AdminError(404, `no key with id ${id}`);
  };
  const entry = (
    action: AuditEntry['action'],
    keyId: string,
    before: Record<string, unknown> | null,
    after: Record<string, unknown> | null,
  ): AuditEntry => ({ at: deps.now(), action, keyId, before, after });
  const logged = (e: AuditEntry) => deps.log.info({ admin: e.action, keyId: e.keyId, before: e.before, after: e.after }, 'admin write');
  const audit = async (...args: Parameters<typeof entry>) => {
    const e = entry(...args);
    await deps.store.audit.appendAudit(e);
    logged(e);
  };
  /** The record and its audit entry, in one transaction. */
  const save = async (record: KeyRecord, create: boolean, e: AuditEntry) => {
    const saved = create ? await deps.store.keys.createKey(record, e) : await deps.store.keys.updateKey(record, e);
    if (!saved) throw new AdminError(409, `the name "${record.name}" is used by another key`);
    deps.runtime.set(record);
    logged(e);
  };

  api.post('/keys', async (request, reply) => {
    const body = parseBody(createBody, request.body);
    checkPlan(body.plan);
    checkChains(body.chains);
    const expires = checkExpiry(body.expiresAt);
    if (ring().nameTaken(body.name)) throw new AdminError(409, `the name "${body.name}" is used by another key`);
    const { secret, digest, prefix } = newSecret();
    const record: KeyRecord = {
      id: newKeyId(),
      name: body.name,
      owner: body.owner ?? null,
      plan: body.plan,
      chains: body.chains ?? null,
      status: 'active',
      expiresAt: expires ?? null,
      createdAt: deps.now(),
      prefix,
      digest,
      previous: null,
    };
    const view = keyView(undefined, record);
    await save(record, true, entry('create', record.id, null, view));
    // The secret is in this answer only: it is stored as its digest.
    return send(reply, 201, { ...view, key: secret });
  });

  api.get('/keys', (request, reply) => {
    const q = parseQuery(listQuery, request.query);
    const items = ring()
      .all()
      .map(({ key, record }) => keyView(key, record))
      .filter(
        (v) =>
          (q.owner === undefined || v.owner === q.owner) &&
          (q.plan === undefined || v.plan === q.plan) &&
          (q.status === undefined || v.status === q.status),
      );
    return send(reply, 200, { items });
  });

  api.get<{ Params: { id: string } }>('/keys/:id', async (request, reply) => {
    const { id } = request.params;
    const key = ring().get(id);
    const record = ring().record(id);
    if (!key && !record) throw new AdminError(404, `no key with id ${id}`);
    const planName = record?.plan ?? key!.planName;
    const plan = config().plans[planName];
    const view = keyView(key, record);
    if (!plan) return send(reply, 200, { ...view, credits: null });
    const now = deps.now();
    const account = key?.account ?? id;
    const b = await deps.quota.balance(account, plan.period, now);
    const credits = {
      remaining: remaining(plan.credits, b),
      spent: b.spent,
      topup: b.topup,
      resetsAt: iso(periodWindow(plan.period, now).endMs),
    };
    return send(reply, 200, { ...view, credits });
  });

  api.patch<{ Params: { id: string } }>('/keys/:id', async (request, reply) => {
    const before = runtimeRecord(request.params.id);
    const body = parseBody(patchBody, request.body);
    if (body.plan !== undefined) checkPlan(body.plan);
    checkChains(body.chains);
    const expires = checkExpiry(body.expiresAt);
    if (body.name !== undefined && ring().nameTaken(body.name, before.id))
      throw new AdminError(409, `the name "${body.name}" is used by another key`);
    const after: KeyRecord = {
      ...before,
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.plan !== undefined ? { plan: body.plan } : {}),
      ...(body.owner !== undefined ? { owner: body.owner } : {}),
      ...(body.chains !== undefined ? { chains: body.chains } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(expires !== undefined ? { expiresAt: expires } : {}),
    };
    const view = keyView(undefined, after);
    await save(after, false, entry('update', after.id, keyView(undefined, before), view));
    return send(reply, 200, view);
  });

  api.post<{ Params: { id: string } }>('/keys/:id/credits', async (request, reply) => {
    const { id } = request.params;
    const key = ring().get(id);
    if (!key) throw new AdminError(404, `no key with id ${id}`);
    const { amount } = parseBody(creditsBody, request.body);
    const now = deps.now();
    const before = await deps.quota.balance(key.account, key.plan.period, now);
    const topup = await deps.quota.topUp(key.account, amount);
    const after = { ...before, topup };
    await audit(
      'credits',
      id,
      { remaining: remaining(key.plan.credits, before), topup: before.topup },
      { remaining: remaining(key.plan.credits, after), topup, added: amount },
    );
    return send(reply, 200, { id, added: amount, topup, remaining: remaining(key.plan.credits, after) });
  });

  api.post<{ Params: { id: string } }>('/keys/:id/roll', async (request, reply) => {
    const before = runtimeRecord(request.params.id);
    const { graceSeconds = 0 } = parseBody(rollBody, request.body);
    const { secret, digest, prefix } = newSecret();
    const until = deps.now() + graceSeconds * 1000;
    const after: KeyRecord = { ...before, digest, prefix, previous: graceSeconds > 0 ? { digest: before.digest, until } : null };
    const view = keyView(undefined, after);
    await save(
      after,
      false,
      entry('roll', after.id, { prefix: before.prefix }, { prefix, previousValidUntil: graceSeconds > 0 ? iso(until) : null }),
    );
    return send(reply, 200, { ...view, key: secret, previousValidUntil: graceSeconds > 0 ? iso(until) : null });
  });

  api.delete<{ Params: { id: string } }>('/keys/:id', async (request, reply) => {
    const before = runtimeRecord(request.params.id);
    const e = entry('revoke', before.id, keyView(undefined, before), null);
    if (await deps.store.keys.deleteKey(before.id, e)) logged(e);
    deps.runtime.drop(before.id);
    return send(reply, 200, { id: before.id, revoked: true });
  });

  api.get('/audit', async (request, reply) => {
    const q = parseQuery(
      z.strictObject({ from: z.string().optional(), to: z.string().optional(), key: z.string().optional() }),
      request.query,
    );
    const from = q.from === undefined ? 0 : parseInstant(q.from, 'from');
    // A date alone means the whole of that day.
    const to = q.to === undefined ? deps.now() : parseInstant(q.to, 'to') + (/^\d{4}-\d{2}-\d{2}$/.test(q.to) ? 86_399_999 : 0);
    const entries = await deps.store.audit.listAudit({ from, to, keyId: q.key });
    return send(reply, 200, { items: entries.map((e) => ({ ...e, at: iso(e.at) })) });
  });
}
