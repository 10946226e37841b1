// /admin/v1/usage: one row per UTC day, key, chain and route, as JSON or CSV (RFC 4180), what an
// operator bills from. Counts still in memory are written first, so the answer includes them.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { UsageRow } from '../store/types.js';
import { utcDay } from '../store/day.js';
import type { AdminDeps, Send } from './context.js';
import { AdminError } from './context.js';
import { parseDay, parseQuery } from './validate.js';

const usageQuery = z.strictObject({
  from: z.string().optional(),
  to: z.string().optional(),
  key: z.string().optional(),
  owner: z.string().optional(),
  chain: z.string().optional(),
  route: z.string().optional(),
  format: z.enum(['json', 'csv'], { error: 'expected json or csv' }).optional(),
});

const COLUMNS = ['day', 'key', 'name', 'chain', 'route', 'requests', 'credits', 'cacheHits', 'refused', 'errors'] as const;

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
const csvField = (v: string | number) => {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

export function registerUsageRoutes(api: FastifyInstance, deps: AdminDeps, send: Send): void {
  api.get('/usage', async (request, reply) => {
    const q = parseQuery(usageQuery, request.query);
    const today = utcDay(deps.now());
    const from = q.from === undefined ? today : parseDay(q.from, 'from');
    const to = q.to === undefined ? today : parseDay(q.to, 'to');
    if (from > to) throw new AdminError(400, `from (${from}) is after to (${to})`);
    const keys = deps.states().keys;
    let keyIds: Set<string> | undefined;
    if (q.key !== undefined) keyIds = new Set([q.key]);
    if (q.owner !== undefined) {
      const owned = keys.all().filter(({ key, record }) => (record?.owner ?? key?.owner) === q.owner);
      const ids = owned.map(({ key, record }) => record?.id ?? key!.id);
      keyIds = new Set(keyIds ? ids.filter((id) => keyIds!.has(id)) : ids);
    }
    await deps.flushUsage();
    const rows = await deps.store.usage.listUsage({ from, to, keyIds, chain: q.chain, route: q.route });
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
    if (q.format !== 'csv') return send(reply, 200, { items });
    const lines = [COLUMNS.join(','), ...items.map((i) => COLUMNS.map((c) => csvField(i[c] ?? '')).join(','))];
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="usage-${from}-${to}.csv"`)
      .header('cache-control', 'no-store')
      .send(`${lines.join('\r\n')}\r\n`);
  });
}
