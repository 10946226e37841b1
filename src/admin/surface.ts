// The admin API's calls, named once: their method and path under /admin/v1, the zod schemas of
// what they take and answer, and the refusals of their own. The routes (routes/*.ts) are
// registered from this table and parse with its schemas, the command line (cli.ts) builds its
// requests from it, and the OpenAPI document (openapi.ts) is made of it, so none of them can
// drift from the others: a call added here without its schemas does not compile.
import type { z } from 'zod';
import type { AdminErrorCode } from './errors.js';
import {
  auditAnswer,
  auditQuery,
  createdKeyAnswer,
  createKeyBody,
  creditsAnswer,
  creditsBody,
  keyIdParams,
  keyAnswer,
  keyListAnswer,
  keyWithCreditsAnswer,
  listKeysQuery,
  openApiAnswer,
  plansAnswer,
  planAnswer,
  planParams,
  createPlanBody,
  updatePlanBody,
  deletedPlanAnswer,
  accountAnswer,
  accountListAnswer,
  accountParams,
  accountWithCreditsAnswer,
  createAccountBody,
  updateAccountBody,
  deletedAccountAnswer,
  listAccountsQuery,
  revokedAnswer,
  verifyKeyAnswer,
  verifyKeyBody,
  rollBody,
  rolledKeyAnswer,
  updateKeyBody,
  usageAnswer,
  usageQuery,
} from './schemas.js';
import {
  createdWebhookAnswer,
  createWebhookBody,
  deletedWebhookAnswer,
  deliveriesAnswer,
  deliveryAnswer,
  deliveryParams,
  listDeliveriesQuery,
  updateWebhookBody,
  webhookAnswer,
  webhookParams,
  webhooksAnswer,
} from './webhook-schemas.js';

/** Where the admin API lives on its listener. */
export const ADMIN_PREFIX = '/admin/v1';

export interface AdminCallSpec {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Under ADMIN_PREFIX, fastify's syntax (`/keys/:id`). */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: 'keys' | 'plans' | 'accounts' | 'webhooks' | 'records' | 'document';
  /** The path's `:name` parameters. */
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  /** A JSON body (validate.ts parseBody; none sent is `{}`). */
  readonly body?: z.ZodType;
  /** The answer when the call succeeds. */
  readonly answer: {
    readonly status: 200 | 201;
    readonly schema: z.ZodType;
    readonly description: string;
    /** Also as CSV with `format=csv`. */
    readonly csv?: true;
  };
  /** Refusals of this call's own, beside those of every call (openapi.ts EVERY_CALL). */
  readonly refusals: readonly AdminErrorCode[];
  /** Served without the admin token. */
  readonly open?: true;
  /** The admin tokens that may make the call (`admin.tokens`): `read` ones too, or `write` ones only. */
  readonly scope: 'read' | 'write';
}

