// /admin/v1/audit and /admin/v1/usage: what the gateway has on record, read-only.
// Usage as JSON or CSV (RFC 4180), what an operator bills from.
import type { FastifyInstance } from 'fastify';
import type { Send } from '../context.js';
import type { AdminService, UsageItem } from '../service.js';
import { ADMIN_ROUTES as R, at } from '../surface.js';
import { parseQuery } from '../validate.js';

/** The CSV columns, in order; `hour` only in hourly CSV, `account` last, so that the columns before keep their places. */
const COLUMNS = [
  'day',
  'hour',
  'key',
  'name',
  'chain',
  'route',
  'requests',
  'credits',
  'cacheHits',
  'refused',
  'rateLimited',
  'outOfCredits',
  'forbidden',
  'clientErrors',
  'errors',
  'account',
] as const;

/**
 * A string cell a spreadsheet would read as a formula (its first character `=`, `+`, `-`, `@`,
 * tab or CR) gets a `'` in front and is quoted, as OWASP's CSV Injection page says
 * (https://owasp.org/www-community/attacks/CSV_Injection): a key named `=HYPERLINK(...)` must
 * reach the operator's spreadsheet as text. Numbers are never touched: credits after refunds can
 * be negative, and `-20` must stay a number.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled; so is one with
 * a semicolon, which spreadsheets set to split on it would take for the start of another cell
 * (OWASP, above).
 */
const csvField = (v: string | number) => {
  if (typeof v === 'number') return String(v);
  const s = FORMULA_START.test(v) ? `'${v}` : v;
  return s !== v || /[",;\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

export function usageCsv(items: readonly UsageItem[], hourly = false): string {
  const columns = hourly ? COLUMNS : COLUMNS.filter((c) => c !== 'hour');
  const lines = [columns.join(','), ...items.map((i) => columns.map((c) => csvField(i[c] ?? '')).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

export function registerRecordRoutes(api: FastifyInstance, service: AdminService, send: Send): void {
  api.route({
    ...at('listAudit'),
    handler: async (request, reply) =>
      send(reply, R.listAudit.answer.status, { items: await service.listAudit(parseQuery(R.listAudit.query, request.query)) }),
  });
  api.route({
    ...at('usage'),
    handler: async (request, reply) => {
      const q = parseQuery(R.usage.query, request.query);
      const { from, to, items } = await service.usage(q);
      if (q.format !== 'csv') return send(reply, R.usage.answer.status, { items });
      return reply
        .code(R.usage.answer.status)
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="usage-${from}-${to}${q.granularity === 'hour' ? '-hourly' : ''}.csv"`)
        .header('cache-control', 'no-store')
        .send(usageCsv(items, q.granularity === 'hour'));
    },
  });
}
