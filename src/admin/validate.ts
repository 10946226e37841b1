// Input checks of the admin API: a clear 4xx that names the field, before anything changes.
import { dayStartMs } from '../store/day.js';
import type { z } from 'zod';
import { AdminError } from './errors.js';

function problems(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((i) => ({
    field: i.code === 'unrecognized_keys' ? i.keys.join(', ') : i.path.join('.') || '(body)',
    message: i.code === 'unrecognized_keys' ? 'unknown field' : i.message,
  }));
}

/** A JSON body of this shape, or 422 listing every problem. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const errors = problems(parsed.error);
  throw new AdminError('INVALID_BODY', `invalid request: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, { errors });
}

/** Query parameters of this shape, or 400 listing every problem. */
export function parseQuery<T extends z.ZodType>(schema: T, query: unknown): z.output<T> {
  const parsed = schema.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const errors = problems(parsed.error);
  throw new AdminError('INVALID_QUERY', `invalid query: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, { errors });
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An ISO 8601 date (`2027-01-01`, 00:00 UTC of that day) or date-time with its offset, as unix
 * ms; a day that does not exist (`2027-02-30`) or anything else is a 422 naming `field`.
 */
export function parseInstant(value: string, field: string): number {
  const date = DATE.exec(value);
  const m = date ?? DATE_TIME.exec(value);
  const ms = date ? dayStartMs(value) : m ? Date.parse(value) : undefined;
  // The calendar day must exist: Date.parse rolls 2027-02-30 over to March.
  if (!m || ms === undefined || Number.isNaN(ms) || dayStartMs(`${m[1]}-${m[2]}-${m[3]}`) === undefined)
    throw new AdminError(
      'INVALID_INSTANT',
      `${field}: expected an ISO 8601 date (2027-01-01) or date-time (2027-01-01T12:00:00Z), got ${JSON.stringify(value)}`,
    );
  return ms;
}

/** A UTC day `YYYY-MM-DD`, or 400 naming `field`. */
export function parseDay(value: string, field: string): string {
  if (dayStartMs(value) === undefined)
    throw new AdminError('INVALID_QUERY', `${field}: expected a date YYYY-MM-DD, got ${JSON.stringify(value)}`);
  return value;
}