export const ADMIN_ROUTES = {
  createKey: {
    method: 'POST',
    scope: 'write',
    path: '/keys',
    summary: 'Create a key',
    tag: 'keys',
    body: createKeyBody,
    answer: { status: 201, schema: createdKeyAnswer, description: 'The key, with its secret (`key`): shown in this answer only' },
    refusals: [
      'INVALID_BODY',
      'UNKNOWN_PLAN',
      'UNKNOWN_CHAIN',
      'UNKNOWN_ROUTE',
      'NO_SUCH_ACCOUNT',
      'INVALID_INSTANT',
      'EXPIRY_NOT_IN_FUTURE',
      'NAME_TAKEN',
    ],
  },
  listKeys: {
    method: 'GET',
    scope: 'read',
    path: '/keys',
    summary: 'List keys',
    description:
      'Run-time keys and configured ones (`source: "config"`), each with its balance; never a secret or a digest. A page at a time, in id order: `nextCursor` is the `cursor` of the next page (null: the last), and a key added or revoked meanwhile moves no other. `status=revoked`: the revoked keys as they were, from the audit trail.',
    tag: 'keys',
    query: listKeysQuery,
    answer: { status: 200, schema: keyListAnswer, description: 'A page of the keys the filters take' },
    refusals: ['INVALID_QUERY'],
  },
  showKey: {
    method: 'GET',
    scope: 'read',
    path: '/keys/:id',
    summary: 'Show a key, with its balance',
    tag: 'keys',
    params: keyIdParams,
    answer: { status: 200, schema: keyWithCreditsAnswer, description: "The key and this period's credits" },
    refusals: ['NO_SUCH_KEY'],
  },
  updateKey: {
    method: 'PATCH',
    scope: 'write',
    path: '/keys/:id',
    summary: 'Change a run-time key',
    description: 'A configured key is read-only here (409): the file is its source.',
    tag: 'keys',
    params: keyIdParams,
    body: updateKeyBody,
    answer: { status: 200, schema: keyAnswer, description: 'The key as changed' },
    refusals: [
      'NO_SUCH_KEY',
      'CONFIGURED_KEY',
      'INVALID_BODY',
      'UNKNOWN_PLAN',
      'UNKNOWN_CHAIN',
      'UNKNOWN_ROUTE',
      'NO_SUCH_ACCOUNT',
      'INVALID_INSTANT',
      'EXPIRY_NOT_IN_FUTURE',
      'NAME_TAKEN',
    ],
  },
  addCredits: {
    method: 'POST',
    scope: 'write',
    path: '/keys/:id/credits',
    summary: 'Add, take away or set bought credits',
    description:
      'A balance of its own that no period resets, spent after the period allowance. Configured keys too. `amount` adds (negative: takes away), `set` makes the bought credits N; a correction needs a `reason`, kept in the audit entry, and never takes them below zero (409).',
    tag: 'keys',
    params: keyIdParams,
    body: creditsBody,
    answer: { status: 200, schema: creditsAnswer, description: 'The change made, the bought credits left and the new balance' },
    refusals: ['NO_SUCH_KEY', 'INVALID_BODY', 'CREDITS_BELOW_ZERO'],
  },
  rollKey: {
    method: 'POST',
    scope: 'write',
    path: '/keys/:id/roll',
    summary: 'Give a key a new secret',
    description: 'Same id, plan, balance and usage; the old secret is refused after `graceSeconds` (default 0, at most 30 days).',
    tag: 'keys',
    params: keyIdParams,
    body: rollBody,
    answer: { status: 200, schema: rolledKeyAnswer, description: 'The key, with its new secret (`key`): shown in this answer only' },
    refusals: ['NO_SUCH_KEY', 'CONFIGURED_KEY', 'INVALID_BODY'],
  },
  revokeKey: {
    method: 'DELETE',
    scope: 'write',
    path: '/keys/:id',
    summary: 'Revoke a run-time key',
    description: 'Refused (401) from then on; its usage rows and audit entries stay.',
    tag: 'keys',
    params: keyIdParams,
    answer: { status: 200, schema: revokedAnswer, description: 'The key is revoked' },
    refusals: ['NO_SUCH_KEY', 'CONFIGURED_KEY'],
  },
  verifyKey: {
    method: 'POST',
    scope: 'read',
    path: '/keys:verify',
    summary: "Check a key's secret, without spending",
    description:
      "What the gateway would do with this secret now, for an operator's other services (a dashboard, a billing system): the key, its plan, status and balance, and a code. Nothing is billed or counted, and a wrong secret here blocks no address.",
    tag: 'keys',
    body: verifyKeyBody,
    answer: { status: 200, schema: verifyKeyAnswer, description: 'The verdict, for a known secret or not' },
    refusals: ['INVALID_BODY'],
  },
  listAudit: {
    method: 'GET',
    scope: 'read',
    path: '/audit',
    summary: 'Every admin write',
    description:
      'Time, action, key id, the public fields before and after; never a secret. `from` and `to` are ISO 8601 dates or date-times.',
    tag: 'records',
    query: auditQuery,
    answer: { status: 200, schema: auditAnswer, description: 'The entries in the range' },
    refusals: ['INVALID_QUERY', 'INVALID_INSTANT'],
  },
  usage: {
    method: 'GET',
    scope: 'read',
    path: '/usage',
    summary: 'Usage rows, what an operator bills from',
    description:
      "One row per UTC day, key, account, chain and route; with `granularity=hour`, one per UTC hour (the hours of a day sum to its day row). `from` and `to` are UTC days (`YYYY-MM-DD`), today by default. `account` selects the rows counted under that account. `format=csv` answers RFC 4180 CSV, a text cell that a spreadsheet would take for a formula prefixed with `'`.",
    tag: 'records',
    query: usageQuery,
    answer: { status: 200, schema: usageAnswer, description: 'The rows', csv: true },
    refusals: ['INVALID_QUERY', 'INVALID_RANGE'],
  },
  plans: {
    method: 'GET',
    scope: 'read',
    path: '/plans',
    summary: 'Every plan',
    description: 'The plans of the configuration (`source: "config"`, read-only here) and those made at run time.',
    tag: 'plans',
    answer: { status: 200, schema: plansAnswer, description: 'The plans' },
    refusals: [],
  },
  showPlan: {
    method: 'GET',
    scope: 'read',
    path: '/plans/:name',
    summary: 'Show a plan',
    tag: 'plans',
    params: planParams,
    answer: { status: 200, schema: planAnswer, description: 'The plan' },
    refusals: ['NO_SUCH_PLAN'],
  },
  createPlan: {
    method: 'POST',
    scope: 'write',
    path: '/plans',
    summary: 'Make a plan',
    description: "Beside the configuration's plans, whose names it may not take. Every process has it within a second.",
    tag: 'plans',
    body: createPlanBody,
    answer: { status: 201, schema: planAnswer, description: 'The plan' },
    refusals: ['INVALID_BODY', 'PLAN_EXISTS'],
  },
  updatePlan: {
    method: 'PATCH',
    scope: 'write',
    path: '/plans/:name',
    summary: 'Change a run-time plan',
    description:
      'Every key and account on it follows within a second, in every process; what they spent this period is kept. A configured plan is read-only here (409).',
    tag: 'plans',
    params: planParams,
    body: updatePlanBody,
    answer: { status: 200, schema: planAnswer, description: 'The plan as changed' },
    refusals: ['NO_SUCH_PLAN', 'CONFIGURED_PLAN', 'INVALID_BODY'],
  },
  deletePlan: {
    method: 'DELETE',
    scope: 'write',
    path: '/plans/:name',
    summary: 'Delete a run-time plan',
    description: 'Refused (409) while keys or accounts are on it.',
    tag: 'plans',
    params: planParams,
    answer: { status: 200, schema: deletedPlanAnswer, description: 'The plan is deleted' },
    refusals: ['NO_SUCH_PLAN', 'CONFIGURED_PLAN', 'PLAN_IN_USE'],
  },
  listAccounts: {
    method: 'GET',
    scope: 'read',
    path: '/accounts',
    summary: 'List accounts',
    tag: 'accounts',
    query: listAccountsQuery,
    answer: { status: 200, schema: accountListAnswer, description: 'A page of the accounts the filters take, in id order' },
    refusals: ['INVALID_QUERY'],
  },
  showAccount: {
    method: 'GET',
    scope: 'read',
    path: '/accounts/:id',
    summary: 'Show an account, with its balance',
    description: 'Its keys share this balance and its rate: the credits and requests of every one of them count here.',
    tag: 'accounts',
    params: accountParams,
    answer: { status: 200, schema: accountWithCreditsAnswer, description: "The account and this period's credits" },
    refusals: ['NO_SUCH_ACCOUNT'],
  },
  createAccount: {
    method: 'POST',
    scope: 'write',
    path: '/accounts',
    summary: 'Make an account',
    description:
      'A customer whose keys (`account` on a key) share its plan, limits, credits and rate. Bought credits go to it through any of its keys (`POST /keys/{id}/credits`).',
    tag: 'accounts',
    body: createAccountBody,
    answer: { status: 201, schema: accountAnswer, description: 'The account' },
    refusals: ['INVALID_BODY', 'UNKNOWN_PLAN', 'UNKNOWN_ROUTE', 'NAME_TAKEN'],
  },
  updateAccount: {
    method: 'PATCH',
    scope: 'write',
    path: '/accounts/:id',
    summary: 'Change an account',
    description: 'Its keys follow at once; what it spent this period is kept.',
    tag: 'accounts',
    params: accountParams,
    body: updateAccountBody,
    answer: { status: 200, schema: accountAnswer, description: 'The account as changed' },
    refusals: ['NO_SUCH_ACCOUNT', 'INVALID_BODY', 'UNKNOWN_PLAN', 'UNKNOWN_ROUTE', 'NAME_TAKEN'],
  },
  deleteAccount: {
    method: 'DELETE',
    scope: 'write',
    path: '/accounts/:id',
    summary: 'Delete an account',
    description: 'Refused (409) while keys belong to it.',
    tag: 'accounts',
    params: accountParams,
    answer: { status: 200, schema: deletedAccountAnswer, description: 'The account is deleted' },
    refusals: ['NO_SUCH_ACCOUNT', 'ACCOUNT_IN_USE'],
  },
  webhooks: {
    method: 'GET',
    scope: 'read',
    path: '/webhooks',
    summary: 'List webhooks',
    description: 'The configuration\'s (`source: "config"`) and those made here; never a secret.',
    tag: 'webhooks',
    answer: { status: 200, schema: webhooksAnswer, description: 'Every webhook' },
    refusals: [],
  },
  createWebhook: {
    method: 'POST',
    scope: 'write',
    path: '/webhooks',
    summary: 'Make a webhook',
    description:
      'Events it subscribes to are POSTed to `url`, signed as Standard Webhooks specifies (`webhook-id`, `webhook-timestamp`, `webhook-signature`), retried with back-off for 24 hours. Every process sends to it within a second.',
    tag: 'webhooks',
    body: createWebhookBody,
    answer: { status: 201, schema: createdWebhookAnswer, description: 'The webhook, with its secret: shown in this answer only' },
    refusals: ['INVALID_BODY'],
  },
  deliveries: {
    method: 'GET',
    scope: 'read',
    path: '/webhooks/deliveries',
    summary: 'List webhook deliveries',
    description: 'Newest first, a page at a time: `nextCursor` is the `cursor` of the next page (null: the last). Kept 35 days.',
    tag: 'webhooks',
    query: listDeliveriesQuery,
    answer: { status: 200, schema: deliveriesAnswer, description: 'A page of deliveries' },
    refusals: ['INVALID_QUERY'],
  },
  showDelivery: {
    method: 'GET',
    scope: 'read',
    path: '/webhooks/deliveries/:id',
    summary: 'Show a webhook delivery',
    tag: 'webhooks',
    params: deliveryParams,
    answer: { status: 200, schema: deliveryAnswer, description: 'The delivery, its attempts and the event sent' },
    refusals: ['NO_SUCH_DELIVERY'],
  },
  redeliver: {
    method: 'POST',
    scope: 'write',
    path: '/webhooks/deliveries/:id/redeliver',
    summary: 'Send a delivery again',
    description: 'Pending again and due now, whatever its status: sent within a second, with the same `webhook-id`.',
    tag: 'webhooks',
    params: deliveryParams,
    answer: { status: 200, schema: deliveryAnswer, description: 'The delivery, pending' },
    refusals: ['NO_SUCH_DELIVERY'],
  },
  showWebhook: {
    method: 'GET',
    scope: 'read',
    path: '/webhooks/:id',
    summary: 'Show a webhook',
    tag: 'webhooks',
    params: webhookParams,
    answer: { status: 200, schema: webhookAnswer, description: 'The webhook' },
    refusals: ['NO_SUCH_WEBHOOK'],
  },
  updateWebhook: {
    method: 'PATCH',
    scope: 'write',
    path: '/webhooks/:id',
    summary: 'Change a run-time webhook',
    description: 'Its url, events, secret, description, or `enabled` (a disabled one is sent nothing).',
    tag: 'webhooks',
    params: webhookParams,
    body: updateWebhookBody,
    answer: { status: 200, schema: webhookAnswer, description: 'The webhook' },
    refusals: ['INVALID_BODY', 'NO_SUCH_WEBHOOK', 'CONFIGURED_WEBHOOK'],
  },
  deleteWebhook: {
    method: 'DELETE',
    scope: 'write',
    path: '/webhooks/:id',
    summary: 'Delete a run-time webhook',
    description: 'Its pending deliveries fail.',
    tag: 'webhooks',
    params: webhookParams,
    answer: { status: 200, schema: deletedWebhookAnswer, description: 'The webhook is deleted' },
    refusals: ['NO_SUCH_WEBHOOK', 'CONFIGURED_WEBHOOK'],
  },
  openapi: {
    method: 'GET',
    scope: 'read',
    path: '/openapi.json',
    summary: 'This document',
    description:
      'The OpenAPI 3.1 document of the admin API, made from the same zod schemas that validate its input. Served without the token: it holds no data, only the shape of the API.',
    tag: 'document',
    answer: { status: 200, schema: openApiAnswer, description: 'The OpenAPI document' },
    refusals: [],
    open: true,
  },
} as const satisfies Record<string, AdminCallSpec>;

export type AdminOperation = keyof typeof ADMIN_ROUTES;

/** The path of a call, its `:id` or `:name` filled in (encoded), and its query if any. */
export function adminPath(op: AdminOperation, id?: string, query?: URLSearchParams): string {
  const path = ADMIN_ROUTES[op].path.replace(/\/:(id|name)\b/, () => `/${encodeURIComponent(id ?? '')}`);
  const qs = query?.toString() ?? '';
  return qs === '' ? path : `${path}?${qs}`;
}

/** A call's method and url, as fastify's route() takes them. */
export function at(op: AdminOperation): { method: (typeof ADMIN_ROUTES)[AdminOperation]['method']; url: string } {
  return { method: ADMIN_ROUTES[op].method, url: routeUrl(ADMIN_ROUTES[op].path) };
}

/** A path of the table as fastify's route() takes it. */
export function routeUrl(path: string): string {
  // A colon inside a segment (`/keys:verify`, as Google's API design writes custom methods) is
  // literal: find-my-way reads `::` as one.
  return path.replace(/([^/]):/g, '$1::');
}
