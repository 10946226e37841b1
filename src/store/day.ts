// UTC days as usage rows, the stores and the admin API name them: `YYYY-MM-DD`.

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
