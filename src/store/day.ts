// UTC days as usage rows, the stores and the admin API name them: `YYYY-MM-DD`; and, below, UTC hours.

const DAY_SHAPE = /^\d{4}-\d{2}-\d{2}$/;
export const DAY_MS = 86_400_000;

/** The UTC day of an instant. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Milliseconds of a day's start, UTC; undefined for anything but a real `YYYY-MM-DD`.
 * Date.parse rolls 2027-02-30 over to March: the day must survive the round trip.
 */
export function dayStartMs(day: string): number | undefined {
  if (!DAY_SHAPE.test(day)) return undefined;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(ms) && utcDay(ms) === day ? ms : undefined;
}

// UTC hours as hourly usage rows name them: `YYYY-MM-DDTHH:00:00Z`, within their day.

export const HOUR_MS = 3_600_000;
const HOUR_SHAPE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):00:00Z$/;

/** The UTC hour of an instant. */
export function utcHour(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 13)}:00:00Z`;
}

/** An hour of a day by its number (0-23). */
export function hourName(day: string, hour: number): string {
  return `${day}T${String(hour).padStart(2, '0')}:00:00Z`;
}

/** The number (0-23) of an hour within `day`; undefined for anything else (another day's hour, a malformed one). */
export function hourOfDay(hour: string, day: string): number | undefined {
  const m = HOUR_SHAPE.exec(hour);
  if (!m || m[1] !== day || dayStartMs(day) === undefined) return undefined;
  const h = Number(m[2]);
  return h <= 23 ? h : undefined;
}
