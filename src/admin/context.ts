// What the admin API works with.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Webhooks } from '../webhooks/webhooks.js';
import type { Logger } from 'pino';
import type { RuntimeKeys } from '../keys/runtime.js';
import type { QuotaStore, SeparateUsageCredits } from '../quota/types.js';
import type { GatewayState } from '../request/state.js';
import type { Storage } from '../store/types.js';

/** Sends an admin answer: status, JSON body, no-store. */
export type Send = (reply: FastifyReply, status: number, body: unknown) => FastifyReply;

export interface AdminDeps {
  store: Storage;
  quota: QuotaStore;
  /** Credits counted apart from the usage rows (the Redis store), added to them in a usage report. */
  credits: SeparateUsageCredits | undefined;
  runtime: RuntimeKeys;
  /** The state new requests see: its configuration's plans, chains and keys. */
  states: () => GatewayState;
  now: () => number;
  log: Pick<Logger, 'info' | 'error'>;
  /** Every route name of the table (routes/table.ts ROUTE_NAMES): what `routes` and `limits.costs` may name. */
  routeNames: readonly string[];
  /** Writes the usage counted in memory, so that /usage includes the last second. */
  flushUsage: () => Promise<void>;
  /** Events to webhooks (key.created, key.revoked, key.expiring) and the webhooks themselves. */
  webhooks: Webhooks;
}

/** Who makes a write, as its audit entry names them: the admin token's name (admin/server.ts). */
export const actor = (request: FastifyRequest): string => request.adminToken?.name ?? 'admin';
